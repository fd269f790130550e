"""The controllers of core/ built from fakes of just the collaborators they are handed, no hub
(issue 17: each controller given the narrow collaborators it uses). SessionRegistry, SignIn,
review and steering have theirs in test_session_registry.py, test_sign_in.py and
test_narrow_parts.py; here are the update router, questions, session administration, answering
the agent (permissions, file reads) and checkpoints. Each test checks behaviour the controller
owns, so it fails when that behaviour breaks, not only when a constructor changes.

The checkpoint and review closers are proven here: in tests/e2e/test_session_close.py the failed
turn's own end already drops the open checkpoint and stops the watcher, so that test passes
without them. What only they drop is a fork still running after a turn, a continued session's
preamble, and the credit of a shared watcher (the tests named checkpoints_* and review_*).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any, cast

import orjson
import pytest

from acpls.acp.connection import AgentConnection
from acpls.acp.transport import AcpError
from acpls.core import ports
from acpls.core.agent_requests import AgentRequests
from acpls.core.checkpoints import CheckpointController
from acpls.core.elicitation import Questions
from acpls.core.errors import CommandError
from acpls.core.follow import FollowController
from acpls.core.parts import ReviewPart
from acpls.core.pump import FlushScheduler
from acpls.core.review import ReviewController
from acpls.core.routing import UpdateRouter
from acpls.core.secrets import KnownSecrets
from acpls.core.session import Session, Turn
from acpls.core.session_admin import SessionAdmin
from acpls.core.sessions import SessionRegistry
from acpls.editor import messages as msg
from acpls.settings import Settings
from acpls.supervisor import TaskSupervisor
from acpls.translate.session_updates import SessionUpdateNormalizer
from acpls.translate.terminals import TerminalStore
from tests.fuzz.frame_fuzzer import FakeEditor


class Editor(FakeEditor):
    """Records what it is sent; answers requests with `answer` (None: never, until withdrawn)."""

    def __init__(self, root: str, answer: Any = None) -> None:
        super().__init__(root)
        self.answer = answer
        self.sent: list[tuple[str, Any]] = []
        self.asked: list[tuple[str, Any]] = []
        self.withdrawn: list[str] = []
        self.ids: list[str] = []  # the editor request ids, as $/cancelRequest names them
        self.arrived = asyncio.Event()

    def notify(self, method: str, params: Any) -> None:
        super().notify(method, params)
        self.sent.append((method, params))

    async def request(self, method: str, params: Any, msg_id: str) -> Any:
        self.asked.append((method, params))
        self.ids.append(msg_id)
        self.arrived.set()
        if self.answer is None:
            await asyncio.Event().wait()
        return self.answer

    def cancel_request(self, msg_id: str) -> None:
        self.withdrawn.append(msg_id)

    async def until_asked(self, count: int) -> None:
        while len(self.asked) < count:
            self.arrived.clear()
            await self.arrived.wait()


def session(session_id: str = "s1", agent: str = "a", version: int = 2) -> Session:
    return Session(
        id=session_id, cwd="/ws", normalizer=SessionUpdateNormalizer(version), agent=agent
    )


def port(editor: Editor) -> ports.EditorPort:
    return cast(ports.EditorPort, editor)


def chunk(text: str) -> dict[str, Any]:
    return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}


def texts(editor: Editor, session_id: str) -> list[str]:
    """The message text the editor was sent for `session_id`, in order."""
    found = []
    for method, params in editor.sent:
        updates = []
        if method == msg.SESSION_UPDATE and params.sessionId == session_id:
            updates = [params.update]
        elif method == msg.SESSION_UPDATES and params.sessionId == session_id:
            updates = list(params.updates)
        for update in updates:
            raw = editor.converter.unstructure(update)
            text = raw.get("content", {}).get("text") if isinstance(raw, dict) else None
            if isinstance(text, str):
                found.append(text)
    return found


# -- UpdateRouter: editor, session map, pump, terminal store, follow, review, tasks, hub ---------


class RouterHub:
    """RoutingHub: the settings, a URI's path, a failed v2 turn's error, the known secrets."""

    settings = Settings()
    secrets = KnownSecrets()

    def path_of(self, uri: str) -> str:
        return uri.removeprefix("file://")

    def turn_failure(self, session: Session, error: Any) -> CommandError:
        return CommandError(f"failed: {error.get('message')}")


class NoReview:
    def tool_call_seen(self, session: Session, state: Any, diffs_changed: bool) -> None:
        return


def router_on_fakes(
    tmp_path: Path, editor: Editor, sessions: dict[str, Session]
) -> tuple[UpdateRouter, FlushScheduler, TaskSupervisor]:
    tasks = TaskSupervisor("test")
    holder: list[UpdateRouter] = []
    pump = FlushScheduler(lambda: holder[0].flush())
    router = UpdateRouter(
        port(editor),
        sessions,
        pump,
        TerminalStore(),
        FollowController(port(editor), tasks, enabled=False),
        cast(ReviewPart, NoReview()),
        tasks,
        tmp_path,
        RouterHub(),
    )
    holder.append(router)
    return router, pump, tasks


async def test_router_keeps_a_new_sessions_early_updates_and_drops_an_ended_ones(
    tmp_path: Path,
) -> None:
    editor = Editor(str(tmp_path))
    sessions: dict[str, Session] = {}
    router, pump, tasks = router_on_fakes(tmp_path, editor, sessions)
    try:
        new = session("s-new")
        with router.expecting_sessions():  # session/new in flight: its first update comes early
            router.on_session_update({"sessionId": new.id, "update": chunk("early")})
            sessions[new.id] = new
            router.session_started(new, {})
        router.on_session_update({"sessionId": new.id, "update": chunk(" then more")})
        # No session/new in flight: an update for an unknown id is of an ended session.
        router.on_session_update({"sessionId": "s-gone", "update": chunk("late")})
        pump.flush_now()
        assert "".join(texts(editor, new.id)) == "early then more"  # chunks may coalesce
        assert texts(editor, "s-gone") == []
        assert router._early == {}
        assert new.id in router._transcripts
        router.session_closed(sessions.pop(new.id))
        assert new.id not in router._transcripts
    finally:
        pump.close()
        router.close()
        await tasks.aclose()


class Leads:
    """FollowController as the router's look-ahead uses it."""

    def __init__(self) -> None:
        self.leads: list[tuple[Any, bool]] = []

    def lead(self, target: Any, *, urgent: bool = False) -> None:
        self.leads.append((target, urgent))


