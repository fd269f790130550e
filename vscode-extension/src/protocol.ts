// The acpls editor protocol (editors/protocol.md), typed: one constant per custom message, the shape
// of its params, and a runtime check for each shape that arrives from the server. The checks are
// unit-tested against the golden messages in editors/fixtures/, which the Python and Lua sides parse
// too, so the three cannot drift apart.
//
// No import of `vscode` here: this file is shared by the extension host, the unit tests and (as
// types only) the webview.

import { NotificationType, RequestType } from "vscode-languageserver-protocol";
import {
  anyObject,
  anyValue,
  arrayOf,
  bool,
  type Check,
  either,
  int,
  isObject,
  type JsonObject,
  num,
  nullable,
  object,
  optional,
  ProtocolError,
  record,
  str,
} from "./model/validate";

export const PROTOCOL_VERSION = 1;

/** What the client puts under `capabilities.experimental.acpls` in `initialize`. */
export const EXPERIMENTAL_CAPABILITY = { version: PROTOCOL_VERSION, resolveConflict: true, sessionUpdates: true } as const;

// ---------------------------------------------------------------------------------------------------
// Shared shapes

export const checkPosition = object({ line: int, character: int });
export type Position = ReturnType<typeof checkPosition>;

export const checkRange = object({ start: checkPosition, end: checkPosition });
export type Range = ReturnType<typeof checkRange>;

/** An ACP content block (text, image, audio, resource_link, resource, or a kind acpls does not know). */
export const checkContentBlock = object({ type: str, text: optional(str) });
export type ContentBlock = ReturnType<typeof checkContentBlock>;

export const checkLocation = object({ path: str, line: optional(int) });
export type ToolCallLocation = ReturnType<typeof checkLocation>;

/** A tool call's content item, kept in its ACP shape (`content`, `diff`, `terminal`, or unknown). */
export const checkToolCallContent = object({ type: str });
export type ToolCallContent = ReturnType<typeof checkToolCallContent>;

export const checkToolCall = object({
  toolCallId: str,
  title: optional(str),
  kind: optional(str),
  status: optional(str),
  content: optional(arrayOf(checkToolCallContent)),
  locations: optional(arrayOf(checkLocation)),
  rawInput: optional(anyValue),
  rawOutput: optional(anyValue),
  name: optional(str),
  parentToolCallId: optional(str),
});
export type ToolCall = ReturnType<typeof checkToolCall>;

// ---------------------------------------------------------------------------------------------------
// 5.1 acpls/followAgent

export const checkFollowAgentParams = object({
  sessionId: str,
  toolCallId: str,
  uri: str,
  range: optional(checkRange),
  kind: optional(str),
});
export type FollowAgentParams = ReturnType<typeof checkFollowAgentParams>;
export const FollowAgentNotification = new NotificationType<FollowAgentParams>("acpls/followAgent");

// 5.2 acpls/followState

export const checkFollowStateParams = object({ enabled: bool, reason: optional(str) });
export type FollowStateParams = ReturnType<typeof checkFollowStateParams>;
export const FollowStateNotification = new NotificationType<FollowStateParams>("acpls/followState");

// 5.3 acpls/requestPermission

export const PERMISSION_KINDS = ["allow_once", "allow_always", "reject_once", "reject_always"] as const;

export const checkPermissionOption = object({ optionId: str, name: str, kind: str });
export type PermissionOption = ReturnType<typeof checkPermissionOption>;

/** What an "always" answer records (5.3 `rememberAs`): one scope of a rule, with its text. */
export const checkRememberScope = object({
  kind: str,
  description: optional(str),
  pathGlob: optional(str),
  commandPrefix: optional(str),
  commandArgs: optional(str),
  toolTitle: optional(str),
  urlOrigin: optional(str),
});
export type RememberScope = ReturnType<typeof checkRememberScope>;

export const checkRequestPermissionParams = object({
  sessionId: str,
  title: optional(str),
  description: optional(str),
  toolCall: checkToolCall,
  options: arrayOf(checkPermissionOption),
  subject: optional(anyValue),
  preview: optional(anyObject),
  previewProblems: optional(arrayOf(anyValue)),
  rememberAs: optional(arrayOf(checkRememberScope)),
});
export type RequestPermissionParams = ReturnType<typeof checkRequestPermissionParams>;
export type RequestPermissionResult = { optionId: string | null } | null;
export const RequestPermissionRequest = new RequestType<RequestPermissionParams, RequestPermissionResult, void>(
  "acpls/requestPermission",
);

