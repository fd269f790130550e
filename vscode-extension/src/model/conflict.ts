// The question of acpls/resolveConflict (editors/protocol.md section 5.13), pure: no vscode import.
// The user's text against another (the agent's write to disk, or the original a rejection would
// give back): keep mine, take theirs, or look at the diff first (then the question comes back).

import type { ConflictChoice, ResolveConflictParams, ResolveConflictResult } from "../protocol";

export type ConflictAction = ConflictChoice | "showDiff";
export type ConflictItem = { label: string; action: ConflictAction };

/** What the other side is called: the agent's text, or the original. */
export function theirsName(params: ResolveConflictParams): string {
  return params.kind === "reject" ? "the original" : "the agent's";
}

/** The buttons, in order: keep mine first (the safe one), the diff, then take theirs. */
export function conflictItems(params: ResolveConflictParams): ConflictItem[] {
  const theirs = theirsName(params);
  return [
    { label: "Keep mine", action: "keepMine" },
    { label: "Show the diff", action: "showDiff" },
    { label: `Take ${theirs}`, action: "takeTheirs" },
  ];
}

/** The answer for the button pressed (`undefined`: dismissed, which keeps the user's text). */
export function conflictAnswer(params: ResolveConflictParams, label: string | undefined): ResolveConflictResult | "showDiff" {
  const item = conflictItems(params).find((i) => i.label === label);
  if (item === undefined) return null;
  return item.action === "showDiff" ? "showDiff" : { choice: item.action };
}

/** The diff editor's title and the two sides' labels (yours on the left). */
export function conflictDiff(params: ResolveConflictParams): { title: string; left: string; right: string; leftText: string; rightText: string } {
  const name = params.path.split(/[\\/]/).pop() ?? params.path;
  const theirs = params.kind === "reject" ? "original" : "agent's";
  return {
    title: `${name}: yours ↔ ${theirs}`,
    left: "yours",
    right: theirs.replace("'", ""),
    leftText: params.mine ?? "",
    rightText: params.theirs ?? "",
  };
}
