import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  ChatWindow,
  drawOrder,
  FRAME_BUDGET_MS,
  frameBudget,
  FramePacer,
  holdsForKey,
  KEY_HOLD_MAX_MS,
  MIN_FRAME_ITEMS,
  SCREEN_ITEMS,
  toRedraw,
  TYPING_FRAME_BUDGET_MS,
  TYPING_MS,
} from "../../src/model/chatWindow";
import { applyUpdate, emptySession } from "../../src/model/conversation";
import type { SessionUpdate } from "../../src/protocol";

const options = { firstPage: 10, page: 5, maxShown: 30 };

describe("chat window", () => {
  test("a shown session starts with its last page and says what is above it", () => {
    const w = new ChatWindow(options);
    w.reset(100);
    assert.equal(w.start, 90);
    assert.equal(w.shows(89), false);
    assert.equal(w.shows(99), true);
    assert.match(w.note(0) ?? "", /^90 earlier items are above: scroll up or “Show earlier” to see them\.$/);
    w.reset(4);
    assert.equal(w.start, 0);
    assert.equal(w.note(0), undefined);
    // The page holds only the newest items (model/panelFeed.ts): those above its run count too.
    assert.match(w.note(0, 1) ?? "", /^1 earlier item is above/);
  });

  test("following the end keeps at most maxShown in the page; the ones leaving are named", () => {
    const w = new ChatWindow(options);
    w.reset(0);
    assert.deepEqual(w.follow(20), { from: 0, to: 0 });
    assert.equal(w.start, 0);
    assert.deepEqual(w.follow(45), { from: 0, to: 15 });
    assert.equal(w.start, 15);
    assert.deepEqual(w.follow(46), { from: 15, to: 16 });
    // Never backwards: a shorter conversation (an item removed) keeps the start.
    assert.deepEqual(w.follow(40), { from: 16, to: 16 });
  });

  test("earlier pages come back one at a time, down to the first item", () => {
    const w = new ChatWindow(options);
    w.reset(22);
    assert.equal(w.start, 12);
    assert.deepEqual(w.earlier(), { from: 7, to: 12 });
    assert.deepEqual(w.earlier(), { from: 2, to: 7 });
    assert.deepEqual(w.earlier(), { from: 0, to: 2 });
    assert.deepEqual(w.earlier(), { from: 0, to: 0 });
    assert.equal(w.note(0), undefined);
  });

  test("items the view no longer keeps are named with where to find them", () => {
    const w = new ChatWindow(options);
    w.reset(50);
    w.trimmed(7);
    assert.equal(w.start, 33);
    assert.match(w.note(7) ?? "", /33 earlier items are above.*7 older items are no longer kept here; the session's transcript \(acpls: Open the session transcript\) has them\./);
    w.trimmed(100);
    assert.equal(w.start, 0);
    assert.match(w.note(1) ?? "", /^1 older item is no longer kept here/);
  });

  test("a 20,000-update session is kept whole and every item is reachable from the window", () => {
    const session = emptySession("s");
    const w = new ChatWindow();
    for (let i = 0; i < 20_000; i++) {
      const update: SessionUpdate =
        i % 2 === 0
          ? { sessionUpdate: "message_chunk", role: "user", messageId: `u${i}`, content: { type: "text", text: `q${i}` } }
          : { sessionUpdate: "message_chunk", role: "agent", messageId: `a${i}`, content: { type: "text", text: `a${i}` } };
      applyUpdate(session, update, i);
    }
    assert.equal(session.items.length, 20_000);
    assert.equal(session.trimmed, 0);
    w.reset(session.items.length);
    assert.ok(w.shows(19_999));
    let pages = 0;
    while (w.start > 0) {
      w.earlier();
      pages += 1;
    }
    assert.ok(pages > 0 && w.shows(0));
  });

  test("a redraw takes less of a frame while keys arrive", () => {
    assert.ok(TYPING_FRAME_BUDGET_MS < FRAME_BUDGET_MS);
    assert.equal(frameBudget(10_000, Number.NEGATIVE_INFINITY), FRAME_BUDGET_MS, "no key yet");
    assert.equal(frameBudget(10_000, 10_000 - 5), TYPING_FRAME_BUDGET_MS, "a key 5 ms ago");
    assert.equal(frameBudget(10_000, 10_000 - TYPING_MS + 1), TYPING_FRAME_BUDGET_MS);
    assert.equal(frameBudget(10_000, 10_000 - TYPING_MS), FRAME_BUDGET_MS, "no key for TYPING_MS");
  });

  test("what a redraw still has to draw: items in the page, in order, once; the rest goes", () => {
    const shown = new Set(["c", "d", "e"]);
    assert.deepEqual(toRedraw(["a", "c", "b", "d", "c", "e", "a", "d"], shown), ["c", "d", "e"]);
    assert.deepEqual(toRedraw([], shown), []);
    // A long load: 20,000 marked ids, a page of 300: what waits is bounded by the page.
    const page = new Map(Array.from({ length: 300 }, (_, i) => [`i${19_700 + i}`, i]));
    const marked = Array.from({ length: 20_000 }, (_, i) => `i${i}`);
    const left = toRedraw([...marked, ...marked], page);
    assert.equal(left.length, 300);
    assert.equal(left[0], "i19700");
    assert.equal(left.at(-1), "i19999");
  });

  test("following the end, a frame draws the newest items first; else in the order given", () => {
    const places = new Map([["a", 7], ["b", 9], ["c", 8], ["d", 10]]);
    // Marked by updates in this order (c changed last); on screen is the end: d, b, c, a.
    assert.deepEqual(drawOrder(["a", "b", "d", "c"], places, true), ["d", "b", "c", "a"]);
    assert.deepEqual(drawOrder(["a", "b", "d", "c"], places, false), ["a", "b", "d", "c"]);
    assert.deepEqual(drawOrder([], places, true), []);
  });

  test("the frame after a key leaves the conversation alone, for KEY_HOLD_MAX_MS at most", () => {
    // A key at 1000, the frame before began at 990: the frame at 1005 shows the key, no redraw.
    assert.equal(holdsForKey(1005, 1000, 990, 1005), true);
    // No key since the frame before: the redraw goes ahead.
    assert.equal(holdsForKey(1022, 1000, 1005, 1005), false);
    assert.equal(holdsForKey(1005, Number.NEGATIVE_INFINITY, 990, 1005), false);
    // Keys in every frame: put off since 1005, it goes ahead KEY_HOLD_MAX_MS later.
    assert.equal(holdsForKey(1005 + KEY_HOLD_MAX_MS - 1, 1090, 1080, 1005), true);
    assert.equal(holdsForKey(1005 + KEY_HOLD_MAX_MS, 1090, 1080, 1005), false);
  });

  test("while a load streams in, a following page keeps only the items that can be on screen", () => {
    const w = new ChatWindow();
    w.reset(1000);
    assert.equal(w.start, 900);
    // Updates arrived since the last frame: the page shrinks to the newest SCREEN_ITEMS.
    assert.deepEqual(w.follow(1200, true), { from: 900, to: 1200 - SCREEN_ITEMS });
    assert.equal(w.start, 1200 - SCREEN_ITEMS);
    // A frame with no new update keeps what it has and grows to maxShown again, never backwards.
    assert.deepEqual(w.follow(1210, false), { from: 1160, to: 1160 });
    assert.equal(w.start, 1160);
    // The items above stay reachable: the note counts them and pages come back.
    assert.match(w.note(0) ?? "", /^1160 earlier items are above/);
    assert.deepEqual(w.earlier(), { from: 1060, to: 1160 });
    // A window smaller than a screen is not grown by it.
    const small = new ChatWindow({ firstPage: 10, page: 5, maxShown: 30 });
    small.reset(0);
    assert.deepEqual(small.follow(100, true), { from: 0, to: 70 });
  });

  test("a frame draws as many items as its whole time allows, learnt from the frames before", () => {
    const pacer = new FramePacer(0.2);
    assert.equal(pacer.allowance(8), 40);
    // A frame of 20 items took 16 ms to its end (rendering included): 0.8 ms an item now weighs half.
    pacer.record(16, 20);
    assert.equal(pacer.msPerItem, 0.5);
    assert.equal(pacer.allowance(8), 16);
    pacer.record(16, 20);
    pacer.record(16, 20);
    assert.ok(pacer.allowance(8) <= 11, "follows slower frames");
    pacer.record(1, 50);
    assert.ok(pacer.allowance(8) > 11, "and faster ones");
  });

  test("the pacer never goes below MIN_FRAME_ITEMS, and frames of fewer items do not teach it", () => {
    const pacer = new FramePacer(0.2);
    // A frame's own cost (the key, the scroll) over a few items would read as a costly item.
    pacer.record(9, MIN_FRAME_ITEMS - 1);
    assert.equal(pacer.msPerItem, 0.2);
    // A loaded machine: every frame over budget on its own; the load still advances.
    for (let i = 0; i < 10; i++) pacer.record(60, MIN_FRAME_ITEMS);
    assert.equal(pacer.allowance(TYPING_FRAME_BUDGET_MS), MIN_FRAME_ITEMS);
    pacer.record(Number.NaN, 10);
    assert.ok(Number.isFinite(pacer.msPerItem));
  });
});
