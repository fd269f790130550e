// End to end in a real VS Code (code-server 4.100.3 = VS Code 1.100.3) with the built .vsix and the
// acpls server bundled in it, running the demo agent on its sample project. One turn, step by step:
// the prompt typed in the panel streams a reply; follow opens calc.py at the agent's line with the
// decoration; the permission prompt shows its options, "Show diff" opens the proposed text in the
// diff editor, and a click allows the edit; the checks run in a terminal with coloured output; the
// turn ends; the change is listed for review and rejected from its CodeLens; `/` completes the
// agent's commands. A screenshot of each step goes to test-artifacts/vscode/.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe } from "node:test";
import type { FrameLocator } from "playwright-core";
import { readEnv, stepper, VsCode, workbenchSettings } from "./harness";

const env = readEnv();
const vscode = new VsCode(env);
const step = stepper(vscode);
let panel: FrameLocator;

/** The 1-based line of calc.py the demo agent fixes: `return a + b` inside subtract(). */
function subtractBugLine(workspace: string): number {
  const lines = readFileSync(join(workspace, "calc.py"), "utf8").split("\n");
  const def = lines.findIndex((l) => l.startsWith("def subtract"));
  const body = lines.findIndex((l, i) => i > def && l.includes("return a + b"));
  assert.ok(def >= 0 && body > def, "the sample project has the subtract bug");
  return body + 1;
}

const settings = workbenchSettings({
  "acpls.agent": "demo",
  "acpls.python": env.python,
  "acpls.permissions.ui": "notification",
  "acpls.trace.server": "verbose",
});

