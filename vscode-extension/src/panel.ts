// The agent panel: a webview view with the conversation. The host side keeps every session's
// conversation (so nothing is lost while the panel is hidden), posts the webview the items of the
// shown session it holds as they change (src/model/panelFeed.ts: only the run of newest items the
// page keeps, at most one post per 48 ms while updates stream in, src/model/postPacing.ts), older
// pages when it scrolls up, and turns what the user does in the panel into the server's commands.

import { randomBytes } from "node:crypto";
import * as vscode from "vscode";
import type { AcplsClient } from "./client";
import { addLocalPrompt, addTurnEnd, type Change, ConversationStore, type SessionView } from "./model/conversation";
import { type AgentInfo, type EditorContext, type HostToPanel, isPanelMessage, type PanelPrompt, type PanelQuestion, type PanelToHost, type SessionChoice } from "./model/panelMessages";
import { type Attachment, base64Size, iconOf, imageProblem, promptAttachments, sizeLabel } from "./model/mentions";
import type { MentionSource } from "./mentions";
import { optionLabel, permissionMessage, previewFiles, toolCallDiffs } from "./model/permission";
import { safeHref } from "./model/markdown";
import { type PermissionController, type WaitingPrompt, showProposedDiffs } from "./permissions";
import type { VirtualDocuments } from "./virtualDocuments";
import type { QuestionController, WaitingQuestion } from "./questions";
import { tokensText, UsageWarnings, usageText } from "./model/usage";
import { PromptQueue } from "./model/queue";
import { postDelay } from "./model/postPacing";
import { PanelFeed } from "./model/panelFeed";
import type { ListedSession, RequestPermissionParams, SessionOffers, SessionUpdateParams } from "./protocol";
import { type SessionAction, sessionActions, sessionPick } from "./model/sessions";
import type { TerminalController } from "./terminals";
import { restoreCheckpoint } from "./checkpoints";
import { checkpointFor, userTurn } from "./model/checkpoints";
import { agentInfo, newSessionPicks, statusFor } from "./model/multiAgent";
import type { AgentStatusParams } from "./protocol";

const HISTORY_KEY = "acpls.promptHistory";
/** A frame probe the page has not answered by then (hidden, or very busy) counts as answered. */
const FRAME_WAIT_MS = 250;

