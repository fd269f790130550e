// acpls/resolveConflict (editors/protocol.md section 5.13): acpls will not replace the user's text on
// its own. A warning with Keep mine / Show the diff / Take theirs; the diff opens both texts in VS
// Code's diff editor (read-only virtual documents) and the question comes back. Dismissed: null,
// which keeps the user's text.

import * as vscode from "vscode";
import type { CancellationToken } from "vscode-languageclient/node";
import type { AcplsClient } from "./client";
import { conflictAnswer, conflictDiff, conflictItems } from "./model/conflict";
import type { VirtualDocuments } from "./virtualDocuments";
import type { ResolveConflictParams, ResolveConflictResult } from "./protocol";

const MAX_ASKS = 5;
// How long after "Take theirs" acpls' edit of the buffer may take to arrive.
const TAKE_SETTLE_MS = 10_000;

export class ConflictController {
  constructor(
    client: AcplsClient,
    private readonly docs: VirtualDocuments,
  ) {
    client.onRequest("acpls/resolveConflict", (params, token) => this.resolve(params, token));
  }

  async resolve(params: ResolveConflictParams, token?: CancellationToken): Promise<ResolveConflictResult> {
    const labels = conflictItems(params).map((i) => i.label);
    for (let i = 0; i < MAX_ASKS; i += 1) {
      const picked = await vscode.window.showWarningMessage(params.message, ...labels);
      if (token?.isCancellationRequested) return null;
      const answer = conflictAnswer(params, picked);
      if (answer !== null && answer !== "showDiff" && answer.choice === "takeTheirs" && params.kind === "diskWrite") {
        this.cleanOnceTaken(params.path);
      }
      if (answer !== "showDiff") return answer;
      await this.showDiff(params);
    }
    return null;
  }

  // acpls puts the agent's disk text in the buffer with an edit, which VS Code marks as an unsaved
  // change although buffer and disk now match. Once they match, saving writes the same bytes and
  // clears the mark; a buffer that differs from the disk is never saved.
  private cleanOnceTaken(path: string): void {
    const uri = vscode.Uri.file(path).toString();
    let done = false;
    const finish = (): void => {
      done = true;
      listener.dispose();
      clearTimeout(timer);
    };
    const listener = vscode.workspace.onDidChangeTextDocument(async (event) => {
      const doc = event.document;
      if (done || doc.uri.toString() !== uri || !doc.isDirty) return;
      const disk = new TextDecoder().decode(await vscode.workspace.fs.readFile(doc.uri));
      if (done || doc.getText() !== disk) return;
      finish();
      await doc.save();
    });
    const timer = setTimeout(finish, TAKE_SETTLE_MS);
  }

  private async showDiff(params: ResolveConflictParams): Promise<void> {
    const diff = conflictDiff(params);
    const name = params.path.split(/[\\/]/).pop() ?? "file";
    const left = this.docs.add(name, diff.leftText, diff.left);
    const right = this.docs.add(name, diff.rightText, diff.right);
    await vscode.commands.executeCommand("vscode.diff", left, right, diff.title, { preview: true });
  }
}
