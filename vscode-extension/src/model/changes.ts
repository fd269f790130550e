// The "Agent changes" review: files and hunks from `acpls/changes`, labels for the tree, and the
// baseline text of a file (its text before the agent touched it) rebuilt from the current text and
// the hunks, for the "compare with baseline" diff.

import type { ChangedFile, Hunk } from "../protocol";
import { applyTextEdits } from "./permission";

export function fileDescription(file: ChangedFile): string {
  return `${file.status} +${file.added} -${file.removed}`;
}

export function hunkLabel(hunk: Hunk): string {
  const first = hunk.range.start.line + 1;
  const last = Math.max(first, hunk.range.end.line);
  const where = hunk.added === 0 ? `line ${first}` : first === last ? `line ${first}` : `lines ${first}–${last}`;
  return `${where}: +${hunk.added} -${hunk.removed}`;
}

/** The first changed line of a hunk, as a one-line preview. */
export function hunkPreview(hunk: Hunk): string {
  const text = hunk.newText !== "" ? hunk.newText : hunk.oldText;
  const line = text.split("\n").find((l) => l.trim() !== "") ?? "";
  const trimmed = line.trim();
  return trimmed.length > 60 ? `${trimmed.slice(0, 59)}…` : trimmed;
}

/** The file's baseline: every hunk's range in the current text replaced by its old text. */
export function baselineText(current: string, hunks: readonly Hunk[]): string {
  return applyTextEdits(
    current,
    hunks.map((hunk) => ({ range: hunk.range, newText: hunk.oldText })),
  );
}

/** Files keyed by URI, for CodeLens look-ups. */
export function indexByUri(files: readonly ChangedFile[]): Map<string, ChangedFile> {
  return new Map(files.map((file) => [file.uri, file]));
}

export function totals(files: readonly ChangedFile[]): { files: number; hunks: number } {
  return { files: files.length, hunks: files.reduce((n, f) => n + f.hunks.length, 0) };
}
