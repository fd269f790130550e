import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { conflictAnswer, conflictDiff, conflictItems } from "../../src/model/conflict";
import { EXPERIMENTAL_CAPABILITY, parseServerMessage } from "../../src/protocol";
import { fixture } from "./fixtures";

describe("acpls/resolveConflict", () => {
  const diskWrite = parseServerMessage("acpls/resolveConflict", fixture("acpls_resolveConflict.json").params);
  const reject = { ...diskWrite, kind: "reject" };

  test("the editor declares that it answers the request", () => {
    assert.equal(EXPERIMENTAL_CAPABILITY.resolveConflict, true);
    assert.equal(EXPERIMENTAL_CAPABILITY.sessionUpdates, true); // protocol.md 5.4.1
  });

  test("keep mine first, then the diff, then take theirs (named after what theirs is)", () => {
    assert.deepEqual(
      conflictItems(diskWrite).map((i) => i.label),
      ["Keep mine", "Show the diff", "Take the agent's"],
    );
    assert.deepEqual(
      conflictItems(reject).map((i) => i.label),
      ["Keep mine", "Show the diff", "Take the original"],
    );
  });

  test("each button's answer; dismissed or unknown keeps the user's text (null)", () => {
    assert.deepEqual(conflictAnswer(diskWrite, "Keep mine"), { choice: "keepMine" });
    assert.deepEqual(conflictAnswer(diskWrite, "Take the agent's"), { choice: "takeTheirs" });
    assert.deepEqual(conflictAnswer(reject, "Take the original"), { choice: "takeTheirs" });
    assert.equal(conflictAnswer(diskWrite, "Show the diff"), "showDiff");
    assert.equal(conflictAnswer(diskWrite, undefined), null);
    assert.equal(conflictAnswer(diskWrite, "Take the original"), null);
  });

  test("the diff shows the user's text on the left and theirs on the right", () => {
    const diff = conflictDiff(diskWrite);
    assert.equal(diff.title, "shop.py: yours ↔ agent's");
    assert.equal(diff.leftText, diskWrite.mine);
    assert.equal(diff.rightText, diskWrite.theirs);
    const gone = conflictDiff({ ...reject, theirs: undefined });
    assert.equal(gone.rightText, "");
    assert.equal(gone.title, "shop.py: yours ↔ original");
  });

  test("a bad message is refused before anything is shown", () => {
    assert.throws(() => parseServerMessage("acpls/resolveConflict", { ...diskWrite, mine: 3 }));
  });
});
