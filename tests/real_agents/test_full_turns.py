"""Whole turns of real published agents through the real acpls (tests/real_agents/harness.py):
follow, permission prompts with every option and an exact preview, allow and reject, command
output, review of every change (end-of-turn command writes included), rejectAll, cancel, and no
process left behind. tests/real_agents/README.md lists what each agent does and what acpls does
about it."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import command
from tests.real_agents.harness import (
    AGENTS,
    CANCEL_SECONDS,
    COMMAND_OUTPUT,
    EDITED,
    LEGACY,
    NOTES,
    REPORT,
    SHOP,
    AgentRun,
    AgentSpec,
    agent_run,
    disk_text,
    preview_result,
    undo_hunks,
)

# (agent, custom mode): every agent in custom mode; Claude (v2) and the v1 agents whose output or
# edits reach a generic editor differently (Gemini: fs/*, Codex: a terminal, Copilot: content,
# OpenCode: fs/write_text_file racing its own disk write) in generic mode.
VARIANTS = [
    ("claude-v2", True),
    ("claude-v1", True),
    ("gemini", True),
    ("qwen", True),
    ("codex", True),
    ("copilot", True),
    ("opencode", True),
    ("claude-v2", False),
    ("gemini", False),
    ("codex", False),
    ("copilot", False),
    ("opencode", False),
]
IDS = [f"{agent}-{'custom' if custom else 'generic'}" for agent, custom in VARIANTS]


KEEP_MINE = "Keep mine"


def option_kind(params: dict[str, Any]) -> str:
    """The tool kind a permission request is about (custom: its tool call; generic: the
    `"<title> (<kind>)"` message)."""
    if "toolCall" in params:
        return params["toolCall"].get("kind") or ""
    first = params["message"].splitlines()[0]
    return first.rsplit("(", 1)[-1].rstrip(")")


def edit_request(run: AgentRun, answers: Answers) -> dict[str, Any]:
    """The one permission request about an edit (custom mode)."""
    (params,) = [p for p, _text in answers.asked if option_kind(p) == "edit"]
    return params


class Answers:
    """The user's answers to permission prompts: `choice` (an option kind) for every prompt, and
    what the open file held when each was asked."""

    def __init__(self, run: AgentRun, choice: str) -> None:
        self.run = run
        self.choice = choice
        self.asked: list[tuple[dict[str, Any], str | None]] = []
        self.generic: list[Any] = []
        # Questions about an agent's disk write over unsaved text (generic mode) and the answer.
        self.conflicts: list[Any] = []
        self.conflict_choice = "keepMine"
        run.editor.answer_permission = self.custom
        run.editor.answer_message = self.generic_answer

    def _option(self, kind: str, choice: str) -> tuple[str, str, str]:
        options = self.run.spec.options[kind]
        return next(o for o in options if o[2] == choice)

    def custom(self, params: Any) -> dict[str, Any]:
        params = _plain(params)
        self.asked.append((params, self.run.buffer(self.run.shop)))
        option_id, _, _ = self._option(option_kind(params), self.choice)
        return {"optionId": option_id}

    def generic_answer(self, params: Any) -> str:
        titles = [a.title for a in params.actions or []]
        if KEEP_MINE in titles:  # a disk-write conflict, not a permission prompt
            self.conflicts.append(params)
            return KEEP_MINE if self.conflict_choice == "keepMine" else titles[-1]
        self.generic.append(params)
        message = {"message": params.message}
        _, name, _ = self._option(option_kind(message), self.choice)
        return name


def _plain(value: Any) -> Any:
    from tests.e2e.conftest import as_dict

    return as_dict(value)


def check_permissions(run: AgentRun, answers: Answers, kinds: set[str]) -> None:
    """A prompt for each kind the agent asks about, with every option it sent, in its order; the
    edit's preview applied to the file as it was gives exactly the agent's result."""
    spec = run.spec
    if run.custom:
        asked = {option_kind(p): (p, text) for p, text in answers.asked}
        assert set(asked) == kinds, answers.asked
        for kind, (params, _text) in asked.items():
            got = [(o["optionId"], o["name"], o["kind"]) for o in params["options"]]
            assert got == list(spec.options[kind]), params
        params, text = asked["edit"]
        assert not params.get("previewProblems"), params
        assert text == SHOP
        assert preview_result(SHOP, params["preview"], run.shop) == EDITED, params
    else:
        asked_generic = {option_kind({"message": m.message}): m for m in answers.generic}
        assert set(asked_generic) == kinds, answers.generic
        for kind, message in asked_generic.items():
            assert [a.title for a in message.actions] == [o[1] for o in spec.options[kind]]
        # One "path +added -removed" line for the edit's file.
        assert f"{run.shop} +1 -1" in asked_generic["edit"].message, asked_generic["edit"]


def check_follow(run: AgentRun) -> None:
    """The editor was taken to every file the agent sent as a location (custom mode compares
    with the locations it sent; generic mode has only window/showDocument to go by)."""
    followed = set(run.follows())
    assert str(run.shop) in followed, run.follows()
    if run.custom:
        located = run.located_paths()
        assert str(run.shop) in located
        assert set(located) <= followed, (located, run.follows())


def shows_output(text: str) -> bool:
    """The command's output is in `text`, not just its command line (`... && echo
    report-written`, which permission prompts and tool-call titles show)."""
    return COMMAND_OUTPUT in text.replace(f"echo {COMMAND_OUTPUT}", "")


def check_command_output(run: AgentRun) -> None:
    spec = run.spec
    if not run.custom:
        if spec.output_via is not None:
            assert any(shows_output(t) for t in run.transcripts()), run.transcripts()
        return
    calls = run.tool_calls().values()
    if spec.output_via == "terminal":
        assert shows_output(run.terminal_text()), run.terminal_text()
    elif spec.output_via == "content":
        texts = [
            item["content"].get("text", "")
            for call in calls
            for item in call.get("content") or []
            if item.get("type") == "content"
        ]
        assert any(shows_output(t) for t in texts), list(calls)
    elif spec.output_via == "rawOutput":
        assert any(shows_output(str(c.get("rawOutput"))) for c in calls), list(calls)


def check_review(run: AgentRun, files: list[dict[str, Any]]) -> None:
    """Every change of the turn, exactly: undoing every hunk gives the original bytes back."""
    by_path = {f["path"]: f for f in files}
    assert set(by_path) == {str(run.shop), str(run.report), str(run.legacy)}, files
    shop, report = by_path[str(run.shop)], by_path[str(run.report)]
    legacy = by_path[str(run.legacy)]
    assert legacy["status"] == "deleted" and "note" not in legacy, legacy
    assert legacy.get("sessionId") == run.session_id, legacy
    assert undo_hunks("", legacy["hunks"]) == LEGACY, legacy
    assert shop["status"] == "modified" and "note" not in shop, shop
    assert shop["sessionId"] == run.session_id
    assert undo_hunks(EDITED, shop["hunks"]) == SHOP, shop
    assert report["status"] == "added" and "note" not in report, report
    assert report.get("sessionId") == run.session_id, report
    assert undo_hunks(REPORT, report["hunks"]) == "", report


def file_text(run: AgentRun) -> str | None:
    """shop.py as the user sees it: the open buffer."""
    return run.buffer(run.shop)


def variant(agent: str) -> AgentSpec:
    return AGENTS[agent]


@pytest.mark.parametrize(("agent", "custom"), VARIANTS, ids=IDS)
async def test_edit_turn_allowed_then_review_and_reject_all(
    agent: str, custom: bool, tmp_path: Path, server_env: dict[str, str]
):
    spec = variant(agent)
    async with agent_run(spec, "edit_turn", tmp_path, server_env, custom=custom) as run:
        run.open(run.shop)
        answers = Answers(run, "allow_once")
        result = await run.prompt("Round the total and write a report")
        assert result["stopReason"] == "end_turn", run.log()
        run.editor_notices_disk()
        # Allowed: the agent's text in the open buffer and, saved or written by the agent, on disk.
        assert file_text(run) == EDITED, run.log()
        if spec.writes_through_client:
            # Its write went to the open buffer (workspace/applyEdit), unsaved, as an editor's own.
            assert disk_text(run.shop) == SHOP
            run.save_all()
        assert disk_text(run.shop) == EDITED
        assert disk_text(run.report) == REPORT
        assert not run.legacy.exists()
        check_permissions(run, answers, {"edit", "execute"})
        # The buffer held no unsaved text: nothing to ask about (OpenCode's own disk write often
        # lands before its fs/write_text_file of the same text; acpls asked then).
        assert answers.conflicts == [] and run.editor.conflicts == [], answers.conflicts
        check_follow(run)
        check_command_output(run)
        check_review(run, await run.review())
        # rejectAll restores the original exactly (the open buffer, and on disk once saved).
        assert await run.reject_all() == []
        run.editor_notices_disk()
        assert file_text(run) == SHOP
        run.save_all()
        assert disk_text(run.shop) == SHOP
        assert not run.report.exists()
        assert disk_text(run.legacy) == LEGACY
        await run.exit_editor()


@pytest.mark.parametrize(("agent", "custom"), VARIANTS, ids=IDS)
async def test_edit_rejected_changes_nothing(
    agent: str, custom: bool, tmp_path: Path, server_env: dict[str, str]
):
    spec = variant(agent)
    async with agent_run(spec, "reject_turn", tmp_path, server_env, custom=custom) as run:
        run.open(run.shop)
        answers = Answers(run, "reject_once")
        result = await run.prompt("Round the total")
        assert result["stopReason"] == spec.rejected_stop, run.log()
        run.editor_notices_disk()
        assert len(answers.asked) + len(answers.generic) == 1, run.log()
        assert file_text(run) == SHOP and disk_text(run.shop) == SHOP
        assert not [e for e in run.editor.edits if str(run.shop.name) in str(e)], run.editor.edits
        assert await run.review() == []
        await run.exit_editor()


@pytest.mark.parametrize(("agent", "custom"), VARIANTS, ids=IDS)
async def test_cancel_while_the_model_stalls(
    agent: str, custom: bool, tmp_path: Path, server_env: dict[str, str]
):
    spec = variant(agent)
    async with agent_run(spec, "cancel", tmp_path, server_env, custom=custom) as run:
        turn = asyncio.ensure_future(run.prompt("Look at shop.py"))
        stalled = await asyncio.to_thread(run.model.stalled.wait, 120)
        assert stalled and not turn.done(), run.log()
        started = time.monotonic()
        await run.cancel()
        result = await asyncio.wait_for(turn, CANCEL_SECONDS)
        took = time.monotonic() - started
        print(f"{agent}: the cancelled turn ended {took:.2f}s after acpls.cancel")
        assert result["stopReason"] == "cancelled", (result, took)
        # acpls still answers, and the session is still there.
        sessions = await asyncio.wait_for(command(run.client, "acpls.sessions", {}), 10)
        assert run.session_id in [s["sessionId"] for s in sessions["sessions"]]
        assert disk_text(run.shop) == SHOP
        await run.exit_editor()


@pytest.mark.parametrize(("agent", "custom"), VARIANTS, ids=IDS)
async def test_new_file_written_then_rejected(
    agent: str, custom: bool, tmp_path: Path, server_env: dict[str, str]
):
    spec = variant(agent)
    async with agent_run(spec, "write_turn", tmp_path, server_env, custom=custom) as run:
        answers = Answers(run, "allow_once")
        result = await run.prompt("Write the notes")
        assert result["stopReason"] == "end_turn", run.log()
        assert disk_text(run.notes) == NOTES, (run.editor.edits, run.log())
        if custom:
            # The preview creates the file with exactly the agent's text.
            params = edit_request(run, answers)
            assert not params.get("previewProblems"), params
            kinds = [c.get("kind") for c in params["preview"]["documentChanges"]]
            assert "create" in kinds, params
            assert preview_result("", params["preview"], run.notes) == NOTES, params
            assert str(run.notes) in run.follows()
        else:
            (message,) = answers.generic
            assert f"{run.notes} +3 -0" in message.message, message
        (added,) = await run.review()
        assert added["path"] == str(run.notes) and added["status"] == "added", added
        assert added.get("sessionId") == run.session_id and "note" not in added, added
        assert undo_hunks(NOTES, added["hunks"]) == "", added
        assert await run.reject_all() == []
        assert not run.notes.exists()
        await run.exit_editor()


# The user's unsaved text in shop.py when the turn starts: a line the agent's edit does not touch.
UNSAVED = "# keep this note\n" + SHOP
UNSAVED_EDITED = "# keep this note\n" + EDITED


@pytest.mark.parametrize(
    ("agent", "custom"),
    [v for v in VARIANTS if AGENTS[v[0]].writes_through_client],
    ids=[i for v, i in zip(VARIANTS, IDS, strict=True) if AGENTS[v[0]].writes_through_client],
)
async def test_unsaved_text_survives_the_turn_and_reject_all(
    agent: str, custom: bool, tmp_path: Path, server_env: dict[str, str]
):
    """An agent that edits through the editor (fs/*) works on the open buffer, unsaved text
    included: the edit lands beside the user's text, review lists only the agent's line, and
    rejectAll gives back the user's unsaved text, never the file on disk."""
    spec = variant(agent)
    async with agent_run(spec, "edit_turn", tmp_path, server_env, custom=custom) as run:
        run.editor.open(run.shop, UNSAVED)
        Answers(run, "allow_once")
        result = await run.prompt("Round the total and write a report")
        assert result["stopReason"] == "end_turn", run.log()
        assert file_text(run) == UNSAVED_EDITED, run.log()
        assert disk_text(run.shop) == SHOP
        files = {f["path"]: f for f in await run.review()}
        assert set(files) == {str(run.shop), str(run.report), str(run.legacy)}, files
        shop = files[str(run.shop)]
        assert undo_hunks(UNSAVED_EDITED, shop["hunks"]) == UNSAVED, shop
        assert [(h["oldText"], h["newText"]) for h in shop["hunks"]] == [
            ("    return sum(prices)\n", "    return round(sum(prices), 2)\n")
        ], shop
        assert await run.reject_all() == []
        assert file_text(run) == UNSAVED
        assert disk_text(run.shop) == SHOP and not run.report.exists()
        assert disk_text(run.legacy) == LEGACY
        await run.exit_editor()


@pytest.mark.parametrize(
    ("agent", "custom", "choice"),
    [
        ("claude-v2", True, "keepMine"),
        ("claude-v1", True, "takeTheirs"),
        ("claude-v2", False, "keepMine"),
    ],
    ids=["claude-v2-custom-keep", "claude-v1-custom-take", "claude-v2-generic-keep"],
)
async def test_disk_write_over_unsaved_text_asks_the_user(
    agent: str, custom: bool, choice: str, tmp_path: Path, server_env: dict[str, str]
):
    """Claude Code edits the file on disk while the editor holds unsaved text in it: the user's
    text is never replaced unasked; the editor is asked (keep mine / take the agent's)."""
    spec = variant(agent)
    async with agent_run(spec, "edit_turn", tmp_path, server_env, custom=custom) as run:
        run.editor.open(run.shop, UNSAVED)
        answers = Answers(run, "allow_once")
        answers.conflict_choice = choice
        run.editor.answer_conflict = lambda params: {"choice": choice}
        result = await run.prompt("Round the total and write a report")
        assert result["stopReason"] == "end_turn", run.log()
        assert disk_text(run.shop) == EDITED
        run.editor_notices_disk()  # an editor leaves a buffer with unsaved changes alone
        # The question comes without holding up the turn: wait for it (bounded), and for the
        # agent's text in the buffer when the user took it.
        expected = UNSAVED if choice == "keepMine" else EDITED
        async with asyncio.timeout(30):
            asked = run.editor.conflicts if custom else answers.conflicts
            while not asked or file_text(run) != expected:  # noqa: ASYNC110 - editor handlers
                await asyncio.sleep(0.05)
        if custom:
            (conflict,) = [c for c in run.editor.conflicts if c["kind"] == "diskWrite"]
            assert conflict["path"] == str(run.shop), conflict
            assert conflict["mine"] == UNSAVED and conflict["theirs"] == EDITED, conflict
        else:
            (conflict,) = answers.conflicts
            assert str(run.shop) in conflict.message, conflict
        await run.review()  # acpls has taken the answer
        assert file_text(run) == expected
        await run.exit_editor()
