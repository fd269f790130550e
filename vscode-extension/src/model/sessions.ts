// The agent's stored sessions as the user sees them (pure: no vscode import): the label of a listed
// session and what may be done with it, given what the agent offers (acpls.listSessions' `offers`).

import type { ListedSession, SessionOffers } from "../protocol";

export type SessionAction = "show" | "load" | "resume" | "fork" | "close" | "delete";

export type SessionPick = { label: string; description?: string; detail?: string; sessionId: string };

/** One quick pick row: the title (or id), when it changed, and whether this window has it open. */
export function sessionPick(s: ListedSession, openHere: boolean): SessionPick {
  const open = openHere || s.open === true;
  const parts = [s.updatedAt, open ? "open" : undefined].filter((p): p is string => p !== undefined && p !== "");
  return {
    label: s.title ?? s.sessionId,
    ...(parts.length > 0 ? { description: parts.join(" · ") } : {}),
    ...(s.title !== undefined ? { detail: s.sessionId } : {}),
    sessionId: s.sessionId,
  };
}

const LABELS: Record<SessionAction, string> = {
  show: "$(comment-discussion) Show it",
  load: "$(history) Load it with its history",
  resume: "$(debug-continue) Resume it without its history",
  fork: "$(repo-forked) Fork it into a new session",
  close: "$(close) Close it",
  delete: "$(trash) Delete it",
};

/** What the user may do with a listed session: only what the agent offers; an open session is
 * shown rather than loaded again, and only an open one can be closed. */
export function sessionActions(offers: Partial<SessionOffers> | undefined, open: boolean): { label: string; action: SessionAction }[] {
  const o = offers ?? {};
  const actions: SessionAction[] = [];
  if (open) actions.push("show");
  else {
    if (o.load === true) actions.push("load");
    if (o.resume === true) actions.push("resume");
    if (o.load === undefined && o.resume === undefined) actions.push("load"); // an older server
  }
  if (o.fork === true) actions.push("fork");
  if (open && o.close === true) actions.push("close");
  if (o.delete === true) actions.push("delete");
  return actions.map((action) => ({ label: LABELS[action], action }));
}
