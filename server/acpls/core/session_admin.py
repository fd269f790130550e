"""Closing and deleting sessions, and signing out (ACP `session/close`, `session/delete`, `logout` /
v2 `auth/logout`), as the commands acpls.closeSession, acpls.deleteSession and acpls.logout.

A closed session ends here too: its running turn fails, and its open permission prompts and
questions are answered `cancel` to the agent and withdrawn from the editor (contract section 8).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acpls.acp.transport import INTERNAL_ERROR
from acpls.core.hub import CommandError

if TYPE_CHECKING:
    from acpls.acp.connection import AgentConnection
    from acpls.core.hub import Hub
    from acpls.core.session import Session


def can_close(conn: AgentConnection) -> bool:
    # v2's session/close is stable (no capability); v1 lists it in sessionCapabilities.
    return conn.version == 2 or conn.session_capability("close")


def can_logout(conn: AgentConnection) -> bool:
    if conn.version == 2:
        return True  # auth/logout is a stable v2 method
    auth = conn.capabilities.get("auth")
    return isinstance(auth, dict) and auth.get("logout") is not None


class SessionAdmin:
    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    async def close(self, session_id: Any) -> dict[str, Any]:
        session = self.hub.session(session_id)
        assert session is not None
        conn = await self.hub.agent()
        closed_by_agent = can_close(conn)
        if closed_by_agent:
            await conn.request("session/close", {"sessionId": session.id})
        self.forget(session, "the session was closed")
        return {"sessionId": session.id, "closedByAgent": closed_by_agent}

    def forget(self, session: Session, reason: str) -> None:
        """The session is no longer acpls': nothing of it waits on the user any more."""
        self.hub.questions.withdraw(session.id)
        self.hub.agent_requests.cancel_permissions(session)
        turn = session.turn
        if turn is not None and not turn.done.done():
            turn.done.set_exception(CommandError(reason, INTERNAL_ERROR))
        self.hub.sessions.pop(session.id, None)
        if self.hub.current_session_id == session.id:
            self.hub.current_session_id = None

    async def delete(self, session_id: str) -> dict[str, Any]:
        conn = await self.hub.agent()
        if not conn.session_capability("delete"):
            raise CommandError("the agent does not delete sessions")
        session = self.hub.sessions.get(session_id)
        if session is not None:
            self.forget(session, "the session was deleted")
        await conn.request("session/delete", {"sessionId": session_id})
        return {"sessionId": session_id}

    async def logout(self) -> None:
        conn = await self.hub.agent()
        if not can_logout(conn):
            raise CommandError("the agent does not offer to sign out")
        await conn.request("logout" if conn.version == 1 else "auth/logout", {})