describe("acpls in VS Code", { timeout: 240_000 }, () => {
  before(() => vscode.launch(settings, { env: { ACPLS_DEMO_SPEED: "0.2" } }));

  after(() => vscode.finish());

  step("the extension activates and starts acpls", async () => {
    const page = vscode.page;
    await page.locator(".statusbar-item", { hasText: "Follow" }).first().waitFor({ timeout: 60_000 });
    // The status item names the agent once the server is up.
    await page.locator(".statusbar-item", { hasText: "demo" }).first().waitFor({ timeout: 60_000 });
    await vscode.screenshot("activated");
  });

  step("a prompt typed in the panel streams a reply", async () => {
    const page = vscode.page;
    panel = await vscode.openPanel();
    await widenSideBar(page, 240);
    await vscode.sendPrompt("Please fix the bug in calc.py");
    await panel.locator(".message.user", { hasText: "Please fix the bug in calc.py" }).waitFor({ timeout: 10_000 });
    const reply = panel.locator(".message.agent").first();
    await reply.waitFor({ timeout: 30_000 });
    // Streamed: the reply is on screen while the turn still runs (Cancel is shown until it ends).
    assert.equal(await panel.locator("button.cancel").isVisible(), true, "the turn is still running");
    await panel.locator(".message.agent", { hasText: "Let me look at the project first." }).waitFor({ timeout: 30_000 });
    await panel.locator(".thought").first().waitFor({ timeout: 10_000 });
    await panel.locator(".plan .plan-entry").first().waitFor({ timeout: 10_000 });
    await vscode.screenshot("reply-streaming");
  });

  step("a permission prompt shows every option, the diff, and is answered by a click", async () => {
    const page = vscode.page;
    const toast = page.locator(".notification-toast", { hasText: "acpls:" }).first();
    await toast.waitFor({ timeout: 60_000 });
    await panel.locator(".tool", { hasText: "Fix subtract()" }).waitFor({ timeout: 10_000 });
    // Every option the demo offers (the agent's names say their kinds), and the way to the diff.
    for (const label of ["Allow", "Always allow", "Reject", "Diff…"]) {
      await toast.locator(".monaco-button", { hasText: label }).first().waitFor({ timeout: 5_000 });
    }
    // The rule an "always" answer would record is named before the user picks it.
    await page.locator(".notification-toast", { hasText: "Always records: edit" }).first().waitFor({ timeout: 5_000 });
    await vscode.screenshot("permission-prompt");

    // Follow: calc.py is open (without focus) at the agent's line, marked with the decoration.
    const bugLine = subtractBugLine(vscode.workspace);
    await page.locator(".tab.active", { hasText: "calc.py" }).waitFor({ timeout: 20_000 });
    const marked = await markedLines(page);
    assert.ok(marked.includes(bugLine), `the agent's line ${bugLine} is marked (marked: ${marked.join(", ")})`);
    await vscode.screenshot("follow-decoration");

    // Show diff: the diff editor shows the proposed text against the current file.
    await toast.locator(".monaco-button", { hasText: "Diff…" }).click();
    await page.locator(".quick-input-list .monaco-list-row", { hasText: "Show diff" }).first().click();
    const diff = page.locator(".monaco-diff-editor").first();
    await diff.waitFor({ timeout: 20_000 });
    await diff.locator(".editor.modified .view-line", { hasText: "return a - b" }).first().waitFor({ timeout: 10_000 });
    await diff.locator(".editor.original .view-line", { hasText: "return a + b" }).first().waitFor({ timeout: 10_000 });
    await page.locator(".tab.active", { hasText: "proposed by the agent" }).waitFor({ timeout: 10_000 });
    await vscode.screenshot("diff-editor");

    // The prompt comes back after "Show diff"; allow the edit with a click.
    const again = page.locator(".notification-toast", { hasText: "acpls:" }).first();
    const allow = again.locator(".monaco-button", { hasText: /^Allow$/ }).first();
    await allow.waitFor({ timeout: 20_000 });
    await allow.click();
    await panel.locator(".tool.status-completed", { hasText: "Fix subtract()" }).waitFor({ timeout: 30_000 });
    await vscode.screenshot("permission-answered");
  });

  step("the agent's terminal shows coloured output, named after its command", async () => {
    const page = vscode.page;
    await panel.locator(".tool", { hasText: "Run the checks" }).waitFor({ timeout: 60_000 });
    const terminal = page.locator(".terminal-wrapper.active .xterm-rows").first();
    await terminal.waitFor({ timeout: 60_000 });
    await page.waitForFunction(
      () => document.querySelector(".terminal-wrapper.active .xterm-rows")?.textContent?.match(/passed|failed|error|ok/i) !== null,
      undefined,
      { timeout: 60_000 },
    );
    const coloured = await terminal.locator('span[class*="xterm-fg-"]').count();
    assert.ok(coloured > 0, "some terminal output has an ANSI colour");
    await page.locator(".terminal-tabs-entry, .single-terminal-tab", { hasText: /checks|python/ }).first().waitFor({ timeout: 10_000 });
    await vscode.screenshot("terminal");
  });

  step("the turn ends in the panel", async () => {
    await panel.locator(".turn-end").first().waitFor({ timeout: 90_000 });
    assert.equal(await panel.locator("button.cancel").isVisible(), false);
    const text = await panel.locator(".message.agent").last().innerText();
    assert.ok(text.length > 0);
    await vscode.screenshot("turn-ended");
  });

  step("the agent's change is listed for review and rejected from its CodeLens", async () => {
    const page = vscode.page;
    // The view starts collapsed (the conversation gets the room); the activity bar badge counts hunks.
    const header = page.locator(".pane-header", { hasText: "Agent changes" }).first();
    if ((await header.getAttribute("aria-expanded")) === "false") await header.click();
    const hunk = page.locator(".monaco-list-row", { hasText: "line 11: +1 -1" }).first();
    await hunk.waitFor({ timeout: 20_000 });
    await page.locator(".monaco-list-row", { hasText: "modified +1 -1" }).first().waitFor({ timeout: 5_000 });
    await hunk.click();
    await page.locator(".tab.active", { hasText: "calc.py" }).waitFor({ timeout: 10_000 });
    const reject = page.locator(".codelens-decoration a", { hasText: "Reject" }).first();
    await reject.waitFor({ timeout: 20_000 });
    await page.locator(".codelens-decoration a", { hasText: "Keep" }).first().waitFor({ timeout: 5_000 });
    await vscode.screenshot("review-codelens");
    await reject.click();
    // The editor holds the text from before the agent again: subtract() returns a + b.
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll(".editor-group-container.active .monaco-editor .view-line")].filter((l) => l.textContent?.replace(/\u00a0/g, " ").trim() === "return a + b").length >= 2,
      undefined,
      { timeout: 20_000 },
    );
    await hunk.waitFor({ state: "detached", timeout: 20_000 });
    await vscode.screenshot("review-rejected");
  });

  step("Ask agent about selection attaches the selected lines to the next prompt", async () => {
    const page = vscode.page;
    await page.locator(".editor-group-container.active .view-line", { hasText: "def subtract" }).first().click();
    await page.keyboard.press("Home");
    await page.keyboard.press("Shift+ArrowDown");
    await page.keyboard.press("Shift+ArrowDown");
    await page.keyboard.press("Shift+End");
    // The editor's context menu has the entry while there is a selection.
    await page.locator(".editor-group-container.active .view-line", { hasText: "return a + b" }).nth(1).click({ button: "right" });
    const entry = page.locator(".monaco-menu .action-item", { hasText: "Ask agent about selection" }).first();
    await entry.waitFor({ timeout: 10_000 });
    await vscode.screenshot("editor-context-menu");
    await entry.click();
    await panel.locator(".chip", { hasText: "calc.py:9-11" }).waitFor({ timeout: 10_000 });
    await vscode.screenshot("ask-about-selection");
  });

  step("typing / in the prompt box completes the agent's commands", async () => {
    const prompt = panel.locator("textarea.prompt");
    await prompt.click();
    await prompt.pressSequentially("/te");
    const item = panel.locator(".completions li", { hasText: "/test" }).first();
    await item.waitFor({ timeout: 10_000 });
    await vscode.screenshot("slash-completion");
    await prompt.press("Tab");
    assert.equal(await prompt.inputValue(), "/test ");
    await prompt.fill("");
  });

  step("with acpls.permissions.ui = quickPick: Preview edit opens the Refactor Preview, then Reject", async () => {
    const page = vscode.page;
    await vscode.command("acpls: Choose how permission prompts are shown");
    const chooser = page.locator(".quick-input-widget", { hasText: "show the agent's permission prompts as" });
    await chooser.waitFor({ timeout: 10_000 });
    await chooser.locator(".quick-input-list .monaco-list-row", { hasText: "every option in a list" }).click();
    await chooser.waitFor({ state: "hidden", timeout: 10_000 });
    await new Promise((r) => setTimeout(r, 500)); // the setting is written asynchronously
    const prompt = panel.locator("textarea.prompt");
    await prompt.fill("Fix it again");
    await prompt.press("Enter");
    // The selection went with the prompt as context.
    await panel.locator(".chip").first().waitFor({ state: "detached", timeout: 10_000 });
    const pick = page.locator(".quick-input-widget", { hasText: "acpls:" });
    await pick.waitFor({ timeout: 60_000 });
    const row = (label: string) => pick.locator(".quick-input-list .monaco-list-row", { hasText: label }).first();
    for (const label of ["Allow", "Reject", "Show diff", "Preview edit"]) await row(label).waitFor({ timeout: 5_000 });
    await vscode.screenshot("permission-quick-pick");

    await row("Preview edit").click();
    const discard = page.locator(".monaco-button", { hasText: "Discard" }).first();
    await discard.waitFor({ timeout: 20_000 });
    await page.locator(".monaco-workbench", { hasText: "return a - b" }).first().waitFor({ timeout: 10_000 });
    await vscode.screenshot("refactor-preview");
    await discard.click();

    await row("Reject").waitFor({ timeout: 20_000 });
    await row("Reject").click();
    await panel.locator(".turn-end").nth(1).waitFor({ timeout: 60_000 });
    const card = panel.locator(".tool", { hasText: "Fix subtract()" }).last();
    assert.match((await card.getAttribute("class")) ?? "", /status-(failed|cancelled)/);
    await vscode.screenshot("permission-rejected");
  });

  step("Cancel ends the turn and closes its waiting permission prompt", async () => {
    const page = vscode.page;
    const prompt = panel.locator("textarea.prompt");
    await prompt.fill("And once more");
    await prompt.press("Enter");
    const pick = page.locator(".quick-input-widget", { hasText: "acpls:" });
    await pick.waitFor({ timeout: 60_000 });
    const inPanel = panel.locator(".permission-prompt", { hasText: "Fix subtract()" });
    await inPanel.waitFor({ timeout: 10_000 });
    await panel.locator("button.cancel").click();
    await panel.locator(".turn-end", { hasText: "cancelled" }).waitFor({ timeout: 30_000 });
    await pick.waitFor({ state: "hidden", timeout: 10_000 });
    await inPanel.waitFor({ state: "detached", timeout: 10_000 });
    await vscode.screenshot("cancelled");
  });

  step("a permission prompt can be answered from the panel", async () => {
    const page = vscode.page;
    const prompt = panel.locator("textarea.prompt");
    await prompt.fill("Last one");
    await prompt.press("Enter");
    const inPanel = panel.locator(".permission-prompt", { hasText: "Fix subtract()" });
    await inPanel.waitFor({ timeout: 60_000 });
    for (const label of ["Allow", "Always allow", "Reject"]) {
      await inPanel.locator("button.option", { hasText: label }).first().waitFor({ timeout: 5_000 });
    }
    await inPanel.locator(".permission-message", { hasText: "Always records: edit" }).waitFor({ timeout: 5_000 });
    await vscode.screenshot("permission-in-panel");
    await inPanel.locator("button.option", { hasText: /^Reject$/ }).click();
    // The quick pick showing the same prompt closes, and the agent gets the answer.
    await page.locator(".quick-input-widget", { hasText: "acpls:" }).waitFor({ state: "hidden", timeout: 10_000 });
    await inPanel.waitFor({ state: "detached", timeout: 10_000 });
    await panel.locator(".turn-end").nth(3).waitFor({ timeout: 60_000 });
    const card = panel.locator(".tool", { hasText: "Fix subtract()" }).last();
    assert.match((await card.getAttribute("class")) ?? "", /status-(failed|cancelled)/);
  });

  step("the session switcher starts a new session and returns to the first one", async () => {
    await panel.locator('button[title="New session"]').click();
    await panel.locator(".empty").waitFor({ timeout: 20_000 });
    assert.equal(await panel.locator(".message").count(), 0);
    await vscode.screenshot("new-session");
    await panel.locator("select.session-select").selectOption({ label: "Please fix the bug in calc.py" });
    await panel.locator(".message.user", { hasText: "Please fix the bug in calc.py" }).waitFor({ timeout: 20_000 });
    await panel.locator(".turn-end").first().waitFor({ timeout: 5_000 });
    await vscode.screenshot("session-switched-back");
  });

  step("acpls restarts, and the next prompt works in a new session", async () => {
    const page = vscode.page;
    await vscode.command("acpls: Restart acpls");
    await page.locator(".notification-toast", { hasText: "acpls restarted." }).first().waitFor({ timeout: 60_000 });
    const prompt = panel.locator("textarea.prompt");
    await prompt.fill("/test");
    await prompt.press("Enter");
    // The panel switches to the new session: only this prompt, then the reply and the turn's end.
    await panel.locator(".message.user", { hasText: "Please fix the bug" }).waitFor({ state: "detached", timeout: 30_000 });
    await panel.locator(".message.user", { hasText: "/test" }).waitFor({ timeout: 30_000 });
    await panel.locator(".message.agent", { hasText: "checks" }).first().waitFor({ timeout: 60_000 });
    await panel.locator(".turn-end").first().waitFor({ timeout: 60_000 });
    assert.equal(await panel.locator(".message.user").count(), 1, "the new session shows only its own prompt");
    await vscode.screenshot("after-restart");
  });
});

