// The `acpls.*` VS Code settings, checked, and turned into the server's settings object
// (protocol.md section 1): what reaches the server is exactly the documented keys, and a bad value
// is reported and left out (the server then uses its default) instead of failing the server's start.

import { isObject, type JsonObject } from "./validate";

export const PRESETS = ["claude", "gemini", "codex", "opencode", "qwen", "copilot", "goose", "demo"] as const;
export const TOOL_KINDS = ["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"] as const;
export const LOG_LEVELS = ["debug", "info", "warning", "error"] as const;

/** The server-side keys, in the order protocol.md lists them, with the VS Code setting of each. */
export const SERVER_KEYS = [
  "agent",
  "agents",
  "protocolVersion",
  "defaultMode",
  "defaultConfig",
  "follow.enabled",
  "follow.subagents",
  "mcpServers",
  "permissions.autoApprove",
  "permissions.rules",
  "files.allowedRoots",
  "files.alwaysAsk",
  "terminal.scrollbackBytes",
  "terminal.rawOutput",
  "env.remove",
  "limits.maxLineBytes",
  "limits.maxPendingPermissions",
  "limits.maxAgentInputBytes",
  "limits.maxReadBytes",
  "log.level",
  "checkpoints.enabled",
  "checkpoints.maxCount",
  "checkpoints.maxStorageBytes",
  "checkpoints.maxFileBytes",
  "checkpoints.binaryBudgetBytes",
  "checkpoints.fork",
  "context.maxEmbedBytes",
  "context.maxImageBytes",
  "registry.url",
] as const;
export type ServerKey = (typeof SERVER_KEYS)[number];

export type Validated = { settings: JsonObject; problems: string[] };

type Validator = (value: unknown) => string | undefined; // an error message, or undefined when fine

const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === "string");

function validateAgent(value: unknown): string | undefined {
  if (typeof value === "string") return value.trim() === "" ? "must not be empty" : undefined;
  if (!isObject(value)) return "must be a preset name or an object {command, args?, env?}";
  if (typeof value.command !== "string" || value.command.trim() === "") return "needs a non-empty `command` string";
  if (value.args !== undefined && !isStringArray(value.args)) return "`args` must be a list of strings";
  if (value.env !== undefined && !(isObject(value.env) && Object.values(value.env).every((v) => typeof v === "string"))) {
    return "`env` must map names to strings";
  }
  return undefined;
}

/** `acpls.agents`: name → what `acpls.agent` takes (a preset, a registry id or a command object). */
function validateAgents(value: unknown): string | undefined {
  if (!isObject(value)) return "must map agent names to a preset name, a registry id or {command, args?, env?}";
  for (const [name, entry] of Object.entries(value)) {
    const problem = name === "" ? "names must not be empty" : validateAgent(entry);
    if (problem !== undefined) return `${name}: ${problem}`;
  }
  return undefined;
}

const positiveInt: Validator = (v) => (typeof v === "number" && Number.isInteger(v) && v > 0 ? undefined : "must be a positive integer");
const boolean: Validator = (v) => (typeof v === "boolean" ? undefined : "must be true or false");
const stringList: Validator = (v) => (isStringArray(v) ? undefined : "must be a list of strings");

const VALIDATORS: Record<ServerKey, Validator> = {
  agent: validateAgent,
  agents: validateAgents,
  protocolVersion: (v) => (v === "auto" || v === 1 || v === 2 ? undefined : 'must be "auto", 1 or 2'),
  defaultMode: (v) =>
    isObject(v) && Object.values(v).every((m) => typeof m === "string" && m !== "") ? undefined : "must map agent names to mode ids",
  defaultConfig: (v) =>
    isObject(v) && Object.values(v).every((o) => isObject(o) && Object.values(o).every((x) => typeof x === "string" || typeof x === "boolean"))
      ? undefined
      : "must map agent names to {option id: value id or true/false}",
  "follow.enabled": boolean,
  "follow.subagents": boolean,
  mcpServers: (v) => (Array.isArray(v) && v.every(isObject) ? undefined : "must be a list of MCP server objects"),
  "permissions.autoApprove": (v) => (isStringArray(v) ? undefined : "must be a list of tool kinds"),
  "permissions.rules": boolean,
  "files.allowedRoots": (v) => (isStringArray(v) && v.every((p) => p.startsWith("/") || /^[A-Za-z]:[\\/]/.test(p)) ? undefined : "must be a list of absolute paths"),
  "files.alwaysAsk": (v) => (isStringArray(v) && v.every((g) => g.trim() !== "" && !g.startsWith("~") && !g.split("/").includes("..")) ? undefined : "must be a list of globs, relative to a workspace folder or absolute"),
  "terminal.scrollbackBytes": positiveInt,
  "terminal.rawOutput": boolean,
  "env.remove": stringList,
  "limits.maxLineBytes": positiveInt,
  "limits.maxPendingPermissions": positiveInt,
  "limits.maxAgentInputBytes": positiveInt,
  "limits.maxReadBytes": positiveInt,
  "log.level": (v) => (typeof v === "string" && (LOG_LEVELS as readonly string[]).includes(v) ? undefined : `must be one of ${LOG_LEVELS.join(", ")}`),
  "checkpoints.enabled": boolean,
  "checkpoints.maxCount": positiveInt,
  "checkpoints.maxStorageBytes": positiveInt,
  "checkpoints.maxFileBytes": positiveInt,
  "checkpoints.binaryBudgetBytes": positiveInt,
  "checkpoints.fork": boolean,
  "context.maxEmbedBytes": positiveInt,
  "context.maxImageBytes": positiveInt,
  "registry.url": (v) =>
    typeof v === "string" && (v === "" || /^(https?|file):\/\//.test(v)) ? undefined : "must be an http(s):// or file:// URL, or \"\" for no network",
};

function setPath(target: JsonObject, dotted: string, value: unknown): void {
  const parts = dotted.split(".");
  let node = target;
  for (const part of parts.slice(0, -1)) {
    const child = node[part];
    if (isObject(child)) node = child;
    else {
      const created: JsonObject = {};
      node[part] = created;
      node = created;
    }
  }
  node[parts[parts.length - 1] ?? dotted] = value;
}

/**
 * Checks the values read from VS Code (key → value, `undefined` when unset) and builds the server's
 * nested settings object from the valid ones.
 */
export function validateSettings(read: (key: ServerKey) => unknown): Validated {
  const settings: JsonObject = {};
  const problems: string[] = [];
  for (const key of SERVER_KEYS) {
    const value = read(key);
    if (value === undefined || value === null) continue;
    const problem = VALIDATORS[key](value);
    if (problem === undefined) setPath(settings, key, value);
    else problems.push(`acpls.${key} ${problem}; using the server's default`);
  }
  return { settings, problems };
}

export type PermissionUi = "notification" | "quickPick";

export function permissionUi(value: unknown): PermissionUi {
  return value === "quickPick" ? "quickPick" : "notification";
}

/** A short name for the agent setting, for the status bar. */
export function agentLabel(agent: unknown): string {
  if (typeof agent === "string") return agent;
  if (isObject(agent) && typeof agent.command === "string") return agent.command.split("/").pop() ?? agent.command;
  return "agent";
}
