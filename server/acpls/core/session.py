"""A session as acpls holds it: translation state, the turn in progress, pending prompts."""

from __future__ import annotations

import asyncio
from typing import Any

import attrs

from acpls.core.pump import UpdateQueue
from acpls.translate.session_updates import SessionUpdateNormalizer


@attrs.define
class PendingPermission:
    request_key: int
    options: list[dict[str, Any]]
    answer: asyncio.Future[dict[str, Any]]
    editor_msg_id: str | None = None


@attrs.define
class Turn:
    """One prompt turn. v1 ends it with the prompt response; v2 with `state_update` idle."""

    done: asyncio.Future[str]
    cancel_requested: bool = False
    reply: list[str] = attrs.Factory(list)
    # The agent's token counts for the turn (ACP v1 unstable PromptResponse.usage), when given.
    usage: dict[str, Any] | None = None

    def __attrs_post_init__(self) -> None:
        # A failed turn is reported by the prompt request that awaits it. When that request is
        # gone (cancelled, or acpls is shutting down) nobody awaits it, and the failure is
        # expected, not a "Future exception was never retrieved" for the loop's handler.
        self.done.add_done_callback(_mark_retrieved)


def _mark_retrieved(done: asyncio.Future[str]) -> None:
    if not done.cancelled():
        done.exception()


@attrs.define
class Session:
    id: str
    cwd: str
    normalizer: SessionUpdateNormalizer
    # The name of the agent whose process holds the session (core/agent_slots.py).
    agent: str = ""
    top_level: bool = True
    title: str | None = None
    queue: UpdateQueue = attrs.Factory(UpdateQueue)
    turn: Turn | None = None
    pending_permissions: dict[int, PendingPermission] = attrs.Factory(dict)
    modes: dict[str, Any] | None = None
    config_options: list[Any] | None = None
    available_commands: list[Any] | None = None
    # Every session/update routed to the session (tells a replay from none).
    updates_routed: int = 0

    def reply_text(self) -> str:
        return "".join(self.turn.reply) if self.turn else ""
