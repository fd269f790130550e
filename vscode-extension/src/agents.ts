// "acpls: Choose agent…": a quick pick of acpls' presets and the ACP registry's agents
// (`acpls.agents`); the chosen one is installed (`acpls.installAgent`: a registry binary is
// downloaded and unpacked by the server) and becomes the `acpls.agent` setting.

import * as vscode from "vscode";
import type { AcplsClient } from "./client";
import { agentPickItems, registryNote, type AgentPickItem } from "./model/agents";
import type { AgentsResult } from "./protocol";

type Item = vscode.QuickPickItem & { pick?: AgentPickItem; refresh?: boolean };

export async function chooseAgent(client: AcplsClient, log: vscode.LogOutputChannel, refresh = false): Promise<void> {
  let result: AgentsResult;
  try {
    result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: refresh ? "acpls: fetching the agent registry…" : "acpls: listing agents…" },
      () => client.command("acpls.agents", refresh ? { refresh: true } : {}),
    );
  } catch (error) {
    void vscode.window.showErrorMessage(`acpls: cannot list agents: ${String(error)}`);
    return;
  }
  const items: Item[] = agentPickItems(result.agents, result.default).map((pick) => {
    const item: Item = { label: pick.label, description: pick.description, detail: pick.detail, pick };
    if (pick.iconUrl) item.iconPath = vscode.Uri.parse(pick.iconUrl);
    return item;
  });
  items.push({ label: "", kind: vscode.QuickPickItemKind.Separator }, { label: "$(refresh) Fetch the registry again", refresh: true });
  const chosen = await vscode.window.showQuickPick(items, {
    title: `acpls: Choose agent (${registryNote(result.registry)})`,
    placeHolder: "The agent for new sessions: presets and the ACP registry",
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (chosen?.refresh) return chooseAgent(client, log, true);
  if (chosen?.pick === undefined) return;
  await install(client, log, chosen.pick);
}

async function install(client: AcplsClient, log: vscode.LogOutputChannel, pick: AgentPickItem): Promise<void> {
  try {
    const done = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `acpls: preparing ${pick.id}…` },
      () => client.command("acpls.installAgent", { agent: pick.id }),
    );
    log.info(`agent ${pick.id} ready: ${done.command.join(" ")}${done.installDir ? ` (in ${done.installDir})` : ""}`);
  } catch (error) {
    log.error(`agent ${pick.id} cannot be used: ${String(error)}`);
    void vscode.window.showErrorMessage(`acpls: ${pick.id} cannot be used: ${String(error)}`);
    return;
  }
  const config = vscode.workspace.getConfiguration("acpls");
  const inspected = config.inspect("agent");
  const target = inspected?.workspaceValue !== undefined ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await config.update("agent", pick.id, target);
  void vscode.window.showInformationMessage(`acpls: the agent is now ${pick.id}.`);
}
