"""Review of every change agents made: baselines from three sources, and keep / reject.

Baselines (the text before an agent first touched a file) come from acpls' own writes, from diff
content in tool calls (placed in the file, never a fragment taken as the file), and from files the
agent wrote straight to disk during a turn (seen by `services.watcher.TurnWatcher`; their text
before the turn from the open buffer, a read, git, the turn-start listing, else the checkpoint
taken before the turn). `state.review.ReviewStore` holds them and computes the hunks;
this module feeds it, applies rejections through `workspace/applyEdit`, and tells custom-mode
editors (`acpls/changes`) whenever the pending set changes.

Nothing of the user's is ever written over unasked. Before a rejection, the file's text now (the
editor's buffer when open, else the disk) is given to the store as the user's edit, and the store
rejects only hunks that still hold exactly the agent's text; for the others the user is asked
(`acpls/resolveConflict`, or `window/showMessageRequest`): keep theirs, or take the original. An
agent that writes to disk a file the editor holds with unsaved changes is asked about the same way
(keep mine, take the agent's), without holding up the turn; no answer keeps the user's text.
"""

from __future__ import annotations

import difflib
import logging
import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from acpls.core import ports
from acpls.core.errors import CommandError
from acpls.editor import messages as msg
from acpls.services import private_files
from acpls.services.file_reads import read_text
from acpls.services.watcher import DiskChange, TurnWatcher
from acpls.settings import DEFAULT_MAX_READ_BYTES
from acpls.state.review import (
    RejectConflict,
    RejectEdit,
    ReviewError,
    ReviewStore,
    UnprovenReject,
)
from acpls.translate.diffs import AcpDiff, diff_from_content, place_v1
from acpls.translate.follow import FollowTarget
from acpls.translate.fragments import Placement
from acpls.translate.text_edits import minimal_line_edits
from acpls.translate.uris import path_to_uri, uri_to_path

if TYPE_CHECKING:
    from collections.abc import Mapping

    from acpls.core.follow import FollowController
    from acpls.core.parts import BaselinesPart
    from acpls.core.session import Session
    from acpls.flow import FlowGate
    from acpls.supervisor import TaskSupervisor

logger = logging.getLogger(__name__)

ConflictKind = Literal["reject", "diskWrite"]
Choice = Literal["keepMine", "takeTheirs"]
KEEP_MINE = "Keep mine"
SHOW_DIFF = "Show the diff"
TAKE_ORIGINAL = "Take the original"
TAKE_AGENTS = "Take the agent's"
_MAX_ASKS = 3
_DISK_COMPARE_LIMIT = 1024 * 1024
_UNKNOWN = object()


