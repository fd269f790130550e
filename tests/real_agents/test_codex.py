"""The real Codex beyond the full turns of test_full_turns.py.

- Signing in through `acpls.authenticate` with its `openai-api-key` method (an `env_var` method):
  the agent starts without the key, acpls asks the editor for it (`acpls/authEnv`), restarts the
  agent with it and signs in; the key the user typed is what the model server receives.
- A sandbox that cannot run: every command and edit fails and Codex sends no tool call for it;
  acpls shows the failure Codex writes to its stderr (a message, and a notice in the session)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types

from tests.e2e.conftest import as_dict, command
from tests.real_agents.harness import (
    AGENTS,
    EDITED,
    LEGACY,
    REPORT,
    SHOP,
    START_TIMEOUT,
    agent_run,
    disk_text,
)
from tests.real_agents.test_full_turns import check_review, shows_output

TYPED_KEY = "sk-typed-by-the-user"


def _codex_env_with_tmp_home(url: str, home: Path) -> dict[str, str]:
    """HOME (and so CODEX_HOME) inside the temporary directory: Codex refuses to put its sandbox
    helper there, and its sandbox cannot run."""
    env = AGENTS["codex"].env(url, home)
    del env["TMPDIR"]
    return env


def _codex_env_without_key(url: str, home: Path) -> dict[str, str]:
    env = AGENTS["codex"].env(url, home)
    del env["OPENAI_API_KEY"]
    return env


async def test_codex_openai_api_key_sign_in_asks_the_editor_and_reaches_the_model(
    tmp_path: Path, server_env: dict[str, str]
):
    spec = attrs.evolve(AGENTS["codex"], env=_codex_env_without_key, auth_method=None)
    async with agent_run(spec, "sign_in", tmp_path, server_env, open_session=False) as run:
        asked: list[dict[str, Any]] = []

        @run.client.feature("acpls/authEnv")
        def auth_env(params: Any) -> Any:
            asked.append(as_dict(params))
            return {"values": {"OPENAI_API_KEY": TYPED_KEY}}

        await asyncio.wait_for(
            command(run.client, "acpls.authenticate", {"methodId": "openai-api-key"}),
            START_TIMEOUT,
        )
        (question,) = asked
        assert question["methodId"] == "openai-api-key", question
        assert [v["name"] for v in question["vars"]] == ["OPENAI_API_KEY"], question
        session = await asyncio.wait_for(command(run.client, "acpls.newSession", {}), START_TIMEOUT)
        run.session_id = session["sessionId"]
        result = await run.prompt("Are you signed in?")
        assert result["stopReason"] == "end_turn", run.log()
        turns = [r for r in run.model.requests if r.path.endswith("/responses")]
        assert turns, run.log()
        assert {r.headers.get("authorization") for r in turns} == {f"Bearer {TYPED_KEY}"}
        await run.exit_editor()


async def test_codex_sandbox_failure_is_shown_not_silenced(
    tmp_path: Path, server_env: dict[str, str]
):
    spec = attrs.evolve(AGENTS["codex"], env=_codex_env_with_tmp_home)
    async with agent_run(spec, "edit_turn", tmp_path, server_env) as run:
        run.open(run.shop)
        run.editor.answer_permission = lambda params: {"optionId": "approved"}
        result = await run.prompt("Round the total and write a report")
        assert result["stopReason"] == "end_turn", run.log()
        # The edit failed inside the sandbox, and Codex sent no tool call for it.
        assert disk_text(run.shop) == SHOP
        assert not [c for c in run.tool_calls().values() if c.get("kind") == "edit"]
        shown = [m.message for m in run.client.messages if m.type == types.MessageType.Error]
        sandbox = [m for m in shown if "could not use its sandbox" in m]
        assert any("codex-linux-sandbox" in m for m in sandbox), shown
        notices = [u for u in run.updates() if u.get("sessionUpdate") == "notice"]
        assert notices, run.updates()
        assert all(n["severity"] == "error" for n in notices), notices
        assert any("codex-linux-sandbox" in n["description"] for n in notices), notices
        await run.exit_editor()


# Codex's `auto` mode: edits and commands inside the workspace run in its sandbox without asking.
AUTO = {"codex-acp": "auto"}


def _modes(run: Any) -> list[str]:
    return [u["currentModeId"] for u in run.updates() if u.get("sessionUpdate") == "modes"]


async def test_codex_auto_mode_by_default_mode_runs_a_whole_turn_without_asking(
    tmp_path: Path, server_env: dict[str, str]
):
    """`defaultMode` puts Codex's new session in `auto` (it starts in `read-only`): the edit and
    the command run inside its workspace sandbox without a permission prompt; the editor sees
    the mode, the buffer and disk get the edit, the command's output reaches its terminal, and
    review lists every change exactly (rejectAll restores the original)."""
    async with agent_run(
        AGENTS["codex"], "auto_turn", tmp_path, server_env, defaultMode=AUTO
    ) as run:
        run.open(run.shop)
        result = await run.prompt("Round the total and write a report")
        assert result["stopReason"] == "end_turn", run.log()
        assert _modes(run)[-1] == "auto", run.updates()
        assert run.permission_requests() == [] and run.editor.message_requests == []
        run.editor_notices_disk()
        assert run.buffer(run.shop) == EDITED and disk_text(run.shop) == EDITED, run.log()
        assert disk_text(run.report) == REPORT and not run.legacy.exists()
        assert shows_output(run.terminal_text()), run.terminal_text()
        sandbox = [m.message for m in run.client.messages if "sandbox" in m.message]
        assert sandbox == [], sandbox
        check_review(run, await run.review())
        assert await run.reject_all() == []
        run.editor_notices_disk()
        assert run.buffer(run.shop) == SHOP and disk_text(run.shop) == SHOP
        assert not run.report.exists() and disk_text(run.legacy) == LEGACY
        await run.exit_editor()


async def test_codex_auto_mode_sandbox_failure_is_shown_not_silenced(
    tmp_path: Path, server_env: dict[str, str]
):
    """`auto` runs every command and edit inside Codex's sandbox, so where the sandbox cannot run
    (here: its helper refused under the temporary directory) each of them fails with no tool call
    and nothing asked: acpls shows the failure Codex writes to its stderr."""
    spec = attrs.evolve(AGENTS["codex"], env=_codex_env_with_tmp_home)
    async with agent_run(spec, "auto_turn", tmp_path, server_env, defaultMode=AUTO) as run:
        run.open(run.shop)
        result = await run.prompt("Round the total and write a report")
        assert result["stopReason"] == "end_turn", run.log()
        assert _modes(run)[-1] == "auto", run.updates()
        assert disk_text(run.shop) == SHOP and not run.report.exists()
        assert not [c for c in run.tool_calls().values() if c.get("kind") == "edit"]
        shown = [m.message for m in run.client.messages if m.type == types.MessageType.Error]
        assert any("could not use its sandbox" in m and "codex-linux-sandbox" in m for m in shown)
        notices = [u for u in run.updates() if u.get("sessionUpdate") == "notice"]
        assert any("codex-linux-sandbox" in n["description"] for n in notices), notices
        await run.exit_editor()
