import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  addLocalPrompt,
  addTurnEnd,
  applyUpdate,
  ConversationStore,
  emptySession,
  MAX_ITEMS,
  messageText,
  stateLabel,
  subagentSummary,
  toolCallTargets,
  toolKindIcon,
  toolStatusLabel,
} from "../../src/model/conversation";
import { type KnownSessionUpdate, parseServerMessage, type SessionUpdate, type SessionUpdateParams } from "../../src/protocol";
import { fixture, loadFixtures } from "./fixtures";

function update(file: string): SessionUpdate {
  return (parseServerMessage("acpls/sessionUpdate", fixture(file).params) as SessionUpdateParams).update;
}

const chunk = (messageId: string, text: string, role = "agent"): SessionUpdate => ({
  sessionUpdate: "message_chunk",
  role,
  messageId,
  content: { type: "text", text },
});

describe("conversation model", () => {
  test("every session update fixture applies", () => {
    const store = new ConversationStore();
    for (const f of loadFixtures().filter((x) => x.method === "acpls/sessionUpdate")) {
      const params = parseServerMessage("acpls/sessionUpdate", f.params) as SessionUpdateParams;
      store.apply(params.sessionId, params.update);
    }
    const session = store.session("s1");
    assert.equal(store.current, "s1");
    assert.ok(session.items.some((i) => i.kind === "tool_call"));
    assert.ok(session.items.some((i) => i.kind === "unknown"));
    assert.ok(session.plan !== undefined && session.plan.length === 2);
    assert.equal(session.modes?.currentModeId, "code");
    assert.equal(session.configOptions[0]?.configId, "model");
    assert.equal(session.usage?.used, 1200);
    assert.equal(session.state, "idle");
  });

  test("streamed chunks of one message append to one item and report it changed", () => {
    const session = emptySession("s");
    assert.deepEqual(applyUpdate(session, chunk("m1", "Hel"), 1).items, ["msg:m1"]);
    const change = applyUpdate(session, chunk("m1", "lo **world**"), 2);
    assert.deepEqual(change.items, ["msg:m1"]);
    assert.equal(session.items.length, 1);
    const item = session.items[0];
    assert.ok(item?.kind === "message");
    assert.equal(item.blocks.length, 1, "consecutive text chunks are coalesced");
    assert.equal(messageText(item), "Hello **world**");
  });

  test("a thought and a reply are separate items with their roles", () => {
    const session = emptySession("s");
    applyUpdate(session, update("acpls_sessionUpdate.thought_chunk.json"), 1);
    applyUpdate(session, chunk("m9", "Done."), 2);
    assert.deepEqual(
      session.items.map((i) => (i.kind === "message" ? i.role : i.kind)),
      ["thought", "agent"],
    );
  });

  test("a whole message replaces the chunks seen so far", () => {
    const session = emptySession("s");
    applyUpdate(session, chunk("m1", "draft"), 1);
    applyUpdate(session, { sessionUpdate: "message", role: "agent", messageId: "m1", content: [{ type: "text", text: "final" }] }, 2);
    const item = session.items[0];
    assert.ok(item?.kind === "message");
    assert.equal(messageText(item), "final");
  });

  test("a tool call is updated in place, keeping its position", () => {
    const session = emptySession("s");
    const first = update("acpls_sessionUpdate.tool_call.json") as Extract<KnownSessionUpdate, { sessionUpdate: "tool_call" }>;
    applyUpdate(session, first, 1);
    applyUpdate(session, chunk("m2", "after"), 2);
    assert.equal(first.sessionUpdate, "tool_call");
    const done = { ...first, toolCall: { ...first.toolCall, status: "completed" } };
    const change = applyUpdate(session, done, 3);
    assert.deepEqual(change.items, [`tool:${first.toolCall.toolCallId}`]);
    assert.equal(session.items.length, 2);
    const item = session.items[0];
    assert.ok(item?.kind === "tool_call");
    assert.equal(item.toolCall.status, "completed");
  });

  test("the local echo of a prompt goes when the server's user message arrives", () => {
    const session = emptySession("s");
    addLocalPrompt(session, "fix it");
    assert.equal(session.items.length, 1);
    const change = applyUpdate(session, chunk("u1", "fix it", "user"), 1);
    assert.equal(change.removed.length, 1);
    assert.equal(session.items.length, 1);
    assert.equal(session.items[0]?.id, "msg:u1");
  });

  test("header changes (modes, commands, state) are flagged, not items", () => {
    const session = emptySession("s");
    const change = applyUpdate(session, update("acpls_sessionUpdate.available_commands.json"), 1);
    assert.equal(change.header, true);
    assert.deepEqual(change.items, []);
    assert.ok(session.commands.length > 0);
  });

  test("the view is bounded: the oldest items go and are reported removed", () => {
    const session = emptySession("s");
    let removed = 0;
    for (let i = 0; i < MAX_ITEMS + 5; i++) removed += applyUpdate(session, chunk(`m${i}`, "x"), i).removed.length;
    assert.equal(session.items.length, MAX_ITEMS);
    assert.equal(removed, 5);
    assert.equal(session.trimmed, 5);
    assert.equal(session.items[0]?.id, "msg:m5");
  });

  test("turn end is a footer item", () => {
    const session = emptySession("s");
    addTurnEnd(session, "end_turn");
    assert.equal(session.items[0]?.kind, "turn_end");
  });

  test("tool-call targets: diffs, terminals, then locations", () => {
    const targets = toolCallTargets({
      toolCallId: "c",
      content: [
        { type: "diff", path: "/ws/a.py", oldText: "", newText: "x" },
        { type: "terminal", terminalId: "t1" },
        { type: "content", content: { type: "text", text: "hi" } },
      ],
      locations: [{ path: "/ws/b.py", line: 3 }],
    });
    assert.deepEqual(targets, [
      { kind: "diff", path: "/ws/a.py" },
      { kind: "terminal", terminalId: "t1" },
      { kind: "location", path: "/ws/b.py", line: 3 },
    ]);
  });

  test("labels for statuses and kinds, unknown ones included", () => {
    assert.equal(toolStatusLabel("in_progress"), "running");
    assert.equal(toolStatusLabel("_acme_waiting_for_ci"), "_acme_waiting_for_ci");
    assert.equal(toolKindIcon("read"), "eye");
    assert.equal(toolKindIcon("_acme_deploy"), "tools");
  });
});

