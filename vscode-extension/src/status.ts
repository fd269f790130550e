// The status item: the agent (from acpls/agentStatus), the shown session's mode and context meter,
// whether a turn is running, and the server's state; clicking it offers the modes and the common
// actions (commands.ts). Its words are model/status.ts.

import * as vscode from "vscode";
import type { AcplsClient, ClientState } from "./client";
import { agentLabel } from "./model/settings";
import type { AgentStatusParams } from "./protocol";
import { agentInfo } from "./model/multiAgent";
import type { SessionView } from "./model/conversation";
import { escapeMarkdown, type Modes, modeOfDefaultAgent, modeTooltip, sessionModes, statusText } from "./model/status";
import { usageText } from "./model/usage";

export { agentInfo };

export class StatusController implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private agent: AgentStatusParams | undefined;
  private busy = false;
  private pendingPermissions = 0;
  // The session the panel shows and its agent: its mode and context meter are in the item.
  private shown: SessionView | undefined;
  private shownAgent: string | undefined;
  // Every agent's last status (several agents run side by side); the item shows the default's.
  readonly statuses = new Map<string, AgentStatusParams>();
  private readonly changed = new vscode.EventEmitter<AgentStatusParams>();
  readonly onDidChangeAgent = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly client: AcplsClient) {
    this.item = vscode.window.createStatusBarItem("acpls.status", vscode.StatusBarAlignment.Right, 100);
    this.item.name = "acpls";
    this.item.command = "acpls.ui.statusMenu";
    this.disposables.push(this.item, this.changed, client.onDidChangeState(() => this.render()));
    client.onNotification("acpls/agentStatus", (params) => {
      if (params.agent !== undefined) this.statuses.set(params.agent, params);
      if (params.default !== false) this.agent = params;
      this.changed.fire(params);
      this.render();
    });
    this.render();
    this.item.show();
  }

  /** Prompts waiting for an answer (a notification may have gone to the notification centre). */
  setPendingPermissions(count: number): void {
    this.pendingPermissions = count;
    this.render();
  }

  /** The session the panel shows (undefined: none) and its agent, again whenever its modes or
   * usage change. */
  showSession(session: SessionView | undefined, agent: string | undefined): void {
    this.shown = session;
    this.shownAgent = agent;
    this.render();
  }

  /** The shown session and its modes, for the menu's mode picks: only a session of the agent the
   * item names. */
  get modes(): { sessionId: string; modes: Modes } | undefined {
    const modes = modeOfDefaultAgent(this.shownAgent, this.agent?.agent) ? sessionModes(this.shown) : undefined;
    return this.shown === undefined || modes === undefined ? undefined : { sessionId: this.shown.sessionId, modes };
  }

  setBusy(busy: boolean): void {
    this.busy = busy;
    this.render();
  }

  private render(): void {
    const server: ClientState = this.client.state;
    const configured = agentLabel(vscode.workspace.getConfiguration("acpls").get("agent"));
    const name = this.agent === undefined ? configured : agentInfo(this.agent).label;
    if (server !== "running") {
      this.item.text = server === "starting" ? "$(loading~spin) acpls" : "$(circle-slash) acpls";
      this.item.tooltip = server === "starting" ? "acpls is starting" : "acpls is not running; click for actions";
      this.item.backgroundColor = undefined;
      return;
    }
    const state = this.agent?.state ?? "not started";
    const icon = this.busy ? "$(loading~spin)" : state === "failed" || state === "exited" ? "$(error)" : "$(hubot)";
    const modes = this.modes?.modes;
    const usage = this.shown?.usage;
    this.item.text = statusText({ icon, agent: name, modes, usage, pendingPermissions: this.pendingPermissions });
    const tooltip = new vscode.MarkdownString(undefined, true);
    tooltip.appendMarkdown(`**acpls** · agent \`${name}\`: ${state}`);
    if (this.agent?.protocolVersion !== undefined) tooltip.appendMarkdown(` · ACP v${this.agent.protocolVersion}`);
    const mode = modeTooltip(modes);
    if (mode !== undefined) tooltip.appendMarkdown(`\n\n${mode}`);
    if (this.agent?.message !== undefined) tooltip.appendMarkdown(`\n\n${escapeMarkdown(this.agent.message)}`);
    const meter = usageText(usage);
    if (meter !== undefined) tooltip.appendMarkdown(`\n\n${meter}`);
    if (this.pendingPermissions > 0) tooltip.appendMarkdown(`\n\n${this.pendingPermissions} permission prompt(s) waiting for you`);
    this.item.tooltip = tooltip;
    this.item.backgroundColor =
      state === "failed"
        ? new vscode.ThemeColor("statusBarItem.errorBackground")
        : this.pendingPermissions > 0
          ? new vscode.ThemeColor("statusBarItem.warningBackground")
          : undefined;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
