// Follow the agent (acpls/followAgent, acpls/followState): open the file the agent works in as a
// preview tab without taking focus, mark its line (gutter icon, whole-line background, a hover that
// says what the agent is doing) and scroll it into view. A status-bar toggle turns follow on and off
// through the server's acpls.setFollow; the server pauses follow itself when the user edits.

import * as vscode from "vscode";
import type { AcplsClient } from "./client";
import { followHover } from "./model/follow";
import type { FollowAgentParams, FollowStateParams } from "./protocol";

export class FollowController implements vscode.Disposable {
  private readonly decoration: vscode.TextEditorDecorationType;
  private readonly item: vscode.StatusBarItem;
  private enabled: boolean;
  private paused = false;
  private marked: { uri: string; range: vscode.Range; hover: string } | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  /** The newest target not shown yet: targets are shown one at a time and the last one wins. */
  private latest: FollowAgentParams | undefined;
  private showing = false;

  constructor(
    context: vscode.ExtensionContext,
    private readonly client: AcplsClient,
  ) {
    this.enabled = vscode.workspace.getConfiguration("acpls").get<boolean>("follow.enabled", true);
    this.decoration = vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      backgroundColor: new vscode.ThemeColor("acpls.agentLineBackground"),
      gutterIconPath: context.asAbsolutePath("media/agent-gutter.svg"),
      gutterIconSize: "contain",
      overviewRulerColor: new vscode.ThemeColor("acpls.agentLineBackground"),
      overviewRulerLane: vscode.OverviewRulerLane.Center,
    });
    this.item = vscode.window.createStatusBarItem("acpls.follow", vscode.StatusBarAlignment.Right, 99);
    this.item.name = "acpls: follow the agent";
    this.item.command = "acpls.ui.toggleFollow";
    this.render();
    this.item.show();
    this.disposables.push(
      this.decoration,
      this.item,
      // Re-apply the mark when the marked file's editor becomes visible again.
      vscode.window.onDidChangeVisibleTextEditors(() => this.applyMark()),
    );
    client.onNotification("acpls/followAgent", (params) => this.follow(params));
    client.onNotification("acpls/followState", (params) => this.state(params));
  }

  get isEnabled(): boolean {
    return this.enabled && !this.paused;
  }

  async toggle(): Promise<void> {
    const wanted = !this.isEnabled;
    try {
      const result = await this.client.command("acpls.setFollow", { enabled: wanted });
      this.enabled = result.enabled;
      this.paused = false;
    } catch (error) {
      void vscode.window.showErrorMessage(`acpls: could not turn follow ${wanted ? "on" : "off"}: ${String(error)}`);
    }
    if (!this.isEnabled) this.clearMark();
    this.render();
  }

  private state(params: FollowStateParams): void {
    if (params.reason === "userEdit" && !params.enabled) {
      this.paused = true;
    } else {
      this.enabled = params.enabled;
      this.paused = false;
    }
    if (!this.isEnabled) this.clearMark();
    this.render();
  }

  /**
   * Opening a file is asynchronous and a file already loaded opens faster than one that is not, so
   * overlapping opens could end on an older target: targets are shown one after the other, and
   * those that a newer one replaced while waiting are skipped.
   */
  private follow(params: FollowAgentParams): void {
    this.latest = params;
    if (!this.showing) void this.drain();
  }

  private async drain(): Promise<void> {
    this.showing = true;
    try {
      for (let next = this.latest; next !== undefined; next = this.latest) {
        this.latest = undefined;
        await this.show(next);
      }
    } finally {
      this.showing = false;
    }
  }

  private async show(params: FollowAgentParams): Promise<void> {
    this.client.log.trace(`follow: ${params.uri} line ${params.range?.start.line ?? "-"} (${params.kind ?? "?"})`);
    const uri = vscode.Uri.parse(params.uri, true);
    const line = params.range?.start.line;
    let editor: vscode.TextEditor;
    try {
      editor = await vscode.window.showTextDocument(uri, { preserveFocus: true, preview: true });
    } catch (error) {
      this.client.log.warn(`follow: cannot open ${params.uri}: ${String(error)}`);
      return;
    }
    const lastLine = Math.max(0, editor.document.lineCount - 1);
    const target = Math.min(line ?? 0, lastLine);
    const range = new vscode.Range(target, 0, target, 0);
    this.marked = { uri: uri.toString(), range, hover: followHover(params.kind) };
    this.applyMark();
    editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }

  private applyMark(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const mark = this.marked;
      if (mark !== undefined && editor.document.uri.toString() === mark.uri) {
        const hover = new vscode.MarkdownString(mark.hover, true);
        editor.setDecorations(this.decoration, [{ range: mark.range, hoverMessage: hover }]);
      } else {
        editor.setDecorations(this.decoration, []);
      }
    }
  }

  private clearMark(): void {
    this.marked = undefined;
    this.applyMark();
  }

  /** The turn ended: the agent is nowhere any more. */
  turnEnded(): void {
    this.clearMark();
  }

  private render(): void {
    if (this.paused) {
      this.item.text = "$(debug-pause) Follow paused";
      this.item.tooltip = "acpls paused following the agent because you edited a file. Click to follow again.";
    } else if (this.enabled) {
      this.item.text = "$(eye) Follow";
      this.item.tooltip = "acpls follows the agent's cursor. Click to stop following.";
    } else {
      this.item.text = "$(eye-closed) Follow off";
      this.item.tooltip = "acpls does not follow the agent. Click to follow it.";
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
