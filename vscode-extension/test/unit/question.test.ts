import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { isPanelMessage } from "../../src/model/panelMessages";
import { contentFrom, formFields, isWebUrl, questionSummary } from "../../src/model/question";
import { type ElicitationParams, parseServerMessage } from "../../src/protocol";
import { fixture } from "./fixtures";

const params = parseServerMessage("acpls/elicitation", fixture("acpls_elicitation.json").params) as ElicitationParams;
const golden = (fixture("acpls_elicitation.result.json").result as { content: Record<string, unknown> }).content;

describe("questions from the agent (acpls/elicitation)", () => {
  test("one field per property, in the agent's order, with kinds, options and defaults", () => {
    const fields = formFields(params);
    assert.deepEqual(
      fields.map((f) => [f.name, f.kind, f.required]),
      [
        ["name", "text", true],
        ["email", "text", true],
        ["age", "integer", true],
        ["ratio", "number", false],
        ["subscribe", "boolean", false],
        ["color", "choice", false],
        ["size", "choice", false],
        ["tags", "multi", true],
        ["langs", "multi", false],
        ["born", "text", false],
        ["first-name", "text", false],
      ],
    );
    const byName = new Map(fields.map((f) => [f.name, f]));
    assert.equal(byName.get("name")?.label, "Name");
    assert.equal(byName.get("name")?.description, "What we call you");
    assert.equal(byName.get("name")?.hint, "at least 2 characters; at most 40 characters");
    assert.equal(byName.get("subscribe")?.default, false);
    assert.deepEqual(byName.get("size")?.options, [
      { value: "s", title: "Small" },
      { value: "l", title: "Large" },
    ]);
    assert.deepEqual(
      byName.get("langs")?.options.map((o) => o.title),
      ["Python", "Lua"],
    );
  });

  test("the panel's values become the golden answer", () => {
    const fields = formFields(params);
    const values = {
      name: "Ann",
      email: "ann@example.org",
      age: "33",
      ratio: "0.5",
      subscribe: true,
      color: "green",
      size: "l",
      tags: ["a", "c"],
      langs: ["py", "lua"],
      born: "1990-02-28",
      "first-name": "Ann",
    };
    assert.deepEqual(contentFrom(fields, values), golden);
  });

  test("empty text means no value; a number that is not one goes as typed (acpls names it)", () => {
    const fields = formFields(params);
    assert.deepEqual(contentFrom(fields, { name: "", age: "old", ratio: " ", color: undefined }), { age: "old" });
  });

  test("summaries, web URLs and panel messages", () => {
    const url = parseServerMessage("acpls/elicitation", fixture("acpls_elicitation.url.json").params) as ElicitationParams;
    assert.equal(questionSummary(url), "Sign in to the MCP server (https://example.org/sign-in)");
    assert.ok(isWebUrl(url.url));
    for (const bad of ["file:///etc/passwd", "javascript:alert(1)", "vscode://x", undefined]) assert.equal(isWebUrl(bad), false);
    assert.ok(isPanelMessage({ type: "answerQuestion", key: "q1", action: "accept", values: { a: "x", b: true, c: ["y"] } }));
    assert.ok(isPanelMessage({ type: "answerQuestion", key: "q1", action: "decline" }));
    assert.equal(isPanelMessage({ type: "answerQuestion", key: "q1", action: "maybe" }), false);
    assert.equal(isPanelMessage({ type: "answerQuestion", key: "q1", action: "accept", values: { a: 3 } }), false);
    assert.ok(isPanelMessage({ type: "openQuestionUrl", key: "q1" }));
  });
});
