"""The full-turn harness: a real published agent, its model played by the scripted model server,
driven through the real acpls by a stand-in editor that really applies what it is sent.

    async with agent_run(AGENTS["claude"], "edit_turn", tmp_path, server_env) as run:
        run.editor.open(run.shop)                       # the user has the file open
        result = await run.prompt("Round the total")    # one whole turn
        ...                                             # run.follows(), run.tool_calls(), ...
        await run.exit_editor()                         # and nothing of the agent is left

One `AgentSpec` per agent says how to start it offline (command, arguments, environment, config
files in its temporary HOME, what to do after `session/new`) and what it is known to do
(tests/real_agents/README.md lists each habit). Scripts are tests/model_server/scripts/<script
dir>/<scenario>.json; every agent has the same three scenarios over the same file (`SHOP`):
`edit_turn` (read shop.py, edit one line, run a command that writes report.txt, deletes
legacy.txt and prints `report-written`, answer), `reject_turn` (edit, then answer) and `cancel` (read, then the model
stalls).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import attrs

from acpls.translate.text_edits import apply_text_edits
from acpls.translate.uris import uri_to_path
from tests.e2e.conftest import as_dict, command, notifications, start, stop_client
from tests.e2e.disk_editor import DiskEditor, disk_editor
from tests.model_server import ModelServer, load_script
from tests.real_agents.installed import copilot_cache_home, executable

# A real agent's whole turn (node start, several model round trips) takes a few seconds here;
# the bound only stops a hung agent from hanging the suite.
TURN_TIMEOUT = 180
START_TIMEOUT = 90
# How long a cancelled turn may take to end, and the agent's processes to go after the editor
# exits (the "within seconds").
CANCEL_SECONDS = 10
EXIT_SECONDS = 10

SHOP = "def price(item):\n    return item.cost\n\n\ndef total(prices):\n    return sum(prices)\n"
OLD_LINE = "    return sum(prices)\n"
NEW_LINE = "    return round(sum(prices), 2)\n"
EDITED = SHOP.replace(OLD_LINE, NEW_LINE)
REPORT = "total rounded\n"
# A committed file the edit_turn command deletes just before the turn ends.
LEGACY = "old totals, not rounded\n"
# What `write_turn` makes the agent write into the new file notes.md.
NOTES = "# Notes\n\nTotals are rounded to cents.\n"
COMMAND_OUTPUT = "report-written"
# The marker every process of one run inherits: found in /proc/*/environ after the editor exits,
# it catches children that left the agent's process tree (reparented to init) as well.
MARKER = "ACPLS_REAL_AGENT_RUN"


SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
NODE_TOOLS = frozenset({"node", "nodejs", "npm", "npx", "corepack"})


def _base_env(home: Path, *, node_on_path: bool = True) -> dict[str, str]:
    if not node_on_path:
        return {"PATH": path_without_node(home.parent / "no-node-bin"), "HOME": str(home)}
    node_dir = os.path.dirname(shutil.which("node") or "/usr/bin/node")
    return {
        "PATH": os.pathsep.join(dict.fromkeys([node_dir, *SYSTEM_PATH])),
        "HOME": str(home),
    }


def path_without_node(folder: Path) -> str:
    """A PATH of one folder holding every program of the system's PATH but Node.js and npm: the
    machine of a user who never installed Node."""
    folder.mkdir(exist_ok=True)
    for directory in SYSTEM_PATH:
        with contextlib.suppress(OSError):
            for entry in os.scandir(directory):
                link = folder / entry.name
                if entry.name not in NODE_TOOLS and not link.exists() and not link.is_symlink():
                    link.symlink_to(entry.path)
    assert shutil.which("node", path=str(folder)) is None
    return str(folder)


@attrs.frozen
class AgentSpec:
    """How to run one published agent offline, and what it is known to do over ACP."""

    # `name` in tests/real_agents/agents.mk; `id` names the test variant (claude-v1, ...).
    id: str
    name: str
    args: tuple[str, ...]
    # Model server URL, temporary HOME -> the agent's environment (besides PATH/HOME).
    env: Callable[[str, Path], dict[str, str]]
    # Writes config files into HOME before the agent starts (model URL, HOME).
    prepare_home: Callable[[str, Path], None] = lambda url, home: None
    protocol: int | str = "auto"
    # acpls.setMode after session/new (Claude starts in `auto`, which asks nothing).
    mode: str | None = None
    # acpls.authenticate before session/new.
    auth_method: str | None = None
    scripts: str = ""
    # What the agent does (README.md): edits through fs/write_text_file (else straight to disk).
    writes_through_client: bool = False
    # Where its shell tool's output reaches the editor: "terminal" (acpls/terminalOutput),
    # "content" (tool-call content text), "rawOutput", or None (it never reports it).
    output_via: str | None = "terminal"
    # The options of its permission requests, per tool kind, as (optionId, name, kind), in the
    # agent's order: the editor must get every one.
    options: dict[str, tuple[tuple[str, str, str], ...]] = attrs.field(factory=dict)
    # The stopReason of a turn whose edit the user rejected (Codex's reject aborts the turn).
    rejected_stop: str = "end_turn"

    @property
    def script_dir(self) -> str:
        return self.scripts or self.name


# --- the agents -----------------------------------------------------------------------------------


def _claude_env(url: str, home: Path) -> dict[str, str]:
    return {
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "dummy",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION": "false",
    }


def _gemini_env(url: str, home: Path) -> dict[str, str]:
    return {
        "GEMINI_API_KEY": "dummy",
        "GOOGLE_GEMINI_BASE_URL": url,
        "GEMINI_CLI_NO_RELAUNCH": "true",
    }


def _gemini_home(url: str, home: Path) -> None:
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    # A fixed model skips the routing call; no telemetry, no update check.
    settings.write_text(
        json.dumps(
            {
                "model": {"name": "gemini-2.5-pro"},
                "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
                "privacy": {"usageStatisticsEnabled": False},
                "telemetry": {"enabled": False},
            }
        ),
        encoding="utf-8",
    )


def _qwen_env(url: str, home: Path) -> dict[str, str]:
    return {"OPENAI_API_KEY": "dummy", "OPENAI_BASE_URL": url + "/v1", "OPENAI_MODEL": "m"}


def _qwen_home(url: str, home: Path) -> None:
    settings = home / ".qwen" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(
        json.dumps(
            {
                "memory": {"enableManagedAutoMemory": False},
                "usageStatisticsEnabled": False,
                "telemetry": {"enabled": False},
            }
        ),
        encoding="utf-8",
    )


def _codex_env(url: str, home: Path) -> dict[str, str]:
    # Codex refuses to put its sandbox helper (codex-linux-sandbox, run inside bubblewrap) under
    # the temporary directory, and HOME is under /tmp here: its own TMPDIR keeps CODEX_HOME out
    # of it. Without the helper every sandboxed command fails.
    (home / "tmp").mkdir(exist_ok=True)
    return {
        "OPENAI_API_KEY": "dummy",
        "CODEX_HOME": str(home / ".codex"),
        "TMPDIR": str(home / "tmp"),
    }


def _codex_home(url: str, home: Path) -> None:
    # OPENAI_BASE_URL is ignored: a provider of its own points Codex at the model server.
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        f"""model = "gpt-5.5"
model_provider = "mock"

