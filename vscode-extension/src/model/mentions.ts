// @-mentions and images in the panel's prompt box, as data (no editor API here): the `@word` being
// typed, the completion items offered for it (built-in kinds, workspace files and sessions from
// acpls.mentionCandidates, workspace symbols), the text after one is picked, and which attachments a
// sent prompt still carries. Each mention becomes one `acpls.prompt` mention (protocol.md 3.2).

import type { Mention, MentionCandidate, PromptContext, Range } from "../protocol";

export type MentionQuery = { prefix: string; start: number; end: number };

/** The `@word` the caret is in (the `@` at the start or after white space), else undefined. */
export function mentionQuery(text: string, caret: number): MentionQuery | undefined {
  const before = text.slice(0, caret);
  const match = /(^|\s)@(\S*)$/.exec(before);
  if (match === null) return undefined;
  const start = caret - (match[2] ?? "").length - 1;
  const after = /^\S*/.exec(text.slice(caret))?.[0] ?? "";
  return { prefix: match[2] ?? "", start, end: caret + after.length };
}

export type MentionKind = "file" | "symbol" | "selection" | "diagnostics" | "terminal" | "session";

/** One completion item: shown with `label` and `detail`, inserted as `@token`. */
export type MentionItem = { id: string; kind: MentionKind; label: string; detail?: string; token: string };

/** What the host knows when it completes: the editor selection, the active file, the session's
 * agent terminals. */
export type EditorState = {
  selection?: { uri: string; label: string; range: Range };
  activeFile?: { uri: string; label: string };
  terminals: { terminalId: string; command?: string }[];
};

/** An item with what the host needs to turn it into a mention when it is picked. */
export type ResolvableItem = MentionItem & {
  uri?: string;
  range?: Range;
  name?: string;
  terminalId?: string;
  sessionId?: string;
  scope?: "file" | "workspace";
};

export type WorkspaceSymbol = { name: string; containerName?: string; kind: string; uri: string; range: Range; relative: string };

function matches(word: string, prefix: string): boolean {
  const w = word.toLowerCase();
  const p = prefix.toLowerCase();
  return w.startsWith(p) || (p.length > 0 && w.includes(p));
}

/** The built-in kinds (`@selection`, `@diagnostics`, `@diagnostics:workspace`, `@terminal:ID`)
 * that fit what was typed and what the editor has. */
export function builtinItems(prefix: string, state: EditorState): ResolvableItem[] {
  const items: ResolvableItem[] = [];
  if (state.selection !== undefined && matches("selection", prefix)) {
    items.push({ id: "selection", kind: "selection", label: "@selection", detail: state.selection.label, token: "selection", uri: state.selection.uri, range: state.selection.range });
  }
  if (matches("diagnostics", prefix)) {
    if (state.activeFile !== undefined) {
      items.push({ id: "diagnostics", kind: "diagnostics", label: "@diagnostics", detail: `problems in ${state.activeFile.label}`, token: "diagnostics", uri: state.activeFile.uri, scope: "file" });
    }
    items.push({ id: "diagnostics:workspace", kind: "diagnostics", label: "@diagnostics:workspace", detail: "problems in every file", token: "diagnostics:workspace", scope: "workspace" });
  }
  for (const terminal of state.terminals) {
    const token = `terminal:${terminal.terminalId}`;
    if (matches(token, prefix) || (terminal.command !== undefined && matches(terminal.command, prefix))) {
      items.push({ id: token, kind: "terminal", label: `@${token}`, detail: terminal.command ?? "agent terminal output", token, terminalId: terminal.terminalId });
    }
  }
  return items;
}

/** acpls.mentionCandidates' files and sessions as items (in the server's order: best first). */
export function candidateItems(candidates: readonly MentionCandidate[]): ResolvableItem[] {
  return candidates.map((c) =>
    c.type === "file"
      ? { id: `file:${c.uri}`, kind: "file", label: c.label, detail: "file", token: c.label.replace(/\s/g, "\\ "), uri: c.uri }
      : { id: `session:${c.sessionId}`, kind: "session", label: c.label, detail: "session transcript", token: `session:${c.sessionId}`, sessionId: c.sessionId },
  );
}

