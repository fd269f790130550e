"""Checkpoints as data: the log of them, and the plan that puts files back (no I/O here).

A checkpoint is the state of every workspace folder before one turn: per folder a git tree in
acpls' private store, the unsaved editor buffers recorded beside it (what the user saw), and the
files that were not recorded with the reason. A file's *effective* content is its buffer when one
was recorded, else the tree's blob.

`plan_restore` turns the differences between the current state (a checkpoint taken just before
the restore) and the target into:
- a `WorkspaceEdit` for text (`TextDocumentEdit`, `CreateFile`, `DeleteFile`, `RenameFile` for a
  file that only moved), so the editor's buffers follow and undo works;
- `DiskOp`s for what an editor buffer cannot carry: binary content, the executable bit, symbolic
  links;
- `skipped` files with the reason (unsaved changes not confirmed, content not recorded, a nested
  repository).
"""

from __future__ import annotations

import difflib
import posixpath
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import attrs

from acpls.translate.text_edits import minimal_line_edits
from acpls.translate.uris import path_to_uri

LINK_MODE = "120000"
GITLINK_MODE = "160000"
EXEC_MODE = "100755"
FILE_MODE = "100644"
ANNOTATION_ID = "acpls.restoreCheckpoint"
MAX_CHECKPOINTS = 1000
# Sessions whose last turn number the log keeps after their checkpoints are gone.
MAX_SESSIONS_NUMBERED = 10_000


@attrs.define
class FolderState:
    """One workspace folder in one checkpoint."""

    tree: str
    unsaved: dict[str, str] = attrs.Factory(dict)  # relative path -> blob of the buffer
    unsaved_tree: str | None = None
    not_recorded: dict[str, str] = attrs.Factory(dict)  # relative path -> reason

    def trees(self) -> list[str]:
        return [t for t in (self.tree, self.unsaved_tree) if t]

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> FolderState:
        return cls(
            tree=str(raw["tree"]),
            unsaved=dict(raw.get("unsaved") or {}),
            unsaved_tree=raw.get("unsaved_tree"),
            not_recorded=dict(raw.get("not_recorded") or {}),
        )


@attrs.define
class Checkpoint:
    id: str
    session_id: str | None
    turn: int | None
    prompt: str
    time: str
    folders: dict[str, FolderState]
    after: dict[str, FolderState] | None = None
    files: list[str] = attrs.Factory(list)
    reply: str = ""
    # The agent's own copy of the session made when this turn ended (`session/fork`): the
    # conversation as it stood before the session's next turn.
    fork_after: str | None = None
    # The name of the agent whose session the turn was (core/agent_slots.py), so a continuation
    # goes to that agent even once acpls no longer holds the session; None in logs from before.
    agent: str | None = None

    def title(self) -> str:
        """The first line of the prompt (the contract's `prompt` field)."""
        lines = self.prompt.strip().splitlines()
        return lines[0] if lines else ""

    def to_editor(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "sessionId": self.session_id,
            "turn": self.turn,
            "prompt": self.title(),
            "time": self.time,
            "files": list(self.files),
        }
        if self.agent is not None:
            out["agent"] = self.agent
        not_recorded = [
            {"path": posixpath.join(root, rel), "reason": reason}
            for root, state in self.folders.items()
            for rel, reason in sorted(state.not_recorded.items())
        ]
        if not_recorded:
            out["notRecorded"] = not_recorded
        return out

    def trees(self) -> list[tuple[str, str]]:
        """(folder, tree) for every tree this checkpoint keeps alive."""
        states = list(self.folders.items()) + list((self.after or {}).items())
        return [(root, tree) for root, state in states for tree in state.trees()]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "sessionId": self.session_id,
            "turn": self.turn,
            "prompt": self.prompt,
            "time": self.time,
            "folders": {k: v.to_json() for k, v in self.folders.items()},
            "after": {k: v.to_json() for k, v in self.after.items()} if self.after else None,
            "files": self.files,
            "reply": self.reply,
            "forkAfter": self.fork_after,
            "agent": self.agent,
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Checkpoint:
        after = raw.get("after")
        return cls(
            id=str(raw["id"]),
            session_id=raw.get("sessionId"),
            turn=raw.get("turn"),
            prompt=str(raw.get("prompt") or ""),
            time=str(raw.get("time") or ""),
            folders={k: FolderState.from_json(v) for k, v in raw["folders"].items()},
            after={k: FolderState.from_json(v) for k, v in after.items()} if after else None,
            files=[str(f) for f in raw.get("files") or []],
            reply=str(raw.get("reply") or ""),
            fork_after=raw.get("forkAfter"),
            agent=raw.get("agent") if isinstance(raw.get("agent"), str) else None,
        )


