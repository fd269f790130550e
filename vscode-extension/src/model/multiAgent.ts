// Several agents in one acpls (protocol.md section 13), as the panel shows them (pure: no vscode
// import): which agent a new session is for, how a session reads in the session list when sessions
// of several agents are open, and which agent's status the panel header shows.

import type { AgentEntry, AgentStatusParams, RunningAgent } from "../protocol";
import type { AgentInfo, SessionChoice } from "./panelMessages";

export type NewSessionPick = { label: string; description: string; detail?: string; agent: string | undefined };

/** The agents a new session can be for: the default one first, then those already running (each
 * with its open sessions), then the `acpls.agents` setting's names (`configured`), then every other
 * usable preset or registry agent. */
export function newSessionPicks(
  entries: readonly AgentEntry[],
  running: readonly RunningAgent[],
  defaultAgent: string,
  configured: readonly string[] = [],
): NewSessionPick[] {
  const picks: NewSessionPick[] = [];
  const seen = new Set<string>();
  const runningOf = new Map(running.map((r) => [r.agent, r]));
  const sessions = (name: string): string => {
    const count = runningOf.get(name)?.sessions.length ?? 0;
    return count === 0 ? "" : ` · ${count} session${count === 1 ? "" : "s"}`;
  };
  picks.push({ label: `$(star-full) ${defaultAgent}`, description: `default agent${runningOf.has(defaultAgent) ? ` · ${runningOf.get(defaultAgent)?.state ?? ""}` : ""}${sessions(defaultAgent)}`, agent: undefined });
  seen.add(defaultAgent);
  for (const r of running) {
    if (seen.has(r.agent)) continue;
    seen.add(r.agent);
    picks.push({ label: `$(vm-running) ${r.agent}`, description: `${r.state}${sessions(r.agent)}`, agent: r.agent });
  }
  for (const name of configured) {
    if (seen.has(name)) continue;
    seen.add(name);
    picks.push({ label: `$(gear) ${name}`, description: "acpls.agents", agent: name });
  }
  for (const e of entries) {
    if (seen.has(e.id) || e.problem !== undefined) continue;
    seen.add(e.id);
    const version = e.version ? ` ${e.version}` : "";
    picks.push({ label: `${e.name}${version}`, description: e.id, detail: e.description, agent: e.id });
  }
  return picks;
}

/** A session in the panel's session list: its title, and its agent when sessions of more than
 * one agent are listed (so two chats side by side are told apart). */
export function sessionChoiceLabel(choice: SessionChoice, all: readonly SessionChoice[], title?: string): string {
  const name = title ?? choice.title ?? `Session ${choice.sessionId.slice(0, 8)}`;
  const agents = new Set(all.map((c) => c.agent).filter((a): a is string => a !== undefined));
  return agents.size > 1 && choice.agent !== undefined ? `${name} · ${choice.agent}` : name;
}

/** The status of `agent` (a session's agent), else the default agent's. */
export function statusFor(statuses: ReadonlyMap<string, AgentStatusParams>, agent: string | undefined, fallback: AgentStatusParams | undefined): AgentStatusParams | undefined {
  return (agent !== undefined ? statuses.get(agent) : undefined) ?? fallback;
}

export function agentInfo(status: AgentStatusParams): AgentInfo {
  const name = status.agentInfo?.title ?? status.agentInfo?.name ?? status.agent ?? "agent";
  return {
    state: status.state,
    label: name,
    message: status.message,
    ...(status.canSteer === true ? { canSteer: true } : {}),
    ...(status.images !== undefined ? { images: status.images } : {}),
  };
}
