// Entry point: activate() only wires: it builds the parts, connects their events, and registers the
// extension's own commands (their bodies are commands.ts). The server's commands (acpls.prompt,
// acpls.keepHunk, …) are registered by vscode-languageclient under their own ids, so every UI
// command is `acpls.ui.*`.

import { AuthController } from "./auth";
import { ConflictController } from "./conflicts";
import * as vscode from "vscode";
import { MentionSource } from "./mentions";
import { AcplsClient } from "./client";
import { FollowController } from "./follow";
import { AgentPanel } from "./panel";
import { SERVER_KEYS } from "./model/settings";
import { uiCommands } from "./commands";
import { PermissionController } from "./permissions";
import { QuestionController } from "./questions";
import { ReviewController } from "./review";
import { StatusController } from "./status";
import { TerminalController } from "./terminals";
import { VirtualDocuments } from "./virtualDocuments";

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
  panel.onShownSession((session, agent) => status.showSession(session, agent));
  permissions.onDidChangePending((waiting) => status.setPendingPermissions(waiting.length));
  panel.onBusyChange((busy) => {
    status.setBusy(busy);
    if (!busy) follow.turnEnded();
  });
  context.subscriptions.push(log, client, docs, terminals, follow, permissions, questions, review, status, panel);

  const auth = new AuthController(context, client);
  for (const [id, run] of Object.entries(uiCommands({ client, log, panel, follow, permissions, auth, status }))) {
    context.subscriptions.push(vscode.commands.registerCommand(id, run));
  }

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
