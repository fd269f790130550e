// The remembered permission rules (acpls.listRules) as the "Permission rules" quick pick shows them.

import type { JsonObject } from "./validate";

export type RuleItem = { ruleId: string; label: string; description: string; detail: string };

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * One rule's quick-pick entry: what it allows or rejects (the server's `description`, the same
 * text the prompt showed), for which agent, since when. Entries without a `ruleId` cannot be
 * removed and are left out.
 */
export function ruleItem(rule: JsonObject): RuleItem | undefined {
  const ruleId = text(rule.ruleId);
  if (ruleId === undefined) return undefined;
  const decision = text(rule.decision) ?? "?";
  const what =
    text(rule.description) ??
    `${text(rule.kind) ?? "?"}: ${text(rule.commandPrefix) ?? text(rule.pathGlob) ?? text(rule.urlOrigin) ?? text(rule.toolTitle) ?? "every request"}`;
  const icon = decision === "allow" ? "$(check)" : decision === "reject" ? "$(close)" : "$(question)";
  return {
    ruleId,
    label: `${icon} ${decision} ${what}`,
    description: text(rule.agent) ?? "",
    detail: `since ${text(rule.createdAt) ?? "?"} · ${text(rule.workspace) ?? ""}`,
  };
}

export function ruleItems(rules: readonly JsonObject[]): RuleItem[] {
  return rules.map(ruleItem).filter((item): item is RuleItem => item !== undefined);
}
