// The words of the acpls status item (status.ts draws them): the agent, the shown session's mode
// (issue #11: the mode the agent is in is always in sight), its context meter and the waiting
// prompts; and the modes its menu offers, as the panel's mode picker lists them.
// No `vscode` import: the unit tests use it.

import type { ConfigOption, ConfigSelectGroup, ConfigSelectOption, SessionMode } from "../protocol";
import { usageFraction, type Usage } from "./usage";

/**
 * Whether the item, which names the default agent, shows the shown session's mode: only when the
 * session is the default agent's (or either is unknown), so another agent's mode is never shown
 * next to the default agent's name (the panel header shows it with its own agent).
 */
export function modeOfDefaultAgent(sessionAgent: string | undefined, defaultAgent: string | undefined): boolean {
  return sessionAgent === undefined || defaultAgent === undefined || sessionAgent === defaultAgent;
}

/** A session's modes (the `modes` session update). */
export type Modes = { currentModeId: string; availableModes: SessionMode[] };

/** A session's modes: v1's `modes`, else its config option of category `mode` (ACP v2 has no modes;
 * acpls.setMode sets that option). */
export function sessionModes(session: { modes?: Modes; configOptions: ConfigOption[] } | undefined): Modes | undefined {
  if (session === undefined) return undefined;
  if (session.modes !== undefined) return session.modes;
  const option = session.configOptions.find((o) => o.category === "mode");
  if (option === undefined || typeof option.currentValue !== "string") return undefined;
  const values = (option.options ?? []).flatMap((o) => ("group" in o ? (o as ConfigSelectGroup).options : [o as ConfigSelectOption]));
  return {
    currentModeId: option.currentValue,
    availableModes: values.map((v) => ({ id: v.value, name: v.name, ...(v.description !== undefined ? { description: v.description } : {}) })),
  };
}

/** The current mode as the agent lists it; one it names but does not list is shown by its id. */
export function currentMode(modes: Modes | undefined): SessionMode | undefined {
  if (modes === undefined || modes.currentModeId === "") return undefined;
  return modes.availableModes.find((m) => m.id === modes.currentModeId) ?? { id: modes.currentModeId, name: modes.currentModeId };
}

/** The text as a status bar label shows it: `$(name)` in an agent's words is not an icon. */
export function escapeIcons(text: string): string {
  return text.replace(/\$\(/g, "\\$(");
}

/** The text as Markdown shows it, every Markdown character taken literally. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>$]/g, "\\$&");
}

export type StatusParts = {
  /** A codicon: `$(hubot)`, `$(loading~spin)`, `$(error)`. */
  icon: string;
  agent: string;
  modes?: Modes;
  usage?: Usage;
  pendingPermissions: number;
};

/** `$(hubot) claude · Plan $(dashboard) 42% $(bell-dot) 1`: what is unknown is left out. */
export function statusText(parts: StatusParts): string {
  const mode = currentMode(parts.modes);
  const share = usageFraction(parts.usage);
  return [
    `${parts.icon} ${escapeIcons(parts.agent)}`,
    mode !== undefined ? ` · ${escapeIcons(mode.name)}` : "",
    share !== undefined ? ` $(dashboard) ${Math.round(share * 100)}%` : "",
    parts.pendingPermissions > 0 ? ` $(bell-dot) ${parts.pendingPermissions}` : "",
  ].join("");
}

/** The tooltip's line for the mode (Markdown): `mode **Plan**: Read and plan, no edits`. */
export function modeTooltip(modes: Modes | undefined): string | undefined {
  const mode = currentMode(modes);
  if (mode === undefined) return undefined;
  const description = mode.description !== undefined && mode.description !== "" ? `: ${escapeMarkdown(mode.description)}` : "";
  return `mode **${escapeMarkdown(mode.name)}**${description}`;
}

export type ModePick = { label: string; description?: string; detail?: string; modeId: string; current: boolean };

/** The modes as the status menu offers them: the agent's order, the current one marked. */
export function modePicks(modes: Modes | undefined): ModePick[] {
  if (modes === undefined) return [];
  return modes.availableModes.map((mode) => {
    const current = mode.id === modes.currentModeId;
    return {
      label: `${current ? "$(check)" : "$(blank)"} mode: ${escapeIcons(mode.name)}`,
      ...(current ? { description: "current" } : {}),
      ...(mode.description !== undefined && mode.description !== "" ? { detail: mode.description } : {}),
      modeId: mode.id,
      current,
    };
  });
}
