// What the speed test and the editor benchmarks share: VS Code's settings for the speed agent, and
// reading the active terminal's rows (the DOM renderer: terminal.integrated.gpuAcceleration off).

import { join } from "node:path";
import type { Page } from "playwright-core";
import { type Env, workbenchSettings } from "./harness";

export function speedSettings(env: Env): Record<string, unknown> {
  return workbenchSettings({
    "acpls.agent": { command: "python3", args: [join(env.repoRoot, "tests", "agents", "speed_agent.py")] },
    "acpls.python": env.python,
  });
}

/** The text of each row the active terminal shows, top to bottom. */
export async function terminalRows(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll(".terminal-wrapper.active .xterm-rows > div")].map((row) => (row.textContent ?? "").replace(/\u00a0/g, " ")),
  );
}
