// Several agents side by side in a real VS Code (code-server, the built .vsix; protocol.md section
// 13): the default agent is a scripted agent ("alpha") whose turn runs until it is cancelled; while it
// runs, "New session with another agent…" in the panel picks the demo preset, whose turn runs and
// ends beside it; the session list names each session's agent; back in alpha's session its turn
// still runs and is cancelled there. Screenshots go to test-artifacts/vscode/multi-agent/.

import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { FrameLocator } from "playwright-core";
import { agentMessages, readEnv, scriptedAgent, until, VsCode, workbenchSettings } from "./harness";

const env = readEnv();
const vscode = new VsCode({ ...env, artifacts: join(env.artifacts, "multi-agent") });
const agentLog = join(vscode.root, "alpha.jsonl");
let panel: FrameLocator;

const script = {
  protocol: 1,
  on_initialize: { agentInfo: { name: "alpha-agent", version: "1" } },
  on_new_session: { sessionId: "alpha-1" },
  // Alpha answers, then works until the user cancels: its turn is running for as long as the test needs.
  on_prompt: [{ update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "from alpha" } } }, { wait_cancel: true }],
};

const settings = workbenchSettings({
  "acpls.agent": scriptedAgent(env, script, agentLog, { name: "alpha" }),
  "acpls.python": env.python,
});

describe("several agents side by side in VS Code", { timeout: 240_000 }, () => {
  before(() => vscode.launch(settings, { env: { ACPLS_DEMO_SPEED: "0.2" } }));

  after(() => vscode.finish());

  test("a second agent's session runs its turn while the first agent's runs", async () => {
    const page = vscode.page;
    panel = await vscode.openPanel();
    await vscode.sendPrompt("hello alpha");
    await panel.locator(".message.agent", { hasText: "from alpha" }).waitFor({ timeout: 60_000 });
    await until("alpha's turn at the agent", () => agentMessages(agentLog, "session/prompt").length === 1);
    assert.equal(await panel.locator("button.cancel").isVisible(), true, "alpha's turn runs");

    // A new session with another agent: the demo preset, picked in the panel.
    await panel.locator('button[title="New session with another agent…"]').click();
    const picker = page.locator(".quick-input-widget", { hasText: "new session with which agent" });
    await picker.waitFor({ timeout: 30_000 });
    await picker.locator(".quick-input-list .monaco-list-row", { hasText: "alpha" }).first().waitFor({ timeout: 10_000 });
    await vscode.screenshot("agent-picker");
    await picker.locator("input").fill("demo");
    await picker.locator(".quick-input-list .monaco-list-row", { hasText: "demo" }).first().click();
    await panel.locator(".empty").waitFor({ timeout: 60_000 });
    // The demo's own turn, beside alpha's: it runs and ends while alpha's still runs.
    await vscode.sendPrompt("/test");
    await panel.locator(".message.agent", { hasText: "checks" }).first().waitFor({ timeout: 90_000 });
    await panel.locator(".turn-end").first().waitFor({ timeout: 90_000 });
    await panel.locator(".state", { hasText: "acpls demo" }).waitFor({ timeout: 10_000 });
    const labels = await panel.locator("select.session-select option").allTextContents();
    assert.ok(labels.some((l) => l.endsWith("· alpha")) && labels.some((l) => l.endsWith("· demo")), JSON.stringify(labels));
    assert.equal(agentMessages(agentLog, "session/prompt").length, 1, "the demo's prompt did not go to alpha");
    // The demo's mode is in the header; the status item names the default agent, alpha, so it
    // shows no mode of the demo's next to alpha's name.
    await panel.locator('select[aria-label="Mode"] option[value="ask"]:checked').first().waitFor({ state: "attached", timeout: 10_000 });
    const item = await page.locator(".statusbar-item", { hasText: "alpha-agent" }).first().innerText();
    assert.doesNotMatch(item, /·|Ask/, item);
    await vscode.screenshot("demo-turn-beside-alpha");

    // Back in alpha's session: its turn still runs; cancelled there, it ends.
    const alphaLabel = labels.find((l) => l.endsWith("· alpha"));
    assert.ok(alphaLabel !== undefined);
    await panel.locator("select.session-select").selectOption({ label: alphaLabel });
    await panel.locator(".message.agent", { hasText: "from alpha" }).waitFor({ timeout: 20_000 });
    await panel.locator(".state", { hasText: "alpha-agent" }).waitFor({ timeout: 10_000 });
    await panel.locator("button.cancel").click();
    await panel.locator(".turn-end", { hasText: "cancelled" }).waitFor({ timeout: 30_000 });
    await until("alpha got the cancel", () => agentMessages(agentLog, "session/cancel").length === 1);
    await vscode.screenshot("alpha-cancelled");
  });
});