/** Workspace symbols as items: `@symbol:name`, detail the kind and where it is. */
export function symbolItems(symbols: readonly WorkspaceSymbol[], limit = 20): ResolvableItem[] {
  return symbols.slice(0, limit).map((s) => {
    const line = s.range.start.line + 1;
    return {
      id: `symbol:${s.uri}#${s.range.start.line}:${s.range.start.character}:${s.name}`,
      kind: "symbol",
      label: s.containerName ? `${s.containerName}.${s.name}` : s.name,
      detail: `${s.kind} · ${s.relative}:${line}`,
      token: `symbol:${s.name.replace(/\s+/g, "_")}`,
      name: s.name,
      uri: s.uri,
      range: s.range,
    };
  });
}

/** `@session…`, `@file:…`, `@symbol:…` and `@terminal:…` ask for one kind only; `query` is what
 * follows the kind (what the server and the language servers match). */
export function mentionFilter(prefix: string): { only?: "file" | "session" | "symbol" | "terminal"; query: string } {
  for (const kind of ["session", "file", "symbol", "terminal"] as const) {
    if (prefix === kind) return { only: kind, query: "" };
    if (prefix.startsWith(`${kind}:`)) return { only: kind, query: prefix.slice(kind.length + 1) };
  }
  return { query: prefix };
}

/** Everything offered for `prefix`, in order: built-in kinds, files, symbols, sessions (only one
 * kind after `@session`, `@file:`, `@symbol:` or `@terminal:`). */
export function mentionItems(prefix: string, state: EditorState, candidates: readonly MentionCandidate[], symbols: readonly WorkspaceSymbol[], limit = 40): ResolvableItem[] {
  const { only } = mentionFilter(prefix);
  const fromServer = candidateItems(candidates);
  const files = fromServer.filter((i) => i.kind === "file");
  const sessions = fromServer.filter((i) => i.kind === "session");
  const all = [...builtinItems(prefix, state), ...files, ...symbolItems(symbols), ...sessions];
  return all.filter((i) => only === undefined || i.kind === only).slice(0, limit);
}

/** The prompt text with the `@word` replaced by `@token ` and where the caret goes. */
export function acceptMention(text: string, query: MentionQuery, token: string): { text: string; caret: number } {
  const head = `${text.slice(0, query.start)}@${token} `;
  const rest = text.slice(query.end).replace(/^ /, "");
  return { text: head + rest, caret: head.length };
}

/** A chip shown above the prompt box; `token` ties a mention to its `@token` in the text. */
export type Attachment = {
  label: string;
  title: string;
  icon: string;
  token?: string;
  context?: PromptContext;
  mention?: Mention;
};

const ICONS: Record<MentionKind | "image", string> = {
  file: "file",
  symbol: "symbol-method",
  selection: "selection",
  diagnostics: "warning",
  terminal: "terminal",
  session: "comment-discussion",
  image: "file-media",
};

export function iconOf(kind: MentionKind | "image"): string {
  return ICONS[kind];
}

/** The mention a picked item stands for (selection and diagnostics are read by the host when the
 * item is picked and passed in `diagnostics`). */
export function attachmentFor(item: ResolvableItem, diagnostics?: { uri: string; diagnostic: Record<string, unknown> }[]): Attachment | string {
  const base = { label: `@${item.token}`, title: item.detail === undefined ? item.label : `${item.label}: ${item.detail}`, icon: iconOf(item.kind), token: item.token };
  switch (item.kind) {
    case "file":
      return item.uri === undefined ? "no file" : { ...base, mention: { type: "file", uri: item.uri } };
    case "selection":
      return item.uri === undefined || item.range === undefined ? "no selection" : { ...base, mention: { type: "selection", uri: item.uri, range: item.range } };
    case "symbol":
      return item.uri === undefined || item.range === undefined || item.name === undefined
        ? "no symbol"
        : { ...base, mention: { type: "symbol", name: item.name, uri: item.uri, range: item.range } };
    case "diagnostics":
      if (diagnostics === undefined || diagnostics.length === 0) return item.scope === "workspace" ? "The workspace has no problems to mention." : "This file has no problems to mention.";
      return { ...base, title: `${diagnostics.length} problem${diagnostics.length === 1 ? "" : "s"}`, mention: { type: "diagnostics", diagnostics } };
    case "terminal":
      return item.terminalId === undefined ? "no terminal" : { ...base, mention: { type: "terminal", terminalId: item.terminalId } };
    case "session":
      return item.sessionId === undefined ? "no session" : { ...base, mention: { type: "session", sessionId: item.sessionId } };
  }
}

