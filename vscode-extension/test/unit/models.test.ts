import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { baselineText, fileDescription, hunkLabel, hunkPreview, totals } from "../../src/model/changes";
import { followHover } from "../../src/model/follow";
import { PromptHistory } from "../../src/model/history";
import { isPanelMessage, isTyping, selectsAllInField } from "../../src/model/panelMessages";
import {
  applyTextEdits,
  kindLabel,
  lineStats,
  optionLabel,
  permissionMessage,
  previewFiles,
  recordsRule,
  rememberText,
  toolCallDiffs,
} from "../../src/model/permission";
import { ruleItems } from "../../src/model/rules";
import { ServerLogParser } from "../../src/model/serverLog";
import { agentLabel, permissionUi, validateSettings } from "../../src/model/settings";
import { acceptSlash, completeSlash, slashQuery } from "../../src/model/slash";
import { CLEAR_SEQUENCE, exitLine, PACE, Pacer, TerminalText, terminalName } from "../../src/model/terminal";
import { type ChangesParams, parseServerMessage, type RequestPermissionParams } from "../../src/protocol";
import { fixture } from "./fixtures";

describe("permission prompt", () => {
  const params = parseServerMessage("acpls/requestPermission", fixture("acpls_requestPermission.json").params) as RequestPermissionParams;

  test("every option, in the agent's order, labelled by kind (unknown kinds too)", () => {
    assert.deepEqual(params.options.map(optionLabel), [
      "Allow",
      "Always allow",
      "Reject",
      "Never (always reject)",
      "Ask my team (acme escalate)",
      "Later (defer)",
    ]);
    assert.equal(kindLabel("reject_always"), "always reject");
  });

  test("a name that contradicts or hides its kind keeps the kind in the label", () => {
    assert.equal(optionLabel({ optionId: "a", name: "Allow", kind: "allow_always" }), "Allow (always allow)");
    assert.equal(optionLabel({ optionId: "a", name: "Yes", kind: "reject_once" }), "Yes (reject once)");
    assert.equal(optionLabel({ optionId: "a", name: "Always reject", kind: "reject_always" }), "Always reject");
    assert.equal(optionLabel({ optionId: "a", name: "Deny", kind: "reject_once" }), "Deny");
  });

  test("the message names the tool call, its kind and the changed file", () => {
    assert.equal(permissionMessage(params), "Edit calc.py (edit) · calc.py +1 -1 · Always records: edit: calc.py");
    const problems = { ...params, previewProblems: ["pre-image of /ws/calc.py does not match", { message: "binary file" }] };
    assert.match(permissionMessage(problems), /⚠ pre-image of \/ws\/calc.py does not match · ⚠ binary file$/);
  });

  test("the prompt names the rule an always answer records, or says it records nothing (issue 27)", () => {
    const execute = parseServerMessage("acpls/requestPermission", fixture("acpls_requestPermission.execute.json").params) as RequestPermissionParams;
    const rule = "execute: git -C /ws status [any arguments inside the workspace]";
    assert.equal(rememberText(execute), `Always records: ${rule}`);
    assert.equal(permissionMessage(execute), `git -C /ws status (execute) · Always records: ${rule}`);
    assert.deepEqual(execute.options.map(recordsRule), [false, true, false]);
    const nothing = parseServerMessage("acpls/requestPermission", fixture("acpls_requestPermission.records_nothing.json").params) as RequestPermissionParams;
    assert.equal(rememberText(nothing), "Always records nothing here: you will be asked again.");
    assert.match(permissionMessage(nothing), / · Always records nothing here: you will be asked again\.$/);
    // No "always" option, or rules off (no rememberAs): nothing is said.
    const onceOnly = { ...execute, options: execute.options.filter((o) => !recordsRule(o)) };
    assert.equal(permissionMessage(onceOnly), "git -C /ws status (execute)");
    const { rememberAs: _dropped, ...rulesOff } = execute;
    assert.equal(rememberText(rulesOff), undefined);
  });

  test("the rules list shows each rule as the prompt did, removable by id", () => {
    const items = ruleItems([
      { ruleId: "r1", decision: "allow", kind: "execute", agent: "claude", createdAt: "2026-12-05T12:00:00+00:00", workspace: "/ws",
        commandPrefix: "git status", commandArgs: "any", description: "execute: git status [any arguments inside the workspace]" },
      { ruleId: "r2", decision: "reject", kind: "fetch", urlOrigin: "https://evil.example" },
      { decision: "allow", kind: "edit" },
    ]);
    assert.deepEqual(items.map((i) => [i.ruleId, i.label, i.description]), [
      ["r1", "$(check) allow execute: git status [any arguments inside the workspace]", "claude"],
      ["r2", "$(close) reject fetch: https://evil.example", ""],
    ]);
  });

  test("the preview applied to the old text gives the agent's new text", () => {
    const files = previewFiles(params.preview);
    assert.equal(files.length, 1);
    const file = files[0];
    assert.ok(file?.op === "edit");
    assert.equal(file.uri, "file:///ws/calc.py");
    const diff = toolCallDiffs(params.toolCall)[0];
    assert.ok(diff !== undefined);
    assert.equal(applyTextEdits(diff.oldText, file.edits), diff.newText);
  });

  test("resource operations and the `changes` form of a WorkspaceEdit", () => {
    const files = previewFiles({
      documentChanges: [
        { kind: "create", uri: "file:///ws/new.py" },
        { textDocument: { uri: "file:///ws/new.py", version: null }, edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: "x\n" }] },
        { kind: "rename", oldUri: "file:///ws/a", newUri: "file:///ws/b" },
        { kind: "delete", uri: "file:///ws/c" },
        "junk",
      ],
      changes: { "file:///ws/d.py": [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } }, newText: "y" }, { bad: 1 }] },
    });
    assert.deepEqual(
      files.map((f) => `${f.op} ${f.uri}${f.op === "edit" ? ` ${f.edits.length}` : ""}`),
      ["create file:///ws/new.py", "edit file:///ws/new.py 1", "rename file:///ws/a", "delete file:///ws/c", "edit file:///ws/d.py 1"],
    );
    assert.deepEqual(previewFiles(undefined), []);
  });

  test("text edits: several, in any order, UTF-16 columns, past the end clamped", () => {
    const text = "héllo 😀 world\nline two\n";
    const edits = [
      { range: { start: { line: 1, character: 5 }, end: { line: 1, character: 8 } }, newText: "2" },
      { range: { start: { line: 0, character: 6 }, end: { line: 0, character: 8 } }, newText: ":)" },
      { range: { start: { line: 9, character: 0 }, end: { line: 9, character: 0 } }, newText: "end\n" },
    ];
    assert.equal(applyTextEdits(text, edits), "héllo :) world\nline 2\nend\n");
  });

  test("line stats ignore common head and tail", () => {
    assert.deepEqual(lineStats("a\nb\nc\n", "a\nB\nB2\nc\n"), { added: 2, removed: 1 });
    assert.deepEqual(lineStats("", "x\n"), { added: 1, removed: 0 });
    assert.deepEqual(lineStats("same", "same"), { added: 0, removed: 0 });
  });
});

