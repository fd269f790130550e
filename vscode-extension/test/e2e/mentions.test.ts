// @-mentions and images in the agent panel of a real VS Code (code-server, the built .vsix), against
// the scripted test agent (with promptCapabilities.embeddedContext and image): typing `@calc` offers
// the workspace's files (acpls.mentionCandidates), Enter picks calc.py, a chip shows it, and the
// agent receives calc.py's text as an embedded resource after the prompt's text; an image pasted into
// the prompt box is a chip and reaches the agent as an image block; an image over
// acpls.context.maxImageBytes is refused with its size and the limit, and nothing is sent for it;
// "Copy as context" on the agent's answer quotes it into the prompt box; with a JSON file open
// (a syntax error reported by VS Code's JSON support) and two lines selected, `@sel` and `@diag`
// send those lines as a resource and the file's diagnostics as text, and `@symbol:demo` README.md's
// heading (a workspace symbol of VS Code's markdown support) as its lines.
// Screenshots go to test-artifacts/vscode/ (prefixed "mentions").

import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, test } from "node:test";
import type { FrameLocator } from "playwright-core";
import { agentMessages, readEnv, scriptedAgent, until, VsCode, workbenchSettings } from "./harness";

const env = readEnv();
const vscode = new VsCode(env);
const agentLog = join(vscode.root, "agent.jsonl");
let panel: FrameLocator;

// A 1x1 PNG, and 1,500 bytes that claim to be one (over the 1,000-byte limit set below).
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const BIG = Buffer.alloc(1500, 7).toString("base64");

const script = {
  protocol: 1,
  on_initialize: { agentCapabilities: { promptCapabilities: { image: true, embeddedContext: true } } },
  on_prompt: [[{ update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "seen it" } } }]],
};

const settings = workbenchSettings({
  "acpls.agent": scriptedAgent(env, script, agentLog),
  "acpls.python": env.python,
  "acpls.context.maxImageBytes": 1000,
});

function prompts(): Record<string, unknown>[][] {
  return agentMessages(agentLog, "session/prompt").map((params) => params.prompt as Record<string, unknown>[]);
}

