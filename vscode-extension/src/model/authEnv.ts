// Where VS Code keeps the values of an agent's env_var sign-in (pure: no vscode import): one
// SecretStorage key per agent and variable, and which of a method's variables still need asking.

import type { AuthEnvParams } from "../protocol";

export const SECRET_PREFIX = "acpls.auth";

export function secretKey(agent: string, variable: string): string {
  return `${SECRET_PREFIX}/${encodeURIComponent(agent)}/${encodeURIComponent(variable)}`;
}

/** The values known already (from `stored`) and the variables to ask the user for, in order. */
export function plan(params: AuthEnvParams, stored: Record<string, string | undefined>): { known: Record<string, string>; ask: AuthEnvParams["vars"] } {
  const known: Record<string, string> = {};
  const ask: AuthEnvParams["vars"] = [];
  for (const v of params.vars) {
    const value = stored[v.name];
    if (value !== undefined && value !== "") known[v.name] = value;
    else ask.push(v);
  }
  return { known, ask };
}
