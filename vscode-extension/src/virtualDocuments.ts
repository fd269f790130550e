// Read-only virtual documents (scheme acpls-proposed) holding proposed and baseline texts for VS
// Code's diff editor: permission previews, review and write conflicts share one provider.

import * as vscode from "vscode";

/** Read-only documents holding proposed (and baseline) texts for the diff editor. */
export class VirtualDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  static readonly scheme = "acpls-proposed";
  private readonly texts = new Map<string, string>();
  private counter = 0;
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly registration: vscode.Disposable;

  constructor(private readonly limit = 64) {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(VirtualDocuments.scheme, this);
  }

  /** A URI whose document holds `text`; its path ends in `fileName` so the language is detected. */
  add(fileName: string, text: string, label: string): vscode.Uri {
    this.counter += 1;
    const key = `${this.counter}`;
    this.texts.set(key, text);
    // Bounded: the oldest documents go (an open diff of one shows empty after that).
    while (this.texts.size > this.limit) {
      const oldest = this.texts.keys().next().value;
      if (oldest === undefined) break;
      this.texts.delete(oldest);
    }
    return vscode.Uri.from({ scheme: VirtualDocuments.scheme, path: `/${label}/${fileName}`, query: key });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.query) ?? "";
  }

  dispose(): void {
    this.registration.dispose();
    this.changed.dispose();
  }
}
