import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  parseManifest,
  platformMismatch,
  problemMessage,
  readSelfCheck,
  runningTarget,
  speedupsLine,
  uvPythonRequest,
} from "../../src/model/startCheck";

const MANIFEST = { target: "darwin-arm64", pythons: ["3.11", "3.12", "3.13", "3.14"] };

function report(problems: { kind: string; cause: string; fix: string }[], speedups: Record<string, string> = {}): string {
  return JSON.stringify({ ok: problems.length === 0, python: "3.12.3", platform: "linux-x64", speedups, problems });
}

describe("the start check", () => {
  test("the manifest of a .vsix, and none for anything else", () => {
    assert.deepEqual(parseManifest(JSON.stringify(MANIFEST)), MANIFEST);
    assert.equal(parseManifest(undefined), undefined);
    assert.equal(parseManifest("{"), undefined);
    assert.equal(parseManifest(JSON.stringify({ target: "linux-x64", pythons: ["3.x"] })), undefined);
    assert.equal(parseManifest(JSON.stringify({ pythons: ["3.12"] })), undefined);
  });

  test("uv is asked for exactly the Pythons the bundled wheels cover", () => {
    assert.equal(uvPythonRequest(MANIFEST), ">=3.11,<3.15");
    assert.equal(uvPythonRequest({ target: "linux-x64", pythons: ["3.12", "3.11"] }), ">=3.11,<3.13");
    assert.equal(uvPythonRequest(undefined), ">=3.11");
  });

  test("a package of another platform is named before any Python is looked for", () => {
    const here = runningTarget("linux", "x64");
    assert.equal(here, "linux-x64");
    assert.equal(
      platformMismatch(MANIFEST, here, "0.1.0"),
      "this acpls package is for darwin-arm64, and this machine is linux-x64. Install the acpls extension for " +
        "linux-x64: the Marketplace picks it by itself; for a .vsix file, take acpls-0.1.0-linux-x64.vsix.",
    );
    assert.equal(platformMismatch({ ...MANIFEST, target: "linux-x64" }, here, "0.1.0"), undefined);
    assert.equal(platformMismatch(undefined, here, "0.1.0"), undefined, "a development build has no manifest");
  });

  test("a passing self-check starts the server and logs its fast paths", () => {
    const verdict = readSelfCheck(0, report([], { json: "orjson", base64: "pybase64", loop: "asyncio" }), "", "python3", "linux-x64");
    assert.ok(verdict.ok);
    assert.deepEqual(verdict.report.warnings, []);
    const warned = JSON.stringify({ ...JSON.parse(report([])), warnings: ["agent terminals need pywinpty", 3] });
    const withWarning = readSelfCheck(0, warned, "", "python", "win32-x64");
    assert.ok(withWarning.ok);
    assert.deepEqual(withWarning.report.warnings, ["agent terminals need pywinpty"]);
    assert.equal(speedupsLine(verdict.report), "acpls self-check passed on Python 3.12.3 (linux-x64); json: orjson, base64: pybase64, loop: asyncio");
  });

  test("each cause reaches the user with its fix, not 'set acpls.python'", () => {
    const cases: [string, string, RegExp][] = [
      ["python-too-old", "Python 3.10.4 is too old: acpls needs Python 3.11 or newer", /^Python 3\.10\.4 is too old: acpls needs Python 3\.11 or newer \(\/usr\/bin\/python3\)\. Set acpls\.python to a Python 3\.11 or newer, or clear it/],
      ["wrong-platform", "this package is for darwin-arm64, and this machine is linux-x64", /^this package is for darwin-arm64, and this machine is linux-x64\. Install the acpls extension for linux-x64/],
      ["missing-module", "acpls.server cannot import watchfiles: it is not installed for /usr/bin/python3", /cannot import watchfiles.*\. Reinstall the acpls extension/],
      ["broken-module", "acpls.core.hub does not import: ImportError: boom", /ImportError: boom\. Reinstall the acpls extension; if this persists, report it/],
    ];
    for (const [kind, cause, expected] of cases) {
      const verdict = readSelfCheck(1, report([{ kind, cause, fix: "x" }]), "", "/usr/bin/python3", "linux-x64");
      assert.ok(!verdict.ok);
      assert.match(verdict.message, expected);
      assert.doesNotMatch(verdict.message, /Python 3\.11\+ interpreter/);
    }
  });

  test("a Python that cannot even load acpls says what it printed", () => {
    const verdict = readSelfCheck(1, "", "Traceback (most recent call last):\n  ...\nModuleNotFoundError: No module named 'acpls'\n", "python3", "linux-x64");
    assert.ok(!verdict.ok);
    assert.equal(
      verdict.message,
      "python3 -m acpls --self-check did not run (exit 1: ModuleNotFoundError: No module named 'acpls'). " +
        "Reinstall the acpls extension, or set acpls.python to a Python 3.11 or newer.",
    );
  });

  test("an exit status that disagrees with the report is a failure", () => {
    const verdict = readSelfCheck(1, report([]), "", "python3", "linux-x64");
    assert.ok(!verdict.ok);
  });

  test("an unknown kind still carries its cause", () => {
    assert.match(problemMessage({ kind: "new-kind", cause: "something else", fix: "x" }, "py", "linux-x64"), /^something else\. Reinstall/);
  });
});
