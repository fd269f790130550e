"""The narrow faces controllers of core/ show each other, as interfaces.

Each controller (routing, agent requests, review, checkpoints, questions, session admin, sign-in,
mentions, steering) is handed by the hub the shared parts it uses (editor port, session map,
pump, terminal store, follow, tasks, state directory) as constructor arguments; what it asks of
the hub itself (settings, agents, session operations) is a small protocol in its own module.
Peers are reached through these parts (`RouterPart`, `ReviewPart`, `BaselinesPart`,
`AgentsPart`), never their internals. This module imports no controller and the hub imports them
all, so the package's import graph has no cycle (tests/unit/test_import_graph.py), and
tests/unit/test_narrow_parts.py checks each controller is handed no more than it uses.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from acpls.acp.connection import AgentConnection
    from acpls.core.session import Session
    from acpls.registry.spec import AgentSpec


class RouterPart(Protocol):
    def expecting_sessions(self) -> AbstractContextManager[None]: ...

    def send_update(self, session: Session, update: dict[str, Any]) -> None: ...

    def merge_tool_call(self, session: Session, raw: dict[str, Any]) -> dict[str, Any]: ...

    def transcript_uri(self, session: Session) -> str: ...

    def session_of_transcript(self, path: str) -> str | None: ...

    def prompt_blocks(
        self, conn: AgentConnection, text: str, context: list[dict[str, Any]]
    ) -> list[dict[str, Any]]: ...


class ReviewPart(Protocol):
    def agent_read(self, path: str, text: str) -> None: ...

    def before_write(self, session: Session, path: str, old_text: str | None) -> None: ...

    def after_write(self, path: str, new_text: str) -> None: ...

    def matches_disk_before_write(self, path: str, buffer: str) -> bool: ...

    def tool_call_seen(
        self, session: Session, state: dict[str, Any], diffs_changed: bool
    ) -> None: ...


class BaselinesPart(Protocol):
    async def text_before_turn(self, session_id: str, path: str) -> tuple[bool, str | None]: ...


class AgentsPart(Protocol):
    """The agents' specs and processes (the hub's agent slots)."""

    def agent_spec(self, agent: Any = None) -> AgentSpec: ...

    def agent_env(self, spec: AgentSpec) -> dict[str, str]: ...

    async def agent(self, name: Any = None) -> AgentConnection: ...

    async def restart_agent(self, name: Any = None) -> None: ...

    def workspace_root(self) -> str: ...
