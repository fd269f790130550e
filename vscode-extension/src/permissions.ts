// Permission prompts (acpls/requestPermission): every option the agent sent, labelled by kind, in a
// non-modal notification or a quick pick (acpls.permissions.ui). When the request carries a preview,
// "Show diff" opens the proposed text in VS Code's diff editor (a read-only virtual document against
// the current file) and "Preview edit" opens the Refactor Preview through applyEdit with
// isRefactoring; the prompt comes back afterwards. Several prompts may be pending at once.

import * as path from "node:path";
import * as vscode from "vscode";
import type { CancellationToken } from "vscode-languageclient/node";
import type { AcplsClient } from "./client";
import {
  applyTextEdits,
  kindLabel,
  optionIcon,
  optionLabel,
  permissionMessage,
  previewFiles,
  recordsRule,
  rememberText,
  toolCallDiffs,
} from "./model/permission";
import { permissionUi } from "./model/settings";
import type { PermissionOption, RequestPermissionParams, RequestPermissionResult } from "./protocol";
import type { VirtualDocuments } from "./virtualDocuments";

const SHOW_DIFF = "Show diff";
const PREVIEW_EDIT = "Preview edit";
/** The one notification button that leads to both, so the option buttons keep room for their names. */
const DIFF_MENU = "Diff…";

async function currentText(uri: vscode.Uri): Promise<string | undefined> {
  try {
    return (await vscode.workspace.openTextDocument(uri)).getText();
  } catch {
    return undefined; // a file that does not exist yet
  }
}

/** Opens one diff editor per file the request would change. Returns how many were opened. */
export async function showProposedDiffs(params: RequestPermissionParams, docs: VirtualDocuments): Promise<number> {
  let opened = 0;
  const title = (name: string): string => `${name} ↔ proposed by the agent`;
  for (const file of previewFiles(params.preview)) {
    const uri = vscode.Uri.parse(file.uri, true);
    const name = path.posix.basename(uri.path);
    const current = await currentText(uri);
    if (file.op === "edit") {
      const proposed = docs.add(name, applyTextEdits(current ?? "", file.edits), "proposed");
      const left = current === undefined ? docs.add(name, "", "new file") : uri;
      await vscode.commands.executeCommand("vscode.diff", left, proposed, title(name), { preview: true, preserveFocus: false });
      opened += 1;
    } else if (file.op === "delete" && current !== undefined) {
      await vscode.commands.executeCommand("vscode.diff", uri, docs.add(name, "", "deleted"), title(name), { preview: true });
      opened += 1;
    }
  }
  if (opened > 0) return opened;
  // No preview (or only resource operations): fall back to the tool call's own v1 diffs.
  for (const diff of toolCallDiffs(params.toolCall)) {
    const name = path.basename(diff.path);
    const uri = vscode.Uri.file(diff.path);
    const current = await currentText(uri);
    const left = current !== undefined && current === diff.oldText ? uri : docs.add(name, diff.oldText, "before");
    await vscode.commands.executeCommand("vscode.diff", left, docs.add(name, diff.newText, "proposed"), title(name), { preview: true });
    opened += 1;
  }
  return opened;
}

/** The preview as a VS Code WorkspaceEdit whose every change needs confirmation. */
export function previewWorkspaceEdit(params: RequestPermissionParams): vscode.WorkspaceEdit {
  const edit = new vscode.WorkspaceEdit();
  const metadata: vscode.WorkspaceEditEntryMetadata = {
    needsConfirmation: true,
    label: params.title ?? params.toolCall.title ?? "Proposed by the agent",
    description: "acpls",
  };
  for (const file of previewFiles(params.preview)) {
    const uri = vscode.Uri.parse(file.uri, true);
    if (file.op === "create") edit.createFile(uri, { ignoreIfExists: true }, metadata);
    else if (file.op === "delete") edit.deleteFile(uri, { ignoreIfNotExists: true }, metadata);
    else if (file.op === "rename") edit.renameFile(uri, vscode.Uri.parse(file.newUri, true), { ignoreIfExists: true }, metadata);
    else {
      for (const e of file.edits) {
        const range = new vscode.Range(e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character);
        edit.replace(uri, range, e.newText, metadata);
      }
    }
  }
  return edit;
}

