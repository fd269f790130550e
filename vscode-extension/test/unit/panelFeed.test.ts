import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { SCREEN_ITEMS, WINDOW } from "../../src/model/chatWindow";
import { addLocalPrompt, addTurnEnd, ConversationStore, type SessionView } from "../../src/model/conversation";
import { EARLIER_PAGE, headOf, PanelFeed, PanelMirror, type WindowPost } from "../../src/model/panelFeed";
import type { SessionUpdate } from "../../src/protocol";

/** One turn of the speed agent's long chats (tests/agents/speed_agent.py): 10 updates, 4 items. */
function turn(n: number): SessionUpdate[] {
  const text = (t: string, role = "assistant", id = `a${n}`) => ({ sessionUpdate: "message_chunk", role, messageId: id, content: { type: "text", text: t } });
  return [
    text(`Question ${n}`, "user", `u${n}`),
    ...Array.from({ length: 5 }, (_, p) => text(`Step ${n}, part ${p}. `)),
    { sessionUpdate: "tool_call", toolCall: { toolCallId: `call-${n}`, title: `Read step${n}.py`, status: "in_progress" } },
    { sessionUpdate: "tool_call", toolCall: { toolCallId: `call-${n}`, title: `Read step${n}.py`, status: "completed" } },
    text(`Done with step ${n}. `, "assistant", `b${n}`),
    text("`ok`\n", "assistant", `b${n}`),
  ] as SessionUpdate[];
}

/** The host's store and feed, and the page's mirror, with the posts going through JSON as they do. */
class Pair {
  readonly store = new ConversationStore();
  readonly feed = new PanelFeed();
  readonly mirror = new PanelMirror();
  posted = 0;

  constructor(readonly sessionId = "s") {
    const shown = this.feed.snapshot(this.store.session(sessionId));
    this.mirror.show(JSON.parse(JSON.stringify(shown.session)) as SessionView, shown.start);
    this.store.current = sessionId;
  }

  get host(): SessionView {
    return this.store.session(this.sessionId);
  }

  update(update: SessionUpdate): void {
    this.feed.note(this.store.apply(this.sessionId, update));
  }

  flush(): WindowPost | undefined {
    if (!this.feed.pending) return undefined;
    const post = JSON.parse(JSON.stringify(this.feed.take(this.host))) as WindowPost;
    this.posted += post.items.length;
    this.mirror.apply(post);
    return post;
  }

  earlier(): void {
    const page = this.feed.earlier(this.host);
    assert.ok(page !== undefined);
    const back = JSON.parse(JSON.stringify(page)) as typeof page;
    this.mirror.prepend(back.start, back.items);
  }

  /** The page holds exactly the host's items from its start on, in order, in their current state. */
  check(): void {
    assert.deepEqual(this.mirror.session?.items, JSON.parse(JSON.stringify(this.host.items.slice(this.mirror.start))));
  }
}

