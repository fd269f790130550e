"""Private state and secrets (issue 27, editors/protocol.md section 10), attacked through the real
acpls: another user on the machine must not read what acpls keeps (a checkpoint's copy of a
private `.env`, a transcript), and a value acpls knows is secret (an API key it put into the
agent's environment, a sign-in value the user typed) never reaches its transcript or its log.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.conftest import as_dict, scripted, start
from tests.e2e.conftest import command as _command
from tests.e2e.hostile_support import capture_server_log
from tests.e2e.test_checkpoints import run_command as terminal
from tests.registry.support import fixture_registry, registry_server

API_KEY = "sk-proj-e2e-9f8e7d6c5b4a39281706"
SIGN_IN_VALUE = "typed-by-the-user-4711-zz"
DOTENV = "DATABASE_PASSWORD=hunter2-but-longer\n"


def open_to_others(root: Path) -> list[str]:
    """Every entry under `root` (itself included) that a group or another user may read, write
    or enter; symlinks aside. acpls makes folders 0700 and files 0600 (a program it keeps 0700;
    git's pack files are 0400): none has a group or other bit."""
    bad: list[str] = []
    for folder, _dirs, files in os.walk(root):
        for path in (folder, *(os.path.join(folder, name) for name in files)):
            info = os.lstat(path)
            mode = stat.S_IMODE(info.st_mode)
            if not stat.S_ISLNK(info.st_mode) and mode & 0o077:
                bad.append(f"{os.path.relpath(path, root)} {mode:o}")
    return bad


def say(text: str) -> dict[str, Any]:
    return {
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": text},
        }
    }


FORM = {
    "type": "object",
    "properties": {"token": {"type": "string", "title": "A token"}},
    "required": ["token"],
}


async def command(client: Any, name: str, arg: dict[str, Any] | None = None) -> Any:
    return as_dict(await _command(client, name, arg))


async def until(condition: Callable[[], Any], limit: float = 20) -> None:
    async with asyncio.timeout(limit):
        while not condition():  # noqa: ASYNC110 - files on disk have no event to await
            await asyncio.sleep(0.02)


async def comes_to_nothing(probe: Callable[[], list[str]], limit: float = 20) -> None:
    """Wait until `probe()` finds nothing (acpls narrows old state off its loop); if it never
    does, fail with what it still finds."""
    with contextlib.suppress(TimeoutError):
        await until(lambda: probe() == [], limit)
    assert probe() == []


def transcript_text(state_dir: Path) -> str:
    return "".join(
        p.read_text(encoding="utf-8") for p in (state_dir / "acpls" / "transcripts").glob("*.md")
    )


