import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import {
  checkElicitationResult,
  checkRequestPermissionResult,
  checkResolveConflictResult,
  eachSessionUpdate,
  isServerMethod,
  KNOWN_UPDATE_KINDS,
  type KnownSessionUpdate,
  parseServerMessage,
  ProtocolError,
  SERVER_MESSAGES,
  type SessionUpdateParams,
} from "../../src/protocol";
import { fixture, fixturesDir, loadFixtures } from "./fixtures";

const fixtures = loadFixtures();

/** Every key of `original` is in `parsed` with an equal value (checks never lose data). */
function assertKeeps(original: unknown, parsed: unknown, path = "params"): void {
  if (typeof original !== "object" || original === null) {
    assert.deepEqual(parsed, original, path);
    return;
  }
  assert.equal(typeof parsed, "object", path);
  for (const [key, value] of Object.entries(original)) {
    if (value === null) continue; // null means "not given" and may be dropped
    assertKeeps(value, (parsed as Record<string, unknown>)[key], `${path}.${key}`);
  }
}

describe("golden fixtures (editors/fixtures)", () => {
  test("there are fixtures to check", () => {
    assert.ok(fixtures.length >= 10, `only ${fixtures.length} fixtures found`);
  });

  for (const f of fixtures) {
    test(f.file, () => {
      if (f.method !== undefined) {
        assert.ok(isServerMethod(f.method), `${f.method} is not in protocol.ts`);
        assert.ok(f.file.startsWith(f.method.replace("/", "_")), "the file is named after its method");
        const parsed = parseServerMessage(f.method, f.params);
        assertKeeps(f.params, parsed);
      } else {
        assert.ok("result" in f, "a fixture is a message or a result");
        const question = f.file.startsWith("acpls_elicitation.");
        if (f.file.startsWith("acpls_resolveConflict.")) {
          assertKeeps(f.result, checkResolveConflictResult(f.result, "result"), "result");
          return;
        }
        if (f.file.startsWith("acpls_authEnv.") || f.file.startsWith("acpls_runLogin.")) {
          assert.ok(typeof f.result === "object" && f.result !== null, "a sign-in answer is an object");
          return;
        }
        assert.ok(question || f.file.startsWith("acpls_requestPermission."), "only the requests have results");
        const result = question ? checkElicitationResult(f.result, "result") : checkRequestPermissionResult(f.result, "result");
        assertKeeps(f.result, result, "result");
      }
    });
  }

  test("every server message of protocol.ts has a fixture", () => {
    const methods = new Set(fixtures.map((f) => f.method));
    for (const method of Object.keys(SERVER_MESSAGES)) assert.ok(methods.has(method), `no fixture for ${method}`);
  });

  test("session update fixtures are known kinds, except the one that tests unknown kinds", () => {
    for (const f of fixtures.filter((x) => x.method === "acpls/sessionUpdate")) {
      const parsed = parseServerMessage("acpls/sessionUpdate", f.params) as SessionUpdateParams;
      const known = (KNOWN_UPDATE_KINDS as string[]).includes(parsed.update.sessionUpdate);
      assert.equal(known, !("unknown" in parsed.update), f.file);
      if (f.file.includes(".unknown")) assert.equal(known, false);
    }
  });

  test("a batch of session updates stands for one acpls/sessionUpdate per update, in order", () => {
    const batch = parseServerMessage("acpls/sessionUpdates", fixture("acpls_sessionUpdates.json").params);
    const singles = eachSessionUpdate(batch).map((p) => parseServerMessage("acpls/sessionUpdate", p) as SessionUpdateParams);
    assert.deepEqual(
      singles.map((p) => [p.sessionId, p.update.sessionUpdate]),
      [
        ["s1", "message"],
        ["s1", "message"],
        ["s1", "tool_call"],
        ["s1", "message_chunk"],
      ],
    );
    assert.deepEqual(
      singles.map((p) => p.update),
      (batch.updates as unknown[]).map((u) => (parseServerMessage("acpls/sessionUpdate", { sessionId: "s1", update: u }) as SessionUpdateParams).update),
    );
    assert.throws(() => parseServerMessage("acpls/sessionUpdates", { sessionId: "s1", updates: {} }), ProtocolError);
  });
});

