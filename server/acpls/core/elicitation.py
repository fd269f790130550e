"""Questions from the agent (ACP `elicitation/create`, `elicitation/complete`), asked in the editor.

Editor contract section 8. Each open question has one owner here and one end: its `answer` future
is set once (the user's answer, a withdrawal, or the agent's own completion), and the request
handler that awaits it cleans up what the asking left (the editor's pending request, the generic
mode's form file). The agent only ever receives content that fits the form's schema.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from acpls.acp.converter import structure
from acpls.acp.errors import INVALID_PARAMS, AcpError
from acpls.acp.models import AcpModelError, CompleteElicitationNotification
from acpls.core import ports
from acpls.editor import messages as msg
from acpls.services import private_files
from acpls.translate import elicitation as q
from acpls.translate.uris import path_to_uri, uri_to_path

if TYPE_CHECKING:
    from collections.abc import Mapping

    from acpls.acp.connection import AgentConnection
    from acpls.core.ports import EditorPort
    from acpls.core.session import Session
    from acpls.supervisor import TaskSupervisor

logger = logging.getLogger(__name__)

# More open questions than this is an agent gone wrong: later ones are answered `cancel`.
MAX_OPEN_QUESTIONS = 32
# An editor that keeps answering with content that does not fit is not asked forever.
MAX_ATTEMPTS = 20
# URL questions the user has answered, remembered so that the agent's `elicitation/complete`,
# which names only the elicitation, still reaches the editor with its session (the browser flow
# ends long after the question was answered `accept`). Oldest forgotten first.
MAX_ANSWERED_URLS = 256
DONE, CANCEL = "Done", "Cancel"


@attrs.define(eq=False)
class OpenQuestion:
    key: int
    question: q.Question
    answer: asyncio.Future[dict[str, Any]]
    editor_msg_id: str | None = None
    form_path: Path | None = None

    def settle(self, result: dict[str, Any]) -> None:
        if not self.answer.done():
            self.answer.set_result(result)


class Questions:
    def __init__(
        self,
        editor: EditorPort,
        sessions: Mapping[str, Session],
        tasks: TaskSupervisor,
        state_dir: Path,
    ) -> None:
        self.editor = editor
        self.sessions = sessions  # the registry's, read only
        self.tasks = tasks
        self.state_dir = state_dir  # questions/: the JSON forms generic editors fill in
        self._keys = itertools.count(1)
        self._open: dict[int, OpenQuestion] = {}
        self._answered_urls: dict[str, str] = {}  # elicitationId -> sessionId, oldest first

    def register(self, conn: AgentConnection) -> None:
        def create(params: Any) -> Any:
            return self.create(params, conn)

        conn.register({"elicitation/create": create}, {"elicitation/complete": self.complete})

    @property
    def open_count(self) -> int:
        return len(self._open)

    # -- the agent's side --------------------------------------------------------------------------
    async def create(self, params: Any, conn: AgentConnection | None = None) -> dict[str, Any]:
        try:
            question = q.parse_request(params)
        except q.InvalidQuestion as exc:
            raise AcpError(INVALID_PARAMS, str(exc)) from exc
        session = self.sessions.get(question.session_id) if question.session_id else None
        if session is not None and session.turn is not None and session.turn.cancel_requested:
            return q.answer(q.CANCEL)  # the user cancelled the turn this question belongs to
        if len(self._open) >= MAX_OPEN_QUESTIONS:
            logger.warning("too many open questions from the agent; answering cancel")
            return q.answer(q.CANCEL)
        loop = asyncio.get_running_loop()
        pending = OpenQuestion(next(self._keys), question, loop.create_future())
        self._open[pending.key] = pending
        asker = self.tasks.spawn(f"question:{pending.key}", self._ask(pending))
        try:
            return await asyncio.shield(pending.answer)
        except asyncio.CancelledError:
            if conn is None or conn.protocol.closed:
                raise
            # The agent's $/cancel_request: it withdrew the question, which is answered `cancel`.
            logger.info("the agent withdrew question %d", pending.key)
            return q.answer(q.CANCEL)
        finally:
            self._close(pending, asker)

    def _close(self, pending: OpenQuestion, asker: asyncio.Task[Any]) -> None:
        self._open.pop(pending.key, None)
        self._remember_url(pending.question)
        pending.settle(q.answer(q.CANCEL))
        if not asker.done():
            asker.cancel()
            if pending.editor_msg_id is not None:
                self.editor.cancel_request(pending.editor_msg_id)
        if pending.form_path is not None:
            try:
                pending.form_path.unlink(missing_ok=True)
            except OSError as exc:
                logger.warning("could not remove the answered form %s: %s", pending.form_path, exc)

    def complete(self, params: Any) -> None:
        """`elicitation/complete`: the URL flow is done; an open question for it is answered."""
        try:
            elicitation_id = structure(params, CompleteElicitationNotification).elicitation_id
        except AcpModelError as exc:
            logger.warning("ignoring an elicitation/complete that does not fit: %s", exc)
            return
        match = next(
            (p for p in self._open.values() if p.question.elicitation_id == elicitation_id), None
        )
        if match is not None:
            session_id = match.question.session_id
        else:
            session_id = self._answered_urls.pop(elicitation_id, None)
        if self.editor.custom_mode:
            self.editor.notify(
                msg.ELICITATION_COMPLETE,
                msg.ElicitationCompleteParams(elicitationId=elicitation_id, sessionId=session_id),
            )
        if match is not None:
            match.settle(q.answer("accept"))

    def _remember_url(self, question: q.Question) -> None:
        if question.mode != "url" or not question.elicitation_id or not question.session_id:
            return
        self._answered_urls.pop(question.elicitation_id, None)
        self._answered_urls[question.elicitation_id] = question.session_id
        while len(self._answered_urls) > MAX_ANSWERED_URLS:
            del self._answered_urls[next(iter(self._answered_urls))]

    def withdraw(self, session_id: str | None = None) -> None:
        """The turn was cancelled or the session closed: its open questions are answered
        `cancel` (every open question when `session_id` is None)."""
        for pending in list(self._open.values()):
            if session_id is None or pending.question.session_id == session_id:
                pending.settle(q.answer(q.CANCEL))

    # -- asking ------------------------------------------------------------------------------------
    async def _ask(self, pending: OpenQuestion) -> None:
        try:
            if self.editor.custom_mode:
                result = await self._ask_custom(pending)
            elif pending.question.mode == "url":
                result = await self._ask_url(pending)
            else:
                steps = q.choice_steps(pending.question)
                if steps is not None:
                    result = await self._ask_choices(pending, steps)
                else:
                    result = await self._ask_with_file(pending)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("asking the editor the agent's question failed; answering cancel")
            result = q.answer(q.CANCEL)
        pending.settle(result)

    async def _ask_custom(self, pending: OpenQuestion) -> dict[str, Any]:
        question = pending.question
        message, schema = question.message, question.schema
        form = question.mode == "form"
        for _ in range(MAX_ATTEMPTS):
            pending.editor_msg_id = f"acpls-question-{uuid.uuid4().hex[:12]}"
            params = msg.ElicitationParams(
                mode=question.mode,
                message=message,
                sessionId=question.session_id,
                elicitationId=question.elicitation_id,
                requestedSchema=schema if form else None,
                fieldOrder=list(q.properties(schema)) if form else None,
                url=question.url,
                requestId=pending.editor_msg_id,
            )
            result = await self.editor.request(msg.ELICITATION, params, pending.editor_msg_id)
            pending.editor_msg_id = None
            action, content = _editor_answer(result)
            if action != "accept" or question.mode != "form":
                return q.answer(action)
            fitted, problems = q.check(question.schema, content)
            if not problems:
                return q.answer("accept", fitted)
            message = q.retry_message(question.message, problems)
            schema = q.with_defaults(question.schema, content)
        logger.warning("the editor's answers never fitted the form; answering cancel")
        return q.answer(q.CANCEL)

    async def _choose(
        self, pending: OpenQuestion, level: int, text: str, actions: list[str]
    ) -> str | None:
        pending.editor_msg_id = f"acpls-question-{uuid.uuid4().hex[:12]}"
        choice = await self.editor.show_message_request(
            level, text, actions, msg_id=pending.editor_msg_id
        )
        pending.editor_msg_id = None
        return choice

    async def _ask_url(self, pending: OpenQuestion) -> dict[str, Any]:
        question = pending.question
        url = question.url or ""
        opened = q.openable(url) and await self.editor.open_external(url)
        if not opened:
            self.editor.show_message(
                ports.MESSAGE_INFO, f"acpls: the agent asks you to open {url}\n{question.message}"
            )
        text = f"{question.message}\n\n{url}\nChoose {DONE} when you have finished there."
        choice = await self._choose(pending, ports.MESSAGE_INFO, text, [DONE, CANCEL])
        return q.answer("accept" if choice == DONE else q.CANCEL)

    async def _ask_choices(
        self, pending: OpenQuestion, steps: list[q.ChoiceStep]
    ) -> dict[str, Any]:
        content: dict[str, Any] = {}
        for step in steps:
            choice = await self._choose(pending, ports.MESSAGE_INFO, step.message, step.actions)
            if choice is None or choice not in step.values:
                return q.answer(q.CANCEL)
            if step.values[choice] is not None:
                content[step.name] = step.values[choice]
        fitted, problems = q.check(pending.question.schema, content)
        if problems:  # cannot happen with choices taken from the schema; never send a misfit
            logger.error("generic choices did not fit the form: %s", problems)
            return q.answer(q.CANCEL)
        return q.answer("accept", fitted)

    async def _ask_with_file(self, pending: OpenQuestion) -> dict[str, Any]:
        directory = private_files.make_dir(self.state_dir / "questions")
        path = directory / f"question-{pending.key}-{uuid.uuid4().hex[:8]}.json"
        text = q.form_file_text(pending.question, pending.question.schema, [])
        # 0600: the answers the user types may be secret (a password field).
        with private_files.open_file(path, "x") as handle:
            handle.write(text)
        pending.form_path = path
        uri = path_to_uri(str(path))
        if self.editor.supports_show_document:
            await self.editor.show_document(uri, None, take_focus=True)
        else:
            self.editor.show_message(
                ports.MESSAGE_INFO,
                f"acpls: the agent asks a question: fill in and save {path} to answer",
            )
        return await asyncio.shield(pending.answer)

    # -- the generic mode's form files -------------------------------------------------------------
    def _by_uri(self, uri: str) -> OpenQuestion | None:
        try:
            path = os.path.normpath(uri_to_path(uri))
        except ValueError:
            return None
        return next(
            (
                p
                for p in self._open.values()
                if p.form_path is not None and os.path.normpath(p.form_path) == path
            ),
            None,
        )

    def owns(self, uri: str) -> bool:
        """The document is a question's form file (its edits are not the user's code)."""
        return self._by_uri(uri) is not None

    def did_save(self, uri: str, text: str | None) -> bool:
        pending = self._by_uri(uri)
        if pending is None or pending.form_path is None:
            return False
        if text is None:
            try:
                text = pending.form_path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                self.editor.show_message(
                    ports.MESSAGE_WARNING, f"acpls: cannot read the answer: {exc}"
                )
                return True
        try:
            content = q.parse_form_file(text)
        except q.FormFileError as exc:
            self._misfit([str(exc)])
            return True
        fitted, problems = q.check(pending.question.schema, content)
        if problems:
            self._misfit(problems)
            return True
        pending.settle(q.answer("accept", fitted))
        return True

    def _misfit(self, problems: list[str]) -> None:
        self.editor.show_message(
            ports.MESSAGE_WARNING,
            "acpls: the answer does not fit the agent's question; fix it and save again: "
            + "; ".join(problems),
        )

    def did_close(self, uri: str) -> bool:
        pending = self._by_uri(uri)
        if pending is None:
            return False
        pending.settle(q.answer(q.CANCEL))
        return True


def _editor_answer(result: Any) -> tuple[str, Any]:
    """(action, content) from the editor's acpls/elicitation result; null means cancel."""
    if result is None:
        return q.CANCEL, None
    if not isinstance(result, dict) or result.get("action") not in q.ACTIONS:
        logger.warning("the editor answered a question with %.200r; taken as cancel", result)
        return q.CANCEL, None
    return result["action"], result.get("content")
