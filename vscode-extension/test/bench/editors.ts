// Speed the user feels in a real VS Code (issue #18), measured against VS Code's own integrated
// terminal fed the same bytes in the same run: code-server with the built .vsix, Debian's chromium
// driven by playwright-core, the speed agent (tests/agents/speed_agent.py).
//
//   V1 last line of a 35,000-line log: from Enter in the agent panel (`run: cat big.log; echo
//      DONE-$((…))`) to the marker line on screen in the agent's terminal, against the same line
//      typed into an integrated terminal (bash runs `cat`). PASS at ≤ 1.5× the baseline's median.
//   V2 the same for a 32 MB stream (lines of 100 characters).
//   V3 key latency while each 32 MB stream runs: a key every 50 ms into the agent panel's prompt;
//      latency = the first animation frame after the key's handler minus the key event's time
//      stamp (what the user waits for the key to show). PASS at p99 ≤ 50 ms; the baseline's p99 is
//      printed beside.
//   V4 chat load of 5,000 / 10,000 / 20,000 updates: from the click on "Load it with its history"
//      to the last message in the panel. PASS when 20,000 take ≤ 1 s and each doubling ≤ 2.5×
//      (linear).
//   V5 keys typed into the prompt during the V4 loads: one every 50 ms on a fixed clock, from the
//      click until the panel has drawn every item it keeps; latency = the end of the frame that
//      shows the key (after its style, layout and paint) minus the key event's time stamp; the
//      same typing into the idle panel before each run's loads. PASS when (a) the keys' input delay
//      (time stamp → keydown handler, what Neovim's E5 times) has p99 ≤ 16 ms and (b) their p99 to
//      the end of their frame is at most one frame (16.7 ms) above the idle panel's p99.
//
// Prints one line per target ending in PASS or FALL SHORT, writes bench/results/editors-vscode.json
// and the VS Code block of bench/RESULTS.md. RUNS (default 3) runs per figure; medians.

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import type { Frame, Page } from "playwright-core";
import { readEnv, VsCode } from "../e2e/harness";
import { speedSettings } from "../e2e/speed";

const env = readEnv();
const RUNS = Number(process.env.RUNS ?? "3");
const LOG_LINES = 35_000;
const STREAM_BYTES = 32 * 1024 * 1024;
const CHATS = [5000, 10000, 20000];
/** V5's pace: 20 keys a second, above a fast typist's 8-10. Keys every 20 ms on the fixed clock
 * arrived in nearly every frame, and the panel, which leaves the frame that shows a key alone, drew
 * its older items only when a hold ran out (100 ms): a typist no hand can match set the load's pace. */
const LOAD_KEYS_EVERY_MS = 50;
/** Which figures to measure (FIGURES=V3,V5 for a quick look): V1, V2+V3 (one stream run gives both),
 * V4+V5 (one load run gives both). Default all. */
const FIGURES = new Set((process.env.FIGURES ?? "V1,V2,V3,V4,V5").split(",").map((f) => f.trim().toUpperCase()));
/** With PROFILE=dir, a CPU profile of the browser's main thread during each agent-terminal stream
 * run and each chat load is written there (open it in chromium's DevTools). */
const PROFILE = process.env.PROFILE;