// 5.4 acpls/sessionUpdate

export const MESSAGE_ROLES = ["user", "agent", "thought"] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number] | (string & {});

const checkPlanEntry = object({ content: str, priority: optional(str), status: optional(str) });
export type PlanEntry = ReturnType<typeof checkPlanEntry>;

const checkAvailableCommand = object({ name: str, description: optional(str), input: optional(anyValue) });
export type AvailableCommand = ReturnType<typeof checkAvailableCommand>;

const checkSessionMode = object({ id: str, name: str, description: optional(str) });
export type SessionMode = ReturnType<typeof checkSessionMode>;

const checkConfigSelectOption = object({ value: str, name: str, description: optional(str) });
export type ConfigSelectOption = ReturnType<typeof checkConfigSelectOption>;
const checkConfigSelectGroup = object({ group: str, name: str, options: arrayOf(checkConfigSelectOption) });
export type ConfigSelectGroup = ReturnType<typeof checkConfigSelectGroup>;

const checkConfigOptionFields = object({
  configId: optional(str),
  id: optional(str),
  name: str,
  type: optional(str),
  description: optional(str),
  category: optional(str),
  currentValue: optional(anyValue),
  options: optional(arrayOf(either(checkConfigSelectGroup, checkConfigSelectOption, "an option or a group"))),
});

/** A session config option. acpls sends v2's `configId`; v1's `id` is accepted and copied to it. */
export const checkConfigOption = (value: unknown, path: string): ReturnType<typeof checkConfigOptionFields> & { configId: string } => {
  const option = checkConfigOptionFields(value, path);
  const configId = option.configId ?? option.id;
  if (configId === undefined) throw new ProtocolError(`${path}.configId`, "expected a string, got nothing (the key is missing)");
  return { ...option, configId };
};
export type ConfigOption = ReturnType<typeof checkConfigOption>;

/** Checks for each normalised `sessionUpdate`; any other value is forwarded unchanged (section 5.4). */
const UPDATE_CHECKS = {
  message_chunk: object({ sessionUpdate: str, role: str, messageId: str, content: checkContentBlock }),
  message: object({ sessionUpdate: str, role: str, messageId: str, content: arrayOf(checkContentBlock) }),
  tool_call: object({ sessionUpdate: str, toolCall: checkToolCall }),
  plan: object({ sessionUpdate: str, entries: arrayOf(checkPlanEntry), planId: optional(str) }),
  available_commands: object({ sessionUpdate: str, availableCommands: arrayOf(checkAvailableCommand) }),
  modes: object({ sessionUpdate: str, currentModeId: str, availableModes: arrayOf(checkSessionMode) }),
  config_options: object({ sessionUpdate: str, configOptions: arrayOf(checkConfigOption) }),
  session_info: object({ sessionUpdate: str, title: optional(str), updatedAt: optional(str) }),
  usage: object({ sessionUpdate: str, used: num, size: num, cost: optional(anyValue) }),
  state: object({ sessionUpdate: str, state: str, stopReason: optional(str), error: optional(anyValue) }),
  notice: object({ sessionUpdate: str, severity: str, title: str, description: optional(str) }),
  compaction: object({
    sessionUpdate: str,
    compactionId: str,
    status: str,
    summary: optional(anyValue),
    error: optional(anyValue),
  }),
  auto_permission: object({
    sessionUpdate: str,
    toolCall: checkToolCall,
    optionId: str,
    optionKind: str,
    ruleId: optional(str),
  }),
} as const;

type UpdateChecks = typeof UPDATE_CHECKS;
export type KnownUpdateKind = keyof UpdateChecks;
export const KNOWN_UPDATE_KINDS = Object.keys(UPDATE_CHECKS) as KnownUpdateKind[];

/** A normalised update, discriminated by `sessionUpdate`. */
export type KnownSessionUpdate = {
  [K in KnownUpdateKind]: ReturnType<UpdateChecks[K]> & { sessionUpdate: K };
}[KnownUpdateKind];
/** An update acpls does not know, as the agent sent it. */
export type UnknownSessionUpdate = JsonObject & { sessionUpdate: string; unknown: true };
export type SessionUpdate = KnownSessionUpdate | UnknownSessionUpdate;