class CheckpointLog:
    """Every checkpoint of one workspace, oldest first, and each session's last turn number.

    The last turn numbers outlive the checkpoints: pruning removes a session's oldest turns, and
    counting the ones left gave the next turn a number already used (`turns=[4,4,4]`)."""

    def __init__(
        self, checkpoints: Iterable[Checkpoint] = (), last_turns: Mapping[str, int] | None = None
    ) -> None:
        self.items: list[Checkpoint] = list(checkpoints)
        self.last_turns: dict[str, int] = dict(last_turns or {})

    def add(self, checkpoint: Checkpoint) -> None:
        self.items.append(checkpoint)

    def get(self, checkpoint_id: str) -> Checkpoint | None:
        return next((c for c in self.items if c.id == checkpoint_id), None)

    def listing(self, session_id: str | None) -> list[dict[str, Any]]:
        chosen = [c for c in self.items if session_id is None or c.session_id == session_id]
        return [c.to_editor() for c in reversed(chosen)]

    def turns(self, session_id: str) -> int:
        """The session's last turn number (0 before its first turn)."""
        numbers = [
            c.turn for c in self.items if c.session_id == session_id and isinstance(c.turn, int)
        ]
        return max([self.last_turns.get(session_id, 0), *numbers])

    def next_turn(self, session_id: str) -> int:
        """The number of the session's next turn, taken: each is used once, increasing."""
        turn = self.turns(session_id) + 1
        self.last_turns.pop(session_id, None)  # re-inserted last: the oldest sessions go first
        self.last_turns[session_id] = turn
        while len(self.last_turns) > MAX_SESSIONS_NUMBERED:
            del self.last_turns[next(iter(self.last_turns))]
        return turn

    def history(self, checkpoint: Checkpoint) -> list[Checkpoint]:
        """The turns of `checkpoint`'s session before it, oldest first (the conversation so far)."""
        out = []
        for c in self.items:
            if c is checkpoint:
                break
            if c.session_id == checkpoint.session_id and c.turn is not None:
                out.append(c)
        return out

    def previous_turn(self, checkpoint: Checkpoint) -> Checkpoint | None:
        history = self.history(checkpoint)
        return history[-1] if history else None

    def prune(self, keep: int) -> list[Checkpoint]:
        """Remove the oldest beyond `keep` (at least one stays); returns the removed ones."""
        keep = max(keep, 1)
        if len(self.items) <= keep:
            return []
        removed, self.items = self.items[:-keep], self.items[-keep:]
        return removed

    def trees_in_use(self) -> set[tuple[str, str]]:
        return {pair for c in self.items for pair in c.trees()}

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "checkpoints": [c.to_json() for c in self.items],
            "lastTurns": self.last_turns,
        }

    @classmethod
    def from_json(cls, raw: Any) -> CheckpointLog:
        """A log as `to_json` wrote it; one from an older acpls has no `lastTurns` (the turn
        numbers of its checkpoints are the start)."""
        if not isinstance(raw, Mapping) or raw.get("version") != 1:
            return cls()
        last = raw.get("lastTurns")
        last_turns = (
            {k: v for k, v in last.items() if isinstance(k, str) and _is_int(v)}
            if isinstance(last, Mapping)
            else {}
        )
        return cls((Checkpoint.from_json(c) for c in raw.get("checkpoints") or []), last_turns)