def location_line(session_id: str, line: int) -> bytes:
    update = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": f"t{line}",
        "locations": [{"path": "/ws/a.py", "line": line}],
    }
    message = {"method": "session/update", "params": {"sessionId": session_id, "update": update}}
    return orjson.dumps(message) + b"\n"


async def test_router_looks_ahead_to_a_blocks_newest_location(tmp_path: Path) -> None:
    """Before a block of the agent's output is handled, its newest location of a session acpls
    holds goes to follow (a flood shows its newest at once); a large block's is urgent."""
    editor = Editor(str(tmp_path))
    held = session()
    router, pump, tasks = router_on_fakes(tmp_path, editor, {held.id: held})
    leads = Leads()
    router.follow = cast(FollowController, leads)
    try:
        block = b"".join(location_line(held.id, n) for n in range(1, 4))
        router.look_ahead(b"tail of an earlier line\n" + block)
        router.look_ahead(location_line("not-held", 9) * 2)
        flood = b"".join(location_line(held.id, n) for n in range(1, 3001))
        router.look_ahead(b"\n" + flood)
        assert [(t.line, urgent) for t, urgent in leads.leads] == [(3, False), (3000, True)]
    finally:
        pump.close()
        router.close()
        await tasks.aclose()


async def test_router_ends_a_v2_turn_with_the_hubs_failure(tmp_path: Path) -> None:
    editor = Editor(str(tmp_path))
    held = session()
    router, pump, tasks = router_on_fakes(tmp_path, editor, {held.id: held})
    try:
        router.session_started(held, {})
        held.turn = Turn(asyncio.get_running_loop().create_future())
        router.route(
            held,
            {"sessionUpdate": "state_update", "state": "idle", "stopReason": "error",
             "error": {"message": "no key"}},
        )  # fmt: skip
        with pytest.raises(CommandError, match="failed: no key"):
            held.turn.done.result()
    finally:
        pump.close()
        router.close()
        await tasks.aclose()


