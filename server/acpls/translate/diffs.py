"""ACP diffs (v1 `{path, oldText, newText}`, v2 `{changes, patch}`) as LSP WorkspaceEdits.

The WorkspaceEdit is relative to the content the diff starts from (the v2 patch's pre-image; for
v1, the file with `oldText` in its place).  The current text of each file (from `read_current`) is
checked against that pre-image; where it no longer matches, the file's edit is left out and a
problem is reported, so a stale diff is never applied blindly.  A v1 `oldText` may be the whole
file or only the replaced region (a fragment): it is placed in the file first
(`translate.fragments`); a diff that cannot be placed, or that the file already holds, gets no
edit, only an annotation and a problem saying why.

`changes` is authoritative: every change appears in the edit, as a text edit, as a resource
operation (CreateFile/DeleteFile/RenameFile) where one fits, or else as a change annotation
whose label names the path (`acpls.unrendered.N`, with no edit attached).  Every edit carries a
change annotation with `needsConfirmation: true`.  Output is plain JSON-shaped dicts.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from acpls.translate.fragments import Placement, Unplaced, place_v1_diff
from acpls.translate.git_patch import (
    FilePatch,
    PatchApplyError,
    PatchError,
    apply_file_patch,
    parse_git_patch,
)
from acpls.translate.text_edits import line_counts, minimal_line_edits
from acpls.translate.uris import path_to_uri

logger = logging.getLogger(__name__)

ReadCurrent = Callable[[str], "str | None"]
"""Current text of an absolute path (editor buffer or disk), None when the file does not exist."""

KNOWN_OPERATIONS = ("add", "delete", "modify", "move", "copy")
_PAIR_OPERATIONS = ("move", "copy")
GIT_PATCH = "git_patch"
# File types whose content a text edit cannot describe.
_NON_TEXT_TYPES = ("binary", "directory", "symlink")


@attrs.frozen
class DiffChange:
    """One entry of v2 `changes` (v1 diffs become one too).  `raw` is the change as received."""

    operation: str
    path: str | None
    old_path: str | None = None
    file_type: str | None = None
    mime_type: str | None = None
    raw: Mapping[str, Any] = attrs.field(factory=dict, eq=False, hash=False)

    @property
    def is_known(self) -> bool:
        """A known operation with the absolute path(s) it needs; anything else stays raw."""
        if self.operation not in KNOWN_OPERATIONS or not _is_absolute(self.path):
            return False
        return self.operation not in _PAIR_OPERATIONS or _is_absolute(self.old_path)

    @property
    def is_text(self) -> bool:
        return self.file_type not in _NON_TEXT_TYPES

    def label(self) -> str:
        """The operation and the path(s), as shown to the user: `move /a.py → /b.py`."""
        name = self.operation or "(no operation)"
        if self.old_path is not None and self.old_path != self.path:
            return f"{name} {self.old_path} → {self.path or '(no path)'}"
        return f"{name} {self.path or self.old_path or '(no path)'}"


@attrs.frozen
class PatchText:
    format: str
    text: str


@attrs.frozen
class FullText:
    """A v1 diff's whole texts for one path; `old_text` None means a new file."""

    path: str
    old_text: str | None
    new_text: str


@attrs.frozen
class AcpDiff:
    """A diff content item.  `texts` holds the v1 whole-file texts (none for v2)."""

    changes: tuple[DiffChange, ...]
    patch: PatchText | None = None
    texts: tuple[FullText, ...] = ()
    problems: tuple[str, ...] = ()
    """What could not be read from the item itself (a malformed `patch`, say)."""


@attrs.frozen
class FileSummary:
    """One file of a diff with its added/removed line counts (0 when unknown, e.g. binary)."""

    path: str
    added: int
    removed: int
    operation: str
    old_path: str | None = None

    def summary_line(self) -> str:
        """`/ws/a.py +3 -1` (with `old → new` for move and copy), for permission messages."""
        name = self.path
        if self.old_path is not None and self.old_path != self.path:
            name = f"{self.old_path} → {self.path}"
        suffix = "" if self.operation == "modify" else f" ({self.operation or 'unknown'})"
        return f"{name} +{self.added} -{self.removed}{suffix}"


@attrs.frozen
class EditResult:
    edit: dict[str, Any]
    """`{"documentChanges": [...], "changeAnnotations": {...}}`."""
    problems: list[str]
    files: list[FileSummary]


