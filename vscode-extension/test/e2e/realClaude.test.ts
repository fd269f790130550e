// The real Claude Code (npm @agentclientprotocol/claude-agent-acp, pinned in
// tests/real_agents/agents.mk) in the real VS Code (code-server, the built .vsix), its model played
// by the scripted model server (tests/real_agents/serve_claude.py, script claude/editor_turn): one
// whole turn as a user drives it. The prompt typed in the panel; follow opens the file the agent
// reads; the permission prompt with its options and the diff of exactly the agent's change; allow;
// the command's permission, allowed, and its output in a VS Code terminal; review with the report
// kept and the edit rejected from their CodeLens. The files on disk are checked after each step. A
// missing Claude Code fails the test (make test-vscode installs it first: `agent-claude`).
// The agent's PATH has no node or npm (serve_claude --no-node): Claude Code's
// `#!/usr/bin/env node` runs on the Node VS Code itself runs on, which the extension passes to
// acpls (model/editorNode.ts, server/acpls/services/node_runtime.py).
// Screenshots go to test-artifacts/vscode/ (prefixed "claude").

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe } from "node:test";
import type { FrameLocator } from "playwright-core";
import { readEnv, stepper, VsCode, workbenchSettings } from "./harness";

const env = readEnv();
const vscode = new VsCode({ ...env, artifacts: join(env.artifacts, "claude") });
const step = stepper(vscode);
const TURN_MS = 180_000;
let panel: FrameLocator;
let model: ChildProcess | undefined;
let run: { workspace: string; agent: Record<string, unknown>; shop: string; edited: string; report: string; commandOutput: string };

function disk(name: string): string | undefined {
  const file = join(run.workspace, name);
  return existsSync(file) ? readFileSync(file, "utf8") : undefined;
}

/** Waits (bounded) until `name` on disk holds `text` (undefined: the file does not exist). */
async function onDisk(name: string, text: string | undefined, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (disk(name) !== text) {
    if (Date.now() > deadline) assert.equal(disk(name), text, `${name} on disk`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The model server and the workspace, from the Python helper; its `{"error"}` fails the test. */
async function startModel(): Promise<typeof run> {
  const python = process.env.TEST_PYTHON;
  if (python === undefined || python === "") throw new Error("TEST_PYTHON is not set (run this through make test-vscode)");
  const child = spawn(python, ["-m", "tests.real_agents.serve_claude", "--workspace", vscode.workspace, "--log", join(env.artifacts, "claude-model.jsonl"), "--no-node"], {
    cwd: env.repoRoot,
    stdio: ["pipe", "pipe", "inherit"],
  });
  model = child;
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`serve_claude exited (${String(code)}) before it printed anything`)));
  });
  const parsed = JSON.parse(first) as Record<string, unknown>;
  if (typeof parsed.error === "string") throw new Error(parsed.error);
  return parsed as typeof run;
}

