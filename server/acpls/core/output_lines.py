"""The fast path for ACP v1 terminal output: lines of a known form go straight to their terminal.

claude-agent-acp streams a command's output as v1 `tool_call_update`s holding only
`_meta.terminal_output`. The ordinary path parses each whole line, checks it as JSON-RPC, guards
the session's agent, routes the update and looks into its `_meta`: at 4 KiB chunks that cost as
much as the rest of the relay (bench/RESULTS.md, "v1 lines by their bytes"). `OutputLines` is the
line hook of one agent's connection (acp/transport.py `AcpProtocol.line_hook`): once the router
has routed such a line the ordinary way, it learns the bytes around its output string
(translate/v1_output_lines.py) and appends the text of later lines with the same bytes straight
to that terminal, as the ordinary path would. A line that does not match, whose string is not
valid JSON, or that comes when the session, its agent, its tool call or its terminal is no longer
what the template was learned for, goes the ordinary way: nothing is dropped or reordered (every
line is handled in the order it came, by one path or the other).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from acpls.speedups import JSONDecodeError, json_loads
from acpls.translate.v1_output_lines import OutputLine, learn

if TYPE_CHECKING:
    from acpls.core.pump import FlushScheduler
    from acpls.core.session import Session
    from acpls.translate.terminals import TerminalStore, V1OutputSink

# Terminals of one agent streaming at once, each with its own line form.
MAX_FORMS = 4
# Lines it failed to learn from (an agent whose output lines cannot be located for certain):
# past this it stops trying, so such an agent does not pay for it on every line.
MAX_FAILED_LEARNS = 64
_NOTIFICATION_KEYS = frozenset({"jsonrpc", "method", "params"})


class _Form:
    __slots__ = ("session", "sink", "template", "tool_call_id")

    def __init__(
        self, template: OutputLine, session: Session, tool_call_id: str, sink: V1OutputSink
    ) -> None:
        self.template = template
        self.session = session
        self.tool_call_id = tool_call_id
        self.sink = sink


class OutputLines:
    """The line hook of one agent's connection (see the module docstring)."""

    def __init__(
        self,
        agent: str,
        sessions: Mapping[str, Session],
        terminals: TerminalStore,
        pump: FlushScheduler,
    ) -> None:
        self.agent = agent
        self.sessions = sessions
        self.terminals = terminals
        self.pump = pump
        self.forms: list[_Form] = []  # newest first
        self._unmatched: bytes | None = None  # the last line that took the ordinary path
        self._failed = 0

    def __call__(self, line: bytes) -> bool:
        """Handle `line` if it is a known output line; False: take the ordinary path."""
        for form in self.forms:
            text = form.template.text(line)
            if text is not None:
                break
        else:
            self._unmatched = line
            return False
        if not self._still_fast(form):
            self.forms.remove(form)
            self._unmatched = line
            return False
        form.sink.append(text)
        form.session.updates_routed += 1
        self.pump.poke()
        return True

    def _still_fast(self, form: _Form) -> bool:
        """What the ordinary path checks for this update (agent_slots' guard, the router's
        `_v1_output_only`, the terminal store) still holds."""
        session = form.session
        normalizer = session.normalizer
        return (
            self.sessions.get(session.id) is session
            and session.agent == self.agent
            and normalizer.version == 1
            and not normalizer.replaying
            and form.tool_call_id in normalizer.tool_calls
            and self.terminals.current(form.sink)
        )

    def routed(self, session: Session, update: dict[str, Any]) -> None:
        """The router took `update` (of `session`) as v1 terminal output only, the ordinary
        way: learn its line's form if that line is the one just read."""
        line, self._unmatched = self._unmatched, None
        if line is None or self._failed >= MAX_FAILED_LEARNS:
            return
        form = self._learn(line, session, update)
        if form is None:
            self._failed += 1
            return
        self.forms.insert(0, form)
        del self.forms[MAX_FORMS:]

    def _learn(self, line: bytes, session: Session, update: dict[str, Any]) -> _Form | None:
        try:
            message = json_loads(line)
        except JSONDecodeError:
            return None
        if not _is_update_of(message, session.id, update):
            return None
        tool_call_id, meta = update["toolCallId"], update["_meta"]
        sink = self.terminals.v1_output_sink(session.id, tool_call_id, meta)
        if sink is None:
            return None
        (item,) = meta.values()
        template = learn(line, message, item["data"])
        if template is None:
            return None
        form = _Form(template, session, tool_call_id, sink)
        return form if self._still_fast(form) else None

    def forget(self, session_id: str) -> None:
        """The session ended: keep nothing of it."""
        self.forms = [form for form in self.forms if form.session.id != session_id]


def _is_update_of(message: Any, session_id: str, update: dict[str, Any]) -> bool:
    """`message` is the session/update notification of `update` in that session, as
    `AcpProtocol` dispatches it to the router (no id: a request is not a notification)."""
    if not isinstance(message, dict) or message.keys() != _NOTIFICATION_KEYS:
        return False
    params = message["params"]
    return (
        message["jsonrpc"] == "2.0"
        and message["method"] == "session/update"
        and isinstance(params, dict)
        and params.get("sessionId") == session_id
        and params.get("update") == update
    )