describe("checks reject malformed messages, naming the field", () => {
  test("a missing uri in acpls/followAgent", () => {
    const params = { ...(fixture("acpls_followAgent.json").params as object), uri: undefined };
    assert.throws(() => parseServerMessage("acpls/followAgent", params), (e: unknown) => e instanceof ProtocolError && e.path === "acpls/followAgent.uri");
  });

  test("a line that is not an integer", () => {
    const params = structuredClone(fixture("acpls_followAgent.json").params) as { range: { start: { line: unknown } } };
    params.range.start.line = 1.5;
    assert.throws(() => parseServerMessage("acpls/followAgent", params), /range\.start\.line: expected an integer/);
  });

  test("terminal output text that is not a string", () => {
    assert.throws(() => parseServerMessage("acpls/terminalOutput", { sessionId: "s", terminalId: "t", text: 3 }), /\.text: expected a string, got a number/);
  });

  test("a permission option without an id", () => {
    const params = structuredClone(fixture("acpls_requestPermission.json").params) as { options: Record<string, unknown>[] };
    delete params.options[2]?.optionId;
    assert.throws(() => parseServerMessage("acpls/requestPermission", params), /options\[2\]\.optionId/);
  });

  test("a known update kind with a wrong field", () => {
    assert.throws(
      () => parseServerMessage("acpls/sessionUpdate", { sessionId: "s", update: { sessionUpdate: "message_chunk", role: "agent", messageId: "m", content: "text" } }),
      /update\.content: expected an object/,
    );
  });

  test("params that are not an object", () => {
    assert.throws(() => parseServerMessage("acpls/changes", [1, 2]), /expected an object, got an array/);
  });

  test("null and absent optional keys are the same", () => {
    const parsed = parseServerMessage("acpls/terminalUpdate", { sessionId: "s", terminalId: "t", command: null, exitStatus: { exitCode: null, signal: "SIGKILL" } });
    assert.equal("command" in parsed, false);
    assert.deepEqual(parsed.exitStatus, { signal: "SIGKILL" });
  });

  test("config options accept v1 `id` as `configId`", () => {
    const parsed = parseServerMessage("acpls/sessionUpdate", {
      sessionId: "s",
      update: { sessionUpdate: "config_options", configOptions: [{ id: "model", name: "Model", type: "select", currentValue: "a", options: [] }] },
    }) as { update: Extract<KnownSessionUpdate, { sessionUpdate: "config_options" }> };
    assert.equal(parsed.update.sessionUpdate, "config_options");
    assert.equal(parsed.update.configOptions[0]?.configId, "model");
  });

  test("a dismissed permission prompt", () => {
    assert.equal(checkRequestPermissionResult(null, "r"), null);
    assert.deepEqual(checkRequestPermissionResult({ optionId: null }, "r"), { optionId: null });
    assert.throws(() => checkRequestPermissionResult({ optionId: 3 }, "r"));
  });
});

describe("editors/protocol.md and protocol.ts agree", () => {
  const doc = readFileSync(join(fixturesDir(), "..", "protocol.md"), "utf8");
  const sections = [...doc.matchAll(/^### 5\.\d+(?:\.\d+)? `([^`]+)`[^\n]*\n([\s\S]*?)(?=^#{2,3} )/gm)];

  test("every acpls/* message of protocol.md is in protocol.ts, and the reverse", () => {
    const documented = sections.map((m) => m[1]);
    assert.deepEqual([...documented].sort(), Object.keys(SERVER_MESSAGES).sort());
  });

  for (const [, method, body] of sections) {
    test(`the example of ${method} passes its check`, () => {
      assert.ok(method !== undefined && isServerMethod(method));
      const blocks = [...(body ?? "").matchAll(/```json\n([\s\S]*?)```/g)].map((b) => JSON.parse(b[1] ?? "null") as unknown);
      assert.ok(blocks.length > 0, `${method} has an example`);
      // A section may also show a part of the message (the merged tool call); one block is the message.
      const passing = blocks.filter((block) => {
        try {
          parseServerMessage(method, block);
          return true;
        } catch {
          return false;
        }
      });
      assert.ok(passing.length > 0, `no example of ${method} passes: ${JSON.stringify(blocks).slice(0, 300)}`);
    });
  }
});