async def test_everything_acpls_keeps_is_private(client, workspace, tmp_path, state_dir):
    """A turn that writes the workspace (a checkpoint of a private `.env`), runs a terminal, asks
    a question in a file, and a write over unsaved changes shown as a proposed file: every folder
    and file acpls made under its state folder is 0700/0600, while the umask its terminals
    inherit is left as the user's."""
    dotenv = workspace / ".env"
    dotenv.write_text(DOTENV, encoding="utf-8")
    dotenv.chmod(0o600)
    calc = workspace / "calc.py"
    question = {
        "request": "elicitation/create",
        "params": {
            "sessionId": "$sessionId",
            "mode": "form",
            "message": "?",
            "requestedSchema": FORM,
        },
    }
    write_calc = {
        "request": "fs/write_text_file",
        "params": {"sessionId": "$sessionId", "path": str(calc), "content": "agent's\n"},
    }
    new_file = {
        "request": "fs/write_text_file",
        "params": {"sessionId": "$sessionId", "path": str(workspace / "new.txt"), "content": "n\n"},
    }
    turns = [
        [new_file, *terminal("echo ran > by-terminal.txt"), question, say("done")],
        [write_calc, say("tried")],
    ]
    agent = scripted({"protocol": 1, "on_prompt": turns}, tmp_path / "agent.jsonl")
    await start(client, workspace, agent, custom=False)
    prompt = asyncio.ensure_future(command(client, "acpls.prompt", {"text": "go"}))
    await until(lambda: [d for d in client.shown_documents if d.uri.endswith(".json")])
    form = next(d for d in client.shown_documents if d.uri.endswith(".json"))
    form_path = Path(form.uri.removeprefix("file://"))
    assert stat.S_IMODE(form_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(form_path.parent.stat().st_mode) == 0o700
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(form.uri))
    )  # the question is cancelled; the turn goes on
    first = await asyncio.wait_for(prompt, 30)

    # The user has unsaved changes to calc.py; the agent writes it; the user looks at the
    # agent's text (a proposed file in the state folder), then keeps theirs.
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=calc.as_uri(), language_id="python", version=1, text="mine, unsaved\n"
            )
        )
    )
    answers = iter(["Show the diff", "Keep mine"])

    def answer(params: types.ShowMessageRequestParams) -> Any:
        title = next(answers)
        return next(a for a in params.actions or [] if a.title == title)

    client.answer_message_request = answer
    await command(client, "acpls.prompt", {"sessionId": first["sessionId"], "text": "again"})

    acpls_state = state_dir / "acpls"
    transcripts = list((acpls_state / "transcripts").glob("*.md"))
    proposed = list((acpls_state / "proposed").iterdir())
    logs = list((acpls_state / "checkpoints").glob("*/checkpoints.json"))
    assert transcripts and proposed and logs, (transcripts, proposed, logs)
    assert open_to_others(acpls_state) == []
    # acpls' umask is the user's, and so its terminals': a file they make keeps the user's mode.
    made = workspace / "by-terminal.txt"
    assert stat.S_IMODE(made.stat().st_mode) == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


async def test_old_state_readable_by_others_is_narrowed_at_start(
    client, workspace, tmp_path, state_dir
):
    """State an older acpls left 0755/0644 (a transcript, rules, a checkpoint log) is made
    0700/0600 when acpls starts; a symlink planted there is not followed (the workspace file it
    points at keeps its mode)."""
    old = state_dir / "acpls"
    (old / "transcripts").mkdir(parents=True)
    (old / "checkpoints" / "0123").mkdir(parents=True)
    files = [
        old / "transcripts" / "old.md",
        old / "rules.json",
        old / "checkpoints" / "0123" / "checkpoints.json",
    ]
    for path in files:
        path.write_text("# old\n", encoding="utf-8")
        path.chmod(0o644)
    for folder in (old, old / "transcripts", old / "checkpoints", old / "checkpoints" / "0123"):
        folder.chmod(0o755)
    readme = workspace / "README.md"
    readme.chmod(0o644)
    (old / "planted").symlink_to(readme)
    await start(client, workspace, scripted({"protocol": 1}, tmp_path / "agent.jsonl"))
    await comes_to_nothing(lambda: open_to_others(old))
    assert stat.S_IMODE(readme.stat().st_mode) == 0o644


async def test_terminal_and_agent_output_never_write_the_api_key(
    client, workspace, tmp_path, state_dir
):
    """The `agent` setting gives the agent OPENAI_API_KEY; its terminal prints it (printenv and
    echo), its message carries it split across two chunks, its stderr prints it: the transcript
    and acpls' own log hold `[redacted: OPENAI_API_KEY]`, never the key."""
    log = capture_server_log(client)
    half = len(API_KEY) // 2
    steps = [
        *terminal('printenv OPENAI_API_KEY; echo "key=$OPENAI_API_KEY"'),
        say(f"your key is {API_KEY[:half]}"),
        {"sleep": 0.3},  # the halves reach the transcript in two writes
        say(f"{API_KEY[half:]}, keep it safe"),
        {"stderr": f"debug: using key {API_KEY}"},
        say(" bye"),
    ]
    agent = scripted({"protocol": 1, "on_prompt": steps}, tmp_path / "agent.jsonl")
    agent["env"] = {"OPENAI_API_KEY": API_KEY}
    await start(client, workspace, agent, custom=False)
    await command(client, "acpls.prompt", {"text": "show me the key"})
    await until(lambda: "bye" in transcript_text(state_dir))
    await log.wait_for("debug: using key")
    text = transcript_text(state_dir)
    assert API_KEY not in text
    assert API_KEY[:half] not in text and API_KEY[half:] not in text
    assert "key=[redacted: OPENAI_API_KEY]" in text
    # The terminal's output may be written between the halves: the key still goes whole.
    assert "your key is " in text and "[redacted: OPENAI_API_KEY], keep it safe" in text
    assert API_KEY not in log.text()
    assert log.has("debug: using key [redacted: OPENAI_API_KEY]")
    log.close()


