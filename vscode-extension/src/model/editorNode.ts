// The Node.js VS Code runs on, offered to acpls for agents whose PATH has none (pure: no vscode
// import). acpls uses it only where the agent's PATH has no `node` and the `acpls[node]` extra is
// absent (server/acpls/services/node_runtime.py); VS Code ships no npm, so the .vsix carries npm's
// CLI in `bundled/npm` for `npx`.

/** The variables acpls reads: VS Code's own executable (an Electron binary, which acpls runs with
 * ELECTRON_RUN_AS_NODE=1; a plain `node` under code-server) and the folder of npm's CLI when the
 * package has one. */
export function editorNodeEnv(execPath: string, bundledNpm: string, hasFile: (path: string) => boolean): Record<string, string> {
  const env: Record<string, string> = { ACPLS_EDITOR_NODE: execPath };
  if (hasFile(`${bundledNpm}/bin/npx-cli.js`)) env.ACPLS_EDITOR_NPM = bundledNpm;
  return env;
}
