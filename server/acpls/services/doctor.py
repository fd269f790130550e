"""`acpls doctor`: is everything acpls needs on this machine, and what is missing?

Each finding says what was looked for, what was found, whether acpls needs it (a missing needed
item makes `acpls doctor` exit non-zero) and, when it is missing, how to get it. Nothing is
installed or changed: the checks run `--version` commands and, for agents, the same one-request
`initialize` check as `acpls agents check`.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import shutil
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from acpls.presets import AgentSpec
from acpls.services.agent_check import AgentCheck, check_agents

MIN_PYTHON = (3, 11)
# The server's runtime dependencies (pyproject.toml): a missing one means a broken install.
SERVER_DEPENDENCIES = ("pygls", "lsprotocol", "attrs", "cattrs", "watchfiles", "orjson")
_VERSION_TIMEOUT = 10.0


@attrs.frozen
class Finding:
    """One line of the report."""

    group: str  # "python", "tools", "agents", "editors"
    name: str
    ok: bool
    detail: str
    needed: bool = False
    hint: str = ""

    @property
    def blocking(self) -> bool:
        return self.needed and not self.ok

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self) | {"blocking": self.blocking}

    def line(self) -> str:
        mark = "ok  " if self.ok else ("FAIL" if self.needed else "--  ")
        hint = f" ({self.hint})" if self.hint and not self.ok else ""
        return f"{mark} {self.name}: {self.detail}{hint}"


@attrs.frozen
class Tool:
    """A program acpls or its agents may use, and why."""

    name: str
    commands: tuple[str, ...]  # the first one found is used
    purpose: str
    hint: str
    needed: bool = False
    version_flag: str = "--version"


TOOLS: tuple[Tool, ...] = (
    Tool("git", ("git",), "checkpoints and review baselines", "install git", needed=True),
    Tool(
        "node",
        ("node",),
        "runs npm agents (claude, gemini, codex, opencode, qwen, copilot)",
        "install Node.js 20 or newer (https://nodejs.org or your package manager)",
    ),
    Tool("npx", ("npx",), "starts npm agents not on PATH", "comes with npm (Node.js)"),
    Tool("uv", ("uv",), "installs the server (uv tool install acpls)", "pip install uv"),
    Tool("uvx", ("uvx",), "starts Python agents from the registry", "pip install uv"),
)

EDITORS: tuple[Tool, ...] = (
    Tool("Neovim", ("nvim",), "the acpls plugin (neovim/)", "Neovim 0.10 or newer"),
    Tool(
        "VS Code",
        ("code", "code-server", "codium"),
        "the acpls extension",
        "see code.visualstudio.com",
    ),
    Tool("Emacs", ("emacs",), "eglot, plain LSP (editors/)", ""),
    Tool("Helix", ("hx", "helix"), "plain LSP (editors/)", ""),
    Tool("Kakoune", ("kak",), "kak-lsp, plain LSP (editors/)", "", version_flag="-version"),
)


def python_findings(version: tuple[int, ...] = tuple(sys.version_info[:3])) -> list[Finding]:
    """The interpreter running acpls and the server's own dependencies."""
    shown = ".".join(map(str, version))
    findings = [
        Finding(
            "python",
            "Python",
            version[:2] >= MIN_PYTHON,
            f"{shown} at {sys.executable}",
            needed=True,
            hint="acpls needs Python 3.11 or newer",
        )
    ]
    for dist in SERVER_DEPENDENCIES:
        try:
            found = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            findings.append(
                Finding(
                    "python",
                    dist,
                    False,
                    "not installed",
                    needed=True,
                    hint="reinstall acpls: pipx install --force acpls",
                )
            )
        else:
            findings.append(Finding("python", dist, True, found, needed=True))
    return findings


async def version_of(argv: list[str], env: Mapping[str, str] | None = None) -> str | None:
    """First line `argv` prints (stdout, else stderr), or None when it cannot run."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(env) if env is not None else None,
        )
    except OSError:
        return None
    try:
        out, err = await asyncio.wait_for(proc.communicate(), _VERSION_TIMEOUT)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return None
    text = (out or err).decode(errors="replace").strip()
    return text.splitlines()[0] if text else ""


async def tool_findings(
    group: str, tools: Iterable[Tool], which: Callable[[str], str | None] = shutil.which
) -> list[Finding]:
    """Each tool found on PATH (and its version), or how to get it."""

    async def one(tool: Tool) -> Finding:
        path = next((p for p in map(which, tool.commands) if p), None)
        if path is None:
            return Finding(
                group, tool.name, False, f"not found ({tool.purpose})", tool.needed, tool.hint
            )
        version = await version_of([path, tool.version_flag])
        shown = version if version else "found, but --version failed"
        return Finding(group, tool.name, version is not None, f"{shown} at {path}", tool.needed)

    return list(await asyncio.gather(*(one(t) for t in tools)))


def agent_finding(check: AgentCheck, needed: bool) -> Finding:
    detail = check.summary().split(": ", 1)[1]
    return Finding("agents", check.name, check.ok, detail, needed=needed)


async def diagnose(
    agents: list[AgentSpec],
    *,
    agents_needed: bool,
    cwd: str,
    env: Mapping[str, str],
    answer_within: float,
) -> list[Finding]:
    """Every finding, in report order. Agents are needed when the user named them."""
    tools, editors, checks = await asyncio.gather(
        tool_findings("tools", TOOLS),
        tool_findings("editors", EDITORS),
        check_agents(agents, cwd=cwd, env=env, answer_within=answer_within),
    )
    npx_needed = any(spec.command == "npx" for spec in agents) and agents_needed
    tools = [attrs.evolve(f, needed=True) if f.name == "npx" and npx_needed else f for f in tools]
    return [
        *python_findings(),
        *tools,
        *(agent_finding(c, agents_needed) for c in checks),
        *editors,
    ]


def report_lines(findings: list[Finding]) -> list[str]:
    """Grouped, readable lines, ending with the verdict."""
    lines: list[str] = []
    group = None
    for finding in findings:
        if finding.group != group:
            group = finding.group
            lines.append(f"{group}:")
        lines.append("  " + finding.line())
    blocking = [f.name for f in findings if f.blocking]
    lines.append(
        f"missing or broken: {', '.join(blocking)}" if blocking else "acpls has what it needs"
    )
    return lines