const vscode = new VsCode(env);
let marker = 0;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length === 0 ? NaN : sorted.length % 2 === 1 ? (sorted[mid] ?? NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function panelFrame(page: Page): Promise<Frame> {
  const outer = await (await page.locator("iframe.webview.ready").elementHandle({ timeout: 60_000 }))?.contentFrame();
  const inner = await (await outer?.locator("iframe#active-frame").elementHandle({ timeout: 60_000 }))?.contentFrame();
  if (inner === null || inner === undefined) throw new Error("the agent panel's frame is not there");
  return inner;
}

/** Records, in the panel, each key's latency: the end of the frame that shows it − the key event's
 * time stamp (the browser's, taken when the key reached it, so time queued behind a busy main thread
 * counts). The frame ends after its style, layout and paint: a message posted from the frame's
 * animation callback runs once that rendering work is done. `__keysRaf` keeps the older figure,
 * to the frame's animation callback only (before the frame's rendering), for comparison.
 * `__keysInput` is the key's input delay: from its time stamp to the start of the first keydown
 * listener (on window, in the capture phase, so before the page's own), what Neovim's E5 times. */
async function installKeyProbe(frame: Frame): Promise<void> {
  await frame.evaluate(() => {
    const w = window as unknown as { __keys?: number[]; __keysRaf?: number[]; __keysInput?: number[] };
    if (w.__keys !== undefined) return;
    w.__keys = [];
    w.__keysRaf = [];
    w.__keysInput = [];
    window.addEventListener("keydown", (event) => w.__keysInput?.push(performance.now() - event.timeStamp), true);
    // When the host's posts arrive (wall clock), to tell delivery from drawing; `count`: the
    // session's updates each post folds (model/panelFeed.ts).
    const u = window as unknown as { __updates?: { first: number; last: number; count: number } };
    window.addEventListener("message", (event: MessageEvent<{ type?: string; count?: number }>) => {
      if (event.data?.type !== "window") return;
      const now = Date.now();
      u.__updates ??= { first: now, last: now, count: 0 };
      u.__updates.last = now;
      u.__updates.count += event.data.count ?? 0;
    });
    document.addEventListener(
      "keydown",
      (event) => {
        const stamp = event.timeStamp;
        requestAnimationFrame(() => {
          w.__keysRaf?.push(performance.now() - stamp);
          const channel = new MessageChannel();
          channel.port1.onmessage = () => w.__keys?.push(performance.now() - stamp);
          channel.port2.postMessage(undefined);
        });
      },
      true,
    );
  });
}

/** Starts a CPU profile of the page's renderer when PROFILE is set; the returned function stops it
 * and writes `${name}.cpuprofile`. */
async function profile(page: Page, name: string): Promise<() => Promise<void>> {
  const stopTrace = await trace(page, name);
  if (PROFILE === undefined) return stopTrace;
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 500 });
  await cdp.send("Profiler.start");
  return async () => {
    const { profile: result } = await cdp.send("Profiler.stop");
    mkdirSync(PROFILE, { recursive: true });
    writeFileSync(join(PROFILE, `${name}.cpuprofile`), JSON.stringify(result));
    await cdp.detach();
    await stopTrace();
  };
}

/** With TRACE=dir, a chromium trace of the same stretch (`${name}.trace.json`, timeline categories):
 * where a CPU profile says only "(program)", it tells style, layout, paint and message handling
 * apart, task by task (bench/trace.py sums it up). */
