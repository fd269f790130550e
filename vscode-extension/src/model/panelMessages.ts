// Messages between the extension host and the agent panel's webview. The host owns the conversation
// (ConversationStore); the webview gets a snapshot of the shown session's newest items when it
// (re)loads, then posts of the items that changed in the run it holds (model/panelFeed.ts), and asks
// for older pages when the user scrolls up.

import type { SessionView } from "./conversation";
import type { MentionItem } from "./mentions";
import type { FieldValues, FormField } from "./question";

export type SessionChoice = { sessionId: string; title?: string; active?: boolean; agent?: string };

export type AgentInfo = { state: string; label: string; message?: string; canSteer?: boolean; images?: boolean };
/** A prompt waiting for the running turn to end. */
export type PanelQueued = { id: number; text: string };

/** An editor selection (or file) attached as context for the next prompt. */
export type EditorContext = { uri: string; label: string; range?: { start: { line: number; character: number }; end: { line: number; character: number } } };

/** A chip above the prompt box: context, a mention or an image. */
export type ContextChip = { label: string; title: string; icon: string };

/** A permission prompt the panel shows with one button per option. */
export type PanelPrompt = {
  key: string;
  toolCallId: string;
  message: string;
  hasDiff: boolean;
  options: { optionId: string; label: string; kind: string }[];
};

/** A question from the agent the panel shows as a form (or, for a URL, a page to open). */
export type PanelQuestion = { key: string; mode: string; message: string; url?: string; fields: FormField[] };

export type HostToPanel =
  /** `session` holds the conversation's newest items only, from index `start` of the whole. */
  | { type: "snapshot"; session: SessionView | undefined; start: number; sessions: SessionChoice[]; busy: boolean; agent: AgentInfo | undefined; history: string[]; maxImageBytes: number }
  | { type: "mentionItems"; seq: number; items: MentionItem[] }
  /** Answer `frame` with the same seq in the next animation frame (agent terminals' pace). */
  | { type: "frame"; seq: number }
  /** A `WindowPost` (model/panelFeed.ts) as JSON text (one string crosses the browser's frames as
   * one block, where an array of objects is cloned object by object), folding `count` changes of
   * the session (updates, the local prompt, a turn's end); `streaming` when agent updates came. */
  | { type: "window"; count: number; streaming: boolean; json: string }
  /** The page before the run the panel holds (JSON of `PanelFeed.earlier`'s answer). */
  | { type: "earlier"; json: string }
  | { type: "busy"; busy: boolean }
  | { type: "sessions"; sessions: SessionChoice[]; current?: string }
  | { type: "agent"; agent: AgentInfo }
  | { type: "context"; chips: ContextChip[] }
  | { type: "permissions"; prompts: PanelPrompt[] }
  | { type: "questions"; questions: PanelQuestion[] }
  | { type: "focusQuestion" }
  | { type: "focusPrompt"; text?: string }
  | { type: "queue"; items: PanelQueued[] }
  | { type: "error"; message: string };

/** The panel says that keys arrive at most this often. */
export const KEYS_EVERY_MS = 200;

/** Whether a key in the panel counts as typing (agent terminals slow down, redraws take less of a
 * frame): not the Enter that sends the prompt, after which the user waits for the agent's output
 * rather than typing (it slowed a 35,000-line output's first 600 ms to the typing pace). */
export function isTyping(key: string, shiftKey: boolean): boolean {
  return !(key === "Enter" && !shiftKey);
}

/** Whether a keydown is the select-all chord (Ctrl+A, ⌘A on macOS) that a text field answers
 * itself: the panel keeps it from the workbench, whose own select-all for a focused webview comes
 * back one round trip later and would select (and let the next key replace) what was typed
 * meanwhile. */
export function selectsAllInField(key: string, mods: { ctrlKey: boolean; metaKey: boolean; altKey: boolean; shiftKey: boolean }): boolean {
  return (mods.ctrlKey || mods.metaKey) && !mods.altKey && !mods.shiftKey && key.toLowerCase() === "a";
}

