"""Follow-along as a controller: the pure decisions of `translate.follow.FollowTracker`, a timer
for the trailing move of a burst, and the editor it tells.

The newest location of a burst always reaches the editor: a wake-up that fires early asks the
tracker again instead of dropping the waiting target, and the end of a turn sends it at once.
Follow messages are written straight to the editor (`EditorPort.notify`), never through the
output pump, so they do not wait for the next flush of terminal output. They are charged to the
session's message budget (core/pump.py `MessageBudget`), which they share with its
`acpls/sessionUpdate`s: the queue keeps a reserve for them, so a location waits for the budget
only when the agent moves faster than ~40 locations a second, and then the newest one is sent
as soon as the budget allows (the end of a turn sends it at once).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from acpls.core import ports
from acpls.core.pump import MessageBudget
from acpls.editor import messages as msg
from acpls.supervisor import TaskSupervisor
from acpls.translate.follow import FollowTarget, FollowTracker
from acpls.translate.uris import path_to_uri

logger = logging.getLogger(__name__)


class FollowController:
    def __init__(
        self,
        editor: ports.EditorPort,
        tasks: TaskSupervisor,
        *,
        enabled: bool = True,
        budget_of: Callable[[str], MessageBudget | None] = lambda _session_id: None,
    ) -> None:
        self.editor = editor
        self.tasks = tasks
        # The message budget of a session (None: not paced), shared with its session updates.
        self._budget_of = budget_of
        self.tracker = FollowTracker(enabled=enabled)
        self._timer: asyncio.TimerHandle | None = None

    @property
    def active(self) -> bool:
        return self.tracker.active

    @property
    def enabled(self) -> bool:
        return self.tracker.enabled

    def set_enabled(self, enabled: bool, reason: str = "command") -> None:
        self.tracker.set_enabled(enabled)
        if not enabled:
            self._cancel_timer()
        self._state(reason)

    def user_edited(self) -> None:
        if not self.tracker.pause_for_user_edit():
            return
        self._cancel_timer()
        self._state("userEdit")
        if not self.editor.custom_mode:
            self.editor.show_message(
                ports.MESSAGE_INFO,
                "acpls: follow paused because you are editing; run acpls.setFollow to resume.",
            )

    def move(self, target: FollowTarget) -> None:
        send, wake_at = self.tracker.offer(target, time.monotonic())
        if send is not None:
            self._send(send)
        elif wake_at is not None:
            self._wake_at(wake_at)

    def lead(self, target: FollowTarget, *, urgent: bool = False) -> None:
        """The newest location of a block of agent output, ahead of the block (core/routing.py
        `look_ahead`): a flood of locations shows its newest at once, not after all the others."""
        send, wake_at = self.tracker.lead(target, time.monotonic(), urgent=urgent)
        if send is not None:
            self._send(send)
        elif wake_at is not None:
            self._wake_at(wake_at)

    def block_done(self) -> None:
        self.tracker.block_done()

    def end_turn(self) -> None:
        """The turn ended: its newest location goes out now, before the turn's result."""
        target = self.tracker.flush(time.monotonic())
        self._cancel_timer()
        if target is not None:
            self._send(target, forced=True)
        self.tracker.end_turn()

    def forget_session(self, session_id: str) -> None:
        self.tracker.forget_session(session_id)
        if self.tracker.waiting_until() is None:
            self._cancel_timer()

    def close(self) -> None:
        self._cancel_timer()

    # -- internals -------------------------------------------------------------------------------
    def _wake_at(self, when: float) -> None:
        if self._timer is not None:
            return
        delay = max(when - time.monotonic(), 0.0)
        self._timer = asyncio.get_running_loop().call_later(delay, self._due)

    def _due(self) -> None:
        self._timer = None
        target = self.tracker.due(time.monotonic())
        if target is not None:
            self._send(target)
            return
        when = self.tracker.waiting_until()
        if when is not None:  # woken before the window ended: the target still waits
            self._wake_at(when)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _state(self, reason: str) -> None:
        if self.editor.custom_mode:
            self.editor.notify(
                msg.FOLLOW_STATE,
                msg.FollowStateParams(enabled=self.tracker.active, reason=reason),  # type: ignore[arg-type]
            )

    def _send(self, target: FollowTarget, *, forced: bool = False) -> None:
        budget = self._budget_of(target.session_id)
        if budget is not None:
            now = time.monotonic()
            need = budget.follow_need(now)
            if not forced and budget.credit(now) < need:
                # Over the session's budget: the location waits (a newer one replaces it) and
                # goes out as soon as the budget allows.
                self.tracker.hold(target)
                self._wake_at(budget.ready_at(now, need))
                return
            budget.spend(1)
        try:
            uri = path_to_uri(target.path)
        except ValueError:
            logger.warning("not following to %r: not an absolute path", target.path)
            return
        if self.editor.custom_mode:
            self.editor.notify(
                msg.FOLLOW_AGENT,
                msg.FollowAgentParams(
                    sessionId=target.session_id,
                    toolCallId=target.tool_call_id,
                    uri=uri,
                    range=target.lsp_range(),
                    kind=target.kind,
                ),
            )
        elif self.editor.supports_show_document:
            self.tasks.spawn("show-document", self.editor.show_document(uri, target.lsp_range()))
