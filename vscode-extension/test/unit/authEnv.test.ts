import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { plan, secretKey } from "../../src/model/authEnv";
import { parseServerMessage } from "../../src/protocol";

describe("env_var sign-in", () => {
  const params = parseServerMessage("acpls/authEnv", {
    methodId: "openai-api-key",
    agent: "codex",
    name: "OpenAI API key",
    vars: [{ name: "OPENAI_API_KEY", label: "API key", secret: true }, { name: "OPENAI_ORG", optional: true }],
  });

  test("one secret per agent and variable", () => {
    assert.equal(secretKey("codex", "OPENAI_API_KEY"), "acpls.auth/codex/OPENAI_API_KEY");
    assert.notEqual(secretKey("a/b", "X"), secretKey("a", "b/X"));
  });

  test("stored values are used, the rest asked in order", () => {
    assert.deepEqual(plan(params, { OPENAI_API_KEY: "sk-1" }), { known: { OPENAI_API_KEY: "sk-1" }, ask: [params.vars[1]] });
    assert.deepEqual(plan(params, {}).ask.map((v) => v.name), ["OPENAI_API_KEY", "OPENAI_ORG"]);
    assert.deepEqual(plan(params, { OPENAI_API_KEY: "" }).ask.map((v) => v.name), ["OPENAI_API_KEY", "OPENAI_ORG"]);
  });

  test("a login command's params are checked", () => {
    assert.throws(() => parseServerMessage("acpls/runLogin", { methodId: "l", name: "n", command: ["x"], env: { A: 1 }, cwd: "/" }));
  });
});