export function isUnknownUpdate(update: SessionUpdate): update is UnknownSessionUpdate {
  return (update as { unknown?: unknown }).unknown === true;
}

export function isKnownUpdateKind(kind: string): kind is KnownUpdateKind {
  return Object.prototype.hasOwnProperty.call(UPDATE_CHECKS, kind);
}

export const checkSessionUpdate: Check<SessionUpdate> = (value, path) => {
  const raw = anyObject(value, path);
  const kind = str(raw.sessionUpdate, `${path}.sessionUpdate`);
  if (!isKnownUpdateKind(kind)) return { ...raw, sessionUpdate: kind, unknown: true };
  return UPDATE_CHECKS[kind](raw, path) as KnownSessionUpdate;
};

export const checkSessionUpdateParams = object({ sessionId: str, update: checkSessionUpdate });
export type SessionUpdateParams = { sessionId: string; update: SessionUpdate };
export const SessionUpdateNotification = new NotificationType<SessionUpdateParams>("acpls/sessionUpdate");

// 5.4.1 acpls/sessionUpdates: several updates of one session, each checked when it is handled
// (as the `acpls/sessionUpdate` it stands for), so one malformed update drops only itself.

export const checkSessionUpdatesParams = object({ sessionId: str, updates: arrayOf(anyValue) });
export type SessionUpdatesParams = ReturnType<typeof checkSessionUpdatesParams>;

/** The `acpls/sessionUpdate` params each update of a batch stands for, in order. */
export function eachSessionUpdate(batch: SessionUpdatesParams): { sessionId: string; update: unknown }[] {
  return batch.updates.map((update) => ({ sessionId: batch.sessionId, update }));
}

// 5.5 acpls/terminalUpdate

export const checkExitStatus = object({ exitCode: optional(int), signal: optional(str) });
export type ExitStatus = ReturnType<typeof checkExitStatus>;

export const checkTerminalUpdateParams = object({
  sessionId: str,
  terminalId: str,
  command: optional(str),
  cwd: optional(str),
  exitStatus: optional(checkExitStatus),
  toolCallId: optional(str),
  owner: optional(str),
  released: optional(bool),
});
export type TerminalUpdateParams = ReturnType<typeof checkTerminalUpdateParams>;
export const TerminalUpdateNotification = new NotificationType<TerminalUpdateParams>("acpls/terminalUpdate");

// 5.6 acpls/terminalOutput

export const checkTerminalOutputParams = object({
  sessionId: str,
  terminalId: str,
  text: str,
  reset: optional(bool),
  dropped: optional(int),
});
export type TerminalOutputParams = ReturnType<typeof checkTerminalOutputParams>;
export const TerminalOutputNotification = new NotificationType<TerminalOutputParams>("acpls/terminalOutput");

// 5.7 acpls/changes

export const checkHunk = object({
  hunkId: str,
  range: checkRange,
  oldText: str,
  newText: str,
  added: int,
  removed: int,
});
export type Hunk = ReturnType<typeof checkHunk>;

export const checkChangedFile = object({
  uri: str,
  path: str,
  sessionId: optional(str),
  status: str,
  added: int,
  removed: int,
  hunks: arrayOf(checkHunk),
});
export type ChangedFile = ReturnType<typeof checkChangedFile>;

export const checkChangesParams = object({ files: arrayOf(checkChangedFile) });
export type ChangesParams = ReturnType<typeof checkChangesParams>;
export const ChangesNotification = new NotificationType<ChangesParams>("acpls/changes");

// 5.8 acpls/agentStatus

export const checkAgentStatusParams = object({
  state: str,
  agent: optional(str),
  command: optional(arrayOf(str)),
  protocolVersion: optional(int),
  agentInfo: optional(object({ name: str, version: optional(str), title: optional(str) })),
  message: optional(str),
  canSteer: optional(bool),
  images: optional(bool),
  default: optional(bool),
});
export type AgentStatusParams = ReturnType<typeof checkAgentStatusParams>;
export const AgentStatusNotification = new NotificationType<AgentStatusParams>("acpls/agentStatus");