# -- Questions: editor, session map, tasks, state directory ----------------------------------------

QUESTION = {
    "sessionId": "s1",
    "mode": "form",
    "message": "Which branch?",
    "requestedSchema": {
        "type": "object",
        "properties": {"branch": {"type": "string"}},
        "required": ["branch"],
    },
}


async def test_questions_answer_what_fits_the_form_and_ask_again_otherwise(
    tmp_path: Path,
) -> None:
    editor = Editor(str(tmp_path))
    tasks = TaskSupervisor("test")
    held = session()
    questions = Questions(port(editor), {held.id: held}, tasks, tmp_path)
    answers = iter([{"action": "accept", "content": {}}, {"action": "accept",
                    "content": {"branch": "main"}}])  # fmt: skip

    async def answer(method: str, params: Any, msg_id: str) -> Any:
        editor.asked.append((method, params))
        return next(answers)

    editor.request = answer  # type: ignore[method-assign]
    result = await questions.create(QUESTION)
    assert result == {"action": "accept", "content": {"branch": "main"}}
    assert [m for m, _ in editor.asked] == [msg.ELICITATION, msg.ELICITATION]
    assert "branch" in editor.asked[1][1].message  # the retry names what did not fit
    assert questions.open_count == 0
    await tasks.aclose()


async def test_questions_of_a_session_are_withdrawn_with_it(tmp_path: Path) -> None:
    editor = Editor(str(tmp_path))  # never answers
    tasks = TaskSupervisor("test")
    held, other = session("s1"), session("s2")
    questions = Questions(port(editor), {held.id: held, other.id: other}, tasks, tmp_path)
    mine = asyncio.ensure_future(questions.create(QUESTION))
    theirs = asyncio.ensure_future(questions.create({**QUESTION, "sessionId": "s2"}))
    await editor.until_asked(2)
    questions.withdraw("s1")
    assert await mine == {"action": "cancel"}
    assert len(editor.withdrawn) == 1
    assert not theirs.done() and questions.open_count == 1
    questions.withdraw()
    assert await theirs == {"action": "cancel"}
    assert questions.open_count == 0
    await tasks.aclose()


async def test_questions_refuse_a_request_that_is_no_question(tmp_path: Path) -> None:
    tasks = TaskSupervisor("test")
    questions = Questions(port(Editor(str(tmp_path))), {}, tasks, tmp_path)
    with pytest.raises(AcpError):
        await questions.create({"sessionId": "s1", "mode": "form"})
    await tasks.aclose()


async def test_questions_ignore_a_completion_that_does_not_fit(tmp_path: Path) -> None:
    editor = Editor(str(tmp_path))  # never answers: the agent's completion settles it
    tasks = TaskSupervisor("test")
    questions = Questions(port(editor), {}, tasks, tmp_path)
    url = {"sessionId": "s1", "mode": "url", "message": "Sign in", "url": "https://x.org",
           "elicitationId": "el-1"}  # fmt: skip
    asked = asyncio.ensure_future(questions.create(url))
    await editor.until_asked(1)
    for wrong in (None, {}, {"elicitationId": 5}):
        questions.complete(wrong)
    await asyncio.sleep(0)
    assert not asked.done() and questions.open_count == 1
    questions.complete({"elicitationId": "el-1", "_meta": None})
    assert await asked == {"action": "accept"}
    await tasks.aclose()


# -- SessionAdmin: editor, the registry, and SessionsHub -----------------------------------------


