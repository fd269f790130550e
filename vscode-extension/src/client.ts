// Starts the acpls server over stdio with vscode-languageclient, from the copy bundled in the .vsix
// (`python -m acpls` with PYTHONPATH=bundled/libs, on the Python src/python.ts finds or gets), and keeps it: start, stop and restart are
// serialized, settings go out as initializationOptions and didChangeConfiguration, and the
// handlers of the acpls/* messages (registered once, by the features) are attached to every client
// the extension starts. Incoming params are checked against protocol.ts before any handler sees them.

import * as fs from "node:fs";
import * as path from "node:path";
import * as readline from "node:readline";
import * as vscode from "vscode";
import {
  type CancellationToken,
  type ClientCapabilities,
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  type Executable,
  type FeatureState,
  LanguageClient,
  type LanguageClientOptions,
  RevealOutputChannelOn,
  State,
  type StaticFeature,
} from "vscode-languageclient/node";
import {
  COMMAND_RESULTS,
  type CommandArgs,
  type CommandId,
  type CommandResult,
  eachSessionUpdate,
  EXPERIMENTAL_CAPABILITY,
  parseServerMessage,
  ProtocolError,
  type ServerMethod,
  SERVER_MESSAGES,
} from "./protocol";
import { editorNodeEnv } from "./model/editorNode";
import { ServerLogParser } from "./model/serverLog";
import { type ServerKey, validateSettings } from "./model/settings";
import { bundleManifest, checkPlatform, checkServer, findPython, forgetServerCheck } from "./python";

type Params<M extends ServerMethod> = ReturnType<(typeof SERVER_MESSAGES)[M]>;
type NotificationHandler<M extends ServerMethod> = (params: Params<M>) => void;
type RequestHandler<M extends ServerMethod, R> = (params: Params<M>, token: CancellationToken) => Promise<R>;

/** Adds `capabilities.experimental.acpls` so the server speaks the custom protocol (section 2). */
class AcplsCapability implements StaticFeature {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    capabilities.experimental = { ...(capabilities.experimental ?? {}), acpls: EXPERIMENTAL_CAPABILITY };
  }
  initialize(): void {}
  getState(): FeatureState {
    return { kind: "static" };
  }
  clear(): void {}
}

export type ClientState = "stopped" | "starting" | "running";

export function readServerSettings(log: vscode.LogOutputChannel): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration("acpls");
  const { settings, problems } = validateSettings((key: ServerKey) => {
    const inspected = config.inspect(key);
    // Only values the user set are sent: the server's own defaults apply to the rest.
    return inspected?.workspaceFolderValue ?? inspected?.workspaceValue ?? inspected?.globalValue;
  });
  for (const problem of problems) {
    log.warn(problem);
    void vscode.window.showWarningMessage(problem);
  }
  return settings;
}

