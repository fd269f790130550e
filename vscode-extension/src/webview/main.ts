// The agent panel's page. It keeps the newest items of the shown session (model/panelFeed.ts: the
// host keeps the whole conversation and posts the items of that run as they change, and older
// pages when the user scrolls above it), and redraws only the items a post changed,
// at most once per animation frame and as many items as fit in frameBudget of the whole frame, its
// rendering included (less while keys arrive, none in the frame that shows a key; the rest waits
// for a later frame, so keys typed in the prompt are taken between frames and shown at once; while
// a load streams in, the page keeps only the items that can be on screen). Only a window of a long
// conversation is in the page (model/chatWindow.ts): the last items, older pages put back on scroll
// or with "Show earlier", and a note above the first shown item saying what is above it. Markdown goes through the escaping renderer; all other text is
// set with textContent. Nothing from the agent is ever run.

import {
  type Change,
  type Item,
  messageText,
  stateLabel,
  subagentSummary,
  type SessionView,
  type ToolCallItem,
  toolCallTargets,
  toolKindIcon,
  toolStatusLabel,
} from "../model/conversation";
import { ChatWindow, drawOrder, frameBudget, FramePacer, holdsForKey, toRedraw } from "../model/chatWindow";
import { PromptHistory } from "../model/history";
import { PanelMirror, type WindowPost } from "../model/panelFeed";
import { renderInline, renderMarkdown } from "../model/markdown";
import { sessionChoiceLabel } from "../model/multiAgent";
import { type AgentInfo, type ContextChip, type HostToPanel, isTyping, KEYS_EVERY_MS, selectsAllInField, type PanelPrompt, type PanelQuestion, type PanelQueued, type PanelToHost, type SessionChoice } from "../model/panelMessages";
import type { FieldValues, FormField } from "../model/question";
import { usageFraction, usageText, WARN_AT } from "../model/usage";
import { lineStats } from "../model/permission";
import { acceptSlash, completeSlash, slashQuery } from "../model/slash";
import { acceptMention, appendQuote, droppedUris, imageProblem, quoteAsContext, toolCallText, imageTypeOf, type MentionItem, mentionQuery } from "../model/mentions";
import type { AvailableCommand, ConfigOption, ConfigSelectGroup, ConfigSelectOption } from "../protocol";

declare function acquireVsCodeApi(): { postMessage(message: unknown): void };
const host = acquireVsCodeApi();
const send = (message: PanelToHost): void => host.postMessage(message);

// Keys typed here tell the host (at most once a KEYS_EVERY_MS): agent terminals then write smaller
// slices further apart, so this page's keys are not stuck behind xterm.js parsing a big one.
let keysSent = Number.NEGATIVE_INFINITY;
/** When the last key pressed here was handled (performance.now()): redraws take less of a frame, and
 * none in the frame that shows the key. Not the event's time stamp: a key pressed during a long
 * frame is handled after it, and the next frame is still the one that shows it. */
let lastKey = Number.NEGATIVE_INFINITY;
document.addEventListener(
  "keydown",
  (event) => {
    if (!isTyping(event.key, event.shiftKey)) return;
    lastKey = performance.now();
    if (event.timeStamp - keysSent < KEYS_EVERY_MS) return;
    keysSent = event.timeStamp;
    send({ type: "keys" });
  },
  { capture: true, passive: true },
);

// Ctrl+A (⌘A) in a text field selects its text natively, and VS Code's webview frame forwards the
// key to the workbench too (its keydown listener is on this window, in the bubbling phase). The
// workbench's select-all for a focused webview then comes back as `execCommand("selectAll")` one
// round trip later, selecting what was typed meanwhile for the next key to replace: "Ctrl+A 33"
// left "3" in a busy VS Code. Stopped at the document, the key selects once.
document.addEventListener("keydown", (event) => {
  const target = event.target;
  const textField = target instanceof HTMLTextAreaElement || (target instanceof HTMLInputElement && target.type === "text");
  if (textField && selectsAllInField(event.key, event)) event.stopPropagation();
});

// ---------------------------------------------------------------------------------------------------
// DOM helpers

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className !== undefined) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function icon(name: string): HTMLSpanElement {
  return el("span", `codicon codicon-${name.replace(/[^a-z0-9-~]/g, "")}`);
}

function button(iconName: string, title: string, onClick: () => void, label?: string): HTMLButtonElement {
  const b = el("button", label === undefined ? "icon-button" : "text-button");
  b.type = "button";
  b.title = title;
  b.setAttribute("aria-label", title);
  b.append(icon(iconName));
  if (label !== undefined) b.append(el("span", undefined, label));
  b.addEventListener("click", onClick);
  return b;
}

/** Markdown into an element: the renderer escapes every piece of the source (model/markdown.ts). */
function setMarkdown(target: HTMLElement, source: string): void {
  target.innerHTML = renderMarkdown(source);
}

// ---------------------------------------------------------------------------------------------------
// Layout

const app = document.getElementById("app") ?? document.body;
const toolbar = el("div", "toolbar");
const sessionSelect = el("select", "session-select");
sessionSelect.title = "Session";
sessionSelect.setAttribute("aria-label", "Session");
const stateBadge = el("span", "state");
toolbar.append(
  sessionSelect,
  button("add", "New session", () => send({ type: "newSession" })),
  button("hubot", "New session with another agent…", () => send({ type: "newSession", pickAgent: true })),
  button("history", "Load a stored session…", () => send({ type: "browseSessions" })),
  stateBadge,
);
const pickers = el("div", "pickers");
const planBox = el("div", "plan");
const log = el("div", "log");
log.setAttribute("role", "log");
log.setAttribute("aria-live", "polite");
/** First child of the log: what is above the first shown item, and the way to it. */
const earlierNote = el("div", "earlier");
const earlierText = el("span", "earlier-text");
const earlierButton = button("fold-up", "Show earlier items", () => showEarlierHere(), "Show earlier");
earlierNote.append(earlierText, earlierButton);
earlierNote.hidden = true;
const emptyHint = el(
  "div",
  "empty",
  "Ask the agent anything. Enter sends, Shift+Enter adds a line, ↑ recalls earlier prompts, / lists the agent's commands, @ mentions a file, symbol, @selection, @diagnostics, a terminal or a session; paste or drop an image.",
);
const promptsBox = el("div", "permission-prompts");
promptsBox.setAttribute("role", "region");
promptsBox.setAttribute("aria-label", "Permission prompts");
promptsBox.hidden = true;
const questionsBox = el("div", "questions");
questionsBox.setAttribute("role", "region");
questionsBox.setAttribute("aria-label", "Questions from the agent");
questionsBox.hidden = true;
const errorBar = el("div", "error-bar");
errorBar.hidden = true;
const footer = el("div", "composer");
const chipsBox = el("div", "chips");
const queueBox = el("div", "queue");
queueBox.setAttribute("role", "list");
queueBox.setAttribute("aria-label", "Prompts waiting for the turn to end");
queueBox.hidden = true;
const completions = el("ul", "completions");
completions.setAttribute("role", "listbox");
completions.hidden = true;
const prompt = el("textarea", "prompt");
prompt.rows = 3;
prompt.placeholder = "Ask the agent…  (Enter to send, Shift+Enter for a new line)";
prompt.setAttribute("aria-label", "Prompt");
const sendButton = button("send", "Send (Enter)", () => submit(), "Send");
sendButton.classList.add("send");
const cancelButton = button("debug-stop", "Cancel the turn", () => send({ type: "cancel" }), "Cancel");
cancelButton.classList.add("cancel");
cancelButton.hidden = true;
const actions = el("div", "actions");
actions.append(cancelButton, sendButton);
footer.append(queueBox, chipsBox, completions, prompt, actions);
app.append(toolbar, pickers, planBox, log, emptyHint, promptsBox, questionsBox, errorBar, footer);

