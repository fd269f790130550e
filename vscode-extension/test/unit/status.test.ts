import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { currentMode, escapeMarkdown, type Modes, modeOfDefaultAgent, modePicks, modeTooltip, sessionModes, statusText } from "../../src/model/status";

const modes: Modes = {
  currentModeId: "plan",
  availableModes: [
    { id: "default", name: "Manual" },
    { id: "plan", name: "Plan", description: "Read and plan; no edits" },
  ],
};

describe("the status item's words", () => {
  test("the agent, then the shown session's mode, the meter and the waiting prompts", () => {
    assert.equal(statusText({ icon: "$(hubot)", agent: "claude", modes, pendingPermissions: 0 }), "$(hubot) claude · Plan");
    assert.equal(
      statusText({ icon: "$(loading~spin)", agent: "claude", modes, usage: { used: 420, size: 1000 }, pendingPermissions: 2 }),
      "$(loading~spin) claude · Plan $(dashboard) 42% $(bell-dot) 2",
    );
    assert.equal(statusText({ icon: "$(hubot)", agent: "demo", pendingPermissions: 0 }), "$(hubot) demo");
  });

  test("a mode change by the agent changes the text", () => {
    const changed: Modes = { ...modes, currentModeId: "default" };
    assert.equal(statusText({ icon: "$(hubot)", agent: "claude", modes: changed, pendingPermissions: 0 }), "$(hubot) claude · Manual");
  });

  test("a mode the agent names but does not list is shown by its id; none is shown as none", () => {
    const unlisted: Modes = { currentModeId: "https://example.com/modes#yolo", availableModes: [] };
    assert.deepEqual(currentMode(unlisted), { id: "https://example.com/modes#yolo", name: "https://example.com/modes#yolo" });
    assert.equal(currentMode({ currentModeId: "", availableModes: modes.availableModes }), undefined);
    assert.equal(currentMode(undefined), undefined);
    assert.equal(modeTooltip(undefined), undefined);
  });

  test("the agent's words are never icons nor Markdown", () => {
    const odd: Modes = { currentModeId: "x", availableModes: [{ id: "x", name: "$(bug) *bold*", description: "use `rm` [here](x)" }] };
    assert.equal(statusText({ icon: "$(hubot)", agent: "$(zap)", modes: odd, pendingPermissions: 0 }), "$(hubot) \\$(zap) · \\$(bug) *bold*");
    assert.equal(modeTooltip(odd), "mode **\\$\\(bug\\) \\*bold\\***: use \\`rm\\` \\[here\\]\\(x\\)");
    assert.equal(escapeMarkdown("a.b"), "a\\.b");
  });

  test("the tooltip names the mode and says what it does", () => {
    assert.equal(modeTooltip(modes), "mode **Plan**: Read and plan; no edits");
    assert.equal(modeTooltip({ ...modes, currentModeId: "default" }), "mode **Manual**");
  });
});

describe("a session's modes", () => {
  test("v1's modes; else (v2) the config option of category mode, its groups flattened", () => {
    assert.equal(sessionModes({ modes, configOptions: [] }), modes);
    const option = {
      configId: "mode",
      name: "Mode",
      category: "mode",
      currentValue: "code",
      options: [
        { value: "ask", name: "Ask", description: "Ask before every edit" },
        { group: "g", name: "More", options: [{ value: "code", name: "Code" }] },
      ],
    };
    const model = { configId: "model", name: "Model", category: "model", currentValue: "fast", options: [{ value: "fast", name: "Fast" }] };
    assert.deepEqual(sessionModes({ configOptions: [model, option] }), {
      currentModeId: "code",
      availableModes: [
        { id: "ask", name: "Ask", description: "Ask before every edit" },
        { id: "code", name: "Code" },
      ],
    });
    assert.equal(sessionModes({ configOptions: [model] }), undefined);
    assert.equal(sessionModes({ configOptions: [{ ...option, currentValue: true }] }), undefined);
    assert.equal(sessionModes(undefined), undefined);
  });
});

describe("whose mode the item shows", () => {
  test("the shown session's only when it is the default agent's (the agent the item names)", () => {
    assert.equal(modeOfDefaultAgent("claude", "claude"), true);
    assert.equal(modeOfDefaultAgent("gemini", "claude"), false);
    assert.equal(modeOfDefaultAgent(undefined, "claude"), true);
    assert.equal(modeOfDefaultAgent("gemini", undefined), true);
  });
});

describe("the status menu's modes", () => {
  test("every mode in the agent's order, the current one marked, its description as detail", () => {
    assert.deepEqual(modePicks(modes), [
      { label: "$(blank) mode: Manual", modeId: "default", current: false },
      { label: "$(check) mode: Plan", description: "current", detail: "Read and plan; no edits", modeId: "plan", current: true },
    ]);
    assert.deepEqual(modePicks(undefined), []);
  });
});
