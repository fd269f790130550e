import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { COMMAND_RESULTS } from "../../src/protocol";
import { sessionActions, sessionPick } from "../../src/model/sessions";

const all = { load: true, resume: true, fork: true, close: true, delete: true, logout: true };

describe("the agent's stored sessions", () => {
  test("a row: title, when, open; the id when titled", () => {
    assert.deepEqual(sessionPick({ sessionId: "s1", title: "Fix the parser", updatedAt: "2026-12-01" }, false), {
      label: "Fix the parser",
      description: "2026-12-01",
      detail: "s1",
      sessionId: "s1",
    });
    assert.deepEqual(sessionPick({ sessionId: "s2", open: true }, false), { label: "s2", description: "open", sessionId: "s2" });
    assert.equal(sessionPick({ sessionId: "s3" }, true).description, "open");
  });

  test("only what the agent offers", () => {
    const names = (offers: Parameters<typeof sessionActions>[0], open: boolean): string[] => sessionActions(offers, open).map((a) => a.action);
    assert.deepEqual(names(all, false), ["load", "resume", "fork", "delete"]);
    assert.deepEqual(names(all, true), ["show", "fork", "close", "delete"]);
    assert.deepEqual(names({ ...all, load: false, fork: false, delete: false }, false), ["resume"]);
    assert.deepEqual(names(undefined, false), ["load"]);
  });

  test("the listing and fork results are checked", () => {
    const listing = { sessions: [{ sessionId: "a", cwd: "/p", title: "T", open: true }], offers: all };
    assert.doesNotThrow(() => COMMAND_RESULTS["acpls.listSessions"](listing, "r"));
    assert.throws(() => COMMAND_RESULTS["acpls.listSessions"]({ sessions: [], offers: { load: "yes" } }, "r"));
    assert.doesNotThrow(() => COMMAND_RESULTS["acpls.forkSession"]({ sessionId: "f", forkedFrom: "a" }, "r"));
    assert.throws(() => COMMAND_RESULTS["acpls.forkSession"]({ sessionId: "f" }, "r"));
  });
});
