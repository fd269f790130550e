import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { editorNodeEnv } from "../../src/model/editorNode";

describe("VS Code's Node for agents without one", () => {
  test("the executable always, npm's folder only where the package carries it", () => {
    const exe = "/opt/VSCode/code";
    const npm = "/ext/bundled/npm";
    assert.deepEqual(editorNodeEnv(exe, npm, (p) => p === `${npm}/bin/npx-cli.js`), {
      ACPLS_EDITOR_NODE: exe,
      ACPLS_EDITOR_NPM: npm,
    });
    assert.deepEqual(editorNodeEnv(exe, npm, () => false), { ACPLS_EDITOR_NODE: exe });
  });
});