class ReviewController:
    def __init__(
        self,
        editor: ports.EditorPort,
        sessions: Mapping[str, Session],
        tasks: TaskSupervisor,
        follow: FollowController,
        baselines: BaselinesPart,
        unwatched: tuple[str, ...] = (),
        editor_output: FlowGate | None = None,
    ) -> None:
        self.editor = editor
        # Closed while the editor is behind (flow.py): the change set then waits (`publish`).
        self.editor_output = editor_output
        # Folders whose changes are never an agent's work (acpls' own state, the programs' state
        # home): written during turns, and inside the workspace when it is opened at `~`.
        self.unwatched = unwatched
        self.sessions = sessions  # the registry's, read only: whose turns are running
        self.tasks = tasks
        self.follow = follow  # an agent's disk write is followed like its edits
        self.baselines = baselines  # the checkpoint's text of a file the watcher cannot vouch for
        self.store = ReviewStore()
        self._watch: _Watch | None = None
        self._sent_revision = 0
        self._diff_dir: Path | None = None
        # Files with an open question about an agent's disk write over unsaved text.
        self._asking: set[str] = set()

    # -- turns -----------------------------------------------------------------------------------
    async def turn_started(self, session: Session) -> None:
        if self._watch is not None and self._watch.watcher.running:
            return  # one watcher for the workspace, whichever session's turn started it
        roots = self.editor.workspace_roots
        if not roots:
            return
        watch = _Watch(session)
        watcher = TurnWatcher(
            roots, lambda change: self._disk_changed(watch, change), excluded=self.unwatched
        )
        watch.watcher = watcher
        for uri, text in self.editor.open_documents().items():
            try:
                path = uri_to_path(uri)
            except ValueError:
                continue
            watcher.remember(path, text)
            # What the disk holds under each open buffer: a buffer that differs has unsaved
            # changes, which an agent's direct write must not silently replace.
            watch.disk[os.path.realpath(path)] = _read_disk(path, _DISK_COMPARE_LIMIT)
        self._watch = watch
        try:
            await watcher.start()
        except OSError as exc:
            logger.warning("cannot watch the workspace for direct writes: %s", exc)

    async def turn_ended(self, session: Session) -> None:
        watch = self._watch
        if watch is None or watch.session is not session:
            return
        others = [s for s in self.sessions.values() if s.turn is not None and s is not session]
        if others:
            watch.session = others[0]
            return
        # The final flush reports what a command wrote (or deleted) just before the turn ended;
        # `watch` keeps this session and the watcher's baselines for it until the flush is done.
        # A turn that starts meanwhile gets a watcher of its own.
        self._watch = None
        await watch.watcher.stop()

    def session_closed(self, session: Session) -> None:
        """The session ended (core/sessions.py). Its pending changes stay: they are files in the
        workspace the user still reviews. A watcher credited to it passes to a running session;
        with none, the watcher stops when the failed turn ends (`turn_ended`)."""
        watch = self._watch
        if watch is None or watch.session is not session:
            return
        others = [s for s in self.sessions.values() if s.turn is not None]
        if others:
            watch.session = others[0]

    # -- the three sources of baselines ----------------------------------------------------------
    def agent_read(self, path: str, text: str) -> None:
        if self._watch is not None:
            self._watch.watcher.remember(path, text)

    def before_write(self, session: Session, path: str, old_text: str | None) -> None:
        self.store.baseline(path, old_text, session_id=session.id)
        if self._watch is not None:
            self._watch.watcher.ignore_once(path)

    def after_write(self, path: str, new_text: str) -> None:
        self.store.changed(path, new_text)
        self.publish()

    def tool_call_seen(self, session: Session, state: dict[str, Any], diffs_changed: bool) -> None:
        content = state.get("content")
        if not isinstance(content, list):
            return
        diffs = [d for item in content if isinstance(item, dict) and (d := diff_from_content(item))]
        if not diffs:
            return
        # A relative path (an agent bug) has no file to review, and would break every later
        # publish (its URI cannot be made).
        paths = [c.path for d in diffs for c in d.changes if c.path and os.path.isabs(c.path)]
        if diffs_changed:
            for diff in diffs:
                for change in diff.changes:
                    if change.path in paths and not self.store.is_tracked(change.path):
                        self._baseline_from_diff(session, diff, change.path)
        if state.get("status") == "completed":
            for path in paths:
                if self.store.is_tracked(path):
                    self._tool_done(path)
            self.publish()

    def _tool_done(self, path: str) -> None:
        """Record the file's text when a tool call on it completes. A buffer text that is
        neither what acpls recorded (the agent's write through it, or the watcher's) nor the
        disk's is the user's typing (acpls can miss a didChange that arrives while its own edit
        of that document is under way): it is taken as the user's edit, never the agent's, so
        a rejection cannot undo it unasked."""
        text = self._text_after_tool(path)
        if text != self.store.current_text(path) and text is not None:
            on_disk = _read_disk(path)
            if text != on_disk and self._open_buffer(os.path.realpath(path)) is not None:
                self.store.user_edited(path, text)
                return
        self.store.changed(path, text)

    def _text_after_tool(self, path: str) -> str | None:
        """The file's text when a tool call completes: the editor's (an fs write lands in the
        open buffer), except where the agent wrote the disk past the editor and the watcher
        has already recorded that text: a buffer the editor has not reloaded yet must not undo
        it (its later reload would then be taken for the user's edit, and the agent's change
        would vanish from the review)."""
        text = ports.current_text(self.editor, path)
        recorded = self.store.current_text(path)
        if text != recorded and recorded == _read_disk(path):
            return recorded
        return text

    def _baseline_from_diff(self, session: Session, diff: AcpDiff, path: str) -> None:
        """Record the file's pre-turn text when a diff for it first shows up. The text is never
        the diff's own: a v1 `oldText` may be a fragment (contract section 6). In order: what the
        watcher knows from before the turn; the file now, when it still holds the diff's
        pre-image (the agent has not written yet); the file with the agent's fragment put back,
        when it holds the post-image exactly once. Anything else records nothing here, and the
        watcher's own sources (git, the turn-start listing) decide when the write lands."""
        if self._watch is not None:
            known = self._watch.watcher.known_baseline(path)
            if known is not None:
                self.store.baseline(path, known.text, session_id=session.id)
                return
        current = ports.current_text(self.editor, path)
        full = next((t for t in diff.texts if t.path == path), None)
        if full is None:  # v2: the diff arrives before the agent writes (it asks first)
            self.store.baseline(path, current, session_id=session.id)
            return
        if full.old_text is None:  # a new file: only while it is not there yet
            if current is None:
                self.store.baseline(path, None, session_id=session.id)
            return
        placed = place_v1(full, current)
        if isinstance(placed, Placement):
            self.store.baseline(path, placed.pre_image, session_id=session.id)
        else:
            logger.info("no review baseline from the diff for %s: %s", path, placed.reason)

    async def _disk_changed(self, watch: _Watch, change: DiskChange) -> None:
        self._check_unsaved(watch, change)
        store = self.store
        path = change.path
        text = change.text if change.change != "deleted" else None
        session = watch.session
        session_id = session.id
        if not store.is_tracked(path):
            baseline = await watch.watcher.baseline_for(path)
            known, before = baseline.known, baseline.text
            if not known:
                # The checkpoint taken before this turn holds the files git cannot vouch for.
                known, before = await self.baselines.text_before_turn(session_id, path)
            if known:
                store.baseline(path, before, session_id=session_id)
                store.changed(path, text)
            elif change.change != "deleted" and text is not None:
                store.unknown_baseline(path, text, session_id=session_id)
            else:
                return
        else:
            store.changed(path, text)
        self.publish()
        if session.top_level and text is not None:
            line = self._first_changed_line(path)
            self.follow.move(FollowTarget(session.id, "disk", path, line, "edit"))

    # -- an agent's disk write under a buffer with unsaved changes ---------------------------------
    def _check_unsaved(self, watch: _Watch, change: DiskChange) -> None:
        """The agent wrote a file whose open buffer has unsaved changes (it differed from the disk
        before the write, and differs from the agent's text): the user's text stays in the
        buffer, and the user is asked whether to take the agent's instead. Asked from a task of
        its own, so the turn never waits for the answer."""
        path = change.path
        before = watch.disk.get(path, _UNKNOWN)
        now = change.text if change.change != "deleted" else None
        if change.change == "deleted" or change.is_text:
            watch.disk[path] = now
            watch.replaced[path] = before
        if change.change == "deleted":
            self._check_deleted(path, before)
            return
        if now is None or before is _UNKNOWN or path in self._asking:
            return
        found = self._open_buffer(path)
        if found is None:
            return
        _uri, buffer = found
        if buffer in (now, before):
            return  # no unsaved changes, or the buffer already holds the agent's text
        self._asking.add(path)
        self.tasks.spawn(
            f"unsaved-conflict:{path}", self._ask_disk_write(watch.session.id, path, buffer, now)
        )

    def _check_deleted(self, path: str, before: str | object | None) -> None:
        """The agent deleted a file whose open buffer has unsaved changes: nothing is asked (there
        is no text of the agent's to take), the user is told; the buffer keeps the text, and
        saving it writes the file again."""
        if not isinstance(before, str):
            return  # not known to differ from the disk (or the file was not there before)
        found = self._open_buffer(path)
        if found is None or found[1] == before:
            return  # no buffer, or no unsaved changes in it (the file is in review)
        self.editor.show_message(
            ports.MESSAGE_WARNING,
            f"acpls: the agent deleted {path} on disk while the editor holds unsaved changes in "
            "it. Your text stays in the editor: save it to write the file again.",
        )

    def document_opened(self, uri: str) -> None:
        """The editor opened a document during a turn: what the disk holds under it now is
        recorded as at turn start, so an agent's later write over the user's unsaved text in it
        is asked about too (not only buffers open when the turn started)."""
        watch = self._watch
        if watch is None:
            return
        try:
            path = uri_to_path(uri)
        except ValueError:
            return
        real = os.path.realpath(path)
        if real not in watch.disk:  # a change seen earlier in the turn already recorded it
            watch.disk[real] = _read_disk(path, _DISK_COMPARE_LIMIT)

    def matches_disk_before_write(self, path: str, buffer: str) -> bool:
        """Whether `buffer` is what the disk held under it during this turn, before or after the
        agent's latest direct write of `path` (recorded at turn start or didOpen, and at each
        change the watcher saw): a buffer that equals either holds nothing of the user's, even
        if the agent's write has reached the disk and not the buffer yet."""
        watch = self._watch
        if watch is None:
            return False
        real = os.path.realpath(path)
        known = (watch.disk.get(real, _UNKNOWN), watch.replaced.get(real, _UNKNOWN))
        return any(isinstance(text, str) and text == buffer for text in known)

    def _open_buffer(self, path: str) -> tuple[str, str] | None:
        """(URI, text) of the editor's open document of `path` (a real path), if any."""
        for uri, text in self.editor.open_documents().items():
            try:
                if os.path.realpath(uri_to_path(uri)) == path:
                    return uri, text
            except ValueError:
                continue
        return None

    async def _ask_disk_write(self, session_id: str, path: str, mine: str, theirs: str) -> None:
        try:
            message = (
                f"acpls: the agent wrote {path} on disk while the editor holds unsaved changes "
                "in it. Your unsaved text stays in the editor; take the agent's version instead?"
            )
            choice = await self.ask("diskWrite", path, message, mine, theirs, session_id=session_id)
            logger.info("agent's disk write over unsaved %s: %s", path, choice or "no answer")
            if choice == "takeTheirs":
                await self._take_disk_text(path, session_id)
        finally:
            self._asking.discard(path)

    async def _take_disk_text(self, path: str, session_id: str) -> None:
        """The user took the agent's text: the buffer gets the disk's text (as it is now). It is
        the agent's change to the user's text, under review like any other: rejecting it gives
        the user's unsaved text back."""
        found = self._open_buffer(path)
        disk = _read_disk(path)
        if found is None or not isinstance(disk, str):
            return
        uri, buffer = found
        edits = minimal_line_edits(buffer, disk)
        if not edits:
            return
        change = {"textDocument": {"uri": uri, "version": None}, "edits": edits}
        if not self.store.is_tracked(path):
            self.store.baseline(path, buffer, session_id=session_id)
        applied, reason = await self.editor.apply_edit(
            {"documentChanges": [change]}, f"Take the agent's {path}"
        )
        if applied:
            self.store.changed(path, disk)
            self.publish()
        else:
            self.store.user_edited(path, ports.current_text(self.editor, path))
            self.publish()
            self.editor.show_message(
                ports.MESSAGE_WARNING, f"acpls: the editor did not take the agent's text: {reason}"
            )

    def _first_changed_line(self, path: str) -> int | None:
        for changed in self.store.files():
            if changed.path == path and changed.hunks:
                return changed.hunks[0].to_editor()["range"]["start"]["line"] + 1
        return None

    def user_edited(self, uri: str) -> None:
        try:
            path = uri_to_path(uri)
        except ValueError:
            return
        if self.store.is_tracked(path):
            self.store.user_edited(path, self.editor.document_text(uri))
            self.publish()

    # -- commands ----------------------------------------------------------------------------------
    def files(self, session_id: str | None = None) -> dict[str, Any]:
        return self.store.to_editor(session_id)

    def keep_hunk(self, hunk_id: str) -> dict[str, Any]:
        self._checked(self.store.keep_hunk, hunk_id)
        self.publish()
        return self.files()

    async def reject_hunk(self, hunk_id: str) -> dict[str, Any]:
        hunk = self._checked(self.store.hunk, hunk_id)
        self._sync(hunk.path)
        answers: list[dict[str, Any]] = []
        try:
            reject = self.store.reject_hunk(hunk_id)
        except UnprovenReject as exc:
            answers.append(await self._resolve_reject(exc.conflict))
        except ReviewError:
            # The file changed behind acpls' back there (the hunk has another id now).
            conflict = self.store.conflict(hunk.path, hunk.base_start, hunk.base_end)
            if conflict is not None:
                answers.append(await self._resolve_reject(conflict))
        else:
            await self._apply(reject)
        self.publish()
        return self._with_answers(answers)

    def keep_all(self, path: str | None) -> dict[str, Any]:
        self.store.keep_all(path)
        self.publish()
        return self.files()

    async def reject_all(self, path: str | None) -> dict[str, Any]:
        for tracked in [path] if path is not None else self.store.paths():
            self._sync(tracked)
        try:
            rejects = self.store.reject_all(path)
        except ReviewError as exc:
            raise CommandError(str(exc)) from exc
        for reject in rejects:
            await self._apply(reject)
        answers = []
        for conflict in self.store.unproven(path):
            answers.append(await self._resolve_reject(conflict))
        self.publish()
        return self._with_answers(answers)

    def _with_answers(self, answers: list[dict[str, Any]]) -> dict[str, Any]:
        result = self.files()
        if answers:
            result["conflicts"] = answers
        return result

    def _sync(self, path: str) -> None:
        """Tell the store what the file holds now, before it decides anything: a user's edit
        acpls missed (a file changed on disk after the turn, a buffer put back to the disk's
        text) must never be taken for the agent's."""
        if not self.store.is_tracked(path):
            return
        text = ports.current_text(self.editor, path)
        if text is None and os.path.lexists(path):
            raise CommandError(f"cannot read {path} to check it before rejecting; nothing changed")
        self.store.user_edited(path, text)

    async def _resolve_reject(self, conflict: RejectConflict) -> dict[str, Any]:
        """Hunks the user edited after the agent: ask before undoing them."""
        message = (
            f"acpls: {conflict.path} was edited after the agent's change. Rejecting it would also "
            "undo your edits there. Keep your text, or take the original?"
        )
        choice = await self.ask(
            "reject",
            conflict.path,
            message,
            conflict.mine,
            conflict.original,
            session_id=conflict.session_id,
        )
        if choice == "takeTheirs":
            reject = self.store.force_reject(conflict.path, conflict.hunk_ids)
            if reject is not None:
                await self._apply(reject)
        elif choice == "keepMine":
            self.store.keep_hunks(conflict.hunk_ids)
        answer = conflict.to_editor()
        answer["choice"] = choice
        return answer

    # -- asking the user ---------------------------------------------------------------------------
    async def ask(
        self,
        kind: ConflictKind,
        path: str,
        message: str,
        mine: str | None,
        theirs: str | None,
        *,
        session_id: str | None = None,
    ) -> Choice | None:
        """keep mine / take theirs (the original for `reject`, the agent's for `diskWrite`);
        None when the editor gave no answer (or cannot): the caller then changes nothing."""
        editor = self.editor
        if editor.custom_mode and editor.supports("resolveConflict"):
            msg_id = f"acpls-conflict-{uuid.uuid4().hex[:12]}"
            params = msg.ResolveConflictParams(
                kind=kind,
                path=path,
                uri=path_to_uri(path),
                message=message,
                mine=mine,
                theirs=theirs,
                sessionId=session_id,
                requestId=msg_id,
            )
            try:
                result = await editor.request(msg.RESOLVE_CONFLICT, params, msg_id)
            except Exception as exc:  # an editor that does not answer keeps the user's text
                logger.info("no answer to %s for %s: %s", msg.RESOLVE_CONFLICT, path, exc)
                return None
            choice = result.get("choice") if isinstance(result, dict) else None
            return choice if choice in ("keepMine", "takeTheirs") else None
        take = TAKE_ORIGINAL if kind == "reject" else TAKE_AGENTS
        actions = [KEEP_MINE, SHOW_DIFF, take]
        for _ in range(_MAX_ASKS):
            try:
                answer = await editor.show_message_request(ports.MESSAGE_WARNING, message, actions)
            except Exception as exc:
                logger.info("no answer to the conflict question for %s: %s", path, exc)
                return None
            if answer == KEEP_MINE:
                return "keepMine"
            if answer == take:
                return "takeTheirs"
            if answer != SHOW_DIFF:
                return None
            await self._show_diff(path, mine, theirs, kind)
        return None

    async def _show_diff(
        self, path: str, mine: str | None, theirs: str | None, kind: ConflictKind
    ) -> None:
        """Generic editors: a unified diff (yours -> the other text) in a scratch file."""
        if self._diff_dir is None:
            self._diff_dir = Path(tempfile.mkdtemp(prefix="acpls-conflicts-"))
        other = "original" if kind == "reject" else "agent"
        lines = difflib.unified_diff(
            (mine or "").splitlines(keepends=True),
            (theirs or "").splitlines(keepends=True),
            fromfile=f"{path} (yours)",
            tofile=f"{path} ({other})",
        )
        target = self._diff_dir / f"{os.path.basename(path)}.{uuid.uuid4().hex[:6]}.diff"
        # acpls' own scratch file (mkdtemp's folder is 0700): 0600, it quotes the user's file.
        private_files.write_atomic(target, "".join(lines), fsync=False)
        await self.editor.show_document(target.as_uri(), None, take_focus=True)

    def rejected(self, path: str | None) -> dict[str, Any]:
        return {"rejected": [r.to_editor() for r in self.store.rejected(path)]}

    def _checked(self, action: Any, hunk_id: str) -> Any:
        try:
            return action(hunk_id)
        except ReviewError as exc:
            raise CommandError(str(exc)) from exc

    async def _apply(self, reject: RejectEdit) -> None:
        uri = reject.uri
        if reject.operation == "edit":
            changes: list[dict[str, Any]] = [
                {"textDocument": {"uri": uri, "version": None}, "edits": reject.edits}
            ]
        elif reject.operation == "create":
            changes = [
                {"kind": "create", "uri": uri, "options": {"ignoreIfExists": True}},
                {
                    "textDocument": {"uri": uri, "version": None},
                    "edits": [_insert_all(reject.new_text or "")],
                },
            ]
        else:
            changes = [{"kind": "delete", "uri": uri, "options": {"ignoreIfNotExists": True}}]
        buffer = self.editor.document_text(uri) if reject.operation == "edit" else None
        disk = _read_disk(reject.path) if buffer is not None else None
        if self._watch is not None:
            self._watch.watcher.ignore_once(reject.path)
        applied, reason = await self.editor.apply_edit(
            {"documentChanges": changes}, f"Reject agent change in {reject.path}"
        )
        if not applied:
            self.store.reject_failed(reject, ports.current_text(self.editor, reject.path))
            self.editor.show_message(
                ports.MESSAGE_WARNING, f"acpls: the editor did not undo the change: {reason}"
            )
        elif buffer is not None and disk == buffer:
            self._restore_disk_too(reject.path, uri, buffer)

    def _restore_disk_too(self, path: str, uri: str, agents: str) -> None:
        """The rejection landed in the open buffer, but the disk holds the agent's text as well
        (it wrote the file itself, as OpenCode does besides its fs/write_text_file, or the
        editor saved or reloaded it): the buffer held nothing but what is on disk, so the disk
        gets the buffer's restored text too. Otherwise an editor that counts the restored buffer
        as unchanged (it equals the last saved text) would never save it, and reload the agent's
        text from disk: the rejected change would come back."""
        restored = self.editor.document_text(uri)
        if restored is None or restored == agents or _read_disk(path) != agents:
            return
        if self._watch is not None:
            self._watch.watcher.ignore_once(path)
        try:
            with open(path, "w", encoding="utf-8", newline="") as handle:
                handle.write(restored)
        except OSError as exc:
            self.editor.show_message(
                ports.MESSAGE_WARNING,
                f"acpls: the change is undone in the editor but not on disk ({exc}): save {path}",
            )

    # -- telling the editor ------------------------------------------------------------------------
    def publish(self) -> None:
        """The whole change set to the editor, if it changed since it was last sent. While the
        editor is behind (the editor-output gate is closed) it waits and goes once, in its
        latest state, when the editor caught up: a command rewriting a large file in a loop
        would otherwise queue a copy of the set (every hunk's text) per rewrite for an editor
        that reads nothing, without bound."""
        if self.store.revision == self._sent_revision:
            return
        gate = self.editor_output
        if gate is not None and not gate.is_open:
            gate.call_when_open(self.publish)
            return
        self._sent_revision = self.store.revision
        if self.editor.custom_mode:
            self.editor.notify(msg.CHANGES, msg.ChangesParams(**self.store.to_editor()))

    async def aclose(self) -> None:
        watch, self._watch = self._watch, None
        if watch is not None:
            await watch.watcher.stop(flush=False)
        diff_dir, self._diff_dir = self._diff_dir, None
        if diff_dir is not None:
            shutil.rmtree(diff_dir, ignore_errors=True)


def _read_disk(path: str, limit: int | None = None) -> str | object | None:
    """The file's text; None when it does not exist; `_UNKNOWN` when unreadable, not UTF-8 or
    over `limit` bytes."""
    try:
        # Never a FIFO or a device: an agent can put one where a file it changed was.
        return read_text(path, max_bytes=limit if limit is not None else DEFAULT_MAX_READ_BYTES)
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        return _UNKNOWN


class _Watch:
    """One turn watcher and the session whose turn its changes are credited to (the next running
    session's when that turn ends first)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.watcher: TurnWatcher
        # The disk's text under each open buffer (see `_check_unsaved`), by real path.
        self.disk: dict[str, str | object | None] = {}
        # What each change of the turn replaced there (the disk's text just before the latest
        # one), by real path.
        self.replaced: dict[str, str | object | None] = {}


def _insert_all(text: str) -> dict[str, Any]:
    start = {"line": 0, "character": 0}
    return {"range": {"start": start, "end": start}, "newText": text}