describe("a real Claude Code turn in VS Code", { timeout: 600_000 }, () => {
  before(async () => {
    run = await startModel();
    const settings = workbenchSettings({
      "acpls.agent": run.agent,
      "acpls.env.remove": ["*"],
      "acpls.python": env.python,
      "acpls.permissions.ui": "notification",
      "acpls.trace.server": "verbose",
      "git.enabled": false,
    });
    // The helper made the workspace.
    await vscode.launch(settings, { demoWorkspace: false });
  });

  after(async () => {
    await vscode.finish();
    model?.stdin?.end();
    model?.kill();
  });

  step("Claude Code starts, and its new session is put in Manual mode (it starts in auto, which asks nothing)", async () => {
    const page = vscode.page;
    panel = await vscode.openPanel();
    await panel.locator('button[title="New session"]').click();
    const mode = panel.locator('select[aria-label="Mode"]').first();
    await mode.waitFor({ timeout: 120_000 });
    await mode.selectOption("default");
    await page.waitForTimeout(500);
    await panel.locator('select[aria-label="Mode"] option[value="default"]:checked').first().waitFor({ state: "attached", timeout: 30_000 });
    await vscode.screenshot("claude-manual-mode");
  });

  step("the prompt: follow opens shop.py, the edit is asked about with its diff, the file untouched", async () => {
    const page = vscode.page;
    const prompt = panel.locator("textarea.prompt");
    await prompt.click();
    await prompt.fill("Round the total and write a report in shop.py");
    await prompt.press("Enter");
    await panel.locator(".message.user", { hasText: "Round the total" }).waitFor({ timeout: 10_000 });
    const toast = page.locator(".notification-toast", { hasText: "acpls:" }).first();
    await toast.waitFor({ timeout: TURN_MS });
    for (const label of ["Yes", "Yes, allow all edits during this session", "No", "Diff…"]) {
      await toast.locator(".monaco-button", { hasText: label }).first().waitFor({ timeout: 5_000 });
    }
    assert.equal(disk("shop.py"), run.shop, "nothing written before the user allows it");
    // Follow: the file the agent read is open in an editor.
    await page.locator(".tab", { hasText: "shop.py" }).first().waitFor({ timeout: 20_000 });
    await vscode.screenshot("claude-permission");

    await toast.locator(".monaco-button", { hasText: "Diff…" }).click();
    await page.locator(".quick-input-list .monaco-list-row", { hasText: "Show diff" }).first().click();
    const diff = page.locator(".monaco-diff-editor").first();
    await diff.waitFor({ timeout: 20_000 });
    await diff.locator(".editor.modified .view-line", { hasText: "return round(sum(prices), 2)" }).first().waitFor({ timeout: 10_000 });
    await diff.locator(".editor.original .view-line", { hasText: "return sum(prices)" }).first().waitFor({ timeout: 10_000 });
    await vscode.screenshot("claude-diff");
    assert.equal(disk("shop.py"), run.shop);
  });

  step("allow: the edit lands on disk", async () => {
    const page = vscode.page;
    const again = page.locator(".notification-toast", { hasText: "acpls:" }).first();
    const yes = again.locator(".monaco-button", { hasText: /^Yes$/ }).first();
    await yes.waitFor({ timeout: 20_000 });
    await yes.click();
    await onDisk("shop.py", run.edited, 60_000);
    await vscode.screenshot("claude-edit-allowed");
  });

  step("the command is asked about, allowed, and its output shows in a terminal", async () => {
    const page = vscode.page;
    const toast = page.locator(".notification-toast", { hasText: "acpls:" }).first();
    const yes = toast.locator(".monaco-button", { hasText: /^Yes$/ }).first();
    await yes.waitFor({ timeout: TURN_MS });
    assert.equal(disk("report.txt"), undefined, "the command has not run yet");
    await vscode.screenshot("claude-command-permission");
    await yes.click();
    await panel.locator(".turn-end").first().waitFor({ timeout: TURN_MS });
    await onDisk("report.txt", run.report);
    assert.equal(disk("shop.py"), run.edited);
    const output = run.commandOutput;
    await page.waitForFunction(
      (text) => [...document.querySelectorAll(".terminal-wrapper .xterm-rows")].some((rows) => rows.textContent?.includes(text) === true),
      output,
      { timeout: 60_000 },
    );
    await panel.locator(".message.agent", { hasText: "the total is rounded" }).first().waitFor({ timeout: 10_000 });
    await vscode.screenshot("claude-terminal");
  });

  step("review: the report kept from its CodeLens, the edit rejected from its own", async () => {
    const page = vscode.page;
    const header = page.locator(".pane-header", { hasText: "Agent changes" }).first();
    await header.waitFor({ timeout: 20_000 });
    if ((await header.getAttribute("aria-expanded")) === "false") await header.click();
    const reportHunk = page.locator(".monaco-list-row", { hasText: "total rounded" }).first();
    const shopHunk = page.locator(".monaco-list-row", { hasText: "return round(sum(prices), 2)" }).first();
    await reportHunk.waitFor({ timeout: 30_000 });
    await shopHunk.waitFor({ timeout: 10_000 });
    await vscode.screenshot("claude-review");

    await reportHunk.click();
    await page.locator(".tab.active", { hasText: "report.txt" }).waitFor({ timeout: 10_000 });
    const keep = page.locator(".codelens-decoration a", { hasText: "Keep" }).first();
    await keep.waitFor({ timeout: 20_000 });
    await keep.click();
    await reportHunk.waitFor({ state: "detached", timeout: 20_000 });
    assert.equal(disk("report.txt"), run.report, "kept: the report stays");
    assert.equal(disk("shop.py"), run.edited, "the edit is still there");
    await vscode.screenshot("claude-report-kept");

    await shopHunk.click();
    await page.locator(".tab.active", { hasText: "shop.py" }).waitFor({ timeout: 10_000 });
    const reject = page.locator(".codelens-decoration a", { hasText: "Reject" }).first();
    await reject.waitFor({ timeout: 20_000 });
    await reject.click();
    await shopHunk.waitFor({ state: "detached", timeout: 20_000 });
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll(".editor-group-container.active .monaco-editor .view-line")].some(
          (l) => l.textContent?.replace(/\u00a0/g, " ").trim() === "return sum(prices)",
        ),
      undefined,
      { timeout: 20_000 },
    );
    // The rejection went into the open editor; saved, the file is the original again.
    await page.keyboard.press("Control+S");
    await onDisk("shop.py", run.shop);
    assert.equal(disk("report.txt"), run.report, "the kept report is untouched");
    await vscode.screenshot("claude-edit-rejected");
  });
});