// ---------------------------------------------------------------------------------------------------
// State

let session: SessionView | undefined;
/** The run of the shown session's newest items this page holds (`session` is its session). */
const mirror = new PanelMirror();
/** A page of older items was asked of the host and has not come yet. */
let askedEarlier = false;
let sessions: SessionChoice[] = [];
let agent: AgentInfo | undefined;
let busy = false;
let history = new PromptHistory();
const nodes = new Map<string, HTMLElement>();
const pending: Change = { items: [], removed: [], header: false, plan: false };
/** The animation frame (or, while a load streams in, the timer before it) that will redraw. */
let frame: number | undefined;
let errorTimer: number | undefined;
const chatWindow = new ChatWindow();

function schedule(change: Change): void {
  pending.items.push(...change.items);
  pending.removed.push(...change.removed);
  pending.header ||= change.header;
  pending.plan ||= change.plan;
  frame ??= requestAnimationFrame(renderPending);
}

/** Whether the conversation is scrolled to (near) its end, so new content should keep it there. */
function atBottom(): boolean {
  return log.scrollHeight - log.scrollTop - log.clientHeight < 48;
}

/** Set when the user sends a prompt: the next redraw scrolls to the end whatever the position. */
let scrollToEnd = false;
/** The log follows its end (set by each redraw that scrolled there, cleared by scrolling away). */
let following = true;

/** When the last redraw frame began, and since when the redraw has been put off for keys. */
let previousFrame = Number.NEGATIVE_INFINITY;
let heldSince: number | undefined;
/** Updates arrived since the last redraw frame: a load is streaming in. */
let streaming = false;
const pacer = new FramePacer();
/** Its message comes once the frame that posted it has been rendered (see drawItems). */
const frameEnd = new MessageChannel();
frameEnd.port1.onmessage = (event: MessageEvent<[number, number]>) => pacer.record(performance.now() - event.data[0], event.data[1]);

/** While a load streams in, the conversation is redrawn at most this often (every third frame at
 * 60 Hz): each redraw costs the shared main thread the whole workbench's style, layout, paint and
 * commit (~5 ms) whatever it draws, and while a load streams in the page's newest items are replaced
 * by the next messages' anyway. Keys still get every frame; the load's end shows at most this late. */
const STREAM_REDRAW_MS = 48;
let lastRedraw = Number.NEGATIVE_INFINITY;

function renderPending(): void {
  frame = undefined;
  const began = performance.now();
  if (streaming && began - lastRedraw < STREAM_REDRAW_MS) {
    // A timer, not an animation frame each frame: frames with nothing to do still cost the workbench.
    frame = window.setTimeout(() => (frame = requestAnimationFrame(renderPending)), STREAM_REDRAW_MS - (began - lastRedraw));
    return;
  }
  const keyed = holdsForKey(began, lastKey, previousFrame, (heldSince ??= began));
  previousFrame = began;
  if (keyed) {
    frame = requestAnimationFrame(renderPending);
    return;
  }
  heldSince = undefined;
  lastRedraw = began;
  const stick = following || atBottom() || scrollToEnd;
  scrollToEnd = false;
  const items = session?.items ?? [];
  for (const id of pending.removed) dropNode(id);
  pending.removed = [];
  if (stick) {
    // Following the end: the oldest shown items leave the page (they stay in the conversation).
    const leaving = chatWindow.follow(items.length, streaming);
    for (let i = leaving.from; i < leaving.to; i++) dropNode(items[i]?.id);
  }
  const places = new Map<string, number>();
  for (let i = chatWindow.start; i < items.length; i++) {
    const item = items[i];
    if (item !== undefined) places.set(item.id, i);
  }
  streaming = false;
  const ids = drawOrder(toRedraw(pending.items, places), places, stick);
  const done = drawItems(ids, items, places, began);
  // What waits goes back oldest first, as the updates marked it.
  pending.items = ids.slice(done).sort((a, b) => (places.get(a) ?? 0) - (places.get(b) ?? 0));
  if (pending.header) renderHeader();
  if (pending.plan) renderPlan();
  pending.header = false;
  pending.plan = false;
  renderNote();
  emptyHint.hidden = items.length > 0;
  if (stick) {
    log.scrollTop = log.scrollHeight;
    setFollowing(true);
  }
  // Busy while items of the page wait for a frame (the older ones, drawn after the end).
  log.setAttribute("aria-busy", String(pending.items.length > 0));
  if (pending.items.length > 0) frame ??= requestAnimationFrame(renderPending);
}

/** Draws the first of `ids` that fit in the frame (the pacer's count, and the frame's script time
 * within the budget); returns how many. The frame's whole cost is measured for the pacer: a message
 * posted now is taken once the frame's style, layout and paint are done. */
function drawItems(ids: readonly string[], items: readonly Item[], places: ReadonlyMap<string, number>, began: number): number {
  const budget = frameBudget(began, lastKey);
  const most = Math.min(ids.length, pacer.allowance(budget));
  let done = 0;
  while (done < most && (done === 0 || performance.now() - began < budget)) {
    const place = places.get(ids[done] ?? "");
    if (place !== undefined) renderItem(items, place, places);
    done += 1;
  }
  // The frame's own start and count travel with its message: a frame's message can still be on its
  // way when the next frame posts.
  if (done > 0) frameEnd.port2.postMessage([began, done]);
  return done;
}