async function trace(page: Page, name: string): Promise<() => Promise<void>> {
  const dir = process.env.TRACE;
  if (dir === undefined) return async () => undefined;
  const cdp = await page.context().newCDPSession(page);
  const events: unknown[] = [];
  cdp.on("Tracing.dataCollected", (data: { value: unknown[] }) => events.push(...data.value));
  const categories = ["devtools.timeline", "disabled-by-default-devtools.timeline", "v8.execute", "toplevel", "blink.user_timing"];
  await cdp.send("Tracing.start", { traceConfig: { includedCategories: categories }, transferMode: "ReportEvents" });
  return async () => {
    const complete = new Promise<void>((resolve) => cdp.once("Tracing.tracingComplete", () => resolve()));
    await cdp.send("Tracing.end");
    await complete;
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${name}.trace.json`), JSON.stringify({ traceEvents: events }));
    await cdp.detach();
  };
}

async function takeKeys(frame: Frame): Promise<number[]> {
  return (await takeKeyFigures(frame)).keys;
}

/** The three figures of the keys recorded since the last take (see installKeyProbe). */
async function takeKeyFigures(frame: Frame): Promise<KeyFigures> {
  return frame.evaluate(() => {
    const w = window as unknown as { __keys?: number[]; __keysRaf?: number[]; __keysInput?: number[] };
    const taken = { keys: w.__keys ?? [], raf: w.__keysRaf ?? [], input: w.__keysInput ?? [] };
    w.__keys = [];
    w.__keysRaf = [];
    w.__keysInput = [];
    return taken;
  });
}

/** Per key, in ms: to the end of the frame that shows it, to that frame's animation callback, and
 * its input delay (to the start of its keydown handler). */
type KeyFigures = { keys: number[]; raf: number[]; input: number[] };

/** Whether the active terminal shows `text`. */
async function terminalShows(page: Page, text: string): Promise<boolean> {
  return page.evaluate((t) => (document.querySelector(".terminal-wrapper.active .xterm-rows")?.textContent ?? "").includes(t), text);
}

/** Presses a key every `everyMs` until the returned function is called (and awaited). On its own
 * loop: tied to the polling, keys were pressed only right after an evaluate got through, that is
 * when the main thread had just become free, and a busy page got almost none (1 key in a 12 s run). */
function typeAlong(page: Page, everyMs: number): () => Promise<void> {
  let done = false;
  const typist = (async () => {
    while (!done) {
      await page.keyboard.press("KeyX");
      await sleep(everyMs);
    }
  })();
  return async () => {
    done = true;
    await typist;
  };
}

/** Presses a key every `everyMs` on a fixed clock until the returned function is called (and
 * awaited), without waiting for the page to take each key: a typist does not wait for the screen.
 * `typeAlong` waits for each key's acknowledgement, so while the page's main thread is busy it
 * presses none, and a 100 ms task costs one slow key where a typist at this pace meets five; here
 * the keys sample the whole load evenly. The keys go through the DevTools protocol (what
 * `keyboard.press` sends), so the page sees real key events with the browser's time stamps. */
async function typeOnClock(page: Page, everyMs: number): Promise<() => Promise<void>> {
  const cdp = await page.context().newCDPSession(page);
  const key = { key: "x", code: "KeyX", windowsVirtualKeyCode: 88, nativeVirtualKeyCode: 88 };
  const sent: Promise<unknown>[] = [];
  const press = (): void => {
    sent.push(cdp.send("Input.dispatchKeyEvent", { type: "keyDown", text: "x", unmodifiedText: "x", ...key }));
    sent.push(cdp.send("Input.dispatchKeyEvent", { type: "keyUp", ...key }));
  };
  press();
  const timer = setInterval(press, everyMs);
  return async () => {
    clearInterval(timer);
    await Promise.all(sent);
    await cdp.detach();
  };
}

/** Waits for the marker in the active terminal, pressing a key in the panel's prompt every 50 ms
 * when `typing`; returns the time it took from `start`. */
async function untilShown(page: Page, text: string, start: number, typing: boolean, timeoutMs = 600_000): Promise<number> {
  const stopTyping = typing ? typeAlong(page, 50) : async () => undefined;
  try {
    for (;;) {
      if (await terminalShows(page, text)) return performance.now() - start;
      if (performance.now() - start > timeoutMs) throw new Error(`"${text}" not shown within ${timeoutMs} ms`);
      await sleep(50);
    }
  } finally {
    await stopTyping();
  }
}

async function clearPrompt(frame: Frame): Promise<void> {
  await frame.locator("textarea.prompt").fill("");
}

async function killTerminals(): Promise<void> {
  await vscode.command("Terminal: Kill All Terminals");
  await sleep(500);
}

type TerminalRun = { ms: number; keys: number[] };

async function agentRun(frame: Frame, file: string, typing: boolean): Promise<TerminalRun> {
  const page = vscode.page;
  marker += 1;
  const prompt = frame.locator("textarea.prompt");
  await prompt.click();
  await prompt.fill(`run: cat ${file}; echo DONE-$((${marker}*1000+7))`);
  const turns = await frame.locator(".turn-end").count();
  await takeKeys(frame);
  const stop = await profile(page, `agent-${file.replace(/\W+/g, "_")}-${marker}`);
  const start = performance.now();
  await prompt.press("Enter");
  const ms = await untilShown(page, `DONE-${marker * 1000 + 7}`, start, typing);
  await stop();
  const keys = (await takeKeys(frame)).slice(1); // the first is the Enter that started it
  await frame.locator(".turn-end").nth(turns).waitFor({ timeout: 120_000 });
  await clearPrompt(frame);
  return { ms, keys };
}

async function baselineRun(frame: Frame, file: string, typing: boolean): Promise<TerminalRun> {
  const page = vscode.page;
  marker += 1;
  await vscode.command("Terminal: Create New Terminal");
  await page.locator(".terminal-wrapper.active .xterm-rows").waitFor({ timeout: 30_000 });
  await page.waitForFunction(() => (document.querySelector(".terminal-wrapper.active .xterm-rows")?.textContent ?? "").trim() !== "", undefined, {
    timeout: 30_000,
  });
  await page.keyboard.type(`cat ${file}; echo DONE-$((${marker}*1000+7))`);
  const start = performance.now();
  await page.keyboard.press("Enter");
  if (typing) await frame.locator("textarea.prompt").click();
  await takeKeys(frame);
  const ms = await untilShown(page, `DONE-${marker * 1000 + 7}`, start, typing);
  const keys = await takeKeys(frame);
  await clearPrompt(frame);
  return { ms, keys };
}

type Line = { id: string; text: string; pass: boolean; figures: Record<string, unknown> };

type TerminalFigures = { line: Line; agentKeys: number[]; baseKeys: number[] };

async function terminalFigures(frame: Frame, id: string, what: string, file: string, typing: boolean): Promise<TerminalFigures> {
  const agent: number[] = [];
  const base: number[] = [];
  const agentKeys: number[] = [];
  const baseKeys: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    // Alternating, the baseline first: both see the same machine.
    const b = await baselineRun(frame, file, typing);
    base.push(b.ms);
    baseKeys.push(...b.keys);
    await killTerminals();
    const a = await agentRun(frame, file, typing);
    agent.push(a.ms);
    agentKeys.push(...a.keys);
    await killTerminals();
  }
  const ratio = median(agent) / median(base);
  const pass = ratio <= 1.5;
  const text = `${id} last line of ${what}: agent terminal ${(median(agent) / 1000).toFixed(2)} s, integrated terminal (cat) ${(median(base) / 1000).toFixed(2)} s → ${ratio.toFixed(2)}× (target ≤ 1.5×)`;
  return { line: { id, text, pass, figures: { agentMs: agent, baselineMs: base, ratio } }, agentKeys, baseKeys };
}

type LoadRun = KeyFigures & { ms: number };

async function loadChat(frame: Frame, size: number, run: number): Promise<LoadRun> {
  const page = vscode.page;
  const title = `Long chat (${size} updates) #${run}`;
  await vscode.command("acpls: Agent sessions");
  const picker = page.locator(".quick-input-widget", { hasText: "agent sessions" });
  const row = picker.locator(".quick-input-list .monaco-list-row", { hasText: title });
  // The list draws only the rows in its view (18 chats): the filter brings this one into it.
  await picker.locator(".quick-input-box input").waitFor({ timeout: 60_000 });
  await page.keyboard.type(title);
  await row.waitFor({ timeout: 60_000 });
  await row.click();
  const action = page.locator(".quick-input-widget", { hasText: title }).locator(".quick-input-list .monaco-list-row", { hasText: "Load it with its history" });
  await action.waitFor({ timeout: 30_000 });
  const wanted = `LAST MESSAGE of chat-${size}-${run}`;
  await takeKeys(frame);
  await frame.evaluate(() => {
    (window as unknown as { __updates?: unknown }).__updates = undefined;
  });
  await watchLoad(frame, wanted);
  const stop = await profile(page, `chat-${size}-${run}`);
  const startWall = Date.now();
  await action.click();
  await frame.evaluate(() => document.querySelector<HTMLTextAreaElement>("textarea.prompt")?.focus());
  const stopTyping = await typeOnClock(page, LOAD_KEYS_EVERY_MS);
  let ms: number | undefined;
  try {
    // Until the last message shows (V4), then on until the page has drawn every item it keeps
    // (the log is aria-busy while older items wait for a frame): keys typed then wait on it too.
    const ended = await loadEnd(frame, 300_000);
    if (ended !== undefined) ms = ended.shownAt - startWall;
  } finally {
    await stopTyping();
  }
  if (ms === undefined) throw new Error(`${wanted} not shown`);
  await stop();
  // Keys still waiting for their frame are in by the next one.
  await frame.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 50))));
  const figures = await takeKeyFigures(frame);
  const keys = figures.keys;
  const updates = await frame.evaluate(() => {
    const u = window as unknown as { __updates?: { first: number; last: number; count: number } };
    const got = u.__updates;
    u.__updates = undefined;
    return got;
  });
  if (updates !== undefined) {
    console.log(
      `  chat ${size} #${run} (clicked at ${startWall} ms of the epoch): shown after ${ms.toFixed(0)} ms; posts folding ${updates.count} updates reached the panel from ${updates.first - startWall} to ${updates.last - startWall} ms; ${keys.length} keys, the slowest ${Math.max(...keys).toFixed(0)} ms`,
    );
  }
  await clearPrompt(frame);
  return { ms, ...figures };
}

