import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { BATCH_MS, MAX_POST_UPDATES, postDelay, readUpdates, STREAM_POST_MS, updateMessages } from "../../src/model/postPacing";
import type { SessionUpdate } from "../../src/protocol";

const chunk = (i: number): SessionUpdate => ({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: `part ${i}` } }) as SessionUpdate;

describe("posting updates to the panel", () => {
  test("updates after a quiet spell wait one batch", () => {
    assert.equal(postDelay(1000, Number.NEGATIVE_INFINITY), BATCH_MS);
    assert.equal(postDelay(1000, 1000 - STREAM_POST_MS), BATCH_MS);
    assert.equal(postDelay(1000, 1000 - 500), BATCH_MS);
  });

  test("while updates stream in, posts are STREAM_POST_MS apart", () => {
    assert.equal(postDelay(1000, 1000), STREAM_POST_MS);
    assert.equal(postDelay(1010, 1000), STREAM_POST_MS - 10);
    // Never sooner than a batch: the last post was nearly STREAM_POST_MS ago.
    assert.equal(postDelay(1000 + STREAM_POST_MS - 1, 1000), BATCH_MS);
  });

  test("a long batch goes as messages of at most MAX_POST_UPDATES, in order, nothing lost", () => {
    const updates = Array.from({ length: 2 * MAX_POST_UPDATES + 7 }, (_, i) => chunk(i));
    const messages = updateMessages(updates);
    assert.deepEqual(
      messages.map((m) => m.count),
      [MAX_POST_UPDATES, MAX_POST_UPDATES, 7],
    );
    const back = messages.flatMap((m) => readUpdates(m.json));
    assert.deepEqual(back, updates);
    for (const m of messages) assert.equal(readUpdates(m.json).length, m.count);
  });

  test("no updates, no message", () => {
    assert.deepEqual(updateMessages([]), []);
  });

  test("text that is not an array of updates reads as none", () => {
    assert.deepEqual(readUpdates("{"), []);
    assert.deepEqual(readUpdates('{"sessionUpdate": "plan"}'), []);
  });
});
