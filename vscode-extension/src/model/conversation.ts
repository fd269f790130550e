// The conversation of each session as the agent panel shows it, built from `acpls/sessionUpdate`
// notifications. Pure: the extension host keeps one store (the source of truth, which survives the
// panel being hidden); the webview holds only the newest items of the shown session, posted by the
// host as they change (model/panelFeed.ts), and re-renders only what changed.

// Types only: the webview bundles this file and must not pull in the LSP protocol library.
import type {
  AvailableCommand,
  ConfigOption,
  ContentBlock,
  PlanEntry,
  SessionMode,
  SessionUpdate,
  ToolCall,
  UnknownSessionUpdate,
} from "../protocol";

function isUnknownUpdate(update: SessionUpdate): update is UnknownSessionUpdate {
  return (update as { unknown?: unknown }).unknown === true;
}

export type MessageItem = {
  kind: "message";
  id: string;
  role: string;
  blocks: ContentBlock[];
  /** A prompt the user typed here, shown until the server's own copy of it arrives. */
  localEcho?: boolean;
};
/** `children`: its sub-agent's tool calls (those naming it as `parentToolCallId`), in order. */
export type ToolCallItem = { kind: "tool_call"; id: string; toolCall: ToolCall; children?: ToolCall[] };
export type NoticeItem = { kind: "notice"; id: string; severity: string; title: string; description?: string };
export type CompactionItem = { kind: "compaction"; id: string; status: string; summary?: unknown; error?: unknown };
export type AutoPermissionItem = {
  kind: "auto_permission";
  id: string;
  toolCall: ToolCall;
  optionKind: string;
  ruleId?: string;
};
export type UnknownItem = { kind: "unknown"; id: string; raw: Record<string, unknown> };
export type TurnEndItem = { kind: "turn_end"; id: string; stopReason: string; error?: unknown; tokens?: string };

export type Item = MessageItem | ToolCallItem | NoticeItem | CompactionItem | AutoPermissionItem | UnknownItem | TurnEndItem;

export type SessionView = {
  sessionId: string;
  title?: string;
  state: string;
  stopReason?: string;
  items: Item[];
  plan?: PlanEntry[];
  modes?: { currentModeId: string; availableModes: SessionMode[] };
  configOptions: ConfigOption[];
  commands: AvailableCommand[];
  usage?: { used: number; size: number; cost?: unknown };
  /** Items dropped from the front to keep the view bounded. */
  trimmed: number;
};

/** What an update changed, so a renderer redraws only that. */
export type Change = { items: string[]; removed: string[]; header: boolean; plan: boolean };

/**
 * Most items a session view keeps; older ones are dropped (the transcript keeps everything) and the
 * panel says so (ChatWindow.note). High enough for a 20,000-update session to be kept whole: the panel
 * puts only a window of them in its page (model/chatWindow.ts), so the count costs memory, not speed.
 */
export const MAX_ITEMS = 50_000;

export function emptySession(sessionId: string): SessionView {
  return { sessionId, state: "idle", items: [], configOptions: [], commands: [], trimmed: 0 };
}

function noChange(): Change {
  return { items: [], removed: [], header: false, plan: false };
}

/**
 * Each session's items by id, and its local echoes, beside the view (a SessionView stays plain data
 * for postMessage). Looking an item up by scanning made a load of N updates take O(N²): every new
 * item scanned every older one. Rebuilt when the items were changed elsewhere (a new snapshot).
 */
type Index = { items: Item[]; byId: Map<string, Item>; echoes: Set<string> };
const indexes = new WeakMap<SessionView, Index>();

function indexOf(session: SessionView): Index {
  let index = indexes.get(session);
  if (index === undefined || index.items !== session.items || index.byId.size !== session.items.length) {
    index = { items: session.items, byId: new Map(), echoes: new Set() };
    for (const item of session.items) {
      index.byId.set(item.id, item);
      if (item.kind === "message" && item.localEcho === true) index.echoes.add(item.id);
    }
    indexes.set(session, index);
  }
  return index;
}

function findItem(session: SessionView, id: string): Item | undefined {
  return indexOf(session).byId.get(id);
}

function push(session: SessionView, item: Item, change: Change): void {
  const index = indexOf(session);
  session.items.push(item);
  index.byId.set(item.id, item);
  if (item.kind === "message" && item.localEcho === true) index.echoes.add(item.id);
  change.items.push(item.id);
  const excess = session.items.length - MAX_ITEMS;
  if (excess > 0) {
    for (const dropped of session.items.splice(0, excess)) {
      change.removed.push(dropped.id);
      index.byId.delete(dropped.id);
      index.echoes.delete(dropped.id);
    }
    session.trimmed += excess;
  }
}