[model_providers.mock]
name = "mock"
base_url = "{url}/v1"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
""",
        encoding="utf-8",
    )


def _opencode_env(url: str, home: Path) -> dict[str, str]:
    config = {
        "model": "mock/m",
        "small_model": "mock/m",
        "provider": {
            "mock": {
                "npm": "@ai-sdk/openai-compatible",
                "options": {"baseURL": url + "/v1", "apiKey": "dummy"},
                "models": {"m": {"tool_call": True, "limit": {"context": 128000, "output": 8192}}},
            }
        },
    }
    return {
        "OPENCODE_CONFIG_CONTENT": json.dumps(config),
        # It asks nothing unless told to; then it also sends fs/write_text_file.
        "OPENCODE_PERMISSION": json.dumps({"edit": "ask", "bash": "ask"}),
        "OPENCODE_DISABLE_AUTOUPDATE": "true",
        "OPENCODE_DISABLE_MODELS_FETCH": "true",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "true",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "true",
    }


def copilot_cache_env() -> dict[str, str]:
    """The unpack cache `make agents` filled (Copilot unpacks ~235 MB there on first start)."""
    return {"COPILOT_CACHE_HOME": str(copilot_cache_home())}


def _copilot_env(url: str, home: Path) -> dict[str, str]:
    return copilot_cache_env() | {
        "COPILOT_PROVIDER_BASE_URL": url + "/v1",
        "COPILOT_PROVIDER_API_KEY": "dummy",
        "COPILOT_MODEL": "gpt-4.1",
        "COPILOT_OFFLINE": "true",
        "COPILOT_AUTO_UPDATE": "false",
    }


_CLAUDE_OPTIONS = {
    "edit": (
        ("allow-once", "Yes", "allow_once"),
        ("allow-with-updates", "Yes, allow all edits during this session", "allow_always"),
        ("reject", "No", "reject_once"),
    ),
    "execute": (
        ("allow-once", "Yes", "allow_once"),
        (
            "allow-with-updates",
            "Yes, and don't ask again for printf 'total rounded\\n' and rm legacy.txt commands",
            "allow_always",
        ),
        ("reject", "No", "reject_once"),
    ),
}
_GEMINI_OPTIONS = (
    ("proceed_always", "Allow for this session", "allow_always"),
    ("proceed_once", "Allow", "allow_once"),
    ("cancel", "Reject", "reject_once"),
)
_QWEN_OPTIONS = {
    "edit": (
        ("proceed_always", "Allow All Edits", "allow_always"),
        ("proceed_once", "Allow", "allow_once"),
        ("cancel", "Reject", "reject_once"),
    ),
    "execute": (
        ("proceed_always_project", "Always Allow in project: printf *, rm *", "allow_always"),
        ("proceed_always_user", "Always Allow for user: printf *, rm *", "allow_always"),
        ("proceed_once", "Allow", "allow_once"),
        ("cancel", "Reject", "reject_once"),
    ),
}
_OPENCODE_OPTIONS = (
    ("once", "Allow once", "allow_once"),
    ("always", "Always allow", "allow_always"),
    ("reject", "Reject", "reject_once"),
)

_CODEX_OPTIONS = {
    "edit": (
        ("approved", "Yes", "allow_once"),
        ("abort", "No, provide feedback", "reject_once"),
    ),
    "execute": (
        ("approved", "Yes, proceed", "allow_once"),
        (
            "approved-execpolicy-amendment",
            "Yes, and don't ask again for commands that start with `/bin/bash -lc printf 'total"
            " rounded\\n' > report.txt && rm legacy.txt && echo report-written`",
            "allow_always",
        ),
        ("abort", "No, and tell Codex what to do differently", "reject_once"),
    ),
}

_COPILOT_OPTIONS = (
    ("allow_once", "Allow once", "allow_once"),
    ("allow_always", "Always allow", "allow_always"),
    ("reject_once", "Deny", "reject_once"),
)

AGENTS: dict[str, AgentSpec] = {
    spec.id: spec
    for spec in (
        AgentSpec(
            "claude-v2",
            "claude",
            (),
            _claude_env,
            protocol=2,
            mode="default",
            options=_CLAUDE_OPTIONS,
        ),
        AgentSpec(
            "claude-v1",
            "claude",
            (),
            _claude_env,
            protocol=1,
            mode="default",
            options=_CLAUDE_OPTIONS,
        ),
        AgentSpec(
            "gemini",
            "gemini",
            ("--acp",),
            _gemini_env,
            _gemini_home,
            protocol=1,
            writes_through_client=True,
            output_via=None,
            options={"edit": _GEMINI_OPTIONS, "execute": _GEMINI_OPTIONS},
        ),
        AgentSpec(
            "qwen",
            "qwen",
            ("--acp",),
            _qwen_env,
            _qwen_home,
            protocol=1,
            # It starts in `auto`, which asks a classifier (the model) instead of the user.
            mode="default",
            writes_through_client=True,
            output_via="content",
            options=_QWEN_OPTIONS,
        ),
        AgentSpec(
            "codex",
            "codex",
            (),
            _codex_env,
            _codex_home,
            protocol=1,
            # Its default mode `read-only` asks before an edit and before a command that asks to
            # leave the sandbox (the scripts' `sandbox_permissions: require_escalated`).
            auth_method="openai-api-key",
            # A terminal it never sends output for (the output is only in rawOutput): acpls
            # fills it from rawOutput.
            output_via="terminal",
            options=_CODEX_OPTIONS,
            # Its only reject option is "No, and tell Codex what to do differently": the turn
            # ends there, as cancelled, for the user to say what instead.
            rejected_stop="cancelled",
        ),
        AgentSpec(
            "copilot",
            "copilot",
            ("--acp",),
            _copilot_env,
            protocol=1,
            # Its bash output arrives as tool-call content text (and in rawOutput.content).
            output_via="content",
            options={"edit": _COPILOT_OPTIONS, "execute": _COPILOT_OPTIONS},
        ),
        AgentSpec(
            "opencode",
            "opencode",
            ("acp",),
            _opencode_env,
            protocol=1,
            # It sends fs/write_text_file (unawaited) and then writes the disk itself: the
            # disk is where its edit surely lands.
            writes_through_client=False,
            output_via="content",
            options={"edit": _OPENCODE_OPTIONS, "execute": _OPENCODE_OPTIONS},
        ),
    )
}


# --- a run ------------------------------------------------------------------------------------------


def make_workspace(root: Path) -> Path:
    """A git workspace holding shop.py and legacy.txt, committed (agents look at the
    repository)."""
    root.mkdir(parents=True)
    (root / "shop.py").write_bytes(SHOP.encode())
    (root / "legacy.txt").write_bytes(LEGACY.encode())
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "shop.py", "legacy.txt"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=root, check=True)
    return root


@attrs.define
class AgentRun:
    spec: AgentSpec
    editor: DiskEditor
    model: ModelServer
    workspace: Path
    custom: bool
    marker: str
    session_id: str = ""
    server_pid: int = 0
    # Open documents' text as last loaded from or saved to disk.
    clean: dict[str, str] = attrs.field(factory=dict)
    # Every process seen under acpls while the run went on (pid -> command line).
    seen: dict[int, str] = attrs.field(factory=dict)

    @property
    def shop(self) -> Path:
        return self.workspace / "shop.py"

    @property
    def notes(self) -> Path:
        return self.workspace / "notes.md"

    @property
    def legacy(self) -> Path:
        return self.workspace / "legacy.txt"

    @property
    def report(self) -> Path:
        return self.workspace / "report.txt"

    @property
    def client(self) -> Any:
        return self.editor.client

    # -- driving -----------------------------------------------------------------------------------
    async def prompt(self, text: str) -> dict[str, Any]:
        """One whole turn (noting the processes under acpls as it goes); fails past
        TURN_TIMEOUT with the model server's log."""
        task = asyncio.ensure_future(
            command(self.client, "acpls.prompt", {"sessionId": self.session_id, "text": text})
        )
        deadline = time.monotonic() + TURN_TIMEOUT
        try:
            while not task.done():
                self.note_processes()
                await asyncio.wait({task}, timeout=0.2)
                if time.monotonic() > deadline:
                    raise AssertionError(f"turn did not end in time\n{self.model.format_log()}")
            return task.result()
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task

    async def cancel(self) -> None:
        await command(self.client, "acpls.cancel", {"sessionId": self.session_id})

    async def review(self) -> list[dict[str, Any]]:
        return (await command(self.client, "acpls.review", {}))["files"]

    async def reject_all(self) -> list[dict[str, Any]]:
        return (await command(self.client, "acpls.rejectAll", {}))["files"]

    # -- what the editor received ---------------------------------------------------------------------
    def updates(self) -> list[dict[str, Any]]:
        return [as_dict(p)["update"] for p in notifications(self.client, "acpls/sessionUpdate")]

    def tool_calls(self) -> dict[str, dict[str, Any]]:
        """Each tool call's last merged state, in order of first appearance (custom mode)."""
        calls: dict[str, dict[str, Any]] = {}
        for update in self.updates():
            if update.get("sessionUpdate") == "tool_call":
                call = update["toolCall"]
                calls[call["toolCallId"]] = call
        return calls

    def located_paths(self) -> list[str]:
        """Every path the agent sent as a tool-call location, over all updates (custom mode)."""
        paths = []
        for update in self.updates():
            if update.get("sessionUpdate") == "tool_call":
                for location in update["toolCall"].get("locations") or []:
                    paths.append(location["path"])
        return list(dict.fromkeys(paths))

    def follows(self) -> list[str]:
        """The paths the editor was moved to: acpls/followAgent (custom) or window/showDocument
        (generic; the transcript acpls opens is not a follow)."""
        if self.custom:
            uris = [as_dict(p)["uri"] for p in notifications(self.client, "acpls/followAgent")]
        else:
            uris = [d.uri for d in self.client.shown_documents]
        return [uri_to_path(u) for u in uris if u.startswith("file:")]

    def terminal_text(self) -> str:
        texts = [as_dict(p)["text"] for p in notifications(self.client, "acpls/terminalOutput")]
        return "".join(texts)

    def shown_output(self) -> str:
        """Everything of a command's output the editor can show: terminals, tool-call content
        and rawOutput (custom mode), or the transcript acpls keeps (generic mode)."""
        if not self.custom:
            return "\n".join(self.transcripts())
        parts = [self.terminal_text()]
        for call in self.tool_calls().values():
            parts.append(json.dumps(call.get("content") or []))
            parts.append(json.dumps(call.get("rawOutput") or {}))
        return "\n".join(parts)

    def transcripts(self) -> list[str]:
        shown = [uri_to_path(d.uri) for d in self.client.shown_documents]
        return [Path(p).read_text(encoding="utf-8") for p in shown if p.endswith(".md")]

    def permission_requests(self) -> list[dict[str, Any]]:
        return [as_dict(p) for p in self.editor.permission_requests]

    def buffer(self, path: Path) -> str | None:
        return self.editor.buffers.get(path.as_uri())

    def open(self, path: Path) -> None:
        """The user opens `path` (no unsaved changes)."""
        self.editor.open(path)
        self.clean[path.as_uri()] = self.editor.buffers[path.as_uri()]

    def editor_notices_disk(self) -> None:
        """What editors do when a file changes on disk: a buffer without unsaved changes is
        reloaded (didChange to acpls); one with unsaved changes is left alone."""
        for uri, clean in self.clean.items():
            path = Path(uri_to_path(uri))
            disk = disk_text(path)
            if self.editor.buffers.get(uri) == clean and disk is not None and disk != clean:
                self.editor.type_text(path, disk)
                self.clean[uri] = disk

    def save_all(self) -> None:
        """The user saves every open buffer."""
        for uri in self.clean:
            path = Path(uri_to_path(uri))
            if uri in self.editor.buffers:
                self.editor.save(path)
                self.clean[uri] = self.editor.buffers[uri]

    # -- processes -----------------------------------------------------------------------------------
    def note_processes(self) -> None:
        if self.server_pid:
            for pid in descendants(self.server_pid):
                self.seen.setdefault(pid, cmdline(pid))

    def leftovers(self) -> dict[int, str]:
        alive = {pid: cmd for pid, cmd in self.seen.items() if is_alive(pid)}
        alive |= {pid: cmdline(pid) for pid in marked(self.marker)}
        return alive

    async def exit_editor(self) -> None:
        """The editor exits (shutdown, exit); then nothing of the agent may be left."""
        self.note_processes()
        assert self.seen, "no agent process was ever seen under acpls"
        await stop_client(self.client)
        left = await asyncio.to_thread(self._wait_gone, EXIT_SECONDS)
        assert not left, f"left after the editor exited: {left}"

    def _wait_gone(self, seconds: float) -> dict[int, str]:
        deadline = time.monotonic() + seconds
        while (left := self.leftovers()) and time.monotonic() < deadline:
            time.sleep(0.1)
        return left

    def log(self) -> str:
        return self.model.format_log()


def descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def marked(marker: str) -> set[int]:
    needle = f"{MARKER}={marker}".encode()
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and is_alive(int(entry.name)):
            with contextlib.suppress(OSError):
                if needle in (entry / "environ").read_bytes().split(b"\0"):
                    found.add(int(entry.name))
    return found


def is_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


@contextlib.asynccontextmanager
async def agent_run(
    spec: AgentSpec,
    scenario: str,
    tmp_path: Path,
    server_env: dict[str, str],
    *,
    custom: bool = True,
    open_session: bool = True,
    node_on_path: bool = True,
    **settings: Any,
) -> AsyncIterator[AgentRun]:
    """The model server with `scenario`'s script, a git workspace, acpls (custom or generic mode)
    with the agent configured offline, and an open session (mode set, signed in) ready to prompt
    (`open_session=False`: no sign-in and no session yet, for tests of those; `node_on_path=False`:
    the agent's PATH has every system program but Node.js and npm).
    Anything of the run still alive at the end is killed (the test checks it with
    `exit_editor`)."""
    workspace = make_workspace(tmp_path / "ws")
    home = tmp_path / "home"
    home.mkdir()
    marker = uuid.uuid4().hex
    script = load_script(spec.script_dir, scenario, workspace=str(workspace))
    with ModelServer(script, log_path=tmp_path / "model.jsonl") as model:
        spec.prepare_home(model.url, home)
        env = _base_env(home, node_on_path=node_on_path) | spec.env(model.url, home)
        env[MARKER] = marker
        agent = {"command": str(executable(spec.name)), "args": list(spec.args), "env": env}
        async with disk_editor(server_env) as editor:
            run = AgentRun(spec, editor, model, workspace, custom, marker)
            try:
                server = editor.client._server
                run.server_pid = server.pid if server is not None else 0
                await start(
                    editor.client,
                    workspace,
                    agent,
                    custom=custom,
                    protocolVersion=spec.protocol,
                    env={"remove": ["*"]},
                    **settings,
                )
                if open_session:
                    await _open_session(run)
                yield run
            finally:
                _kill(run)


