// "acpls: Check agents": asks the server to start each configured agent (`acpls.agent` and those of
// `acpls.agents`) once (`acpls.checkAgents`) and writes what it found to the log channel, with a
// notification that says whether all is well.

import * as vscode from "vscode";
import type { AcplsClient } from "./client";
import { checkLine, checkVerdict } from "./model/agentCheck";
import type { AgentCheck } from "./protocol";

export async function checkAgents(client: AcplsClient, log: vscode.LogOutputChannel): Promise<void> {
  let checks: AgentCheck[];
  try {
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "acpls: checking the agents…" },
      () => client.command("acpls.checkAgents", {}),
    );
    checks = result.agents;
  } catch (error) {
    log.error(`agent check failed: ${String(error)}`);
    void vscode.window.showErrorMessage(`acpls: the agent check failed: ${String(error)}`);
    return;
  }
  for (const check of checks) (check.ok ? log.info : log.warn).call(log, checkLine(check));
  const verdict = checkVerdict(checks);
  if (verdict.ok) {
    void vscode.window.showInformationMessage(verdict.message);
    return;
  }
  const choice = await vscode.window.showWarningMessage(verdict.message, "Show the log");
  if (choice !== undefined) log.show(true);
}
