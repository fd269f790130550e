// The .vsix on a machine with no Python 3.11+ on PATH, in a real VS Code (code-server): the bundled
// uv downloads a Python once (a local stand-in for python-build-standalone serves it, through uv's
// own UV_PYTHON_DOWNLOADS_JSON_URL) with a progress notification, and the server runs on it; and
// when uv cannot download one, the user gets a message that says what was tried and what to do.
// A Python the server cannot import on gets the self-check's cause and fix. Screenshots go to
// test-artifacts/vscode/ (prefixed "python").

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, before, describe, test } from "node:test";
import { readEnv, VsCode, workbenchSettings } from "./harness";

const run = promisify(execFile);
const env = readEnv();

const settings = workbenchSettings({
  "acpls.agent": "demo",
  "git.enabled": false,
});

/** A PATH with node and nothing else: no python3, no python. With VSCODE_CLI=1 the server takes
 * its environment as given instead of asking a login shell (which would put /usr/bin back). */
function pathWithoutPython(root: string): string {
  const bin = join(root, "bin-no-python");
  mkdirSync(bin, { recursive: true });
  symlinkSync(process.execPath, join(bin, "node"));
  return bin;
}

/** The CPython whose installation the stand-in mirror serves (make test-vscode sets it). */
function archivedPython(): string {
  const python = process.env.UV_ARCHIVE_PYTHON;
  if (python === undefined || python === "") throw new Error("UV_ARCHIVE_PYTHON is not set (run this through make test-vscode)");
  return python;
}

/** A python-build-standalone style archive (python/bin/python3…) of a CPython on this machine. */
async function pythonArchive(root: string): Promise<{ file: string; version: string[]; sha256: string }> {
  const python = archivedPython();
  const prefix = (await run(python, ["-c", "import sys; print(sys.base_prefix)"])).stdout.trim();
  assert.notEqual(prefix, "/usr", `${python} is the system's Python, not a self-contained installation to archive`);
  const version = (await run(python, ["-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"])).stdout.trim().split(".");
  const file = join(root, "cpython.tar.gz");
  const lib = `./lib/python${version[0]}.${version[1]}`;
  await run("tar", ["czf", file, "-C", prefix, `--exclude=${lib}/site-packages`, `--exclude=${lib}/test`, "--transform", "s,^\\.,python,", "."], {
    maxBuffer: 1 << 26,
  });
  return { file, version, sha256: createHash("sha256").update(readFileSync(file)).digest("hex") };
}

/** Serves the files of `routes` (URL path -> file), which may be filled after it starts. */
function serve(routes: Record<string, string>): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    const file = routes[request.url ?? ""];
    response.writeHead(file === undefined ? 404 : 200);
    response.end(file === undefined ? undefined : readFileSync(file));
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      resolve({ server, url: `http://127.0.0.1:${port}` });
    });
  });
}

