"""Steering a running turn (`acpls.steer`): the user's message is given to the agent while it
works, where the agent offers it (Claude Code's `_session/steering` extension, advertised as
`_meta.steering.supported` in its initialize result). Elsewhere front ends queue the prompt and
send it when the turn ends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from acpls.core.errors import CommandError

if TYPE_CHECKING:
    from acpls.acp.connection import AgentConnection
    from acpls.core.parts import RouterPart
    from acpls.core.session import Session


class SteeringPart(Protocol):
    """What steering uses: the session, its agent's process, and the router's prompt blocks."""

    @property
    def router(self) -> RouterPart: ...

    def session(self, session_id: Any) -> Session | None: ...

    async def agent_of(self, session: Session) -> AgentConnection: ...


STEER_METHOD = "_session/steering"


async def steer(
    hub: SteeringPart, session_id: Any, text: str, context: list[dict[str, Any]]
) -> dict[str, Any]:
    """`{"outcome": "injected" | "startedNewTurn" | "promptRequired", ...}` as the agent says.
    `promptRequired` (no turn was running) means nothing was sent: the front end sends the text
    as an ordinary prompt."""
    session = hub.session(session_id)
    assert session is not None
    conn = await hub.agent_of(session)
    if not conn.can_steer:
        raise CommandError("the agent does not take messages while it works: queue the prompt")
    blocks = hub.router.prompt_blocks(conn, text, context)
    params = {
        "sessionId": session.id,
        "prompt": blocks,
        # Without a running turn the agent must not start one behind acpls' back.
        "_meta": {"steering": {"idleBehavior": "promptRequired"}},
    }
    result = await conn.request(STEER_METHOD, params)
    out = dict(result) if isinstance(result, dict) else {}
    if not isinstance(out.get("outcome"), str):
        out["outcome"] = "injected"
    return {"sessionId": session.id, **out}
