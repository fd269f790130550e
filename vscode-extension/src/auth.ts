// Signing in with the agent's env_var and terminal auth methods (acpls/authEnv, acpls/runLogin;
// editors/protocol.md section 5.10). env_var values live in VS Code's SecretStorage, per agent.

import * as vscode from "vscode";
import type { AcplsClient } from "./client";
import { plan, secretKey } from "./model/authEnv";
import type { AuthEnvParams, AuthEnvResult, RunLoginParams, RunLoginResult } from "./protocol";

const KEYS = "acpls.auth.keys";

export class AuthController {
  constructor(
    private readonly context: vscode.ExtensionContext,
    client: AcplsClient,
  ) {
    client.onRequest("acpls/authEnv", (params) => this.authEnv(params));
    client.onRequest("acpls/runLogin", (params) => this.runLogin(params));
  }

  async authEnv(params: AuthEnvParams): Promise<AuthEnvResult> {
    const stored: Record<string, string | undefined> = {};
    for (const v of params.vars) stored[v.name] = await this.context.secrets.get(secretKey(params.agent, v.name));
    const { known, ask } = plan(params, stored);
    for (const v of ask) {
      const value = await vscode.window.showInputBox({
        title: `acpls: ${params.name}`,
        prompt: `${v.label ?? v.name}${params.link === undefined ? "" : ` (${params.link})`}`,
        password: v.secret !== false,
        ignoreFocusOut: true,
      });
      if (value === undefined) return null;
      if (value === "") continue;
      known[v.name] = value;
      await this.remember(secretKey(params.agent, v.name), value);
    }
    return { values: known };
  }

  private async remember(key: string, value: string): Promise<void> {
    await this.context.secrets.store(key, value);
    const keys = new Set(this.context.globalState.get<string[]>(KEYS, []));
    keys.add(key);
    await this.context.globalState.update(KEYS, [...keys]);
  }

  /** Forgets every value kept for a sign-in (after signing out). */
  async forget(): Promise<void> {
    for (const key of this.context.globalState.get<string[]>(KEYS, [])) await this.context.secrets.delete(key);
    await this.context.globalState.update(KEYS, []);
  }

  /** The agent's login command in a VS Code terminal; answered with its exit code when it ends. */
  runLogin(params: RunLoginParams): Promise<RunLoginResult> {
    const [shellPath, ...shellArgs] = params.command;
    if (shellPath === undefined) return Promise.resolve({ exitCode: null });
    const terminal = vscode.window.createTerminal({ name: `acpls: ${params.name}`, shellPath, shellArgs, cwd: params.cwd, env: params.env });
    terminal.show();
    return new Promise((resolve) => {
      const closed = vscode.window.onDidCloseTerminal((t) => {
        if (t !== terminal) return;
        closed.dispose();
        resolve({ exitCode: t.exitStatus?.code ?? null });
      });
    });
  }
}