describe("no Python 3.11+ on PATH: the bundled uv gets one", { timeout: 300_000 }, () => {
  const vscode = new VsCode(env);
  let mirror: Server | undefined;

  before(async () => {
    const archive = await pythonArchive(vscode.root);
    const [major, minor, patch] = archive.version.map(Number);
    const key = `cpython-${major}.${minor}.${patch}-linux-x86_64-gnu`;
    const routes: Record<string, string> = {};
    const { server, url } = await serve(routes);
    mirror = server;
    const downloads = {
      [key]: {
        name: "cpython",
        arch: { family: "x86_64", variant: null },
        os: "linux",
        libc: "gnu",
        major,
        minor,
        patch,
        prerelease: "",
        url: `${url}/cpython.tar.gz`,
        sha256: archive.sha256,
        variant: null,
        build: "acpls-e2e",
      },
    };
    writeFileSync(join(vscode.root, "downloads.json"), JSON.stringify(downloads));
    routes["/downloads.json"] = join(vscode.root, "downloads.json");
    routes["/cpython.tar.gz"] = archive.file;
    await vscode.launch(settings, { env: { VSCODE_CLI: "1", PATH: pathWithoutPython(vscode.root), UV_PYTHON_DOWNLOADS_JSON_URL: `${url}/downloads.json` } });
  });

  after(async () => {
    mirror?.close();
    await vscode.finish();
  });

  test("the server starts on the Python uv downloaded into the extension's storage", async () => {
    const page = vscode.page;
    try {
      // The status item names the agent once the server is up.
      await page.locator(".statusbar-item", { hasText: "demo" }).first().waitFor({ timeout: 180_000 });
    } catch (error) {
      await vscode.screenshot("FAILED-python-uv-download");
      throw error;
    }
    await vscode.screenshot("python-uv-download");
    const storage = join(vscode.root, "user", "User", "globalStorage", "acpls.acpls", "python");
    const { stdout } = await run("find", [storage, "-maxdepth", "1", "-name", "cpython-*"]);
    assert.match(stdout, /cpython-\d+\.\d+\.\d+-linux-x86_64-gnu/, "uv installed into the extension's storage");
  });
});

describe("no Python 3.11+ and no network: a message that says what to do", { timeout: 300_000 }, () => {
  const vscode = new VsCode(env);

  // Nothing listens on port 9: uv's download fails the way it does offline.
  before(() =>
    vscode.launch(settings, { env: { VSCODE_CLI: "1", PATH: pathWithoutPython(vscode.root), UV_PYTHON_DOWNLOADS_JSON_URL: "http://127.0.0.1:9/downloads.json" } }),
  );

  after(() => vscode.finish());

  test("the error names what was tried, the cause and the way out", async () => {
    const toast = vscode.page.locator(".notification-toast", { hasText: "acpls needs Python 3.11 or newer" }).first();
    try {
      await toast.waitFor({ timeout: 180_000 });
    } catch (error) {
      await vscode.screenshot("FAILED-python-offline");
      throw error;
    }
    await vscode.screenshot("python-offline");
    const text = (await toast.innerText()).replace(/\s+/g, " ");
    assert.match(text, /none was found \(python3 \(not found\), python \(not found\)\)/);
    assert.match(text, /downloading one with uv failed/);
    assert.match(text, /Connect to the network and run "acpls: Restart server", or install Python 3\.11\+ and set acpls\.python/);
  });
});

// A Python on which the server cannot import (watchfiles made unimportable, as on a broken
// install): the extension's start check runs `acpls --self-check` first and the user reads the real
// cause and its fix, not "set acpls.python to a Python 3.11+ interpreter".
describe("a Python the server cannot import on: the real cause", { timeout: 300_000 }, () => {
  const vscode = new VsCode(env);

  before(() => {
    const shim = join(vscode.root, "shim");
    mkdirSync(shim, { recursive: true });
    writeFileSync(join(shim, "sitecustomize.py"), "import sys\nsys.modules['watchfiles'] = None\n");
    const python = join(vscode.root, "broken-python");
    writeFileSync(python, `#!/bin/sh\nPYTHONPATH="${shim}:$PYTHONPATH" exec "${env.python}" "$@"\n`, { mode: 0o755 });
    return vscode.launch({ ...settings, "acpls.python": python });
  });

  after(() => vscode.finish());

  test("the self-check's cause and fix reach the user", async () => {
    const toast = vscode.page.locator(".notification-toast", { hasText: "acpls did not start" }).first();
    try {
      await toast.waitFor({ timeout: 180_000 });
    } catch (error) {
      await vscode.screenshot("FAILED-python-broken-import");
      throw error;
    }
    await vscode.screenshot("python-broken-import");
    const text = (await toast.innerText()).replace(/\s+/g, " ");
    assert.match(text, /cannot import watchfiles: it is not installed for /);
    assert.match(text, /Reinstall the acpls extension/);
    assert.doesNotMatch(text, /Python 3\.11\+ interpreter/);
  });
});
