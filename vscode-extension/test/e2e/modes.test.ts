// The agent's mode in the status item, in a real VS Code (code-server, the built .vsix), against the
// scripted test agent (issue #11: the mode is always in sight): the item shows the new session's
// mode next to the agent, its tooltip says what the mode does, it follows the agent when the agent
// changes mode itself mid-turn (as Claude Code leaving plan mode does), and its menu offers the
// modes: a pick reaches the agent as session/set_mode and the item follows.
// Screenshots go to test-artifacts/vscode/ (prefixed "modes").

import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe } from "node:test";
import type { FrameLocator } from "playwright-core";
import { agentMessages, readEnv, scriptedAgent, stepper, until, VsCode, workbenchSettings } from "./harness";

const env = readEnv();
const vscode = new VsCode(env);
const agentLog = join(vscode.root, "agent.jsonl");
const step = stepper(vscode, "modes-");
let panel: FrameLocator;

const say = (text: string): Record<string, unknown> => ({ update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } } });

const script = {
  protocol: 1,
  on_new_session: {
    modes: {
      currentModeId: "plan",
      availableModes: [
        { id: "default", name: "Manual", description: "Ask before every edit" },
        { id: "plan", name: "Plan", description: "Read and plan; no edits" },
      ],
    },
  },
  // The first turn only plans; in the second the agent leaves plan mode by itself.
  on_prompt: [[say("here is the plan")], [{ update: { sessionUpdate: "current_mode_update", currentModeId: "default" } }, say("now editing")]],
};

/** The acpls status item (it names the agent; the other items are VS Code's and acpls' Follow). */
function statusItem(): ReturnType<typeof vscode.page.locator> {
  return vscode.page.locator(".statusbar-item", { hasText: "scripted-agent" }).first();
}

async function statusShows(text: string): Promise<void> {
  await vscode.page.locator(".statusbar-item", { hasText: text }).first().waitFor({ timeout: 30_000 });
  assert.equal((await statusItem().innerText()).trim(), text);
}

async function prompt(text: string, turns: number): Promise<void> {
  await vscode.sendPrompt(text);
  await until(`turn ${turns} ended`, () => agentMessages(agentLog, "session/prompt").length === turns);
  await panel.locator(".turn-end").nth(turns - 1).waitFor({ timeout: 60_000 });
}

describe("the agent's mode in the VS Code status item", { timeout: 240_000 }, () => {
  before(() => vscode.launch(workbenchSettings({ "acpls.agent": scriptedAgent(env, script, agentLog), "acpls.python": env.python })));
  after(() => vscode.finish());

  step("the new session's mode is in the status item, and what it does in its tooltip", async () => {
    const page = vscode.page;
    panel = await vscode.openPanel();
    await prompt("plan it", 1);
    await statusShows("scripted-agent · Plan");
    await statusItem().hover();
    await page.locator(".monaco-hover, .workbench-hover", { hasText: "Read and plan; no edits" }).first().waitFor({ timeout: 15_000 });
    await vscode.screenshot("modes-status-plan");
  });

  step("the agent changes its mode mid-turn: the status item follows", async () => {
    await prompt("go ahead", 2);
    await statusShows("scripted-agent · Manual");
    await vscode.screenshot("modes-status-changed-by-agent");
  });

  step("the status item's menu offers the modes; a pick reaches the agent and the item follows", async () => {
    const page = vscode.page;
    await page.keyboard.press("Escape");
    await statusItem().click();
    const menu = page.locator(".quick-input-widget", { hasText: "mode: Plan" });
    const rows = menu.locator(".quick-input-list .monaco-list-row");
    await rows.first().waitFor({ timeout: 10_000 });
    const current = menu.locator(".quick-input-list .monaco-list-row", { hasText: "mode: Manual" });
    await current.locator(".label-description", { hasText: "current" }).waitFor({ timeout: 5_000 });
    await vscode.screenshot("modes-menu");
    await menu.locator(".quick-input-list .monaco-list-row", { hasText: "mode: Plan" }).click();
    await until("session/set_mode at the agent", () => agentMessages(agentLog, "session/set_mode").length === 1);
    assert.equal(agentMessages(agentLog, "session/set_mode")[0]?.modeId, "plan");
    await statusShows("scripted-agent · Plan");
  });
});
