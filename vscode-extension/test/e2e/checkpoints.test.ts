// Checkpoints in a real VS Code (code-server, the built .vsix), against the scripted test agent: two
// turns, the second of which changes calc.py and creates extra.py straight on disk (as Claude Code
// does, past the editor); "Restore checkpoint" on the second user message of the panel shows the
// restore in Refactor Preview, Apply puts the ticked file back on disk as it was before that turn
// (the unticked one is reported as left as it is, not as restored), and
// "Continue from here" opens a new session with that turn's prompt back in the input, editable.
// Screenshots go to test-artifacts/vscode/ (prefixed "checkpoints").

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { agentMessages, readEnv, scriptedAgent, until, VsCode, workbenchSettings } from "./harness";

const env = readEnv();
const vscode = new VsCode(env);
const agentLog = join(vscode.root, "agent.jsonl");

const script = {
  protocol: 1,
  on_prompt: [
    [{ update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "looked around" } } }],
    [
      { write_file: { path: "$cwd/calc.py", replace: ["return a * b", "return a ** b"] } },
      { write_file: { path: "$cwd/extra.py", text: "x = 1\n" } },
      { update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "changed calc.py" } } },
    ],
    [],
  ],
};

const settings = workbenchSettings({
  "acpls.agent": scriptedAgent(env, script, agentLog),
  "acpls.python": env.python,
});

describe("checkpoints in VS Code", { timeout: 240_000 }, () => {
  before(() => vscode.launch(settings));

  after(() => vscode.finish());

  test("Restore checkpoint on a message: Refactor Preview, files back on disk, continue from there", async () => {
    const page = vscode.page;
    const calc = join(vscode.workspace, "calc.py");
    const extra = join(vscode.workspace, "extra.py");
    const before = readFileSync(calc, "utf8");
    const panel = await vscode.openPanel();
    const prompt = panel.locator("textarea.prompt");
    await vscode.sendPrompt("Look around");
    await panel.locator(".turn-end").nth(0).waitFor({ timeout: 60_000 });
    await vscode.sendPrompt("Make multiply a power\nand tell me why");
    await panel.locator(".turn-end").nth(1).waitFor({ timeout: 60_000 });
    assert.match(readFileSync(calc, "utf8"), /return a \*\* b/);
    assert.ok(existsSync(extra));

    const second = panel.locator(".item.message.user").nth(1);
    await second.hover();
    await second.locator("button.restore").click();
    // Refactor Preview lists the restore's edits, each to be ticked (acpls marks them
    // needsConfirmation); nothing changes until Apply.
    const apply = page.locator(".monaco-button", { hasText: /^Apply$/ }).first();
    await apply.waitFor({ timeout: 30_000 });
    const preview = page.locator(".bulk-edit-panel");
    await preview.locator(".monaco-list-row", { hasText: "extra.py" }).first().waitFor({ timeout: 10_000 });
    // Only calc.py is ticked: extra.py stays, and the summary says so.
    await preview.locator(".monaco-list-row", { hasText: "calc.py" }).first().locator(".edit-checkbox").first().click();
    await vscode.screenshot("checkpoints-refactor-preview");
    assert.match(readFileSync(calc, "utf8"), /return a \*\* b/);
    await apply.click();
    await until("calc.py back on disk", () => readFileSync(calc, "utf8") === before);
    const toast = page.locator(".notification-toast", { hasText: "Restored 1 file. Skipped: extra.py (left as it is in the preview)." });
    await toast.waitFor({ timeout: 30_000 });
    assert.ok(existsSync(extra));
    await vscode.screenshot("checkpoints-restored");
    await toast.locator(".monaco-button", { hasText: "Continue from here" }).click();
    for (let i = 0; i < 100 && (await prompt.inputValue()) === ""; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(await prompt.inputValue(), "Make multiply a power\nand tell me why");
    // A new session (the agent offers no fork), shown empty until the prompt is sent again.
    assert.equal(agentMessages(agentLog, "session/new").length, 2);
    assert.equal(await panel.locator(".item.message.user").count(), 0);
    await vscode.screenshot("checkpoints-continue");
    await prompt.press("Enter");
    await until("the prompt in the new session", () => agentMessages(agentLog, "session/prompt").length === 3);
    const third = agentMessages(agentLog, "session/prompt")[2] as { sessionId: string; prompt: { type: string; text?: string }[] };
    assert.equal(third.sessionId, "scripted-2");
    // The conversation up to that turn comes first, then the prompt itself.
    assert.match(third.prompt[0]?.text ?? "", /Look around/);
    assert.equal(third.prompt.at(-1)?.text, "Make multiply a power\nand tell me why");
  });
});
