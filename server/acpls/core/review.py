"""Review of every change agents made: baselines from three sources, and keep / reject.

Baselines (the text before an agent first touched a file) come from acpls' own writes, from diff
content in tool calls, and from files the agent wrote straight to disk during a turn (seen by
`services.watcher.TurnWatcher`). `state.review.ReviewStore` holds them and computes the hunks;
this module feeds it, applies rejections through `workspace/applyEdit`, and tells custom-mode
editors (`acpls/changes`) whenever the pending set changes.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from acpls.core import ports
from acpls.editor import messages as msg
from acpls.services.watcher import DiskChange, TurnWatcher
from acpls.state.review import RejectEdit, ReviewError, ReviewStore
from acpls.translate.diffs import AcpDiff, diff_from_content, place_v1
from acpls.translate.follow import FollowTarget
from acpls.translate.fragments import Placement
from acpls.translate.uris import uri_to_path

if TYPE_CHECKING:
    from acpls.core.hub import Hub
    from acpls.core.session import Session

logger = logging.getLogger(__name__)


class ReviewController:
    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.store = ReviewStore()
        self._watcher: TurnWatcher | None = None
        self._watched_session: Session | None = None
        self._sent_revision = 0

    # -- turns -----------------------------------------------------------------------------------
    async def turn_started(self, session: Session) -> None:
        if self._watcher is not None and self._watcher.running:
            return  # one watcher for the workspace, whichever session's turn started it
        roots = self.hub.editor.workspace_roots
        if not roots:
            return
        watcher = TurnWatcher(roots, self._disk_changed)
        for uri, text in self.hub.editor.open_documents().items():
            try:
                watcher.remember(uri_to_path(uri), text)
            except ValueError:
                continue
        self._watcher = watcher
        self._watched_session = session
        try:
            await watcher.start()
        except OSError as exc:
            logger.warning("cannot watch the workspace for direct writes: %s", exc)

    async def turn_ended(self, session: Session) -> None:
        watcher = self._watcher
        if watcher is None or self._watched_session is not session:
            return
        if any(s.turn is not None for s in self.hub.sessions.values() if s is not session):
            self._watched_session = next(
                s for s in self.hub.sessions.values() if s.turn is not None and s is not session
            )
            return
        self._watcher = None
        self._watched_session = None
        await watcher.stop()

    # -- the three sources of baselines ----------------------------------------------------------
    def agent_read(self, path: str, text: str) -> None:
        if self._watcher is not None:
            self._watcher.remember(path, text)

    def before_write(self, session: Session, path: str, old_text: str | None) -> None:
        self.store.baseline(path, old_text, session_id=session.id)
        if self._watcher is not None:
            self._watcher.ignore_once(path)

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
                    self.store.changed(path, self.hub.agent_requests.current_text(path))
            self.publish()

    def _baseline_from_diff(self, session: Session, diff: AcpDiff, path: str) -> None:
        """Record the file's pre-turn text when a diff for it first shows up. The text is never
        the diff's own: a v1 `oldText` may be a fragment (contract section 6). In order: what the
        watcher knows from before the turn; the file now, when it still holds the diff's
        pre-image (the agent has not written yet); the file with the agent's fragment put back,
        when it holds the post-image exactly once. Anything else records nothing here, and the
        watcher's own sources (git, the turn-start listing) decide when the write lands."""
        watcher = self._watcher
        if watcher is not None:
            known = watcher.known_baseline(path)
            if known is not None:
                self.store.baseline(path, known.text, session_id=session.id)
                return
        current = self.hub.agent_requests.current_text(path)
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

    async def _disk_changed(self, change: DiskChange) -> None:
        store = self.store
        path = change.path
        text = change.text if change.change != "deleted" else None
        session = self._watched_session
        session_id = session.id if session is not None else None
        if not store.is_tracked(path):
            watcher = self._watcher
            baseline = await watcher.baseline_for(path) if watcher is not None else None
            if baseline is not None and baseline.known:
                store.baseline(path, baseline.text, session_id=session_id)
                store.changed(path, text)
            elif change.change != "deleted" and text is not None:
                store.unknown_baseline(path, text, session_id=session_id)
            else:
                return
        else:
            store.changed(path, text)
        self.publish()
        if session is not None and session.top_level and text is not None:
            line = self._first_changed_line(path)
            self.hub.move_follow(FollowTarget(session.id, "disk", path, line, "edit"))

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
            self.store.user_edited(path, self.hub.editor.document_text(uri))
            self.publish()

    # -- commands ----------------------------------------------------------------------------------
    def files(self, session_id: str | None = None) -> dict[str, Any]:
        return self.store.to_editor(session_id)

    def keep_hunk(self, hunk_id: str) -> dict[str, Any]:
        self._checked(self.store.keep_hunk, hunk_id)
        self.publish()
        return self.files()

    async def reject_hunk(self, hunk_id: str) -> dict[str, Any]:
        reject = self._checked(self.store.reject_hunk, hunk_id)
        await self._apply(reject)
        self.publish()
        return self.files()

    def keep_all(self, path: str | None) -> dict[str, Any]:
        self.store.keep_all(path)
        self.publish()
        return self.files()

    async def reject_all(self, path: str | None) -> dict[str, Any]:
        for reject in self.store.reject_all(path):
            await self._apply(reject)
        self.publish()
        return self.files()

    def rejected(self, path: str | None) -> dict[str, Any]:
        return {"rejected": [r.to_editor() for r in self.store.rejected(path)]}

    def _checked(self, action: Any, hunk_id: str) -> Any:
        from acpls.core.hub import CommandError

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
        if self._watcher is not None:
            self._watcher.ignore_once(reject.path)
        applied, reason = await self.hub.editor.apply_edit(
            {"documentChanges": changes}, f"Reject agent change in {reject.path}"
        )
        if not applied:
            self.store.changed(reject.path, self.hub.agent_requests.current_text(reject.path))
            self.hub.editor.show_message(
                ports.MESSAGE_WARNING, f"acpls: the editor did not undo the change: {reason}"
            )

    # -- telling the editor ------------------------------------------------------------------------
    def publish(self) -> None:
        if self.store.revision == self._sent_revision:
            return
        self._sent_revision = self.store.revision
        if self.hub.editor.custom_mode:
            self.hub.editor.notify(msg.CHANGES, msg.ChangesParams(**self.store.to_editor()))

    async def aclose(self) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            await watcher.stop(flush=False)


def _insert_all(text: str) -> dict[str, Any]:
    start = {"line": 0, "character": 0}
    return {"range": {"start": start, "end": start}, "newText": text}
