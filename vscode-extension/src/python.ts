// The Python that runs the server, found as src/model/python.ts decides, with the editor's parts:
// the acpls.python setting, the Python extension's interpreter, PATH, and the uv bundled in the
// .vsix (bundled/bin/uv), whose Pythons live in the extension's global storage.

import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { choosePython, type PythonChoice, type UvPort } from "./model/python";
import { type BundleManifest, parseManifest, platformMismatch, readSelfCheck, runningTarget, speedupsLine, uvPythonRequest } from "./model/startCheck";

const PROBE_TIMEOUT_MS = 15_000;
const FIND_TIMEOUT_MS = 30_000;
const DOWNLOAD_TIMEOUT_MS = 10 * 60_000;
const SELF_CHECK_TIMEOUT_MS = 60_000;

type Run = { code: number; stdout: string; stderr: string };

function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeout: number): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { env, timeout, windowsHide: true }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
      resolve({ code, stdout: String(stdout), stderr: error !== null && stderr === "" ? error.message : String(stderr) });
    });
  });
}

async function probe(command: string): Promise<string | undefined> {
  const result = await run(command, ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"], process.env, PROBE_TIMEOUT_MS);
  return result.code === 0 ? result.stdout.trim() : undefined;
}

/** The last line uv printed that says why (its errors end with the root cause). */
function uvReason(result: Run): string {
  const lines = result.stderr.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  const cause = lines.filter((l) => l.startsWith("cause:") || l.startsWith("error:")).pop();
  return (cause ?? lines.pop() ?? `uv exited with ${result.code}`).replace(/^(cause|error):\s*/, "");
}

export class BundledUv implements UvPort {
  constructor(
    private readonly uv: string,
    private readonly storage: string,
    private readonly log: vscode.LogOutputChannel,
    /** The CPython versions the bundled compiled modules cover (model/startCheck.ts). */
    private readonly request: string,
  ) {}

  /** The bundled uv of this .vsix, or undefined in a development build. */
  static of(context: vscode.ExtensionContext, log: vscode.LogOutputChannel, manifest: BundleManifest | undefined): BundledUv | undefined {
    const name = process.platform === "win32" ? "uv.exe" : "uv";
    const uv = context.asAbsolutePath(path.join("bundled", "bin", name));
    return fs.existsSync(uv) ? new BundledUv(uv, context.globalStorageUri.fsPath, log, uvPythonRequest(manifest)) : undefined;
  }

  private env(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      UV_PYTHON_INSTALL_DIR: path.join(this.storage, "python"),
      UV_CACHE_DIR: path.join(this.storage, "uv-cache"),
      UV_NO_PROGRESS: "1",
    };
    delete env.VIRTUAL_ENV; // a project's environment is not what runs the server
    return env;
  }

  async find(): Promise<string | undefined> {
    const result = await run(this.uv, ["python", "find", "--system", this.request], this.env(), FIND_TIMEOUT_MS);
    const found = result.stdout.trim();
    return result.code === 0 && found !== "" ? found : undefined;
  }

  async install(): Promise<void> {
    this.log.info(`no Python 3.11+ found: downloading one (${this.request}) with ${this.uv}`);
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "acpls: no Python 3.11+ here, downloading one with uv (once)…" },
      // --no-bin: nothing is put on the user's PATH; the Python stays the extension's own.
      () => run(this.uv, ["python", "install", "--no-bin", this.request], this.env(), DOWNLOAD_TIMEOUT_MS),
    );
    if (result.code !== 0) {
      this.log.error(`uv python install failed:\n${result.stderr}`);
      throw new Error(uvReason(result));
    }
  }
}