/** Watches, in the panel, for the end of the load whose last message holds `wanted`; `loadEnd`
 * waits for it. Until this, the bench asked the page every 20 ms through DevTools: each round trip
 * ran on the panel's main thread, shared with the workbench and the keys, and the bench's own node
 * took 60-200 ms of CPU per load on the same two cores, a load no user's editor carries; and the
 * time was known only to the next poll. Now the page notes the wall clock (Date.now(), this
 * process's clock too) when a change puts the last message in the log, and when the log is then no
 * longer aria-busy (every item of the page drawn). Installed before the click, so nothing is missed. */
async function watchLoad(frame: Frame, wanted: string): Promise<void> {
  await frame.evaluate((w) => {
    const win = window as unknown as { __load?: Promise<LoadEnd> };
    win.__load = new Promise((resolve) => {
      const log = document.querySelector(".log");
      let shownAt: number | undefined;
      const observer = new MutationObserver(() => {
        const messages = log?.querySelectorAll(".message.agent");
        if (shownAt === undefined && (messages?.[messages.length - 1]?.textContent ?? "").includes(w)) shownAt = Date.now();
        if (shownAt === undefined || log?.getAttribute("aria-busy") === "true") return;
        observer.disconnect();
        resolve({ shownAt, doneAt: Date.now() });
      });
      if (log !== null) observer.observe(log, { childList: true, subtree: true, characterData: true, attributes: true, attributeFilter: ["aria-busy"] });
    });
  }, wanted);
}