function dropNode(id: string | undefined): void {
  if (id === undefined) return;
  nodes.get(id)?.remove();
  nodes.delete(id);
}

function renderNote(): void {
  const note = chatWindow.note(session?.trimmed ?? 0, mirror.start);
  earlierNote.hidden = note === undefined;
  earlierText.textContent = note ?? "";
  earlierButton.hidden = chatWindow.start + mirror.start === 0;
}

function renderAll(): void {
  log.replaceChildren(earlierNote);
  nodes.clear();
  pending.items = [];
  pending.removed = [];
  const items = session?.items ?? [];
  chatWindow.reset(items.length);
  askedEarlier = false;
  scrollToEnd = true;
  setFollowing(true);
  userScroll = false;
  schedule({ items: items.slice(chatWindow.start).map((i) => i.id), removed: [], header: true, plan: true });
}

/** The page before the first shown item goes into the page too, keeping what is on screen still. */
function showEarlier(): void {
  if (session === undefined) return;
  if (chatWindow.start === 0) {
    askEarlier();
    return;
  }
  const range = chatWindow.earlier();
  const before = log.scrollHeight;
  const top = log.scrollTop;
  const fragment = document.createDocumentFragment();
  for (let i = range.from; i < range.to; i++) {
    const item = session.items[i];
    if (item === undefined || nodes.has(item.id)) continue;
    const node = createItemNode(item);
    fillItem(node, item);
    nodes.set(item.id, node);
    fragment.append(node);
  }
  earlierNote.after(fragment);
  renderNote();
  log.scrollTop = top + (log.scrollHeight - before);
}

/** The button: the page comes in and the view moves up to where it joins what was shown, so the
 * next redraw does not take it out again as the end is followed. */
function showEarlierHere(): void {
  const joint = earlierNote.nextElementSibling;
  showEarlier();
  if (joint instanceof HTMLElement) {
    setFollowing(false);
    userScroll = true;
    log.scrollTop = Math.max(0, joint.offsetTop - log.offsetTop - log.clientHeight / 2);
  }
}

/** Set by the user's own scrolling (wheel, touch, the scrollbar, keys); only that stops following:
 * a redraw's own scroll, items leaving the top, or off-screen items getting their real height
 * (content-visibility) also fire scroll events, and must not stop it mid-load. */
let userScroll = false;
for (const type of ["wheel", "touchstart", "pointerdown"]) log.addEventListener(type, () => (userScroll = true), { passive: true });
log.addEventListener("keydown", (event) => {
  if (["PageUp", "PageDown", "ArrowUp", "ArrowDown", "Home", "End", " "].includes(event.key)) userScroll = true;
});

let paging: number | undefined;
log.addEventListener("scroll", () => {
  // Following the end until the user scrolls away from it; back at the end, following again.
  if (atBottom()) {
    setFollowing(true);
    userScroll = false;
  } else if (userScroll) {
    setFollowing(false);
  }
  // Scrolled up to the top of what is shown: the page before it comes in.
  if (!following && log.scrollTop < 64 && chatWindow.start + mirror.start > 0 && paging === undefined) {
    paging = requestAnimationFrame(() => {
      paging = undefined;
      showEarlier();
    });
  }
});

// ---------------------------------------------------------------------------------------------------
// Items

/** Draws `items[place]`; a new node goes before the node of the next item that has one (items
 * are drawn newest first while following the end), else at the end of the log. */
function renderItem(items: readonly Item[], place: number, places: ReadonlyMap<string, number>): void {
  const item = items[place];
  if (item === undefined) return;
  const existing = nodes.get(item.id);
  const node = existing ?? createItemNode(item);
  fillItem(node, item);
  if (existing !== undefined) return;
  nodes.set(item.id, node);
  const next = nextNode(items, place, places);
  if (next === undefined) log.append(node);
  else next.before(node);
}

/** The node a new item at `place` goes before: none when it comes after the log's last node (asked
 * first: a page that does not follow the end grows with a long load, and scanning its undrawn
 * items for each new one would cost a frame's budget), else that of the next item that has one. */
function nextNode(items: readonly Item[], place: number, places: ReadonlyMap<string, number>): HTMLElement | undefined {
  const last = log.lastElementChild;
  if (last === earlierNote) return undefined;
  const lastPlace = last instanceof HTMLElement ? places.get(last.dataset.id ?? "") : undefined;
  if (lastPlace !== undefined && lastPlace < place) return undefined;
  for (let i = place + 1; i < items.length; i++) {
    const node = nodes.get(items[i]?.id ?? "");
    if (node !== undefined) return node;
  }
  return undefined;
}

function createItemNode(item: Item): HTMLElement {
  if (item.kind === "message" && item.role === "thought") {
    const details = el("details", "item thought");
    details.dataset.id = item.id;
    const summary = el("summary");
    summary.append(icon("lightbulb"), el("span", undefined, "Thinking"));
    details.append(summary, el("div", "md"));
    return details;
  }
  const node = el("div", `item ${item.kind.replace("_", "-")}`);
  node.dataset.id = item.id;
  return node;
}