# ---------------------------------------------------------------------------------------------
# Reading the ACP content item


def _is_absolute(path: object) -> bool:
    return isinstance(path, str) and path.startswith("/")


def _optional_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _change_from_json(raw: object) -> DiffChange:
    if not isinstance(raw, Mapping):
        return DiffChange(operation="", path=None, raw={"value": raw})
    return DiffChange(
        operation=str(raw.get("operation", "")),
        path=_optional_str(raw.get("path")),
        old_path=_optional_str(raw.get("oldPath")),
        file_type=_optional_str(raw.get("fileType")),
        mime_type=_optional_str(raw.get("mimeType")),
        raw=dict(raw),
    )


def _v2_diff(item: Mapping[str, Any]) -> AcpDiff:
    changes = tuple(_change_from_json(change) for change in item["changes"])
    raw_patch = item.get("patch")
    if raw_patch is None:
        return AcpDiff(changes=changes)
    if (
        isinstance(raw_patch, Mapping)
        and isinstance(raw_patch.get("format"), str)
        and isinstance(raw_patch.get("text"), str)
    ):
        return AcpDiff(changes=changes, patch=PatchText(raw_patch["format"], raw_patch["text"]))
    problem = f"diff patch is not {{format, text}}: {json.dumps(raw_patch)[:200]}"
    return AcpDiff(changes=changes, problems=(problem,))


def _v1_diff(item: Mapping[str, Any]) -> AcpDiff:
    path, old_text, new_text = item["path"], item.get("oldText"), item["newText"]
    operation = "add" if old_text is None else "modify"
    change = DiffChange(operation=operation, path=path, file_type="text", raw=dict(item))
    if not isinstance(new_text, str) or not isinstance(old_text, str | None):
        problem = f"diff for {path} has non-text oldText/newText"
        return AcpDiff(changes=(attrs.evolve(change, operation=""),), problems=(problem,))
    return AcpDiff(changes=(change,), texts=(FullText(path, old_text, new_text),))


def diff_from_content(item: Mapping[str, Any]) -> AcpDiff | None:
    """The diff of a tool-call content item; None when the item is not `type: "diff"`.

    A diff item of neither known shape becomes an AcpDiff with no changes and a problem saying
    so, so that callers report it instead of losing it.
    """
    if item.get("type") != "diff":
        return None
    if isinstance(item.get("changes"), list):
        return _v2_diff(item)
    if isinstance(item.get("path"), str) and "newText" in item:
        return _v1_diff(item)
    logger.warning("diff content item of unknown shape: keys %s", sorted(item))
    problem = f"diff content item has neither `changes` nor `path`/`newText` (keys {sorted(item)})"
    return AcpDiff(changes=(), problems=(problem,))


# ---------------------------------------------------------------------------------------------
# Matching patch sections to changes


def _expected_operation(section: FilePatch) -> str:
    if section.is_rename:
        return "move"
    if section.is_copy:
        return "copy"
    if section.is_new:
        return "add"
    if section.is_deleted:
        return "delete"
    return "modify"


def _same_path(patch_path: str | None, change_path: str | None) -> bool:
    """Equal, or a relative (`a/`-`b/` style) patch path naming the end of the change's path."""
    if patch_path is None or change_path is None:
        return patch_path == change_path
    if patch_path.startswith("/"):
        return patch_path == change_path
    return change_path.endswith("/" + patch_path)


@attrs.frozen
class _Plan:
    """Each change with the patch section that renders it (None: no usable text patch)."""

    entries: list[tuple[DiffChange, FilePatch | None]]
    problems: list[str]


def _parse_sections(diff: AcpDiff, problems: list[str]) -> list[FilePatch]:
    if diff.patch is None:
        return []
    if diff.patch.format != GIT_PATCH:
        problems.append(f"patch format {diff.patch.format!r} is not supported; changes shown alone")
        return []
    try:
        return parse_git_patch(diff.patch.text)
    except PatchError as error:
        problems.append(f"patch could not be read ({error}); changes shown alone")
        return []


def _find_change(section: FilePatch, changes: Sequence[DiffChange]) -> int | None:
    matches = [
        index
        for index, change in enumerate(changes)
        if change.is_known and _same_path(section.path, change.path)
    ]
    return matches[0] if len(matches) == 1 else None


