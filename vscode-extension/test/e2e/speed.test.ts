// Long outputs and long chats in a real VS Code (code-server, the built .vsix), against the speed
// agent (tests/agents/speed_agent.py, issue #18): a 35,000-line command output shown in the agent's
// terminal while the user types in the panel's prompt ends with its last line and then the exit
// line, never the other way round; a stored
// chat of 20,000 updates loads and shows its last message, with a note saying how many items are
// above it, a button that brings them in (the note counts down by what came in), and scrolling to
// the top brings in more. No timing here: bench/ measures how fast (make bench-editors). Screenshots go to test-artifacts/vscode/ ("speed").

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe } from "node:test";
import type { FrameLocator } from "playwright-core";
import { readEnv, stepper, VsCode } from "./harness";
import { speedSettings, terminalRows } from "./speed";

const env = readEnv();
const vscode = new VsCode(env);
let panel: FrameLocator;
const LINES = 35_000;

// Each test stands alone: a failed one leaves a screenshot, the next still runs.
const step = stepper(vscode, "speed-", false);

describe("long outputs and long chats in VS Code", { timeout: 480_000 }, () => {
  before(() =>
    vscode.launch(speedSettings(env), {
      prepared: () => writeFileSync(join(vscode.workspace, "big.log"), Array.from({ length: LINES }, (_, i) => `log line ${i + 1} of ${LINES}\n`).join("")),
    }),
  );

  after(() => vscode.finish());

  step("a 35,000-line output shows its last line, then the exit line", async () => {
    const page = vscode.page;
    panel = await vscode.openPanel();
    const prompt = panel.locator("textarea.prompt");
    await vscode.sendPrompt("run: cat big.log");
    // Typed along in the prompt: the keys slow the terminal's writes down (smaller slices, a
    // smaller window of output not yet drawn), which must keep every line and the order too.
    const exited = (): Promise<boolean> =>
      page.evaluate(() => (document.querySelector(".terminal-wrapper.active .xterm-rows")?.textContent ?? "").includes("[process exited"));
    let typed = 0;
    for (const start = Date.now(); !(await exited()); typed++) {
      assert.ok(Date.now() - start < 240_000, "the output ends within 240 s");
      await prompt.press("KeyX");
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(typed > 0, "keys were typed while the output streamed");
    assert.match(await prompt.inputValue(), /x+$/, "the keys reached the prompt");
    await prompt.fill("");
    const rows = (await terminalRows(page)).filter((row) => row.trim() !== "");
    const exit = rows.findIndex((row) => row.includes("[process exited"));
    const last = rows.findIndex((row) => row.includes(`log line ${LINES} of ${LINES}`));
    await vscode.screenshot("speed-terminal-exit-last");
    assert.ok(last >= 0, `the last line is on screen:\n${rows.join("\n")}`);
    assert.equal(exit, rows.length - 1, `the exit line is the last line:\n${rows.join("\n")}`);
    assert.equal(last, exit - 1, `the last output line is right above the exit line:\n${rows.join("\n")}`);
    assert.match(rows[exit] ?? "", /\[process exited with code 0 · 35000 lines, this pane keeps the last 1000 \(terminal\.integrated\.scrollback\)\]/);
    await panel.locator(".tool.status-completed", { hasText: "cat big.log" }).waitFor({ timeout: 30_000 });
  });

  step("a chat of 20,000 updates loads: its last message shows, and the way to the older ones", async () => {
    const page = vscode.page;
    panel = await vscode.openPanel();
    await vscode.command("acpls: Agent sessions");
    const picker = page.locator(".quick-input-widget", { hasText: "agent sessions" });
    const row = picker.locator(".quick-input-list .monaco-list-row", { hasText: "Long chat (20000 updates) #1" });
    // The list draws only the rows in its view (the speed agent lists 18 chats): the filter brings this one in.
    await picker.locator(".quick-input-box input").waitFor({ timeout: 30_000 });
    await page.keyboard.type("Long chat (20000 updates) #1");
    await row.waitFor({ timeout: 30_000 });
    await row.click();
    const actions = page.locator(".quick-input-widget", { hasText: "Long chat (20000 updates) #1" });
    await actions.locator(".quick-input-list .monaco-list-row", { hasText: "Load it with its history" }).click();
    await panel.locator(".message.agent", { hasText: "LAST MESSAGE of chat-20000" }).waitFor({ timeout: 120_000 });
    // The end is drawn first; the older items of the page follow in the next frames.
    await panel.locator('.log[aria-busy="false"]').waitFor({ timeout: 10_000 });
    const note = panel.locator(".earlier");
    await note.waitFor({ state: "visible", timeout: 10_000 });
    const above = async (): Promise<number> => Number(/^(\d+) earlier items? (?:is|are) above/.exec((await note.locator(".earlier-text").textContent()) ?? "")?.[1] ?? NaN);
    const before = await above();
    const shown = await panel.locator(".log > .item").count();
    // Every item of the conversation is either shown or counted above: nothing is dropped.
    assert.ok(before > 0 && shown > 0, `the note counts the items above (${before}), some are shown (${shown})`);
    await vscode.screenshot("speed-chat-loaded");
    // The button (clicked where it is: scrolling it into view would page in by itself).
    await note.locator("button", { hasText: "Show earlier" }).dispatchEvent("click");
    await panel.locator(".log > .item").nth(shown).waitFor({ timeout: 10_000 });
    const after = await above();
    assert.ok(after < before, `the note counts down (${before} → ${after})`);
    assert.equal((await panel.locator(".log > .item").count()) - shown, before - after, "the page brought in is the count the note lost");
    await vscode.screenshot("speed-chat-earlier");
    // Scrolling up to the top (the mouse wheel) brings in the page before it.
    await panel.locator(".log").hover();
    await page.mouse.wheel(0, -1_000_000);
    await panel.locator(".log > .item").nth(shown + before - after).waitFor({ timeout: 10_000 });
    assert.ok((await above()) < after, "scrolling up pages in older items");
    const first = await panel.locator(".log > .item").first().getAttribute("data-id");
    assert.ok(first !== null, "the first shown item is an item");
  });
});