function fillItem(node: HTMLElement, item: Item): void {
  switch (item.kind) {
    case "message": {
      if (item.role === "thought") {
        const body = node.querySelector(".md");
        if (body instanceof HTMLElement) setMarkdown(body, messageText(item));
        return;
      }
      node.className = `item message ${item.role === "user" ? "user" : "agent"}`;
      let body = node.querySelector(":scope > .md");
      if (!(body instanceof HTMLElement)) {
        body = el("div", "md");
        node.append(body);
      }
      setMarkdown(body as HTMLElement, messageText(item));
      if (node.querySelector(":scope > .copy-context") === null) {
        const id = item.id;
        node.append(
          copyButton(() => {
            const now = session?.items.find((i) => i.id === id);
            const message = now?.kind === "message" ? now : item;
            return quoteAsContext(message.role === "user" ? "my message" : "agent message", messageText(message));
          }),
        );
      }
      if (item.role === "user" && node.querySelector(":scope > .restore") === null) {
        const restore = el("button", "restore");
        restore.title = "Restore checkpoint: the workspace as it was before this message";
        restore.setAttribute("aria-label", "Restore checkpoint");
        restore.append(icon("discard"));
        restore.addEventListener("click", () => send({ type: "restoreCheckpoint", itemId: item.id }));
        node.append(restore);
      }
      return;
    }
    case "tool_call":
      fillToolCall(node, item);
      return;
    case "notice": {
      node.className = `item notice ${item.severity}`;
      node.replaceChildren(icon(item.severity === "error" ? "error" : item.severity === "warning" ? "warning" : "info"), el("strong", undefined, item.title));
      if (item.description !== undefined) node.append(el("div", "description", item.description));
      return;
    }
    case "compaction":
      node.replaceChildren(icon("fold"), el("span", undefined, `Context compaction: ${item.status}`));
      if (typeof item.summary === "string") node.append(el("div", "description", item.summary));
      return;
    case "auto_permission":
      node.replaceChildren(
        icon("pass"),
        el("span", undefined, `${item.toolCall.title ?? item.toolCall.toolCallId}: answered “${item.optionKind.replace(/_/g, " ")}” ${item.ruleId === undefined ? "automatically" : `by rule ${item.ruleId}`}`),
      );
      return;
    case "unknown": {
      const details = el("details");
      details.append(el("summary", undefined, `Update “${String(item.raw.sessionUpdate)}”`), el("pre", undefined, JSON.stringify(item.raw, null, 2)));
      node.replaceChildren(details);
      return;
    }
    case "turn_end":
      node.className = `item turn-end ${item.stopReason === "end_turn" ? "" : "stopped"}`;
      node.replaceChildren(
        el(
          "span",
          undefined,
          item.error === undefined
            ? `— ${item.stopReason.replace(/_/g, " ")}${item.tokens !== undefined ? ` · ${item.tokens}` : ""} —`
            : `— ${String(item.error)} —`,
        ),
      );
      return;
  }
}

function fillToolCall(node: HTMLElement, item: ToolCallItem): void {
  const call = item.toolCall;
  const status = call.status ?? "pending";
  node.className = `item tool status-${status.replace(/[^a-z_]/gi, "")}`;
  node.dataset.toolCallId = call.toolCallId;
  const head = el("div", "tool-head");
  head.tabIndex = 0;
  head.setAttribute("role", "button");
  const targets = toolCallTargets(call);
  head.title = targets.length > 0 ? "Open" : "";
  head.append(icon(toolKindIcon(call.kind)), el("span", "tool-title", call.title ?? call.name ?? call.toolCallId));
  const badge = el("span", "badge", toolStatusLabel(status));
  if (status === "in_progress" || status === "pending") badge.prepend(icon("loading~spin"));
  head.append(badge);
  const openFirst = (): void => {
    const first = targets[0];
    if (first !== undefined) openTarget(first, call.toolCallId);
  };
  head.addEventListener("click", openFirst);
  head.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      openFirst();
    }
  });
  const body = el("div", "tool-body");
  for (const content of call.content ?? []) {
    if (content.type === "content" && typeof content.content === "object" && content.content !== null) {
      const block = content.content as { type?: unknown; text?: unknown };
      if (block.type === "text" && typeof block.text === "string") {
        const md = el("div", "md tool-text");
        setMarkdown(md, block.text.length > 4000 ? `${block.text.slice(0, 4000)}\n\n…` : block.text);
        body.append(md);
      }
    } else if (content.type === "diff") {
      const stats = typeof content.newText === "string" ? lineStats(typeof content.oldText === "string" ? content.oldText : "", content.newText) : undefined;
      const label = typeof content.path === "string" ? baseName(content.path) : diffChangesLabel(content.changes);
      body.append(link("diff", `${label}${stats === undefined ? "" : ` +${stats.added} -${stats.removed}`}`, () => send({ type: "openDiff", toolCallId: call.toolCallId }), "diff"));
    } else if (content.type === "terminal" && typeof content.terminalId === "string") {
      const terminalId = content.terminalId;
      body.append(link("terminal", `Terminal ${terminalId}`, () => send({ type: "openTerminal", terminalId }), "terminal-link"));
    }
  }
  for (const location of call.locations ?? []) {
    body.append(link("file", `${baseName(location.path)}${location.line === undefined ? "" : `:${location.line}`}`, () => send({ type: "openLocation", path: location.path, line: location.line }), "location"));
  }
  // Keep a nested list the user opened open across re-renders (collapsed at first).
  const wasOpen = node.querySelector(":scope > details.subagent")?.hasAttribute("open") === true;
  node.replaceChildren(head, copyButton(() => quoteAsContext("tool call", toolCallText(call))));
  if (body.childElementCount > 0) node.append(body);
  const children = item.children ?? [];
  if (children.length > 0) {
    const nested = el("details", "subagent");
    if (wasOpen) nested.setAttribute("open", "");
    nested.append(el("summary", undefined, subagentSummary(children)));
    for (const child of children) {
      const row = el("div", `subagent-call status-${(child.status ?? "pending").replace(/[^a-z_]/gi, "")}`);
      row.append(icon(toolKindIcon(child.kind)), el("span", "tool-title", child.title ?? child.name ?? child.toolCallId), el("span", "badge", toolStatusLabel(child.status ?? "pending")));
      const first = toolCallTargets(child)[0];
      if (first !== undefined) {
        row.classList.add("openable");
        row.addEventListener("click", () => openTarget(first, child.toolCallId));
      }
      nested.append(row);
    }
    node.append(nested);
  }
}

/** "Copy as context": the item quoted into the prompt box, after what is there. */
function copyButton(quote: () => string): HTMLButtonElement {
  const b = el("button", "copy-context");
  b.type = "button";
  b.title = "Copy as context: quote this into the next prompt";
  b.setAttribute("aria-label", "Copy as context");
  b.append(icon("copy"));
  b.addEventListener("click", (event) => {
    event.stopPropagation();
    prompt.value = appendQuote(prompt.value, quote());
    prompt.focus();
    prompt.setSelectionRange(prompt.value.length, prompt.value.length);
  });
  return b;
}

function link(iconName: string, label: string, onClick: () => void, className: string): HTMLElement {
  const a = el("a", `tool-link ${className}`);
  a.href = "#";
  a.append(icon(iconName), el("span", undefined, label));
  a.addEventListener("click", (event) => {
    event.preventDefault();
    event.stopPropagation();
    onClick();
  });
  return a;
}