export type PanelToHost =
  | { type: "ready" }
  /** The user is typing in the panel (at most one a KEYS_EVERY_MS): agent terminals slow down. */
  | { type: "keys" }
  /** The log follows its end (or the user scrolled away): the host trims the run it posts. */
  | { type: "follow"; following: boolean }
  /** The user scrolled above the run the panel holds: the page before it, please. */
  | { type: "earlier"; sessionId: string }
  | { type: "frame"; seq: number }
  | { type: "prompt"; text: string }
  | { type: "cancel" }
  | { type: "newSession"; pickAgent?: boolean }
  | { type: "switchSession"; sessionId: string }
  | { type: "browseSessions" }
  | { type: "setMode"; modeId: string }
  | { type: "setConfigOption"; configId: string; value: unknown }
  | { type: "removeContext"; index: number }
  | { type: "openLocation"; path: string; line?: number }
  | { type: "openDiff"; toolCallId: string }
  | { type: "openTerminal"; terminalId: string }
  | { type: "openLink"; href: string }
  | { type: "answerPermission"; key: string; optionId: string }
  | { type: "restoreCheckpoint"; itemId: string }
  | { type: "answerQuestion"; key: string; action: "accept" | "decline" | "cancel"; values?: FieldValues }
  | { type: "openQuestionUrl"; key: string }
  | { type: "queued"; id: number; action: "edit" | "remove" | "steer" }
  | { type: "mentionQuery"; seq: number; prefix: string }
  | { type: "pickMention"; id: string }
  | { type: "attachImage"; name: string; mimeType: string; data: string }
  | { type: "attachDropped"; uris: string[] };

/** A webview message is untrusted input: only known types with the right fields pass. */
export function isPanelMessage(value: unknown): value is PanelToHost {
  if (typeof value !== "object" || value === null) return false;
  const m = value as Record<string, unknown>;
  switch (m.type) {
    case "ready":
    case "keys":
    case "cancel":
    case "browseSessions":
      return true;
    case "newSession":
      return m.pickAgent === undefined || typeof m.pickAgent === "boolean";
    case "prompt":
      return typeof m.text === "string";
    case "switchSession":
    case "earlier":
      return typeof m.sessionId === "string";
    case "follow":
      return typeof m.following === "boolean";
    case "setMode":
      return typeof m.modeId === "string";
    case "setConfigOption":
      return typeof m.configId === "string" && "value" in m;
    case "removeContext":
      return typeof m.index === "number";
    case "frame":
      return typeof m.seq === "number";
    case "queued":
      return typeof m.id === "number" && (m.action === "edit" || m.action === "remove" || m.action === "steer");
    case "openLocation":
      return typeof m.path === "string" && (m.line === undefined || typeof m.line === "number");
    case "openDiff":
      return typeof m.toolCallId === "string";
    case "openTerminal":
      return typeof m.terminalId === "string";
    case "openLink":
      return typeof m.href === "string";
    case "answerPermission":
      return typeof m.key === "string" && typeof m.optionId === "string";
    case "restoreCheckpoint":
      return typeof m.itemId === "string";
    case "answerQuestion":
      return (
        typeof m.key === "string" &&
        (m.action === "accept" || m.action === "decline" || m.action === "cancel") &&
        (m.values === undefined || isFieldValues(m.values))
      );
    case "openQuestionUrl":
      return typeof m.key === "string";
    case "mentionQuery":
      return typeof m.seq === "number" && typeof m.prefix === "string";
    case "pickMention":
      return typeof m.id === "string";
    case "attachImage":
      return typeof m.name === "string" && typeof m.mimeType === "string" && typeof m.data === "string" && /^[A-Za-z0-9+/]*={0,2}$/.test(m.data);
    case "attachDropped":
      return Array.isArray(m.uris) && m.uris.every((u) => typeof u === "string");
    default:
      return false;
  }
}

function isFieldValues(value: unknown): value is FieldValues {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  return Object.values(value).every(
    (v) => v === undefined || typeof v === "string" || typeof v === "boolean" || (Array.isArray(v) && v.every((x) => typeof x === "string")),
  );
}