/** When the watched load (see watchLoad) ended, in ms of the epoch; undefined past `timeoutMs`. */
type LoadEnd = { shownAt: number; doneAt: number };

async function loadEnd(frame: Frame, timeoutMs: number): Promise<LoadEnd | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)));
  try {
    return await Promise.race([frame.evaluate(() => (window as unknown as { __load?: Promise<LoadEnd> }).__load), late]);
  } finally {
    clearTimeout(timer);
  }
}

function revision(): string {
  try {
    const rev = execFileSync("git", ["-C", env.repoRoot, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["-C", env.repoRoot, "status", "--porcelain", "--untracked-files=no"], { encoding: "utf8" }).trim() !== "";
    return dirty ? `${rev}+changes` : rev;
  } catch {
    return "unknown";
  }
}

function loadAverage(): string {
  try {
    return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  } catch {
    return "unknown";
  }
}

const loadAtStart = loadAverage();

function writeResults(lines: Line[]): void {
  const dir = join(env.repoRoot, "bench", "results");
  mkdirSync(dir, { recursive: true });
  const when = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  const rev = revision();
  const all = lines.length === 5;
  // A run of some figures (FIGURES) keeps its own file and leaves RESULTS.md alone.
  const name = all ? "editors-vscode.json" : "editors-vscode-some.json";
  writeFileSync(join(dir, name), JSON.stringify({ when, revision: rev, runs: RUNS, loadAverage: [loadAtStart, loadAverage()], lines }, null, 2));
  console.log(`load average ${loadAtStart} at the start, ${loadAverage()} at the end (${cpus().length} cores); written: bench/results/${name}`);
  if (!all) return;
  const file = join(env.repoRoot, "bench", "RESULTS.md");
  const begin = "<!-- editors-vscode:begin -->";
  const end = "<!-- editors-vscode:end -->";
  const block = [
    begin,
    `VS Code (code-server 4.100.3, headless chromium), \`make bench-editors\`, ${when}, revision ${rev}, ${RUNS} runs each (medians); load average ${loadAtStart} at the start, ${loadAverage()} at the end (${cpus().length} cores):`,
    "",
    ...lines.map((l) => `- ${l.text}: **${l.pass ? "PASS" : "FALL SHORT"}**`),
    end,
  ].join("\n");
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  const at = text.indexOf(begin);
  const to = text.indexOf(end);
  const next = at >= 0 && to > at ? text.slice(0, at) + block + text.slice(to + end.length) : `${text.trimEnd()}\n\n## Editors: VS Code\n\n${block}\n`;
  writeFileSync(file, next);
}

/** Compiles the bytecode of the server's libraries in the installed .vsix (bundled/libs), as the
 * user's first start of acpls leaves it: Python writes it next to the sources at the first import.
 * This machine's environment sets PYTHONDONTWRITEBYTECODE=1, and the package carries none (bundled
 * with --no-compile), so without this each start of acpls here compiled acpls, pygls, lsprotocol and
 * cattrs from source (~0.15 s of CPU for the server and its core), a cost no user pays twice. With
 * the same Python that runs the server: bytecode is per interpreter version. */
function compileBundledLibs(): void {
  const extensions = join(vscode.root, "extensions");
  for (const dir of readdirSync(extensions)) {
    const libs = join(extensions, dir, "bundled", "libs");
    if (existsSync(libs)) execFileSync(env.python, ["-m", "compileall", "-q", libs], { stdio: ["ignore", "ignore", "inherit"] });
  }
}

async function main(): Promise<void> {
  vscode.prepare(speedSettings(env));
  writeFileSync(join(vscode.workspace, "big.log"), Array.from({ length: LOG_LINES }, (_, i) => `log line ${i + 1} of ${LOG_LINES}\n`).join(""));
  const line = (i: number): string => `stream line ${String(i).padStart(9, "0")} ${"abcdefghijklmnopqrstuvwxyz".repeat(3)} ${"0123456789".repeat(1)}`.padEnd(99, ".") + "\n";
  const chunks: string[] = [];
  for (let i = 0, size = 0; size < STREAM_BYTES; i++) {
    const l = line(i);
    chunks.push(l);
    size += l.length;
  }
  writeFileSync(join(vscode.workspace, "stream.txt"), chunks.join(""));
  const installed = await vscode.installExtension();
  if (!/acpls/.test(installed)) throw new Error(installed);
  compileBundledLibs();
  await vscode.start({});
  const lines: Line[] = [];
  try {
    const page = vscode.page;
    await page.locator(".statusbar-item", { hasText: "Follow" }).first().waitFor({ timeout: 120_000 });
    await vscode.command("acpls: Open the agent panel");
    const frame = await panelFrame(page);
    await frame.locator("textarea.prompt").waitFor({ timeout: 60_000 });
    await installKeyProbe(frame);
    // A first turn warms up the session, the terminal pane and the shell.
    await agentRun(frame, "/dev/null", false);
    await baselineRun(frame, "/dev/null", false);
    await killTerminals();

    if (FIGURES.has("V1")) {
      const log = await terminalFigures(frame, "V1", `a ${LOG_LINES.toLocaleString("en")}-line log`, "big.log", false);
      lines.push(log.line);
      console.log(`${log.line.text}: ${log.line.pass ? "PASS" : "FALL SHORT"}`);
    }
    if (FIGURES.has("V2") || FIGURES.has("V3")) {
      const stream = await terminalFigures(frame, "V2", "a 32 MB stream", "stream.txt", true);
      lines.push(stream.line);
      console.log(`${stream.line.text}: ${stream.line.pass ? "PASS" : "FALL SHORT"}`);
      const p99 = percentile(stream.agentKeys, 99);
      const baseP99 = percentile(stream.baseKeys, 99);
      const keys: Line = {
        id: "V3",
        text: `V3 key latency while a 32 MB stream runs: p99 ${p99.toFixed(0)} ms, p50 ${percentile(stream.agentKeys, 50).toFixed(0)} ms over ${stream.agentKeys.length} keys; integrated terminal with cat: p99 ${baseP99.toFixed(0)} ms, p50 ${percentile(stream.baseKeys, 50).toFixed(0)} ms over ${stream.baseKeys.length} → ${(p99 / baseP99).toFixed(2)}× its p99 (target p99 ≤ 50 ms)`,
        pass: p99 <= 50,
        figures: { agentKeysMs: stream.agentKeys, baselineKeysMs: stream.baseKeys },
      };
      lines.push(keys);
      console.log(`${keys.text}: ${keys.pass ? "PASS" : "FALL SHORT"}`);
    }
    if (FIGURES.has("V4") || FIGURES.has("V5")) await chatFigures(frame, lines);
    await vscode.screenshot("bench-end");
  } catch (error) {
    await vscode.screenshot("bench-FAILED").catch(() => undefined);
    throw error;
  } finally {
    await vscode.stop();
  }
  writeResults(lines);
  process.exitCode = lines.every((l) => l.pass) ? 0 : 1;
}

/** The same keys typed for `ms` into the prompt of the idle panel (nothing loading): what a key
 * costs with nothing in its way, the waits for the display's next frame included. */
async function idleKeys(frame: Frame, ms: number): Promise<KeyFigures> {
  await frame.evaluate(() => document.querySelector<HTMLTextAreaElement>("textarea.prompt")?.focus());
  await takeKeys(frame);
  const stopTyping = await typeOnClock(vscode.page, LOAD_KEYS_EVERY_MS);
  await sleep(ms);
  await stopTyping();
  await frame.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 50))));
  const keys = await takeKeyFigures(frame);
  await clearPrompt(frame);
  return keys;
}

