"""Review of every change the agents made: baselines, hunks, keep and reject.

For each file an agent touched, the store keeps its *baseline* (the text before an agent first
touched it; None when the file did not exist) and its *current* text (None when it was deleted).
The pending changes are the line hunks between the two. Keeping a hunk folds it into the baseline;
rejecting it produces the reverse edit (to be applied by the caller through
`workspace/applyEdit`) and records the rejected text so it can be looked at again. A file whose
current text equals its baseline has nothing pending and is forgotten, so the next agent change
starts from a fresh baseline.

When the baseline is unknown (a file written straight to disk that acpls had no earlier copy of),
the file is listed with its whole text as one added hunk and a note; it can be kept, but not
rejected, since there is nothing known to go back to.

Pure: no file I/O. The caller passes texts in and applies the returned edits.
"""

from __future__ import annotations

import hashlib
from collections import Counter, deque
from collections.abc import Iterable
from datetime import UTC, datetime
from difflib import SequenceMatcher
from typing import Any, Literal

import attrs

from acpls.translate.text_edits import split_lines, utf16_len
from acpls.translate.uris import path_to_uri

Status = Literal["added", "modified", "deleted"]
TextEdit = dict[str, Any]
Range = dict[str, dict[str, int]]

UNKNOWN_BASELINE_NOTE = (
    "the text before this change is unknown (written to disk directly, not in git, not open); "
    "it can be kept but not rejected"
)
_MAX_REJECTED = 200


class ReviewError(ValueError):
    """A review command that cannot be done (unknown hunk, no baseline); maps to -32602."""


@attrs.frozen
class Hunk:
    """One block of lines that differs between baseline and current text."""

    hunk_id: str
    path: str
    base_start: int
    base_end: int
    cur_start: int
    cur_end: int
    old_text: str
    new_text: str
    range: Range

    @property
    def added(self) -> int:
        return self.cur_end - self.cur_start

    @property
    def removed(self) -> int:
        return self.base_end - self.base_start

    def to_editor(self) -> dict[str, Any]:
        return {
            "hunkId": self.hunk_id,
            "range": self.range,
            "oldText": self.old_text,
            "newText": self.new_text,
            "added": self.added,
            "removed": self.removed,
        }


@attrs.frozen
class ChangedFile:
    path: str
    uri: str
    session_id: str | None
    status: Status
    hunks: tuple[Hunk, ...]
    note: str | None = None

    @property
    def added(self) -> int:
        return sum(h.added for h in self.hunks)

    @property
    def removed(self) -> int:
        return sum(h.removed for h in self.hunks)

    def to_editor(self) -> dict[str, Any]:
        data: dict[str, Any] = {"uri": self.uri, "path": self.path}
        if self.session_id is not None:
            data["sessionId"] = self.session_id
        data.update(
            status=self.status,
            added=self.added,
            removed=self.removed,
            hunks=[h.to_editor() for h in self.hunks],
        )
        if self.note is not None:
            data["note"] = self.note
        return data


@attrs.frozen
class RejectEdit:
    """What the caller must do to the file to undo a rejection's worth of changes.

    `operation` is `edit` (apply `edits`, ranges in the current text), `create` (the file was
    deleted: create it with `new_text`) or `delete` (the file was added: delete it; `new_text` is
    None). `new_text` is always the file's text after the undo.
    """

    path: str
    uri: str
    operation: Literal["edit", "create", "delete"]
    edits: list[TextEdit]
    new_text: str | None


@attrs.frozen
class RejectedChange:
    """Text the user rejected, kept so it can be looked at (or taken back) later."""

    path: str
    hunk_id: str
    session_id: str | None
    old_text: str
    new_text: str
    rejected_at: str

    def to_editor(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "path": self.path,
            "uri": path_to_uri(self.path),
            "hunkId": self.hunk_id,
            "oldText": self.old_text,
            "newText": self.new_text,
            "rejectedAt": self.rejected_at,
        }
        if self.session_id is not None:
            data["sessionId"] = self.session_id
        return data


