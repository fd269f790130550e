// Slash-command completion for the prompt box: while the caret is in a leading `/word`, offer the
// agent's available commands whose names start with (then contain) what was typed.

import type { AvailableCommand } from "../protocol";

export type SlashQuery = { prefix: string; start: number; end: number };

/** The `/name` being typed at `caret`, or undefined when the caret is not in a leading slash word. */
export function slashQuery(text: string, caret: number): SlashQuery | undefined {
  const match = /^(\s*)\/(\S*)/.exec(text);
  if (match === null) return undefined;
  const start = (match[1] ?? "").length;
  const end = start + 1 + (match[2] ?? "").length;
  if (caret < start + 1 || caret > end) return undefined;
  return { prefix: text.slice(start + 1, caret), start, end };
}

/** Matching commands, best first: name prefix matches, then substring matches, each by name. */
export function completeSlash(commands: readonly AvailableCommand[], prefix: string, limit = 20): AvailableCommand[] {
  const wanted = prefix.toLowerCase();
  const starts: AvailableCommand[] = [];
  const contains: AvailableCommand[] = [];
  for (const command of commands) {
    const name = command.name.toLowerCase();
    if (name.startsWith(wanted)) starts.push(command);
    else if (wanted !== "" && name.includes(wanted)) contains.push(command);
  }
  const byName = (a: AvailableCommand, b: AvailableCommand): number => a.name.localeCompare(b.name);
  return [...starts.sort(byName), ...contains.sort(byName)].slice(0, limit);
}

/** The prompt text with the slash word replaced by the chosen command (and a space after it). */
export function acceptSlash(text: string, query: SlashQuery, command: AvailableCommand): { text: string; caret: number } {
  const rest = text.slice(query.end).replace(/^\s*/, "");
  const head = `${text.slice(0, query.start)}/${command.name} `;
  return { text: head + rest, caret: head.length };
}
