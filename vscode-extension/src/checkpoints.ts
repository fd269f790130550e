// Restoring checkpoints from VS Code: the panel's "Restore checkpoint" on a user message and the
// "acpls: Restore a checkpoint…" command. The restore goes through Refactor Preview (`preview: true`:
// every edit needs confirmation), unsaved files only after a modal question, and afterwards the
// conversation can continue from there, with the turn's prompt back in the panel's input.

import * as path from "node:path";
import * as vscode from "vscode";
import type { AcplsClient } from "./client";
import { checkpointLabel, notApplied, restoreSummary, unsavedSkips } from "./model/checkpoints";
import type { Checkpoint } from "./protocol";

export type ContinueTarget = { continueIn(sessionId: string, prompt: string, agent?: string): void };

export async function restoreCheckpoint(client: AcplsClient, checkpoint: Checkpoint, panel: ContinueTarget): Promise<void> {
  try {
    let result = await client.command("acpls.restoreCheckpoint", { id: checkpoint.id, preview: true });
    const unsaved = unsavedSkips(result);
    if (unsaved.length > 0) {
      const names = unsaved.map((p) => path.basename(p)).join(", ");
      const answer = await vscode.window.showWarningMessage(
        `acpls: ${names} ${unsaved.length === 1 ? "has" : "have"} unsaved changes. Restore ${unsaved.length === 1 ? "it" : "them"} too?`,
        { modal: true },
        "Restore",
      );
      if (answer === "Restore") {
        const again = await client.command("acpls.restoreCheckpoint", { id: checkpoint.id, preview: true, includeUnsaved: unsaved });
        result = { ...again, restored: [...result.restored, ...again.restored] };
      }
    }
    // What the user left unticked in Refactor Preview still differs from the checkpoint.
    const diff = await client.command("acpls.checkpointDiff", { id: checkpoint.id });
    result = notApplied(result, diff.files.map((f) => f.path));
    const summary = restoreSummary(result, (p) => path.basename(p));
    const canContinue = checkpoint.turn !== null && checkpoint.sessionId !== null;
    const choice = await (result.skipped.length > 0 ? vscode.window.showWarningMessage : vscode.window.showInformationMessage)(
      `acpls: ${summary}`,
      ...(canContinue ? ["Continue from here"] : []),
    );
    if (choice === "Continue from here") {
      const next = await client.command("acpls.continueFromCheckpoint", { id: checkpoint.id });
      panel.continueIn(next.sessionId, next.prompt, next.agent);
    }
  } catch (error) {
    void vscode.window.showErrorMessage(`acpls: restore failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** "acpls: Restore a checkpoint…": every checkpoint of the workspace, newest first. */
export async function pickCheckpoint(client: AcplsClient, panel: ContinueTarget): Promise<void> {
  let list: Checkpoint[];
  try {
    list = await client.command("acpls.checkpoints", {});
  } catch (error) {
    void vscode.window.showErrorMessage(`acpls: no checkpoints: ${String(error)}`);
    return;
  }
  const picked = await vscode.window.showQuickPick(
    list.map((c) => ({ ...checkpointLabel(c), checkpoint: c })),
    { title: "acpls: restore the workspace to before…", placeHolder: list.length === 0 ? "No checkpoints yet: one is taken before every turn" : "Checkpoint", matchOnDetail: true },
  );
  if (picked !== undefined) await restoreCheckpoint(client, picked.checkpoint, panel);
}