/** A v2 diff's `changes`: the files and what happens to each ("calc.py", "new.py (add)"). */
function diffChangesLabel(changes: unknown): string {
  if (!Array.isArray(changes) || changes.length === 0) return "changes";
  return changes
    .map((change: unknown) => {
      const c = (typeof change === "object" && change !== null ? change : {}) as { path?: unknown; operation?: unknown };
      const name = typeof c.path === "string" ? baseName(c.path) : "?";
      return c.operation === undefined || c.operation === "modify" ? name : `${name} (${String(c.operation)})`;
    })
    .join(", ");
}

function baseName(path: string): string {
  return path.split("/").pop() ?? path;
}

function openTarget(target: ReturnType<typeof toolCallTargets>[number], toolCallId: string): void {
  if (target.kind === "diff") send({ type: "openDiff", toolCallId });
  else if (target.kind === "terminal") send({ type: "openTerminal", terminalId: target.terminalId });
  else send({ type: "openLocation", path: target.path, line: target.line });
}

// Links inside rendered markdown go through the host (which opens only safe schemes).
log.addEventListener("click", (event) => {
  const anchor = (event.target as Element | null)?.closest?.(".md a");
  if (anchor instanceof HTMLAnchorElement) {
    event.preventDefault();
    const href = anchor.getAttribute("href");
    if (href !== null) send({ type: "openLink", href });
  }
});

// ---------------------------------------------------------------------------------------------------
// Header: sessions, modes, config options, state; and the plan

function renderHeader(): void {
  sessionSelect.replaceChildren();
  const choices = [...sessions];
  if (session !== undefined && !choices.some((c) => c.sessionId === session?.sessionId)) choices.push({ sessionId: session.sessionId });
  if (choices.length === 0) sessionSelect.append(new Option("No session yet", ""));
  for (const choice of choices) {
    const title = choice.sessionId === session?.sessionId ? (session.title ?? choice.title) : choice.title;
    sessionSelect.append(new Option(sessionChoiceLabel(choice, choices, title), choice.sessionId, false, choice.sessionId === session?.sessionId));
  }
  pickers.replaceChildren();
  if (session?.modes !== undefined && session.modes.availableModes.length > 0) {
    const modes = session.modes;
    const select = el("select", "mode-select");
    select.title = "Mode";
    select.setAttribute("aria-label", "Mode");
    for (const mode of modes.availableModes) {
      const option = new Option(mode.name, mode.id, false, mode.id === modes.currentModeId);
      if (mode.description !== undefined) option.title = mode.description;
      select.append(option);
    }
    select.addEventListener("change", () => send({ type: "setMode", modeId: select.value }));
    pickers.append(labelled("Mode", select));
  }
  for (const option of session?.configOptions ?? []) pickers.append(configPicker(option));
  pickers.hidden = pickers.childElementCount === 0;
  const state = session?.state ?? "idle";
  // The agent's own word (v2 state_update) wins: "needs you" while it waits on the user.
  const turn = state === "requires_action" ? stateLabel(state) : busy ? "working" : stateLabel(state);
  const dot = state === "requires_action" ? "needs-you" : turn;
  stateBadge.replaceChildren(el("span", `dot ${dot}`), el("span", undefined, agent === undefined ? turn : `${agent.label} · ${agent.state === "running" ? turn : agent.state}`));
  stateBadge.title = agent?.message ?? "";
  const meter = usageText(session?.usage);
  const share = usageFraction(session?.usage);
  if (meter !== undefined && share !== undefined) {
    const gauge = el("span", `usage${share >= WARN_AT ? " near-limit" : ""}`, `${Math.round(share * 100)}%`);
    gauge.title = meter;
    gauge.setAttribute("aria-label", meter);
    stateBadge.append(gauge);
    stateBadge.title = `${stateBadge.title} ${meter}`.trim();
  }
}

function labelled(text: string, control: HTMLElement): HTMLElement {
  const label = el("label", "picker");
  label.append(el("span", undefined, text), control);
  return label;
}

function configPicker(option: ConfigOption): HTMLElement {
  if (option.type === "boolean" || typeof option.currentValue === "boolean") {
    const box = el("input");
    box.type = "checkbox";
    box.checked = option.currentValue === true;
    box.addEventListener("change", () => send({ type: "setConfigOption", configId: option.configId, value: box.checked }));
    return labelled(option.name, box);
  }
  const select = el("select");
  select.setAttribute("aria-label", option.name);
  if (option.description !== undefined) select.title = option.description;
  const addOption = (o: ConfigSelectOption, parent: HTMLElement): void => {
    parent.append(new Option(o.name, o.value, false, o.value === option.currentValue));
  };
  for (const entry of option.options ?? []) {
    if ("group" in entry && Array.isArray((entry as ConfigSelectGroup).options)) {
      const group = el("optgroup");
      group.label = entry.name;
      for (const o of (entry as ConfigSelectGroup).options) addOption(o, group);
      select.append(group);
    } else {
      addOption(entry as ConfigSelectOption, select);
    }
  }
  select.addEventListener("change", () => send({ type: "setConfigOption", configId: option.configId, value: select.value }));
  return labelled(option.name, select);
}

function renderPlan(): void {
  const entries = session?.plan ?? [];
  planBox.hidden = entries.length === 0;
  if (entries.length === 0) return;
  const done = entries.filter((e) => e.status === "completed").length;
  const details = el("details");
  details.open = true;
  details.append(el("summary", undefined, `Plan · ${done}/${entries.length} done`));
  const list = el("ol");
  for (const entry of entries) {
    const status = entry.status ?? "pending";
    const li = el("li", `plan-entry ${status}`);
    li.append(icon(status === "completed" ? "pass-filled" : status === "in_progress" ? "loading~spin" : "circle-large-outline"), el("span", undefined, entry.content));
    if (entry.priority === "high") li.append(el("span", "priority", "high"));
    list.append(li);
  }
  details.append(list);
  planBox.replaceChildren(details);
}

sessionSelect.addEventListener("change", () => {
  if (sessionSelect.value !== "" && sessionSelect.value !== session?.sessionId) send({ type: "switchSession", sessionId: sessionSelect.value });
});

// ---------------------------------------------------------------------------------------------------
// Composer: prompt box, history, slash completion, context chips

let shown: AvailableCommand[] = [];
let mentionShown: MentionItem[] = [];
let completing: "slash" | "mention" = "slash";
let mentionSeq = 0;
let mentionTimer: number | undefined;
let maxImageBytes = 5 * 1024 * 1024;
let selected = 0;

function completionCount(): number {
  return completing === "slash" ? shown.length : mentionShown.length;
}

