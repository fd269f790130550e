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

Rejecting proves before it writes. Besides the baseline and the current text the store keeps the
*agent's text*: the file as the agent last left it. The user's edits since (`user_edited`) are the
regions where the current text differs from it. A hunk is rejected only when none of those regions
touches it, so the current text still holds exactly what the agent produced there; any other hunk
is an `UnprovenReject` (one hunk) or is left out of `reject_all` and described by `unproven`, for
the caller to ask the user (keep theirs: `keep_hunks`; take the original anyway: `force_reject`).

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
class RejectConflict:
    """Hunks the user asked to reject whose text is no longer (only) the agent's: the user edited
    there since. `mine` is the file's text now, `original` the text with those hunks undone."""

    path: str
    uri: str
    session_id: str | None
    hunk_ids: tuple[str, ...]
    mine: str | None
    original: str | None

    def to_editor(self) -> dict[str, Any]:
        data: dict[str, Any] = {"path": self.path, "uri": self.uri, "hunkIds": list(self.hunk_ids)}
        if self.session_id is not None:
            data["sessionId"] = self.session_id
        return data


class UnprovenReject(ReviewError):
    """`reject_hunk` of a hunk the user has edited since the agent: nothing was changed."""

    def __init__(self, conflict: RejectConflict) -> None:
        super().__init__(
            f"{conflict.path} was edited since the agent's change; not rejected without asking"
        )
        self.conflict = conflict


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
    # What the store held before, to put back with `reject_failed` when the edit is not applied.
    old_text: str | None = attrs.field(default=None, eq=False, repr=False)
    old_agent_text: str | None = attrs.field(default=None, eq=False, repr=False)


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
    # The text as the agent last left it (see the module docstring).
    agent: str | None = None
    # Line ranges of the current text the user wrote before the agent's last write, which that
    # write left as they were: still the user's, although the agent's text now holds them too.
    mine: list[tuple[int, int]] = attrs.Factory(list)

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
        self._files[path] = _File(path, session_id, baseline=text, current=text, agent=text)
        return True

    def unknown_baseline(
        self, path: str, current_text: str, *, session_id: str | None = None
    ) -> bool:
        """Track a file whose earlier text is not known; returns False when already tracked."""
        if path in self._files:
            return False
        entry = _File(path, session_id, baseline=None, current=current_text, baseline_known=False)
        entry.agent = current_text
        self._files[path] = entry
        self._touched()
        return True

    def changed(self, path: str, current_text: str | None) -> None:
        """The file's text now, as an agent left it (None: deleted). Requires a baseline (or
        unknown_baseline)."""
        entry = self._files.get(path)
        if entry is None:
            raise ReviewError(f"no baseline recorded for {path}")
        if entry.current == current_text:
            return
        # The user's text the agent wrote around (or over) stays the user's where it is kept.
        entry.mine = self._user_regions(entry)
        entry.agent = current_text
        self._set_current(entry, current_text)

    def _set_current(self, entry: _File, text: str | None) -> None:
        if entry.mine:
            entry.mine = _map_regions(entry.mine, entry.current, text)
        entry.current = text
        entry.cached = None
        self._settle(entry)

    def user_edited(self, path: str, new_text: str | None) -> None:
        """The user (not an agent) changed a file under review. Where their edit does not touch
        an agent hunk it goes into the baseline as well, so it is not shown as the agent's."""
        entry = self._files.get(path)
        if entry is None or entry.current == new_text:
            return
        if entry.unchanged:
            entry.baseline = entry.current = entry.agent = new_text
            entry.mine = []
            entry.cached = None
            return
        texts = (entry.baseline, entry.current, new_text)
        if entry.baseline_known and all(text is not None for text in texts):
            entry.baseline = _carry_edits(entry.baseline or "", entry.current or "", new_text or "")
        self._set_current(entry, new_text)

    def is_tracked(self, path: str) -> bool:
        return path in self._files

    def current_text(self, path: str) -> str | None:
        entry = self._files.get(path)
        if entry is None:
            raise ReviewError(f"{path} is not being reviewed")
        return entry.current

    def paths(self) -> list[str]:
        """Every file being reviewed."""
        return list(self._files)

    def hunk(self, hunk_id: str) -> Hunk:
        return self._find(hunk_id)[1]

    def conflict(self, path: str, base_start: int, base_end: int) -> RejectConflict | None:
        """The pending hunks of `path` at these baseline lines, as a question for the user (a
        hunk the user changed behind acpls' back has a new id); None when there are none."""
        entry = self._files.get(path)
        changed = self._changed_file(entry) if entry is not None else None
        if entry is None or changed is None or not entry.baseline_known:
            return None
        span = (base_start, base_end)
        hunks = [h for h in changed.hunks if _touches((h.base_start, h.base_end), span)]
        return self._conflict(entry, hunks) if hunks else None

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
        if not self._proven(entry, hunk):
            raise UnprovenReject(self._conflict(entry, [hunk]))
        return self._revert(entry, [hunk])

    def keep_all(self, path: str | None = None) -> None:
        for entry in self._entries(path):
            self._accept(entry)

    def reject_all(self, path: str | None = None) -> list[RejectEdit]:
        """Undo every pending change (of one file) that is still the agent's text. Files with an
        unknown baseline are left; so are hunks the user edited since (see `unproven`)."""
        result = []
        for entry in self._entries(path):
            if not entry.baseline_known:
                if path is not None:
                    self._check_rejectable(entry)
                continue
            reverts = []
            # Undoing some hunks re-aligns the diff of what is left, and a hunk that could not
            # be proven before can be proven now: go on until nothing more is (each round undoes
            # at least one hunk, so this ends), else a hunk stays listed that is neither undone
            # nor offered as a conflict (found by test_reject_never_touches_the_users_lines).
            while True:
                changed = self._changed_file(entry)
                proven = [h for h in (changed.hunks if changed else ()) if self._proven(entry, h)]
                if not proven:
                    break
                reverts.append(self._revert(entry, proven))
            if reverts:
                result.append(_one_edit(reverts))
        return result

    def unproven(self, path: str | None = None) -> list[RejectConflict]:
        """Per file (with a known baseline), the pending hunks that cannot be rejected without
        asking: the user edited them after the agent."""
        result = []
        for entry in self._entries(path) if path is None or path in self._files else []:
            changed = self._changed_file(entry)
            if changed is None or not entry.baseline_known:
                continue
            hunks = [h for h in changed.hunks if not self._proven(entry, h)]
            if hunks:
                result.append(self._conflict(entry, hunks))
        return result

    def keep_hunks(self, hunk_ids: Iterable[str]) -> None:
        """Keep each hunk still pending (the user chose their text over rejecting it)."""
        for hunk_id in hunk_ids:
            try:
                self.keep_hunk(hunk_id)
            except ReviewError:
                continue

    def force_reject(self, path: str, hunk_ids: Iterable[str]) -> RejectEdit | None:
        """Undo these hunks although the user edited them (the user said so); None when none
        of them is pending any more."""
        entry = self._files.get(path)
        changed = self._changed_file(entry) if entry is not None else None
        if entry is None or changed is None:
            return None
        self._check_rejectable(entry)
        wanted = set(hunk_ids)
        hunks = [h for h in changed.hunks if h.hunk_id in wanted]
        if not hunks:
            return None
        regions = self._user_regions(entry)
        edit = self._revert(entry, hunks)
        if all(any(_touches(r, (h.cur_start, h.cur_end)) for h in hunks) for r in regions):
            # The user's edits were all inside what was just undone.
            entry.agent = entry.current
        return edit

    def reject_failed(self, edit: RejectEdit, text_now: str | None) -> None:
        """The editor did not apply `edit`: the file holds `text_now`."""
        entry = self._files.get(edit.path)
        if entry is None:
            self.baseline(edit.path, edit.new_text)
            entry = self._files[edit.path]
        if text_now == edit.old_text:
            entry.agent = edit.old_agent_text
            self._set_current(entry, text_now)
        else:
            self.user_edited(edit.path, text_now)

    # -- internals -----------------------------------------------------------------------------

    def _revert(self, entry: _File, hunks: list[Hunk]) -> RejectEdit:
        """Undo `hunks` (of the current text) in the store; the edit that does it to the file."""
        uri = path_to_uri(entry.path)
        before, agent_before = entry.current, entry.agent
        self._remember_rejected(entry, hunks)
        if entry.baseline is None or entry.current is None:
            # A whole creation (delete the file) or deletion (create it again).
            new_file = entry.baseline is None
            operation: Literal["create", "delete"] = "delete" if new_file else "create"
            edit = RejectEdit(entry.path, uri, operation, [], entry.baseline, before, agent_before)
            entry.agent = entry.baseline
            self._set_current(entry, entry.baseline)
            return edit
        cur = split_lines(entry.current)
        base = split_lines(entry.baseline)
        same = entry.agent == entry.current
        agent = split_lines(entry.agent) if entry.agent is not None and not same else None
        blocks = _equal_blocks(agent, cur) if agent is not None else []
        for hunk in sorted(hunks, key=lambda h: h.cur_start, reverse=True):
            old_lines = base[hunk.base_start : hunk.base_end]
            if agent is not None:
                # The same lines of the agent's text (a proven hunk lies in an equal block; one
                # the user edited and forced does not, and its region stays the user's).
                block = next(
                    (b for b in blocks if b[1] <= hunk.cur_start and hunk.cur_end <= b[2]), None
                )
                if block is not None:
                    at = block[0] - block[1]
                    agent[hunk.cur_start + at : hunk.cur_end + at] = old_lines
            cur[hunk.cur_start : hunk.cur_end] = old_lines
        new_text = "".join(cur)
        edit = RejectEdit(
            path=entry.path,
            uri=uri,
            operation="edit",
            edits=[{"range": h.range, "newText": h.old_text} for h in hunks],
            new_text=new_text,
            old_text=before,
            old_agent_text=agent_before,
        )
        if same:
            entry.agent = new_text
        elif agent is not None:
            entry.agent = "".join(agent)
        self._set_current(entry, new_text)
        return edit

    def _user_regions(self, entry: _File) -> list[tuple[int, int]]:
        """Line ranges of the current text the user changed after the agent."""
        if entry.agent == entry.current:
            return list(entry.mine)
        if entry.agent is None or entry.current is None:
            return [(0, 1 << 62)]
        agent, cur = split_lines(entry.agent), split_lines(entry.current)
        ops = SequenceMatcher(None, agent, cur, autojunk=False).get_opcodes()
        return [(j1, j2) for tag, _i1, _i2, j1, j2 in ops if tag != "equal"] + entry.mine

    def _proven(self, entry: _File, hunk: Hunk) -> bool:
        """The current text still holds exactly what the agent produced in `hunk`."""
        if entry.baseline is None or entry.current is None:
            # A whole-file creation or deletion.
            return entry.agent == entry.current and not entry.mine
        span = (hunk.cur_start, hunk.cur_end)
        return not any(_touches(region, span) for region in self._user_regions(entry))

    def _conflict(self, entry: _File, hunks: list[Hunk]) -> RejectConflict:
        if entry.baseline is None or entry.current is None:
            original = entry.baseline
        else:
            cur, base = split_lines(entry.current), split_lines(entry.baseline)
            for hunk in sorted(hunks, key=lambda h: h.cur_start, reverse=True):
                cur[hunk.cur_start : hunk.cur_end] = base[hunk.base_start : hunk.base_end]
            original = "".join(cur)
        return RejectConflict(
            path=entry.path,
            uri=path_to_uri(entry.path),
            session_id=entry.session_id,
            hunk_ids=tuple(h.hunk_id for h in hunks),
            mine=entry.current,
            original=original,
        )

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


