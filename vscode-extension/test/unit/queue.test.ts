import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { isPanelMessage } from "../../src/model/panelMessages";
import { PromptQueue } from "../../src/model/queue";

describe("prompts queued while the agent works", () => {
  test("in order; taken back to edit or remove; the rest still sent in order", () => {
    const queue = new PromptQueue<{ uri: string }>();
    const a = queue.add("first", [{ uri: "file:///a" }]);
    const b = queue.add("second");
    const c = queue.add("third");
    assert.deepEqual(queue.list.map((q) => q.text), ["first", "second", "third"]);
    assert.equal(queue.take(b.id)?.text, "second");
    assert.equal(queue.take(b.id), undefined);
    assert.deepEqual(queue.next(), { id: a.id, text: "first", context: [{ uri: "file:///a" }] });
    assert.equal(queue.next()?.id, c.id);
    assert.equal(queue.next(), undefined);
  });

  test("the panel's queue messages are checked", () => {
    assert.ok(isPanelMessage({ type: "queued", id: 1, action: "steer" }));
    assert.ok(!isPanelMessage({ type: "queued", id: "1", action: "edit" }));
    assert.ok(!isPanelMessage({ type: "queued", id: 1, action: "send" }));
  });
});