type Choice = { option: PermissionOption } | { extra: typeof SHOW_DIFF | typeof PREVIEW_EDIT; shown?: boolean } | undefined;

/** A prompt waiting for an answer, as the agent panel shows it (with its own buttons). */
export type WaitingPrompt = { key: string; params: RequestPermissionParams };

export class PermissionController implements vscode.Disposable {
  /** Quick picks show one at a time; notifications stack by themselves. */
  private quickPickQueue: Promise<unknown> = Promise.resolve();
  private readonly waiting = new Map<string, { params: RequestPermissionParams; answer: (optionId: string) => void }>();
  private counter = 0;
  /** The latest permission request of each tool call (bounded), so its card can show the diff later. */
  private readonly requests = new Map<string, RequestPermissionParams>();
  private readonly pendingEmitter = new vscode.EventEmitter<WaitingPrompt[]>();
  /** Fires with the prompts waiting for an answer whenever that set changes. */
  readonly onDidChangePending = this.pendingEmitter.event;

  constructor(
    private readonly client: AcplsClient,
    private readonly docs: VirtualDocuments,
  ) {
    client.onRequest("acpls/requestPermission", (params, token) => this.ask(params, token));
  }

  /**
   * Asks the user. The prompt is answered by whichever comes first: the notification or quick pick,
   * or the buttons the agent panel shows for it (then the quick pick closes; a notification cannot be
   * closed by an extension, and a later click on it is ignored).
   */
  async ask(params: RequestPermissionParams, token: CancellationToken): Promise<RequestPermissionResult> {
    this.counter += 1;
    const key = `p${this.counter}`;
    this.requests.delete(params.toolCall.toolCallId);
    this.requests.set(params.toolCall.toolCallId, params);
    if (this.requests.size > 100) this.requests.delete(this.requests.keys().next().value ?? "");
    const source = new vscode.CancellationTokenSource();
    const link = token.onCancellationRequested(() => source.cancel());
    const fromPanel = new Promise<RequestPermissionResult>((resolve) => {
      this.waiting.set(key, {
        params,
        answer: (optionId) => {
          resolve({ optionId });
          source.cancel();
        },
      });
    });
    this.firePending();
    try {
      const answer = await Promise.race([this.loop(params, source.token), fromPanel]);
      const chosen = answer === null ? "dismissed" : params.options.find((o) => o.optionId === answer.optionId)?.name;
      this.client.log.info(`permission "${params.title ?? params.toolCall.title ?? params.toolCall.toolCallId}": ${chosen}`);
      return answer;
    } finally {
      this.waiting.delete(key);
      link.dispose();
      source.cancel();
      source.dispose();
      this.firePending();
    }
  }

  /** Answers a waiting prompt from the agent panel; false when it is no longer waiting. */
  answer(key: string, optionId: string): boolean {
    const waiting = this.waiting.get(key);
    if (waiting === undefined || !waiting.params.options.some((o) => o.optionId === optionId)) return false;
    waiting.answer(optionId);
    return true;
  }

  get pending(): number {
    return this.waiting.size;
  }

  /** The last permission request made for a tool call, if any (it carries the diff preview). */
  requestFor(toolCallId: string): RequestPermissionParams | undefined {
    return this.requests.get(toolCallId);
  }

  waitingPrompts(): WaitingPrompt[] {
    return [...this.waiting].map(([key, { params }]) => ({ key, params }));
  }

  private firePending(): void {
    this.pendingEmitter.fire(this.waitingPrompts());
  }

