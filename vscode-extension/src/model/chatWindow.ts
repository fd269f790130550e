// Which part of a long conversation the agent panel has in its page. A session of 20,000 updates
// has thousands of items; putting all of them in the DOM makes loading it quadratic-feeling and the
// workbench stutter. So the panel shows a window: the last items when a session is shown, at most
// `maxShown` while it follows the end (items leaving the top are taken out of the page, not out of
// the conversation; while a load streams in, at most SCREEN_ITEMS), and older pages put back on
// scroll or with the "Show earlier" button. Nothing is
// dropped silently: the note above the first shown item says how many are above it and how to see
// them, and, when the view itself no longer keeps the oldest items (MAX_ITEMS), where they are.
//
// Pure: indices into `SessionView.items`; the webview turns the answers into DOM operations.

export type WindowOptions = { firstPage: number; page: number; maxShown: number };

export const WINDOW: WindowOptions = { firstPage: 100, page: 100, maxShown: 300 };

/** A range of item indices, `from` inclusive, `to` exclusive. */
export type Range = { from: number; to: number };

export class ChatWindow {
  /** Index of the first item in the page; everything from it to the end is shown. */
  start = 0;

  constructor(readonly options: WindowOptions = WINDOW) {}

  /** A session is shown afresh: its last page. */
  reset(length: number): void {
    this.start = Math.max(0, length - this.options.firstPage);
  }

  /** The oldest `count` items left the view (MAX_ITEMS): indices shift down. */
  trimmed(count: number): void {
    this.start = Math.max(0, this.start - count);
  }

  /** Whether the item at `index` belongs in the page. */
  shows(index: number): boolean {
    return index >= this.start;
  }

  /**
   * Following the end of a conversation of `length` items: when more than `maxShown` are in the
   * page, the oldest leave it; while a load streams in (`streaming`: updates arrived since the last
   * frame), more than SCREEN_ITEMS. Returns the indices leaving (empty when none).
   */
  follow(length: number, streaming = false): Range {
    const from = this.start;
    const most = streaming ? Math.min(SCREEN_ITEMS, this.options.maxShown) : this.options.maxShown;
    this.start = Math.max(this.start, length - most);
    return { from, to: Math.min(this.start, length) };
  }

  /** The page before the first shown item, now shown too (empty at the start). */
  earlier(): Range {
    const to = this.start;
    this.start = Math.max(0, to - this.options.page);
    return { from: this.start, to };
  }

  /** What the note above the first shown item says; undefined when there is nothing above it.
   * `before`: items above the run the indices count from (the page holds only the newest items of
   * a conversation, model/panelFeed.ts; the host has the rest). */
  note(trimmed: number, before = 0): string | undefined {
    const parts: string[] = [];
    const above = before + this.start;
    if (above > 0) parts.push(`${above} earlier item${above === 1 ? " is" : "s are"} above: scroll up or “Show earlier” to see them.`);
    if (trimmed > 0) parts.push(`${trimmed} older item${trimmed === 1 ? " is" : "s are"} no longer kept here; the session's transcript (acpls: Open the session transcript) has them.`);
    return parts.length === 0 ? undefined : parts.join(" ");
  }
}

/** Time a redraw frame may take (milliseconds), from its start to the end of its rendering: the
 * script creating and filling items stops at it, and `FramePacer` sizes the frame to it with the
 * frame's style, layout and paint counted; what is left waits for the next frame. */
export const FRAME_BUDGET_MS = 8;
/** The same while keys arrive (a key within TYPING_MS): the frame that shows the key comes sooner,
 * a long load's items take a few more frames. */
export const TYPING_FRAME_BUDGET_MS = 3;
export const TYPING_MS = 600;

/** Longest a redraw is put off for keys (see `holdsForKey`), so a fast typist never starves it. */
export const KEY_HOLD_MAX_MS = 100;

/**
 * Whether the frame starting at `now` leaves the conversation alone because a key was pressed since
 * the frame before (`lastKey` after `previousFrame`): that frame is the one that shows the key, and
 * a redraw in it (its script, then the layout and paint of new items) came before the key on
 * screen. The redraw takes the next frame without a new key, or goes ahead once it has been put
 * off since `heldSince` for KEY_HOLD_MAX_MS.
 */