describe("@-mentions and images in the VS Code panel", { timeout: 240_000 }, () => {
  before(() =>
    vscode.launch(settings, {
      // A JSON file with a syntax error: VS Code's own JSON support reports it.
      prepared: () => writeFileSync(join(vscode.workspace, "bad.json"), '{\n  "a": 1\n  "b": 2\n}\n'),
    }),
  );

  after(() => vscode.finish());

  test("typing @ offers workspace files; the picked file reaches the agent as a resource", async () => {
    panel = await vscode.openPanel();
    const prompt = panel.locator("textarea.prompt");
    await prompt.click();
    await prompt.pressSequentially("Why does @calc");
    const first = panel.locator(".completions li.mention").first();
    await first.waitFor({ timeout: 30_000 });
    await panel.locator(".completions li.mention[data-kind='file']", { hasText: "test_calc.py" }).waitFor({ timeout: 10_000 });
    assert.equal(await first.locator(".name").textContent(), "calc.py");
    await vscode.screenshot("mentions-completion");
    await prompt.press("Enter");
    await panel.locator(".chips .chip", { hasText: "@calc.py" }).waitFor({ timeout: 10_000 });
    assert.equal(await prompt.inputValue(), "Why does @calc.py ");
    await prompt.pressSequentially("fail?");
    await vscode.screenshot("mentions-chip");
    await prompt.press("Enter");
    await until("the prompt at the agent", () => prompts().length === 1);
    const calc = join(vscode.workspace, "calc.py");
    assert.deepEqual(prompts()[0], [
      { type: "text", text: "Why does @calc.py fail?" },
      { type: "resource", resource: { uri: pathToFileURL(calc).href, text: readFileSync(calc, "utf8")} },
    ]);
    await panel.locator(".turn-end").first().waitFor({ timeout: 60_000 });
    assert.equal(await panel.locator(".chips .chip").count(), 0);
  });

  test("a pasted image is a chip and reaches the agent as an image; one over the limit is refused", async () => {
    const prompt = panel.locator("textarea.prompt");
    const paste = async (name: string, data: string): Promise<void> => {
      await prompt.evaluate(
        (node, [fileName, b64]) => {
          const bytes = Uint8Array.from(atob(b64 ?? ""), (c) => c.charCodeAt(0));
          const transfer = new DataTransfer();
          transfer.items.add(new File([bytes], fileName ?? "", { type: "image/png" }));
          node.dispatchEvent(new ClipboardEvent("paste", { clipboardData: transfer, bubbles: true, cancelable: true }));
        },
        [name, data],
      );
    };
    // Copy as context: the agent's answer quoted into the prompt box.
    const answer = panel.locator(".item.message.agent", { hasText: "seen it" }).first();
    await answer.hover();
    await answer.locator("button.copy-context").click();
    assert.equal(await prompt.inputValue(), "Context (agent message, copied from the conversation):\n```\nseen it\n```\n");
    await vscode.screenshot("mentions-copied-as-context");
    await prompt.click();
    await paste("big.png", BIG);
    await panel.locator(".error-bar", { hasText: "big.png is 1,500 bytes, over the 1,000 bytes of acpls.context.maxImageBytes" }).waitFor({ timeout: 10_000 });
    await paste("dot.png", PNG);
    await panel.locator(".chips .chip", { hasText: "dot.png" }).waitFor({ timeout: 10_000 });
    assert.equal(await panel.locator(".chips .chip").count(), 1);
    await vscode.screenshot("mentions-image-chip");
    await prompt.fill("What is in this picture?");
    await prompt.press("Enter");
    await until("the second prompt at the agent", () => prompts().length === 2);
    assert.deepEqual(prompts()[1], [
      { type: "text", text: "What is in this picture?" },
      { type: "image", data: PNG, mimeType: "image/png" },
    ]);
  });

  test("@selection and @diagnostics come from the editor, @symbol from its language servers", async () => {
    const page = vscode.page;
    await panel.locator(".turn-end").nth(1).waitFor({ timeout: 60_000 });
    await page.keyboard.press("Control+P");
    const quick = page.locator(".quick-input-widget input");
    await quick.waitFor({ state: "visible", timeout: 10_000 });
    await quick.fill("bad.json");
    await page.locator(".quick-input-list .monaco-list-row", { hasText: "bad.json" }).first().waitFor({ timeout: 10_000 });
    await page.keyboard.press("Enter");
    await page.locator(".monaco-editor .view-lines", { hasText: '"b": 2' }).first().waitFor({ timeout: 10_000 });
    // VS Code's JSON support reports the missing comma.
    await page.locator(".statusbar-item", { hasText: /1/ }).locator(".codicon-error").first().waitFor({ timeout: 30_000 });
    // VS Code's markdown support (workspace symbols: headings) starts with a markdown file.
    await page.keyboard.press("Control+P");
    await quick.waitFor({ state: "visible", timeout: 10_000 });
    await quick.fill("README.md");
    await page.locator(".quick-input-list .monaco-list-row", { hasText: "README.md" }).first().waitFor({ timeout: 10_000 });
    await page.keyboard.press("Enter");
    await page.locator(".monaco-editor .view-lines", { hasText: "demo project" }).first().waitFor({ timeout: 10_000 });
    await page.locator(".tab", { hasText: "bad.json" }).first().click();
    await page.locator(".monaco-editor .view-lines", { hasText: '"b": 2' }).first().waitFor({ timeout: 10_000 });
    await page.locator(".monaco-editor .view-lines").first().click();
    await page.keyboard.press("Control+Home");
    await page.keyboard.press("Shift+ArrowDown");
    await page.keyboard.press("Shift+ArrowDown");
    const prompt = panel.locator("textarea.prompt");
    await prompt.click();
    await prompt.fill("");
    for (const [typed, label] of [
      ["@sel", "@selection"],
      ["@diag", "@diagnostics"],
    ] as const) {
      await prompt.pressSequentially(typed);
      await panel.locator(".completions li.mention .name", { hasText: label }).first().waitFor({ timeout: 30_000 });
      assert.equal(await panel.locator(".completions li.mention .name").first().textContent(), label);
      await prompt.press("Enter");
      await panel.locator(".chips .chip", { hasText: label }).waitFor({ timeout: 10_000 });
    }
    // A workspace symbol of VS Code's markdown support: README.md's heading. Its language server
    // may still be starting on the first query, so the word is typed again until it answers.
    const symbol = panel.locator(".completions li.mention[data-kind='symbol']", { hasText: "demo project" }).first();
    for (let attempt = 0; attempt < 20; attempt++) {
      await prompt.pressSequentially("@symbol:demo");
      try {
        await symbol.waitFor({ timeout: 3_000 });
        break;
      } catch {
        for (let i = 0; i < "@symbol:demo".length; i++) await prompt.press("Backspace");
      }
    }
    await symbol.click();
    await panel.locator(".chips .chip", { hasText: "@symbol:" }).waitFor({ timeout: 10_000 });
    await vscode.screenshot("mentions-selection-diagnostics-symbol");
    await prompt.pressSequentially("fix these");
    await prompt.press("Enter");
    await until("the third prompt at the agent", () => prompts().length === 3);
    const bad = join(vscode.workspace, "bad.json");
    const [text, selection, diagnostics, heading] = prompts()[2] ?? [];
    assert.match(String(text?.text), /^@selection @diagnostics @symbol:\S*demo_project fix these$/);
    const readme = pathToFileURL(join(vscode.workspace, "README.md")).href;
    const resource = heading?.resource as { uri: string; text: string } | undefined;
    assert.equal(heading?.type, "resource");
    assert.ok(String(resource?.uri).startsWith(`${readme}#L1-`), resource?.uri);
    assert.ok(String(resource?.text).startsWith("# calc — the acpls demo project\n"), resource?.text);
    assert.deepEqual(selection, { type: "resource", resource: { uri: `${pathToFileURL(bad).href}#L1-2`, text: '{\n  "a": 1\n' } });
    assert.equal(diagnostics?.type, "text");
    assert.match(String(diagnostics?.text), /^Diagnostics the editor reports:\n\nbad\.json:\n- line 3, col \d+/);
  });
});
