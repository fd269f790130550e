// What the agent panel's page holds of the shown conversation, and what the host posts it (issue
// #18, V5). The extension host keeps every session whole (ConversationStore); the page keeps only a
// run of the shown session's newest items (its "mirror"), enough for the items it draws, and asks
// the host for older pages when the user scrolls up. Until this, the page replayed every update of
// a load into its own copy of the whole conversation: a 20,000-update load posted 20,000 updates
// for the page to parse, fold and keep (~8,000 items), on the browser main thread that the page
// shares with the workbench, where the parsed updates and the growing conversation were what its
// young-generation collections copied while keys waited. Now the host posts, per batch, only the
// items of the mirror that changed, in their final state; while the page follows the end of a
// stream it keeps the screen's worth of newest items (SCREEN_ITEMS), so a 20k load posts a few
// dozen items a batch. Nothing is dropped: the rest stay in the host and come back a page at a
// time (`earlier`), and the page's note counts them.
//
// Pure (no vscode API): the host's `PanelFeed` and the page's `PanelMirror` speak `WindowPost`.

import { type Change, emptySession, type Item, type SessionView } from "./conversation";
import { SCREEN_ITEMS, WINDOW } from "./chatWindow";

/** A session without its items: what the panel's header, pickers and plan show. */
export type SessionHead = Omit<SessionView, "items">;

/** One post from the host: how the page's run of items changes. */
export type WindowPost = {
  sessionId: string;
  /** Index in the whole conversation of the first item the page keeps after this post. */
  start: number;
  /** Id of that item (the page drops what it holds before it); undefined when it keeps none. */
  firstId: string | undefined;
  /** The page drops everything it holds and keeps `items` (another session, or the host lost track). */
  reset: boolean;
  /** Items that changed or are new, from `start` on, in order, in their current state. */
  items: Item[];
  /** Items gone from the conversation (a local echo replaced by the agent's copy, MAX_ITEMS). */
  removed: string[];
  /** The session's header and plan, when they changed. */
  head?: SessionHead;
};

/** How many items a page brought back on scroll holds (ChatWindow's page). */
export const EARLIER_PAGE = WINDOW.page;

/** A session's header and plan, without its items. */
export function headOf(session: SessionView): SessionHead {
  const { items: _items, ...head } = session;
  return head;
}

/** The host's side: which items the page holds, and the posts that keep it in step. */
export class PanelFeed {
  private sessionId: string | undefined;
  /** The first item the page holds (an object of the host's store) and its last known index. */
  private first: Item | undefined;
  private start = 0;
  /** The conversation's length at the last post: items past it are new. */
  private known = 0;
  private readonly changed = new Set<string>();
  private removed: string[] = [];
  private headChanged = false;
  /** The page follows the end of the conversation (it says when the user scrolls away and back). */
  following = true;

  /** The page is given `session` afresh (a snapshot): it holds its last page of items. */
  snapshot(session: SessionView): { session: SessionView; start: number } {
    this.track(session, Math.max(0, session.items.length - WINDOW.firstPage));
    this.following = true;
    return { session: { ...session, items: session.items.slice(this.start) }, start: this.start };
  }

  /** An update (or a local prompt, a turn's end) changed the shown session. */
  note(change: Change): void {
    for (const id of change.items) this.changed.add(id);
    this.removed.push(...change.removed);
    this.headChanged ||= change.header || change.plan;
  }

  /** Whether anything waits to be posted. */
  get pending(): boolean {
    return this.changed.size > 0 || this.removed.length > 0 || this.headChanged;
  }

  /** The post that brings the page up to `session` (the shown session), and the page's new run. */
  take(session: SessionView): WindowPost {
    const items = session.items;
    const at = this.sessionId === session.sessionId ? this.locate(items) : undefined;
    const reset = at === undefined;
    const fresh = items.length - this.known;
    let start = at ?? Math.max(0, items.length - WINDOW.firstPage);
    // Following a stream, the page keeps the screen's worth (its own ChatWindow.follow keeps as
    // many in the DOM): the items between leave it now rather than after being posted and parsed.
    if (this.following) start = Math.max(start, items.length - (fresh > SCREEN_ITEMS ? SCREEN_ITEMS : WINDOW.maxShown));
    const sent: Item[] = [];
    for (let i = start; i < items.length; i++) {
      const item = items[i];
      if (item !== undefined && (reset || i >= this.known || this.changed.has(item.id))) sent.push(item);
    }
    const post: WindowPost = { sessionId: session.sessionId, start, firstId: items[start]?.id, reset, items: sent, removed: this.removed };
    if (reset || this.headChanged) post.head = headOf(session);
    this.track(session, start);
    return post;
  }