function submit(): void {
  const text = prompt.value;
  if (text.trim() === "") return; // while a turn runs, the host queues it
  history.add(text);
  scrollToEnd = true;
  prompt.value = "";
  closeCompletions();
  send({ type: "prompt", text });
}

function closeCompletions(): void {
  completions.hidden = true;
  shown = [];
  mentionShown = [];
  mentionSeq += 1; // an answer still on its way is stale
}

function updateCompletions(): void {
  const query = slashQuery(prompt.value, prompt.selectionStart);
  if (query === undefined) {
    const mention = mentionQuery(prompt.value, prompt.selectionStart);
    if (mention !== undefined) {
      askMentions(mention.prefix);
      return;
    }
  }
  completing = "slash";
  mentionShown = [];
  shown = query === undefined ? [] : completeSlash(session?.commands ?? [], query.prefix);
  if (shown.length === 0) {
    closeCompletions();
    return;
  }
  selected = Math.min(selected, shown.length - 1);
  completions.replaceChildren(
    ...shown.map((command, index) => {
      const li = el("li", index === selected ? "selected" : undefined);
      li.setAttribute("role", "option");
      li.append(el("span", "name", `/${command.name}`), el("span", "description", command.description ?? ""));
      li.addEventListener("mousedown", (event) => {
        event.preventDefault();
        selected = index;
        acceptCompletion();
      });
      return li;
    }),
  );
  completions.hidden = false;
}

/** Asks the host for the items of `@prefix` (files and sessions come from the server, symbols from
 * the language servers), a moment after the last key. */
function askMentions(prefix: string): void {
  if (mentionTimer !== undefined) clearTimeout(mentionTimer);
  const seq = ++mentionSeq;
  mentionTimer = window.setTimeout(() => send({ type: "mentionQuery", seq, prefix }), 60);
}

function showMentions(seq: number, items: MentionItem[]): void {
  if (seq !== mentionSeq || mentionQuery(prompt.value, prompt.selectionStart) === undefined) return;
  completing = "mention";
  shown = [];
  mentionShown = items;
  if (items.length === 0) {
    completions.hidden = true;
    return;
  }
  selected = Math.min(selected, items.length - 1);
  renderMentionList();
}

function renderMentionList(): void {
  completions.replaceChildren(
    ...mentionShown.map((item, index) => {
      const li = el("li", index === selected ? "selected mention" : "mention");
      li.setAttribute("role", "option");
      li.dataset.kind = item.kind;
      li.append(icon(item.kind === "file" ? "file" : item.kind === "symbol" ? "symbol-method" : item.kind === "selection" ? "selection" : item.kind === "diagnostics" ? "warning" : item.kind === "terminal" ? "terminal" : "comment-discussion"));
      li.append(el("span", "name", item.label), el("span", "description", item.detail ?? ""));
      li.addEventListener("mousedown", (event) => {
        event.preventDefault();
        selected = index;
        acceptCompletion();
      });
      return li;
    }),
  );
  completions.hidden = false;
}

function acceptCompletion(): void {
  if (completing === "mention") {
    const query = mentionQuery(prompt.value, prompt.selectionStart);
    const item = mentionShown[selected];
    if (query === undefined || item === undefined) return;
    const result = acceptMention(prompt.value, query, item.token);
    prompt.value = result.text;
    prompt.setSelectionRange(result.caret, result.caret);
    closeCompletions();
    send({ type: "pickMention", id: item.id });
    return;
  }
  const query = slashQuery(prompt.value, prompt.selectionStart);
  const command = shown[selected];
  if (query === undefined || command === undefined) return;
  const result = acceptSlash(prompt.value, query, command);
  prompt.value = result.text;
  prompt.setSelectionRange(result.caret, result.caret);
  closeCompletions();
}

prompt.addEventListener("input", () => {
  selected = 0;
  updateCompletions();
});

prompt.addEventListener("keydown", (event) => {
  if (event.isComposing) return;
  if (!completions.hidden && completionCount() > 0) {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const count = completionCount();
      selected = (selected + (event.key === "ArrowDown" ? 1 : count - 1)) % count;
      if (completing === "mention") renderMentionList();
      else updateCompletions();
      return;
    }
    const query = slashQuery(prompt.value, prompt.selectionStart);
    const complete = completing === "slash" && query !== undefined && shown[selected]?.name === query.prefix;
    if (event.key === "Tab" || (event.key === "Enter" && !event.shiftKey && !complete)) {
      event.preventDefault();
      acceptCompletion();
      return;
    }
    // Enter on a command typed in full sends it, like any prompt.
    if (event.key === "Enter") closeCompletions();
    if (event.key === "Escape") {
      event.preventDefault();
      closeCompletions();
      return;
    }
  }
  if (event.key === "Enter" && !event.shiftKey && !event.altKey && !event.ctrlKey && !event.metaKey) {
    event.preventDefault();
    submit();
  } else if (event.key === "ArrowUp" && !prompt.value.slice(0, prompt.selectionStart).includes("\n")) {
    const previous = history.previous(prompt.value);
    if (previous !== undefined) {
      event.preventDefault();
      prompt.value = previous;
    }
  } else if (event.key === "ArrowDown" && !prompt.value.slice(prompt.selectionEnd).includes("\n")) {
    const next = history.next();
    if (next !== undefined) {
      event.preventDefault();
      prompt.value = next;
    }
  } else if (event.key === "Escape" && busy) {
    send({ type: "cancel" });
  }
});

/** Prompts waiting for the turn to end: each editable (back into the input), removable, and, where
 * the agent takes it, sent into the running turn now (steer). */
function renderQueue(items: PanelQueued[]): void {
  queueBox.replaceChildren(
    ...items.map((item) => {
      const row = el("div", "queued");
      row.setAttribute("role", "listitem");
      row.append(icon("clock"), el("span", "queued-text", item.text));
      if (agent?.canSteer === true) row.append(button("arrow-right", "Steer: give it to the agent now", () => send({ type: "queued", id: item.id, action: "steer" }), "Steer"));
      row.append(
        button("edit", "Edit (back into the input)", () => send({ type: "queued", id: item.id, action: "edit" })),
        button("close", "Remove", () => send({ type: "queued", id: item.id, action: "remove" })),
      );
      return row;
    }),
  );
  queueBox.hidden = items.length === 0;
}