/** A sub-agent's tool call goes into its parent's item (shown nested there) when the parent is in
 * the view; returns false when it has none here, and it then stands alone. */
function nestUnderParent(session: SessionView, call: ToolCall, change: Change): boolean {
  if (call.parentToolCallId === undefined) return false;
  const parent = findItem(session, `tool:${call.parentToolCallId}`);
  if (parent?.kind !== "tool_call") return false;
  const children = (parent.children ??= []);
  const at = children.findIndex((c) => c.toolCallId === call.toolCallId);
  if (at >= 0) children[at] = call;
  else children.push(call);
  change.items.push(parent.id);
  return true;
}

/** How a parent's nested sub-agent calls are summed up while collapsed. */
export function subagentSummary(children: readonly ToolCall[]): string {
  const running = children.filter((c) => c.status === undefined || c.status === "pending" || c.status === "in_progress").length;
  const count = `${children.length} tool call${children.length === 1 ? "" : "s"}`;
  return `Sub-agent: ${count}${running > 0 ? `, ${running} running` : ""}`;
}

function appendBlock(blocks: ContentBlock[], block: ContentBlock): void {
  const last = blocks[blocks.length - 1];
  if (last !== undefined && last.type === "text" && block.type === "text" && last.text !== undefined) {
    blocks[blocks.length - 1] = { ...last, text: last.text + (block.text ?? "") };
  } else {
    blocks.push({ ...block });
  }
}

/** Drops the local copy of the user's prompt once the server sends its own user message. */
function dropLocalEcho(session: SessionView, change: Change): void {
  const index = indexOf(session);
  if (index.echoes.size === 0) return;
  for (let i = session.items.length - 1; i >= 0; i--) {
    const item = session.items[i];
    if (item?.kind === "message" && item.localEcho) {
      session.items.splice(i, 1);
      index.byId.delete(item.id);
      index.echoes.delete(item.id);
      change.removed.push(item.id);
      return;
    }
  }
}

function upsertMessage(session: SessionView, role: string, messageId: string, change: Change): MessageItem {
  const id = `msg:${messageId}`;
  const existing = findItem(session, id);
  if (existing?.kind === "message") {
    change.items.push(id);
    return existing;
  }
  if (role === "user") dropLocalEcho(session, change);
  const item: MessageItem = { kind: "message", id, role, blocks: [] };
  push(session, item, change);
  return item;
}

let localCounter = 0;

/** Adds the prompt the user just sent, so it shows at once. */
export function addLocalPrompt(session: SessionView, text: string): Change {
  const change = noChange();
  localCounter += 1;
  push(session, { kind: "message", id: `local:${localCounter}`, role: "user", blocks: [{ type: "text", text }], localEcho: true }, change);
  return change;
}

/** Marks the end of a turn (the `acpls.prompt` result), shown as a small footer. */
export function addTurnEnd(session: SessionView, stopReason: string, error?: unknown, tokens?: string): Change {
  const change = noChange();
  localCounter += 1;
  const item: TurnEndItem = { kind: "turn_end", id: `end:${localCounter}`, stopReason, error };
  if (tokens !== undefined) item.tokens = tokens;
  push(session, item, change);
  return change;
}

/** Applies one normalised update (protocol.md section 5.4) and says what changed. */
export function applyUpdate(session: SessionView, update: SessionUpdate, sequence: number): Change {
  const change = noChange();
  if (isUnknownUpdate(update)) {
    push(session, { kind: "unknown", id: `unknown:${sequence}`, raw: update }, change);
    return change;
  }
  switch (update.sessionUpdate) {
    case "message_chunk":
      appendBlock(upsertMessage(session, update.role, update.messageId, change).blocks, update.content);
      break;
    case "message":
      upsertMessage(session, update.role, update.messageId, change).blocks = update.content.map((block) => ({ ...block }));
      break;
    case "tool_call": {
      if (nestUnderParent(session, update.toolCall, change)) break;
      const id = `tool:${update.toolCall.toolCallId}`;
      const existing = findItem(session, id);
      if (existing?.kind === "tool_call") {
        existing.toolCall = update.toolCall;
        change.items.push(id);
      } else {
        push(session, { kind: "tool_call", id, toolCall: update.toolCall }, change);
      }
      break;
    }
    case "plan":
      session.plan = update.entries;
      change.plan = true;
      break;
    case "available_commands":
      session.commands = update.availableCommands;
      change.header = true;
      break;
    case "modes":
      session.modes = { currentModeId: update.currentModeId, availableModes: update.availableModes };
      change.header = true;
      break;
    case "config_options":
      session.configOptions = update.configOptions;
      change.header = true;
      break;
    case "session_info":
      session.title = update.title;
      change.header = true;
      break;
    case "usage":
      session.usage = { used: update.used, size: update.size, cost: update.cost };
      change.header = true;
      break;
    case "state":
      session.state = update.state;
      session.stopReason = update.stopReason;
      change.header = true;
      break;
    case "notice":
      push(session, { kind: "notice", id: `notice:${sequence}`, severity: update.severity, title: update.title, description: update.description }, change);
      break;
    case "compaction": {
      const id = `compaction:${update.compactionId}`;
      const existing = findItem(session, id);
      if (existing?.kind === "compaction") {
        Object.assign(existing, { status: update.status, summary: update.summary, error: update.error });
        change.items.push(id);
      } else {
        push(session, { kind: "compaction", id, status: update.status, summary: update.summary, error: update.error }, change);
      }
      break;
    }
    case "auto_permission":
      push(session, { kind: "auto_permission", id: `auto:${sequence}`, toolCall: update.toolCall, optionKind: update.optionKind, ruleId: update.ruleId }, change);
      break;
  }
  return change;
}

