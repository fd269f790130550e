// Questions from the agent (acpls/elicitation): a form in the agent panel, and a notification that
// opens it (or, for a URL question, opens the page). Several questions may wait at once; each is
// answered by whichever comes first: the panel's buttons, the notification's buttons, or acpls
// withdrawing it ($/cancelRequest: a cancelled turn, the agent withdrew it, its URL flow finished).

import * as vscode from "vscode";
import type { CancellationToken } from "vscode-languageclient/node";
import type { AcplsClient } from "./client";
import { contentFrom, type FieldValues, type FormField, formFields, isWebUrl, questionSummary } from "./model/question";
import type { ElicitationAction, ElicitationParams, ElicitationResult } from "./protocol";

/** A question as the agent panel shows it. */
export type WaitingQuestion = { key: string; params: ElicitationParams; fields: FormField[] };

const ANSWER = "Answer…";
const OPEN = "Open page";
const DONE = "Done";
const DECLINE = "Decline";

export class QuestionController implements vscode.Disposable {
  private readonly waiting = new Map<string, { question: WaitingQuestion; resolve: (result: ElicitationResult) => void }>();
  private counter = 0;
  private readonly pendingEmitter = new vscode.EventEmitter<WaitingQuestion[]>();
  /** Fires with the questions waiting for an answer whenever that set changes. */
  readonly onDidChangePending = this.pendingEmitter.event;

  constructor(
    private readonly client: AcplsClient,
    /** Shows the agent panel (where the form is). */
    private readonly reveal: () => Thenable<unknown>,
  ) {
    client.onRequest("acpls/elicitation", (params, token) => this.ask(params, token));
    client.onNotification("acpls/elicitationComplete", (params) => {
      this.client.log.info(`question ${params.elicitationId}: completed by the agent`);
    });
  }

  ask(params: ElicitationParams, token: CancellationToken): Promise<ElicitationResult> {
    this.counter += 1;
    const key = `q${this.counter}`;
    const question: WaitingQuestion = { key, params, fields: params.mode === "form" ? formFields(params) : [] };
    return new Promise<ElicitationResult>((resolve) => {
      const done = (result: ElicitationResult): void => {
        if (!this.waiting.has(key)) return;
        this.waiting.delete(key);
        listener.dispose();
        this.client.log.info(`question "${questionSummary(params)}": ${result === null ? "withdrawn" : result.action}`);
        this.firePending();
        resolve(result);
      };
      const listener = token.onCancellationRequested(() => done(null));
      this.waiting.set(key, { question, resolve: done });
      this.firePending();
      this.client.log.info(`question asked (${params.mode}): ${questionSummary(params)}`);
      void this.notify(question);
    });
  }

  /** A non-modal notification: opens the form, or the page of a URL question. */
  private async notify(question: WaitingQuestion): Promise<void> {
    const { params, key } = question;
    const url = params.mode === "url" && isWebUrl(params.url) ? params.url : undefined;
    const buttons = params.mode === "url" ? [...(url !== undefined ? [OPEN] : []), DONE, DECLINE] : [ANSWER, DECLINE];
    const text = params.mode === "url" ? `acpls: ${params.message} (${params.url ?? ""})` : `acpls: the agent asks: ${params.message}`;
    for (;;) {
      const picked = await vscode.window.showInformationMessage(text, ...buttons);
      if (!this.waiting.has(key)) return; // answered elsewhere, or withdrawn
      if (picked === ANSWER) {
        await this.reveal();
        return;
      }
      if (picked === OPEN && url !== undefined) {
        await vscode.env.openExternal(vscode.Uri.parse(url, true));
        continue; // then "Done" (here or in the panel)
      }
      if (picked === DONE) this.answer(key, "accept");
      else if (picked === DECLINE) this.answer(key, "decline");
      return; // dismissed: the panel still has the question
    }
  }

  /** Answers a waiting question; false when it is no longer waiting. */
  answer(key: string, action: ElicitationAction, values?: FieldValues): boolean {
    const waiting = this.waiting.get(key);
    if (waiting === undefined) return false;
    const { question } = waiting;
    if (action === "accept" && question.params.mode === "form") {
      waiting.resolve({ action, content: contentFrom(question.fields, values ?? {}) });
    } else {
      waiting.resolve({ action });
    }
    return true;
  }

  /** Opens the page of a waiting URL question in the browser (web pages only). */
  async openUrl(key: string): Promise<boolean> {
    const url = this.waiting.get(key)?.question.params.url;
    if (!isWebUrl(url) || url === undefined) return false;
    return vscode.env.openExternal(vscode.Uri.parse(url, true));
  }

  waitingQuestions(): WaitingQuestion[] {
    return [...this.waiting.values()].map((w) => w.question);
  }

  get pending(): number {
    return this.waiting.size;
  }

  private firePending(): void {
    this.pendingEmitter.fire(this.waitingQuestions());
  }

  dispose(): void {
    for (const { resolve } of [...this.waiting.values()]) resolve(null);
    this.pendingEmitter.dispose();
  }
}
