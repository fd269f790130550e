// The extension's own commands (acpls.ui.*): each body lives here, activate() only registers them
// with the parts it built (extension.ts).

import * as path from "node:path";
import * as vscode from "vscode";
import { checkAgents } from "./agentCheck";
import { chooseAgent } from "./agents";
import type { AuthController } from "./auth";
import { pickCheckpoint } from "./checkpoints";
import type { AcplsClient } from "./client";
import type { FollowController } from "./follow";
import type { AgentPanel } from "./panel";
import type { PermissionController } from "./permissions";
import { ruleItems } from "./model/rules";
import { modePicks } from "./model/status";
import type { StatusController } from "./status";

/** What the commands use: the parts activate() built. */
export type CommandParts = {
  client: AcplsClient;
  log: vscode.LogOutputChannel;
  panel: AgentPanel;
  follow: FollowController;
  permissions: PermissionController;
  auth: AuthController;
  status: StatusController;
};

/** Every acpls.ui.* command, by id. */
export function uiCommands(parts: CommandParts): Record<string, (...args: unknown[]) => unknown> {
  const { client, log, panel, follow } = parts;
  return {
    "acpls.ui.openPanel": () => panel.reveal(),
    "acpls.ui.restart": async () => {
      await client.restart();
      void vscode.window.showInformationMessage("acpls restarted.");
    },
    "acpls.ui.showLog": () => log.show(true),
    "acpls.ui.checkAgents": () => checkAgents(client, log),
    "acpls.ui.chooseAgent": () => chooseAgent(client, log),
    "acpls.ui.toggleFollow": () => follow.toggle(),
    "acpls.ui.newSession": () => panel.newSession(),
    "acpls.ui.cancel": () => panel.cancel(),
    "acpls.ui.browseSessions": () => panel.browseSessions(),
    "acpls.ui.forkSession": () => panel.fork().catch((e: unknown) => vscode.window.showErrorMessage(`acpls: fork failed: ${String(e)}`)),
    "acpls.ui.closeSession": () => panel.closeSession().catch((e: unknown) => vscode.window.showErrorMessage(`acpls: close failed: ${String(e)}`)),
    "acpls.ui.logout": () => logout(parts),
    "acpls.ui.restoreCheckpoint": () => pickCheckpoint(client, panel),
    "acpls.ui.prompt": (text?: unknown) => prompt(panel, text),
    "acpls.ui.askAboutSelection": () => askAboutSelection(panel),
    "acpls.ui.choosePermissionUi": () => choosePermissionUi(),
    "acpls.ui.openTranscript": () => openTranscript(client, panel),
    "acpls.ui.statusMenu": () => statusMenu(parts),
    "acpls.ui.showRules": () => showRules(client),
  };
}

/** The remembered "always" answers of this workspace; the one picked is removed after a confirmation. */
async function showRules(client: AcplsClient): Promise<void> {
  try {
    for (;;) {
      const { rules } = await client.command("acpls.listRules", {});
      const items = ruleItems(rules);
      if (items.length === 0) {
        void vscode.window.showInformationMessage("acpls: no remembered permission rule.");
        return;
      }
      const picked = await vscode.window.showQuickPick(items, {
        title: "acpls: permission rules (pick one to remove it)",
        matchOnDescription: true,
        matchOnDetail: true,
      });
      if (picked === undefined) return;
      const remove = "Remove";
      const sure = await vscode.window.showWarningMessage(`Remove the rule "${picked.label.replace(/^\$\([a-z]+\) /, "")}"?`, { modal: true }, remove);
      if (sure !== remove) continue;
      await client.command("acpls.removeRule", { ruleId: picked.ruleId });
    }
  } catch (error) {
    void vscode.window.showErrorMessage(`acpls: permission rules: ${String(error)}`);
  }
}

async function logout({ client, auth }: CommandParts): Promise<void> {
  try {
    await client.command("acpls.logout", {});
    await auth.forget();
    void vscode.window.showInformationMessage("acpls: signed out of the agent.");
  } catch (error) {
    void vscode.window.showErrorMessage(`acpls: sign-out failed: ${String(error)}`);
  }
}

async function prompt(panel: AgentPanel, text?: unknown): Promise<void> {
  const given = typeof text === "string" ? text : await vscode.window.showInputBox({ title: "acpls: ask the agent", prompt: "Prompt" });
  if (given === undefined) return;
  await panel.reveal();
  await panel.prompt(given);
}