/** The text of a message: its text blocks joined, other blocks as short markers. */
export function messageText(item: MessageItem): string {
  return item.blocks.map(blockText).join("");
}

export function blockText(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text ?? "";
    case "resource_link":
      return `[${String(block.name ?? block.uri ?? "resource")}](${String(block.uri ?? "")})`;
    case "resource": {
      const resource = block.resource as { uri?: unknown } | undefined;
      return `\n\`${String(resource?.uri ?? "resource")}\`\n`;
    }
    default:
      return `\n[${block.type}]\n`;
  }
}

/** The store of every session the panel has seen, and which one it shows. */
export class ConversationStore {
  readonly sessions = new Map<string, SessionView>();
  current: string | undefined;
  private sequence = 0;

  session(sessionId: string): SessionView {
    let session = this.sessions.get(sessionId);
    if (session === undefined) {
      session = emptySession(sessionId);
      this.sessions.set(sessionId, session);
    }
    return session;
  }

  apply(sessionId: string, update: SessionUpdate): Change {
    this.sequence += 1;
    if (this.current === undefined) this.current = sessionId;
    return applyUpdate(this.session(sessionId), update, this.sequence);
  }

  currentSession(): SessionView | undefined {
    return this.current === undefined ? undefined : this.sessions.get(this.current);
  }
}

/** Short status of a tool call for its card. */
/** The session's state (ACP v2 `state_update`) as the panel says it: running, idle, needs you. */
export function stateLabel(state: string): string {
  return state === "requires_action" ? "needs you" : state;
}

export function toolStatusLabel(status: string | undefined): string {
  switch (status) {
    case undefined:
    case "pending":
      return "pending";
    case "in_progress":
      return "running";
    case "completed":
      return "done";
    case "failed":
      return "failed";
    case "cancelled":
      return "cancelled";
    case "paused":
      return "paused";
    default:
      return status;
  }
}

/** A codicon name for a tool kind (ACP `ToolKind`, unknown kinds get a generic icon). */
export function toolKindIcon(kind: string | undefined): string {
  switch (kind) {
    case "read":
      return "eye";
    case "edit":
      return "edit";
    case "delete":
      return "trash";
    case "move":
      return "arrow-swap";
    case "search":
      return "search";
    case "execute":
      return "terminal";
    case "think":
      return "lightbulb";
    case "fetch":
      return "globe";
    case "switch_mode":
      return "arrow-switch";
    default:
      return "tools";
  }
}

/** Where a tool-call card click should lead: a diff, a terminal, or a location. */
export type ToolTarget =
  | { kind: "diff"; path: string }
  | { kind: "terminal"; terminalId: string }
  | { kind: "location"; path: string; line?: number };

export function toolCallTargets(toolCall: ToolCall): ToolTarget[] {
  const targets: ToolTarget[] = [];
  for (const item of toolCall.content ?? []) {
    if (item.type === "diff" && typeof item.path === "string") targets.push({ kind: "diff", path: item.path });
    else if (item.type === "diff" && Array.isArray(item.changes)) {
      for (const change of item.changes as unknown[]) {
        const path = (change as { path?: unknown; newPath?: unknown } | null)?.path;
        if (typeof path === "string") targets.push({ kind: "diff", path });
      }
    } else if (item.type === "terminal" && typeof item.terminalId === "string") {
      targets.push({ kind: "terminal", terminalId: item.terminalId });
    }
  }
  for (const location of toolCall.locations ?? []) {
    targets.push({ kind: "location", path: location.path, line: location.line });
  }
  return targets;
}