// 5.9 acpls/elicitation (a question from the agent) and 5.10 acpls/elicitationComplete

export const checkElicitationParams = object({
  mode: str,
  message: str,
  sessionId: optional(str),
  elicitationId: optional(str),
  requestedSchema: optional(anyObject),
  fieldOrder: optional(arrayOf(str)),
  url: optional(str),
  requestId: optional(str),
});
export type ElicitationParams = ReturnType<typeof checkElicitationParams>;
export type ElicitationAction = "accept" | "decline" | "cancel";
export type ElicitationResult = { action: ElicitationAction; content?: JsonObject } | null;
export const ElicitationRequest = new RequestType<ElicitationParams, ElicitationResult, void>("acpls/elicitation");

export const checkElicitationCompleteParams = object({ elicitationId: str, sessionId: optional(str) });
export type ElicitationCompleteParams = ReturnType<typeof checkElicitationCompleteParams>;
export const ElicitationCompleteNotification = new NotificationType<ElicitationCompleteParams>("acpls/elicitationComplete");

export const checkElicitationResult: Check<ElicitationResult> = (value, path) =>
  nullable(object({ action: str, content: optional(anyObject) }))(value, path) as ElicitationResult;

// ---------------------------------------------------------------------------------------------------
// 5.10 acpls/authEnv and acpls/runLogin (requests): signing in with env_var and terminal methods

export const checkAuthEnvParams = object({
  methodId: str,
  agent: str,
  name: str,
  vars: arrayOf(object({ name: str, label: optional(nullable(str)), secret: optional(bool), optional: optional(bool) })),
  link: optional(str),
});
export type AuthEnvParams = ReturnType<typeof checkAuthEnvParams>;
export type AuthEnvResult = { values: Record<string, string> } | null;
export const checkRunLoginParams = object({ methodId: str, name: str, command: arrayOf(str), env: record(str), cwd: str });
export type RunLoginParams = ReturnType<typeof checkRunLoginParams>;
export type RunLoginResult = { exitCode: number | null };

// ---------------------------------------------------------------------------------------------------
// 5.13 acpls/resolveConflict (request): the user's text or another (the agent's disk write, the original)

export const checkResolveConflictParams = object({
  kind: str,
  path: str,
  uri: str,
  message: str,
  mine: optional(str),
  theirs: optional(str),
  sessionId: optional(str),
  requestId: optional(str),
});
export type ResolveConflictParams = ReturnType<typeof checkResolveConflictParams>;
export type ConflictChoice = "keepMine" | "takeTheirs";
export type ResolveConflictResult = { choice: ConflictChoice } | null;
export const checkResolveConflictResult: Check<ResolveConflictResult> = (value, path) =>
  nullable(object({ choice: str }))(value, path) as ResolveConflictResult;

// ---------------------------------------------------------------------------------------------------
// Every server-to-editor message, with its check: the fixtures test walks this table.

export const SERVER_MESSAGES = {
  "acpls/followAgent": checkFollowAgentParams,
  "acpls/followState": checkFollowStateParams,
  "acpls/requestPermission": checkRequestPermissionParams,
  "acpls/sessionUpdate": checkSessionUpdateParams,
  "acpls/sessionUpdates": checkSessionUpdatesParams,
  "acpls/terminalUpdate": checkTerminalUpdateParams,
  "acpls/terminalOutput": checkTerminalOutputParams,
  "acpls/changes": checkChangesParams,
  "acpls/agentStatus": checkAgentStatusParams,
  "acpls/elicitation": checkElicitationParams,
  "acpls/elicitationComplete": checkElicitationCompleteParams,
  "acpls/authEnv": checkAuthEnvParams,
  "acpls/runLogin": checkRunLoginParams,
  "acpls/resolveConflict": checkResolveConflictParams,
} as const satisfies Record<string, Check<unknown>>;
export type ServerMethod = keyof typeof SERVER_MESSAGES;

export function isServerMethod(method: string): method is ServerMethod {
  return Object.prototype.hasOwnProperty.call(SERVER_MESSAGES, method);
}

/** Checks the params of a server message; throws ProtocolError naming the bad field. */
export function parseServerMessage<M extends ServerMethod>(method: M, params: unknown): ReturnType<(typeof SERVER_MESSAGES)[M]> {
  return SERVER_MESSAGES[method](params, method) as ReturnType<(typeof SERVER_MESSAGES)[M]>;
}

