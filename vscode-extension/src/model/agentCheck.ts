// What "acpls: Check agents" says about each agent (protocol.md section 3, `acpls.checkAgents`):
// one line per agent for the log channel, and a one-line verdict for the notification.

import type { AgentCheck } from "../protocol";

export function checkLine(check: AgentCheck): string {
  const command = check.command.join(" ");
  if (!check.installed) return `${check.name}: not installed (${check.detail})`;
  if (!check.ok) return `${check.name}: initialize failed: ${check.detail} (ran ${command})`;
  const who = [check.agentName, check.agentVersion].filter((p) => typeof p === "string" && p !== "").join(" ") || "agent";
  const auth = check.authMethods.length > 0 ? `, sign-in: ${check.authMethods.join(", ")}` : "";
  const node = typeof check.node === "string" && check.node !== "" ? `, on ${check.node}` : "";
  return `${check.name}: ok (${who}, ACP v${String(check.protocolVersion ?? "?")}${auth}, ${check.seconds.toFixed(1)} s), ran ${command}${node}`;
}

export function checkVerdict(checks: readonly AgentCheck[]): { ok: boolean; message: string } {
  const failed = checks.filter((c) => !c.ok);
  if (failed.length === 0) return { ok: true, message: `acpls: ${checks.map((c) => c.name).join(", ")} answered.` };
  const names = failed.map((c) => (c.installed ? `${c.name} (does not answer)` : `${c.name} (not installed)`));
  return { ok: false, message: `acpls: ${names.join(", ")}. See the acpls log for what to do.` };
}