  private async loop(params: RequestPermissionParams, token: CancellationToken): Promise<RequestPermissionResult> {
    const hasDiff = previewFiles(params.preview).length > 0 || toolCallDiffs(params.toolCall).length > 0;
    const canPreview = previewFiles(params.preview).length > 0;
    const extras = [...(hasDiff ? [SHOW_DIFF] : []), ...(canPreview ? [PREVIEW_EDIT] : [])] as (typeof SHOW_DIFF | typeof PREVIEW_EDIT)[];
    for (;;) {
      if (token.isCancellationRequested) return null;
      const ui = permissionUi(vscode.workspace.getConfiguration("acpls").get("permissions.ui"));
      this.client.log.info(`permission asked (${ui}): ${permissionMessage(params)}`);
      const choice = await raceCancellation(ui === "quickPick" ? this.quickPick(params, extras, token) : this.notification(params, extras), token);
      if (choice === undefined || token.isCancellationRequested) return null;
      if ("option" in choice) return { optionId: choice.option.optionId };
      if (choice.shown === false) continue; // the "Diff…" menu was dismissed: ask again
      if (choice.extra === SHOW_DIFF) await showProposedDiffs(params, this.docs);
      else await vscode.workspace.applyEdit(previewWorkspaceEdit(params), { isRefactoring: true });
    }
  }

  private async notification(params: RequestPermissionParams, extras: (typeof SHOW_DIFF | typeof PREVIEW_EDIT)[]): Promise<Choice> {
    type Item = vscode.MessageItem & { choice?: Choice };
    const items: Item[] = params.options.map((option) => ({ title: optionLabel(option), choice: { option } }));
    if (extras.length > 0) items.push({ title: DIFF_MENU });
    const picked = await vscode.window.showInformationMessage(`acpls: ${permissionMessage(params)}`, ...items);
    if (picked === undefined || picked.choice !== undefined) return picked?.choice;
    // "Diff…": pick how to see the change; the prompt is shown again afterwards either way.
    const how = await vscode.window.showQuickPick(
      extras.map((extra) => ({
        label: extra === SHOW_DIFF ? `$(diff) ${SHOW_DIFF}` : `$(eye) ${PREVIEW_EDIT}`,
        description: extra === SHOW_DIFF ? "the proposed text against the current file" : "VS Code's Refactor Preview",
        extra,
      })),
      { title: "acpls: see the proposed change" },
    );
    return { extra: how?.extra ?? SHOW_DIFF, shown: how !== undefined };
  }

  private quickPick(
    params: RequestPermissionParams,
    extras: (typeof SHOW_DIFF | typeof PREVIEW_EDIT)[],
    token: CancellationToken,
  ): Promise<Choice> {
    const run = async (): Promise<Choice> => {
      if (token.isCancellationRequested) return undefined;
      type Item = vscode.QuickPickItem & { choice?: Choice };
      const items: Item[] = [
        ...params.options.map((option) => ({
          label: `$(${optionIcon(option.kind)}) ${option.name}`,
          description: kindLabel(option.kind),
          detail: recordsRule(option) ? rememberText(params) : undefined,
          choice: { option } as Choice,
        })),
      ];
      if (extras.length > 0) items.push({ label: "", kind: vscode.QuickPickItemKind.Separator });
      for (const extra of extras) items.push({ label: `$(${extra === SHOW_DIFF ? "diff" : "eye"}) ${extra}`, choice: { extra } });
      const pick = vscode.window.createQuickPick<Item>();
      pick.title = `acpls: ${permissionMessage(params)}`;
      pick.placeholder = "The agent asks for permission";
      pick.items = items;
      pick.ignoreFocusOut = true;
      return new Promise<Choice>((resolve) => {
        let result: Choice;
        const cancel = token.onCancellationRequested(() => pick.hide());
        pick.onDidAccept(() => {
          result = pick.selectedItems[0]?.choice;
          pick.hide();
        });
        pick.onDidHide(() => {
          cancel.dispose();
          pick.dispose();
          resolve(result);
        });
        pick.show();
      });
    };
    const next = this.quickPickQueue.then(run, run);
    this.quickPickQueue = next.catch(() => undefined);
    return next;
  }

  dispose(): void {
    this.pendingEmitter.dispose();
  }
}

/** Resolves undefined as soon as the request is cancelled (a notification cannot be closed). */
function raceCancellation<T>(promise: Promise<T>, token: CancellationToken): Promise<T | undefined> {
  if (token.isCancellationRequested) return Promise.resolve(undefined);
  return new Promise<T | undefined>((resolve, reject) => {
    const listener = token.onCancellationRequested(() => {
      listener.dispose();
      resolve(undefined);
    });
    promise.then(
      (value) => {
        listener.dispose();
        resolve(value);
      },
      (error: unknown) => {
        listener.dispose();
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