@attrs.define
class _File:
    path: str
    session_id: str | None
    baseline: str | None
    current: str | None
    baseline_known: bool = True
    cached: ChangedFile | None = None

    @property
    def unchanged(self) -> bool:
        return self.baseline_known and self.baseline == self.current


class ReviewStore:
    """Pending agent changes of one workspace, across sessions."""

    def __init__(self) -> None:
        self._files: dict[str, _File] = {}
        self._rejected: deque[RejectedChange] = deque(maxlen=_MAX_REJECTED)
        self.revision = 0

    # -- recording -----------------------------------------------------------------------------

    def baseline(self, path: str, text: str | None, *, session_id: str | None = None) -> bool:
        """Record the file as it was before an agent first touched it (None: did not exist).
        The first call wins while changes are pending; returns whether this call recorded it."""
        entry = self._files.get(path)
        if entry is not None and not entry.unchanged:
            return False
        self._files[path] = _File(path, session_id, baseline=text, current=text)
        return True

    def unknown_baseline(
        self, path: str, current_text: str, *, session_id: str | None = None
    ) -> bool:
        """Track a file whose earlier text is not known; returns False when already tracked."""
        if path in self._files:
            return False
        entry = _File(path, session_id, baseline=None, current=current_text, baseline_known=False)
        self._files[path] = entry
        self._touched()
        return True

    def changed(self, path: str, current_text: str | None) -> None:
        """The file's text now (None: deleted). Requires a baseline (or unknown_baseline)."""
        entry = self._files.get(path)
        if entry is None:
            raise ReviewError(f"no baseline recorded for {path}")
        if entry.current == current_text:
            return
        entry.current = current_text
        entry.cached = None
        self._settle(entry)

    def user_edited(self, path: str, new_text: str | None) -> None:
        """The user (not an agent) changed a file under review. Where their edit does not touch
        an agent hunk it goes into the baseline as well, so it is not shown as the agent's."""
        entry = self._files.get(path)
        if entry is None or entry.current == new_text:
            return
        if entry.unchanged:
            entry.baseline = entry.current = new_text
            entry.cached = None
            return
        texts = (entry.baseline, entry.current, new_text)
        if entry.baseline_known and all(text is not None for text in texts):
            entry.baseline = _carry_edits(entry.baseline or "", entry.current or "", new_text or "")
        self.changed(path, new_text)

    def is_tracked(self, path: str) -> bool:
        return path in self._files

    def current_text(self, path: str) -> str | None:
        entry = self._files.get(path)
        if entry is None:
            raise ReviewError(f"{path} is not being reviewed")
        return entry.current

    def forget(self, path: str) -> None:
        if self._files.pop(path, None) is not None:
            self._touched()

    # -- looking -------------------------------------------------------------------------------

    def files(self, session_id: str | None = None) -> list[ChangedFile]:
        """Files with pending changes (of one session, when given), in the order first touched."""
        result = []
        for entry in self._files.values():
            if session_id is not None and entry.session_id != session_id:
                continue
            changed = self._changed_file(entry)
            if changed is not None:
                result.append(changed)
        return result

    def to_editor(self, session_id: str | None = None) -> dict[str, Any]:
        """The `acpls/changes` notification params (editors/protocol.md section 5.7)."""
        return {"files": [f.to_editor() for f in self.files(session_id)]}

    def rejected(self, path: str | None = None) -> list[RejectedChange]:
        """Rejected text, oldest first (the last few hundred)."""
        return [r for r in self._rejected if path is None or r.path == path]

    # -- deciding ------------------------------------------------------------------------------

    def keep_hunk(self, hunk_id: str) -> None:
        entry, hunk = self._find(hunk_id)
        if entry.current is None or not entry.baseline_known:
            # A deletion, or a file with an unknown past: keeping it means taking it as it is.
            self._accept(entry)
            return
        base = split_lines(entry.baseline or "")
        cur = split_lines(entry.current)
        entry.baseline = "".join(
            base[: hunk.base_start] + cur[hunk.cur_start : hunk.cur_end] + base[hunk.base_end :]
        )
        entry.cached = None
        self._settle(entry)

    def reject_hunk(self, hunk_id: str) -> RejectEdit:
        """Undo one hunk. The store assumes the returned edit gets applied; if it does not, the
        caller reports the real text with `changed`."""
        entry, hunk = self._find(hunk_id)
        self._check_rejectable(entry)
        if entry.baseline is None or entry.current is None:
            return self._reject_file(entry)
        cur = split_lines(entry.current)
        base = split_lines(entry.baseline)
        new_text = "".join(
            cur[: hunk.cur_start] + base[hunk.base_start : hunk.base_end] + cur[hunk.cur_end :]
        )
        edit = RejectEdit(
            path=entry.path,
            uri=path_to_uri(entry.path),
            operation="edit",
            edits=[{"range": hunk.range, "newText": hunk.old_text}],
            new_text=new_text,
        )
        self._remember_rejected(entry, [hunk])
        self.changed(entry.path, new_text)
        return edit

    def keep_all(self, path: str | None = None) -> None:
        for entry in self._entries(path):
            self._accept(entry)

    def reject_all(self, path: str | None = None) -> list[RejectEdit]:
        """Undo every pending change (of one file). Files with an unknown baseline are left."""
        result = []
        for entry in self._entries(path):
            if not entry.baseline_known:
                if path is not None:
                    self._check_rejectable(entry)
                continue
            if entry.baseline is None or entry.current is None:
                result.append(self._reject_file(entry))
                continue
            changed = self._changed_file(entry)
            hunks = changed.hunks if changed else ()
            result.append(
                RejectEdit(
                    path=entry.path,
                    uri=path_to_uri(entry.path),
                    operation="edit",
                    edits=[{"range": h.range, "newText": h.old_text} for h in hunks],
                    new_text=entry.baseline,
                )
            )
            self._remember_rejected(entry, hunks)
            self.changed(entry.path, entry.baseline)
        return result

    # -- internals -----------------------------------------------------------------------------

    def _reject_file(self, entry: _File) -> RejectEdit:
        """Undo a whole creation (delete the file) or deletion (create it again)."""
        changed = self._changed_file(entry)
        self._remember_rejected(entry, changed.hunks if changed else ())
        uri = path_to_uri(entry.path)
        if entry.baseline is None:
            edit = RejectEdit(entry.path, uri, "delete", [], None)
        else:
            edit = RejectEdit(entry.path, uri, "create", [], entry.baseline)
        self.changed(entry.path, entry.baseline)
        return edit

    def _accept(self, entry: _File) -> None:
        entry.baseline = entry.current
        entry.baseline_known = True
        entry.cached = None
        self._settle(entry)

    def _settle(self, entry: _File) -> None:
        if entry.unchanged:
            del self._files[entry.path]
        self._touched()

    def _touched(self) -> None:
        self.revision += 1

    def _entries(self, path: str | None) -> list[_File]:
        if path is None:
            return list(self._files.values())
        entry = self._files.get(path)
        if entry is None:
            raise ReviewError(f"no pending changes for {path}")
        return [entry]

    def _check_rejectable(self, entry: _File) -> None:
        if not entry.baseline_known:
            raise ReviewError(f"cannot reject changes to {entry.path}: {UNKNOWN_BASELINE_NOTE}")

    def _find(self, hunk_id: str) -> tuple[_File, Hunk]:
        for entry in self._files.values():
            changed = self._changed_file(entry)
            for hunk in changed.hunks if changed else ():
                if hunk.hunk_id == hunk_id:
                    return entry, hunk
        raise ReviewError(f"unknown hunk {hunk_id!r} (already kept or rejected, or text changed)")

    def _remember_rejected(self, entry: _File, hunks: Iterable[Hunk]) -> None:
        now = datetime.now(UTC).isoformat(timespec="seconds")
        for hunk in hunks:
            self._rejected.append(
                RejectedChange(
                    path=entry.path,
                    hunk_id=hunk.hunk_id,
                    session_id=entry.session_id,
                    old_text=hunk.old_text,
                    new_text=hunk.new_text,
                    rejected_at=now,
                )
            )

    def _changed_file(self, entry: _File) -> ChangedFile | None:
        if entry.unchanged:
            return None
        if entry.cached is None:
            entry.cached = _describe(entry)
        return entry.cached