/** Whether `@token` is still in the text as a whole word. */
export function hasToken(text: string, token: string): boolean {
  const at = `@${token}`;
  let from = 0;
  for (;;) {
    const i = text.indexOf(at, from);
    if (i < 0) return false;
    const before = i === 0 ? "" : text.charAt(i - 1);
    const after = text.charAt(i + at.length);
    if ((before === "" || /\s/.test(before)) && (after === "" || /\s|[.,;:!?)]/.test(after))) return true;
    from = i + 1;
  }
}

/** What a prompt sends: every attachment whose `@token` is still in the text (or that has none:
 * images, editor selections), split into `context` and `mentions`, in the order attached. */
export function promptAttachments(text: string, attachments: readonly Attachment[]): { context: PromptContext[]; mentions: Mention[] } {
  const context: PromptContext[] = [];
  const mentions: Mention[] = [];
  for (const a of attachments) {
    if (a.token !== undefined && !hasToken(text, a.token)) continue;
    if (a.context !== undefined) context.push(a.context);
    if (a.mention !== undefined) mentions.push(a.mention);
  }
  return { context, mentions };
}

/** Why an image cannot be attached, or undefined when it can. */
export function imageProblem(name: string, mimeType: string, size: number, maxBytes: number, agentTakesImages: boolean | undefined): string | undefined {
  if (!/^image\/[a-z0-9.+-]+$/i.test(mimeType)) return `${name} is not an image (png, jpeg, gif, webp…).`;
  if (agentTakesImages === false) return `The agent does not accept images (its promptCapabilities.image is off): ${name} was not attached.`;
  if (size > maxBytes) {
    return `${name} is ${size.toLocaleString("en-US")} bytes, over the ${maxBytes.toLocaleString("en-US")} bytes of acpls.context.maxImageBytes: not attached.`;
  }
  return undefined;
}

/** The decoded size of base64 data. */
export function base64Size(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}

const IMAGE_TYPES: Record<string, string> = { png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp", bmp: "image/bmp", svg: "image/svg+xml" };

/** The image type of a file name by its extension, or undefined. */
export function imageTypeOf(name: string): string | undefined {
  const ext = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase();
  return ext === undefined ? undefined : IMAGE_TYPES[ext];
}

/** A size for a chip: `120 KB`. */
export function sizeLabel(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** The URIs of a drop: `text/uri-list` (one a line, `#` comments), else VS Code's own
 * `application/vnd.code.uri-list` (a JSON array). */
export function droppedUris(uriList: string, codeUriList: string): string[] {
  const lines = uriList
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
  if (lines.length > 0 || codeUriList.trim() === "") return lines;
  try {
    const parsed: unknown = JSON.parse(codeUriList);
    return Array.isArray(parsed) ? parsed.filter((u): u is string => typeof u === "string") : [];
  } catch {
    return [];
  }
}

/** "Copy as context": a message or tool call of the conversation quoted for the next prompt. */
export function quoteAsContext(what: string, text: string): string {
  const body = text.replace(/\s+$/, "");
  const fence = body.includes("```") ? "````" : "```";
  return `Context (${what}, copied from the conversation):\n${fence}\n${body}\n${fence}\n`;
}

/** A tool call as text: its title and status, its locations, its text content and diffs' files. */
export function toolCallText(call: { title?: string | null; name?: string | null; toolCallId: string; status?: string | null; kind?: string | null; locations?: { path: string; line?: number | null }[] | null; content?: unknown[] | null }): string {
  const lines = [`${call.title ?? call.name ?? call.toolCallId}${call.kind ? ` (${call.kind})` : ""}: ${call.status ?? "pending"}`];
  for (const location of call.locations ?? []) lines.push(`at ${location.path}${typeof location.line === "number" ? `:${location.line}` : ""}`);
  for (const raw of call.content ?? []) {
    const item = raw as { type?: unknown; content?: { type?: unknown; text?: unknown }; path?: unknown; terminalId?: unknown };
    if (item.type === "content" && item.content?.type === "text" && typeof item.content.text === "string") lines.push(item.content.text);
    else if (item.type === "diff" && typeof item.path === "string") lines.push(`diff of ${item.path}`);
    else if (item.type === "terminal" && typeof item.terminalId === "string") lines.push(`terminal ${item.terminalId}`);
  }
  return lines.join("\n");
}

/** The prompt text with `quote` added after what is there (a blank line between). */
export function appendQuote(text: string, quote: string): string {
  const head = text.replace(/\s+$/, "");
  return head === "" ? quote : `${head}\n\n${quote}`;
}
