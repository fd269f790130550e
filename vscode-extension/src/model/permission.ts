// What a permission prompt shows: every option the agent sent, in its order, labelled by kind; a
// message naming the tool call and the files it changes; and the proposed text of each file, made
// from the `preview` WorkspaceEdit, for the diff editor.

import type { PermissionOption, RememberScope, RequestPermissionParams, ToolCall } from "../protocol";
import { isObject } from "./validate";

/** A human label for an ACP permission option kind; unknown and `_custom` kinds are shown as sent. */
export function kindLabel(kind: string): string {
  switch (kind) {
    case "allow_once":
      return "allow once";
    case "allow_always":
      return "always allow";
    case "reject_once":
      return "reject once";
    case "reject_always":
      return "always reject";
    default:
      return kind.replace(/^_/, "").replace(/_/g, " ");
  }
}

/** Whether an option's name already says what its kind means ("Always allow" for allow_always). */
export function nameSaysKind(option: PermissionOption): boolean {
  const match = /^(allow|reject)_(once|always)$/.exec(option.kind);
  if (match === null) return false;
  const name = option.name.toLowerCase();
  const verb = match[1] === "allow" ? /\b(allow|approve|accept|yes)/.test(name) : /\b(reject|deny|decline|no)\b/.test(name);
  const always = /\b(always|never|don't ask|do not ask|remember)\b/.test(name);
  return verb && always === (match[2] === "always");
}

/**
 * The button or quick-pick label of an option: its name, with its kind after it unless the name
 * already says it (so every option shows what it does, and buttons stay short).
 */
export function optionLabel(option: PermissionOption): string {
  return nameSaysKind(option) ? option.name : `${option.name} (${kindLabel(option.kind)})`;
}

/** Whether an option is an "always" answer, the kind that records a rule. */
export function recordsRule(option: PermissionOption): boolean {
  return option.kind === "allow_always" || option.kind === "reject_always";
}

function scopeText(scope: RememberScope): string {
  return scope.description ?? scope.commandPrefix ?? scope.pathGlob ?? scope.urlOrigin ?? scope.toolTitle ?? scope.kind;
}

/**
 * What an "always" answer records, as the prompt shows it (editors/protocol.md 5.3 `rememberAs`);
 * undefined when the request does not say (no "always" option, or rules are off).
 */
export function rememberText(params: RequestPermissionParams): string | undefined {
  const scopes = params.rememberAs;
  if (scopes === undefined) return undefined;
  if (scopes.length === 0) return "Always records nothing here: you will be asked again.";
  return `Always records: ${scopes.map(scopeText).join("; ")}`;
}

/** A codicon for an option kind. */
export function optionIcon(kind: string): string {
  if (kind.startsWith("allow")) return "check";
  if (kind.startsWith("reject")) return "close";
  return "question";
}

export type LineStats = { added: number; removed: number };

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** Added and removed line counts between two texts (common head and tail lines do not count). */
export function lineStats(oldText: string, newText: string): LineStats {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail += 1;
  return { added: b.length - head - tail, removed: a.length - head - tail };
}

export type TextEditLike = { range: { start: { line: number; character: number }; end: { line: number; character: number } }; newText: string };

/** Offset in `text` of an LSP position (UTF-16 columns, clamped to the line). */
function offsetAt(text: string, lineStarts: number[], line: number, character: number): number {
  if (line >= lineStarts.length) return text.length;
  const start = lineStarts[line] ?? 0;
  const next = lineStarts[line + 1];
  const lineEnd = next === undefined ? text.length : next - 1;
  return Math.min(start + Math.max(0, character), lineEnd);
}

/** Applies LSP text edits (non-overlapping, any order) to a text. */
export function applyTextEdits(text: string, edits: readonly TextEditLike[]): string {
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) lineStarts.push(i + 1);
  const resolved = edits.map((edit, index) => ({
    start: offsetAt(text, lineStarts, edit.range.start.line, edit.range.start.character),
    end: offsetAt(text, lineStarts, edit.range.end.line, edit.range.end.character),
    newText: edit.newText,
    index,
  }));
  // Last edit first so earlier offsets stay valid; equal starts keep their given order.
  resolved.sort((x, y) => y.start - x.start || y.index - x.index);
  let result = text;
  for (const edit of resolved) result = result.slice(0, edit.start) + edit.newText + result.slice(edit.end);
  return result;
}