function renderChips(chips: ContextChip[]): void {
  chipsBox.replaceChildren(
    ...chips.map((chip, index) => {
      const span = el("span", "chip");
      span.title = chip.title;
      span.append(icon(chip.icon), el("span", "chip-label", chip.label), button("close", "Remove", () => send({ type: "removeContext", index })));
      return span;
    }),
  );
  chipsBox.hidden = chips.length === 0;
}

// ---------------------------------------------------------------------------------------------------
// Images: pasted into the prompt box or dropped on the panel, checked here (type, the agent takes
// images, size) before they are read, and again by the host.

function attachImageFile(file: File): void {
  const mimeType = file.type !== "" ? file.type : (imageTypeOf(file.name) ?? "");
  const name = file.name !== "" ? file.name : `pasted.${mimeType.split("/")[1] ?? "png"}`;
  const problem = imageProblem(name, mimeType, file.size, maxImageBytes, agent?.images);
  if (problem !== undefined) {
    showError(problem);
    return;
  }
  const reader = new FileReader();
  reader.addEventListener("load", () => {
    const url = typeof reader.result === "string" ? reader.result : "";
    const data = url.slice(url.indexOf(",") + 1);
    send({ type: "attachImage", name, mimeType, data });
  });
  reader.addEventListener("error", () => showError(`Could not read ${name}.`));
  reader.readAsDataURL(file);
}

function imageFiles(list: FileList | null | undefined): File[] {
  return [...(list ?? [])].filter((f) => f.type.startsWith("image/") || imageTypeOf(f.name) !== undefined);
}

prompt.addEventListener("paste", (event) => {
  const files = imageFiles(event.clipboardData?.files);
  if (files.length === 0) return; // text pastes as usual
  event.preventDefault();
  for (const file of files) attachImageFile(file);
});

app.addEventListener("dragover", (event) => {
  event.preventDefault();
  if (event.dataTransfer !== null) event.dataTransfer.dropEffect = "copy";
});

app.addEventListener("drop", (event) => {
  event.preventDefault();
  const transfer = event.dataTransfer;
  if (transfer === null) return;
  const files = [...transfer.files];
  const images = imageFiles(transfer.files);
  for (const file of images) attachImageFile(file);
  for (const file of files) if (!images.includes(file)) showError(`${file.name} is not an image: drop files from the explorer with Shift held, or mention them with @.`);
  if (files.length > 0) return;
  // From VS Code's explorer (Shift+drop): URIs of workspace files.
  const uris = droppedUris(transfer.getData("text/uri-list"), transfer.getData("application/vnd.code.uri-list"));
  if (uris.length > 0) send({ type: "attachDropped", uris });
});

/** The agent's waiting permission prompts, one button per option, in the agent's order. */
function renderPrompts(prompts: PanelPrompt[]): void {
  const stick = atBottom();
  promptsBox.replaceChildren(
    ...prompts.map((prompt) => {
      const box = el("div", "permission-prompt");
      const head = el("div", "permission-message");
      const text = el("span");
      text.innerHTML = renderInline(prompt.message); // escaped by the renderer
      head.append(icon("shield"), text);
      const buttons = el("div", "permission-options");
      for (const option of prompt.options) {
        const b = el("button", `text-button option ${option.kind.startsWith("allow") ? "allow" : option.kind.startsWith("reject") ? "reject" : "other"}`, option.label);
        b.type = "button";
        b.title = option.kind;
        b.addEventListener("click", () => send({ type: "answerPermission", key: prompt.key, optionId: option.optionId }));
        buttons.append(b);
      }
      if (prompt.hasDiff) {
        buttons.append(link("diff", "Show diff", () => send({ type: "openDiff", toolCallId: prompt.toolCallId }), "show-diff"));
      }
      box.append(head, buttons);
      return box;
    }),
  );
  promptsBox.hidden = prompts.length === 0;
  if (stick) log.scrollTop = log.scrollHeight;
}

/** The agent's waiting questions as forms: every control reachable with Tab, Enter sends, Escape
 * cancels. acpls checks the answer and asks again (with the problems) when it does not fit. */
function renderQuestions(questions: PanelQuestion[]): void {
  const stick = atBottom();
  const keep = new Map([...questionsBox.querySelectorAll<HTMLFormElement>("form.question")].map((f) => [f.dataset.key ?? "", f]));
  placeInOrder(questionsBox, questions.map((q) => keep.get(q.key) ?? questionForm(q)));
  questionsBox.hidden = questions.length === 0;
  if (stick) log.scrollTop = log.scrollHeight;
}

/** Makes `box`'s children exactly `nodes`, in order, moving only what is out of place: a form the
 * user is typing in stays in the document, so it keeps the focus and no keystroke is lost (taking
 * a focused node out of the document, even to put it straight back, blurs it). */
function placeInOrder(box: HTMLElement, nodes: HTMLElement[]): void {
  nodes.forEach((node, index) => {
    const there = box.children.item(index);
    if (there !== node) box.insertBefore(node, there);
  });
  while (box.children.length > nodes.length) box.lastElementChild?.remove();
}

function questionForm(q: PanelQuestion): HTMLFormElement {
  const form = el("form", "question");
  form.dataset.key = q.key;
  form.noValidate = true;
  form.setAttribute("aria-label", "Question from the agent");
  const head = el("div", "question-message");
  const text = el("span");
  text.innerHTML = renderInline(q.message).replace(/\n/g, "<br>"); // escaped by the renderer
  head.append(icon("question"), text);
  form.append(head);
  const answer = (action: "accept" | "decline" | "cancel", values?: FieldValues): void =>
    send({ type: "answerQuestion", key: q.key, action, ...(values !== undefined ? { values } : {}) });
  const buttons = el("div", "question-buttons");
  const button = (label: string, cls: string, onClick?: () => void): HTMLButtonElement => {
    const b = el("button", `text-button ${cls}`, label);
    b.type = onClick === undefined ? "submit" : "button";
    if (onClick !== undefined) b.addEventListener("click", onClick);
    return b;
  };
  if (q.mode === "url") {
    const url = el("div", "question-url", q.url ?? "");
    form.append(url);
    buttons.append(
      button("Open page", "primary", () => send({ type: "openQuestionUrl", key: q.key })),
      button("Done", "primary", () => answer("accept")),
      button("Decline", "secondary", () => answer("decline")),
      button("Cancel", "secondary", () => answer("cancel")),
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      answer("accept");
    });
  } else {
    const readers = q.fields.map((field, index) => {
      const { row, read } = fieldRow(q.key, field, index);
      form.append(row);
      return [field.name, read] as const;
    });
    buttons.append(
      button("Send", "primary"),
      button("Decline", "secondary", () => answer("decline")),
      button("Cancel", "secondary", () => answer("cancel")),
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const values: FieldValues = {};
      for (const [name, read] of readers) values[name] = read();
      answer("accept", values);
    });
  }
  form.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      answer("cancel");
    }
  });
  form.append(buttons);
  return form;
}