def _describe(entry: _File) -> ChangedFile:
    note = None if entry.baseline_known else UNKNOWN_BASELINE_NOTE
    if entry.baseline is None and entry.baseline_known:
        status: Status = "added"
    elif entry.current is None:
        status = "deleted"
    else:
        status = "modified"
    if status == "modified" and entry.baseline_known:
        hunks = _hunks(entry.path, entry.baseline or "", entry.current or "")
    else:
        # A created, deleted or unknown-past file is one whole-file hunk.
        hunks = _whole_file_hunks(entry.path, entry.baseline or "", entry.current or "")
    return ChangedFile(
        path=entry.path,
        uri=path_to_uri(entry.path),
        session_id=entry.session_id,
        status=status,
        hunks=tuple(hunks),
        note=note,
    )


def _hunks(path: str, baseline: str, current: str) -> list[Hunk]:
    base, cur = split_lines(baseline), split_lines(current)
    matcher = SequenceMatcher(None, base, cur, autojunk=False)
    blocks = [op[1:] for op in matcher.get_opcodes() if op[0] != "equal"]
    return _make_hunks(path, base, cur, blocks)


def _whole_file_hunks(path: str, baseline: str, current: str) -> list[Hunk]:
    base, cur = split_lines(baseline), split_lines(current)
    return _make_hunks(path, base, cur, [(0, len(base), 0, len(cur))])


