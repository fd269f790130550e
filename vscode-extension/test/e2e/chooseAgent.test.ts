// "acpls: Choose agent…" in a real VS Code (code-server, the built .vsix; protocol.md section 12),
// offline: the fixture ACP registry of tests/registry is served on 127.0.0.1 by
// tests/registry/serve.py (registry.json, the agents' archives, an icon). The quick pick fetches the
// registry again when asked, shows each agent's name, version, id, description, icon, kind and
// whether it is installed; choosing the binary agent `tar-agent` has acpls download, check and
// unpack it, and sets `acpls.agent`; a new session then runs on it (the scripted agent inside the
// archive answers); picked again, it shows installed, current, and the sign-in method it offered.
// The `acpls.agents` setting's agent ("second", a scripted agent) is offered by "New session with
// another agent…" and runs its session there. Screenshots go to test-artifacts/vscode/choose-agent/.

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe } from "node:test";
import { agentMessages, readEnv, scriptedAgent, stepper, until, VsCode, workbenchSettings } from "./harness";

const env = readEnv();
const vscode = new VsCode({ ...env, artifacts: join(env.artifacts, "choose-agent") });
const step = stepper(vscode);
const agentLog = join(vscode.root, "tar-agent.jsonl");
const dataHome = join(vscode.root, "xdg-data");
const secondLog = join(vscode.root, "second.jsonl");
const secondScript = {
  protocol: 1,
  // Its own session id: tar-agent (the same scripted agent) holds "scripted-1", and acpls refuses a
  // second agent's session under an id another agent's session has (protocol.md section 13).
  on_new_session: { sessionId: "second-1" },
  on_prompt: [{ update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "from second" } } }],
};
const installed = join(dataHome, "acpls", "agents", "tar-agent", "1.2.3", "pkg", "agent");
let registry: ChildProcess | undefined;
let served: { url: string; icon: string };

/** The fixture registry's server (tests/registry/serve.py) on the test's Python. */
async function serveRegistry(): Promise<{ url: string; icon: string }> {
  const python = process.env.TEST_PYTHON;
  if (python === undefined || python === "") throw new Error("TEST_PYTHON is not set (run this through make test-vscode)");
  const child = spawn(python, ["-m", "tests.registry.serve", "--log", agentLog], { cwd: env.repoRoot, stdio: ["pipe", "pipe", "inherit"] });
  registry = child;
  const first = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`tests.registry.serve exited (${String(code)}) before it printed anything`)));
  });
  return JSON.parse(first) as { url: string; icon: string };
}

function userSettings(): Record<string, unknown> {
  return JSON.parse(readFileSync(join(vscode.root, "user", "User", "settings.json"), "utf8")) as Record<string, unknown>;
}

const picker = () => vscode.page.locator(".quick-input-widget", { hasText: "Choose agent" });
const row = (text: string) => picker().locator(".quick-input-list .monaco-list-row", { hasText: text }).first();

