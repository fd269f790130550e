// Questions from the agent in a real VS Code (code-server, the built .vsix): the scripted test agent
// asks a form with every field type (editors/fixtures/acpls_elicitation.json). The notification's
// "Answer…" opens the form in the agent panel, which is then filled with the keyboard only; a misfit
// comes back with the problems and the values kept; the fixed answer reaches the agent unchanged;
// Escape cancels the next question; the turn's usage shows as the context meter. Screenshots go to test-artifacts/vscode/ (prefixed "question").

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe } from "node:test";
import type { FrameLocator } from "playwright-core";
import { readEnv, scriptedAgent, stepper, VsCode, workbenchSettings } from "./harness";

const env = readEnv();
const vscode = new VsCode(env);
const step = stepper(vscode, "question-");
const agentLog = join(vscode.root, "agent.jsonl");
const golden = (JSON.parse(readFileSync(join(env.repoRoot, "editors", "fixtures", "acpls_elicitation.result.json"), "utf8")) as {
  result: { content: Record<string, unknown> };
}).result.content;
let panel: FrameLocator;

/** The answers acpls sent to the agent's elicitation/create requests, from the agent's log. */
function answers(): unknown[] {
  if (!existsSync(agentLog)) return [];
  return readFileSync(agentLog, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((m) => !("method" in m) && typeof m.result === "object" && m.result !== null && "action" in m.result)
    .map((m) => m.result);
}

async function waitAnswers(count: number): Promise<unknown[]> {
  for (let i = 0; i < 300; i++) {
    const got = answers();
    if (got.length >= count) return got;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the agent got ${JSON.stringify(answers())}`);
}

const settings = workbenchSettings({
  "acpls.agent": scriptedAgent(env, join(env.repoRoot, "tests", "agents", "scripts", "v1_elicitation.json"), agentLog),
  "acpls.python": env.python,
  "acpls.trace.server": "verbose",
});

describe("questions from the agent in VS Code", { timeout: 240_000 }, () => {
  before(() => vscode.launch(settings));

  after(() => vscode.finish());

  step("the agent's question arrives as a notification whose Answer… opens the form", async () => {
    const page = vscode.page;
    panel = await vscode.openPanel();
    await vscode.sendPrompt("ask me");
    const toast = page.locator(".notification-toast", { hasText: "the agent asks: Tell me about you" }).first();
    await toast.waitFor({ timeout: 90_000 });
    const form = panel.locator("form.question");
    await form.waitFor({ timeout: 10_000 }); // the panel shows it at once, too
    await vscode.screenshot("question-notification");
    await toast.locator(".monaco-button", { hasText: "Answer…" }).click();
    const name = form.locator("input").first();
    await name.waitFor({ timeout: 10_000 });
    // Answer… puts the caret in the first field.
    await panel.locator("form.question input:focus").first().waitFor({ timeout: 10_000 });
    assert.equal(await name.evaluate((node) => node === document.activeElement), true);
  });

  step("filled with the keyboard only; a misfit comes back with the problems and the values kept", async () => {
    const keys = vscode.page.keyboard;
    const tab = (): Promise<void> => keys.press("Tab");
    await keys.type("Ann");
    await tab();
    await keys.type("ann@example.org");
    await tab();
    await keys.type("5"); // below the minimum of 18
    await tab();
    await keys.type("0.5");
    await tab();
    await keys.press("Space"); // subscribe
    await tab();
    await keys.press("ArrowDown"); // color: — → red
    await keys.press("ArrowDown"); // → green
    await tab();
    await keys.press("ArrowDown"); // size: — → Small
    await keys.press("ArrowDown"); // → Large
    await tab();
    await keys.press("Space"); // tags: a
    await tab();
    await tab();
    await keys.press("Space"); // tags: c
    await tab();
    await keys.press("Space"); // langs: py
    await tab();
    await keys.press("Space"); // langs: lua
    await tab();
    await keys.type("1990-02-28");
    await tab();
    await keys.type("Ann");
    await vscode.screenshot("question-filled");
    await keys.press("Enter");
    const again = panel.locator("form.question", { hasText: "Please fix" });
    await again.waitFor({ timeout: 30_000 });
    await again.locator(".question-message", { hasText: "Age: must be at least 18" }).waitFor({ timeout: 5_000 });
    assert.equal(await again.locator("input").first().inputValue(), "Ann");
    await vscode.screenshot("question-asked-again");
    const age = again.locator(".question-field", { hasText: "Age" }).locator("input");
    assert.equal(await age.inputValue(), "5");
    await age.focus();
    // Ctrl+A selects in the field and goes no further: VS Code's frame forwards the keys that reach
    // this window to the workbench, whose select-all comes back a round trip later and selected the
    // first "3" for the second to replace (the field held "3" in a busy run).
    await age.evaluate((node) => {
      const page = node.ownerDocument.defaultView as Window & { forwardedSelectAlls?: number };
      page.forwardedSelectAlls = 0;
      page.addEventListener("keydown", (event) => {
        if (event.ctrlKey && event.key.toLowerCase() === "a") page.forwardedSelectAlls = (page.forwardedSelectAlls ?? 0) + 1;
      });
    });
    await keys.press("Control+A");
    assert.equal(await age.evaluate((node) => (node.ownerDocument.defaultView as Window & { forwardedSelectAlls?: number }).forwardedSelectAlls), 0);
    assert.deepEqual(await age.evaluate((node) => [(node as HTMLInputElement).selectionStart, (node as HTMLInputElement).selectionEnd]), [0, 1]);
    await keys.type("33");
    await keys.press("Enter");
    const got = await waitAnswers(1);
    assert.deepEqual(got, [{ action: "accept", content: golden }]);
    await panel.locator(".message.agent", { hasText: "Question answer: accept" }).waitFor({ timeout: 30_000 });
    assert.equal(await panel.locator("form.question").count(), 0);
    await vscode.screenshot("question-answered");
  });

  step("the context meter: panel header, status item, and a warning near the limit", async () => {
    const page = vscode.page;
    // The script's turn ends with usage_update 850/1000 tokens.
    const gauge = panel.locator(".usage.near-limit", { hasText: "85%" });
    await gauge.waitFor({ timeout: 30_000 });
    assert.equal(await gauge.getAttribute("aria-label"), "context 850/1,000 (85%) · 0.25 USD");
    await page.locator(".statusbar-item", { hasText: "85%" }).first().waitFor({ timeout: 10_000 });
    await page.locator(".notification-toast", { hasText: "context is nearly full" }).first().waitFor({ timeout: 10_000 });
    await vscode.screenshot("usage-meter");
  });

  step("Escape in the form cancels the question", async () => {
    const prompt = panel.locator("textarea.prompt");
    await prompt.click();
    await prompt.fill("ask me again");
    await prompt.press("Enter");
    const form = panel.locator("form.question");
    await form.waitFor({ timeout: 60_000 });
    await form.locator("input").first().focus();
    await vscode.page.keyboard.press("Escape");
    const got = await waitAnswers(2);
    assert.deepEqual(got[1], { action: "cancel" });
    await panel.locator(".message.agent", { hasText: "Question answer: cancel" }).waitFor({ timeout: 30_000 });
  });
});