export const checkRequestPermissionResult: Check<RequestPermissionResult> = (value, path) =>
  nullable(object({ optionId: nullable(str) }))(value, path) as RequestPermissionResult;

// ---------------------------------------------------------------------------------------------------
// Section 3: commands (workspace/executeCommand with one object argument)

export const Commands = {
  newSession: "acpls.newSession",
  prompt: "acpls.prompt",
  cancel: "acpls.cancel",
  setFollow: "acpls.setFollow",
  setMode: "acpls.setMode",
  setConfigOption: "acpls.setConfigOption",
  listSessions: "acpls.listSessions",
  loadSession: "acpls.loadSession",
  resumeSession: "acpls.resumeSession",
  forkSession: "acpls.forkSession",
  steer: "acpls.steer",
  closeSession: "acpls.closeSession",
  deleteSession: "acpls.deleteSession",
  logout: "acpls.logout",
  authenticate: "acpls.authenticate",
  sessions: "acpls.sessions",
  openTranscript: "acpls.openTranscript",
  restartAgent: "acpls.restartAgent",
  review: "acpls.review",
  keepHunk: "acpls.keepHunk",
  rejectHunk: "acpls.rejectHunk",
  keepAll: "acpls.keepAll",
  rejectAll: "acpls.rejectAll",
  listRules: "acpls.listRules",
  removeRule: "acpls.removeRule",
  checkAgents: "acpls.checkAgents",
  agents: "acpls.agents",
  installAgent: "acpls.installAgent",
  checkpoints: "acpls.checkpoints",
  restoreCheckpoint: "acpls.restoreCheckpoint",
  checkpointDiff: "acpls.checkpointDiff",
  continueFromCheckpoint: "acpls.continueFromCheckpoint",
  mentionCandidates: "acpls.mentionCandidates",
} as const;

/** One checkpoint of `acpls.checkpoints` (protocol.md section 8). */
export type Checkpoint = {
  id: string;
  sessionId: string | null;
  turn: number | null;
  prompt: string;
  time: string;
  files: string[];
  notRecorded?: { path: string; reason: string }[];
  /** The agent whose session the turn was (section 13). */
  agent?: string;
};
export type RestoreResult = { restored: string[]; skipped: { path: string; reason: string }[]; checkpoint: string; prompt: string };
export type ContinueResult = { sessionId: string; via: string; prompt: string; agent?: string };

export type PromptContext = { uri: string; range?: Range };

/** One `acpls.prompt` mention (protocol.md section 3.2): each becomes one ACP content block. */
export type Mention =
  | { type: "file"; uri: string; range?: Range }
  | { type: "selection"; uri: string; range: Range }
  | { type: "symbol"; name: string; uri: string; range: Range }
  | { type: "diagnostics"; diagnostics: { uri: string; diagnostic: JsonObject }[] }
  | { type: "terminal"; terminalId: string; sessionId?: string }
  | { type: "session"; sessionId: string }
  | { type: "image"; data: string; mimeType: string }
  | { type: "image"; path: string };

/** One `acpls.mentionCandidates` item: a workspace file or an open session. */
export type MentionCandidate = { type: "file"; label: string; uri: string } | { type: "session"; label: string; sessionId: string };

/** One agent checked by `acpls.checkAgents` (protocol.md section 3). */
export type AgentCheck = {
  name: string;
  command: string[];
  installed: boolean;
  ok: boolean;
  detail: string;
  agentName?: string | null;
  agentVersion?: string | null;
  protocolVersion?: number | null;
  authMethods: string[];
  seconds: number;
  /** The Node.js a Node program runs on (`Node.js from acpls[node] (…)`), null for others. */
  node?: string | null;
};

/** One agent of `acpls.agents`: a preset or an ACP registry entry (protocol.md section 12). */
export type AgentEntry = {
  id: string;
  name: string;
  description: string;
  version: string | null;
  icon: string | null;
  distributions: string[];
  preset: boolean;
  registryId?: string;
  installed: boolean;
  runnable: boolean;
  kind?: string;
  command?: string[];
  installDir?: string;
  problem?: string;
  authMethods?: JsonObject[];
  repository?: string;
  license?: string;
};
export type RegistryInfo = { url: string; source: string; version: string; fetchedAt?: string; error?: string; snapshot?: JsonObject };
export type AgentsResult = { agents: AgentEntry[]; default: string; platform: string | null; registry: RegistryInfo };
export type InstallResult = { agent: string; command: string[]; kind: string; installed: boolean; installDir?: string };

