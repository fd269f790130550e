// The context meter (editors/protocol.md 5.4 `usage`): the words for a session's usage and when to
// warn. Warned once per session when the context first reaches WARN_AT (again after it drops, as
// after a compaction), the same threshold acpls' generic mode and the Neovim plugin use.
// No `vscode` import: the webview and the unit tests use it too.

export type Usage = { used: number; size: number; cost?: unknown };

export const WARN_AT = 0.8;

export function usageFraction(usage: Usage | undefined): number | undefined {
  if (usage === undefined || !Number.isFinite(usage.used) || !Number.isFinite(usage.size) || usage.size <= 0) return undefined;
  return Math.max(0, usage.used / usage.size);
}

/** `context 1,200/200,000 (1%) · 0.01 USD`, or undefined. */
export function usageText(usage: Usage | undefined): string | undefined {
  const share = usageFraction(usage);
  if (usage === undefined || share === undefined) return undefined;
  let text = `context ${usage.used.toLocaleString("en-US")}/${usage.size.toLocaleString("en-US")} (${Math.round(share * 100)}%)`;
  const cost = usage.cost as { amount?: unknown; currency?: unknown } | undefined;
  if (typeof cost === "object" && cost !== null && typeof cost.amount === "number") {
    text += ` · ${cost.amount.toFixed(2)} ${typeof cost.currency === "string" ? cost.currency : ""}`.trimEnd();
  }
  return text;
}

/** Decides, per session, when a usage update should warn the user. */
export class UsageWarnings {
  private readonly warned = new Set<string>();

  crossed(sessionId: string, usage: Usage): boolean {
    const share = usageFraction(usage);
    if (share === undefined) return false;
    if (share < WARN_AT) {
      this.warned.delete(sessionId);
      return false;
    }
    if (this.warned.has(sessionId)) return false;
    this.warned.add(sessionId);
    return true;
  }
}

/** `1,234 tokens (1,000 in, 234 out)` from a turn's token counts (acpls.prompt's `usage`), or undefined. */
export function tokensText(tokens: unknown): string | undefined {
  if (typeof tokens !== "object" || tokens === null) return undefined;
  const t = tokens as Record<string, unknown>;
  if (typeof t.totalTokens !== "number") return undefined;
  const parts = (
    [
      ["inputTokens", "in"],
      ["outputTokens", "out"],
      ["thoughtTokens", "thought"],
    ] as const
  )
    .filter(([key]) => typeof t[key] === "number")
    .map(([key, word]) => `${(t[key] as number).toLocaleString("en-US")} ${word}`);
  return `${t.totalTokens.toLocaleString("en-US")} tokens${parts.length > 0 ? ` (${parts.join(", ")})` : ""}`;
}