def _section_conflict(section: FilePatch, change: DiffChange) -> str | None:
    """Why `section` disagrees with `change`, or None when they agree."""
    expected = _expected_operation(section)
    if expected != change.operation:
        return (
            f"patch section for {section.path} is a {expected} but changes say "
            f"{change.operation}; its text is not used"
        )
    if change.operation in _PAIR_OPERATIONS and not _same_path(section.old_path, change.old_path):
        return (
            f"patch section for {section.path} comes from {section.old_path} but changes say "
            f"{change.old_path}; its text is not used"
        )
    return None


def _plan(diff: AcpDiff) -> _Plan:
    problems = list(diff.problems)
    sections: dict[int, FilePatch] = {}
    for section in _parse_sections(diff, problems):
        index = _find_change(section, diff.changes)
        if index is None:
            problems.append(f"patch section for {section.path} is not listed in changes")
            continue
        conflict = _section_conflict(section, diff.changes[index])
        if conflict is not None:
            problems.append(conflict)
        elif index in sections:
            problems.append(f"patch has more than one section for {section.path}; first used")
        else:
            sections[index] = section
    entries = [(change, sections.get(index)) for index, change in enumerate(diff.changes)]
    return _Plan(entries=entries, problems=problems)


# ---------------------------------------------------------------------------------------------
# Summaries


def _summary(
    change: DiffChange, section: FilePatch | None, texts: Sequence[FullText]
) -> FileSummary:
    added = removed = 0
    if section is not None:
        added, removed = section.added, section.removed
    else:
        for full in texts:
            if full.path == change.path:
                added, removed = line_counts(full.old_text or "", full.new_text)
    return FileSummary(
        path=change.path or change.old_path or "(no path)",
        added=added,
        removed=removed,
        operation=change.operation,
        old_path=change.old_path,
    )


def summarize(diff: AcpDiff) -> list[FileSummary]:
    """Each changed file with its +/- line counts (from the patch or the v1 texts)."""
    plan = _plan(diff)
    return [_summary(change, section, diff.texts) for change, section in plan.entries]


# ---------------------------------------------------------------------------------------------
# Building the WorkspaceEdit


def _stale(path: str) -> str:
    return f"pre-image of {path} no longer matches the file"


def _unplaced(path: str, reason: str) -> str:
    return f"the diff for {path} cannot be placed in the file: {reason}; no edit is made from it"


def _already_applied(path: str) -> str:
    return f"{path} already holds this change"


def place_v1(full: FullText, current: str | None) -> Placement | Unplaced:
    """A v1 modify diff placed in the file's current text (None: the file does not exist)."""
    if current is None:
        return Unplaced("the file does not exist")
    assert full.old_text is not None  # a modify diff
    return place_v1_diff(current, full.old_text, full.new_text)