/** Argument and result of each command, as section 3 lists them. */
export interface CommandSignatures {
  "acpls.newSession": [{ cwd?: string; agent?: string | JsonObject }, { sessionId: string; agent?: string }];
  "acpls.prompt": [
    { sessionId?: string; text: string; context?: PromptContext[]; mentions?: Mention[] },
    { sessionId: string; stopReason: string; usage?: JsonObject },
  ];
  "acpls.cancel": [{ sessionId?: string }, null];
  "acpls.setFollow": [{ enabled: boolean }, { enabled: boolean }];
  "acpls.setMode": [{ sessionId?: string; modeId: string }, null];
  "acpls.setConfigOption": [{ sessionId?: string; configId: string; value: unknown }, { configOptions: ConfigOption[] }];
  "acpls.listSessions": [{ cwd?: string; cursor?: string; all?: boolean }, { sessions: ListedSession[]; nextCursor?: string; offers?: SessionOffers }];
  "acpls.loadSession": [{ sessionId: string; agent?: string }, { sessionId: string; agent?: string }];
  "acpls.resumeSession": [{ sessionId: string; agent?: string }, { sessionId: string; agent?: string }];
  "acpls.forkSession": [{ sessionId?: string }, { sessionId: string; forkedFrom: string; agent?: string }];
  "acpls.steer": [{ sessionId?: string; text: string; context?: PromptContext[] }, { sessionId: string; outcome: string }];
  "acpls.closeSession": [{ sessionId?: string }, { sessionId: string; closedByAgent: boolean }];
  "acpls.deleteSession": [{ sessionId: string }, { sessionId: string }];
  "acpls.logout": [Record<string, never>, null];
  "acpls.authenticate": [{ methodId?: string }, null];
  "acpls.sessions": [Record<string, never>, { sessions: KnownSession[]; current?: string; agents?: RunningAgent[]; defaultAgent?: string }];
  "acpls.openTranscript": [{ sessionId?: string }, { uri: string }];
  "acpls.restartAgent": [{ agent?: string }, null];
  "acpls.review": [{ sessionId?: string }, { files: ChangedFile[] }];
  "acpls.keepHunk": [{ hunkId: string }, { files: ChangedFile[] }];
  "acpls.rejectHunk": [{ hunkId: string }, { files: ChangedFile[] }];
  "acpls.keepAll": [{ uri?: string }, { files: ChangedFile[] }];
  "acpls.rejectAll": [{ uri?: string }, { files: ChangedFile[] }];
  "acpls.listRules": [Record<string, never>, { rules: JsonObject[] }];
  "acpls.removeRule": [{ ruleId: string }, { rules: JsonObject[] }];
  "acpls.checkAgents": [{ agents?: (string | JsonObject)[] }, { agents: AgentCheck[] }];
  "acpls.agents": [{ refresh?: boolean }, AgentsResult];
  "acpls.installAgent": [{ agent: string }, InstallResult];
  "acpls.checkpoints": [{ sessionId?: string }, Checkpoint[]];
  "acpls.restoreCheckpoint": [{ id: string; preview?: boolean; includeUnsaved?: string[] }, RestoreResult];
  "acpls.checkpointDiff": [{ id: string }, { files: { path: string; status: string; diff: string }[] }];
  "acpls.continueFromCheckpoint": [{ id: string }, ContinueResult];
  "acpls.mentionCandidates": [{ query?: string; limit?: number }, { items: MentionCandidate[] }];
}
export type CommandId = keyof CommandSignatures;
export type CommandArgs<C extends CommandId> = CommandSignatures[C][0];
export type CommandResult<C extends CommandId> = CommandSignatures[C][1];