async def _open_session(run: AgentRun) -> None:
    spec = run.spec
    if spec.auth_method:
        await asyncio.wait_for(
            command(run.client, "acpls.authenticate", {"methodId": spec.auth_method}),
            START_TIMEOUT,
        )
    result = await asyncio.wait_for(command(run.client, "acpls.newSession", {}), START_TIMEOUT)
    run.session_id = result["sessionId"]
    if spec.mode:
        await asyncio.wait_for(
            command(
                run.client, "acpls.setMode", {"sessionId": run.session_id, "modeId": spec.mode}
            ),
            START_TIMEOUT,
        )
    run.note_processes()


def _kill(run: AgentRun) -> None:
    for pid in run.leftovers():
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


# --- checks shared by the tests -------------------------------------------------------------------


def undo_hunks(current: str, hunks: list[dict[str, Any]]) -> str:
    """The file's text with every review hunk put back to its old text (what rejecting all of
    them must give)."""
    edits = [{"range": h["range"], "newText": h["oldText"]} for h in hunks]
    return apply_text_edits(current, edits)


def preview_result(before: str, preview: dict[str, Any], path: Path) -> str:
    """`before` with the preview's edits for `path` applied (what allowing must give)."""
    text = before
    for change in preview.get("documentChanges") or []:
        document = change.get("textDocument")
        if document and uri_to_path(document["uri"]) == str(path):
            text = apply_text_edits(text, change["edits"])
    return text


def disk_text(path: Path) -> str | None:
    return path.read_bytes().decode("utf-8") if path.exists() else None