export function holdsForKey(now: number, lastKey: number, previousFrame: number, heldSince: number): boolean {
  return lastKey > previousFrame && now - heldSince < KEY_HOLD_MAX_MS;
}

/** The redraw budget of a frame that starts at `now`, the last key having been pressed at `lastKey`. */
export function frameBudget(now: number, lastKey: number): number {
  return now - lastKey < TYPING_MS ? TYPING_FRAME_BUDGET_MS : FRAME_BUDGET_MS;
}

/**
 * The items a redraw still has to draw, in order, each once: of the ids updates marked (oldest
 * first, repeated when an item changed again), those in the page now. Ids of items that left the
 * page (or never entered it) go at once, so what waits for the next frame is bounded by the page
 * (at most `maxShown`), not by the updates of a long load: a frame's own work never grows with them.
 */
export function toRedraw(pending: readonly string[], shown: ReadonlySet<string> | ReadonlyMap<string, unknown>): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const id of pending) {
    if (seen.has(id) || !shown.has(id)) continue;
    seen.add(id);
    out.push(id);
  }
  return out;
}

/**
 * The order a frame draws the items `toRedraw` kept: while the page follows the end, newest first
 * (by their place in the conversation), since the end is what is on screen. Drawn oldest first, a
 * frame's budget went to the items at the top of the window, which a long load pushes out of the
 * page a few frames later, and the last message waited for every older item (a 20,000-update load
 * showed its end ~20 frames after its last update). Otherwise, as given.
 */
export function drawOrder(ids: readonly string[], places: ReadonlyMap<string, number>, following: boolean): string[] {
  if (!following) return [...ids];
  return [...ids].sort((a, b) => (places.get(b) ?? -1) - (places.get(a) ?? -1));
}

/** Items that can be on screen at once at most (the smallest item, one line and its margin, is
 * about 30 px: 40 of them fill a 1,200 px panel). While a load streams in and the page follows its
 * end, the page keeps only these (`follow`): a 20,000-update load moves the end by hundreds of items
 * a message, and the older items of a 300-item page, drawn newest first, left it a few frames later
 * unseen; their style, layout and paint (three times the script that made them) were most of each
 * long frame that kept a key waiting, and drawn after the load, they kept the keys waiting for
 * seconds more. The items above are counted by the note and come back on scroll, a page at a time. */
export const SCREEN_ITEMS = 40;

/**
 * How many items a frame may draw: the script that makes them is the small part of their cost, the
 * frame's style, layout and paint of the new nodes are 2-3× more, and a key pressed meanwhile waits
 * for all of it. So the cost of a drawn item is learnt from whole frames (from the frame's start to
 * the end of its rendering, `record`), and a frame draws as many as fit in its budget of whole
 * frame time (`allowance`). The estimate follows the machine: slower under load, fewer per frame.
 */
export const MIN_FRAME_ITEMS = 4;

export class FramePacer {
  /** Milliseconds of whole frame per drawn item, a running average (the newest frame weighs half). */
  msPerItem: number;

  constructor(initialMsPerItem = 0.2) {
    this.msPerItem = initialMsPerItem;
  }

  /** A frame that drew `items` took `frameMs` from its start to the end of its rendering. Frames of
   * fewer than MIN_FRAME_ITEMS are left out: their cost is mostly the frame's own (the key's text,
   * the scroll), and counted per item it would shrink the next frames to one item each. */
  record(frameMs: number, items: number): void {
    if (items < MIN_FRAME_ITEMS || !(frameMs >= 0)) return;
    this.msPerItem = (this.msPerItem + frameMs / items) / 2;
  }

  /** Items the next frame may draw in `budgetMs` of whole frame time; at least MIN_FRAME_ITEMS, so
   * a loaded machine (every frame over budget on its own) still finishes. */
  allowance(budgetMs: number): number {
    return Math.max(MIN_FRAME_ITEMS, Math.floor(budgetMs / this.msPerItem));
  }
}
