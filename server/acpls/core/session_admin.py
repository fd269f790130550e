"""The agent's stored sessions: listing every page, forking, closing and deleting them, and
signing out (ACP `session/list`, `session/fork`, `session/close`, `session/delete`, `logout` /
v2 `auth/logout`), as the commands acpls.listSessions, acpls.forkSession, acpls.closeSession,
acpls.deleteSession and acpls.logout.

A closed session ends here too: its running turn fails, and its open permission prompts and
questions are answered `cancel` to the agent and withdrawn from the editor (contract section 8).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from acpls.acp.errors import INTERNAL_ERROR
from acpls.core import ports
from acpls.core.errors import CommandError

if TYPE_CHECKING:
    from acpls.acp.connection import AgentConnection
    from acpls.core.session import Session
    from acpls.core.sessions import SessionRegistry


class SessionsHub(Protocol):
    """What session administration asks of the hub: the agents' processes, the sessions it
    holds, and requests sent with a sign-in when the agent wants one."""

    async def agent(self, name: Any = None) -> AgentConnection: ...

    async def agent_of(self, session: Session) -> AgentConnection: ...

    def agent_name_of(self, conn: AgentConnection) -> str: ...

    def session(self, session_id: Any) -> Session | None: ...

    def adopt_session(
        self, session_id: str, cwd: str, response: dict[str, Any], conn: AgentConnection
    ) -> Session: ...

    def lifecycle_params(self, conn: AgentConnection, cwd: str) -> dict[str, Any]: ...

    async def apply_defaults(self, session: Session, result: Any) -> None: ...

    async def with_auth(self, conn: AgentConnection, method: str, params: Any) -> Any: ...

    def workspace_root(self) -> str: ...


def can_close(conn: AgentConnection) -> bool:
    # v2's session/close is stable (no capability); v1 lists it in sessionCapabilities.
    return conn.version == 2 or conn.session_capability("close")


def can_logout(conn: AgentConnection) -> bool:
    if conn.version == 2:
        return True  # auth/logout is a stable v2 method
    auth = conn.capabilities.get("auth")
    return isinstance(auth, dict) and auth.get("logout") is not None


# An agent whose cursors never end must not keep acpls paging forever.
MAX_LIST_PAGES = 100
# Sessions offered in one window/showMessageRequest (editors show them as buttons or a list).
MAX_CHOICES = 20


def offers(conn: AgentConnection) -> dict[str, bool]:
    """What the agent lets the user do with its sessions (front ends offer only these)."""
    return {
        # Load = continue with the history shown: v1 `session/load`, or v2 `session/resume` with
        # `replayFrom` (every v2 agent that resumes can replay; hub.load_session sends it).
        "load": conn.session_capability("load" if conn.version == 1 else "resume"),
        "resume": conn.session_capability("resume"),
        "fork": conn.session_capability("fork"),
        "close": can_close(conn),
        "delete": conn.session_capability("delete"),
        "logout": can_logout(conn),
    }


class SessionAdmin:
    def __init__(
        self, editor: ports.EditorPort, registry: SessionRegistry, hub: SessionsHub
    ) -> None:
        self.editor = editor
        self.registry = registry  # closes a session the agent closed or deleted
        self.sessions = registry.by_id
        self.hub = hub

    async def list(
        self, cwd: str | None, cursor: str | None, every_page: bool, agent: Any = None
    ) -> dict[str, Any]:
        """One page of `session/list` of `agent` (default: the `agent` setting's), or with
        `every_page` all of them (following nextCursor). Sessions open in acpls carry their
        latest title (`session_info_update`) and `open`."""
        conn = await self.hub.agent(agent)
        name = self.hub.agent_name_of(conn)
        if not conn.session_capability("list"):
            raise CommandError("the agent does not list sessions")
        sessions: list[dict[str, Any]] = []
        seen: set[str] = set()
        next_cursor = cursor
        for _ in range(MAX_LIST_PAGES if every_page else 1):
            params: dict[str, Any] = {}
            if cwd:
                params["cwd"] = cwd
            if next_cursor:
                params["cursor"] = next_cursor
            result = await self.hub.with_auth(conn, "session/list", params)
            page = result if isinstance(result, dict) else {}
            listed = page.get("sessions")
            sessions.extend(s for s in listed or [] if isinstance(s, dict))
            value = page.get("nextCursor")
            next_cursor = value if isinstance(value, str) and value and value not in seen else None
            if next_cursor is None:
                break
            seen.add(next_cursor)
        out: dict[str, Any] = {"sessions": [self._annotated(s, name) for s in sessions]}
        if next_cursor is not None:
            out["nextCursor"] = next_cursor
        out["offers"] = offers(conn)
        out["agent"] = name
        return out

    async def pick(self, verb: str, agent: Any = None) -> str:
        """Ask the user which stored session (for editors without a picker of their own:
        `window/showMessageRequest` with the titles, newest pages first as the agent lists them)."""
        listed = (await self.list(self.hub.workspace_root(), None, True, agent))["sessions"]
        listed = [s for s in listed if isinstance(s.get("sessionId"), str)][:MAX_CHOICES]
        if not listed:
            raise CommandError("the agent has no stored session here")
        labels: list[str] = []
        for s in listed:
            label = str(s.get("title") or s["sessionId"])
            labels.append(label if label not in labels else f"{label} ({s['sessionId']})")
        choice = await self.editor.show_message_request(
            ports.MESSAGE_INFO, f"acpls: {verb} which session?", labels
        )
        if choice not in labels:
            raise CommandError("no session was chosen")
        return listed[labels.index(choice)]["sessionId"]

    def _annotated(self, listed: dict[str, Any], agent: str) -> dict[str, Any]:
        open_session = self.sessions.get(listed.get("sessionId"))  # type: ignore[arg-type]
        if open_session is None or open_session.agent != agent:
            return listed
        title = open_session.title or listed.get("title")
        return {**listed, **({"title": title} if title else {}), "open": True}

    async def fork(self, session_id: Any, agent: Any = None) -> dict[str, Any]:
        """`session/fork`: a new session with the conversation so far, now the current one. A
        stored session the agent listed can be forked without opening it first."""
        stored = isinstance(session_id, str) and session_id not in self.sessions
        session = None if stored else self.hub.session(session_id)
        origin = session.id if session is not None else str(session_id)
        cwd = session.cwd if session is not None else self.hub.workspace_root()
        conn = await (self.hub.agent_of(session) if session else self.hub.agent(agent))
        if not conn.session_capability("fork"):
            raise CommandError("the agent does not fork sessions")
        params = {"sessionId": origin, **self.hub.lifecycle_params(conn, cwd)}
        result = await self.hub.with_auth(conn, "session/fork", params)
        fork_id = result.get("sessionId") if isinstance(result, dict) else None
        if not isinstance(fork_id, str):
            raise CommandError(f"the agent answered session/fork with {result!r}", INTERNAL_ERROR)
        forked = self.hub.adopt_session(fork_id, cwd, result, conn)
        if session is not None and session.title and forked.title is None:
            forked.title = session.title
        await self.hub.apply_defaults(forked, result)
        return {"sessionId": forked.id, "forkedFrom": origin}

    async def close(self, session_id: Any) -> dict[str, Any]:
        session = self.hub.session(session_id)
        assert session is not None
        conn = await self.hub.agent_of(session)
        closed_by_agent = can_close(conn)
        if closed_by_agent:
            await conn.request("session/close", {"sessionId": session.id})
        self.forget(session, "the session was closed")
        return {"sessionId": session.id, "closedByAgent": closed_by_agent}

    def forget(self, session: Session, reason: str) -> None:
        """The session is no longer acpls': the registry's one close (core/sessions.py)."""
        self.registry.close(session, reason)

    async def delete(self, session_id: str, agent: Any = None) -> dict[str, Any]:
        session = self.sessions.get(session_id)
        conn = await (self.hub.agent_of(session) if session else self.hub.agent(agent))
        if not conn.session_capability("delete"):
            raise CommandError("the agent does not delete sessions")
        if session is not None:
            self.forget(session, "the session was deleted")
        await conn.request("session/delete", {"sessionId": session_id})
        return {"sessionId": session_id}

    async def logout(self, agent: Any = None) -> None:
        conn = await self.hub.agent(agent)
        if not can_logout(conn):
            raise CommandError("the agent does not offer to sign out")
        await conn.request("logout" if conn.version == 1 else "auth/logout", {})