def _is_int(value: object) -> bool:
    return type(value) is int


CONTEXT_LIMIT = 200_000


def conversation_context(history: list[Checkpoint]) -> str:
    """The conversation before a checkpoint, for a new session that continues from there (the
    most recent turns first to be kept when it is too long)."""
    parts: list[str] = []
    size = 0
    for c in reversed(history):
        user, agent = c.prompt.strip(), c.reply.strip()
        part = f"## Turn {c.turn}\n\n### User\n\n{user}\n\n### Agent\n\n{agent}\n"
        size += len(part)
        if size > CONTEXT_LIMIT:
            parts.append("(earlier turns left out)\n")
            break
        parts.append(part)
    body = "\n".join(reversed(parts))
    return (
        "This conversation continues an earlier one that was rewound to a checkpoint: the"
        " workspace files are back as they were at this point. What was said before, for"
        " context:\n\n" + body + "\n(End of the earlier conversation. The user's new message"
        " follows.)\n"
    )


# -- restore -------------------------------------------------------------------------------------
@attrs.frozen
class Change:
    """One path whose effective entry differs: (mode, oid) now and in the target, None if absent."""

    rel: str
    current: tuple[str, str] | None
    target: tuple[str, str] | None


@attrs.frozen
class DiskOp:
    """Done directly on disk, after the editor applied the text edits.
    `write`: `data` with `mode`; `link`: a symbolic link to `data`; `chmod`; `remove`."""

    kind: Literal["write", "link", "chmod", "remove"]
    path: str
    data: bytes = b""
    mode: str = FILE_MODE


@attrs.define
class RestorePlan:
    document_changes: list[dict[str, Any]] = attrs.Factory(list)
    edited: list[str] = attrs.Factory(list)  # paths the WorkspaceEdit carries
    disk: list[DiskOp] = attrs.Factory(list)
    skipped: list[dict[str, str]] = attrs.Factory(list)

    def skip(self, path: str, reason: str) -> None:
        self.skipped.append({"path": path, "reason": reason})


def effective_changes(
    tree_changes: Iterable[tuple[str, tuple[str, str] | None, tuple[str, str] | None]],
    current: FolderState,
    target: FolderState,
    entries: Mapping[str, tuple[str | None, tuple[str, str] | None, tuple[str, str] | None]],
) -> list[Change]:
    """Tree differences with the recorded buffers laid over them. `entries` gives, for every path
    with a buffer on either side, its (unused, current tree entry, target tree entry)."""
    changes: dict[str, Change] = {}
    for rel, cur, tgt in tree_changes:
        changes[rel] = Change(rel, cur, tgt)
    for rel in set(current.unsaved) | set(target.unsaved):
        _, cur_entry, tgt_entry = entries.get(rel, (None, None, None))
        cur = _overlay(cur_entry, current.unsaved.get(rel))
        tgt = _overlay(tgt_entry, target.unsaved.get(rel))
        if cur == tgt:
            changes.pop(rel, None)
        else:
            changes[rel] = Change(rel, cur, tgt)
    return [changes[k] for k in sorted(changes)]


def _overlay(entry: tuple[str, str] | None, buffer_oid: str | None) -> tuple[str, str] | None:
    if buffer_oid is None:
        return entry
    mode = entry[0] if entry is not None and entry[0] in (FILE_MODE, EXEC_MODE) else FILE_MODE
    return (mode, buffer_oid)


def as_text(data: bytes) -> str | None:
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def safe_relative(rel: str) -> bool:
    """A path from the store that stays inside its folder (no `..`, not absolute, no NUL)."""
    if not rel or rel.startswith("/") or "\0" in rel:
        return False
    return all(part not in ("", ".", "..") for part in rel.split("/"))