export class AcplsClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly notificationHandlers = new Map<string, (params: unknown) => void>();
  private readonly requestHandlers = new Map<string, (params: unknown, token: CancellationToken) => Promise<unknown>>();
  private readonly stateEmitter = new vscode.EventEmitter<ClientState>();
  readonly onDidChangeState = this.stateEmitter.event;
  private currentState: ClientState = "stopped";

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly log: vscode.LogOutputChannel,
  ) {}

  get state(): ClientState {
    return this.currentState;
  }

  onNotification<M extends ServerMethod>(method: M, handler: NotificationHandler<M>): void {
    this.notificationHandlers.set(method, (raw) => handler(parseServerMessage(method, raw)));
  }

  onRequest<M extends ServerMethod, R>(method: M, handler: RequestHandler<M, R>): void {
    this.requestHandlers.set(method, (raw, token) => handler(parseServerMessage(method, raw), token));
  }

  /** Runs one of the server's commands (protocol.md section 3) and checks its result. */
  async command<C extends CommandId>(command: C, args: CommandArgs<C>, token?: CancellationToken): Promise<CommandResult<C>> {
    const client = await this.ready();
    const result: unknown = await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [args] }, token);
    const check = (COMMAND_RESULTS as Partial<Record<CommandId, (value: unknown, path: string) => unknown>>)[command];
    return (check === undefined ? result : check(result, `${command} result`)) as CommandResult<C>;
  }

  start(): Promise<void> {
    return this.serialized(() => this.doStart());
  }

  stop(): Promise<void> {
    return this.serialized(() => this.doStop());
  }

  /** Stops and starts the server; several restarts asked at once run one after the other. */
  restart(): Promise<void> {
    return this.serialized(async () => {
      await this.doStop();
      await this.doStart();
    });
  }

  /** Sends the current settings to a running server. */
  sendSettings(): void {
    const client = this.client;
    if (client === undefined || !client.isRunning()) return;
    void client.sendNotification(DidChangeConfigurationNotification.type, { settings: { acpls: readServerSettings(this.log) } });
  }

  private async ready(): Promise<LanguageClient> {
    await this.queue;
    if (this.client === undefined || this.currentState === "stopped") await this.start();
    const client = this.client;
    if (client === undefined || !client.isRunning()) throw new Error("the acpls server is not running (see the acpls output)");
    return client;
  }

  private serialized(step: () => Promise<void>): Promise<void> {
    const next = this.queue.then(step, step);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private setState(state: ClientState): void {
    this.currentState = state;
    this.stateEmitter.fire(state);
  }

  private async serverExecutable(): Promise<Executable> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const config = vscode.workspace.getConfiguration("acpls", folder);
    const override = config.get<string[]>("server.command", []).filter((part) => part !== "");
    const cwd = folder?.scheme === "file" ? folder.fsPath : undefined;
    // Agents whose PATH has no node run on VS Code's own (acpls: services/node_runtime.py).
    const node = editorNodeEnv(process.execPath, this.context.asAbsolutePath(path.join("bundled", "npm")), fs.existsSync);
    if (override.length > 0) {
      const [command, ...args] = override as [string, ...string[]];
      return { command, args, options: { cwd, env: { ...process.env, ...node, PYTHONUNBUFFERED: "1" } } };
    }
    const manifest = bundleManifest(this.context);
    checkPlatform(this.context, manifest);
    const { python } = await findPython(this.context, folder, this.log, manifest);
    const bundled = this.context.asAbsolutePath(path.join("bundled", "libs"));
    const pythonPath = [bundled, process.env.PYTHONPATH].filter((p) => p !== undefined && p !== "").join(path.delimiter);
    const env = { ...process.env, ...node, PYTHONPATH: pythonPath, PYTHONUNBUFFERED: "1", PYTHONNOUSERSITE: "1" };
    // The whole server imported once before it starts: a failure says its real cause and fix.
    await checkServer(python, env, manifest, this.log);
    return { command: python, args: ["-m", "acpls"], options: { cwd, env } };
  }

  private async doStart(): Promise<void> {
    if (this.client !== undefined) return;
    this.setState("starting");
    let executable: Executable;
    try {
      executable = await this.serverExecutable();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.log.error(message);
      this.setState("stopped");
      void vscode.window.showErrorMessage(`acpls did not start: ${message}`);
      throw error;
    }
    this.log.info(`starting acpls: ${executable.command} ${(executable.args ?? []).join(" ")}`);
    const clientOptions: LanguageClientOptions = {
      // Every file: the server reads unsaved buffers for the agent and pauses follow on user edits.
      documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
      outputChannel: this.log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: readServerSettings(this.log),
      stdioOptions: {
        stdout: (input, channel) => readline.createInterface({ input, terminal: false }).on("line", (line) => channel.info(line)),
        // The server's log lines at their own levels (languageclient would log all of stderr as errors).
        stderr: (input, channel) => {
          const parser = new ServerLogParser();
          readline.createInterface({ input, terminal: false }).on("line", (line) => {
            const { level, text } = parser.parse(line);
            channel[level](`[server] ${text}`);
          });
        },
      },
    };
    const client = new LanguageClient("acpls", "acpls", { run: executable, debug: executable }, clientOptions);
    client.registerFeature(new AcplsCapability());
    for (const [method, handler] of this.notificationHandlers) {
      client.onNotification(method, (params: unknown) => this.guard(method, () => handler(params)));
    }
    // A batch (protocol.md 5.4.1, declared in EXPERIMENTAL_CAPABILITY) goes to the
    // acpls/sessionUpdate handler one update after the other, as if each had come alone.
    const single = this.notificationHandlers.get("acpls/sessionUpdate");
    if (single !== undefined) {
      client.onNotification("acpls/sessionUpdates", (params: unknown) =>
        this.guard("acpls/sessionUpdates", () => {
          for (const one of eachSessionUpdate(parseServerMessage("acpls/sessionUpdates", params))) {
            this.guard("acpls/sessionUpdate", () => single(one));
          }
        }),
      );
    }
    for (const [method, handler] of this.requestHandlers) {
      client.onRequest(method, (params: unknown, token: CancellationToken) => handler(params, token));
    }
    client.onDidChangeState((event) => {
      if (event.newState === State.Stopped && this.client === client) this.setState("stopped");
      else if (event.newState === State.Running) this.setState("running");
    });
    this.client = client;
    try {
      await client.start();
      this.setState("running");
    } catch (error) {
      this.log.error(`acpls did not start: ${String(error)}`);
      this.client = undefined;
      this.setState("stopped");
      // Its self-check passed, so this is not an import: check again at the next start anyway.
      forgetServerCheck(executable.command, executable.options?.env ?? {});
      void vscode.window.showErrorMessage(
        `acpls did not start with ${executable.command}: ${error instanceof Error ? error.message : String(error)}. ` +
          "The acpls output (Output: acpls) has the server's log.",
      );
      throw error;
    }
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client === undefined) return;
    try {
      if (client.needsStop()) await client.stop(5000);
    } catch (error) {
      this.log.warn(`acpls did not stop cleanly: ${String(error)}`);
    }
    await client.dispose().catch(() => undefined);
    this.setState("stopped");
  }

  private guard(method: string, run: () => void): void {
    try {
      run();
    } catch (error) {
      if (error instanceof ProtocolError) this.log.error(`dropped a malformed ${method}: ${error.message}`);
      else this.log.error(`handling ${method} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
  }

  dispose(): void {
    void this.stop();
    this.stateEmitter.dispose();
  }
}