class AdminConn:
    def __init__(self, capabilities: set[str], version: int = 1) -> None:
        self.version = version
        self.capabilities: dict[str, Any] = {}
        self._caps = capabilities
        self.sent: list[tuple[str, Any]] = []
        self.pages: dict[str | None, dict[str, Any]] = {}

    def session_capability(self, name: str) -> bool:
        return name in self._caps

    async def request(self, method: str, params: Any) -> Any:
        self.sent.append((method, params))
        if method == "session/list":
            return self.pages[params.get("cursor")]
        return {}


class AdminHub:
    """SessionsHub: one agent `a` and the sessions of the registry."""

    def __init__(self, registry: SessionRegistry, conn: AdminConn) -> None:
        self.registry = registry
        self.conn = conn
        self.defaults_applied: list[str] = []  # sessions given the agent's defaults

    async def agent(self, name: Any = None) -> AgentConnection:
        return cast(AgentConnection, self.conn)

    async def agent_of(self, session: Session) -> AgentConnection:
        return cast(AgentConnection, self.conn)

    def agent_name_of(self, conn: AgentConnection) -> str:
        return "a"

    def session(self, session_id: Any) -> Session | None:
        found = self.registry.get(session_id)
        if found is None:
            raise CommandError(f"unknown session {session_id!r}")
        return found

    def adopt_session(
        self, session_id: str, cwd: str, response: dict[str, Any], conn: AgentConnection
    ) -> Session:
        return self.registry.add(session(session_id))

    def lifecycle_params(self, conn: AgentConnection, cwd: str) -> dict[str, Any]:
        return {"cwd": cwd, "mcpServers": []}

    async def apply_defaults(self, session: Session, result: Any) -> None:
        self.defaults_applied.append(session.id)

    async def with_auth(self, conn: AgentConnection, method: str, params: Any) -> Any:
        return await conn.request(method, params)

    def workspace_root(self) -> str:
        return "/ws"


def admin_on_fakes(caps: set[str]) -> tuple[SessionAdmin, SessionRegistry, AdminConn, list[str]]:
    registry = SessionRegistry()
    closed: list[str] = []
    registry.on_close("test", lambda s: closed.append(s.id))
    conn = AdminConn(caps)
    admin = SessionAdmin(port(Editor("/ws")), registry, AdminHub(registry, conn))
    return admin, registry, conn, closed


async def test_admin_close_asks_the_agent_then_ends_the_session_through_the_registry() -> None:
    admin, registry, conn, closed = admin_on_fakes({"close"})
    registry.add(session("s1"))
    assert await admin.close("s1") == {"sessionId": "s1", "closedByAgent": True}
    assert conn.sent == [("session/close", {"sessionId": "s1"})]
    assert closed == ["s1"] and registry.get("s1") is None
    # An agent that cannot close: acpls still lets the session go, without asking it.
    admin, registry, conn, closed = admin_on_fakes(set())
    registry.add(session("s2"))
    assert await admin.close("s2") == {"sessionId": "s2", "closedByAgent": False}
    assert conn.sent == [] and closed == ["s2"]


async def test_admin_delete_needs_the_capability_and_keeps_the_session_without_it() -> None:
    admin, registry, conn, closed = admin_on_fakes(set())
    registry.add(session("s1"))
    with pytest.raises(CommandError):
        await admin.delete("s1")
    assert registry.get("s1") is not None and closed == [] and conn.sent == []
    admin, registry, conn, closed = admin_on_fakes({"delete"})
    registry.add(session("s1"))
    await admin.delete("s1")
    assert closed == ["s1"] and conn.sent == [("session/delete", {"sessionId": "s1"})]


