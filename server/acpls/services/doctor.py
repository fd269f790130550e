"""`acpls doctor`: is everything acpls needs on this machine, and what is missing?

Each finding says what was looked for, what was found, whether acpls needs it (a missing needed
item makes `acpls doctor` exit non-zero) and, when it is missing, how to get it. Nothing is
installed or changed: the checks run `--version` commands and, for agents, the same one-request
`initialize` check as `acpls agents check`.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from acpls import requirements, speedups
from acpls.presets import AgentSpec
from acpls.services.agent_check import AgentCheck, check_agents
from acpls.services.node_runtime import NO_NODE, NodeShims
from acpls.services.node_runtime import version as node_version

MIN_PYTHON = requirements.PYTHON
# The server's runtime dependencies (pyproject.toml): a missing one means a broken install. The
# compiled speed-ups (orjson, pybase64, uvloop) are not among them: acpls runs without them.
SERVER_DEPENDENCIES = ("pygls", "lsprotocol", "attrs", "cattrs", "watchfiles")
_VERSION_TIMEOUT = 10.0
_VERSION_NUMBER = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def install_command(source: Path | None = None) -> str:
    """How to (re)install the server, as README says: from the acpls repository (nothing is
    published under the name `acpls` on PyPI). Names the checkout this acpls runs from when it
    runs from one."""
    if source is None:
        here = Path(__file__).resolve().parents[3]
        source = here if (here / "pyproject.toml").is_file() else None
    where = str(source) if source is not None else "<your acpls checkout>"
    return f"pipx install --force {where} (or: uv tool install --force --from {where} acpls)"


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
    # The oldest version that works (acpls/requirements.py); older is reported as not ok.
    minimum: tuple[int, ...] | None = None


TOOLS: tuple[Tool, ...] = (
    Tool("git", ("git",), "checkpoints and review baselines", "install git", needed=True),
    Tool(
        "node",
        ("node",),
        "runs npm agents (claude, gemini, codex, opencode, qwen, copilot)",
        f"install Node.js {requirements.NODE_TEXT} or newer (https://nodejs.org or your package"
        " manager)",
        minimum=requirements.NODE,
    ),
    Tool("npx", ("npx",), "starts npm agents not on PATH", "comes with npm (Node.js)"),
    Tool(
        "uv",
        ("uv",),
        "installs the server (uv tool install --from <checkout> acpls)",
        "pip install uv",
    ),
    Tool("uvx", ("uvx",), "starts Python agents from the registry", "pip install uv"),
)

EDITORS: tuple[Tool, ...] = (
    Tool(
        "Neovim",
        ("nvim",),
        "the acpls plugin (neovim/)",
        f"the plugin needs Neovim {requirements.NEOVIM_TEXT} or newer",
        minimum=requirements.NEOVIM,
    ),
    Tool(
        "VS Code",
        ("code", "code-server", "codium"),
        "the acpls extension",
        f"the extension needs VS Code {requirements.VSCODE_TEXT} or newer (code.visualstudio.com)",
        minimum=requirements.VSCODE,
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
            hint=f"acpls needs Python {requirements.PYTHON_TEXT} or newer",
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
                    hint=f"reinstall acpls: {install_command()}",
                )
            )
        else:
            findings.append(Finding("python", dist, True, found, needed=True))
    findings.append(speedups_finding())
    return findings


def speedups_finding() -> Finding:
    """The compiled fast paths: not needed (the standard library stands in), but worth knowing."""
    used = speedups.describe()
    fast = speedups.JSON == "orjson" and speedups.BASE64 == "pybase64"
    return Finding(
        "python",
        "speed-ups",
        fast,
        used,
        hint=f"orjson and pybase64 have wheels for CPython {requirements.BUNDLED_PYTHONS[0]} to"
        f" {requirements.BUNDLED_PYTHONS[-1]}; without them acpls uses the standard library",
    )


def version_number(text: str) -> tuple[int, ...] | None:
    """The first dotted version in a `--version` line (`NVIM v0.11.4`, `v20.11.1`, `1.100.3`)."""
    found = _VERSION_NUMBER.search(text)
    return tuple(int(g) for g in found.groups() if g is not None) if found else None


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
        number = version_number(version) if version else None
        if tool.minimum is not None and number is not None and number < tool.minimum:
            wanted = ".".join(map(str, tool.minimum))
            detail = f"{shown} at {path}: older than {wanted}"
            return Finding(group, tool.name, False, detail, tool.needed, tool.hint)
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
    node: NodeShims | None = None,
) -> list[Finding]:
    """Every finding, in report order. Agents are needed when the user named them."""
    tools, editors, checks = await asyncio.gather(
        tool_findings("tools", TOOLS),
        tool_findings("editors", EDITORS),
        check_agents(agents, cwd=cwd, env=env, answer_within=answer_within, node=node),
    )
    if node is not None:
        tools.append(node_finding(node, env))
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


def node_finding(node: NodeShims, env: Mapping[str, str]) -> Finding:
    """The Node.js npm agents run on: the user's own on PATH, acpls[node]'s, the editor's, or
    none (then what to install)."""
    runtime = node.runtime_for(env)
    if runtime is None:
        return Finding("tools", "Node.js for agents", False, "none", hint=NO_NODE)
    version = node_version(runtime)
    shown = f"{version} " if version else ""
    return Finding(
        "tools", "Node.js for agents", version is not None, f"{shown}{runtime.describe()}"
    )


def node_extra() -> list[str]:
    """The requirements of acpls' `node` extra, as pyproject declares them (one source)."""
    wanted = []
    for requirement in importlib.metadata.requires("acpls") or []:
        name, _, marker = requirement.partition(";")
        if re.search(r"""extra\s*==\s*["']node["']""", marker):
            wanted.append(name.strip())
    return wanted


def fix_node(node: NodeShims, env: Mapping[str, str]) -> str | None:
    """`acpls doctor --fix`: where agents would have no Node.js, install the `node` extra into
    the Python acpls runs on (pip, else `uv pip`). Returns what was done, None when nothing was
    needed; raises nothing (a failure is said in the text and the report shows what is missing)."""
    if node.runtime_for(env) is not None:
        return None
    wanted = node_extra()
    if not wanted:
        return "this acpls declares no `node` extra; install Node.js 20 or newer"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", *wanted]
    uv = shutil.which("uv")
    attempts = [pip] + ([[uv, "pip", "install", "--python", sys.executable, *wanted]] if uv else [])
    failure = ""
    for argv in attempts:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=900)
        if done.returncode == 0:
            importlib.invalidate_caches()
            return f"installed {', '.join(wanted)} ({' '.join(argv[:3])})"
        failure = " | ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
    return f"could not install {', '.join(wanted)}: {failure}"
