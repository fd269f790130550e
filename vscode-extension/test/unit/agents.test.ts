import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { agentPickItem, agentPickItems, registryNote } from "../../src/model/agents";
import type { AgentEntry } from "../../src/protocol";
import { COMMAND_RESULTS } from "../../src/protocol";

const gemini: AgentEntry = {
  id: "gemini",
  name: "Gemini CLI",
  description: "Google's official CLI for Gemini",
  version: "0.61.0",
  icon: "https://cdn.agentclientprotocol.com/registry/v1/latest/gemini.svg",
  distributions: ["npx"],
  preset: true,
  registryId: "gemini",
  kind: "preset",
  installed: false,
  runnable: true,
  command: ["npx", "-y", "--package=@google/gemini-cli@0.61.0", "--", "gemini", "--acp"],
  authMethods: [{ id: "gemini-api-key", name: "Gemini API key" }, { id: "oauth" }],
};
const codex: AgentEntry = {
  id: "codex-acp",
  name: "Codex CLI",
  description: "ACP adapter for OpenAI's coding assistant",
  version: "0.9.2",
  icon: null,
  distributions: ["binary"],
  preset: false,
  installed: false,
  runnable: false,
};
const kimi: AgentEntry = { ...codex, id: "kimi", name: "Kimi CLI", problem: "its binaries are for darwin-aarch64, not for linux-aarch64" };
const demo: AgentEntry = { ...codex, id: "demo", name: "acpls demo agent", version: null, distributions: [], installed: true, runnable: true };

describe("agent picker", () => {
  test("an item shows name, version, id, description, kinds, install state and sign-in", () => {
    const item = agentPickItem(gemini, "demo");
    assert.equal(item.label, "Gemini CLI 0.61.0");
    assert.equal(item.description, "gemini · Google's official CLI for Gemini");
    assert.equal(item.detail, "not installed: fetched on first start · npx · sign-in: Gemini API key, oauth");
    assert.equal(item.iconUrl, gemini.icon);
    assert.equal(agentPickItem(codex, "demo").detail, "not installed: installed when chosen · binary");
    assert.equal(agentPickItem(codex, "demo").iconUrl, undefined);
    assert.equal(agentPickItem(demo, "demo").label, "$(check) acpls demo agent");
    assert.equal(agentPickItem(demo, "demo").detail, "installed · built in");
    assert.match(agentPickItem(kimi, "demo").detail, /^cannot run here: its binaries are for darwin-aarch64/);
  });

  test("the current agent first, then the usable ones, then those that cannot run here", () => {
    const order = agentPickItems([kimi, gemini, codex, demo], "demo").map((i) => i.id);
    assert.deepEqual(order, ["demo", "gemini", "codex-acp", "kimi"]);
  });

  test("the title says where the list came from", () => {
    assert.equal(registryNote({ source: "network", url: "u" }), "fresh");
    assert.equal(registryNote({ source: "snapshot", url: "u", error: "unreachable: x" }), "bundled snapshot; the last fetch failed: unreachable: x");
  });

  test("the result check accepts what the server sends", () => {
    const result = { agents: [gemini, codex, kimi, demo], default: "demo", platform: "linux-x86_64", registry: { url: "u", source: "cache", version: "1.0.0" } };
    assert.doesNotThrow(() => COMMAND_RESULTS["acpls.agents"](result, "r"));
    assert.throws(() => COMMAND_RESULTS["acpls.agents"]({ ...result, agents: [{ ...gemini, installed: "yes" }] }, "r"));
  });
});