describe("review", () => {
  const { files } = parseServerMessage("acpls/changes", fixture("acpls_changes.json").params) as ChangesParams;
  const file = files[0];

  test("the baseline is rebuilt from the current text and the hunks", () => {
    assert.ok(file !== undefined);
    assert.equal(baselineText("def add(a, b):\n    return a + b\n", file.hunks), "def add(a, b):\n    return a - b\n");
  });

  test("labels", () => {
    assert.ok(file !== undefined);
    const hunk = file.hunks[0];
    assert.ok(hunk !== undefined);
    assert.equal(fileDescription(file), "modified +1 -1");
    assert.equal(hunkLabel(hunk), "line 2: +1 -1");
    assert.equal(hunkPreview(hunk), "return a + b");
    assert.deepEqual(totals(files), { files: 1, hunks: 1 });
  });
});

describe("terminal text", () => {
  test("output before open is kept and written in order on open", () => {
    const written: string[] = [];
    const t = new TerminalText((s) => written.push(s));
    t.output("\x1b[32mok\x1b[0m\r\n");
    t.output("two\n");
    assert.deepEqual(written, []);
    t.open();
    t.output("three");
    assert.deepEqual(written, ["\x1b[32mok\x1b[0m\r\ntwo\r\n", "three"]);
  });

  test("lone LF becomes CRLF, also when CR ended the previous chunk", () => {
    const t = new TerminalText(() => undefined);
    assert.equal(t.normalise("a\nb\r\nc\r"), "a\r\nb\r\nc\r");
    assert.equal(t.normalise("\nd\n"), "\nd\r\n");
  });

  test("reset clears the screen and what is kept; the exit is shown once", () => {
    const written: string[] = [];
    const t = new TerminalText((s) => written.push(s));
    t.open();
    t.output("old");
    t.output("new", true);
    assert.deepEqual(written, ["old", CLEAR_SEQUENCE, "new"]);
    assert.equal(t.shown, "new");
    t.exited(1, undefined);
    t.exited(1, undefined);
    assert.equal(written.filter((w) => w.includes("exited with code 1")).length, 1);
  });

  test("a reset that acpls trimmed says how many bytes before it are not kept, also when reopened", () => {
    const written: string[] = [];
    const t = new TerminalText((s) => written.push(s));
    t.open();
    t.output("old\r\n");
    t.output("kept tail\r\n", true, 4194304);
    assert.equal(written[1], CLEAR_SEQUENCE);
    assert.match(written[2] ?? "", /\[acpls: 4194304 earlier bytes of this output are not kept \(acpls\.terminal\.scrollbackBytes\)\]/);
    assert.equal(written[3], "kept tail\r\n");
    t.output("more", true);
    assert.ok(!t.shown.includes("not kept"), "a reset with nothing dropped has no note");
    t.output("again", true, 7);
    t.close();
    t.open();
    assert.match(written.at(-1) ?? "", /\[acpls: 7 earlier bytes[^\]]*\]\x1b\[0m\r\nagain$/);
  });

  test("a reopened terminal shows everything since the last reset", () => {
    const written: string[] = [];
    const t = new TerminalText((s) => written.push(s));
    t.open();
    t.output("a");
    t.close();
    t.output("b");
    t.open();
    assert.deepEqual(written, ["a", "ab"]);
  });

  /** A terminal whose ticks run only when the test says. */
  function sliced(slice: number, options: { limit?: number; scrollbackLines?: number } = {}) {
    const written: string[] = [];
    const ticks: (() => void)[] = [];
    const t = new TerminalText((s) => written.push(s), { slice, tick: (work) => ticks.push(work), ...options });
    const drain = (): number => {
      let n = 0;
      for (let work = ticks.shift(); work !== undefined; work = ticks.shift()) {
        work();
        n += 1;
      }
      return n;
    };
    return { t, written, ticks, drain };
  }

  test("while keys arrive, slices shrink and spread out; without keys they are big again", () => {
    let now = 1000;
    const pacer = new Pacer(() => now, { slice: 1000, pause: 4, typingSlice: 100, typingPause: 6, typingMs: 600, window: 1e9, typingWindow: 1e9 });
    const written: string[] = [];
    const pauses: number[] = [];
    const ticks: (() => void)[] = [];
    const t = new TerminalText((s) => written.push(s), {
      slice: () => pacer.slice(),
      tick: (work) => {
        pauses.push(pacer.pause());
        ticks.push(work);
      },
    });
    t.open();
    t.output("x".repeat(5000));
    assert.deepEqual(
      written.map((w) => w.length),
      [1000],
      "nobody types: a big slice",
    );
    assert.deepEqual(pauses, [4]);
    pacer.key();
    ticks.shift()?.();
    ticks.shift()?.();
    assert.deepEqual(
      written.map((w) => w.length),
      [1000, 100, 100],
      "keys: small slices",
    );
    assert.deepEqual(pauses, [4, 6, 6], "further apart");
    now += 599;
    ticks.shift()?.();
    assert.equal(written.at(-1)?.length, 100, "still typing 599 ms after the key");
    now += 1;
    ticks.shift()?.();
    assert.equal(written.at(-1)?.length, 1000, "600 ms after the last key: big slices again");
    for (let work = ticks.shift(); work !== undefined; work = ticks.shift()) work();
    assert.equal(written.join(""), "x".repeat(5000), "every character, in order");
  });

  test("the default pace: typing slices are smaller and further apart than the others", () => {
    assert.ok(PACE.typingSlice < PACE.slice && PACE.typingPause >= PACE.pause && PACE.typingWindow < PACE.window);
    assert.ok(isPanelMessage({ type: "keys" }));
    assert.ok(isTyping("x", false) && isTyping("Backspace", false) && isTyping("Enter", true), "keys that edit the prompt");
    assert.ok(!isTyping("Enter", false), "the Enter that sends it");
    assert.ok(isPanelMessage({ type: "frame", seq: 3 }));
    assert.ok(!isPanelMessage({ type: "frame", seq: "3" }));
  });

  test("select-all stays in the panel's text field: Ctrl+A or ⌘A only, no other chord", () => {
    const mods = { ctrlKey: false, metaKey: false, altKey: false, shiftKey: false };
    assert.ok(selectsAllInField("a", { ...mods, ctrlKey: true }));
    assert.ok(selectsAllInField("a", { ...mods, metaKey: true }));
    assert.ok(selectsAllInField("A", { ...mods, ctrlKey: true }), "with Caps Lock on");
    assert.ok(!selectsAllInField("a", mods), "a plain a is typing");
    assert.ok(!selectsAllInField("a", { ...mods, ctrlKey: true, shiftKey: true }), "Ctrl+Shift+A is the workbench's");
    assert.ok(!selectsAllInField("a", { ...mods, ctrlKey: true, altKey: true }));
    assert.ok(!selectsAllInField("c", { ...mods, ctrlKey: true }), "copy goes on to the workbench as before");
  });

  /** Terminals on one pacer whose timers and probes run only when the test says. */
  function paced(window: number) {
    const timers: (() => void)[] = [];
    const answers: (() => void)[] = [];
    let probes = 0;
    const pacer = new Pacer(() => 0, { slice: 100, pause: 4, typingSlice: 10, typingPause: 6, typingMs: 600, window, typingWindow: window }, (work) => timers.push(work));
    pacer.probe = () => {
      probes += 1;
      return new Promise<void>((resolve) => answers.push(resolve));
    };
    const terminal = () => {
      const written: string[] = [];
      const t = new TerminalText(
        (s) => {
          written.push(s);
          pacer.wrote(s.length);
        },
        { slice: () => pacer.slice(), tick: (work) => pacer.tick(work) },
      );
      t.open();
      return { t, written };
    };
    const runTimers = (): void => {
      for (let work = timers.shift(); work !== undefined; work = timers.shift()) work();
    };
    const settle = () => new Promise((r) => setImmediate(r));
    return { pacer, terminal, runTimers, answers, settle, probes: () => probes };
  }

  test("with a probe, no more than the window is in flight until the browser answers; all of it, in order", async () => {
    const { pacer, terminal, runTimers, answers, settle, probes } = paced(250);
    const a = terminal();
    const b = terminal();
    a.t.output("a".repeat(1000));
    b.t.output("b".repeat(1000));
    runTimers();
    // 100 from each at once, then ticks until 250 are in flight: one more slice, then they wait.
    const sent = (): number => [...a.written, ...b.written].join("").length;
    assert.equal(sent(), 300, "the window (250) is reached: the writes stop");
    assert.equal(pacer.inFlight, 300);
    assert.equal(probes(), 1, "one probe at a time");
    runTimers();
    assert.equal(sent(), 300, "nothing more until the answer");
    // The first probe covered the first 100: 200 left in flight, under the window: writes go on.
    answers.shift()?.();
    await settle();
    assert.ok(sent() > 300, "the answer lets the next slices go");
    for (let i = 0; i < 100 && sent() < 2000; i++) {
      answers.shift()?.();
      await settle();
      runTimers();
    }
    assert.equal(a.written.join(""), "a".repeat(1000));
    assert.equal(b.written.join(""), "b".repeat(1000));
  });

  test("without a probe (no panel shown) the timer pace alone", () => {
    const { pacer, terminal, runTimers } = paced(150);
    pacer.probe = undefined;
    const a = terminal();
    a.t.output("a".repeat(1000));
    runTimers();
    assert.equal(a.written.join(""), "a".repeat(1000));
    assert.equal(pacer.inFlight, 0);
  });

  test("a long output goes out in slices, one per tick, in order, the exit line last", () => {
    const { t, written, ticks, drain } = sliced(100);
    t.open();
    const lines = Array.from({ length: 50 }, (_, i) => `line ${i}\r\n`).join("");
    t.output(lines);
    t.exited(0, undefined);
    assert.equal(written.length, 1, "one slice now, the rest on later ticks");
    assert.equal(ticks.length, 1, "one tick pending at a time");
    assert.ok(drain() > 3);
    assert.ok(written.every((w) => w.length <= 100));
    const all = written.join("");
    assert.ok(all.startsWith(lines));
    assert.match(all.slice(lines.length), /^\r\n\x1b\[2m\[process exited with code 0\]\x1b\[0m\r\n$/);
    assert.equal(t.backlog, 0);
  });

  test("nothing is written before the dimensions are known", () => {
    const { t, written, drain } = sliced(1000);
    t.output("first\r\n");
    t.open(false);
    t.output("second\r\n");
    drain();
    assert.deepEqual(written, []);
    t.resized();
    drain();
    assert.equal(written.join(""), "first\r\nsecond\r\n");
  });

  test("a slice never splits a surrogate pair", () => {
    const { t, written, drain } = sliced(3);
    t.open();
    t.output("ab😀cd😀");
    drain();
    assert.equal(written.join(""), "ab😀cd😀");
    for (const w of written) assert.ok(!/[\ud800-\udbff]$/.test(w), JSON.stringify(w));
  });

  test("a reset drops what was still waiting and clears the screen first", () => {
    const { t, written, drain } = sliced(4);
    t.open();
    t.output("0123456789");
    t.output("new", true);
    drain();
    assert.equal(written.join(""), `0123${CLEAR_SEQUENCE}new`);
  });

  test("with settle, the exit line waits until output stops: late output of the same flush goes above it", () => {
    const written: string[] = [];
    const settles: (() => void)[] = [];
    const t = new TerminalText((s) => written.push(s), { settle: (work) => settles.push(work) });
    t.open();
    t.output("a\r\n");
    t.exited(0, undefined);
    t.output("late\r\n");
    assert.equal(settles.length, 1);
    settles.shift()?.();
    assert.ok(!written.join("").includes("exited"), "output came while settling: it waits one more tick");
    assert.equal(settles.length, 1);
    settles.shift()?.();
    assert.match(written.join(""), /^a\r\nlate\r\n\r\n\x1b\[2m\[process exited with code 0\]/);
    t.exited(0, undefined);
    assert.equal(settles.length, 0, "shown once");
  });

  test("a trimmed replay says how much is not kept; the exit line says when the scrollback is passed", () => {
    const { t, written, drain } = sliced(1 << 20, { limit: 20, scrollbackLines: 3 });
    for (let i = 0; i < 10; i++) t.output(`l${i}\n`);
    t.exited(0, undefined);
    assert.ok(t.trimmed > 0);
    t.open();
    drain();
    const all = written.join("");
    assert.match(all, /^\x1b\[2m\[acpls: \d+ earlier characters of this output are not kept \(acpls\.terminal\.scrollbackBytes is 20\)\]/);
    assert.match(all, /\[process exited with code 0 · 10 lines, this pane keeps the last 3 \(terminal\.integrated\.scrollback\)\]/);
  });

  test("what is kept is bounded", () => {
    const t = new TerminalText(() => undefined, 10);
    for (let i = 0; i < 100; i++) t.output("12345");
    assert.ok(t.shown.length <= 10);
    assert.ok(t.shown.endsWith("12345"));
  });

  test("names and exit lines", () => {
    assert.equal(terminalName("pytest -q", "t1"), "pytest -q");
    assert.equal(terminalName("/venv/bin/python /src/demo/checks.py --tests a.py", "t1"), "python checks.py --tests a.py");
    assert.equal(terminalName("cd / && ls", "t1"), "cd / && ls");
    assert.equal(terminalName(undefined, "t1"), "agent: t1");
    assert.equal(terminalName("x".repeat(60), "t1").length, 40);
    assert.equal(exitLine(2, undefined), "[process exited with code 2]");
    assert.equal(exitLine(undefined, "SIGTERM"), "[process killed by SIGTERM]");
  });
});

describe("settings", () => {
  test("valid values become the server's nested settings", () => {
    const values: Record<string, unknown> = {
      agent: "demo",
      protocolVersion: 2,
      "follow.enabled": false,
      "permissions.autoApprove": ["read"],
      "terminal.scrollbackBytes": 1024,
      "log.level": "debug",
    };
    const { settings, problems } = validateSettings((key) => values[key]);
    assert.deepEqual(problems, []);
    assert.deepEqual(settings, {
      agent: "demo",
      protocolVersion: 2,
      follow: { enabled: false },
      permissions: { autoApprove: ["read"] },
      terminal: { scrollbackBytes: 1024 },
      log: { level: "debug" },
    });
  });

  test("an agent command object is checked", () => {
    const ok = validateSettings((key) => (key === "agent" ? { command: "npx", args: ["-y", "x"], env: { A: "1" } } : undefined));
    assert.deepEqual(ok.problems, []);
    const bad = validateSettings((key) => (key === "agent" ? { command: "npx", args: "-y" } : undefined));
    assert.deepEqual(bad.settings, {});
    assert.match(bad.problems[0] ?? "", /acpls.agent `args` must be a list of strings/);
  });

  test("the agents setting maps names to what acpls.agent takes", () => {
    const agents = { mine: { command: "my-agent", args: ["--acp"] }, fast: "gemini" };
    const ok = validateSettings((key) => (key === "agents" ? agents : undefined));
    assert.deepEqual(ok.problems, []);
    assert.deepEqual(ok.settings, { agents });
    const bad = validateSettings((key) => (key === "agents" ? { mine: { args: ["x"] } } : undefined));
    assert.deepEqual(bad.settings, {});
    assert.match(bad.problems[0] ?? "", /acpls.agents mine: needs a non-empty `command` string/);
    assert.match(validateSettings((key) => (key === "agents" ? ["gemini"] : undefined)).problems[0] ?? "", /acpls.agents must map/);
  });

  test("bad values are reported and left out", () => {
    const values: Record<string, unknown> = { protocolVersion: 3, "terminal.scrollbackBytes": -1, "files.allowedRoots": ["relative"], "log.level": "loud" };
    const { settings, problems } = validateSettings((key) => values[key]);
    assert.deepEqual(settings, {});
    assert.equal(problems.length, 4);
  });

  test("ui settings", () => {
    assert.equal(permissionUi("quickPick"), "quickPick");
    assert.equal(permissionUi("bogus"), "notification");
    assert.equal(agentLabel({ command: "/usr/bin/goose" }), "goose");
    assert.equal(agentLabel("claude"), "claude");
  });
});

describe("prompt box", () => {
  const commands = [
    { name: "plan", description: "Make a plan" },
    { name: "review", description: "Review" },
    { name: "explain-plan", description: "Explain" },
  ];

  test("slash query only in a leading /word at the caret", () => {
    assert.deepEqual(slashQuery("/pl", 3), { prefix: "pl", start: 0, end: 3 });
    assert.equal(slashQuery("hello /pl", 9), undefined);
    assert.equal(slashQuery("/plan now", 8), undefined);
    assert.deepEqual(slashQuery("  /re", 5), { prefix: "re", start: 2, end: 5 });
  });

  test("completion: prefix matches first, then substring matches", () => {
    assert.deepEqual(completeSlash(commands, "pl").map((c) => c.name), ["plan", "explain-plan"]);
    assert.deepEqual(completeSlash(commands, "").map((c) => c.name), ["explain-plan", "plan", "review"]);
    assert.deepEqual(completeSlash(commands, "zzz"), []);
  });

  test("accepting replaces the slash word", () => {
    const query = slashQuery("/pl tests", 3);
    assert.ok(query !== undefined);
    assert.deepEqual(acceptSlash("/pl tests", query, commands[0] ?? { name: "" }), { text: "/plan tests", caret: 6 });
  });

  test("history walks back and forth and keeps the draft", () => {
    const h = new PromptHistory();
    h.add("one");
    h.add("two");
    h.add("two");
    assert.equal(h.previous("draft"), "two");
    assert.equal(h.previous("two"), "one");
    assert.equal(h.previous("one"), undefined);
    assert.equal(h.next(), "two");
    assert.equal(h.next(), "draft");
    assert.equal(h.next(), undefined);
    assert.deepEqual(h.all(), ["one", "two"]);
  });

  test("webview messages are checked before use", () => {
    assert.ok(isPanelMessage({ type: "prompt", text: "hi" }));
    assert.ok(!isPanelMessage({ type: "prompt", text: 1 }));
    assert.ok(!isPanelMessage({ type: "runShell", cmd: "rm" }));
    assert.ok(!isPanelMessage(null));
    assert.ok(isPanelMessage({ type: "openLocation", path: "/a", line: 3 }));
    assert.ok(isPanelMessage({ type: "answerPermission", key: "p1", optionId: "allow" }));
    assert.ok(!isPanelMessage({ type: "answerPermission", key: "p1" }));
  });

  test("follow hover says what the agent does", () => {
    assert.match(followHover("read"), /agent is reading/);
    assert.match(followHover("edit"), /agent is editing/);
    assert.match(followHover(undefined), /agent is working here/);
  });
});

describe("server log lines", () => {
  test("each line at its level; traceback lines follow the line before", () => {
    const parser = new ServerLogParser();
    assert.deepEqual(parser.parse("2026-11-30 06:29:47,826 INFO acpls.server: editor connected"), { level: "info", text: "acpls.server: editor connected" });
    assert.deepEqual(parser.parse("2026-11-30 06:29:48,001 WARNING acpls.x: odd"), { level: "warn", text: "acpls.x: odd" });
    assert.equal(parser.parse("2026-11-30 06:29:48,002 ERROR acpls.x: boom").level, "error");
    assert.deepEqual(parser.parse("Traceback (most recent call last):"), { level: "error", text: "Traceback (most recent call last):" });
    assert.equal(parser.parse("2026-11-30 06:29:48,003 DEBUG acpls.y: detail").level, "debug");
    assert.equal(parser.parse("  continuation").level, "debug");
  });

  test("a line before any level counts as an error (a crash before logging starts)", () => {
    assert.equal(new ServerLogParser().parse("ModuleNotFoundError: No module named 'orjson'").level, "error");
  });
});
