"""What a controller of core/ may use of the hub, as interfaces.

Controllers (routing, agent requests, review, checkpoints, questions, session admin, sign-in,
mentions, steering) are built by the hub and handed it, but typed against `CoreParts`: the shared
parts (editor port, settings, session registry, pump, terminal store, follow, tasks) and the few
session operations they need. Peers are reached through the narrow `RouterPart`, `ReviewPart`
and `TextsPart`, never their internals. This module imports no controller and the hub imports
them all, so the package's import graph has no cycle (tests/unit/test_import_graph.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from acpls.acp.connection import AgentConnection
    from acpls.core import ports
    from acpls.core.errors import CommandError
    from acpls.core.follow import FollowController
    from acpls.core.pump import FlushScheduler
    from acpls.core.session import Session
    from acpls.core.sessions import SessionRegistry
    from acpls.registry.spec import AgentSpec
    from acpls.settings import Settings
    from acpls.supervisor import TaskSupervisor
    from acpls.translate.terminals import TerminalStore


class RouterPart(Protocol):
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


class TextsPart(Protocol):
    def current_text(self, path: str) -> str | None: ...


class CoreParts(Protocol):
    @property
    def editor(self) -> ports.EditorPort: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def registry(self) -> SessionRegistry: ...

    @property
    def sessions(self) -> dict[str, Session]: ...

    @property
    def environ(self) -> dict[str, str]: ...

    @property
    def state_dir(self) -> Path: ...

    @property
    def tasks(self) -> TaskSupervisor: ...

    @property
    def pump(self) -> FlushScheduler: ...

    @property
    def terminals(self) -> TerminalStore: ...

    @property
    def follow(self) -> FollowController: ...

    @property
    def router(self) -> RouterPart: ...

    @property
    def review(self) -> ReviewPart: ...

    @property
    def agent_requests(self) -> TextsPart: ...

    @property
    def checkpoints(self) -> BaselinesPart: ...

    @property
    def connection(self) -> AgentConnection | None: ...

    def connection_of(self, agent: str | None) -> AgentConnection | None: ...

    async def agent(self, name: Any = None) -> AgentConnection: ...

    async def agent_of(self, session: Session) -> AgentConnection: ...

    def agent_name_of(self, conn: AgentConnection) -> str: ...

    def agent_spec(self, agent: Any = None) -> AgentSpec: ...

    def agent_env(self, spec: AgentSpec) -> dict[str, str]: ...

    async def restart_agent(self, name: Any = None) -> None: ...

    def workspace_root(self) -> str: ...

    def session_summaries(self) -> dict[str, Any]: ...

    def path_of(self, uri: str) -> str: ...

    def session(self, session_id: Any, *, create_ok: bool = False) -> Session | None: ...

    def adopt_session(
        self, session_id: str, cwd: str, response: dict[str, Any], conn: AgentConnection
    ) -> Session: ...

    async def new_session(self, cwd: str | None = None, agent: Any = None) -> Session: ...

    async def load_session(
        self, session_id: str, cwd: str | None = None, *, replay: bool = True, agent: Any = None
    ) -> Session: ...

    def lifecycle_params(self, conn: AgentConnection, cwd: str) -> dict[str, Any]: ...

    async def with_auth(self, conn: AgentConnection, method: str, params: Any) -> Any: ...

    def turn_failure(self, session: Session, error: Mapping[str, Any]) -> CommandError: ...
