// An agent's disk write over unsaved text in a real VS Code (code-server, the built .vsix), against
// the scripted test agent: the user types in calc.py without saving, the agent writes calc.py on
// disk; the warning (acpls/resolveConflict) appears; "Keep mine" leaves the unsaved text in the
// editor and the agent's on disk. Screenshots go to test-artifacts/vscode/ (prefixed "conflicts").

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { readEnv, scriptedAgent, VsCode, workbenchSettings } from "./harness";

const env = readEnv();
const vscode = new VsCode(env);
const agentLog = join(vscode.root, "agent.jsonl");
const AGENT = "def multiply(a, b):\n    return a ** b  # the agent's\n";
const AGENT2 = "def multiply(a, b):\n    return a * b  # the agent's again\n";

const script = {
  protocol: 1,
  on_prompt: [[{ write_file: { path: "$cwd/calc.py", text: AGENT } }], [{ write_file: { path: "$cwd/calc.py", text: AGENT2 } }]],
};

const settings = workbenchSettings({
  "acpls.agent": scriptedAgent(env, script, agentLog),
  "acpls.python": env.python,
  "files.autoSave": "off",
});

describe("an agent's disk write over unsaved text in VS Code", { timeout: 240_000 }, () => {
  before(() => vscode.launch(settings));

  after(() => vscode.finish());

  test("Keep mine: the unsaved text stays in the editor, the agent's on disk", async () => {
    const page = vscode.page;
    const calc = join(vscode.workspace, "calc.py");
    await page.locator(".statusbar-item", { hasText: "Follow" }).first().waitFor({ timeout: 60_000 });
    await page.keyboard.press("Control+P");
    const input = page.locator(".quick-input-widget input");
    await input.fill("calc.py");
    await page.locator(".quick-input-list .monaco-list-row", { hasText: "calc.py" }).first().click();
    const editor = page.locator(".monaco-editor .view-lines").first();
    await editor.click();
    await page.keyboard.press("Control+Home");
    await page.keyboard.type("# mine, not saved\n");
    await page.locator(".tab.dirty", { hasText: "calc.py" }).waitFor({ timeout: 10_000 });

    const panel = await vscode.openPanel();
    await vscode.sendPrompt("Make it a power");
    await panel.locator(".turn-end").first().waitFor({ timeout: 60_000 });
    assert.equal(readFileSync(calc, "utf8"), AGENT);

    const toast = page.locator(".notification-toast", { hasText: "unsaved changes" });
    await toast.waitFor({ timeout: 30_000 });
    await vscode.screenshot("conflicts-asked");
    await toast.locator(".monaco-button", { hasText: "Keep mine" }).click();
    await toast.waitFor({ state: "detached", timeout: 10_000 });
    assert.equal(readFileSync(calc, "utf8"), AGENT);
    await page.locator(".tab.dirty", { hasText: "calc.py" }).waitFor({ timeout: 10_000 });
    assert.match((await editor.innerText()).replace(/\u00a0/g, " "), /# mine, not saved/);
    await vscode.screenshot("conflicts-kept");
  });

  test("Take the agent's: the editor gets the agent's text", async () => {
    const page = vscode.page;
    const calc = join(vscode.workspace, "calc.py");
    const editor = page.locator(".monaco-editor .view-lines").first();
    await editor.click();
    await page.keyboard.press("Control+Home");
    await page.keyboard.type("# mine again\n");
    const panel = vscode.panel;
    await vscode.sendPrompt("Again");
    await panel.locator(".turn-end").nth(1).waitFor({ timeout: 60_000 });
    assert.equal(readFileSync(calc, "utf8"), AGENT2);
    const toast = page.locator(".notification-toast", { hasText: "unsaved changes" });
    await toast.waitFor({ timeout: 30_000 });
    await toast.locator(".monaco-button", { hasText: "Take the agent's" }).click();
    for (let i = 0; i < 200 && !(await editor.innerText()).includes("agent's again"); i++) await new Promise((r) => setTimeout(r, 100));
    const text = (await editor.innerText()).replace(/\u00a0/g, " ");
    assert.match(text, /return a \* b {2}# the agent's again/);
    assert.doesNotMatch(text, /# mine/);
    // Buffer and disk hold the same text: the tab is not marked as unsaved.
    await page.locator(".tab:not(.dirty)", { hasText: "calc.py" }).waitFor({ timeout: 10_000 });
    assert.equal(readFileSync(calc, "utf8"), AGENT2);
    await vscode.screenshot("conflicts-taken");
  });
});
