// Entry point: wires the parts together and registers the extension's own commands. The server's
// commands (acpls.prompt, acpls.keepHunk, …) are registered by vscode-languageclient under their own
// ids, so every UI command here is `acpls.ui.*`.

import { AuthController } from "./auth";
import { ConflictController } from "./conflicts";
import * as path from "node:path";
import * as vscode from "vscode";
import { MentionSource } from "./mentions";
import { checkAgents } from "./agentCheck";
import { chooseAgent } from "./agents";
import { pickCheckpoint } from "./checkpoints";
import { AcplsClient } from "./client";
import { FollowController } from "./follow";
import { AgentPanel } from "./panel";
import { SERVER_KEYS } from "./model/settings";
import { PermissionController, VirtualDocuments } from "./permissions";
import { QuestionController } from "./questions";
import { ReviewController } from "./review";
import { StatusController } from "./status";
import { TerminalController } from "./terminals";

/** Settings the server reads itself: sent with didChangeConfiguration. */
const SERVER_SECTIONS = [...new Set(SERVER_KEYS.map((key) => key.split(".")[0]))];
/** Settings that decide how the server is started: a change restarts it. */
const RESTART_SECTIONS = ["python", "server"];

export type Api = { client: AcplsClient; panel: AgentPanel; permissions: PermissionController };

/** The running client, so deactivate can wait for the server to shut down (it then ends the agent). */
let running: AcplsClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<Api> {
  const log = vscode.window.createOutputChannel("acpls", { log: true });
  const client = new AcplsClient(context, log);
  running = client;
  const docs = new VirtualDocuments();
  const terminals = new TerminalController(client);
  const follow = new FollowController(context, client);
  const permissions = new PermissionController(client, docs);
  const review = new ReviewController(client, docs);
  new ConflictController(client, docs);
  const status = new StatusController(client);
  const questions: QuestionController = new QuestionController(client, (): Promise<void> => panel.showQuestions());
  const mentions = new MentionSource(client, terminals);
  context.subscriptions.push(mentions);
  const panel: AgentPanel = new AgentPanel(context, client, terminals, docs, permissions, questions, mentions);
  status.onDidChangeAgent((params) => panel.agentStatusChanged(params));
  panel.onUsage((text) => status.setUsage(text));
  permissions.onDidChangePending((waiting) => status.setPendingPermissions(waiting.length));
  panel.onBusyChange((busy) => {
    status.setBusy(busy);
    if (!busy) follow.turnEnded();
  });
  context.subscriptions.push(log, client, docs, terminals, follow, permissions, questions, review, status, panel);

  const register = (id: string, run: (...args: unknown[]) => unknown): void => {
    context.subscriptions.push(vscode.commands.registerCommand(id, run));
  };
  register("acpls.ui.openPanel", () => panel.reveal());
  register("acpls.ui.restart", async () => {
    await client.restart();
    void vscode.window.showInformationMessage("acpls restarted.");
  });
  register("acpls.ui.showLog", () => log.show(true));
  register("acpls.ui.checkAgents", () => checkAgents(client, log));
  register("acpls.ui.chooseAgent", () => chooseAgent(client, log));
  register("acpls.ui.toggleFollow", () => follow.toggle());
  register("acpls.ui.newSession", () => panel.newSession());
  register("acpls.ui.cancel", () => panel.cancel());
  register("acpls.ui.browseSessions", () => panel.browseSessions());
  register("acpls.ui.forkSession", () => panel.fork().catch((e: unknown) => vscode.window.showErrorMessage(`acpls: fork failed: ${String(e)}`)));
  register("acpls.ui.closeSession", () => panel.closeSession().catch((e: unknown) => vscode.window.showErrorMessage(`acpls: close failed: ${String(e)}`)));
  const auth = new AuthController(context, client);
  register("acpls.ui.logout", async () => {
    try {
      await client.command("acpls.logout", {});
      await auth.forget();
      void vscode.window.showInformationMessage("acpls: signed out of the agent.");
    } catch (error) {
      void vscode.window.showErrorMessage(`acpls: sign-out failed: ${String(error)}`);
    }
  });
  register("acpls.ui.restoreCheckpoint", () => pickCheckpoint(client, panel));
  register("acpls.ui.prompt", async (text?: unknown) => {
    const prompt = typeof text === "string" ? text : await vscode.window.showInputBox({ title: "acpls: ask the agent", prompt: "Prompt" });
    if (prompt === undefined) return;
    await panel.reveal();
    await panel.prompt(prompt);
  });
  register("acpls.ui.askAboutSelection", async () => {
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
  });
  register("acpls.ui.choosePermissionUi", async () => {
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
  });
  register("acpls.ui.openTranscript", async () => {
    try {
      const { uri } = await client.command("acpls.openTranscript", panel.store.current === undefined ? {} : { sessionId: panel.store.current });
      await vscode.window.showTextDocument(vscode.Uri.parse(uri, true), { preview: true });
    } catch (error) {
      void vscode.window.showErrorMessage(`acpls: no transcript: ${String(error)}`);
    }
  });
  register("acpls.ui.statusMenu", async () => {
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
    const picked = await vscode.window.showQuickPick(actions, { title: "acpls" });
    if (picked !== undefined) await vscode.commands.executeCommand(picked.command);
  });

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (RESTART_SECTIONS.some((s) => event.affectsConfiguration(`acpls.${s}`))) {
        void client.restart();
      } else if (SERVER_SECTIONS.some((s) => event.affectsConfiguration(`acpls.${s}`))) {
        client.sendSettings();
      }
    }),
  );

  // The server starts with the window: follow-along, status and review are there before any prompt.
  client.start().catch(() => undefined);
  return { client, panel, permissions };
}

export function deactivate(): Promise<void> | undefined {
  const client = running;
  running = undefined;
  return client?.stop();
}
