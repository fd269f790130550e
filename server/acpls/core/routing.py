"""Where each ACP session update goes: the editor, the terminal store, follow, the transcript.

`on_session_update` is the hot path (most of the agent's traffic): terminal output chunks go
straight to the terminal store, everything else through the session's normaliser. What reaches the
editor waits in the session's queue until the pump flushes it (core/pump.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from acpls.core import ports
from acpls.core.errors import CommandError
from acpls.core.output_lines import OutputLines
from acpls.core.pump import ReplayPacer, UpdateQueue
from acpls.editor import messages as msg
from acpls.services.transcript import Transcript
from acpls.speedups import JSONDecodeError, json_loads
from acpls.translate.follow import FollowTarget, is_subagent_tool_call
from acpls.translate.line_ranges import line_span, slice_lines
from acpls.translate.terminals import OutputBatch, StateUpdate
from acpls.translate.uris import path_to_uri

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from acpls.acp.connection import AgentConnection
    from acpls.core.follow import FollowController
    from acpls.core.parts import ReviewPart
    from acpls.core.pump import FlushScheduler
    from acpls.core.secrets import KnownSecrets
    from acpls.core.session import Session
    from acpls.flow import FlowGate
    from acpls.settings import Settings
    from acpls.supervisor import TaskSupervisor
    from acpls.translate.terminals import TerminalStore


class RoutingHub(Protocol):
    """What routing asks of the hub: the settings (follow.subagents, embedding limit, the
    default agent's name), a context URI's path, and the error a failed v2 turn ends with."""

    @property
    def settings(self) -> Settings: ...

    def path_of(self, uri: str) -> str: ...

    def turn_failure(self, session: Session, error: Mapping[str, Any]) -> CommandError: ...

    @property
    def secrets(self) -> KnownSecrets: ...


logger = logging.getLogger(__name__)

# A block of agent output this large (about a thousand tool calls) has its newest followed
# location sent at once, even within follow's 16 ms window (translate/follow.py `lead`).
URGENT_BLOCK_BYTES = 256 * 1024

# Updates per `acpls/sessionUpdates` message (editors/protocol.md 5.4.1): a 20,000-update load
# is some 40 messages instead of 8,000, each small enough for an editor to take between
# keystrokes.
BATCH_UPDATES = 200

EARLY_UPDATES_PER_SESSION = 1000
EARLY_SESSIONS = 64
_V1_OUTPUT_META = frozenset({"terminal_output", "terminal_output_delta"})


def newest_location_line(block: bytes) -> bytes | None:
    """The last whole line of `block` after its first that mentions locations (None: none). A
    read often ends inside a line, whose head is no message yet; the block's first line may be
    the tail of one, and is handled first anyway."""
    whole = block.rfind(b"\n")
    at = block.rfind(b'"locations"', 0, max(whole, 0))
    if at < 0:
        return None
    start = block.rfind(b"\n", 0, at) + 1
    if start == 0:
        return None
    return block[start : block.find(b"\n", at)]


class UpdateRouter:
    def __init__(
        self,
        editor: ports.EditorPort,
        sessions: Mapping[str, Session],
        pump: FlushScheduler,
        terminals: TerminalStore,
        follow: FollowController,
        review: ReviewPart,
        tasks: TaskSupervisor,
        state_dir: Path,
        hub: RoutingHub,
        pacer: ReplayPacer | None = None,
        editor_output: FlowGate | None = None,
    ) -> None:
        self.editor = editor
        self.sessions = sessions  # the registry's, read only
        self.pump = pump
        self.terminals = terminals
        self.follow = follow
        self.review = review  # sees each tool call's diffs
        self.tasks = tasks
        self.state_dir = state_dir  # transcripts
        self.hub = hub
        # Paces replayed history by what the editor has not read (core/pump.py); None: unpaced.
        self.pacer = pacer
        # Closed while the editor is behind (flow.py): terminal output then waits in the store;
        # None: never held.
        self.editor_output = editor_output
        # Loads waiting for their replay to reach the editor before they answer, by session id.
        self._replay_sent: dict[str, asyncio.Future[None]] = {}
        # Updates for a session id acpls has not registered yet (legal before session/new answers),
        # kept only while a request that makes a session is in flight (`expecting_sessions`).
        self._early: dict[str, list[dict[str, Any]]] = {}
        self._expecting = 0
        self._early_dropped = 0
        self._transcripts: dict[str, Transcript] = {}
        # Each agent's v1 terminal output fast path, by agent name (core/output_lines.py).
        self._output_lines: dict[str, OutputLines] = {}

    # -- the hot path ----------------------------------------------------------------------------
    def on_session_update(self, params: Any) -> None:
        if not isinstance(params, dict):
            logger.error("session/update without an object as params: %.200r", params)
            return
        session_id, update = params.get("sessionId"), params.get("update")
        if not isinstance(session_id, str) or not isinstance(update, dict):
            logger.error("session/update without sessionId or update: %.200r", params)
            return
        session = self.sessions.get(session_id)
        if session is None:
            self._keep_early(session_id, update)
            return
        self.route(session, update)
        self.pump.poke()

    @contextlib.contextmanager
    def expecting_sessions(self) -> Iterator[None]:
        """A session/new or session/fork is in flight: updates for ids acpls does not hold yet
        may be of the session it makes, and wait for it. At any other time such an update is of
        a session that ended (an agent still speaking of it after session/close) or never was,
        and is dropped, so nothing of an ended session is kept."""
        self._expecting += 1
        try:
            yield
        finally:
            self._expecting -= 1

    def _keep_early(self, session_id: str, update: dict[str, Any]) -> None:
        early = self._early.get(session_id)
        if early is None and self._expecting and len(self._early) < EARLY_SESSIONS:
            early = self._early[session_id] = []
        if early is None or len(early) >= EARLY_UPDATES_PER_SESSION:
            # Bounded both ways: an agent naming endless unknown session ids must not grow memory
            # (nor the log: one line, then one per thousand dropped).
            self._early_dropped += 1
            if self._early_dropped % 1000 == 1:
                logger.warning(
                    "dropping updates for unknown session %r (%d dropped so far)",
                    session_id,
                    self._early_dropped,
                )
            return
        early.append(update)

    def route(self, session: Session, update: dict[str, Any]) -> None:
        session.updates_routed += 1
        kind = update.get("sessionUpdate")
        terminals = self.terminals
        if kind == "terminal_output_chunk":
            terminal_id, data = update.get("terminalId"), update.get("data")
            if isinstance(terminal_id, str) and isinstance(data, str):
                terminals.append_chunk(session.id, terminal_id, data)
            else:
                logger.error("terminal_output_chunk without terminalId or data: %.200r", update)
            return
        if kind == "tool_call_update" and self._v1_output_only(session, update):
            # Output of a known tool call's terminal and nothing else: it changes no state the
            # editor sees (the output keys are not shown in `toolCall`), so skip the normaliser.
            terminals.apply_v1_meta(session.id, update["toolCallId"], update["_meta"])
            lines = self._output_lines.get(session.agent)
            if lines is not None:
                lines.routed(session, update)
            return
        normalized = session.normalizer.normalize(update)
        if normalized.terminal_update is not None:
            terminals.apply_update(session.id, normalized.terminal_update)
        if normalized.terminal_chunk is not None:
            terminals.append_chunk(session.id, *normalized.terminal_chunk)
        applied = normalized.tool_call
        if applied is not None:
            self._tool_call_applied(session, applied, update.get("_meta"))
        for editor_update in normalized.editor_updates:
            self._to_editor(session, editor_update)

    def output_lines(self, agent: str) -> OutputLines:
        """A new line hook for `agent`'s connection (its previous one, if any, is replaced)."""
        lines = self._output_lines[agent] = OutputLines(
            agent, self.sessions, self.terminals, self.pump
        )
        return lines

    @staticmethod
    def _v1_output_only(session: Session, update: dict[str, Any]) -> bool:
        """A v1 `tool_call_update` that only carries `_meta.terminal_output(_delta)` for a tool
        call acpls knows (claude-agent-acp streams a command's output this way)."""
        normalizer = session.normalizer
        meta = update.get("_meta")
        return (
            normalizer.version == 1
            and isinstance(meta, dict)
            and len(update) == 3
            and meta.keys() <= _V1_OUTPUT_META
            and bool(meta)
            and not normalizer.replaying
            and update.get("toolCallId") in normalizer.tool_calls
        )

    def send_update(self, session: Session, update: dict[str, Any]) -> None:
        """An update acpls itself makes (not the agent's), e.g. an automatic permission answer."""
        self._to_editor(session, update)
        self.pump.poke()

    def merge_tool_call(self, session: Session, raw: dict[str, Any]) -> dict[str, Any]:
        """A tool call carried by a permission request is an upsert of that tool call."""
        normalized = session.normalizer.normalize({**raw, "sessionUpdate": "tool_call_update"})
        for editor_update in normalized.editor_updates:
            self._to_editor(session, editor_update)
        self.pump.poke()
        if normalized.tool_call is None:
            return dict(raw)
        self._tool_call_applied(session, normalized.tool_call, raw.get("_meta"))
        return normalized.tool_call.state.to_editor()

    def look_ahead(self, block: bytes) -> None:
        """Before a block of the agent's output is handled: the newest followed location in it
        goes to follow first (a flood of thousands of locations shows its newest at once)."""
        line = newest_location_line(block)
        if line is None:
            return
        try:
            message = json_loads(line)
        except JSONDecodeError:
            return
        target = self._follow_target(message)
        if target is not None:
            # A large block takes long enough to handle that no follow timer could fire in it.
            self.follow.lead(target, urgent=len(block) >= URGENT_BLOCK_BYTES)

    def _follow_target(self, message: Any) -> FollowTarget | None:
        params = message.get("params") if isinstance(message, dict) else None
        if not isinstance(params, dict) or message.get("method") != "session/update":
            return None
        session_id = params.get("sessionId")
        session = self.sessions.get(session_id) if isinstance(session_id, str) else None
        update = params.get("update")
        if session is None or not session.top_level or not isinstance(update, dict):
            return None
        if update.get("sessionUpdate") not in ("tool_call", "tool_call_update"):
            return None
        locations, tool_call_id = update.get("locations"), update.get("toolCallId")
        if not isinstance(locations, list) or not locations or not isinstance(tool_call_id, str):
            return None
        last = locations[-1]
        if not isinstance(last, dict) or not isinstance(last.get("path"), str):
            return None
        if not self.hub.settings.follow_subagents and is_subagent_tool_call(update):
            return None
        kind = update.get("kind")
        return FollowTarget(
            session_id=session.id,
            tool_call_id=tool_call_id,
            path=last["path"],
            line=last.get("line"),
            kind=kind if isinstance(kind, str) else None,
        )

    def _tool_call_applied(self, session: Session, applied: Any, meta: Any) -> None:
        """`meta` is the `_meta` of this update as the agent sent it: the v1 terminal extension's
        `terminal_output` is an event of the update that carries it, so it must not be taken
        from the merged state (where it stays, and a later status update would append the same
        output again)."""
        state = applied.state.to_editor()
        tool_call_id = state.get("toolCallId", "")
        for terminal_id in applied.terminal_ids:
            self.terminals.set_tool_call(session.id, terminal_id, tool_call_id)
        if isinstance(meta, dict) and any(k.startswith("terminal_") for k in meta):
            self.terminals.apply_v1_meta(session.id, tool_call_id, meta)
        if state.get("status") in ("completed", "failed") and "rawOutput" in state:
            # codex-acp shows a terminal it never sends output for: the output is in rawOutput.
            self.terminals.fill_from_raw_output(session.id, tool_call_id, state["rawOutput"])
        followed = self.hub.settings.follow_subagents or not is_subagent_tool_call(state)
        if applied.new_locations and session.top_level and followed:
            location = applied.new_locations[-1]
            self.follow.move(
                FollowTarget(
                    session_id=session.id,
                    tool_call_id=tool_call_id,
                    path=location.path,
                    line=location.line,
                    kind=state.get("kind"),
                )
            )
        self.review.tool_call_seen(session, state, applied.diffs_changed)

    def _to_editor(self, session: Session, update: dict[str, Any]) -> None:
        kind = update.get("sessionUpdate")
        turn = session.turn
        if kind == "message_chunk" and turn is not None and update.get("role") == "agent":
            content = update.get("content")
            if isinstance(content, dict) and isinstance(content.get("text"), str):
                turn.reply.append(content["text"])
        elif kind == "state":
            self._state_changed(session, update)
        elif kind == "session_info" and isinstance(update.get("title"), str):
            session.title = update["title"]
        elif kind == "modes":
            session.modes = update
        elif kind == "config_options":
            session.config_options = update.get("configOptions")
        elif kind == "available_commands":
            session.available_commands = update.get("availableCommands")
        if self.editor.custom_mode:
            session.queue.add(update)
        transcript = self._transcripts.get(session.id)
        if transcript is not None:
            warning = transcript.add_update(update)
            if warning is not None and not self.editor.custom_mode:
                self.editor.show_message(ports.MESSAGE_WARNING, f"acpls: {warning}")

    def _state_changed(self, session: Session, update: dict[str, Any]) -> None:
        turn = session.turn
        if update.get("state") != "idle" or turn is None or turn.done.done():
            return
        if session.normalizer.version != 2:
            return
        stop = update.get("stopReason")
        error = update.get("error")
        if stop == "error" and isinstance(error, dict):
            turn.done.set_exception(self.hub.turn_failure(session, error))
            return
        turn.done.set_result(stop if isinstance(stop, str) else "end_turn")

    # -- session life ----------------------------------------------------------------------------
    def session_started(self, session: Session, response: dict[str, Any]) -> None:
        for update in session.normalizer.session_setup(response):
            self._to_editor(session, update)
        if session.id not in self._transcripts:
            self._transcripts[session.id] = self._new_transcript(session)
        for update in self._early.pop(session.id, []):
            self.route(session, update)
        self.pump.poke()

    def turn_started(self, session: Session, text: str, blocks: list[dict[str, Any]]) -> None:
        transcript = self._transcripts.get(session.id)
        if transcript is not None:
            transcript.user_prompt(text)
            self._show_transcript(transcript)
        for update in session.normalizer.user_prompt(blocks) + session.normalizer.begin_turn():
            self._to_editor(session, update)
        self.pump.poke()

    def _new_transcript(self, session: Session) -> Transcript:
        """A session's transcript, written through the redactor of the secrets acpls knows."""
        secrets = self.hub.secrets
        agent = session.agent or self.hub.settings.agent.name
        return Transcript.create(self.state_dir, session.id, agent, lambda: secrets.redactor)

    def session_of_transcript(self, path: str) -> str | None:
        """The session whose transcript is the file at `path`, if it is one."""
        return next((sid for sid, t in self._transcripts.items() if str(t.path) == path), None)

    def _show_transcript(self, transcript: Transcript) -> None:
        """Generic mode: each prompt shows the transcript, where a plain LSP editor reads the answer
        (editors/protocol.md section 4)."""
        editor = self.editor
        if editor.custom_mode or not editor.supports_show_document:
            return
        transcript.flush()
        uri = path_to_uri(str(transcript.path))
        self.tasks.spawn("show-transcript", editor.show_document(uri, None))

    def turn_ended(
        self,
        session: Session,
        stop_reason: str,
        reply: str,
        tokens: dict[str, Any] | None = None,
    ) -> None:
        for update in session.normalizer.end_turn(stop_reason):
            self._to_editor(session, update)
        self.follow.end_turn()
        if not self.editor.custom_mode:
            # The turn's last terminal output goes into the transcript above its end line, not
            # after it at the next flush (the fresh-clone test_emacs run saw it below).
            self._flush_session_terminals(session.id)
        transcript = self._transcripts.get(session.id)
        if transcript is not None:
            transcript.turn_ended(stop_reason, tokens)
        if not self.editor.custom_mode:
            first_line = next((ln for ln in reply.splitlines() if ln.strip()), "")
            agent = session.agent or self.hub.settings.agent.name
            summary = f"acpls: {agent} finished ({stop_reason})"
            self.editor.show_message(3, f"{summary}: {first_line[:200]}" if first_line else summary)

    def transcript_uri(self, session: Session) -> str:
        transcript = self._transcripts.get(session.id)
        if transcript is None:
            transcript = self._new_transcript(session)
            self._transcripts[session.id] = transcript
            # The mode the session is in (set before the transcript existed).
            options = {"sessionUpdate": "config_options", "configOptions": session.config_options}
            for known in (session.modes, options):
                if isinstance(known, dict):
                    transcript.add_update(known)
        transcript.flush()
        return path_to_uri(str(transcript.path))

    def replay(self, session: Session, enabled: bool) -> None:
        if not enabled and self.editor.custom_mode:
            # The replay's last updates, uncharged like the rest of it, before what ending the
            # replay adds (those are the session's own and paced as such). Normally none are
            # left (the load waited for `replay_sent`); after a failed load, all go at once.
            self._flush_queue(session.id, session.queue, force=True, replay=True)
        for update in session.normalizer.replay_mode(enabled):
            self._to_editor(session, update)
        self.pump.poke()

    async def replay_sent(self, session: Session) -> None:
        """Until the session's replayed history has all gone to the editor: a paced replay
        (`ReplayPacer`) may still hold some when the agent answers the load, and the load's
        answer must come after all of it (protocol.md 5.4.1)."""
        if self.pacer is None or not session.queue:
            return
        sent = self._replay_sent.get(session.id)
        if sent is None:
            sent = self._replay_sent[session.id] = asyncio.get_running_loop().create_future()
        self.pump.poke()
        await asyncio.shield(sent)

    def mode_changed(self, session: Session, mode_id: str) -> None:
        self.route(session, {"sessionUpdate": "current_mode_update", "currentModeId": mode_id})
        self.pump.poke()

    def config_changed(self, session: Session, options: list[Any]) -> None:
        self.route(session, {"sessionUpdate": "config_option_update", "configOptions": options})
        self.pump.poke()

    def mode_config_id(self, session: Session) -> str | None:
        for option in session.config_options or []:
            if isinstance(option, dict) and option.get("category") == "mode":
                config_id = option.get("configId") or option.get("id")
                return config_id if isinstance(config_id, str) else None
        return None

    # -- prompts ---------------------------------------------------------------------------------
    def prompt_blocks(
        self, conn: AgentConnection, text: str, context: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
        embedded = conn.prompt_capability("embeddedContext")
        for item in context:
            blocks.append(self._context_block(item, embedded))
        return blocks

    def _context_block(self, item: dict[str, Any], embedded: bool) -> dict[str, Any]:
        uri = item["uri"]
        text = self.editor.document_text(uri)
        path = self.hub.path_of(uri)
        if text is None:
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    text = handle.read()
            except OSError as exc:
                raise CommandError(f"cannot read context {uri}: {exc.strerror}") from exc
        selection = item.get("range")
        if selection is not None:
            text = slice_lines(text, selection)
            first, last = line_span(selection)
            uri = f"{uri}#L{first + 1}-{last + 1}"
        if embedded and len(text.encode("utf-8")) <= self.hub.settings.context_max_embed_bytes:
            return {"type": "resource", "resource": {"uri": uri, "text": text}}
        name = path.rsplit("/", 1)[-1]
        return {"type": "resource_link", "uri": uri, "name": name}

    # -- delivery --------------------------------------------------------------------------------
    def flush(self) -> None:
        editor = self.editor
        if editor.custom_mode:
            for session in list(self.sessions.values()):
                replaying = session.normalizer.replaying
                self._flush_queue(session.id, session.queue, replay=replaying)
            if self._terminals_may_go():
                # A terminal's output before the update that ends it (translate/terminals.py).
                self._send_terminal_events(self.terminals.take_in_order())
        else:
            self.terminals.take_state_changes()
            for batch in self.terminals.take_output():
                transcript = self._transcripts.get(batch.session_id)
                if transcript is not None:
                    transcript.terminal_output(batch.terminal_id, batch.text)
        for transcript in self._transcripts.values():
            transcript.flush()

    def _terminals_may_go(self) -> bool:
        """Whether the terminals' output goes to the editor in this flush: not while the editor
        is behind (the editor-output gate is closed, flow.py), unless the flush is forced (the
        end of a turn: its answer follows its terminals' output).

        The agent's own output is held back by leaving it unread in the agent's pipe. A client
        terminal's pty is read on regardless: the agent's view of it (`terminal/output`, the
        last `outputByteLimit` bytes) must stay live, or an agent in `terminal/wait_for_exit`
        would hang for as long as the editor is minimised, and a terminal whose reader stops
        stalls its program. So what waits for the editor is bounded instead: the output stays
        in the terminal store, which keeps at most `terminal.scrollbackBytes` of it per
        terminal; a flood past that drops the middle and the editor, reading again, gets a
        `reset` whose `dropped` says how many bytes it does not get, then the tail (protocol.md
        5.6, 6). The editor's own scrollback (by default 1,000 lines in VS Code, 10,000 in
        Neovim) is smaller than that tail, so the reset loses nothing it could still show.
        Without this, every flush went into the writer's buffer for the editor: a flooding
        terminal grew acpls by the size of the flood."""
        gate = self.editor_output
        if gate is None or gate.is_open or self.pump.forced:
            return True
        gate.call_when_open(self.pump.poke)  # what waits goes out when the editor caught up
        return False

    def _send_terminal_events(self, events: list[OutputBatch | StateUpdate]) -> None:
        editor = self.editor
        for event in events:
            if isinstance(event, OutputBatch):
                editor.notify(
                    msg.TERMINAL_OUTPUT,
                    msg.TerminalOutputParams(
                        sessionId=event.session_id,
                        terminalId=event.terminal_id,
                        text=event.text,
                        reset=True if event.reset else None,
                        dropped=event.dropped or None,
                    ),
                )
            else:
                editor.notify(msg.TERMINAL_UPDATE, msg.TerminalUpdateParams(**event.params))

    def _flush_session_terminals(self, session_id: str) -> None:
        """What the session's terminals produced since the last flush, in order: the agent's
        last output and exit can arrive in the same read as its answer to session/close, and
        the store forgets them when the session ends (the exit line never showed)."""
        events = self.terminals.take_session_in_order(session_id)
        if self.editor.custom_mode:
            self._send_terminal_events(events)
            return
        transcript = self._transcripts.get(session_id)
        for event in events:
            if transcript is not None and isinstance(event, OutputBatch):
                transcript.terminal_output(event.terminal_id, event.text)

    def _flush_queue(
        self, session_id: str, queue: UpdateQueue, *, force: bool = False, replay: bool = False
    ) -> None:
        """Send what waits for a session: paced in a live turn; uncharged while the agent
        replays a loaded session (protocol.md 5.4.1), as it comes (the editor shows the history
        while acpls still reads it) as far as the editor keeps reading (`ReplayPacer`); `force`
        (or a forced flush) sends all of it."""
        if not queue:
            self._replay_gone(session_id)
            return
        pump = self.pump
        if replay and self.pacer is not None and not (pump.forced or force):
            self._flush_replay_paced(session_id, queue, self.pacer)
            return
        if replay:
            updates = queue.take(charge=False)
        elif pump.forced or force:
            updates = queue.take()
        else:
            now = time.monotonic()
            updates = queue.take_paced(now)
            if queue:  # over its message budget: the rest goes out when the budget allows
                pump.wake_at(queue.ready_at(now))
        self._send_updates(session_id, updates)
        if not queue:
            self._replay_gone(session_id)

    def _flush_replay_paced(self, session_id: str, queue: UpdateQueue, pacer: ReplayPacer) -> None:
        """A replay's pieces while the editor keeps up; the rest waits (coalescing) and is
        looked at again in `pacer.recheck_in()`, so an editor that fell behind is not handed a run
        of messages to decode in one go."""
        while queue and pacer.may_send(len(queue)):
            self._send_updates(session_id, queue.take_oldest(BATCH_UPDATES))
        if queue:
            self.pump.wake_at(time.monotonic() + pacer.recheck_in())
        else:
            self._replay_gone(session_id)

    def _replay_gone(self, session_id: str) -> None:
        if self._replay_sent:
            sent = self._replay_sent.pop(session_id, None)
            if sent is not None and not sent.done():
                sent.set_result(None)

    def _send_updates(self, session_id: str, updates: list[dict[str, Any]]) -> None:
        editor = self.editor
        notify = editor.notify
        if len(updates) > 1 and editor.supports("sessionUpdates"):
            # One message per piece instead of one per update: an editor's cost is mostly per
            # message (decoding, dispatch), and a load flushes thousands at once.
            for start in range(0, len(updates), BATCH_UPDATES):
                piece = updates[start : start + BATCH_UPDATES]
                if len(piece) == 1:  # a lone last piece goes as itself (protocol.md 5.4.1)
                    self._notify_one(notify, session_id, piece[0])
                    continue
                notify(
                    msg.SESSION_UPDATES,
                    msg.SessionUpdatesParams(sessionId=session_id, updates=piece),
                )
            return
        for update in updates:
            self._notify_one(notify, session_id, update)

    @staticmethod
    def _notify_one(notify: Callable[[str, Any], None], session_id: str, update: Any) -> None:
        notify(msg.SESSION_UPDATE, msg.SessionUpdateParams(sessionId=session_id, update=update))

    def session_closed(self, session: Session) -> None:
        """The session ended (core/sessions.py): what it queued still reaches the editor, then
        its transcript is closed and nothing of it is kept."""
        self._flush_queue(session.id, session.queue, force=True)
        self._flush_session_terminals(session.id)
        self._early.pop(session.id, None)
        for lines in self._output_lines.values():
            lines.forget(session.id)
        transcript = self._transcripts.pop(session.id, None)
        if transcript is not None:
            transcript.close()

    def close(self) -> None:
        for transcript in self._transcripts.values():
            transcript.close()
        self._transcripts.clear()