/** The Python extension's interpreter for `scope`, if that extension is installed and gives one. */
async function pythonExtensionInterpreter(scope: vscode.Uri | undefined, log: vscode.LogOutputChannel): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension("ms-python.python");
  if (extension === undefined) return undefined;
  try {
    const api = (extension.isActive ? extension.exports : await extension.activate()) as PythonApi | undefined;
    const active = api?.environments?.getActiveEnvironmentPath?.(scope);
    const resolved = active === undefined ? undefined : await api?.environments?.resolveEnvironment?.(active);
    const executable = resolved?.executable?.uri?.fsPath;
    return typeof executable === "string" && executable !== "" ? executable : undefined;
  } catch (error) {
    log.warn(`The Python extension did not give an interpreter (${String(error)})`);
    return undefined;
  }
}

type PythonApi = {
  environments?: {
    getActiveEnvironmentPath?: (resource?: vscode.Uri) => { id: string; path: string };
    resolveEnvironment?: (env: { id: string; path: string }) => Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
  };
};

/** bundled/manifest.json of this .vsix (its target and Pythons), or undefined in a development build. */
export function bundleManifest(context: vscode.ExtensionContext): BundleManifest | undefined {
  try {
    return parseManifest(fs.readFileSync(context.asAbsolutePath(path.join("bundled", "manifest.json")), "utf8"));
  } catch {
    return undefined;
  }
}

/** Throws with the cause and the fix when this .vsix was built for another platform. */
export function checkPlatform(context: vscode.ExtensionContext, manifest: BundleManifest | undefined): void {
  const version = String((context.extension.packageJSON as { version?: unknown }).version ?? "");
  const mismatch = platformMismatch(manifest, runningTarget(process.platform, process.arch), version);
  if (mismatch !== undefined) throw new Error(mismatch);
}

/** Pythons whose self-check passed in this window: a restart does not pay for it again. */
const checked = new Set<string>();

/** `python -m acpls --self-check`: imports the whole server; throws with the real cause and the
 * fix (missing module, package of another platform, Python too old) when it cannot start. */
export async function checkServer(
  python: string,
  env: NodeJS.ProcessEnv,
  manifest: BundleManifest | undefined,
  log: vscode.LogOutputChannel,
): Promise<void> {
  const key = `${python}\0${env.PYTHONPATH ?? ""}`;
  if (checked.has(key)) return;
  const args = ["-m", "acpls", "--self-check", "--json", ...(manifest === undefined ? [] : ["--platform", manifest.target])];
  const result = await run(python, args, env, SELF_CHECK_TIMEOUT_MS);
  const verdict = readSelfCheck(result.code, result.stdout, result.stderr, python, runningTarget(process.platform, process.arch));
  if (!verdict.ok) {
    log.error(`acpls --self-check failed with ${python}:\n${result.stdout}${result.stderr}`);
    throw new Error(verdict.message);
  }
  log.info(speedupsLine(verdict.report));
  for (const warning of verdict.report.warnings) log.warn(`acpls self-check: ${warning}`);
  checked.add(key);
}

/** Forgets a passed self-check (the server then failed to start: check again next time). */
export function forgetServerCheck(python: string, env: NodeJS.ProcessEnv): void {
  checked.delete(`${python}\0${env.PYTHONPATH ?? ""}`);
}

/** The Python that runs the server; throws PythonNotFound with what to do. */
export async function findPython(
  context: vscode.ExtensionContext,
  scope: vscode.Uri | undefined,
  log: vscode.LogOutputChannel,
  manifest: BundleManifest | undefined = bundleManifest(context),
): Promise<PythonChoice> {
  const configured = vscode.workspace.getConfiguration("acpls", scope).get<string>("python", "").trim();
  const choice = await choosePython({
    configured: configured.replace(/^~(?=[/\\]|$)/, process.env.HOME ?? process.env.USERPROFILE ?? "~"),
    fromExtension: configured === "" ? await pythonExtensionInterpreter(scope, log) : undefined,
    pathCommands: process.platform === "win32" ? ["python", "python3"] : ["python3", "python"],
    probe,
    uv: BundledUv.of(context, log, manifest),
  });
  log.info(`server Python: ${choice.python} (${choice.version}, from ${choice.source})`);
  return choice;
}
