// @-mentions for the agent panel's prompt box, editor side: what the editor knows (its selection,
// the active file, its diagnostics, the agent terminals), workspace files and sessions from
// acpls.mentionCandidates, and workspace symbols from the editor's language servers. The items the
// panel was last shown are kept here, so a pick names one by id and the webview never hands the host
// a URI or range of its own.

import * as path from "node:path";
import * as vscode from "vscode";
import type { AcplsClient } from "./client";
import {
  type Attachment,
  attachmentFor,
  type EditorState,
  iconOf,
  imageTypeOf,
  type MentionItem,
  mentionFilter,
  mentionItems,
  type ResolvableItem,
  type WorkspaceSymbol,
} from "./model/mentions";
import type { MentionCandidate, Range } from "./protocol";
import type { TerminalController } from "./terminals";

const SYMBOL_WAIT_MS = 1500;

function lspRange(range: vscode.Range): Range {
  return { start: { line: range.start.line, character: range.start.character }, end: { line: range.end.line, character: range.end.character } };
}

/** A VS Code diagnostic as an LSP Diagnostic (severity 1 = error … 4 = hint). */
export function lspDiagnostic(d: vscode.Diagnostic): Record<string, unknown> {
  const code = typeof d.code === "object" ? d.code.value : d.code;
  return {
    range: lspRange(d.range),
    severity: d.severity + 1,
    message: d.message,
    ...(d.source !== undefined ? { source: d.source } : {}),
    ...(code !== undefined ? { code } : {}),
  };
}

export class MentionSource implements vscode.Disposable {
  private shown = new Map<string, ResolvableItem>();
  private lastEditor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly client: AcplsClient,
    private readonly terminals: TerminalController,
  ) {
    // The panel has the focus while the user types: remember the editor they came from.
    this.disposables.push(
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        if (editor !== undefined && editor.document.uri.scheme === "file") this.lastEditor = editor;
      }),
    );
  }

  private editor(): vscode.TextEditor | undefined {
    const active = vscode.window.activeTextEditor;
    if (active !== undefined && active.document.uri.scheme === "file") return active;
    if (this.lastEditor !== undefined && vscode.window.visibleTextEditors.includes(this.lastEditor)) return this.lastEditor;
    return vscode.window.visibleTextEditors.find((e) => e.document.uri.scheme === "file");
  }

  private state(sessionId: string | undefined): EditorState {
    const editor = this.editor();
    const state: EditorState = { terminals: this.terminals.list(sessionId) };
    if (editor !== undefined) {
      const uri = editor.document.uri.toString();
      const name = path.basename(editor.document.uri.fsPath);
      state.activeFile = { uri, label: name };
      const s = editor.selection;
      if (!s.isEmpty) state.selection = { uri, label: `${name}:${s.start.line + 1}-${s.end.line + 1}`, range: lspRange(s) };
    }
    return state;
  }

  /** The items for what follows an `@`. */
  async items(prefix: string, sessionId: string | undefined): Promise<MentionItem[]> {
    const [candidates, symbols] = await Promise.all([this.candidates(prefix), this.symbols(prefix)]);
    const items = mentionItems(prefix, this.state(sessionId), candidates, symbols);
    this.shown = new Map(items.map((i) => [i.id, i]));
    return items.map(({ id, kind, label, detail, token }) => ({ id, kind, label, token, ...(detail !== undefined ? { detail } : {}) }));
  }

  private async candidates(prefix: string): Promise<MentionCandidate[]> {
    const { only, query } = mentionFilter(prefix);
    if (only === "symbol" || only === "terminal") return [];
    try {
      return (await this.client.command("acpls.mentionCandidates", { query, limit: 30 })).items;
    } catch (error) {
      this.client.log.warn(`acpls.mentionCandidates failed: ${String(error)}`);
      return [];
    }
  }

  /** The editor's language servers' workspace symbols (`@symbol:name` or any word of 2+ letters). */
  private async symbols(prefix: string): Promise<WorkspaceSymbol[]> {
    const { only, query } = mentionFilter(prefix);
    if ((only !== undefined && only !== "symbol") || query.length < 2 || /[/\\:]/.test(query)) return [];
    const found = vscode.commands.executeCommand<vscode.SymbolInformation[] | undefined>("vscode.executeWorkspaceSymbolProvider", query);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), SYMBOL_WAIT_MS);
    });
    try {
      const symbols = (await Promise.race([Promise.resolve(found), late])) ?? [];
      return symbols
        .filter((s) => s.location.uri.scheme === "file")
        .map((s) => ({
          name: s.name,
          ...(s.containerName ? { containerName: s.containerName } : {}),
          kind: vscode.SymbolKind[s.kind] ?? "symbol",
          uri: s.location.uri.toString(),
          range: lspRange(s.location.range),
          relative: vscode.workspace.asRelativePath(s.location.uri),
        }));
    } catch (error) {
      this.client.log.warn(`workspace symbols failed: ${String(error)}`);
      return [];
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }

  /** The attachment for a picked item, or why there is none. */
  resolve(id: string): Attachment | string {
    const item = this.shown.get(id);
    if (item === undefined) return "That completion is gone: type @ again.";
    if (item.kind !== "diagnostics") return attachmentFor(item);
    const all =
      item.scope === "workspace"
        ? vscode.languages.getDiagnostics()
        : item.uri === undefined
          ? []
          : ([[vscode.Uri.parse(item.uri), vscode.languages.getDiagnostics(vscode.Uri.parse(item.uri))]] as [vscode.Uri, vscode.Diagnostic[]][]);
    const diagnostics = all
      .filter(([uri]) => uri.scheme === "file")
      .flatMap(([uri, list]) => list.map((d) => ({ uri: uri.toString(), diagnostic: lspDiagnostic(d) })));
    return attachmentFor(item, diagnostics);
  }

  /** Files dropped on the panel (from the explorer: `text/uri-list`): images as image mentions,
   * other files as file mentions. */
  dropped(uris: readonly string[]): Attachment[] {
    const out: Attachment[] = [];
    for (const text of uris) {
      let uri: vscode.Uri;
      try {
        uri = vscode.Uri.parse(text, true);
      } catch {
        continue;
      }
      if (uri.scheme !== "file") continue;
      const name = path.basename(uri.fsPath);
      if (imageTypeOf(name) !== undefined) out.push({ label: name, title: uri.fsPath, icon: iconOf("image"), mention: { type: "image", path: uri.fsPath } });
      else {
        const token = vscode.workspace.asRelativePath(uri).replace(/\s/g, "\\ ");
        out.push({ label: `@${token}`, title: uri.fsPath, icon: iconOf("file"), mention: { type: "file", uri: uri.toString() } });
      }
    }
    return out;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
