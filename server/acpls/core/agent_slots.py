"""The agents acpls runs at once: one process per agent name, each with its own lifecycle.

A session carries the name of the agent that made it (`Session.agent`); every request about the
session goes to that agent's process. `AgentSlot` is what the hub keeps per name: the spec it was
started from, the connection, the lock that serialises its (re)starts, and the settings it was
started with (a change of those restarts that agent, and only it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

import attrs

from acpls.acp.errors import INVALID_PARAMS, AcpError

if TYPE_CHECKING:
    from acpls.acp.connection import AgentConnection
    from acpls.core.session import Session
    from acpls.registry.spec import AgentSpec


@attrs.define(eq=False)
class AgentSlot:
    name: str
    spec: AgentSpec | None = None
    conn: AgentConnection | None = None
    lock: asyncio.Lock = attrs.Factory(asyncio.Lock)
    restart_key: Any = None
    # The last state told to the editor (acpls/agentStatus), for listings.
    state: str = "stopped"

    @property
    def running(self) -> AgentConnection | None:
        conn = self.conn
        return conn if conn is not None and conn.alive else None


SessionOf = Callable[[Any], "Session | None"]


def guard_sessions(conn: AgentConnection, agent: str, session_of: SessionOf) -> None:
    """Wrap every handler registered on `conn` so that an agent can only speak about its own
    sessions: a request naming another agent's session is answered as an unknown session, a
    notification about one is dropped. Nothing crosses from one agent to another."""
    protocol = conn.protocol
    requests: MutableMapping[str, Any] = protocol.handlers
    notifications: MutableMapping[str, Any] = protocol.notification_handlers
    for method, handler in list(requests.items()):
        requests[method] = _guarded_request(agent, session_of, handler)
    for method, handler in list(notifications.items()):
        notifications[method] = _guarded_notification(agent, session_of, handler)


def _foreign(agent: str, session_of: SessionOf, params: Any) -> str | None:
    """The session id in `params` when it belongs to another agent."""
    if not isinstance(params, dict):
        return None
    session_id = params.get("sessionId")
    session = session_of(session_id) if isinstance(session_id, str) else None
    if session is not None and session.agent != agent:
        return session_id  # type: ignore[return-value]
    return None


def _guarded_request(
    agent: str, session_of: SessionOf, handler: Callable[[Any], Awaitable[Any]]
) -> Callable[[Any], Awaitable[Any]]:
    async def guarded(params: Any) -> Any:
        foreign = _foreign(agent, session_of, params)
        if foreign is not None:
            raise AcpError(INVALID_PARAMS, f"unknown sessionId {foreign!r}")
        return await handler(params)

    return guarded


def _guarded_notification(
    agent: str, session_of: SessionOf, handler: Callable[[Any], None]
) -> Callable[[Any], None]:
    def guarded(params: Any) -> None:
        if _foreign(agent, session_of, params) is None:
            handler(params)

    return guarded