export class AgentPanel implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewId = "acpls.agent";
  readonly store = new ConversationStore();
  // Per session: sessions of different agents run their turns side by side, each with its queue.
  private readonly queues = new Map<string, PromptQueue<Attachment>>();
  private readonly held = new Set<string>();
  private readonly running = new Set<string>();
  private starting = false;
  // The agent of each session (acpls.newSession's answer) and every agent's last status.
  private readonly sessionAgents = new Map<string, string>();
  private readonly statuses = new Map<string, AgentStatusParams>();
  private defaultStatus: AgentStatusParams | undefined;
  private view: vscode.WebviewView | undefined;
  private ready = false;
  /** What the page holds of the shown session, and the changes not yet posted to it. */
  private readonly feed = new PanelFeed();
  /** Changes noted since the last post, and whether agent updates were among them. */
  private unposted = 0;
  private streamed = false;
  private flushTimer: NodeJS.Timeout | undefined;
  /** When updates were last posted (performance.now()): the next batch's pace (postDelay). */
  private lastPost = Number.NEGATIVE_INFINITY;
  /** Frame probes waiting for the page's answer, by number. */
  private readonly frames = new Map<number, () => void>();
  private frameSeq = 0;
  private busy = false;
  private attachments: Attachment[] = [];
  private agent: AgentInfo | undefined;
  private readonly busyListeners: ((busy: boolean) => void)[] = [];
  private readonly shownListeners: ((session: SessionView | undefined, agent: string | undefined) => void)[] = [];
  private readonly usageWarnings = new UsageWarnings();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly client: AcplsClient,
    private readonly terminals: TerminalController,
    private readonly docs: VirtualDocuments,
    private readonly permissions: PermissionController,
    private readonly questions: QuestionController,
    private readonly mentions: MentionSource,
  ) {
    client.onNotification("acpls/sessionUpdate", (params) => this.onUpdate(params as SessionUpdateParams));
    permissions.onDidChangePending((waiting) => this.post({ type: "permissions", prompts: panelPrompts(waiting) }));
    questions.onDidChangePending((waiting) => this.post({ type: "questions", questions: panelQuestions(waiting) }));
    // A stopped server takes its sessions with it: the next prompt starts a new one (the old
    // conversation stays in the session list, and the agent may still load it).
    this.disposables.push(
      client.onDidChangeState((state) => {
        if (state === "stopped") {
          this.store.current = undefined;
          this.shownChanged();
        }
      }),
    );
    this.disposables.push(
      vscode.window.registerWebviewViewProvider(AgentPanel.viewId, this, { webviewOptions: { retainContextWhenHidden: true } }),
    );
  }

  /** Called when a turn starts (true) and ends (false). */
  onBusyChange(listener: (busy: boolean) => void): void {
    this.busyListeners.push(listener);
  }

  /** The shown session's turn runs (or its session is being made). */
  private busyHere(): boolean {
    const current = this.store.current;
    return current === undefined ? this.starting : this.running.has(current);
  }

  private syncBusy(): void {
    const busy = this.busyHere();
    if (busy === this.busy) return;
    this.busy = busy;
    this.post({ type: "busy", busy });
    for (const listener of this.busyListeners) listener(busy);
  }

  private queueOf(sessionId: string | undefined): PromptQueue<Attachment> {
    const key = sessionId ?? "";
    let queue = this.queues.get(key);
    if (queue === undefined) {
      queue = new PromptQueue<Attachment>();
      this.queues.set(key, queue);
    }
    return queue;
  }

  get isBusy(): boolean {
    return this.busy;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const dist = vscode.Uri.joinPath(this.context.extensionUri, "dist");
    const media = vscode.Uri.joinPath(this.context.extensionUri, "media");
    view.webview.options = { enableScripts: true, localResourceRoots: [dist, media] };
    view.webview.html = this.html(view.webview);
    view.webview.onDidReceiveMessage((message: unknown) => {
      if (isPanelMessage(message)) void this.handle(message);
      else this.client.log.warn(`agent panel: ignored an unknown message ${JSON.stringify(message)}`);
    });
    view.onDidDispose(() => {
      this.view = undefined;
      this.ready = false;
      this.answerFrames(this.frameSeq);
    });
    // Agent terminals write no faster than this page draws while it is shown (model/terminal.ts).
    this.terminals.pacer.probe = () => this.frame();
  }

  /**
   * Resolves once the page has drawn a frame after taking every message posted before this one
   * (terminal output goes to the browser on the same channel, before it); at once when the page is
   * not shown, and after FRAME_WAIT_MS at most.
   */
  private frame(): Promise<void> {
    if (this.view === undefined || !this.ready || !this.view.visible) return Promise.resolve();
    const seq = ++this.frameSeq;
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.answerFrames(seq), FRAME_WAIT_MS);
      this.frames.set(seq, () => {
        clearTimeout(timer);
        resolve();
      });
      this.post({ type: "frame", seq });
    });
  }

  /** The page drew a frame after probe `seq`: it and every earlier probe are answered. */
  private answerFrames(seq: number): void {
    for (const [n, answer] of this.frames) {
      if (n > seq) continue;
      this.frames.delete(n);
      answer();
    }
  }

  private html(webview: vscode.Webview): string {
    const nonce = makeNonce();
    const asset = (...parts: string[]): string => webview.asWebviewUri(vscode.Uri.joinPath(this.context.extensionUri, ...parts)).toString();
    const csp = [
      "default-src 'none'",
      `img-src ${webview.cspSource} data:`,
      `style-src ${webview.cspSource}`,
      `font-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
    ].join("; ");
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${asset("dist", "codicons", "codicon.css")}">
<link rel="stylesheet" href="${asset("media", "panel.css")}">
<title>Agent</title>
</head>
<body>
<div id="app"></div>
<script nonce="${nonce}" src="${asset("dist", "webview.js")}"></script>
</body>
</html>`;
  }

  private post(message: HostToPanel): void {
    if (this.view !== undefined && this.ready) void this.view.webview.postMessage(message);
  }

  private sessionChoices(): SessionChoice[] {
    return [...this.store.sessions.values()].map((s) => {
      const agent = this.sessionAgents.get(s.sessionId);
      return { sessionId: s.sessionId, title: s.title, ...(agent !== undefined ? { agent } : {}) };
    });
  }

  private sendSnapshot(): void {
    this.flush();
    const shown = this.store.currentSession();
    const held = shown === undefined ? undefined : this.feed.snapshot(shown);
    this.post({
      type: "snapshot",
      session: held?.session,
      start: held?.start ?? 0,
      sessions: this.sessionChoices(),
      busy: this.busy,
      agent: this.agent,
      history: this.context.globalState.get<string[]>(HISTORY_KEY, []),
      maxImageBytes: this.maxImageBytes(),
    });
    this.postChips();
    this.post({ type: "permissions", prompts: panelPrompts(this.permissions.waitingPrompts()) });
    this.post({ type: "questions", questions: panelQuestions(this.questions.waitingQuestions()) });
  }

  private onUpdate(params: SessionUpdateParams): void {
    const isNew = !this.store.sessions.has(params.sessionId);
    const change = this.store.apply(params.sessionId, params.update);
    const kind = params.update.sessionUpdate;
    if (kind === "usage") this.warnIfNearlyFull(params.sessionId);
    // The status item shows the shown session's mode (v2: a config option) and meter.
    if (params.sessionId === this.store.current && (kind === "usage" || kind === "modes" || kind === "config_options")) this.shownChanged();
    if (isNew) this.post({ type: "sessions", sessions: this.sessionChoices(), current: this.store.current });
    if (params.sessionId !== this.store.current) return;
    this.noteShown(change);
    this.streamed = true;
    this.flushTimer ??= setTimeout(() => this.flush(), postDelay(performance.now(), this.lastPost));
  }

  /** A change of the shown session, for the next post to the page. */
  private noteShown(change: Change): void {
    this.feed.note(change);
    this.unposted += 1;
  }

  /** A local change of `sessionId` (the prompt's echo, a turn's end): posted at once when shown. */
  private localChange(sessionId: string, change: Change): void {
    if (sessionId !== this.store.current) return;
    this.noteShown(change);
    this.flush();
  }

  /** A load or resume was answered: its replay is over, so its last updates go now instead of at
   * the stream's pace (up to STREAM_POST_MS after the previous post). */
  private replayed(): void {
    if (this.feed.pending) this.flush();
  }

  /** Posts what changed in the run of items the page holds (see PanelFeed.take). */
  private flush(): void {
    if (this.flushTimer !== undefined) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const shown = this.store.currentSession();
    if (shown === undefined || !this.feed.pending) return;
    const post = this.feed.take(shown);
    this.post({ type: "window", count: this.unposted, streaming: this.streamed, json: JSON.stringify(post) });
    this.unposted = 0;
    this.streamed = false;
    this.lastPost = performance.now();
  }

  /** The page scrolled above the run it holds: the page before it. */
  private postEarlier(sessionId: string): void {
    const shown = this.store.currentSession();
    if (shown?.sessionId !== sessionId) return;
    this.flush();
    const page = this.feed.earlier(shown);
    if (page !== undefined) this.post({ type: "earlier", json: JSON.stringify(page) });
  }

  /** Called with the shown session and its agent when another is shown and when its modes or
   * usage change. */
  onShownSession(listener: (session: SessionView | undefined, agent: string | undefined) => void): void {
    this.shownListeners.push(listener);
  }

  private shownChanged(): void {
    const session = this.store.currentSession();
    const agent = session === undefined ? undefined : this.sessionAgents.get(session.sessionId);
    for (const listener of this.shownListeners) listener(session, agent);
  }

  private warnIfNearlyFull(sessionId: string): void {
    const usage = this.store.sessions.get(sessionId)?.usage;
    if (usage !== undefined && this.usageWarnings.crossed(sessionId, usage)) {
      void vscode.window.showWarningMessage(`acpls: the agent's context is nearly full (${usageText(usage) ?? ""})`);
    }
  }

  /** An agent's status changed (acpls/agentStatus): the header shows the shown session's agent. */
  agentStatusChanged(status: AgentStatusParams): void {
    if (status.agent !== undefined) this.statuses.set(status.agent, status);
    if (status.default !== false) this.defaultStatus = status;
    this.refreshAgent(true);
  }

  private refreshAgent(post: boolean): void {
    const current = this.store.current;
    const status = statusFor(this.statuses, current === undefined ? undefined : this.sessionAgents.get(current), this.defaultStatus);
    if (status === undefined) return;
    this.agent = agentInfo(status);
    if (post) this.post({ type: "agent", agent: this.agent });
  }

  /** The agent of a session, when acpls said (sessions of several agents side by side). */
  agentOf(sessionId: string): string | undefined {
    return this.sessionAgents.get(sessionId);
  }

  /** Shows the panel and puts the caret in the prompt box. */
  async reveal(): Promise<void> {
    await vscode.commands.executeCommand(`${AgentPanel.viewId}.focus`);
    this.post({ type: "focusPrompt" });
  }

  /** Shows the panel with the caret in the first waiting question. */
  async showQuestions(): Promise<void> {
    await vscode.commands.executeCommand(`${AgentPanel.viewId}.focus`);
    this.post({ type: "focusQuestion" });
  }

  /** Attaches an editor selection as context for the next prompt. */
  async addContext(chip: EditorContext): Promise<void> {
    const context = chip.range === undefined ? { uri: chip.uri } : { uri: chip.uri, range: chip.range };
    if (!this.attachments.some((a) => JSON.stringify(a.context) === JSON.stringify(context))) {
      this.attachments.push({ label: chip.label, title: chip.uri, icon: "file-code", context });
    }
    await this.reveal();
    this.postChips();
  }

  /** Attaches something for the next prompt (a mention, an image) and shows its chip. */
  attach(attachment: Attachment): void {
    const same = (a: Attachment): boolean => (a.token !== undefined && a.token === attachment.token) || (a.mention !== undefined && JSON.stringify(a.mention) === JSON.stringify(attachment.mention));
    const at = this.attachments.findIndex(same);
    if (at >= 0) this.attachments[at] = attachment;
    else this.attachments.push(attachment);
    this.postChips();
  }

  private postChips(): void {
    this.post({ type: "context", chips: this.attachments.map(({ label, title, icon }) => ({ label, title, icon })) });
  }

  private maxImageBytes(): number {
    return vscode.workspace.getConfiguration("acpls").get<number>("context.maxImageBytes", 5 * 1024 * 1024);
  }

  /** An image pasted or dropped in the panel: checked (an image, that the agent takes images, the
   * size limit) and shown as a chip; it goes with the next prompt as an image mention. */
  private attachImage(name: string, mimeType: string, data: string): void {
    const size = base64Size(data);
    const problem = imageProblem(name, mimeType, size, this.maxImageBytes(), this.agent?.images);
    if (problem !== undefined) {
      this.post({ type: "error", message: problem });
      return;
    }
    this.attach({ label: `${name} (${sizeLabel(size)})`, title: `${name}, ${mimeType}, ${size.toLocaleString("en-US")} bytes`, icon: iconOf("image"), mention: { type: "image", data, mimeType } });
  }

  /** Sends a prompt in the shown session (creating one when there is none). */
  /** Sends a prompt; while a turn runs it is queued instead (shown in the panel, editable,
   * removable, or steered into the running turn where the agent allows) and sent when it ends. */
  async prompt(text: string, queued?: Attachment[], target?: string): Promise<void> {
    if (text.trim() === "") return;
    const attached = queued ?? this.takeChips();
    let sessionId = target ?? this.store.current;
    if (sessionId === undefined ? this.starting : this.running.has(sessionId)) {
      this.queueOf(sessionId).add(text, attached);
      this.postQueue();
      return;
    }
    this.remember(text);
    if (sessionId !== undefined) this.held.delete(sessionId);
    try {
      if (sessionId === undefined) {
        this.starting = true;
        this.syncBusy();
        try {
          const made = await this.client.command("acpls.newSession", {});
          sessionId = made.sessionId;
          if (made.agent !== undefined) this.sessionAgents.set(sessionId, made.agent);
          // Prompts queued while the session was being made are this session's.
          const early = this.queues.get("");
          if (early !== undefined) {
            this.queues.delete("");
            this.queues.set(sessionId, early);
          }
        } finally {
          this.starting = false;
        }
        this.running.add(sessionId);
        this.switchTo(sessionId);
      }
      this.running.add(sessionId);
      this.syncBusy();
      this.localChange(sessionId, addLocalPrompt(this.store.session(sessionId), text));
      const { context, mentions } = promptAttachments(text, attached);
      const result = await this.client.command("acpls.prompt", {
        sessionId,
        text,
        ...(context.length > 0 ? { context } : {}),
        ...(mentions.length > 0 ? { mentions } : {}),
      });
      this.flush();
      const tokens = tokensText(result.usage);
      this.localChange(result.sessionId, addTurnEnd(this.store.session(result.sessionId), result.stopReason, undefined, tokens));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.flush();
      if (sessionId !== undefined) {
        this.localChange(sessionId, addTurnEnd(this.store.session(sessionId), "error", message));
      } else {
        this.post({ type: "error", message });
      }
    } finally {
      if (sessionId !== undefined) this.running.delete(sessionId);
      this.syncBusy();
    }
    const next = sessionId === undefined || this.held.has(sessionId) ? undefined : this.queueOf(sessionId).next();
    if (next !== undefined && sessionId !== undefined) {
      this.postQueue();
      await this.prompt(next.text, next.context, sessionId);
    }
  }

  private takeChips(): Attachment[] {
    const taken = this.attachments;
    if (taken.length > 0) {
      this.attachments = [];
      this.postChips();
    }
    return taken;
  }

  private postQueue(): void {
    this.post({ type: "queue", items: this.queueOf(this.store.current).list.map((q) => ({ id: q.id, text: q.text })) });
  }

  /** What the user did with a queued prompt: edit (back into the input), remove, or steer (given
   * to the agent now, in the running turn: acpls.steer). */
  async queued(id: number, action: "edit" | "remove" | "steer"): Promise<void> {
    const queue = this.queueOf(this.store.current);
    const item = queue.take(id);
    if (item === undefined) return;
    this.postQueue();
    if (action === "edit") this.post({ type: "focusPrompt", text: item.text });
    if (action === "edit") {
      for (const a of item.context) this.attach(a);
    }
    if (action !== "steer") return;
    const { context, mentions } = promptAttachments(item.text, item.context);
    if (mentions.length > 0) {
      queue.add(item.text, item.context);
      this.postQueue();
      this.post({ type: "error", message: "A prompt with mentions or images cannot steer the running turn: it is sent when the turn ends." });
      return;
    }
    try {
      const sessionId = this.store.current;
      const steered = await this.client.command("acpls.steer", {
        ...(sessionId === undefined ? {} : { sessionId }),
        text: item.text,
        ...(context.length > 0 ? { context } : {}),
      });
      if (steered.outcome === "promptRequired") {
        await this.prompt(item.text, item.context); // the turn had ended: an ordinary prompt
        return;
      }
      this.localChange(steered.sessionId, addLocalPrompt(this.store.session(steered.sessionId), item.text));
    } catch (error) {
      queue.add(item.text, item.context);
      this.postQueue();
      this.post({ type: "error", message: `Could not steer: ${String(error)}` });
    }
  }

  async cancel(): Promise<void> {
    // Queued prompts stay (shown, editable) but wait for the user's next prompt.
    if (this.store.current !== undefined) this.held.add(this.store.current);
    try {
      await this.client.command("acpls.cancel", this.store.current === undefined ? {} : { sessionId: this.store.current });
    } catch (error) {
      this.post({ type: "error", message: `Cancel failed: ${String(error)}` });
    }
  }

  /** A new session: of the default agent, of `agent`, or (`pickAgent`) of the agent the user
   * picks (the default, one already running, or any preset or registry agent). */
  async newSession(options: { agent?: string; pickAgent?: boolean } = {}): Promise<string | undefined> {
    try {
      let agent = options.agent;
      if (options.pickAgent === true) {
        const picked = await this.pickAgent();
        if (picked === null) return undefined;
        agent = picked;
      }
      const made = await this.client.command("acpls.newSession", agent === undefined ? {} : { agent });
      if (made.agent !== undefined) this.sessionAgents.set(made.sessionId, made.agent);
      this.switchTo(made.sessionId);
      return made.sessionId;
    } catch (error) {
      this.post({ type: "error", message: `Could not start a session: ${String(error)}` });
      return undefined;
    }
  }

  /** The agent for a new session: undefined for the default, null when the user cancelled. */
  private async pickAgent(): Promise<string | undefined | null> {
    const [listing, known] = await Promise.all([this.client.command("acpls.agents", {}), this.client.command("acpls.sessions", {})]);
    const configured = vscode.workspace.getConfiguration("acpls").get<Record<string, unknown>>("agents") ?? {};
    const picks = newSessionPicks(listing.agents, known.agents ?? [], known.defaultAgent ?? listing.default, Object.keys(configured));
    const chosen = await vscode.window.showQuickPick(picks, { title: "acpls: new session with which agent?", matchOnDescription: true });
    return chosen === undefined ? null : chosen.agent;
  }

  private switchTo(sessionId: string): void {
    this.flush();
    this.store.session(sessionId);
    this.store.current = sessionId;
    this.refreshAgent(false);
    this.shownChanged();
    this.sendSnapshot();
    this.postQueue();
    this.syncBusy();
  }

  async switchSession(sessionId: string): Promise<void> {
    const known = this.store.sessions.get(sessionId);
    if (known !== undefined && known.items.length > 0) {
      this.switchTo(sessionId);
      return;
    }
    // Not seen in this window: load it from the agent, which replays it as updates.
    this.switchTo(sessionId);
    try {
      await this.client.command("acpls.loadSession", { sessionId });
      this.replayed();
    } catch (error) {
      this.post({ type: "error", message: `Could not load the session: ${String(error)}` });
    }
  }

  /** The agent's stored sessions (every page of acpls.listSessions), then what to do with the one
   * picked: show, load with history, resume without, fork, close or delete (as the agent offers). */
  async browseSessions(): Promise<void> {
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    let listed: { sessions: ListedSession[]; offers?: SessionOffers };
    try {
      listed = await this.client.command("acpls.listSessions", { ...(cwd === undefined ? {} : { cwd }), all: true });
    } catch (error) {
      void vscode.window.showErrorMessage(`acpls: could not list sessions: ${String(error)}`);
      return;
    }
    const picked = await vscode.window.showQuickPick(
      listed.sessions.map((s) => sessionPick(s, this.isOpen(s.sessionId))),
      { title: "acpls: agent sessions", placeHolder: listed.sessions.length === 0 ? "The agent has no stored sessions" : "Session", matchOnDetail: true },
    );
    if (picked === undefined) return;
    const open = this.isOpen(picked.sessionId);
    const action = await vscode.window.showQuickPick(sessionActions(listed.offers, open), { title: picked.label });
    if (action !== undefined) await this.sessionAction(action.action, picked.sessionId);
  }

  private isOpen(sessionId: string): boolean {
    return (this.store.sessions.get(sessionId)?.items.length ?? 0) > 0;
  }

  async sessionAction(action: SessionAction, sessionId: string): Promise<void> {
    try {
      switch (action) {
        case "show":
          this.switchTo(sessionId);
          break;
        case "load":
        case "resume":
          this.switchTo(sessionId);
          await this.client.command(action === "load" ? "acpls.loadSession" : "acpls.resumeSession", { sessionId });
          this.replayed();
          break;
        case "fork":
          await this.fork(sessionId);
          break;
        case "close":
          await this.closeSession(sessionId);
          break;
        case "delete":
          await this.client.command("acpls.deleteSession", { sessionId });
          this.forget(sessionId);
          void vscode.window.showInformationMessage("acpls: session deleted.");
          break;
      }
    } catch (error) {
      void vscode.window.showErrorMessage(`acpls: ${action} failed: ${String(error)}`);
    }
  }

  /** `session/fork` of the shown session (or `sessionId`): the fork becomes the shown session. */
  async fork(sessionId = this.store.current): Promise<void> {
    if (sessionId === undefined) {
      void vscode.window.showWarningMessage("acpls: no session to fork.");
      return;
    }
    const origin = this.store.sessions.get(sessionId);
    const forked = await this.client.command("acpls.forkSession", { sessionId });
    const copy = this.store.session(forked.sessionId);
    if (origin?.title !== undefined && copy.title === undefined) copy.title = origin.title;
    this.switchTo(forked.sessionId);
  }

  /** `acpls.closeSession` of the shown session (or `sessionId`); the next prompt starts a new one. */
  async closeSession(sessionId = this.store.current): Promise<void> {
    if (sessionId === undefined) {
      void vscode.window.showWarningMessage("acpls: no session to close.");
      return;
    }
    await this.client.command("acpls.closeSession", { sessionId });
    this.forget(sessionId);
  }

  private forget(sessionId: string): void {
    this.store.sessions.delete(sessionId);
    if (this.store.current === sessionId) {
      this.store.current = undefined;
      this.shownChanged();
    }
    this.sendSnapshot();
  }

  private remember(text: string): void {
    const history = this.context.globalState.get<string[]>(HISTORY_KEY, []).filter((h) => h !== text);
    history.push(text);
    void this.context.globalState.update(HISTORY_KEY, history.slice(-200));
  }

  private async handle(message: PanelToHost): Promise<void> {
    switch (message.type) {
      case "ready":
        this.ready = true;
        this.sendSnapshot();
        break;
      case "keys":
        this.terminals.keys();
        break;
      case "frame":
        this.answerFrames(message.seq);
        break;
      case "follow":
        this.feed.following = message.following;
        break;
      case "earlier":
        this.postEarlier(message.sessionId);
        break;
      case "prompt":
        await this.prompt(message.text);
        break;
      case "cancel":
        await this.cancel();
        break;
      case "newSession":
        await this.newSession({ pickAgent: message.pickAgent === true });
        break;
      case "switchSession":
        await this.switchSession(message.sessionId);
        break;
      case "browseSessions":
        await this.browseSessions();
        break;
      case "queued":
        await this.queued(message.id, message.action);
        break;
      case "setMode":
        await this.client.command("acpls.setMode", { ...this.sessionArg(), modeId: message.modeId }).catch((e: unknown) => this.post({ type: "error", message: String(e) }));
        break;
      case "setConfigOption":
        await this.client
          .command("acpls.setConfigOption", { ...this.sessionArg(), configId: message.configId, value: message.value })
          .catch((e: unknown) => this.post({ type: "error", message: String(e) }));
        break;
      case "removeContext":
        this.attachments.splice(message.index, 1);
        this.postChips();
        break;
      case "mentionQuery": {
        const items = await this.mentions.items(message.prefix, this.store.current);
        this.post({ type: "mentionItems", seq: message.seq, items });
        break;
      }
      case "pickMention": {
        const picked = this.mentions.resolve(message.id);
        if (typeof picked === "string") this.post({ type: "error", message: picked });
        else this.attach(picked);
        break;
      }
      case "attachImage":
        this.attachImage(message.name, message.mimeType, message.data);
        break;
      case "attachDropped":
        for (const a of this.mentions.dropped(message.uris)) {
          if (a.mention?.type === "image" && this.agent?.images === false) {
            this.post({ type: "error", message: `The agent does not accept images (its promptCapabilities.image is off): ${a.label} was not attached.` });
          } else this.attach(a);
        }
        break;
      case "openLocation":
        await openLocation(message.path, message.line);
        break;
      case "openDiff":
        await this.openDiff(message.toolCallId);
        break;
      case "openTerminal":
        if (!this.terminals.show(message.terminalId, this.store.current)) {
          void vscode.window.showInformationMessage("acpls: that terminal has no output yet.");
        }
        break;
      case "openLink":
        await openLink(message.href);
        break;
      case "answerPermission":
        if (!this.permissions.answer(message.key, message.optionId)) {
          this.post({ type: "error", message: "That permission prompt was already answered." });
        }
        break;
      case "restoreCheckpoint":
        await this.restoreBefore(message.itemId);
        break;
      case "answerQuestion":
        if (!this.questions.answer(message.key, message.action, message.values)) {
          this.post({ type: "error", message: "That question is no longer waiting." });
        }
        break;
      case "openQuestionUrl":
        await this.questions.openUrl(message.key);
        break;
    }
  }

  /** The panel's "Restore checkpoint" on a user message: the workspace back to before that turn. */
  private async restoreBefore(itemId: string): Promise<void> {
    const session = this.store.currentSession();
    const found = session === undefined ? undefined : userTurn(session.items, itemId);
    if (session === undefined || found === undefined) return;
    if (this.busy) {
      this.post({ type: "error", message: "The agent is working: cancel the turn before restoring." });
      return;
    }
    try {
      const list = await this.client.command("acpls.checkpoints", { sessionId: session.sessionId });
      const checkpoint = checkpointFor(list, found.turn, found.text);
      if (checkpoint === undefined) {
        this.post({ type: "error", message: "No checkpoint for this message (one is taken before every turn acpls runs)." });
        return;
      }
      await restoreCheckpoint(this.client, checkpoint, this);
    } catch (error) {
      this.post({ type: "error", message: `Restore failed: ${String(error)}` });
    }
  }

  /** A session continued from a checkpoint: shown, with the turn's prompt in the input, editable. */
  continueIn(sessionId: string, prompt: string, agent?: string): void {
    // The continuation is a session of the checkpoint's agent, not necessarily the default's.
    if (agent !== undefined) this.sessionAgents.set(sessionId, agent);
    this.switchTo(sessionId);
    void this.reveal().then(() => this.post({ type: "focusPrompt", text: prompt }));
  }

  private sessionArg(): { sessionId?: string } {
    return this.store.current === undefined ? {} : { sessionId: this.store.current };
  }

  private async openDiff(toolCallId: string): Promise<void> {
    const session = this.store.currentSession();
    const item = session?.items.find((i) => i.kind === "tool_call" && i.toolCall.toolCallId === toolCallId);
    if (session === undefined || item?.kind !== "tool_call") return;
    // The permission request of this tool call carries the preview; else its own (v1) diffs.
    const params = this.permissions.requestFor(toolCallId) ?? ({ sessionId: session.sessionId, toolCall: item.toolCall, options: [] } as RequestPermissionParams);
    if ((await showProposedDiffs(params, this.docs)) === 0) {
      const location = item.toolCall.locations?.[0];
      if (location !== undefined) await openLocation(location.path, location.line);
    }
  }

  dispose(): void {
    if (this.flushTimer !== undefined) clearTimeout(this.flushTimer);
    this.terminals.pacer.probe = undefined;
    this.answerFrames(this.frameSeq);
    for (const d of this.disposables) d.dispose();
  }
}