def _make_hunks(
    path: str, base: list[str], cur: list[str], blocks: list[tuple[int, int, int, int]]
) -> list[Hunk]:
    seen: Counter[tuple[str, str]] = Counter()
    hunks = []
    for i1, i2, j1, j2 in blocks:
        old_text, new_text = "".join(base[i1:i2]), "".join(cur[j1:j2])
        # The same change can occur twice in a file; the occurrence number keeps ids apart.
        occurrence = seen[(old_text, new_text)]
        seen[(old_text, new_text)] += 1
        hunks.append(
            Hunk(
                hunk_id=_hunk_id(path, old_text, new_text, occurrence),
                path=path,
                base_start=i1,
                base_end=i2,
                cur_start=j1,
                cur_end=j2,
                old_text=old_text,
                new_text=new_text,
                range={"start": _position(cur, j1), "end": _position(cur, j2)},
            )
        )
    return hunks


def _carry_edits(baseline: str, current: str, edited: str) -> str:
    """Apply the current->edited changes that fall outside agent hunks to the baseline."""
    base, cur, new = split_lines(baseline), split_lines(current), split_lines(edited)
    agent_ops = SequenceMatcher(None, base, cur, autojunk=False).get_opcodes()
    equal = [(i1, j1, j2) for tag, i1, _i2, j1, j2 in agent_ops if tag == "equal"]
    user_ops = SequenceMatcher(None, cur, new, autojunk=False).get_opcodes()
    result = list(base)
    for tag, c1, c2, n1, n2 in reversed(user_ops):
        if tag == "equal":
            continue
        region = next((r for r in equal if r[1] <= c1 and c2 <= r[2]), None)
        if region is None:
            continue  # the user edited inside an agent hunk: it stays part of that hunk
        i1, j1, _ = region
        result[i1 + c1 - j1 : i1 + c2 - j1] = new[n1:n2]
    return "".join(result)


def _hunk_id(path: str, old_text: str, new_text: str, occurrence: int) -> str:
    digest = hashlib.sha1(usedforsecurity=False)
    for part in (path, old_text, new_text, str(occurrence)):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return "h" + digest.hexdigest()[:16]


def _position(lines: list[str], index: int) -> dict[str, int]:
    """Start of line `index`; past the end, the end of the text (on the last line when it has
    no terminator, since a position on a line that does not exist is not safe to send)."""
    if index < len(lines) or not lines:
        return {"line": index, "character": 0}
    last = lines[-1]
    if last.endswith(("\n", "\r")):
        return {"line": len(lines), "character": 0}
    return {"line": len(lines) - 1, "character": utf16_len(last)}