async def test_a_sign_in_value_never_reaches_the_transcript_or_the_log(
    client, workspace, tmp_path, state_dir
):
    """The user signs in through `acpls/authEnv` with a value whose name says nothing secret
    (SCRIPTED_LOGIN): it is secret because it is a sign-in answer. The agent repeats it in its
    message and on stderr: both are redacted."""
    log = capture_server_log(client)

    @client.feature("acpls/authEnv")
    def auth_env(params: Any) -> Any:
        return {"values": {"SCRIPTED_LOGIN": SIGN_IN_VALUE}}

    method = {
        "id": "login",
        "name": "Log in",
        "type": "env_var",
        "vars": [{"name": "SCRIPTED_LOGIN"}],
    }
    script = {
        "protocol": 1,
        "on_initialize": {"authMethods": [method]},
        "signed_in_when": {"env": "SCRIPTED_LOGIN"},
        "on_prompt": [
            say(f"signed in as {SIGN_IN_VALUE}."),
            {"stderr": f"login value {SIGN_IN_VALUE}"},
            say(" bye"),
        ],
    }
    client.answer_message_request = lambda params: (params.actions or [None])[0]
    await start(client, workspace, scripted(script, tmp_path / "agent.jsonl"))
    await command(client, "acpls.prompt", {"text": "who am I"})
    await until(lambda: "bye" in transcript_text(state_dir))
    await log.wait_for("login value")
    text = transcript_text(state_dir)
    assert SIGN_IN_VALUE not in text
    assert "signed in as [redacted: SCRIPTED_LOGIN]." in text
    assert SIGN_IN_VALUE not in log.text()
    assert log.has("login value [redacted: SCRIPTED_LOGIN]")
    log.close()


@pytest.fixture
def homes(server_env: dict[str, str], tmp_path: Path) -> dict[str, Path]:
    """The server's own cache and data homes (registry cache, agent installs)."""
    cache, data = tmp_path / "cache", tmp_path / "data"
    server_env["XDG_CACHE_HOME"], server_env["XDG_DATA_HOME"] = str(cache), str(data)
    return {"cache": cache / "acpls", "data": data / "acpls"}


async def test_registry_cache_and_agent_installs_are_private(homes, client, workspace, tmp_path):
    """An install an older acpls left 0755 is narrowed at start (its program still runs for its
    owner); the registry cache acpls writes and the agent it installs are its user's alone."""
    old_program = homes["data"] / "agents" / "old-agent" / "0.1" / "bin" / "agent"
    old_program.parent.mkdir(parents=True)
    old_program.write_text("#!/bin/sh\n", encoding="utf-8")
    old_program.chmod(0o755)
    for folder in old_program.parents:
        if folder == homes["data"].parent:
            break
        folder.chmod(0o755)
    with registry_server() as server:
        server.set_registry(fixture_registry(server, "v1_basic", tmp_path / "agent.jsonl"))
        url = server.url("registry.json")
        await start(client, workspace, "demo", custom=True, registry={"url": url})
        await command(client, "acpls.agents", {"refresh": True})
        installed = await command(client, "acpls.installAgent", {"agent": "tar-agent"})
    program = Path(installed["command"][0])
    assert list((homes["cache"] / "registry").glob("*.json"))
    assert program.is_file() and homes["data"] in program.parents
    await comes_to_nothing(lambda: open_to_others(homes["data"]))
    assert open_to_others(homes["cache"]) == []
    for runnable in (program, old_program):
        assert stat.S_IMODE(runnable.stat().st_mode) & 0o700 == 0o700
