// Prompts while the agent works, and sub-agents, in a real VS Code (code-server, the built .vsix),
// against the scripted test agent: a prompt sent during a turn is queued above the input, a queued
// prompt is removed, another steers the running turn (Claude Code's `_session/steering`, which the
// script advertises), and the sub-agent's tool calls sit collapsed in their parent's card; then the agent's
// stored sessions (two pages, titled) are listed and one is loaded with its history.
// Screenshots go to test-artifacts/vscode/ (prefixed "queue").

import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { FrameLocator } from "playwright-core";
import { agentMessages, readEnv, scriptedAgent, until, VsCode, workbenchSettings } from "./harness";

const env = readEnv();
const vscode = new VsCode(env);
const agentLog = join(vscode.root, "agent.jsonl");
let panel: FrameLocator;

function call(id: string, extra: Record<string, unknown>): Record<string, unknown> {
  return { update: { sessionUpdate: "tool_call", toolCallId: id, title: `Step ${id}`, kind: "read", status: "completed", ...extra } };
}

function page(ids: string[], nextCursor?: string): Record<string, unknown> {
  return { sessions: ids.map((id) => ({ sessionId: id, cwd: "$cwd", title: `Stored ${id}` })), ...(nextCursor === undefined ? {} : { nextCursor }) };
}

const script = {
  protocol: 1,
  on_initialize: {
    _meta: { steering: { supported: true } },
    agentCapabilities: { loadSession: true, sessionCapabilities: { list: {}, resume: {}, close: {}, fork: {}, delete: {} } },
  },
  // Two pages of stored sessions: the picker shows both.
  on_list: { pages: { "": page(["old-a"], "c1"), c1: page(["old-b"]) } },
  on_load: [{ update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "replayed from old-b" } } }],
  on_request: { "_session/steering": { outcome: "injected" } },
  on_prompt: [
    [
      call("task-1", { title: "Task: explore", status: "in_progress" }),
      call("child-1", { _meta: { claudeCode: { parentToolUseId: "task-1" } } }),
      call("child-2", { parentToolCallId: "task-1" }),
      { sleep: 8 },
    ],
    [],
  ],
};

const settings = workbenchSettings({
  "acpls.agent": scriptedAgent(env, script, agentLog),
  "acpls.python": env.python,
});

describe("queue, steer and sub-agents in VS Code", { timeout: 240_000 }, () => {
  before(() => vscode.launch(settings));

  after(() => vscode.finish());

  test("prompts sent during a turn are queued, removed, steered; sub-agent calls nest collapsed", async () => {
    panel = await vscode.openPanel();
    await vscode.sendPrompt("first");
    // The sub-agent's two calls sit in the parent's card, collapsed.
    const nested = panel.locator(".item.tool details.subagent");
    await nested.locator("summary", { hasText: "Sub-agent: 2 tool calls" }).waitFor({ timeout: 90_000 });
    assert.equal(await nested.getAttribute("open"), null);
    assert.equal(await panel.locator(".item.tool").count(), 1);
    await until("the first prompt at the agent", () => agentMessages(agentLog, "session/prompt").length === 1);
    for (const text of ["second", "third"]) await vscode.sendPrompt(text);
    const rows = panel.locator(".queue .queued");
    await rows.nth(1).waitFor({ timeout: 10_000 });
    assert.deepEqual(await rows.locator(".queued-text").allTextContents(), ["second", "third"]);
    await vscode.screenshot("queue-two-waiting");
    await rows.nth(1).locator("button[aria-label='Remove']").click();
    await rows.nth(0).locator("button", { hasText: "Steer" }).click();
    await until("the steered prompt at the agent", () => agentMessages(agentLog, "_session/steering").length === 1);
    assert.deepEqual(agentMessages(agentLog, "_session/steering")[0]?.prompt, [{ type: "text", text: "second" }]);
    await panel.locator(".queue").waitFor({ state: "hidden", timeout: 10_000 });
    await nested.locator("summary").click();
    await nested.locator(".subagent-call", { hasText: "Step child-2" }).waitFor({ timeout: 5_000 });
    await vscode.screenshot("queue-steered-subagents-open");
    // Nothing queued is left: the turn ends and no second prompt is sent.
    await panel.locator(".turn-end").first().waitFor({ timeout: 60_000 });
    assert.equal(agentMessages(agentLog, "session/prompt").length, 1);
  });

  test("agent sessions: every page with titles, loaded with its history", async () => {
    const page = vscode.page;
    await vscode.command("acpls: Agent sessions");
    const picker = page.locator(".quick-input-widget", { hasText: "agent sessions" });
    await picker.locator(".quick-input-list .monaco-list-row", { hasText: "Stored old-b" }).waitFor({ timeout: 30_000 });
    const labels = await picker.locator(".quick-input-list .monaco-list-row .label-name").allTextContents();
    assert.ok(labels.includes("Stored old-a") && labels.includes("Stored old-b"), JSON.stringify(labels));
    await vscode.screenshot("sessions-list");
    await picker.locator(".quick-input-list .monaco-list-row", { hasText: "Stored old-b" }).click();
    const actions = page.locator(".quick-input-widget", { hasText: "Stored old-b" });
    await actions.locator(".quick-input-list .monaco-list-row", { hasText: "Load it with its history" }).click();
    await panel.locator(".message.agent", { hasText: "replayed from old-b" }).waitFor({ timeout: 30_000 });
    assert.deepEqual(agentMessages(agentLog, "session/load").map((p) => p.sessionId), ["old-b"]);
    assert.deepEqual(agentMessages(agentLog, "session/list").map((p) => p.cursor ?? null), [null, "c1"]);
    await vscode.screenshot("sessions-loaded");
  });
});