/** Keys for a p99: the idle stretches together, and the loads together, type at least this many
 * (at RUNS=1 too: a p99 of 40 keys is the worst key). */
const P99_KEYS = 100;
/** Idle keys per round: three rounds' idle stretches give P99_KEYS (1.7 s each). */
const IDLE_KEYS_PER_ROUND = Math.ceil(P99_KEYS / 3);
/** Rounds of loads at most: the speed agent lists this many stored chats of each size. */
const MAX_LOAD_ROUNDS = 6;
/** One frame at 60 Hz: how much later than the idle panel's a key may show while chats load. */
const FRAME_MS = 1000 / 60;

function gather(into: KeyFigures, more: KeyFigures): void {
  into.keys.push(...more.keys);
  into.raf.push(...more.raf);
  into.input.push(...more.input);
}

/** Rounds of the three loads (each a different stored chat), each after an idle stretch while the
 * idle keys are short of P99_KEYS: at least RUNS rounds (V4's medians), and more until the loads
 * have typed P99_KEYS keys (the loads of one round take ~1.5 s: 30-40 keys), MAX_LOAD_ROUNDS at most;
 * then the idle keys are topped up to P99_KEYS if fewer rounds were needed. */
async function chatFigures(frame: Frame, lines: Line[]): Promise<void> {
  const loads = new Map<number, number[]>();
  const loading: KeyFigures = { keys: [], raf: [], input: [] };
  const idle: KeyFigures = { keys: [], raf: [], input: [] };
  for (let run = 1; run <= MAX_LOAD_ROUNDS && (run <= RUNS || loading.keys.length < P99_KEYS); run++) {
    if (idle.keys.length < P99_KEYS) gather(idle, await idleKeys(frame, IDLE_KEYS_PER_ROUND * LOAD_KEYS_EVERY_MS));
    for (const size of CHATS) {
      const r = await loadChat(frame, size, run);
      loads.set(size, [...(loads.get(size) ?? []), r.ms]);
      gather(loading, r);
    }
  }
  // Slow loads type their 100 keys in fewer rounds: the idle panel's keys are topped up to as many.
  if (idle.keys.length < P99_KEYS) gather(idle, await idleKeys(frame, (P99_KEYS - idle.keys.length + 1) * LOAD_KEYS_EVERY_MS));
  const m = CHATS.map((size) => median(loads.get(size) ?? []));
  const [m5, m10, m20] = m as [number, number, number];
  const linear = m10 / m5 <= 2.5 && m20 / m10 <= 2.5;
  const chat: Line = {
    id: "V4",
    text: `V4 chat load 5k / 10k / 20k updates: ${m.map((v) => `${(v / 1000).toFixed(2)}`).join(" / ")} s (medians of ${loads.get(CHATS[0] ?? 0)?.length ?? 0} loads each; ×${(m10 / m5).toFixed(2)}, ×${(m20 / m10).toFixed(2)} per doubling) (target 20k ≤ 1 s, each doubling ≤ 2.5×)`,
    pass: m20 <= 1000 && linear,
    figures: { loadsMs: Object.fromEntries(loads) },
  };
  lines.push(chat);
  console.log(`${chat.text}: ${chat.pass ? "PASS" : "FALL SHORT"}`);
  const typing = keysWhileLoading(loading, idle);
  lines.push(typing);
  console.log(`${typing.text}: ${typing.pass ? "PASS" : "FALL SHORT"}`);
}

