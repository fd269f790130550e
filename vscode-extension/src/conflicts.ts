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
      if (answer !== "showDiff") return answer;
      await this.showDiff(params);
    }
    return null;
  }

  private async showDiff(params: ResolveConflictParams): Promise<void> {
    const diff = conflictDiff(params);
    const name = params.path.split(/[\\/]/).pop() ?? "file";
    const left = this.docs.add(name, diff.leftText, diff.left);
    const right = this.docs.add(name, diff.rightText, diff.right);
    await vscode.commands.executeCommand("vscode.diff", left, right, diff.title, { preview: true });
  }
}