  /** The page asks for the page before its first item: it gets up to `count` items and holds them
   * from now on (it no longer follows the end: it scrolled up). */
  earlier(session: SessionView, count = EARLIER_PAGE): { sessionId: string; start: number; items: Item[] } | undefined {
    if (this.sessionId !== session.sessionId) return undefined;
    const at = this.locate(session.items);
    if (at === undefined) return undefined;
    this.following = false;
    const from = Math.max(0, at - count);
    const items = session.items.slice(from, at);
    this.first = session.items[from];
    this.start = from;
    return { sessionId: session.sessionId, start: from, items };
  }

  private track(session: SessionView, start: number): void {
    this.sessionId = session.sessionId;
    this.first = session.items[start];
    this.start = start;
    this.known = session.items.length;
    this.changed.clear();
    this.removed = [];
    this.headChanged = false;
  }

  /** The index of the page's first item now: where it was, or earlier (items are only ever removed
   * before it, never inserted); undefined when it is gone (the page is then given a fresh run). */
  private locate(items: readonly Item[]): number | undefined {
    if (this.first === undefined) return this.start <= items.length ? this.start : undefined;
    for (let i = Math.min(this.start, items.length - 1); i >= 0; i--) if (items[i] === this.first) return i;
    return undefined;
  }
}

/** The page's side: the session it shows, holding only the run of items the host posted. */
export class PanelMirror {
  session: SessionView | undefined;
  /** Index in the whole conversation of `session.items[0]`: how many items are above the run. */
  start = 0;

  /** A snapshot from the host. */
  show(session: SessionView | undefined, start: number): void {
    this.session = session;
    this.start = start;
  }

  /** Applies a post; says what changed (for the redraw) and how many items left the front of the
   * run (indices into it shift down by that many). */
  apply(post: WindowPost): { change: Change; dropped: number } {
    if (this.session?.sessionId !== post.sessionId) this.session = emptySession(post.sessionId);
    const session = this.session;
    const change: Change = { items: post.items.map((i) => i.id), removed: [], header: post.head !== undefined, plan: post.head !== undefined };
    if (post.head !== undefined) Object.assign(session, post.head);
    const gone = new Set(post.removed);
    let kept = session.items;
    if (post.reset) {
      change.removed.push(...kept.map((i) => i.id));
      kept = [];
    } else if (gone.size > 0) {
      change.removed.push(...kept.filter((i) => gone.has(i.id)).map((i) => i.id));
      kept = kept.filter((i) => !gone.has(i.id));
    }
    const dropped = this.dropBefore(kept, post.firstId, change);
    kept = kept.slice(dropped);
    const places = new Map(kept.map((item, index) => [item.id, index]));
    for (const item of post.items) {
      const place = places.get(item.id);
      if (place === undefined) kept.push(item);
      else kept[place] = item;
    }
    session.items = kept;
    this.start = post.start;
    return { change, dropped: post.reset ? 0 : dropped };
  }

  /** Older items the host sent back (`PanelFeed.earlier`): they go before the run. */
  prepend(start: number, items: readonly Item[]): number {
    if (this.session === undefined) return 0;
    this.session.items = [...items, ...this.session.items];
    this.start = start;
    return items.length;
  }

  /** How many items of `kept` come before `firstId` (all of them when the page does not hold it:
   * then every item from it on is new, and posted). Their ids go into `change.removed`. */
  private dropBefore(kept: readonly Item[], firstId: string | undefined, change: Change): number {
    let count = firstId === undefined ? kept.length : kept.findIndex((i) => i.id === firstId);
    if (count < 0) count = kept.length;
    for (let i = 0; i < count; i++) change.removed.push(kept[i]?.id ?? "");
    return count;
  }
}
