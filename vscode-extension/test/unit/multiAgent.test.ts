import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { agentInfo, newSessionPicks, sessionChoiceLabel, statusFor } from "../../src/model/multiAgent";
import { isPanelMessage } from "../../src/model/panelMessages";
import type { AgentEntry, AgentStatusParams, RunningAgent } from "../../src/protocol";
import { COMMAND_RESULTS, parseServerMessage } from "../../src/protocol";
import { fixture } from "./fixtures";

const entry = (id: string, name: string, problem?: string): AgentEntry => ({
  id,
  name,
  description: `${name} does things`,
  version: "1.0.0",
  icon: null,
  distributions: ["npx"],
  preset: true,
  installed: true,
  runnable: true,
  ...(problem !== undefined ? { problem } : {}),
});

describe("several agents side by side (protocol.md section 13)", () => {
  test("a new session's agent: the default first, then running agents, then every usable one", () => {
    const running: RunningAgent[] = [
      { agent: "claude", state: "running", default: true, sessions: ["a-1"] },
      { agent: "my-agent", state: "running", default: false, sessions: ["m-1", "m-2"] },
    ];
    const picks = newSessionPicks([entry("claude", "Claude Code"), entry("gemini", "Gemini CLI"), entry("far", "Far", "not for this platform")], running, "claude");
    assert.deepEqual(
      picks.map((p) => [p.label, p.description, p.agent]),
      [
        ["$(star-full) claude", "default agent · running · 1 session", undefined],
        ["$(vm-running) my-agent", "running · 2 sessions", "my-agent"],
        ["Gemini CLI 1.0.0", "gemini", "gemini"],
      ],
    );
  });

  test("the acpls.agents setting's names come after the running agents", () => {
    const running: RunningAgent[] = [{ agent: "mine", state: "running", default: false, sessions: [] }];
    const picks = newSessionPicks([entry("gemini", "Gemini CLI")], running, "claude", ["mine", "fast", "gemini"]);
    assert.deepEqual(
      picks.map((p) => [p.label, p.agent]),
      [
        ["$(star-full) claude", undefined],
        ["$(vm-running) mine", "mine"],
        ["$(gear) fast", "fast"],
        ["$(gear) gemini", "gemini"],
      ],
    );
  });

  test("sessions name their agent only when several agents have sessions", () => {
    const one = [{ sessionId: "a-1", title: "Fix", agent: "claude" }, { sessionId: "a-2", agent: "claude" }];
    assert.equal(sessionChoiceLabel(one[0]!, one), "Fix");
    const two = [...one, { sessionId: "g-123456789", agent: "gemini" }];
    assert.equal(sessionChoiceLabel(two[0]!, two), "Fix · claude");
    assert.equal(sessionChoiceLabel(two[2]!, two), "Session g-123456 · gemini");
    assert.equal(sessionChoiceLabel(two[0]!, two, "Renamed"), "Renamed · claude");
  });

  test("the header shows the shown session's agent, else the default agent", () => {
    const main = parseServerMessage("acpls/agentStatus", fixture("acpls_agentStatus.json").params);
    const second = parseServerMessage("acpls/agentStatus", fixture("acpls_agentStatus.second_agent.json").params);
    assert.equal(main.default, true);
    assert.equal(second.default, false);
    const statuses = new Map<string, AgentStatusParams>([
      ["demo", main],
      ["gemini", second],
    ]);
    assert.equal(agentInfo(statusFor(statuses, "gemini", main)!).label, "gemini-cli");
    assert.equal(agentInfo(statusFor(statuses, undefined, main)!).label, "acpls-demo");
    assert.equal(agentInfo(statusFor(statuses, "gone", main)!).label, "acpls-demo");
  });

  test("results carry the agent; the panel may ask to pick one", () => {
    assert.deepEqual(COMMAND_RESULTS["acpls.newSession"]({ sessionId: "b-1", agent: "beta" }, "result"), { sessionId: "b-1", agent: "beta" });
    const sessions = COMMAND_RESULTS["acpls.sessions"](
      {
        sessions: [{ sessionId: "a-1", active: false, agent: "alpha" }],
        defaultAgent: "alpha",
        agents: [{ agent: "alpha", state: "running", default: true, sessions: ["a-1"], protocolVersion: 1, pid: 42 }],
      },
      "result",
    );
    assert.equal(sessions.agents?.[0]?.pid, 42);
    assert.throws(() => COMMAND_RESULTS["acpls.sessions"]({ sessions: [], agents: [{ agent: 1 }] }, "result"));
    assert.ok(isPanelMessage({ type: "newSession", pickAgent: true }));
    assert.ok(isPanelMessage({ type: "newSession" }));
    assert.ok(!isPanelMessage({ type: "newSession", pickAgent: "yes" }));
  });
});