def plan_restore(
    root: str,
    changes: list[Change],
    blobs: Mapping[str, bytes],
    current: FolderState,
    target: FolderState,
    *,
    include_unsaved: set[str],
    preview: bool,
    outside: frozenset[str] = frozenset(),
    plan: RestorePlan | None = None,
) -> RestorePlan:
    """How to bring `root` from `current` to `target` (see the module docstring)."""
    plan = plan or RestorePlan()
    annotation = {"annotationId": ANNOTATION_ID} if preview else {}
    pending: list[Change] = []
    for change in changes:
        path = posixpath.join(root, change.rel)
        reason = _skip_reason(change, current, target, path, include_unsaved)
        if reason is None and change.rel in outside:
            reason = "the path leaves the workspace folder (through a symbolic link)"
        if reason is not None:
            plan.skip(path, reason)
        else:
            pending.append(change)
    renames = _renames(pending, blobs)
    for change in pending:
        if change.rel in renames.values():
            continue  # the new end of a rename, made by the RenameFile below
        path = posixpath.join(root, change.rel)
        if change.rel in renames:
            _rename(plan, root, change, renames[change.rel], annotation)
            continue
        _plan_one(plan, path, change, blobs, annotation)
    changed = {c.rel for c in changes}
    for rel, reason in sorted(target.not_recorded.items()):
        if rel not in changed:
            plan.skip(posixpath.join(root, rel), f"not recorded in the checkpoint: {reason}")
    return plan


def _skip_reason(
    change: Change, current: FolderState, target: FolderState, path: str, include: set[str]
) -> str | None:
    rel = change.rel
    if not safe_relative(rel):
        return "the path leaves the workspace folder"
    if GITLINK_MODE in (_mode(change.current), _mode(change.target)):
        return "a nested git repository (not recorded)"
    if change.target is None and rel in target.not_recorded:
        return f"not recorded in the checkpoint: {target.not_recorded[rel]}"
    if change.current is None and rel in current.not_recorded:
        return (
            f"its current content is not recorded ({current.not_recorded[rel]}), so a restore"
            " could not be undone"
        )
    if rel in current.unsaved and path not in include:
        return "unsaved changes in the editor (confirm with includeUnsaved)"
    return None


def _mode(entry: tuple[str, str] | None) -> str | None:
    return entry[0] if entry is not None else None


def _renames(changes: list[Change], blobs: Mapping[str, bytes]) -> dict[str, str]:
    """Old path -> new path for files that only moved (the same text, a regular file)."""
    created: dict[str, str] = {}
    for c in changes:
        if c.current is None and c.target is not None and c.target[0] in (FILE_MODE, EXEC_MODE):
            created.setdefault(c.target[1], c.rel)
    renames: dict[str, str] = {}
    for c in changes:
        if c.target is None and c.current is not None and c.current[0] in (FILE_MODE, EXEC_MODE):
            new = created.pop(c.current[1], None)
            if new is not None and as_text(blobs.get(c.current[1], b"\0")) is not None:
                renames[c.rel] = new
    return renames


def _rename(
    plan: RestorePlan, root: str, change: Change, new_rel: str, annotation: dict[str, Any]
) -> None:
    old_path, new_path = posixpath.join(root, change.rel), posixpath.join(root, new_rel)
    plan.document_changes.append(
        {
            "kind": "rename",
            "oldUri": path_to_uri(old_path),
            "newUri": path_to_uri(new_path),
            "options": {"overwrite": False, "ignoreIfExists": False},
            **annotation,
        }
    )
    plan.edited += [old_path, new_path]


