// Review of the agents' changes (acpls/changes): an "Agent changes" tree of files and hunks with
// keep / reject actions, CodeLens keep / reject on each hunk in open editors, and a diff of a file
// against its baseline. Keeping and rejecting are the server's commands (acpls.keepHunk, …); the
// server answers with the new set, and also sends acpls/changes.

import * as path from "node:path";
import * as vscode from "vscode";
import type { AcplsClient } from "./client";
import { baselineText, fileDescription, hunkLabel, hunkPreview, indexByUri, totals } from "./model/changes";
import type { VirtualDocuments } from "./virtualDocuments";
import type { ChangedFile, Hunk } from "./protocol";

type Node = { kind: "file"; file: ChangedFile } | { kind: "hunk"; file: ChangedFile; hunk: Hunk };

export class ReviewController implements vscode.TreeDataProvider<Node>, vscode.CodeLensProvider, vscode.Disposable {
  private files: ChangedFile[] = [];
  private byUri = new Map<string, ChangedFile>();
  private readonly treeChanged = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.treeChanged.event;
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensesChanged.event;
  private readonly view: vscode.TreeView<Node>;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly client: AcplsClient,
    private readonly docs: VirtualDocuments,
  ) {
    this.view = vscode.window.createTreeView("acpls.changes", { treeDataProvider: this, showCollapseAll: true });
    this.disposables.push(
      this.view,
      vscode.languages.registerCodeLensProvider({ scheme: "file" }, this),
      vscode.commands.registerCommand("acpls.ui.keepHunk", (node?: Node | string) => this.run("acpls.keepHunk", node)),
      vscode.commands.registerCommand("acpls.ui.rejectHunk", (node?: Node | string) => this.run("acpls.rejectHunk", node)),
      vscode.commands.registerCommand("acpls.ui.keepFile", (node?: Node) => this.runAll("acpls.keepAll", node)),
      vscode.commands.registerCommand("acpls.ui.rejectFile", (node?: Node) => this.runAll("acpls.rejectAll", node)),
      vscode.commands.registerCommand("acpls.ui.keepAll", () => this.runAll("acpls.keepAll", undefined)),
      vscode.commands.registerCommand("acpls.ui.rejectAll", () => this.runAll("acpls.rejectAll", undefined)),
      vscode.commands.registerCommand("acpls.ui.compareWithBaseline", (node?: Node) => this.compare(node)),
      vscode.commands.registerCommand("acpls.ui.refreshChanges", () => this.refresh()),
    );
    client.onNotification("acpls/changes", (params) => this.set(params.files));
  }

  set(files: ChangedFile[]): void {
    this.files = files;
    this.byUri = indexByUri(files);
    const { files: fileCount, hunks } = totals(files);
    this.view.badge = hunks === 0 ? undefined : { value: hunks, tooltip: `${hunks} agent changes in ${fileCount} files` };
    this.view.message = files.length === 0 ? "No agent changes waiting for review." : undefined;
    void vscode.commands.executeCommand("setContext", "acpls.hasChanges", files.length > 0);
    this.treeChanged.fire(undefined);
    this.lensesChanged.fire();
  }

  private async refresh(): Promise<void> {
    const result = await this.client.command("acpls.review", {});
    this.set(result.files);
  }

  private async run(command: "acpls.keepHunk" | "acpls.rejectHunk", node: Node | string | undefined): Promise<void> {
    const hunkId = typeof node === "string" ? node : node?.kind === "hunk" ? node.hunk.hunkId : undefined;
    if (hunkId === undefined) return;
    try {
      this.set((await this.client.command(command, { hunkId })).files);
    } catch (error) {
      void vscode.window.showErrorMessage(`acpls: ${command} failed: ${String(error)}`);
    }
  }

  private async runAll(command: "acpls.keepAll" | "acpls.rejectAll", node: Node | undefined): Promise<void> {
    const uri = node?.file.uri;
    try {
      this.set((await this.client.command(command, uri === undefined ? {} : { uri })).files);
    } catch (error) {
      void vscode.window.showErrorMessage(`acpls: ${command} failed: ${String(error)}`);
    }
  }

  /** Opens the file's baseline (its text before the agent) against its current text. */
  private async compare(node: Node | undefined): Promise<void> {
    const file = node?.file ?? this.byUri.get(vscode.window.activeTextEditor?.document.uri.toString() ?? "");
    if (file === undefined) return;
    const uri = vscode.Uri.parse(file.uri, true);
    const name = path.posix.basename(uri.path);
    let current = "";
    try {
      current = (await vscode.workspace.openTextDocument(uri)).getText();
    } catch {
      current = ""; // deleted by the agent
    }
    const baseline = this.docs.add(name, baselineText(current, file.hunks), "baseline");
    await vscode.commands.executeCommand("vscode.diff", baseline, uri, `${name} (agent changes)`, { preview: true });
  }

  getTreeItem(node: Node): vscode.TreeItem {
    const uri = vscode.Uri.parse(node.file.uri, true);
    if (node.kind === "file") {
      const item = new vscode.TreeItem(uri, vscode.TreeItemCollapsibleState.Expanded);
      item.description = fileDescription(node.file);
      item.contextValue = "acplsFile";
      item.id = `file:${node.file.uri}`;
      item.command = { command: "acpls.ui.compareWithBaseline", title: "Compare with baseline", arguments: [node] };
      return item;
    }
    const item = new vscode.TreeItem(hunkLabel(node.hunk), vscode.TreeItemCollapsibleState.None);
    item.description = hunkPreview(node.hunk);
    item.tooltip = new vscode.MarkdownString().appendCodeblock(node.hunk.newText || node.hunk.oldText);
    item.contextValue = "acplsHunk";
    item.id = `hunk:${node.hunk.hunkId}`;
    const start = node.hunk.range.start;
    item.command = {
      command: "vscode.open",
      title: "Open",
      arguments: [uri, { selection: new vscode.Range(start.line, 0, start.line, 0), preview: true }],
    };
    return item;
  }

  getChildren(node?: Node): Node[] {
    if (node === undefined) return this.files.map((file) => ({ kind: "file", file }));
    if (node.kind === "file") return node.file.hunks.map((hunk) => ({ kind: "hunk", file: node.file, hunk }));
    return [];
  }

  getParent(node: Node): Node | undefined {
    return node.kind === "hunk" ? { kind: "file", file: node.file } : undefined;
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const file = this.byUri.get(document.uri.toString());
    if (file === undefined) return [];
    const lenses: vscode.CodeLens[] = [];
    for (const hunk of file.hunks) {
      const line = Math.min(hunk.range.start.line, Math.max(0, document.lineCount - 1));
      const range = new vscode.Range(line, 0, line, 0);
      const summary = `agent: +${hunk.added} -${hunk.removed}`;
      lenses.push(
        new vscode.CodeLens(range, { title: `$(check) Keep (${summary})`, command: "acpls.ui.keepHunk", arguments: [hunk.hunkId] }),
        new vscode.CodeLens(range, { title: "$(discard) Reject", command: "acpls.ui.rejectHunk", arguments: [hunk.hunkId] }),
      );
    }
    return lenses;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.treeChanged.dispose();
    this.lensesChanged.dispose();
  }
}