function fieldRow(key: string, field: FormField, index: number): { row: HTMLElement; read: () => string | boolean | string[] | undefined } {
  const id = `${key}-f${index}`;
  const row = el("div", "question-field");
  const label = el("label", undefined, field.label + (field.required ? " *" : ""));
  label.htmlFor = id;
  const notes = [field.description, field.hint].filter((t): t is string => t !== undefined && t !== "").join(" · ");
  const help = el("div", "question-help", notes);
  help.id = `${id}-help`;
  if (field.kind === "boolean") {
    const box = el("input");
    box.type = "checkbox";
    box.id = id;
    box.checked = field.default === true;
    box.setAttribute("aria-describedby", help.id);
    row.append(box, label, help);
    return { row, read: () => box.checked };
  }
  if (field.kind === "multi") {
    const set = el("fieldset", "question-multi");
    set.id = id;
    set.append(el("legend", undefined, field.label + (field.required ? " *" : "")));
    const chosen = Array.isArray(field.default) ? field.default : [];
    const boxes = field.options.map((option, i) => {
      const box = el("input");
      box.type = "checkbox";
      box.id = `${id}-o${i}`;
      box.value = option.value;
      box.checked = chosen.includes(option.value);
      const l = el("label", undefined, option.title);
      l.htmlFor = box.id;
      set.append(box, l);
      return box;
    });
    row.append(set, help);
    return { row, read: () => boxes.filter((b) => b.checked).map((b) => b.value) };
  }
  if (field.kind === "choice") {
    const select = el("select");
    select.id = id;
    select.setAttribute("aria-describedby", help.id);
    if (!field.required || field.default === undefined) select.append(new Option(field.required ? "Choose…" : "—", ""));
    for (const option of field.options) select.append(new Option(option.title, option.value, false, option.value === field.default));
    row.append(label, select, help);
    return { row, read: () => (select.value === "" ? undefined : select.value) };
  }
  const input = el("input");
  input.type = "text";
  input.id = id;
  input.value = field.default !== undefined ? String(field.default) : "";
  if (field.kind === "number" || field.kind === "integer") input.inputMode = field.kind === "integer" ? "numeric" : "decimal";
  input.setAttribute("aria-describedby", help.id);
  row.append(label, input, help);
  return { row, read: () => input.value };
}

function setBusy(value: boolean): void {
  busy = value;
  cancelButton.hidden = !busy;
  // While the agent works, Send queues the prompt (sent when the turn ends).
  sendButton.title = busy ? "Queue (sent when the turn ends)" : "Send (Enter)";
  app.classList.toggle("busy", busy);
  schedule({ items: [], removed: [], header: true, plan: false });
}

function showError(message: string): void {
  errorBar.textContent = message;
  errorBar.hidden = false;
  if (errorTimer !== undefined) clearTimeout(errorTimer);
  errorTimer = window.setTimeout(() => {
    errorBar.hidden = true;
  }, 8000);
}

// ---------------------------------------------------------------------------------------------------
// Messages from the host

window.addEventListener("message", (event: MessageEvent<HostToPanel>) => {
  const message = event.data;
  switch (message.type) {
    case "snapshot":
      mirror.show(message.session, message.start);
      session = mirror.session;
      sessions = message.sessions;
      agent = message.agent;
      history = new PromptHistory(message.history);
      maxImageBytes = message.maxImageBytes;
      setBusy(message.busy);
      renderAll();
      break;
    case "window":
      applyPost(JSON.parse(message.json) as WindowPost, message.streaming);
      break;
    case "earlier":
      takeEarlier(JSON.parse(message.json) as { sessionId: string; start: number; items: Item[] });
      break;
    case "busy":
      setBusy(message.busy);
      break;
    case "sessions":
      sessions = message.sessions;
      schedule({ items: [], removed: [], header: true, plan: false });
      break;
    case "agent":
      agent = message.agent;
      schedule({ items: [], removed: [], header: true, plan: false });
      break;
    case "context":
      renderChips(message.chips);
      break;
    case "mentionItems":
      showMentions(message.seq, message.items);
      break;
    case "frame": {
      const seq = message.seq;
      requestAnimationFrame(() => send({ type: "frame", seq }));
      break;
    }
    case "queue":
      renderQueue(message.items);
      break;
    case "permissions":
      renderPrompts(message.prompts);
      break;
    case "questions":
      renderQuestions(message.questions);
      break;
    case "focusQuestion":
      questionsBox.querySelector<HTMLElement>("form.question input, form.question select, form.question button")?.focus();
      break;
    case "focusPrompt":
      if (message.text !== undefined) prompt.value = message.text;
      prompt.focus();
      break;
    case "error":
      showError(message.message);
      break;
  }
});

/** A post of the host's (model/panelFeed.ts): the run of items changes, and the page redraws what
 * changed; another session's post shows that session afresh. */
function applyPost(post: WindowPost, fromAgent: boolean): void {
  const another = session?.sessionId !== post.sessionId;
  const { change, dropped } = mirror.apply(post);
  session = mirror.session;
  if (another || post.reset) {
    renderAll();
    return;
  }
  chatWindow.trimmed(dropped);
  schedule(change);
  streaming ||= fromAgent;
}

/** The host's answer to `askEarlier`: the items go before the run, and into the page. */
function takeEarlier(page: { sessionId: string; start: number; items: Item[] }): void {
  askedEarlier = false;
  if (session?.sessionId !== page.sessionId) return;
  chatWindow.start += mirror.prepend(page.start, page.items);
  showEarlier();
}

/** Above the run this page holds: the host has the rest of the conversation. */
function askEarlier(): void {
  if (session === undefined || mirror.start === 0 || askedEarlier) return;
  askedEarlier = true;
  setFollowing(false);
  send({ type: "earlier", sessionId: session.sessionId });
}

/** Whether the log follows its end; the host hears of each change (it trims what it posts). */
function setFollowing(value: boolean): void {
  if (following === value) return;
  following = value;
  send({ type: "follow", following: value });
}

renderChips([]);
renderAll();
send({ type: "ready" });
