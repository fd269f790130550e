import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { choosePython, isSupported, type PythonInputs, PythonNotFound, type UvPort } from "../../src/model/python";

/** A machine: which commands run and the version each reports. */
function machine(versions: Record<string, string>, uv?: UvPort): PythonInputs {
  return {
    configured: "",
    fromExtension: undefined,
    pathCommands: ["python3", "python"],
    probe: async (command) => versions[command],
    uv,
  };
}

class FakeUv implements UvPort {
  installs = 0;
  constructor(
    private known: string | undefined,
    private readonly download: string | Error,
  ) {}
  async find(): Promise<string | undefined> {
    return this.known;
  }
  async install(): Promise<void> {
    this.installs += 1;
    if (this.download instanceof Error) throw this.download;
    this.known = this.download;
  }
}

describe("the server's Python", () => {
  test("versions", () => {
    assert.deepEqual(["3.11", "3.14", "4.0", "3.10", "2.7", undefined, "x"].map(isSupported), [true, true, true, false, false, false, false]);
  });

  test("the setting is used as given, or says what is wrong", async () => {
    const versions = { "/opt/py": "3.12", "/old/py": "3.9", python3: "3.13" };
    assert.deepEqual(await choosePython({ ...machine(versions), configured: "/opt/py" }), { python: "/opt/py", source: "setting", version: "3.12" });
    await assert.rejects(choosePython({ ...machine(versions), configured: "/old/py" }), /acpls.python \(\/old\/py\) is 3.9/);
    await assert.rejects(choosePython({ ...machine(versions), configured: "/none" }), /cannot run acpls.python \(\/none\)/);
  });

  test("the Python extension, then PATH, first 3.11+ wins", async () => {
    const inputs = { ...machine({ "/ext/py": "3.10", python3: "3.9", python: "3.11" }), fromExtension: "/ext/py" };
    assert.deepEqual(await choosePython(inputs), { python: "python", source: "PATH", version: "3.11" });
    const ext = { ...machine({ "/ext/py": "3.12", python3: "3.13" }), fromExtension: "/ext/py" };
    assert.equal((await choosePython(ext)).source, "python-extension");
  });

  test("a Python uv knows is used without downloading", async () => {
    const uv = new FakeUv("/uv/py", new Error("no network"));
    const choice = await choosePython(machine({ "/uv/py": "3.12", python3: "3.9" }, uv));
    assert.deepEqual(choice, { python: "/uv/py", source: "uv", version: "3.12" });
    assert.equal(uv.installs, 0);
  });

  test("else uv downloads one, once", async () => {
    const uv = new FakeUv(undefined, "/uv/downloaded");
    const choice = await choosePython(machine({ "/uv/downloaded": "3.12" }, uv));
    assert.deepEqual(choice, { python: "/uv/downloaded", source: "uv-download", version: "3.12" });
    assert.equal(uv.installs, 1);
  });

  test("offline: a clear message with what was tried and what to do", async () => {
    const uv = new FakeUv(undefined, new Error("failed to lookup address information"));
    const error = await choosePython(machine({ python3: "3.9" }, uv)).catch((e: unknown) => e);
    assert.ok(error instanceof PythonNotFound);
    assert.match(error.message, /none was found \(python3 \(3\.9\), python \(not found\)\)/);
    assert.match(error.message, /downloading one with uv failed: failed to lookup address information/);
    assert.match(error.message, /Connect to the network and run "acpls: Restart server", or install Python 3\.11\+ and set acpls\.python/);
  });

  test("a build without uv says to install Python", async () => {
    await assert.rejects(choosePython(machine({})), /found none \(python3 \(not found\), python \(not found\)\); install one and set acpls.python/);
  });
});