class _EditBuilder:
    """Collects document changes and annotations; ids stay unique across several diffs."""

    def __init__(self, read_current: ReadCurrent) -> None:
        self.read_current = read_current
        self.document_changes: list[dict[str, Any]] = []
        self.annotations: dict[str, dict[str, Any]] = {}
        self.problems: list[str] = []
        self.files: list[FileSummary] = []
        self._next_id = 0

    def result(self) -> EditResult:
        edit = {"documentChanges": self.document_changes, "changeAnnotations": self.annotations}
        return EditResult(edit=edit, problems=self.problems, files=self.files)

    def annotation(self, kind: str, label: str, description: str) -> str:
        annotation_id = f"acpls.{kind}.{self._next_id}"
        self._next_id += 1
        self.annotations[annotation_id] = {
            "label": label,
            "needsConfirmation": True,
            "description": description,
        }
        return annotation_id

    def unrendered(self, change: DiffChange, why: str) -> None:
        """The change appears as an annotation naming its path, with no edit attached."""
        self.annotation("unrendered", change.label(), why)

    # -- the LSP shapes ---------------------------------------------------------------------

    def text_edit(self, path: str, old: str, new: str, annotation_id: str) -> None:
        edits = minimal_line_edits(old, new)
        if not edits:
            return
        for edit in edits:
            edit["annotationId"] = annotation_id
        self.document_changes.append(
            {"textDocument": {"uri": path_to_uri(path), "version": None}, "edits": edits}
        )

    def create_file(self, path: str, annotation_id: str) -> None:
        # ignoreIfExists: an existing empty file is the same pre-image as a file not there yet.
        self.document_changes.append(
            {
                "kind": "create",
                "uri": path_to_uri(path),
                "options": {"ignoreIfExists": True},
                "annotationId": annotation_id,
            }
        )

    def delete_file(self, path: str, annotation_id: str, *, directory: bool) -> None:
        operation: dict[str, Any] = {
            "kind": "delete",
            "uri": path_to_uri(path),
            "annotationId": annotation_id,
        }
        if directory:
            operation["options"] = {"recursive": True}
        self.document_changes.append(operation)

    def rename_file(self, old_path: str, new_path: str, annotation_id: str) -> None:
        self.document_changes.append(
            {
                "kind": "rename",
                "oldUri": path_to_uri(old_path),
                "newUri": path_to_uri(new_path),
                "annotationId": annotation_id,
            }
        )

    # -- one change ---------------------------------------------------------------------------

    def add_change(
        self, change: DiffChange, section: FilePatch | None, full: FullText | None
    ) -> None:
        summary = _summary(change, section, [full] if full is not None else [])
        self.files.append(summary)
        if not change.is_known:
            raw = json.dumps(dict(change.raw), ensure_ascii=False)[:500]
            self.unrendered(change, f"operation not understood by acpls; shown as sent: {raw}")
            return
        counts = f"+{summary.added} -{summary.removed}"
        handler = getattr(self, f"_render_{change.operation}")
        handler(change, section, full, counts)

    def post_image(self, path: str, pre_image: str | None, section: FilePatch) -> str | None:
        """The section applied to the current text of `path`; None (and a problem) when stale."""
        if pre_image is not None:
            try:
                return apply_file_patch(pre_image, section)
            except PatchApplyError as error:
                logger.debug("stale pre-image: %s", error)
        self.problems.append(_stale(path))
        return None

    def _render_modify(
        self, change: DiffChange, section: FilePatch | None, full: FullText | None, counts: str
    ) -> None:
        path = _path(change)
        if full is not None:
            self._render_v1_modify(change, full, path)
            return
        if section is None or not section.hunks:
            self.unrendered(change, _why_no_text(change, section))
            return
        current = self.read_current(path)
        post = self.post_image(path, current, section)
        if post is None or current is None:
            self.unrendered(change, "not shown: the file changed since the agent read it")
            return
        self.text_edit(path, current, post, self.annotation("change", change.label(), counts))

    def _render_v1_modify(self, change: DiffChange, full: FullText, path: str) -> None:
        current = self.read_current(path)
        if current is None and full.old_text == "":
            # A file not there yet with an empty pre-image is a new file (Qwen Code sends
            # `oldText: ""` rather than null for the files it creates).
            added, removed = line_counts("", full.new_text)
            self.files[-1] = attrs.evolve(self.files[-1], operation="add")
            change = attrs.evolve(change, operation="add")
            self._render_add(change, None, full, f"+{added} -{removed}")
            return
        placed = place_v1(full, current)
        if isinstance(placed, Unplaced):
            self.problems.append(_unplaced(path, placed.reason))
            self.unrendered(change, f"not shown: {placed.reason}")
            return
        added, removed = line_counts(placed.pre_image, placed.post_image)
        self.files[-1] = attrs.evolve(self.files[-1], added=added, removed=removed)
        if placed.when == "after":
            self.problems.append(_already_applied(path))
            self.unrendered(change, "not shown: the file already holds this change")
            return
        counts = f"+{added} -{removed}"
        annotation_id = self.annotation("change", change.label(), counts)
        self.text_edit(path, placed.pre_image, placed.post_image, annotation_id)

    def _render_add(
        self, change: DiffChange, section: FilePatch | None, full: FullText | None, counts: str
    ) -> None:
        path = _path(change)
        if change.file_type in ("directory", "symlink"):
            self.unrendered(change, f"a {change.file_type}: no LSP operation creates one")
            return
        if full is None and (section is None or not section.hunks):
            # No text to check or show: a binary file, an empty one, or no patch at all.
            empty = section is not None and not section.is_binary and change.is_text
            description = "empty file" if empty else _why_no_text(change, section)
            self.create_file(path, self.annotation("change", change.label(), description))
            return
        current = self.read_current(path)
        if current:  # the file is already there with text: not the empty pre-image of an add
            self.problems.append(_stale(path))
            self.unrendered(change, "not shown: the file already exists")
            return
        if full is not None:
            new_text: str | None = full.new_text
        else:
            assert section is not None
            new_text = self.post_image(path, "", section)
        if new_text is None:
            self.unrendered(change, "not shown: the patch does not describe a new file")
            return
        annotation_id = self.annotation("change", change.label(), counts)
        self.create_file(path, annotation_id)
        self.text_edit(path, "", new_text, annotation_id)

    def _render_delete(
        self, change: DiffChange, section: FilePatch | None, full: FullText | None, counts: str
    ) -> None:
        path = _path(change)
        stale = (
            section is not None
            and bool(section.hunks)
            and self.post_image(path, self.read_current(path), section) is None
        )
        if stale:
            self.unrendered(change, "not deleted: the file changed since the agent read it")
            return
        annotation_id = self.annotation("change", change.label(), counts)
        self.delete_file(path, annotation_id, directory=change.file_type == "directory")

    def _render_move(
        self, change: DiffChange, section: FilePatch | None, full: FullText | None, counts: str
    ) -> None:
        path, old_path = _path(change), _old_path(change)
        annotation_id = self.annotation("change", change.label(), counts)
        self.rename_file(old_path, path, annotation_id)
        if section is None or not section.hunks:
            return
        current = self.read_current(old_path)
        post = self.post_image(old_path, current, section)
        if post is not None and current is not None:
            self.text_edit(path, current, post, annotation_id)
        else:
            self.unrendered(change, "text not shown: the file changed since the agent read it")

    def _render_copy(
        self, change: DiffChange, section: FilePatch | None, full: FullText | None, counts: str
    ) -> None:
        path, old_path = _path(change), _old_path(change)
        if change.file_type == "directory":
            self.unrendered(change, "a directory copy: no LSP operation copies one")
            return
        is_binary = not change.is_text or (section is not None and section.is_binary)
        source = None if is_binary else self.read_current(old_path)
        content: str | None = source
        if section is not None and section.hunks:
            content = self.post_image(old_path, source, section)
        if content is None:
            description = f"copy of {old_path}; content not shown"
            self.create_file(path, self.annotation("change", change.label(), description))
            return
        annotation_id = self.annotation("change", change.label(), f"copy of {old_path}, {counts}")
        self.create_file(path, annotation_id)
        self.text_edit(path, "", content, annotation_id)


