import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { checkpointFor, checkpointLabel, notApplied, restoreSummary, unsavedSkips, userTurn } from "../../src/model/checkpoints";
import type { Item } from "../../src/model/conversation";
import type { Checkpoint } from "../../src/protocol";

const text = (t: string) => [{ type: "text", text: t }] as never;
const items: Item[] = [
  { kind: "message", id: "u1", role: "user", blocks: text("Fix add\nplease") },
  { kind: "message", id: "a1", role: "agent", blocks: text("done") },
  { kind: "turn_end", id: "e1", stopReason: "end_turn" },
  { kind: "message", id: "u2", role: "user", blocks: text("Now mul") },
];
const base: Checkpoint = { id: "c1", sessionId: "s", turn: 1, prompt: "Fix add", time: "2026-12-01T11:02:03.456+00:00", files: ["/ws/calc.py"] };

describe("checkpoints model", () => {
  test("a user message's turn and text; other items have none", () => {
    assert.deepEqual(userTurn(items, "u2"), { turn: 2, text: "Now mul" });
    assert.deepEqual(userTurn(items, "u1"), { turn: 1, text: "Fix add\nplease" });
    assert.equal(userTurn(items, "a1"), undefined);
  });

  test("the checkpoint of a turn: same turn and first line, else the first line alone", () => {
    const list = [{ ...base, id: "c2", turn: 2, prompt: "Now mul" }, base, { ...base, id: "r", turn: null, prompt: "Restore to before turn 1: Fix add" }];
    assert.equal(checkpointFor(list, 1, "Fix add\nplease")?.id, "c1");
    assert.equal(checkpointFor(list, 5, "Now mul")?.id, "c2");
    assert.equal(checkpointFor(list, 1, "something else"), undefined);
  });

  test("unsaved files and the summary of a restore", () => {
    const result = {
      restored: ["/ws/a.py"],
      skipped: [
        { path: "/ws/b.py", reason: "unsaved changes in the editor (confirm with includeUnsaved)" },
        { path: "/ws/big.bin", reason: "not recorded in the checkpoint: over the size limit" },
      ],
      checkpoint: "u",
      prompt: "Fix add",
    };
    assert.deepEqual(unsavedSkips(result), ["/ws/b.py"]);
    assert.match(restoreSummary(result, (p) => p.split("/").pop() ?? p), /^Restored 1 file\. Skipped: b\.py \(unsaved.*big\.bin \(not recorded/);
  });

  test("a quick pick line", () => {
    assert.deepEqual(checkpointLabel(base), { label: "turn 1 · Fix add", description: "11:02:03", detail: "1 file: /ws/calc.py" });
    assert.equal(checkpointLabel({ ...base, turn: null, prompt: "Restore to before turn 1: x", files: [] }).detail, "no files changed");
  });

  test("files left unticked in Refactor Preview are reported as skipped, not restored", () => {
    const result = { restored: ["/ws/calc.py", "/ws/extra.py"], skipped: [{ path: "/ws/n.md", reason: "unsaved changes in the editor" }], checkpoint: "c9", prompt: "p" };
    const after = notApplied(result, ["/ws/extra.py", "/ws/n.md"]);
    assert.deepEqual(after.restored, ["/ws/calc.py"]);
    assert.deepEqual(after.skipped, [
      { path: "/ws/n.md", reason: "unsaved changes in the editor" },
      { path: "/ws/extra.py", reason: "left as it is in the preview" },
    ]);
    assert.equal(restoreSummary(after, (p) => p.split("/").pop() ?? p), "Restored 1 file. Skipped: n.md (unsaved changes in the editor); extra.py (left as it is in the preview).");
    assert.deepEqual(notApplied(result, []), result);
  });
});
