import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  acceptMention,
  appendQuote,
  attachmentFor,
  base64Size,
  builtinItems,
  droppedUris,
  hasToken,
  imageProblem,
  imageTypeOf,
  mentionFilter,
  mentionItems,
  mentionQuery,
  promptAttachments,
  quoteAsContext,
  toolCallText,
  type Attachment,
  type EditorState,
} from "../../src/model/mentions";
import { isPanelMessage } from "../../src/model/panelMessages";

const range = { start: { line: 4, character: 0 }, end: { line: 6, character: 0 } };
const state: EditorState = {
  selection: { uri: "file:///ws/calc.py", label: "calc.py:5-6", range },
  activeFile: { uri: "file:///ws/calc.py", label: "calc.py" },
  terminals: [{ terminalId: "term-1", command: "pytest -q" }],
};

describe("@-mentions in the panel's prompt box", () => {
  test("the @word under the caret: at the start or after white space, not in an e-mail address", () => {
    assert.deepEqual(mentionQuery("@ca", 3), { prefix: "ca", start: 0, end: 3 });
    assert.deepEqual(mentionQuery("look at @sr/x.py please", 12), { prefix: "sr/", start: 8, end: 16 });
    assert.deepEqual(mentionQuery("why @", 5), { prefix: "", start: 4, end: 5 });
    assert.equal(mentionQuery("mail me@host", 12), undefined);
    assert.equal(mentionQuery("@calc.py and more", 17), undefined);
    assert.equal(mentionQuery("no mention", 3), undefined);
  });

  test("built-in kinds fit what was typed and what the editor has", () => {
    assert.deepEqual(builtinItems("", state).map((i) => i.label), ["@selection", "@diagnostics", "@diagnostics:workspace", "@terminal:term-1"]);
    assert.deepEqual(builtinItems("diag", state).map((i) => i.token), ["diagnostics", "diagnostics:workspace"]);
    assert.deepEqual(builtinItems("pytest", state).map((i) => i.token), ["terminal:term-1"]);
    // No editor: no @selection and no file diagnostics, the workspace's still.
    assert.deepEqual(builtinItems("", { terminals: [] }).map((i) => i.token), ["diagnostics:workspace"]);
  });

  test("files and sessions (server order), symbols, all in one list; the first pick inserts @token", () => {
    const items = mentionItems(
      "calc",
      { terminals: [] },
      [
        { type: "file", label: "calc.py", uri: "file:///ws/calc.py" },
        { type: "session", label: "Fix calc", sessionId: "s-1" },
        { type: "file", label: "tests/test_calc.py", uri: "file:///ws/tests/test_calc.py" },
      ],
      [{ name: "mul", containerName: "Calc", kind: "Method", uri: "file:///ws/calc.py", range, relative: "calc.py" }],
    );
    assert.deepEqual(
      items.map((i) => [i.kind, i.label, i.token]),
      [
        ["file", "calc.py", "calc.py"],
        ["file", "tests/test_calc.py", "tests/test_calc.py"],
        ["symbol", "Calc.mul", "symbol:mul"],
        ["session", "Fix calc", "session:s-1"],
      ],
    );
    assert.equal(items[2]?.detail, "Method · calc.py:5");
    // A token has no white space (a markdown heading's symbol, for one).
    const heading = mentionItems("", { terminals: [] }, [], [{ name: "# calc — the demo", kind: "String", uri: "file:///ws/README.md", range, relative: "README.md" }]);
    assert.equal(heading[1]?.token, "symbol:#_calc_—_the_demo");
    const query = mentionQuery("explain @calc now", 13);
    assert.ok(query !== undefined);
    assert.deepEqual(acceptMention("explain @calc now", query, "calc.py"), { text: "explain @calc.py now", caret: 17 });
    assert.deepEqual(acceptMention("@ca", { prefix: "ca", start: 0, end: 3 }, "calc.py"), { text: "@calc.py ", caret: 9 });
  });

  test("each item becomes the acpls.prompt mention protocol.md 3.2 names", () => {
    const [selection, diagnostics, , terminal] = builtinItems("", state);
    assert.ok(selection && diagnostics && terminal);
    assert.deepEqual((attachmentFor(selection) as Attachment).mention, { type: "selection", uri: "file:///ws/calc.py", range });
    assert.deepEqual((attachmentFor(terminal) as Attachment).mention, { type: "terminal", terminalId: "term-1" });
    const diagnostic = { range, severity: 1, message: "boom", source: "pyright" };
    const attached = attachmentFor(diagnostics, [{ uri: "file:///ws/calc.py", diagnostic }]) as Attachment;
    assert.deepEqual(attached.mention, { type: "diagnostics", diagnostics: [{ uri: "file:///ws/calc.py", diagnostic }] });
    assert.equal(attached.title, "1 problem");
    assert.equal(attachmentFor(diagnostics, []), "This file has no problems to mention.");
    const [file, symbol, session] = mentionItems(
      "",
      { terminals: [] },
      [
        { type: "file", label: "calc.py", uri: "file:///ws/calc.py" },
        { type: "session", label: "Old", sessionId: "s-1" },
      ],
      [{ name: "mul", kind: "Function", uri: "file:///ws/calc.py", range, relative: "calc.py" }],
    ).filter((i) => i.kind !== "diagnostics");
    assert.ok(file && symbol && session);
    assert.deepEqual((attachmentFor(file) as Attachment).mention, { type: "file", uri: "file:///ws/calc.py" });
    assert.deepEqual((attachmentFor(symbol) as Attachment).mention, { type: "symbol", name: "mul", uri: "file:///ws/calc.py", range });
    assert.deepEqual((attachmentFor(session) as Attachment).mention, { type: "session", sessionId: "s-1" });
  });

  test("a prompt sends the attachments whose @token is still in its text, and the untokened ones", () => {
    const attachments: Attachment[] = [
      { label: "@calc.py", title: "", icon: "file", token: "calc.py", mention: { type: "file", uri: "file:///ws/calc.py" } },
      { label: "@selection", title: "", icon: "selection", token: "selection", mention: { type: "selection", uri: "file:///ws/a.py", range } },
      { label: "shot.png", title: "", icon: "file-media", mention: { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" } },
      { label: "a.py:1-2", title: "", icon: "file-code", context: { uri: "file:///ws/a.py", range } },
    ];
    assert.deepEqual(promptAttachments("why does @calc.py fail?", attachments), {
      context: [{ uri: "file:///ws/a.py", range }],
      mentions: [
        { type: "file", uri: "file:///ws/calc.py" },
        { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
      ],
    });
    assert.ok(hasToken("see @calc.py.", "calc.py"));
    assert.ok(!hasToken("see @calc.pyx", "calc.py"));
    assert.ok(!hasToken("see x@calc.py", "calc.py"));
  });

  test("images: type, the agent's promptCapabilities.image and the size limit, each with a clear message", () => {
    assert.equal(imageProblem("shot.png", "image/png", 1000, 5000, true), undefined);
    assert.equal(imageProblem("shot.png", "image/png", 1000, 5000, undefined), undefined);
    assert.match(imageProblem("notes.txt", "text/plain", 10, 5000, true) ?? "", /notes.txt is not an image/);
    assert.match(imageProblem("shot.png", "image/png", 10, 5000, false) ?? "", /does not accept images \(its promptCapabilities.image is off\)/);
    assert.equal(
      imageProblem("big.png", "image/png", 6_000_000, 5_242_880, true),
      "big.png is 6,000,000 bytes, over the 5,242,880 bytes of acpls.context.maxImageBytes: not attached.",
    );
    assert.equal(base64Size("iVBORw0KGgo="), 8);
    assert.equal(base64Size(Buffer.from("hello world!").toString("base64")), 12);
    assert.equal(imageTypeOf("a/B.JPG"), "image/jpeg");
    assert.equal(imageTypeOf("a.py"), undefined);
  });

  test("dropped URIs: text/uri-list, else VS Code's JSON list", () => {
    assert.deepEqual(droppedUris("# comment\r\nfile:///ws/a.png\r\nfile:///ws/b.py\r\n", ""), ["file:///ws/a.png", "file:///ws/b.py"]);
    assert.deepEqual(droppedUris("", '["file:///ws/c.png"]'), ["file:///ws/c.png"]);
    assert.deepEqual(droppedUris("", "not json"), []);
  });

  test("the webview's mention and image messages are checked like the others", () => {
    assert.ok(isPanelMessage({ type: "mentionQuery", seq: 3, prefix: "ca" }));
    assert.ok(isPanelMessage({ type: "pickMention", id: "file:file:///ws/calc.py" }));
    assert.ok(isPanelMessage({ type: "attachImage", name: "a.png", mimeType: "image/png", data: "iVBORw0KGgo=" }));
    assert.ok(!isPanelMessage({ type: "attachImage", name: "a.png", mimeType: "image/png", data: "not base64!" }));
    assert.ok(isPanelMessage({ type: "attachDropped", uris: ["file:///ws/a.png"] }));
    assert.ok(!isPanelMessage({ type: "attachDropped", uris: [1] }));
    assert.ok(!isPanelMessage({ type: "mentionQuery", prefix: "ca" }));
  });

  test("copy as context: a message or tool call quoted after the prompt's text", () => {
    const quote = quoteAsContext("agent message", "The bug is in subtract().\n\n");
    assert.equal(quote, "Context (agent message, copied from the conversation):\n```\nThe bug is in subtract().\n```\n");
    assert.equal(appendQuote("", quote), quote);
    assert.equal(appendQuote("Fix it.\n", quote), `Fix it.\n\n${quote}`);
    assert.match(quoteAsContext("x", "a ```py``` b"), /^Context \(x, copied from the conversation\):\n````\n/);
    const call = {
      toolCallId: "t1",
      title: "Run tests",
      kind: "execute",
      status: "failed",
      locations: [{ path: "/ws/calc.py", line: 3 }],
      content: [
        { type: "content", content: { type: "text", text: "1 failed" } },
        { type: "diff", path: "/ws/calc.py", oldText: "a", newText: "b" },
        { type: "terminal", terminalId: "term-1" },
      ],
    };
    assert.equal(toolCallText(call), "Run tests (execute): failed\nat /ws/calc.py:3\n1 failed\ndiff of /ws/calc.py\nterminal term-1");
  });

  test("@session, @file:, @symbol: and @terminal: offer only their kind", () => {
    assert.deepEqual(mentionFilter("session"), { only: "session", query: "" });
    assert.deepEqual(mentionFilter("session:fix"), { only: "session", query: "fix" });
    assert.deepEqual(mentionFilter("file:src/a"), { only: "file", query: "src/a" });
    assert.deepEqual(mentionFilter("sess"), { query: "sess" });
    const candidates = [
      { type: "file" as const, label: "calc.py", uri: "file:///ws/calc.py" },
      { type: "session" as const, label: "s-1 (claude, 2026-12-02 01:00)", sessionId: "s-1" },
    ];
    assert.deepEqual(mentionItems("session", state, candidates, []).map((i) => i.token), ["session:s-1"]);
    assert.deepEqual(mentionItems("terminal:", state, candidates, []).map((i) => i.token), ["terminal:term-1"]);
    assert.deepEqual(mentionItems("file:", state, candidates, []).map((i) => i.token), ["calc.py"]);
  });
});
