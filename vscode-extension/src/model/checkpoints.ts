// Checkpoints in the panel (protocol.md section 8), as data: which checkpoint a user message of the
// conversation starts, and how a restore's result reads. No editor API here.

import type { Checkpoint, RestoreResult } from "../protocol";
import { type Item, messageText } from "./conversation";

/** The turn (1-based) that the user message `itemId` started, and its text; undefined for any other item. */
export function userTurn(items: readonly Item[], itemId: string): { turn: number; text: string } | undefined {
  let turn = 0;
  for (const item of items) {
    if (item.kind !== "message" || item.role !== "user") continue;
    turn += 1;
    if (item.id === itemId) return { turn, text: messageText(item) };
  }
  return undefined;
}

/** The checkpoint taken before that turn: the same turn with the same first line, else (after a
 * session was loaded, when the counts differ) the newest with that first line. */
export function checkpointFor(list: readonly Checkpoint[], turn: number, text: string): Checkpoint | undefined {
  const first = text.trim().split("\n")[0] ?? "";
  return list.find((c) => c.turn === turn && c.prompt === first) ?? list.find((c) => c.turn !== null && c.prompt === first);
}

export function unsavedSkips(result: RestoreResult): string[] {
  return result.skipped.filter((s) => s.reason.includes("unsaved changes")).map((s) => s.path);
}

/** One line for a notification: what was restored, and what was skipped and why. */
export function restoreSummary(result: RestoreResult, basename: (path: string) => string): string {
  const n = result.restored.length;
  let text = `Restored ${n} file${n === 1 ? "" : "s"}.`;
  if (result.skipped.length > 0) {
    text += ` Skipped: ${result.skipped.map((s) => `${basename(s.path)} (${s.reason})`).join("; ")}.`;
  }
  return text;
}

/** A quick pick line: `turn 2 · 11:02:03 · Fix the test`, detail: the files it changed. */
export function checkpointLabel(c: Checkpoint): { label: string; description: string; detail: string } {
  const time = /T(\d\d:\d\d:\d\d)/.exec(c.time)?.[1] ?? c.time;
  const files = c.files.length === 0 ? "no files changed" : `${c.files.length} file${c.files.length === 1 ? "" : "s"}: ${c.files.join(", ")}`;
  return { label: c.turn === null ? `before a restore · ${c.prompt}` : `turn ${c.turn} · ${c.prompt}`, description: time, detail: files };
}

/** Refactor Preview applies only the edits the user ticked, and VS Code reports the edit applied
 * all the same: the files that still differ from the checkpoint afterwards (acpls.checkpointDiff)
 * were not restored, and are moved from `restored` to `skipped`. */
export function notApplied(result: RestoreResult, stillDifferent: readonly string[]): RestoreResult {
  const left = new Set(stillDifferent);
  const skipped = [...result.skipped];
  for (const path of result.restored) if (left.has(path)) skipped.push({ path, reason: "left as it is in the preview" });
  return { ...result, restored: result.restored.filter((p) => !left.has(p)), skipped };
}
