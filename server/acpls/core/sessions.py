"""The session registry: which sessions acpls holds, which is current, and the one way a session
ends.

Every per-session resource (terminals, path approvals, transcripts, early updates, review and
checkpoint state, pending permissions and questions, follow) is owned by a controller that
registers a closer here. `close(session, reason)` runs all of them, whatever ended the session:
the user closing or deleting it, the agent exiting or being restarted, acpls shutting down. A
new kind of per-session state adds a closer, and tests/e2e/test_session_close.py counts what
is left after each kind of end.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from acpls.acp.errors import INTERNAL_ERROR
from acpls.core.errors import CommandError
from acpls.core.session import Session

logger = logging.getLogger(__name__)

Closer = Callable[[Session], None]


class SessionRegistry:
    def __init__(self) -> None:
        # The dict itself is shared (hub.sessions): readers look sessions up, only this class
        # adds and removes them.
        self.by_id: dict[str, Session] = {}
        self.current_id: str | None = None
        self._closers: list[tuple[str, Closer]] = []

    def on_close(self, owner: str, closer: Closer) -> None:
        """`closer(session)` drops what `owner` keeps for the session; it must not raise."""
        self._closers.append((owner, closer))

    def add(self, session: Session) -> Session:
        self.by_id[session.id] = session
        self.current_id = session.id
        return session

    def get(self, session_id: Any) -> Session | None:
        return self.by_id.get(session_id) if isinstance(session_id, str) else None

    def close(self, session: Session, reason: str) -> None:
        """The session is no longer acpls': its turn fails with `reason`, nothing of it waits on
        the user, and nothing of it is kept. Closing twice is harmless."""
        if self.by_id.get(session.id) is session:
            del self.by_id[session.id]
        if self.current_id == session.id:
            self.current_id = None
        turn = session.turn
        if turn is not None and not turn.done.done():
            turn.done.set_exception(CommandError(reason, INTERNAL_ERROR))
        for owner, closer in self._closers:
            try:
                closer(session)
            except Exception:
                logger.exception("%s could not drop the state of session %s", owner, session.id)

    def close_all(self, reason: str, agent: str | None = None) -> None:
        """Close every session, or with `agent` every session of that agent."""
        for session in list(self.by_id.values()):
            if agent is None or session.agent == agent:
                self.close(session, reason)

    def of_agent(self, agent: str) -> list[Session]:
        return [s for s in self.by_id.values() if s.agent == agent]