def _map_regions(
    regions: list[tuple[int, int]], old: str | None, new: str | None
) -> list[tuple[int, int]]:
    """The parts of these line ranges of `old` that `new` still holds unchanged, as ranges of
    `new` (an empty range, a deletion point, where it still lies between unchanged lines)."""
    if old is None or new is None:
        return []
    equal = [
        (i1, i2, j1)
        for tag, i1, i2, j1, _j2 in SequenceMatcher(
            None, split_lines(old), split_lines(new), autojunk=False
        ).get_opcodes()
        if tag == "equal"
    ]
    result: list[tuple[int, int]] = []
    for start, end in regions:
        for i1, i2, j1 in equal:
            if start == end and i1 <= start <= i2:
                result.append((start - i1 + j1, start - i1 + j1))
                break
            low, high = max(start, i1), min(end, i2)
            if low < high:
                result.append((low - i1 + j1, high - i1 + j1))
    return result


def _equal_blocks(a: list[str], b: list[str]) -> list[tuple[int, int, int]]:
    """(start in a, start in b, end in b) of each run of lines a and b share."""
    ops = SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    return [(i1, j1, j2) for tag, i1, _i2, j1, j2 in ops if tag == "equal"]


def _touches(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Two line ranges overlap, or (when either is empty: an insertion or a deletion point)
    meet."""
    if a[0] == a[1] or b[0] == b[1]:
        return a[0] <= b[1] and b[0] <= a[1]
    return a[0] < b[1] and b[0] < a[1]


def _hunk_id(path: str, old_text: str, new_text: str, occurrence: int) -> str:
    digest = hashlib.sha1(usedforsecurity=False)
    for part in (path, old_text, new_text, str(occurrence)):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return "h" + digest.hexdigest()[:16]


def _one_edit(reverts: list[RejectEdit]) -> RejectEdit:
    """Successive reverts of one file as one edit of the text before the first: the lines
    between their common first and last lines replaced (the caller applies it in one go, and
    puts the store back with `reject_failed` if it fails)."""
    first, last = reverts[0], reverts[-1]
    if len(reverts) == 1:
        return first
    # Only edits come in rounds: a whole creation or deletion undone leaves nothing pending.
    assert all(r.operation == "edit" for r in reverts) and last.new_text is not None
    before, after = split_lines(first.old_text or ""), split_lines(last.new_text)
    head = 0
    while head < min(len(before), len(after)) and before[head] == after[head]:
        head += 1
    tail = 0
    while (
        tail < min(len(before), len(after)) - head
        and before[len(before) - 1 - tail] == after[len(after) - 1 - tail]
    ):
        tail += 1
    edit = {
        "range": {"start": _position(before, head), "end": _position(before, len(before) - tail)},
        "newText": "".join(after[head : len(after) - tail]),
    }
    return attrs.evolve(
        last, edits=[edit], old_text=first.old_text, old_agent_text=first.old_agent_text
    )


def _position(lines: list[str], index: int) -> dict[str, int]:
    """Start of line `index`; past the end, the end of the text (on the last line when it has
    no terminator, since a position on a line that does not exist is not safe to send)."""
    if index < len(lines) or not lines:
        return {"line": index, "character": 0}
    last = lines[-1]
    if last.endswith(("\n", "\r")):
        return {"line": len(lines), "character": 0}
    return {"line": len(lines) - 1, "character": utf16_len(last)}
