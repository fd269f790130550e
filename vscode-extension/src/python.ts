// The Python that runs the server, found as src/model/python.ts decides, with the editor's parts:
// the acpls.python setting, the Python extension's interpreter, PATH, and the uv bundled in the
// .vsix (bundled/bin/uv), whose Pythons live in the extension's global storage.

import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { choosePython, type PythonChoice, type UvPort, UV_PYTHON_REQUEST } from "./model/python";

const PROBE_TIMEOUT_MS = 15_000;
const FIND_TIMEOUT_MS = 30_000;
const DOWNLOAD_TIMEOUT_MS = 10 * 60_000;

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
  ) {}

  /** The bundled uv of this .vsix, or undefined in a development build. */
  static of(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): BundledUv | undefined {
    const name = process.platform === "win32" ? "uv.exe" : "uv";
    const uv = context.asAbsolutePath(path.join("bundled", "bin", name));
    return fs.existsSync(uv) ? new BundledUv(uv, context.globalStorageUri.fsPath, log) : undefined;
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
    const result = await run(this.uv, ["python", "find", "--system", UV_PYTHON_REQUEST], this.env(), FIND_TIMEOUT_MS);
    const found = result.stdout.trim();
    return result.code === 0 && found !== "" ? found : undefined;
  }

  async install(): Promise<void> {
    this.log.info(`no Python 3.11+ found: downloading one with ${this.uv}`);
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "acpls: no Python 3.11+ here, downloading one with uv (once)…" },
      // --no-bin: nothing is put on the user's PATH; the Python stays the extension's own.
      () => run(this.uv, ["python", "install", "--no-bin", UV_PYTHON_REQUEST], this.env(), DOWNLOAD_TIMEOUT_MS),
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

/** The Python that runs the server; throws PythonNotFound with what to do. */
export async function findPython(
  context: vscode.ExtensionContext,
  scope: vscode.Uri | undefined,
  log: vscode.LogOutputChannel,
): Promise<PythonChoice> {
  const configured = vscode.workspace.getConfiguration("acpls", scope).get<string>("python", "").trim();
  const choice = await choosePython({
    configured: configured.replace(/^~(?=[/\\]|$)/, process.env.HOME ?? process.env.USERPROFILE ?? "~"),
    fromExtension: configured === "" ? await pythonExtensionInterpreter(scope, log) : undefined,
    pathCommands: process.platform === "win32" ? ["python", "python3"] : ["python3", "python"],
    probe,
    uv: BundledUv.of(context, log),
  });
  log.info(`server Python: ${choice.python} (${choice.version}, from ${choice.source})`);
  return choice;
}
