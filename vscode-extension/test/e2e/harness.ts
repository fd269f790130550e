// Runs a real VS Code for the end-to-end test: code-server on 127.0.0.1 (no auth, its own config,
// user-data and extensions directories) with the .vsix installed, and Debian's chromium driven by
// playwright-core. Everything it starts runs in its own process group and is ended at the end.

import { type ChildProcess, execFile, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { test } from "node:test";
import { type BrowserContext, chromium, type FrameLocator, type Locator, type Page } from "playwright-core";

const run = promisify(execFile);

export type Env = {
  codeServer: string;
  vsix: string;
  python: string;
  artifacts: string;
  repoRoot: string;
};

export function readEnv(): Env {
  const need = (name: string): string => {
    const value = process.env[name];
    if (value === undefined || value === "") throw new Error(`${name} is not set (run this through make test-vscode)`);
    return value;
  };
  return {
    codeServer: need("CODE_SERVER"),
    vsix: need("VSIX"),
    python: need("ACPLS_PYTHON"),
    artifacts: need("ARTIFACTS"),
    repoRoot: need("REPO_ROOT"),
  };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitForHttp(url: string, timeoutMs: number, process: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (process.exitCode !== null) throw new Error(`code-server exited (${process.exitCode}):\n${output()}`);
    try {
      const response = await fetch(url);
      if (response.status < 500) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`code-server did not answer on ${url} within ${timeoutMs} ms:\n${output()}`);
}

export class VsCode {
  readonly root = mkdtempSync(join(tmpdir(), "acpls-vscode-e2e-"));
  readonly workspace = join(this.root, "workspace");
  private server: ChildProcess | undefined;
  private serverOutput = "";
  private context: BrowserContext | undefined;
  page!: Page;
  private shot = 0;

  constructor(readonly env: Env) {}

  /** Copies the demo agent's sample project as the workspace (unless `demoWorkspace` is false: the
   * test made its own) and writes VS Code's settings. */
  prepare(settings: Record<string, unknown>, demoWorkspace = true): void {
    if (demoWorkspace) cpSync(join(this.env.repoRoot, "server", "acpls", "demo", "workspace"), this.workspace, { recursive: true });
    const user = join(this.root, "user", "User");
    mkdirSync(user, { recursive: true });
    mkdirSync(join(this.root, "home"), { recursive: true });
    writeFileSync(join(user, "settings.json"), JSON.stringify(settings, null, 2));
    writeFileSync(join(this.root, "config.yaml"), "bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n");
    mkdirSync(this.env.artifacts, { recursive: true });
  }

  private baseArgs(): string[] {
    return [
      "--config",
      join(this.root, "config.yaml"),
      "--user-data-dir",
      join(this.root, "user"),
      "--extensions-dir",
      join(this.root, "extensions"),
    ];
  }

  async installExtension(): Promise<string> {
    const { stdout, stderr } = await run("node", [this.env.codeServer, ...this.baseArgs(), "--install-extension", this.env.vsix], {
      timeout: 120_000,
    });
    return stdout + stderr;
  }

  async start(extraEnv: Record<string, string>): Promise<void> {
    const port = await freePort();
    const args = [
      this.env.codeServer,
      ...this.baseArgs(),
      "--auth",
      "none",
      "--bind-addr",
      `127.0.0.1:${port}`,
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-workspace-trust",
      "--disable-getting-started-override",
      this.workspace,
    ];
    this.server = spawn("node", args, {
      detached: true, // its own process group: the extension host, acpls and the agent end with it
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...extraEnv, HOME: join(this.root, "home") },
    });
    const keep = (chunk: Buffer): void => {
      this.serverOutput = (this.serverOutput + chunk.toString()).slice(-20_000);
    };
    this.server.stdout?.on("data", keep);
    this.server.stderr?.on("data", keep);
    const url = `http://127.0.0.1:${port}/`;
    await waitForHttp(`${url}healthz`, 60_000, this.server, () => this.serverOutput);
    this.context = await chromium.launchPersistentContext(join(this.root, "chromium"), {
      executablePath: "/usr/bin/chromium",
      headless: true,
      viewport: { width: 1600, height: 1000 },
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
        "--disable-dev-shm-usage",
      ],
    });
    this.page = this.context.pages()[0] ?? (await this.context.newPage());
    await this.page.goto(`${url}?folder=${encodeURIComponent(this.workspace)}`);
    await this.page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
  }

  /**
   * What every test's `before` does: prepare (`demoWorkspace` as there), then `prepared` (files the
   * test adds to the workspace), install the .vsix, start with `env` added to the environment.
   */
  async launch(
    settings: Record<string, unknown>,
    options: { env?: Record<string, string>; demoWorkspace?: boolean; prepared?: () => void } = {},
  ): Promise<void> {
    this.prepare(settings, options.demoWorkspace);
    options.prepared?.();
    const installed = await this.installExtension();
    if (!/acpls/.test(installed)) throw new Error(`the .vsix did not install:\n${installed}`);
    await this.start(options.env ?? {});
  }

  /** stop, with code-server's last output printed when a test failed: every test's `after`. */
  async finish(): Promise<void> {
    if (process.exitCode !== undefined && process.exitCode !== 0) console.log(this.output.slice(-4000));
    await this.stop();
  }

  get output(): string {
    return this.serverOutput;
  }

  /** A numbered screenshot in the artifacts folder. */
  async screenshot(name: string): Promise<string> {
    this.shot += 1;
    const file = join(this.env.artifacts, `${String(this.shot).padStart(2, "0")}-${name}.png`);
    await this.page.screenshot({ path: file });
    return file;
  }

  /** The agent panel's page (the webview's inner frame). */
  get panel(): FrameLocator {
    return this.page.frameLocator("iframe.webview.ready").frameLocator("iframe#active-frame");
  }

  /** Waits for acpls to be up (its Follow item), opens the agent panel and returns its page once
   * the prompt box is there. */
  async openPanel(): Promise<FrameLocator> {
    await this.page.locator(".statusbar-item", { hasText: "Follow" }).first().waitFor({ timeout: 60_000 });
    await this.command("acpls: Open the agent panel");
    await this.panel.locator("textarea.prompt").waitFor({ timeout: 60_000 });
    return this.panel;
  }

  /** Types `text` into the panel's prompt box and sends it (Enter). */
  async sendPrompt(text: string): Promise<void> {
    const prompt = this.panel.locator("textarea.prompt");
    await prompt.click();
    await prompt.fill(text);
    await prompt.press("Enter");
  }

  /** Runs a command through the command palette, by its title. */
  async command(title: string): Promise<void> {
    const input = await this.openPalette();
    await input.fill(`>${title}`);
    const row = this.page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first();
    await row.waitFor({ state: "visible", timeout: 10_000 });
    await row.click();
  }

  // The palette's key can land where the workbench does not see it (focus left in a webview's
  // frame after a click in the panel): then the editor area takes the focus and the key again.
  private async openPalette(): Promise<Locator> {
    const input = this.page.locator(".quick-input-widget input");
    for (let attempt = 1; ; attempt++) {
      await this.page.keyboard.press("Escape");
      await this.page.keyboard.press(attempt % 2 === 1 ? "F1" : "Control+Shift+P");
      try {
        await input.waitFor({ state: "visible", timeout: 5_000 });
        return input;
      } catch (error) {
        if (attempt === 3) throw error;
        await this.page.locator(".part.editor").first().click({ position: { x: 40, y: 60 }, force: true }).catch(() => undefined);
      }
    }
  }

  async stop(): Promise<void> {
    await this.context?.close().catch(() => undefined);
    const pid = this.server?.pid;
    if (pid !== undefined && this.server?.exitCode === null) {
      try {
        process.kill(-pid, "SIGTERM");
      } catch {
        // already gone
      }
      await new Promise((r) => setTimeout(r, 1000));
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // ended by SIGTERM
      }
    }
    // VS Code's logs (the acpls output channel among them) are kept with the screenshots.
    try {
      cpSync(join(this.root, "user", "logs"), join(this.env.artifacts, "logs"), { recursive: true });
    } catch {
      // no logs written
    }
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** The params of every `method` message the scripted agent logged (tests/agents/scripted_agent.py --log). */
export function agentMessages(log: string, method: string): Record<string, unknown>[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((m) => m.method === method)
    .map((m) => m.params as Record<string, unknown>);
}

/** Polls `ok` for up to 30 s. */
export async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * VS Code's settings for a test: a quiet workbench (no start page, tips, trust prompt, telemetry,
 * updates, chat; the DOM terminal renderer, whose rows the tests read) under the test's own, which
 * win.
 */