export type ListedSession = { sessionId: string; cwd?: string; title?: string; updatedAt?: string; open?: boolean };
/** What the agent lets the user do with its sessions (acpls.listSessions' `offers`). */
export type SessionOffers = { load: boolean; resume: boolean; fork: boolean; close: boolean; delete: boolean; logout: boolean };
export type KnownSession = { sessionId: string; title?: string; active: boolean; agent?: string };
/** An agent acpls runs (section 13): several can run at once, one process each. */
export type RunningAgent = { agent: string; state: string; default: boolean; sessions: string[]; protocolVersion?: number; pid?: number };

export const checkListedSession = object({ sessionId: str, cwd: optional(str), title: optional(str), updatedAt: optional(str), open: optional(bool) });
export const checkSessionOffers = object({ load: bool, resume: bool, fork: bool, close: bool, delete: bool, logout: bool });
export const checkKnownSession = object({ sessionId: str, title: optional(str), active: bool, agent: optional(str) });
export const checkRunningAgent = object({ agent: str, state: str, default: bool, sessions: arrayOf(str), protocolVersion: optional(int), pid: optional(int) });

/** Result checks for the commands whose results the UI reads. */
export const COMMAND_RESULTS = {
  "acpls.newSession": object({ sessionId: str, agent: optional(str) }),
  "acpls.prompt": object({ sessionId: str, stopReason: str, usage: optional(anyObject) }),
  "acpls.setFollow": object({ enabled: bool }),
  "acpls.setConfigOption": object({ configOptions: arrayOf(checkConfigOption) }),
  "acpls.listSessions": object({ sessions: arrayOf(checkListedSession), nextCursor: optional(str), offers: optional(checkSessionOffers) }),
  "acpls.loadSession": object({ sessionId: str, agent: optional(str) }),
  "acpls.resumeSession": object({ sessionId: str, agent: optional(str) }),
  "acpls.forkSession": object({ sessionId: str, forkedFrom: str, agent: optional(str) }),
  "acpls.steer": object({ sessionId: str, outcome: str }),
  "acpls.closeSession": object({ sessionId: str, closedByAgent: bool }),
  "acpls.deleteSession": object({ sessionId: str }),
  "acpls.sessions": object({ sessions: arrayOf(checkKnownSession), current: optional(str), agents: optional(arrayOf(checkRunningAgent)), defaultAgent: optional(str) }),
  "acpls.openTranscript": object({ uri: str }),
  "acpls.review": object({ files: arrayOf(checkChangedFile) }),
  "acpls.keepHunk": object({ files: arrayOf(checkChangedFile) }),
  "acpls.rejectHunk": object({ files: arrayOf(checkChangedFile) }),
  "acpls.keepAll": object({ files: arrayOf(checkChangedFile) }),
  "acpls.rejectAll": object({ files: arrayOf(checkChangedFile) }),
  "acpls.listRules": object({ rules: arrayOf(anyObject) }),
  "acpls.removeRule": object({ rules: arrayOf(anyObject) }),
  "acpls.checkAgents": object({ agents: arrayOf(anyObject) }),
  "acpls.agents": object({
    agents: arrayOf(
      object({
        id: str,
        name: str,
        description: str,
        version: nullable(str),
        icon: nullable(str),
        distributions: arrayOf(str),
        preset: bool,
        installed: bool,
        runnable: bool,
        problem: optional(str),
        authMethods: optional(arrayOf(anyObject)),
      }),
    ),
    default: str,
    platform: nullable(str),
    registry: object({ url: str, source: str, version: str, error: optional(str) }),
  }),
  "acpls.installAgent": object({ agent: str, command: arrayOf(str), kind: str, installed: bool, installDir: optional(str) }),
  "acpls.checkpoints": arrayOf(object({ id: str, sessionId: nullable(str), turn: nullable(num), prompt: str, time: str, files: arrayOf(str) })),
  "acpls.restoreCheckpoint": object({ restored: arrayOf(str), skipped: arrayOf(object({ path: str, reason: str })), checkpoint: str, prompt: str }),
  "acpls.continueFromCheckpoint": object({ sessionId: str, via: str, prompt: str, agent: optional(str) }),
  "acpls.mentionCandidates": object({
    items: arrayOf(object({ type: str, label: str, uri: optional(str), sessionId: optional(str) })),
  }),
} as const satisfies Partial<Record<CommandId, Check<unknown>>>;

export { ProtocolError, isObject };
export type { JsonObject };