function panelPrompts(waiting: WaitingPrompt[]): PanelPrompt[] {
  return waiting.map(({ key, params }) => ({
    key,
    toolCallId: params.toolCall.toolCallId,
    message: permissionMessage(params),
    hasDiff: previewFiles(params.preview).length > 0 || toolCallDiffs(params.toolCall).length > 0,
    options: params.options.map((option) => ({ optionId: option.optionId, label: optionLabel(option), kind: option.kind })),
  }));
}

/** Opens a file at an ACP (1-based) line, as a preview. */
async function openLocation(path: string, line: number | undefined): Promise<void> {
  const lspLine = Math.max(0, (line ?? 1) - 1);
  const selection = new vscode.Range(lspLine, 0, lspLine, 0);
  try {
    await vscode.window.showTextDocument(vscode.Uri.file(path), { selection, preview: true });
  } catch (error) {
    void vscode.window.showErrorMessage(`acpls: cannot open ${path}: ${String(error)}`);
  }
}

async function openLink(href: string): Promise<void> {
  const safe = safeHref(href);
  if (safe === undefined) return;
  const uri = /^[a-z][a-z0-9+.-]*:/i.test(safe) ? vscode.Uri.parse(safe, true) : undefined;
  if (uri === undefined) return;
  if (uri.scheme === "file") await vscode.window.showTextDocument(uri, { preview: true });
  else await vscode.env.openExternal(uri);
}

function makeNonce(): string {
  return randomBytes(18).toString("base64url");
}

function panelQuestions(waiting: WaitingQuestion[]): PanelQuestion[] {
  return waiting.map(({ key, params, fields }) => ({
    key,
    mode: params.mode,
    message: params.message,
    ...(params.url !== undefined ? { url: params.url } : {}),
    fields,
  }));
}