async def test_admin_lists_every_page_once_and_marks_the_open_sessions() -> None:
    admin, registry, conn, _ = admin_on_fakes({"list"})
    registry.add(session("s2")).title = "renamed here"
    conn.pages = {
        None: {"sessions": [{"sessionId": "s1"}], "nextCursor": "c1"},
        "c1": {"sessions": [{"sessionId": "s2", "title": "old"}], "nextCursor": "c2"},
        "c2": {"sessions": [{"sessionId": "s3"}], "nextCursor": "c1"},  # a cursor seen before
    }
    listed = await admin.list("/ws", None, True)
    assert [s["sessionId"] for s in listed["sessions"]] == ["s1", "s2", "s3"]
    assert listed["sessions"][1] == {"sessionId": "s2", "title": "renamed here", "open": True}
    assert "nextCursor" not in listed
    assert [p.get("cursor") for m, p in conn.sent] == [None, "c1", "c2"]


# -- AgentRequests: editor, session map, pump, terminal store, follow, router, review, tasks, ... --


class Pokes:
    def poke(self) -> None:
        return


class RequestsRouter:
    """RouterPart as permission prompts use it: a tool call merged as the agent sent it."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def merge_tool_call(self, session: Session, raw: dict[str, Any]) -> dict[str, Any]:
        return dict(raw)

    def send_update(self, session: Session, update: dict[str, Any]) -> None:
        self.sent.append(update)


class SeenReads:
    def __init__(self) -> None:
        self.read: list[tuple[str, str]] = []

    def agent_read(self, path: str, text: str) -> None:
        self.read.append((path, text))


class Moves:
    def __init__(self) -> None:
        self.moves: list[Any] = []

    def move(self, target: Any) -> None:
        self.moves.append(target)


class RequestsHubFake:
    def __init__(self, root: str) -> None:
        self.root = root
        self.settings = Settings()

    def workspace_root(self) -> str:
        return self.root

    def connection_of(self, agent: str | None) -> AgentConnection | None:
        return None


class AskingEditor(Editor):
    """Answers window/showMessageRequest with `choice`, counting the questions."""

    def __init__(self, root: str, choice: str | None) -> None:
        super().__init__(root)
        self.choice = choice
        self.questions: list[str] = []

    async def show_message_request(
        self, level: int, message: str, actions: list[str], msg_id: str | None = None
    ) -> str | None:
        self.questions.append(message)
        return self.choice


def requests_on_fakes(
    tmp_path: Path, editor: Editor, held: Session
) -> tuple[AgentRequests, RequestsRouter, SeenReads, Moves, TaskSupervisor]:
    tasks = TaskSupervisor("test")
    router, review, follow = RequestsRouter(), SeenReads(), Moves()
    requests = AgentRequests(
        port(editor),
        {held.id: held},
        cast(FlushScheduler, Pokes()),
        TerminalStore(),
        cast(FollowController, follow),
        cast(Any, router),
        cast(ReviewPart, review),
        tasks,
        tmp_path / "state",
        {},
        RequestsHubFake(editor.root),
    )
    requests.paths.set_roots([editor.root], [])
    return requests, router, review, follow, tasks


PERMISSION = {
    "sessionId": "s1",
    "toolCall": {"toolCallId": "run-1", "title": "rm -rf build", "kind": "execute"},
    "options": [
        {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
        {"optionId": "no", "name": "Reject", "kind": "reject_once"},
    ],
}


async def test_requests_a_pending_permission_is_answered_cancelled_when_its_session_ends(
    tmp_path: Path,
) -> None:
    editor = Editor(str(tmp_path))  # never answers
    held = session()
    requests, _, _, _, tasks = requests_on_fakes(tmp_path, editor, held)
    asked = asyncio.ensure_future(requests.request_permission(PERMISSION))
    await editor.until_asked(1)
    [(method, params)] = editor.asked
    assert method == msg.REQUEST_PERMISSION and params.toolCall["title"] == "rm -rf build"
    requests.session_closed(held)
    assert await asked == {"outcome": {"outcome": "cancelled"}}
    assert held.pending_permissions == {}
    assert editor.withdrawn == editor.ids  # the editor's prompt is taken back
    await tasks.aclose()


async def test_requests_the_editors_choice_answers_and_a_bad_request_is_invalid_params(
    tmp_path: Path,
) -> None:
    editor = Editor(str(tmp_path), answer={"optionId": "no"})
    held = session()
    requests, _, _, _, tasks = requests_on_fakes(tmp_path, editor, held)
    result = await requests.request_permission(PERMISSION)
    assert result == {"outcome": {"outcome": "selected", "optionId": "no"}}
    with pytest.raises(AcpError):  # decoded by the model: options must be a list
        await requests.request_permission({**PERMISSION, "options": "yes"})
    with pytest.raises(AcpError):
        await requests.request_permission({**PERMISSION, "sessionId": "nobody"})
    await tasks.aclose()


async def test_requests_an_outside_read_is_asked_once_per_session_and_forgotten_with_it(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.py").write_text("one\ntwo\n", encoding="utf-8")
    outside = tmp_path / "notes.txt"
    outside.write_text("notes\n", encoding="utf-8")
    editor = AskingEditor(str(workspace), "Allow")
    held = session()
    requests, _, review, follow, tasks = requests_on_fakes(tmp_path, editor, held)
    inside = {"sessionId": "s1", "path": str(workspace / "a.py"), "line": 2, "limit": 1}
    assert await requests.read_text_file(inside) == {"content": "two\n"}
    assert editor.questions == []
    assert review.read == []  # a window of the file read from disk: the agent saw part of it
    assert [(m.path, m.line) for m in follow.moves] == [(str(workspace / "a.py"), 2)]
    whole = {"sessionId": "s1", "path": str(workspace / "a.py")}
    assert await requests.read_text_file(whole) == {"content": "one\ntwo\n"}
    assert review.read == [(str(workspace / "a.py"), "one\ntwo\n")]
    far = {"sessionId": "s1", "path": str(outside)}
    for _ in range(2):
        assert await requests.read_text_file(far) == {"content": "notes\n"}
    assert len(editor.questions) == 1
    requests.session_closed(held)
    await requests.read_text_file(far)
    assert len(editor.questions) == 2  # the approval ended with the session
    editor.choice = "Deny"
    requests.session_closed(held)
    with pytest.raises(AcpError):
        await requests.read_text_file(far)
    await tasks.aclose()


# -- CheckpointController: editor, session map, tasks, state directory, git's environment, hub ----


class ForkingConn:
    """An agent that offers session/fork and answers it only when told."""

    def __init__(self) -> None:
        self.forks: list[Any] = []

    def session_capability(self, name: str) -> bool:
        return name == "fork"

    async def request(self, method: str, params: Any) -> Any:
        self.forks.append(params)
        await asyncio.Event().wait()


class ForkRouter:
    def expecting_sessions(self) -> Any:
        return contextlib.nullcontext()


class CheckpointsHubFake:
    """CheckpointsHub: the settings, the agent's process (`conn`, None: none running), a
    router for forks, and new sessions made on request."""

    def __init__(self, conn: ForkingConn | None = None) -> None:
        self.settings = Settings()
        self.conn = conn
        self.router = ForkRouter()
        self.made: list[Session] = []

    def connection_of(self, agent: str | None) -> AgentConnection | None:
        return cast(AgentConnection, self.conn)

    def agent_spec(self, agent: Any = None) -> Any:
        return agent

    async def new_session(self, cwd: str | None = None, agent: Any = None) -> Session:
        self.made.append(session(f"s-new-{len(self.made)}"))
        return self.made[-1]


def checkpoints_on_fakes(
    tmp_path: Path, held: Session, hub: CheckpointsHubFake
) -> tuple[CheckpointController, Path, TaskSupervisor]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    code = workspace / "calc.py"
    code.write_text("before\n", encoding="utf-8")
    tasks = TaskSupervisor("test")
    checkpoints = CheckpointController(
        port(Editor(str(workspace))),
        {held.id: held},
        tasks,
        tmp_path / "state",
        dict(os.environ),
        cast(Any, hub),
    )
    return checkpoints, code, tasks


async def test_checkpoints_record_a_turn_and_keep_the_text_before_it(tmp_path: Path) -> None:
    held = session()
    checkpoints, code, tasks = checkpoints_on_fakes(tmp_path, held, CheckpointsHubFake())
    blocks: list[dict[str, Any]] = []
    await checkpoints.turn_started(held, "fix it", blocks)
    code.write_text("after\n", encoding="utf-8")
    assert await checkpoints.text_before_turn(held.id, str(code)) == (True, "before\n")
    await checkpoints.turn_ended(held, "fixed")
    assert await checkpoints.text_before_turn(held.id, str(code)) == (False, None)
    [turn] = checkpoints.listing(held.id)
    assert turn["prompt"] == "fix it" and turn["files"] == [str(code)], turn
    await checkpoints.turn_started(held, "again", blocks)
    checkpoints.session_closed(held)  # the session ended mid-turn: its open checkpoint goes
    assert await checkpoints.text_before_turn(held.id, str(code)) == (False, None)
    await checkpoints.aclose()
    await tasks.aclose()


async def test_checkpoints_a_fork_still_running_stops_when_its_session_ends(
    tmp_path: Path,
) -> None:
    conn = ForkingConn()
    held = session()
    checkpoints, _, tasks = checkpoints_on_fakes(tmp_path, held, CheckpointsHubFake(conn))
    await checkpoints.turn_started(held, "fix it", [])
    await checkpoints.turn_ended(held, "fixed")  # forks the conversation as it is now
    fork = checkpoints._forks[held.id]
    while not conn.forks:
        await asyncio.wait([fork], timeout=0.01)
    checkpoints.session_closed(held)
    await asyncio.wait([fork], timeout=5)
    assert fork.cancelled() and checkpoints._forks == {}
    await checkpoints.aclose()
    await tasks.aclose()


async def test_checkpoints_a_continued_sessions_preamble_goes_when_it_ends_unprompted(
    tmp_path: Path,
) -> None:
    hub = CheckpointsHubFake()
    held = session()
    checkpoints, _, tasks = checkpoints_on_fakes(tmp_path, held, hub)
    for prompt in ("first", "second"):
        await checkpoints.turn_started(held, prompt, [])
        await checkpoints.turn_ended(held, "done")
    [second] = [c for c in checkpoints.listing(held.id) if c["prompt"] == "second"]
    continued = await checkpoints.continue_from(second["id"])
    assert continued["via"] == "context"
    [made] = hub.made
    assert made.id in checkpoints._preambles  # the earlier turns, for its first prompt
    checkpoints.session_closed(made)
    assert checkpoints._preambles == {}
    await checkpoints.aclose()
    await tasks.aclose()


# -- ReviewController: what a closed session's watcher becomes ------------------------------------


class NoBaselines:
    async def text_before_turn(self, session_id: str, path: str) -> tuple[bool, str | None]:
        return False, None


async def test_review_a_closed_sessions_watcher_passes_to_a_running_turn(tmp_path: Path) -> None:
    """Between a session's close and its failed turn's end, what the agents write to disk is
    credited to a session still turning, not to the one that ended."""
    editor = Editor(str(tmp_path))
    tasks = TaskSupervisor("test")
    first, second = session("s1"), session("s2")
    loop = asyncio.get_running_loop()
    for held in (first, second):
        held.turn = Turn(loop.create_future())
    sessions = {first.id: first, second.id: second}
    follow = FollowController(port(editor), tasks, enabled=False)
    review = ReviewController(port(editor), sessions, tasks, follow, baselines=NoBaselines())
    await review.turn_started(first)
    await review.turn_started(second)  # one watcher for the workspace, credited to s1
    assert review._watch is not None and review._watch.session is first
    del sessions[first.id]
    review.session_closed(first)
    assert review._watch.session is second
    await review.turn_ended(first)
    assert review._watch is not None and review._watch.watcher.running
    await review.turn_ended(second)
    assert review._watch is None
    await review.aclose()
    await tasks.aclose()