describe("sub-agents", () => {
  test("a sub-agent's tool calls nest under their parent, updated in place; an orphan stands alone", () => {
    const session = emptySession("s");
    const tool = (toolCallId: string, status: string, parentToolCallId?: string): KnownSessionUpdate => ({
      sessionUpdate: "tool_call",
      toolCall: { toolCallId, title: toolCallId, kind: "read", status, content: [], locations: [], ...(parentToolCallId === undefined ? {} : { parentToolCallId }) },
    });
    applyUpdate(session, tool("task", "in_progress"), 1);
    const change = applyUpdate(session, tool("c1", "in_progress", "task"), 2);
    assert.deepEqual(change.items, ["tool:task"]);
    applyUpdate(session, tool("c2", "completed", "task"), 3);
    applyUpdate(session, tool("c1", "completed", "task"), 4);
    applyUpdate(session, tool("lost", "completed", "elsewhere"), 5);
    assert.deepEqual(session.items.map((i) => i.id), ["tool:task", "tool:lost"]);
    const parent = session.items[0];
    assert.ok(parent?.kind === "tool_call");
    assert.deepEqual(parent.children?.map((c) => [c.toolCallId, c.status]), [["c1", "completed"], ["c2", "completed"]]);
    assert.equal(subagentSummary(parent.children ?? []), "Sub-agent: 2 tool calls");
    assert.equal(subagentSummary([{ toolCallId: "x", status: "in_progress" } as never]), "Sub-agent: 1 tool call, 1 running");
  });
});

describe("the session's state", () => {
  test("running, idle, needs you", () => {
    assert.deepEqual(["running", "idle", "requires_action", "_acme_paused"].map(stateLabel), ["running", "idle", "needs you", "_acme_paused"]);
  });
});
