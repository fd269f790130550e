"""core/sessions.py on its own: the one way a session ends runs every owner's closer, whatever one
of them does, fails the turn in progress, and forgets the session (issue 17: one close)."""

from __future__ import annotations

import asyncio

import pytest

from acpls.core.errors import CommandError
from acpls.core.session import Session, Turn
from acpls.core.sessions import SessionRegistry
from acpls.translate.session_updates import SessionUpdateNormalizer


def _session(session_id: str, agent: str = "demo") -> Session:
    return Session(session_id, "/ws", SessionUpdateNormalizer(2), agent=agent)


def _registry(closed: list[tuple[str, str]]) -> SessionRegistry:
    registry = SessionRegistry()
    registry.on_close("terminals", lambda s: closed.append(("terminals", s.id)))
    registry.on_close("review", lambda s: closed.append(("review", s.id)))
    return registry


async def test_close_runs_every_closer_fails_the_turn_and_forgets_the_session() -> None:
    closed: list[tuple[str, str]] = []
    registry = _registry(closed)
    session = registry.add(_session("s1"))
    session.turn = Turn(asyncio.get_running_loop().create_future())
    assert registry.current_id == "s1"
    registry.close(session, "the agent exited")
    assert registry.get("s1") is None and registry.current_id is None
    assert closed == [("terminals", "s1"), ("review", "s1")]
    with pytest.raises(CommandError, match="the agent exited"):
        session.turn.done.result()
    registry.close(session, "again")  # harmless: the closers drop nothing twice over
    assert session.turn.done.exception() is not None


def test_a_closer_that_raises_does_not_keep_the_others_from_running() -> None:
    closed: list[tuple[str, str]] = []
    registry = SessionRegistry()

    def broken(_session: Session) -> None:
        raise RuntimeError("a bug in one owner")

    registry.on_close("broken", broken)
    registry.on_close("transcripts", lambda s: closed.append(("transcripts", s.id)))
    registry.close(registry.add(_session("s1")), "closed")
    assert closed == [("transcripts", "s1")]


def test_closing_a_replaced_session_leaves_its_successor() -> None:
    """A stale Session object with the id of a newer one (a reload) closes only itself."""
    registry = _registry([])
    old = registry.add(_session("s1"))
    new = registry.add(_session("s1"))
    registry.close(old, "closed")
    assert registry.get("s1") is new


def test_close_all_of_one_agent_leaves_the_other_agents_sessions() -> None:
    closed: list[tuple[str, str]] = []
    registry = _registry(closed)
    registry.add(_session("a1", "alpha"))
    registry.add(_session("b1", "beta"))
    registry.add(_session("a2", "alpha"))
    registry.close_all("alpha restarted", agent="alpha")
    assert sorted(registry.by_id) == ["b1"]
    assert sorted(s for owner, s in closed if owner == "review") == ["a1", "a2"]
    registry.close_all("shutdown")
    assert registry.by_id == {} and len(closed) == 6
