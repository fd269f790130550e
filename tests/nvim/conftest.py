"""Fixtures for the Neovim plugin tests: a fresh headless Neovim 0.11 per test (pynvim), with the
plugin from `neovim/` on its runtimepath, the real `acpls` and a scripted (or demo) ACP agent."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pynvim
import pytest

from tests.agents import script_command

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "neovim"
HELPERS = Path(__file__).with_name("helpers.lua")
BIN = Path(sys.executable).parent
NVIM = BIN / "nvim"
ACPLS = BIN / "acpls"


class Editor:
    """A Neovim under test, with helpers to run Lua and wait for conditions."""

    def __init__(self, nvim: pynvim.Nvim, workspace: Path, agent_log: Path) -> None:
        self.nvim = nvim
        self.workspace = workspace
        self.agent_log = agent_log

    def lua(self, code: str, *args: Any) -> Any:
        return self.nvim.exec_lua(code, *args)

    def wait(self, code: str, *args: Any, timeout: float = 20.0, what: str = "") -> Any:
        """Run `code` until it returns something truthy; return that."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.lua(code, *args)
            if value:
                return value
            if time.monotonic() > deadline:
                errors = self.lua("return T.errors()")
                raise AssertionError(f"timed out waiting for {what or code!r}; errors: {errors}")
            time.sleep(0.05)

    def open_selects(self) -> list[dict[str, Any]]:
        return self.lua("return T.open_selects()")

    def wait_select(self, kind: str | None = None, timeout: float = 20.0) -> dict[str, Any]:
        return self.wait(
            "for _, s in ipairs(T.open_selects()) do"
            " if ... == vim.NIL or s.kind == ... then return s end end",
            kind if kind is not None else None,
            timeout=timeout,
            what=f"a picker of kind {kind}",
        )

    def wait_turn_end(self, count: int = 1, timeout: float = 30.0) -> list[dict[str, Any]]:
        return self.wait(
            "if #T.turn_ends >= ... then return T.turn_ends end",
            count,
            timeout=timeout,
            what="the end of the turn",
        )

    def errors(self) -> list[str]:
        return self.lua("return T.errors()")


def nvim_env(tmp_path: Path) -> dict[str, str]:
    env = {
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg" / "config"),
        "XDG_DATA_HOME": str(tmp_path / "xdg" / "data"),
        "XDG_STATE_HOME": str(tmp_path / "xdg" / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "xdg" / "cache"),
        "ACPLS_DEMO_SPEED": "0",
        "LANG": "C.UTF-8",
    }
    for d in env.values():
        if d.startswith(str(tmp_path)):
            Path(d).mkdir(parents=True, exist_ok=True)
    return env


def start_nvim(tmp_path: Path, cwd: Path, extra_argv: list[str] | None = None) -> pynvim.Nvim:
    env = nvim_env(tmp_path)
    argv = [
        "env",
        *(f"{k}={v}" for k, v in env.items()),
        str(NVIM),
        "--embed",
        "--headless",
        "--clean",
        "-n",
        "-i",
        "NONE",
        "--cmd",
        f"set rtp^={PLUGIN}",
        "--cmd",
        f"cd {cwd}",
        *(extra_argv or []),
    ]
    nvim = pynvim.attach("child", argv=argv)
    nvim.command(f"luafile {HELPERS}")
    return nvim


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "hello.txt").write_text("hello\n", encoding="utf-8")
    (root / "README.md").write_text(
        "# sample\n\nA sample project.\nThird line.\n", encoding="utf-8"
    )
    (root / "calc.py").write_text(
        "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n", encoding="utf-8"
    )
    return root


@pytest.fixture
def editor_factory(tmp_path: Path, workspace: Path) -> Iterator[Callable[..., Editor]]:
    """`editor_factory(script, **options)`: a Neovim on the workspace whose acpls runs the scripted
    agent with `script` (a dict or a script name); `options` go to `require('acpls').setup()`."""
    started: list[pynvim.Nvim] = []

    def make(script: dict[str, Any] | str | None = None, **options: Any) -> Editor:
        log = tmp_path / "agent-log.jsonl"
        nvim = start_nvim(tmp_path, workspace)
        started.append(nvim)
        if script is not None:
            argv = script_command(script, log)
            options.setdefault("agent", {"command": argv[0], "args": argv[1:]})
        options.setdefault("cmd", [str(ACPLS)])
        nvim.exec_lua("require('acpls').setup(...)", options)
        return Editor(nvim, workspace, log)

    yield make
    for nvim in started:
        # Stopping the clients ends acpls, which ends the agent and its terminals.
        with contextlib.suppress(Exception):
            nvim.exec_lua("for _, c in ipairs(vim.lsp.get_clients()) do c:stop(true) end")
        with contextlib.suppress(Exception):
            nvim.quit("qa!")
        with contextlib.suppress(Exception):
            nvim.close()


@pytest.fixture
def plain_nvim(tmp_path: Path, workspace: Path) -> Iterator[pynvim.Nvim]:
    """A Neovim with the plugin and no server (for tests that drive handlers directly)."""
    nvim = start_nvim(tmp_path, workspace)
    yield nvim
    with contextlib.suppress(Exception):
        nvim.quit("qa!")
    with contextlib.suppress(Exception):
        nvim.close()