def _path(change: DiffChange) -> str:
    assert change.path is not None  # is_known checked it
    return change.path


def _old_path(change: DiffChange) -> str:
    assert change.old_path is not None  # is_known checked it for move and copy
    return change.old_path


def _why_no_text(change: DiffChange, section: FilePatch | None) -> str:
    if (section is not None and section.is_binary) or change.file_type == "binary":
        return "binary file: content not shown"
    if section is not None and (section.old_mode or section.new_mode):
        return f"mode {section.old_mode or '?'} → {section.new_mode or '?'}"
    if change.file_type in ("symlink", "directory"):
        return f"{change.file_type}: content not shown"
    return "no patch text for this change"


def diffs_to_workspace_edit(diffs: Iterable[AcpDiff], read_current: ReadCurrent) -> EditResult:
    """One WorkspaceEdit for several diffs (the diff items of one tool call), in order."""
    builder = _EditBuilder(read_current)
    for diff in diffs:
        plan = _plan(diff)
        builder.problems.extend(plan.problems)
        texts = {full.path: full for full in diff.texts}
        for change, section in plan.entries:
            full = texts.get(change.path) if change.path is not None else None
            builder.add_change(change, section, full)
    return builder.result()


def to_workspace_edit(diff: AcpDiff, read_current: ReadCurrent) -> EditResult:
    """The WorkspaceEdit of one diff; see the module docstring for the rules."""
    return diffs_to_workspace_edit([diff], read_current)


def workspace_edit_from_content(
    content: Iterable[Mapping[str, Any]], read_current: ReadCurrent
) -> EditResult | None:
    """The WorkspaceEdit of every diff item among a tool call's content; None if there is none."""
    diffs = [
        diff
        for item in content
        if isinstance(item, Mapping) and (diff := diff_from_content(item)) is not None
    ]
    if not diffs:
        return None
    return diffs_to_workspace_edit(diffs, read_current)