describe("acpls: Choose agent… in VS Code", { timeout: 240_000 }, () => {
  before(async () => {
    served = await serveRegistry();
    await vscode.launch(
      workbenchSettings({
        "acpls.agent": "demo",
        "acpls.agents": { second: scriptedAgent(env, secondScript, secondLog) },
        "acpls.registry.url": served.url,
        "acpls.python": env.python,
      }),
      { env: { ACPLS_DEMO_SPEED: "0", XDG_DATA_HOME: dataHome, XDG_CACHE_HOME: join(vscode.root, "xdg-cache") } },
    );
  });

  after(async () => {
    registry?.stdin?.end();
    await vscode.finish();
  });

  step("the quick pick lists the local registry's agents, fetched again on request", async () => {
    await vscode.page.locator(".statusbar-item", { hasText: "Follow" }).first().waitFor({ timeout: 60_000 });
    await vscode.command("acpls: Choose agent…");
    await picker().waitFor({ timeout: 30_000 });
    // The first listing may be the bundled snapshot (the fetch starts in the background): the
    // item at the bottom fetches the registry and waits for it.
    await picker().locator("input").fill("Fetch the registry again");
    await row("Fetch the registry again").click();
    await vscode.page.locator(".quick-input-widget", { hasText: "Choose agent (fresh)" }).waitFor({ timeout: 30_000 });
    await picker().locator("input").fill("tar-agent");
    const tar = row("Tar Agent 1.2.3");
    await tar.waitFor({ timeout: 10_000 });
    const text = await tar.innerText();
    assert.match(text, /tar-agent · the tar-agent test agent/, text);
    assert.match(text, /not installed: installed when chosen · binary/, text);
    const icon = await tar.locator(".quick-input-list-icon").getAttribute("style");
    assert.ok(icon?.includes("tar-agent.svg"), `the row's icon: ${String(icon)}`);
    await picker().locator("input").fill("elsewhere");
    assert.match(await row("Elsewhere Agent").innerText(), /cannot run here: .*windows-aarch64/);
    await picker().locator("input").fill("demo");
    await row("demo").waitFor({ timeout: 10_000 });
    await vscode.screenshot("registry-listed");
  });

  step("choosing tar-agent installs it and makes it the agent", async () => {
    await picker().locator("input").fill("tar-agent");
    await row("Tar Agent 1.2.3").click();
    await vscode.page.locator(".notification-toast", { hasText: "the agent is now tar-agent" }).waitFor({ timeout: 60_000 });
    assert.ok(existsSync(installed), `${installed} unpacked`);
    await until("the user setting written", () => userSettings()["acpls.agent"] === "tar-agent");
    await vscode.screenshot("tar-agent-chosen");
  });

  step("a new session runs on the chosen agent", async () => {
    await vscode.openPanel();
    await vscode.panel.locator('button[title="New session"]').click();
    await vscode.sendPrompt("hello tar");
    await vscode.panel.locator(".message.agent", { hasText: "from tar-agent" }).waitFor({ timeout: 60_000 });
    await until("the prompt at tar-agent", () => agentMessages(agentLog, "session/prompt").length === 1);
    await vscode.screenshot("tar-agent-turn");
  });

  step("picked again, tar-agent is installed, current, and shows its sign-in method", async () => {
    await vscode.command("acpls: Choose agent…");
    await picker().waitFor({ timeout: 30_000 });
    await picker().locator("input").fill("tar-agent");
    const text = await row("Tar Agent 1.2.3").innerText();
    assert.match(text, /installed · binary · sign-in: Tar key/, text);
    assert.equal(await row("Tar Agent 1.2.3").locator(".codicon-check").count(), 1, "marked as the current agent");
    await vscode.screenshot("tar-agent-installed");
    await vscode.page.keyboard.press("Escape");
  });

  step("the acpls.agents setting's agent is offered for a new session and runs it", async () => {
    await vscode.command("acpls: Open the agent panel");
    await vscode.panel.locator('button[title="New session with another agent…"]').click();
    const which = vscode.page.locator(".quick-input-widget", { hasText: "new session with which agent" });
    await which.waitFor({ timeout: 30_000 });
    await which.locator("input").fill("second");
    const second = which.locator(".quick-input-list .monaco-list-row", { hasText: "acpls.agents" }).first();
    assert.match(await second.innerText(), /second/);
    await second.click();
    await vscode.panel.locator(".empty").waitFor({ timeout: 60_000 });
    await vscode.sendPrompt("hello second");
    await vscode.panel.locator(".message.agent", { hasText: "from second" }).waitFor({ timeout: 60_000 });
    await until("the prompt at second", () => agentMessages(secondLog, "session/prompt").length === 1);
    assert.equal(agentMessages(agentLog, "session/prompt").length, 1, "tar-agent got no second prompt");
    await vscode.screenshot("second-agent-turn");
  });
});
