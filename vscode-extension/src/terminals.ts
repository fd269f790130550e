// Agent terminals (acpls/terminalUpdate, acpls/terminalOutput): each one is a VS Code terminal
// backed by a Pseudoterminal, so ANSI colours and progress bars render as in a real terminal. It is
// named after its command (renamed when the command becomes known), `reset` clears it, and its exit
// code or signal is printed when it ends. Output that arrives before VS Code opens the terminal is
// kept (bounded) and written on open, once VS Code has given the terminal its dimensions; output is
// written in slices, one per timer tick (model/terminal.ts), so the workbench stays responsive; the
// slices shrink and spread out while the user types (Pacer: keys in the agent panel's prompt, typing
// in an editor).

import * as vscode from "vscode";
import type { AcplsClient } from "./client";
import { Pacer, TerminalText, terminalName } from "./model/terminal";

/** The exit line waits this long without output: output of the same server flush goes above it. */
const EXIT_SETTLE_MS = 50;
/** A terminal VS Code opened without dimensions gets them when shown; past this, output goes anyway. */
const DIMENSIONS_WAIT_MS = 1000;
import type { TerminalOutputParams, TerminalUpdateParams } from "./protocol";

class AgentTerminal implements vscode.Pseudoterminal {
  private readonly writeEmitter = new vscode.EventEmitter<string>();
  private readonly nameEmitter = new vscode.EventEmitter<string>();
  readonly onDidWrite = this.writeEmitter.event;
  readonly onDidChangeName = this.nameEmitter.event;
  readonly text: TerminalText;
  terminal: vscode.Terminal | undefined;
  command: string | undefined;

  private sizeTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly key: string,
    readonly terminalId: string,
    limit: number,
    scrollbackLines: number,
    pacer: Pacer,
  ) {
    this.text = new TerminalText(
      (data) => {
        this.writeEmitter.fire(data);
        pacer.wrote(data.length);
      },
      {
        limit,
        scrollbackLines,
        slice: () => pacer.slice(),
        tick: (work) => pacer.tick(work),
        settle: (work) => setTimeout(work, EXIT_SETTLE_MS),
      },
    );
  }

  open(initialDimensions: vscode.TerminalDimensions | undefined): void {
    this.text.open(initialDimensions !== undefined);
    if (initialDimensions === undefined) this.sizeTimer = setTimeout(() => this.text.resized(), DIMENSIONS_WAIT_MS);
  }

  setDimensions(): void {
    this.clearSizeTimer();
    this.text.resized();
  }

  private clearSizeTimer(): void {
    if (this.sizeTimer !== undefined) clearTimeout(this.sizeTimer);
    this.sizeTimer = undefined;
  }

  close(): void {
    // The user closed the terminal: keep collecting, a new one opens on the next show.
    this.clearSizeTimer();
    this.text.close();
    this.terminal = undefined;
  }

  rename(command: string | undefined): void {
    if (command === this.command) return;
    this.command = command;
    this.nameEmitter.fire(terminalName(command, this.terminalId));
  }

  dispose(): void {
    this.clearSizeTimer();
    this.text.close();
    this.writeEmitter.dispose();
    this.nameEmitter.dispose();
  }
}

export class TerminalController implements vscode.Disposable {
  private readonly terminals = new Map<string, AgentTerminal>();
  private readonly disposables: vscode.Disposable[] = [];
  /** Shared by every agent terminal: one browser main thread draws them all. */
  readonly pacer = new Pacer();

  constructor(client: AcplsClient) {
    client.onNotification("acpls/terminalUpdate", (params) => this.update(params));
    client.onNotification("acpls/terminalOutput", (params) => this.output(params));
    this.disposables.push(
      vscode.window.onDidCloseTerminal((closed) => {
        for (const agent of this.terminals.values()) if (agent.terminal === closed) agent.close();
      }),
      // Typing in an editor: a change to a text document the user edits, or the cursor moved by a key.
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (event.contentChanges.length > 0 && (event.document.uri.scheme === "file" || event.document.uri.scheme === "untitled")) this.pacer.key();
      }),
      vscode.window.onDidChangeTextEditorSelection((event) => {
        if (event.kind === vscode.TextEditorSelectionChangeKind.Keyboard) this.pacer.key();
      }),
    );
  }

  /** Keys arrive elsewhere (the agent panel's prompt): output slows down to let them through. */
  keys(): void {
    this.pacer.key();
  }

  private get(sessionId: string, terminalId: string): AgentTerminal {
    const key = `${sessionId}\u0000${terminalId}`;
    let agent = this.terminals.get(key);
    if (agent === undefined) {
      const limit = vscode.workspace.getConfiguration("acpls").get<number>("terminal.scrollbackBytes", 4 * 1024 * 1024);
      const scrollback = vscode.workspace.getConfiguration("terminal.integrated").get<number>("scrollback", 1000);
      agent = new AgentTerminal(key, terminalId, limit, scrollback, this.pacer);
      this.terminals.set(key, agent);
    }
    return agent;
  }

  /** Creates (or re-creates) the VS Code terminal of an agent terminal, without taking focus. */
  private ensureShown(agent: AgentTerminal, focus: boolean): vscode.Terminal {
    if (agent.terminal === undefined) {
      agent.terminal = vscode.window.createTerminal({
        name: terminalName(agent.command, agent.terminalId),
        pty: agent,
        iconPath: new vscode.ThemeIcon("hubot"),
        isTransient: true,
      });
    }
    agent.terminal.show(!focus);
    return agent.terminal;
  }

  private update(params: TerminalUpdateParams): void {
    const agent = this.get(params.sessionId, params.terminalId);
    agent.rename(params.command);
    const fresh = agent.terminal === undefined;
    if (fresh && params.command !== undefined) this.ensureShown(agent, false);
    if (params.exitStatus !== undefined) agent.text.exited(params.exitStatus.exitCode, params.exitStatus.signal);
  }

  private output(params: TerminalOutputParams): void {
    const agent = this.get(params.sessionId, params.terminalId);
    agent.text.output(params.text, params.reset === true, params.dropped ?? 0);
    if (agent.terminal === undefined) this.ensureShown(agent, false);
  }

  /** Shows an agent terminal by its id (from a tool-call card); false when it is unknown. */
  show(terminalId: string, sessionId?: string): boolean {
    for (const agent of this.terminals.values()) {
      if (agent.terminalId === terminalId && (sessionId === undefined || agent.key.startsWith(`${sessionId}\u0000`))) {
        this.ensureShown(agent, true);
        return true;
      }
    }
    return false;
  }

  /** The agent terminals of a session (for `@terminal` mentions), in the order they started. */
  list(sessionId: string | undefined): { terminalId: string; command?: string }[] {
    const out: { terminalId: string; command?: string }[] = [];
    for (const agent of this.terminals.values()) {
      if (sessionId !== undefined && !agent.key.startsWith(`${sessionId}\u0000`)) continue;
      out.push({ terminalId: agent.terminalId, ...(agent.command !== undefined ? { command: agent.command } : {}) });
    }
    return out;
  }

  dispose(): void {
    for (const agent of this.terminals.values()) {
      agent.terminal?.dispose();
      agent.dispose();
    }
    this.terminals.clear();
    for (const d of this.disposables) d.dispose();
  }
}