export type PreviewFile =
  | { op: "edit"; uri: string; edits: TextEditLike[] }
  | { op: "create"; uri: string }
  | { op: "delete"; uri: string }
  | { op: "rename"; uri: string; newUri: string };

function isTextEdit(value: unknown): value is TextEditLike {
  if (!isObject(value) || typeof value.newText !== "string" || !isObject(value.range)) return false;
  const { start, end } = value.range;
  return isObject(start) && isObject(end) && typeof start.line === "number" && typeof end.line === "number";
}

/** The files a `preview` WorkspaceEdit touches, in order, edits of one file merged. */
export function previewFiles(preview: unknown): PreviewFile[] {
  if (!isObject(preview)) return [];
  const files: PreviewFile[] = [];
  const editOf = (uri: string): { op: "edit"; uri: string; edits: TextEditLike[] } => {
    const existing = files.find((f) => f.op === "edit" && f.uri === uri);
    if (existing !== undefined && existing.op === "edit") return existing;
    const created = { op: "edit" as const, uri, edits: [] as TextEditLike[] };
    files.push(created);
    return created;
  };
  if (Array.isArray(preview.documentChanges)) {
    for (const change of preview.documentChanges) {
      if (!isObject(change)) continue;
      if (isObject(change.textDocument) && typeof change.textDocument.uri === "string" && Array.isArray(change.edits)) {
        editOf(change.textDocument.uri).edits.push(...change.edits.filter(isTextEdit));
      } else if ((change.kind === "create" || change.kind === "delete") && typeof change.uri === "string") {
        files.push({ op: change.kind, uri: change.uri });
      } else if (change.kind === "rename" && typeof change.oldUri === "string" && typeof change.newUri === "string") {
        files.push({ op: "rename", uri: change.oldUri, newUri: change.newUri });
      }
    }
  }
  if (isObject(preview.changes)) {
    for (const [uri, edits] of Object.entries(preview.changes)) {
      if (Array.isArray(edits)) editOf(uri).edits.push(...edits.filter(isTextEdit));
    }
  }
  return files;
}

/** v1 diff content items of a tool call: `{path, oldText?, newText}`. */
export function toolCallDiffs(toolCall: ToolCall): { path: string; oldText: string; newText: string }[] {
  const diffs: { path: string; oldText: string; newText: string }[] = [];
  for (const item of toolCall.content ?? []) {
    if (item.type === "diff" && typeof item.path === "string" && typeof item.newText === "string") {
      diffs.push({ path: item.path, oldText: typeof item.oldText === "string" ? item.oldText : "", newText: item.newText });
    }
  }
  return diffs;
}

function baseName(pathOrUri: string): string {
  const parts = pathOrUri.split("/");
  return decodeURIComponent(parts[parts.length - 1] ?? pathOrUri);
}

function problemText(problem: unknown): string {
  if (typeof problem === "string") return problem;
  if (isObject(problem) && typeof problem.message === "string") return problem.message;
  return JSON.stringify(problem);
}

/** The prompt's text: title and kind, the description, the changed files, and preview problems. */
export function permissionMessage(params: RequestPermissionParams): string {
  const title = params.title ?? params.toolCall.title ?? "The agent asks for permission";
  const kind = params.toolCall.kind;
  const lines = [kind === undefined ? title : `${title} (${kind})`];
  if (params.description !== undefined && params.description !== title) lines.push(params.description);
  for (const diff of toolCallDiffs(params.toolCall)) {
    const stats = lineStats(diff.oldText, diff.newText);
    lines.push(`${baseName(diff.path)} +${stats.added} -${stats.removed}`);
  }
  const remember = rememberText(params);
  if (remember !== undefined && params.options.some(recordsRule)) lines.push(remember);
  for (const problem of params.previewProblems ?? []) lines.push(`⚠ ${problemText(problem)}`);
  return lines.join(" · ");
}