async function askAboutSelection(panel: AgentPanel): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined) return;
  const { selection, document } = editor;
  const range = selection.isEmpty ? undefined : selection;
  const name = path.basename(document.uri.fsPath || document.uri.path);
  const label = range === undefined ? name : `${name}:${range.start.line + 1}-${range.end.line + 1 - (range.end.character === 0 && range.end.line > range.start.line ? 1 : 0)}`;
  await panel.addContext({
    uri: document.uri.toString(),
    label,
    ...(range === undefined
      ? {}
      : { range: { start: { line: range.start.line, character: range.start.character }, end: { line: range.end.line, character: range.end.character } } }),
  });
}

async function choosePermissionUi(): Promise<void> {
  const config = vscode.workspace.getConfiguration("acpls");
  const current = config.get<string>("permissions.ui", "notification");
  const picked = await vscode.window.showQuickPick(
    [
      { label: "Notification", description: "one button per option; several prompts can wait", value: "notification" },
      { label: "Quick pick", description: "every option in a list; one prompt at a time", value: "quickPick" },
    ].map((item) => ({ ...item, picked: item.value === current, detail: item.value === current ? "current" : undefined })),
    { title: "acpls: show the agent's permission prompts as…" },
  );
  if (picked !== undefined) await config.update("permissions.ui", picked.value, vscode.ConfigurationTarget.Global);
}

async function openTranscript(client: AcplsClient, panel: AgentPanel): Promise<void> {
  try {
    const { uri } = await client.command("acpls.openTranscript", panel.store.current === undefined ? {} : { sessionId: panel.store.current });
    await vscode.window.showTextDocument(vscode.Uri.parse(uri, true), { preview: true });
  } catch (error) {
    void vscode.window.showErrorMessage(`acpls: no transcript: ${String(error)}`);
  }
}

/** The status item's menu: the shown session's modes (as the panel's mode picker lists them), then
 * the common actions. */
async function statusMenu({ client, permissions, follow, status }: CommandParts): Promise<void> {
  const shown = status.modes;
  const modes = modePicks(shown?.modes);
  const actions: { label: string; command: string }[] = [
    ...(permissions.pending > 0 ? [{ label: `$(bell-dot) Show ${permissions.pending} waiting permission prompt(s)`, command: "notifications.showList" }] : []),
    { label: "$(comment-discussion) Open the agent panel", command: "acpls.ui.openPanel" },
    { label: follow.isEnabled ? "$(eye-closed) Stop following the agent" : "$(eye) Follow the agent", command: "acpls.ui.toggleFollow" },
    { label: "$(add) New session", command: "acpls.ui.newSession" },
    { label: "$(history) Agent sessions…", command: "acpls.ui.browseSessions" },
    { label: "$(repo-forked) Fork this session", command: "acpls.ui.forkSession" },
    { label: "$(close) Close this session", command: "acpls.ui.closeSession" },
    { label: "$(sign-out) Sign out of the agent", command: "acpls.ui.logout" },
    { label: "$(discard) Restore a checkpoint…", command: "acpls.ui.restoreCheckpoint" },
    { label: "$(stop-circle) Cancel the turn", command: "acpls.ui.cancel" },
    { label: "$(debug-restart) Restart acpls", command: "acpls.ui.restart" },
    { label: "$(shield) Choose how permission prompts are shown", command: "acpls.ui.choosePermissionUi" },
    { label: "$(output) Show the log", command: "acpls.ui.showLog" },
    { label: "$(pass) Check the agent", command: "acpls.ui.checkAgents" },
    { label: "$(hubot) Choose agent…", command: "acpls.ui.chooseAgent" },
  ];
  type Item = vscode.QuickPickItem & { command?: string; modeId?: string };
  const separator = (label: string): Item => ({ label, kind: vscode.QuickPickItemKind.Separator });
  const items: Item[] = [...(modes.length > 0 ? [separator("Mode"), ...modes, separator("Actions")] : []), ...actions];
  const picked = await vscode.window.showQuickPick(items, { title: "acpls", matchOnDetail: true });
  if (picked?.command !== undefined) await vscode.commands.executeCommand(picked.command);
  if (picked?.modeId !== undefined && shown !== undefined) {
    await client
      .command("acpls.setMode", { sessionId: shown.sessionId, modeId: picked.modeId })
      .catch((e: unknown) => vscode.window.showErrorMessage(`acpls: the mode was not changed: ${String(e)}`));
  }
}