describe("the panel holds the newest items, the host the whole conversation", () => {
  test("a long load following the end: the page keeps the screen's worth, posts only that", () => {
    const pair = new Pair();
    let updates = 0;
    for (let n = 1; n <= 2000; n++) {
      for (const update of turn(n)) pair.update(update);
      updates += 10;
      // A post every ~1,000 updates, as the 48 ms pace gives during a load.
      if (n % 100 === 0) {
        pair.flush();
        pair.check();
        assert.ok((pair.mirror.session?.items.length ?? 0) <= SCREEN_ITEMS, "while a load streams in, the screen's worth");
      }
    }
    assert.equal(pair.host.items.length, 8000);
    assert.equal(pair.mirror.start + (pair.mirror.session?.items.length ?? 0), 8000, "the note counts what the page does not hold");
    // 20 posts of at most SCREEN_ITEMS items, not 20,000 updates nor 8,000 items.
    assert.ok(pair.posted <= 20 * SCREEN_ITEMS, `${pair.posted} items posted for ${updates} updates`);
  });

  test("a live turn's few changes a post: the run grows up to maxShown, changed items come again", () => {
    const pair = new Pair();
    for (let n = 1; n <= 100; n++) {
      for (const update of turn(n)) {
        pair.update(update);
        const post = pair.flush();
        pair.check();
        assert.ok((post?.items.length ?? 0) <= 1, "each post carries the one item its update changed");
      }
    }
    assert.equal(pair.mirror.session?.items.length, Math.min(400, WINDOW.maxShown));
  });

  test("scrolled up: every item comes back, page by page, each once, while the load goes on", () => {
    const pair = new Pair();
    for (let n = 1; n <= 500; n++) for (const update of turn(n)) pair.update(update);
    pair.flush();
    const seen = new Set(pair.mirror.session?.items.map((i) => i.id));
    let pages = 0;
    while (pair.mirror.start > 0) {
      const before = pair.mirror.start;
      pair.earlier();
      pages += 1;
      assert.equal(before - pair.mirror.start, Math.min(before, EARLIER_PAGE));
      // Updates keep coming: the page no longer follows, so the run grows instead of moving on.
      for (const update of turn(1000 + pages)) pair.update(update);
      pair.flush();
      pair.check();
      for (const item of pair.mirror.session?.items ?? []) seen.add(item.id);
    }
    assert.equal(seen.size, pair.host.items.length, "nothing dropped silently");
    assert.equal(pair.mirror.session?.items.length, pair.host.items.length);
  });

  test("back at the end, the run is trimmed again", () => {
    const pair = new Pair();
    for (let n = 1; n <= 200; n++) for (const update of turn(n)) pair.update(update);
    pair.flush();
    for (let page = 0; page < 4; page++) pair.earlier();
    assert.ok((pair.mirror.session?.items.length ?? 0) > WINDOW.maxShown);
    pair.feed.following = true;
    for (const update of turn(201)) pair.update(update);
    pair.flush();
    pair.check();
    assert.equal(pair.mirror.session?.items.length, WINDOW.maxShown);
  });

  test("the prompt's local echo and the agent's copy of it; a turn's end", () => {
    const pair = new Pair();
    for (const update of turn(1)) pair.update(update);
    pair.flush();
    pair.feed.note(addLocalPrompt(pair.host, "hello"));
    const echo = pair.flush();
    assert.equal(echo?.items[0]?.kind, "message");
    pair.update({ sessionUpdate: "message_chunk", role: "user", messageId: "u2", content: { type: "text", text: "hello" } } as SessionUpdate);
    const copy = pair.flush();
    assert.deepEqual(copy?.removed, [echo?.items[0]?.id]);
    pair.check();
    pair.feed.note(addTurnEnd(pair.host, "end_turn", undefined, "12 tokens"));
    pair.flush();
    pair.check();
    assert.equal(pair.mirror.session?.items.at(-1)?.kind, "turn_end");
  });

  test("the header and plan travel when they change, and only then", () => {
    const pair = new Pair();
    pair.update({ sessionUpdate: "session_info", title: "A title" } as SessionUpdate);
    const post = pair.flush();
    assert.equal(post?.head?.title, "A title");
    assert.equal(pair.mirror.session?.title, "A title");
    for (const update of turn(1)) pair.update(update);
    assert.equal(pair.flush()?.head, undefined);
    assert.equal(headOf(pair.host).title, "A title");
    assert.equal("items" in headOf(pair.host), false);
  });

  test("another session's post shows that session afresh", () => {
    const pair = new Pair();
    for (const update of turn(1)) pair.update(update);
    pair.flush();
    const other = pair.store.session("t");
    for (const update of turn(7)) pair.store.apply("t", update);
    const post = JSON.parse(JSON.stringify(pair.feed.take(other))) as WindowPost;
    assert.equal(post.reset, true);
    const { change } = pair.mirror.apply(post);
    assert.equal(pair.mirror.session?.sessionId, "t");
    assert.deepEqual(pair.mirror.session?.items, other.items);
    assert.equal(change.header, true);
  });

  test("the page's first item gone from the host (MAX_ITEMS, an echo): a fresh run, not a wrong one", () => {
    const pair = new Pair();
    pair.feed.note(addLocalPrompt(pair.host, "only"));
    pair.flush();
    pair.update({ sessionUpdate: "message_chunk", role: "user", messageId: "u1", content: { type: "text", text: "only" } } as SessionUpdate);
    const post = pair.flush();
    assert.equal(post?.reset, true);
    pair.check();
  });
});
