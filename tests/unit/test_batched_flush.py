"""How one flush of a session's waiting updates reaches an editor that takes `acpls/sessionUpdates`
(editors/protocol.md 5.4.1): pieces of at most BATCH_UPDATES, and a lone update as itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from acpls.core.pump import UpdateQueue
from acpls.core.routing import BATCH_UPDATES, UpdateRouter
from acpls.editor import messages as msg


class _Editor:
    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    def notify(self, method: str, params: Any) -> None:
        self.sent.append((method, params))

    def supports(self, feature: str) -> bool:
        return feature == "sessionUpdates"


class _Pump:
    forced = False


def _router(editor: _Editor) -> UpdateRouter:
    unused = cast(Any, None)  # a flush touches only the editor and the pump
    return UpdateRouter(
        cast(Any, editor), {}, cast(Any, _Pump()), unused, unused, unused, unused, Path("."), unused
    )


def _tool_call(n: int) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call", "toolCall": {"toolCallId": f"t{n}", "title": str(n)}}


@pytest.mark.parametrize("count", [1, 2, BATCH_UPDATES, BATCH_UPDATES + 1, 2 * BATCH_UPDATES + 1])
def test_a_replay_flush_sends_pieces_and_a_lone_update_as_itself(count: int) -> None:
    editor = _Editor()
    queue = UpdateQueue()
    for n in range(count):
        queue.add(_tool_call(n))
    _router(editor)._flush_queue("s1", queue, replay=True)
    received: list[Any] = []
    for method, params in editor.sent:
        if method == msg.SESSION_UPDATES:
            assert 1 < len(params.updates) <= BATCH_UPDATES
            received.extend(params.updates)
        else:
            assert method == msg.SESSION_UPDATE
            received.append(params.update)
    assert [u["toolCall"]["toolCallId"] for u in received] == [f"t{n}" for n in range(count)]
