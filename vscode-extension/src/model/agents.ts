// "acpls: Choose agent…" (protocol.md section 12, `acpls.agents`): one quick-pick item per preset or
// ACP registry agent, saying what it is, its version, how it is distributed, whether it is installed
// and how one signs in, and the setting a choice writes.

import type { AgentEntry } from "../protocol";

export type AgentPickItem = {
  id: string;
  label: string;
  description: string;
  detail: string;
  iconUrl?: string;
  current: boolean;
  usable: boolean;
};

export function agentState(entry: AgentEntry): string {
  if (entry.installed) return "installed";
  if (entry.runnable) return "not installed: fetched on first start";
  if (entry.problem) return `cannot run here: ${entry.problem}`;
  return "not installed: installed when chosen";
}

export function agentPickItem(entry: AgentEntry, currentAgent: string): AgentPickItem {
  const current = entry.id === currentAgent;
  const version = entry.version ? ` ${entry.version}` : "";
  const kinds = entry.distributions.length > 0 ? entry.distributions.join("/") : "built in";
  const auth = (entry.authMethods ?? [])
    .map((m) => (typeof m.name === "string" ? m.name : typeof m.id === "string" ? m.id : "?"))
    .join(", ");
  const detail = [agentState(entry), kinds, auth ? `sign-in: ${auth}` : ""].filter((p) => p !== "").join(" · ");
  const item: AgentPickItem = {
    id: entry.id,
    label: `${current ? "$(check) " : ""}${entry.name}${version}`,
    description: `${entry.id} · ${entry.description}`,
    detail,
    current,
    usable: entry.problem === undefined,
  };
  if (entry.icon) item.iconUrl = entry.icon;
  return item;
}

/** The items in order: the current agent first, then usable ones, then the rest (each as listed). */
export function agentPickItems(entries: readonly AgentEntry[], currentAgent: string): AgentPickItem[] {
  const items = entries.map((e) => agentPickItem(e, currentAgent));
  const rank = (i: AgentPickItem): number => (i.current ? 0 : i.usable ? 1 : 2);
  return items.map((item, index) => ({ item, index })).sort((a, b) => rank(a.item) - rank(b.item) || a.index - b.index).map((x) => x.item);
}

/** Where the registry list came from, for the picker's title. */
export function registryNote(registry: { source: string; url: string; error?: string }): string {
  const where = registry.source === "network" ? "fresh" : registry.source === "cache" ? "cached copy" : "bundled snapshot";
  return registry.error ? `${where}; the last fetch failed: ${registry.error}` : where;
}
