"""What acpls does when the agent asks: permission prompts, file reads and writes, terminals.

Each ACP client method is one short async handler. They answer with raw JSON (the agent's schema)
or raise `AcpError` with the JSON-RPC code ACP expects.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import uuid
from typing import TYPE_CHECKING, Any

from acpls.acp.transport import INTERNAL_ERROR, INVALID_PARAMS, AcpError
from acpls.core import ports
from acpls.core.session import PendingPermission, Session
from acpls.editor import messages as msg
from acpls.translate import permissions as perm
from acpls.translate.diffs import workspace_edit_from_content
from acpls.translate.follow import FollowTarget
from acpls.translate.text_edits import minimal_line_edits
from acpls.translate.uris import path_to_uri

if TYPE_CHECKING:
    from acpls.acp.connection import AgentConnection
    from acpls.core.hub import Hub

logger = logging.getLogger(__name__)


class AgentRequests:
    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self._keys = itertools.count(1)
        # What the agent last read of each path, to tell its writes from clobbering the user's.
        self._read_texts: dict[str, str] = {}

    def register(self, conn: AgentConnection) -> None:
        conn.register(
            {
                "session/request_permission": self.request_permission,
                "fs/read_text_file": self.read_text_file,
                "fs/write_text_file": self.write_text_file,
            },
            {},
        )

    # -- sessions --------------------------------------------------------------------------------
    def _session(self, params: Any) -> Session:
        if not isinstance(params, dict):
            raise AcpError(INVALID_PARAMS, "params must be an object")
        session_id = params.get("sessionId")
        session = self.hub.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is None:
            raise AcpError(INVALID_PARAMS, f"unknown sessionId {session_id!r}")
        return session

    def tool_call_seen(self, session: Session, state: dict[str, Any], applied: Any) -> None:
        """Hook for every merged tool call (review baselines are taken here)."""

    # -- permission ------------------------------------------------------------------------------
    async def request_permission(self, params: Any) -> dict[str, Any]:
        session = self._session(params)
        options = perm.valid_options(params.get("options"))
        if not options:
            raise AcpError(INVALID_PARAMS, "request_permission needs at least one option")
        if len(session.pending_permissions) >= self.hub.settings.max_pending_permissions:
            logger.warning("too many pending permission requests; answering cancelled")
            return perm.CANCELLED
        tool_call = self._permission_tool_call(session, params)
        key = next(self._keys)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        pending = PendingPermission(request_key=key, options=options, answer=future)
        session.pending_permissions[key] = pending
        asker = self.hub.tasks.spawn(
            f"permission:{key}", self._ask(session, pending, params, tool_call)
        )
        try:
            return await future
        finally:
            session.pending_permissions.pop(key, None)
            if not asker.done():
                asker.cancel()
            if pending.editor_msg_id is not None and not asker.done():
                self.hub.editor.cancel_request(pending.editor_msg_id)

    def _permission_tool_call(self, session: Session, params: dict[str, Any]) -> dict[str, Any]:
        """The tool call the request is about, merged with what acpls already knows of it."""
        raw = params.get("toolCall")
        subject = params.get("subject")
        if raw is None and isinstance(subject, dict) and subject.get("type") == "tool_call":
            raw = subject.get("toolCall")
        if not isinstance(raw, dict) or not isinstance(raw.get("toolCallId"), str):
            title = params.get("title") if isinstance(params.get("title"), str) else "permission"
            return {"toolCallId": "", "title": title}
        return self.hub.router.merge_tool_call(session, raw)

    async def _ask(
        self,
        session: Session,
        pending: PendingPermission,
        params: dict[str, Any],
        tool_call: dict[str, Any],
    ) -> None:
        try:
            if self.hub.editor.custom_mode:
                outcome = await self._ask_custom(session, pending, params, tool_call)
            else:
                outcome = await self._ask_generic(pending, params, tool_call)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("asking the editor for permission failed; answering as dismissed")
            outcome = perm.dismissed_outcome(pending.options)
        if not pending.answer.done():
            pending.answer.set_result(outcome)

    def _preview(self, tool_call: dict[str, Any]) -> Any:
        content = tool_call.get("content")
        if not isinstance(content, list):
            return None
        return workspace_edit_from_content(content, self._current_text)

    async def _ask_custom(
        self,
        session: Session,
        pending: PendingPermission,
        params: dict[str, Any],
        tool_call: dict[str, Any],
    ) -> dict[str, Any]:
        preview = self._preview(tool_call)
        title = params.get("title") if isinstance(params.get("title"), str) else tool_call.get("title")
        request = msg.RequestPermissionParams(
            sessionId=session.id,
            toolCall=tool_call,
            options=pending.options,
            title=title,
            description=params.get("description") if isinstance(params.get("description"), str) else None,
            subject=params.get("subject") if isinstance(params.get("subject"), dict) else None,
            preview=preview.edit if preview is not None else None,
            previewProblems=(preview.problems or None) if preview is not None else None,
        )
        pending.editor_msg_id = f"acpls-permission-{uuid.uuid4().hex[:12]}"
        result = await self.hub.editor.request(
            msg.REQUEST_PERMISSION, request, pending.editor_msg_id
        )
        option_id = result.get("optionId") if isinstance(result, dict) else getattr(result, "optionId", None)
        return perm.outcome_for_option_id(pending.options, option_id)

    async def _ask_generic(
        self, pending: PendingPermission, params: dict[str, Any], tool_call: dict[str, Any]
    ) -> dict[str, Any]:
        preview = self._preview(tool_call)
        files = [(f.path, f.added, f.removed) for f in preview.files] if preview else []
        title = params.get("title") if isinstance(params.get("title"), str) else None
        message = perm.generic_message(
            title or str(tool_call.get("title") or "tool call"),
            tool_call.get("kind") if isinstance(tool_call.get("kind"), str) else None,
            files,
            params.get("description") if isinstance(params.get("description"), str) else None,
        )
        options = perm.unique_titles(pending.options)
        pending.options = options
        choice = await self.hub.editor.show_message_request(
            ports.MESSAGE_INFO, message, [o["name"] for o in options]
        )
        return perm.outcome_for_title(options, choice)

    def cancel_permissions(self, session: Session) -> None:
        """session/cancel: every pending request of the session is answered `cancelled`."""
        for pending in list(session.pending_permissions.values()):
            if not pending.answer.done():
                pending.answer.set_result(perm.CANCELLED)

    # -- files -----------------------------------------------------------------------------------
    def _current_text(self, path: str) -> str | None:
        try:
            uri = path_to_uri(path)
        except ValueError:
            return None
        text = self.hub.editor.document_text(uri)
        if text is not None:
            return text
        try:
            with open(path, encoding="utf-8", newline="") as handle:
                return handle.read()
        except (OSError, UnicodeDecodeError):
            return None

    def check_path(self, session: Session, path: Any) -> str:
        if not isinstance(path, str) or not path:
            raise AcpError(INVALID_PARAMS, "path must be a non-empty string")
        if not os.path.isabs(path):
            raise AcpError(INVALID_PARAMS, f"path must be absolute (ACP requires it): {path!r}")
        return os.path.normpath(path)

    async def read_text_file(self, params: Any) -> dict[str, Any]:
        session = self._session(params)
        path = self.check_path(session, params.get("path"))
        text = self._current_text(path)
        if text is None:
            raise AcpError(-32002, f"cannot read {path}: no such text file")
        self._read_texts[path] = text
        line, limit = params.get("line"), params.get("limit")
        if line is not None or limit is not None:
            text = _slice(text, line, limit)
        if session.top_level:
            start = line if isinstance(line, int) and line > 0 else 1
            self.hub.move_follow(FollowTarget(session.id, "fs/read_text_file", path, start, "read"))
        return {"content": text}

    async def write_text_file(self, params: Any) -> dict[str, Any]:
        session = self._session(params)
        path = self.check_path(session, params.get("path"))
        content = params.get("content")
        if not isinstance(content, str):
            raise AcpError(INVALID_PARAMS, "content must be a string")
        old = self._current_text(path)
        exists = old is not None or os.path.exists(path)
        edit, first_line = self._write_edit(path, old if exists else None, content)
        if edit is None:
            return {}
        applied, reason = await self.hub.editor.apply_edit(edit, f"Agent: write {path}")
        if not applied:
            raise AcpError(INTERNAL_ERROR, f"the editor did not apply the write to {path}: {reason}")
        self._read_texts[path] = content
        if session.top_level and first_line is not None:
            self.hub.move_follow(
                FollowTarget(session.id, "fs/write_text_file", path, first_line + 1, "edit")
            )
        return {}

    def _write_edit(
        self, path: str, old: str | None, new: str
    ) -> tuple[dict[str, Any] | None, int | None]:
        uri = path_to_uri(path)
        if old is None:
            changes: list[dict[str, Any]] = []
            if self.hub.editor.supports_create_file:
                changes.append({"kind": "create", "uri": uri, "options": {"ignoreIfExists": True}})
            else:
                with open(path, "x", encoding="utf-8"):
                    pass
            edits = minimal_line_edits("", new)
            changes.append({"textDocument": {"uri": uri, "version": None}, "edits": edits})
            return {"documentChanges": changes}, 0
        edits = minimal_line_edits(old, new)
        if not edits:
            return None, None
        first_line = edits[0]["range"]["start"]["line"]
        return {"documentChanges": [{"textDocument": {"uri": uri, "version": None}, "edits": edits}]}, first_line

    async def close_all(self) -> None:
        """The agent is gone: release everything acpls ran for it."""


def _slice(text: str, line: Any, limit: Any) -> str:
    lines = text.splitlines(keepends=True)
    start = line - 1 if isinstance(line, int) and line > 0 else 0
    end = start + limit if isinstance(limit, int) and limit >= 0 else len(lines)
    return "".join(lines[start:end])