/** "p99" of `values`, said as the worst when there are too few for one. */
function p99Text(values: number[]): string {
  const few = values.length < P99_KEYS ? ` (the worst: under ${P99_KEYS} keys)` : "";
  return `p99 ${percentile(values, 99).toFixed(0)} ms${few}, p50 ${percentile(values, 50).toFixed(0)} ms over ${values.length} keys`;
}

/** V5's judgment (bench/README.md): (a) a key's input delay while chats load, p99 ≤ 16 ms (what E5
 * times in Neovim); (b) the load does not make keys show later than the idle panel does: to the end
 * of the frame that shows it, p99 at most one frame above the idle panel's p99 of the same run. The
 * old target (that p99 ≤ 16 ms) is printed beside. */
function keysWhileLoading(loading: KeyFigures, idle: KeyFigures): Line {
  const inputP99 = percentile(loading.input, 99);
  const shownP99 = percentile(loading.keys, 99);
  const idleP99 = percentile(idle.keys, 99);
  const inputOk = inputP99 <= 16;
  const shownOk = shownP99 <= idleP99 + FRAME_MS;
  const text =
    `V5 keys typed in the prompt while chats load: (a) input delay (time stamp → keydown handler) ${p99Text(loading.input)} ` +
    `(target p99 ≤ 16 ms: ${inputOk ? "met" : "not met"}; the idle panel: ${p99Text(idle.input)}); ` +
    `(b) to the end of the frame that shows each ${p99Text(loading.keys)} against the idle panel's ${p99Text(idle.keys)} ` +
    `→ ${(shownP99 - idleP99).toFixed(1)} ms above it (target ≤ ${FRAME_MS.toFixed(1)} ms: ${shownOk ? "met" : "not met"}); ` +
    `to the animation callback only p99 ${percentile(loading.raf, 99).toFixed(0)} ms; the old target, p99 to the end of the frame ≤ 16 ms: ${shownP99 <= 16 ? "met" : "not met"}`;
  return {
    id: "V5",
    text,
    pass: inputOk && shownOk,
    figures: {
      keysMs: loading.keys,
      keysToAnimationFrameMs: loading.raf,
      keysInputDelayMs: loading.input,
      idleKeysMs: idle.keys,
      idleKeysToAnimationFrameMs: idle.raf,
      idleKeysInputDelayMs: idle.input,
    },
  };
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 2;
});