def _plan_one(
    plan: RestorePlan,
    path: str,
    change: Change,
    blobs: Mapping[str, bytes],
    annotation: dict[str, Any],
) -> None:
    cur, tgt = change.current, change.target
    uri = path_to_uri(path)
    if tgt is None:  # created since the checkpoint
        assert cur is not None
        if cur[0] == LINK_MODE:
            plan.disk.append(DiskOp("remove", path))
        else:
            plan.document_changes.append(
                {"kind": "delete", "uri": uri, "options": {"ignoreIfNotExists": True}, **annotation}
            )
            plan.edited.append(path)
        return
    tgt_mode, tgt_oid = tgt
    data = blobs.get(tgt_oid)
    if data is None:
        plan.skip(path, "its recorded content is missing from the store")
        return
    if tgt_mode == LINK_MODE:
        if cur is not None:
            plan.disk.append(DiskOp("remove", path))
        plan.disk.append(DiskOp("link", path, data))
        return
    new_text = as_text(data)
    cur_text = None
    if cur is not None and cur[0] != LINK_MODE:
        cur_text = as_text(blobs.get(cur[1], b"\0"))
    if cur is not None and cur[0] == LINK_MODE:
        plan.disk.append(DiskOp("remove", path))
        cur = None
    if new_text is None or (cur is not None and cur_text is None):
        plan.disk.append(DiskOp("write", path, data, tgt_mode))
        return
    if cur is None:
        plan.document_changes.append(
            {"kind": "create", "uri": uri, "options": {"ignoreIfExists": True}, **annotation}
        )
        edits = minimal_line_edits("", new_text)
    else:
        assert cur_text is not None
        edits = minimal_line_edits(cur_text, new_text) if cur[1] != tgt_oid else []
    if edits:
        plan.document_changes.append(
            {
                "textDocument": {"uri": uri, "version": None},
                "edits": [{**e, **annotation} for e in edits],
            }
        )
    if edits or cur is None:
        plan.edited.append(path)
    new_file_exec = cur is None and tgt_mode == EXEC_MODE
    if new_file_exec or (cur is not None and cur[0] != tgt_mode):
        plan.disk.append(DiskOp("chmod", path, mode=tgt_mode))


def restore_diff(root: str, change: Change, blobs: Mapping[str, bytes]) -> dict[str, Any]:
    """One file of what a restore would change: `{"path", "status", "diff"}`, where `status` is
    `modified`, `created` (the restore creates it), `deleted` (the restore deletes it), and
    `diff` a unified diff from the file now to the file in the checkpoint."""
    path = posixpath.join(root, change.rel)
    cur, tgt = change.current, change.target
    status = "created" if cur is None else "deleted" if tgt is None else "modified"
    old = _describe(cur, blobs)
    new = _describe(tgt, blobs)
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"{path} (now)" if cur is not None else "/dev/null",
        tofile=f"{path} (checkpoint)" if tgt is not None else "/dev/null",
    )
    diff = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
    if cur is not None and tgt is not None and cur[0] != tgt[0]:
        diff = f"mode {cur[0]} -> {tgt[0]}\n" + diff
    return {"path": path, "status": status, "diff": diff}


def _describe(entry: tuple[str, str] | None, blobs: Mapping[str, bytes]) -> str:
    if entry is None:
        return ""
    mode, oid = entry
    if mode == GITLINK_MODE:
        return f"nested repository at {oid}\n"
    data = blobs.get(oid)
    if data is None:
        return "(content not in the store)\n"
    if mode == LINK_MODE:
        return f"symbolic link to {data.decode('utf-8', 'replace')}\n"
    text = as_text(data)
    return text if text is not None else f"binary, {len(data)} bytes, {oid[:12]}\n"


def workspace_edit(plan: RestorePlan, label: str, preview: bool) -> dict[str, Any]:
    edit: dict[str, Any] = {"documentChanges": plan.document_changes}
    if preview:
        edit["changeAnnotations"] = {
            ANNOTATION_ID: {"label": label, "needsConfirmation": True, "description": label}
        }
    return edit