/** Drags the side bar's edge to the right, so the panel's screenshots show more of it. */
async function widenSideBar(page: import("playwright-core").Page, by: number): Promise<void> {
  const box = await page.locator(".part.sidebar").boundingBox();
  if (box === null) return;
  const x = box.x + box.width;
  const y = box.y + box.height / 2;
  await page.mouse.move(x, y);
  await page.mouse.down();
  await page.mouse.move(x + by, y, { steps: 8 });
  await page.mouse.up();
}

/**
 * Line numbers (1-based) of the visible editor lines that carry the agent's gutter icon: the icon
 * and the line number are matched by their position on screen.
 */
async function markedLines(page: import("playwright-core").Page): Promise<number[]> {
  const hasIcon = (): boolean =>
    [...document.querySelectorAll(".monaco-editor .cgmr")].some((e) => getComputedStyle(e).backgroundImage.includes("agent-gutter"));
  await page.waitForFunction(hasIcon, undefined, { timeout: 20_000 });
  return page.evaluate(() => {
    const lines: number[] = [];
    const numbers = [...document.querySelectorAll(".monaco-editor .margin-view-overlays .line-numbers")];
    for (const icon of document.querySelectorAll(".monaco-editor .cgmr")) {
      if (!getComputedStyle(icon).backgroundImage.includes("agent-gutter")) continue;
      const top = icon.getBoundingClientRect().top;
      const number = numbers.find((n) => Math.abs(n.getBoundingClientRect().top - top) < 3);
      if (number?.textContent) lines.push(Number(number.textContent.trim()));
    }
    return lines;
  });
}