export function workbenchSettings(own: Record<string, unknown>): Record<string, unknown> {
  return {
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "workbench.colorTheme": "Default Dark Modern",
    "security.workspace.trust.enabled": false,
    "telemetry.telemetryLevel": "off",
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "update.mode": "none",
    "terminal.integrated.gpuAcceleration": "off",
    "chat.commandCenter.enabled": false,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    ...own,
  };
}

/** `acpls.agent` for the scripted test agent (tests/agents/scripted_agent.py) playing `script` (an
 * object, or a script file's path), logging what it receives to `log`. */
export function scriptedAgent(env: Env, script: object | string, log: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ...extra,
    command: "python3",
    args: [
      join(env.repoRoot, "tests", "agents", "scripted_agent.py"),
      ...(typeof script === "string" ? ["--script", script] : ["--script-json", JSON.stringify(script)]),
      "--log",
      log,
    ],
    // The scripted agent uses acpls' small stdlib-only agent kit from the repository.
    env: { PYTHONPATH: join(env.repoRoot, "server") },
  };
}

/**
 * `step(name, body)`: a test that leaves a screenshot (`FAILED-<prefix><name>`) when it fails. With
 * `chained`, the steps after a failed one are skipped: each builds on the one before, so they would
 * only wait out their timeouts.
 */
export function stepper(vscode: VsCode, prefix = "", chained = true): (name: string, body: () => Promise<void>) => void {
  let failedStep: string | undefined;
  return (name, body) => {
    test(name, async (t) => {
      if (chained && failedStep !== undefined) {
        t.skip(`needs the failed step "${failedStep}"`);
        return;
      }
      try {
        await body();
      } catch (error) {
        failedStep = name;
        await vscode.screenshot(`FAILED-${prefix}${name.replace(/[^a-z0-9]+/gi, "-").slice(0, 40)}`).catch(() => undefined);
        throw error;
      }
    });
  };
}
