"""ACP diffs as LSP WorkspaceEdits (acpls.translate.diffs) and file URIs (acpls.translate.uris)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acpls.translate.diffs import (
    AcpDiff,
    DiffChange,
    EditResult,
    FileSummary,
    PatchText,
    diff_from_content,
    diffs_to_workspace_edit,
    summarize,
    to_workspace_edit,
    workspace_edit_from_content,
)
from acpls.translate.git_patch import make_git_patch
from acpls.translate.text_edits import apply_text_edits
from acpls.translate.uris import path_to_uri, uri_to_path

# ---------------------------------------------------------------------------------------------
# Helpers: a tiny in-memory workspace that can apply a WorkspaceEdit, as an editor would.


def v2(changes: list[dict[str, Any]], patch: str | None = None, **extra: Any) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "diff", "changes": changes, **extra}
    if patch is not None:
        item["patch"] = {"format": "git_patch", "text": patch}
    return item


def edit_of(item: Mapping[str, Any], files: Mapping[str, str]) -> EditResult:
    diff = diff_from_content(item)
    assert diff is not None
    return to_workspace_edit(diff, files.get)


def apply_workspace_edit(edit: Mapping[str, Any], files: Mapping[str, str]) -> dict[str, str]:
    """Apply documentChanges in order to a {path: text} workspace (what the editor does)."""
    result = dict(files)
    for change in edit["documentChanges"]:
        kind = change.get("kind")
        if kind == "create":
            path = uri_to_path(change["uri"])
            if path in result:
                assert change.get("options", {}).get("ignoreIfExists") or result[path] == ""
            result.setdefault(path, "")
        elif kind == "delete":
            del result[uri_to_path(change["uri"])]
        elif kind == "rename":
            result[uri_to_path(change["newUri"])] = result.pop(uri_to_path(change["oldUri"]))
        else:
            path = uri_to_path(change["textDocument"]["uri"])
            result[path] = apply_text_edits(result[path], change["edits"])
    return result


def all_annotation_ids(edit: Mapping[str, Any]) -> list[str]:
    ids: list[str] = []
    for change in edit["documentChanges"]:
        if "edits" in change:
            ids.extend(e["annotationId"] for e in change["edits"])
        else:
            ids.append(change["annotationId"])
    return ids


def labels(edit: Mapping[str, Any]) -> list[str]:
    return [annotation["label"] for annotation in edit["changeAnnotations"].values()]


def unrendered_labels(edit: Mapping[str, Any]) -> list[str]:
    return [
        annotation["label"]
        for key, annotation in edit["changeAnnotations"].items()
        if key.startswith("acpls.unrendered.")
    ]


def assert_every_edit_needs_confirmation(edit: Mapping[str, Any]) -> None:
    annotations = edit["changeAnnotations"]
    for annotation_id in all_annotation_ids(edit):
        assert annotations[annotation_id]["needsConfirmation"] is True
    for annotation in annotations.values():
        assert annotation["needsConfirmation"] is True and annotation["label"]


# ---------------------------------------------------------------------------------------------
# URIs


def test_path_to_uri_percent_encodes_and_round_trips():
    assert path_to_uri("/home/u/a b.py") == "file:///home/u/a%20b.py"
    assert path_to_uri("/w/café#1?.txt") == "file:///w/caf%C3%A9%231%3F.txt"
    assert uri_to_path("file:///w/caf%C3%A9%231%3F.txt") == "/w/café#1?.txt"
    assert uri_to_path("file://localhost/etc/hosts") == "/etc/hosts"
    assert uri_to_path("FILE:///x") == "/x"


@pytest.mark.parametrize("path", ["relative.py", "./x", "", "~/x"])
def test_path_to_uri_rejects_relative_paths(path: str):
    with pytest.raises(ValueError, match="absolute"):
        path_to_uri(path)


@pytest.mark.parametrize(
    "uri", ["https://example.com/x", "untitled:Untitled-1", "file://host/share/x", "file:rel"]
)
def test_uri_to_path_rejects_non_file_remote_or_relative_uris(uri: str):
    with pytest.raises(ValueError):
        uri_to_path(uri)


@settings(max_examples=300)
@given(st.lists(st.text(min_size=1).filter(lambda s: "/" not in s), min_size=1, max_size=4))
def test_path_uri_round_trip(parts: list[str]):
    path = "/" + "/".join(parts)
    uri = path_to_uri(path)
    assert uri.startswith("file:///") and uri.isascii()
    assert uri_to_path(uri) == path


# ---------------------------------------------------------------------------------------------
# Reading content items


def test_non_diff_items_are_not_diffs():
    assert diff_from_content({"type": "content", "content": {"type": "text", "text": "x"}}) is None
    assert diff_from_content({"type": "terminal", "terminalId": "t"}) is None


def test_v1_diff_with_and_without_old_text():
    created = diff_from_content({"type": "diff", "path": "/w/n.py", "newText": "x\n"})
    assert created is not None
    assert created.changes == (DiffChange("add", "/w/n.py", file_type="text"),)
    null_old = diff_from_content(
        {"type": "diff", "path": "/w/n.py", "oldText": None, "newText": ""}
    )
    assert null_old is not None and null_old.changes[0].operation == "add"
    modified = diff_from_content(
        {"type": "diff", "path": "/w/a.py", "oldText": "a\n", "newText": "b\n"}
    )
    assert modified is not None and modified.changes[0].operation == "modify"
    assert modified.texts[0].old_text == "a\n" and modified.patch is None


def test_v2_diff_keeps_operations_file_types_and_raw_changes():
    raw_unknown = {"operation": "_chmod", "path": "/w/x", "mode": "0755", "_meta": {"k": 1}}
    diff = diff_from_content(
        v2(
            [
                {
                    "operation": "modify",
                    "path": "/w/a.json",
                    "fileType": "text",
                    "mimeType": "application/json",
                },
                {"operation": "move", "oldPath": "/w/o", "path": "/w/n", "fileType": "symlink"},
                {"operation": "add", "path": "/w/d", "fileType": "_socket"},
                raw_unknown,
            ],
            patch="",
        )
    )
    assert diff is not None
    modify, move, add, unknown = diff.changes
    assert (modify.file_type, modify.mime_type) == ("text", "application/json")
    assert (move.old_path, move.path, move.file_type) == ("/w/o", "/w/n", "symlink")
    assert add.file_type == "_socket"
    assert unknown.operation == "_chmod" and unknown.raw == raw_unknown and not unknown.is_known
    assert diff.patch == PatchText("git_patch", "")


def test_malformed_diff_items_become_problems_not_exceptions():
    odd = diff_from_content({"type": "diff", "something": 1})
    assert odd is not None and odd.changes == () and "neither" in odd.problems[0]
    bad = diff_from_content({"type": "diff", "changes": [], "patch": {"format": "git_patch"}})
    assert bad is not None and bad.patch is None and "patch is not" in bad.problems[0]
    result = to_workspace_edit(bad, {}.get)
    assert result.problems == list(bad.problems)
    non_text = diff_from_content({"type": "diff", "path": "/w/a", "newText": 3})
    assert non_text is not None and "non-text" in non_text.problems[0]
    assert unrendered_labels(to_workspace_edit(non_text, {}.get).edit) == ["(no operation) /w/a"]


# ---------------------------------------------------------------------------------------------
# v1 diffs


def test_v1_new_file_becomes_create_file_and_insert():
    result = edit_of({"type": "diff", "path": "/w/new.py", "newText": "a\nb"}, {})
    create, text = result.edit["documentChanges"]
    assert create["kind"] == "create" and create["uri"] == "file:///w/new.py"
    assert text["textDocument"] == {"uri": "file:///w/new.py", "version": None}
    assert text["edits"][0]["range"]["start"] == {"line": 0, "character": 0}
    assert text["edits"][0]["newText"] == "a\nb"
    assert apply_workspace_edit(result.edit, {}) == {"/w/new.py": "a\nb"}
    assert result.files == [FileSummary("/w/new.py", 2, 0, "add")]
    assert result.problems == []
    assert_every_edit_needs_confirmation(result.edit)


def test_v1_modify_is_minimal_line_edits_from_old_text():
    old = "".join(f"line {n}\r\n" for n in range(50))
    new = old.replace("line 20\r\n", "LINE 20\r\n")
    result = edit_of(
        {"type": "diff", "path": "/w/a.txt", "oldText": old, "newText": new}, {"/w/a.txt": old}
    )
    (text,) = result.edit["documentChanges"]
    assert len(text["edits"]) == 1 and text["edits"][0]["newText"] == "LINE 20\r\n"
    assert apply_workspace_edit(result.edit, {"/w/a.txt": old}) == {"/w/a.txt": new}
    assert result.files == [FileSummary("/w/a.txt", 1, 1, "modify")]


def test_v1_stale_old_text_is_reported_and_left_out():
    item = {"type": "diff", "path": "/w/a.txt", "oldText": "a\n", "newText": "b\n"}
    result = edit_of(item, {"/w/a.txt": "user changed this\n"})
    assert result.problems == [
        "the diff for /w/a.txt cannot be placed in the file: neither its old nor its new text is"
        " in the file; no edit is made from it"
    ]
    assert result.edit["documentChanges"] == []
    assert unrendered_labels(result.edit) == ["modify /w/a.txt"]
    assert result.files == [FileSummary("/w/a.txt", 1, 1, "modify")]
    missing = edit_of(item, {})
    assert missing.problems == [
        "the diff for /w/a.txt cannot be placed in the file: the file does not exist;"
        " no edit is made from it"
    ]


def test_v1_empty_old_text_of_a_missing_file_is_a_new_file():
    # Qwen Code's write_file of a new file: `oldText: ""`, not null.
    item = {"type": "diff", "path": "/w/new.md", "oldText": "", "newText": "# N\n\nx\n"}
    result = edit_of(item, {})
    assert result.problems == []
    create, _text = result.edit["documentChanges"]
    assert create["kind"] == "create"
    assert apply_workspace_edit(result.edit, {}) == {"/w/new.md": "# N\n\nx\n"}
    assert result.files == [FileSummary("/w/new.md", 3, 0, "add")]
    # An existing empty file is the whole-file pre-image; a file with text cannot place "".
    assert apply_workspace_edit(edit_of(item, {"/w/new.md": ""}).edit, {"/w/new.md": ""}) == {
        "/w/new.md": "# N\n\nx\n"
    }
    assert edit_of(item, {"/w/new.md": "other\n"}).edit["documentChanges"] == []


def test_v1_new_file_that_already_has_text_is_stale():
    result = edit_of({"type": "diff", "path": "/w/n", "newText": "x\n"}, {"/w/n": "other\n"})
    assert result.problems == ["pre-image of /w/n no longer matches the file"]
    assert result.edit["documentChanges"] == []
    empty = edit_of({"type": "diff", "path": "/w/n", "newText": "x\n"}, {"/w/n": ""})
    assert apply_workspace_edit(empty.edit, {"/w/n": ""}) == {"/w/n": "x\n"}


# ---------------------------------------------------------------------------------------------
# v2 diffs

A_OLD = "import os\n\ndef main():\n    return 1\n"
A_NEW = "import os\n\ndef main():\n    return 2\n"
A_PATCH = make_git_patch("/w/a.py", "/w/a.py", A_OLD, A_NEW)


def test_v2_modify_with_patch_applies_to_the_current_file():
    result = edit_of(v2([{"operation": "modify", "path": "/w/a.py"}], A_PATCH), {"/w/a.py": A_OLD})
    assert result.problems == []
    assert apply_workspace_edit(result.edit, {"/w/a.py": A_OLD}) == {"/w/a.py": A_NEW}
    assert labels(result.edit) == ["modify /w/a.py"]
    assert result.files == [FileSummary("/w/a.py", 1, 1, "modify")]
    assert_every_edit_needs_confirmation(result.edit)


def test_v2_add_delete_with_patch():
    patch = make_git_patch(None, "/w/n.py", None, "new\n") + make_git_patch(
        "/w/d.py", None, "bye\n", None
    )
    changes = [{"operation": "add", "path": "/w/n.py"}, {"operation": "delete", "path": "/w/d.py"}]
    files = {"/w/d.py": "bye\n"}
    result = edit_of(v2(changes, patch), files)
    assert result.problems == []
    assert [c.get("kind", "text") for c in result.edit["documentChanges"]] == [
        "create",
        "text",
        "delete",
    ]
    assert apply_workspace_edit(result.edit, files) == {"/w/n.py": "new\n"}
    assert [f.summary_line() for f in result.files] == [
        "/w/n.py +1 -0 (add)",
        "/w/d.py +0 -1 (delete)",
    ]


def test_v2_delete_of_a_changed_file_is_not_applied():
    patch = make_git_patch("/w/d.py", None, "bye\n", None)
    result = edit_of(v2([{"operation": "delete", "path": "/w/d.py"}], patch), {"/w/d.py": "hi\n"})
    assert result.problems == ["pre-image of /w/d.py no longer matches the file"]
    assert result.edit["documentChanges"] == []
    assert unrendered_labels(result.edit) == ["delete /w/d.py"]


def test_move_with_and_without_text_change():
    bare = edit_of(v2([{"operation": "move", "oldPath": "/w/a", "path": "/w/b"}]), {"/w/a": "x\n"})
    (rename,) = bare.edit["documentChanges"]
    assert rename == {
        "kind": "rename",
        "oldUri": "file:///w/a",
        "newUri": "file:///w/b",
        "annotationId": "acpls.change.0",
    }
    assert labels(bare.edit) == ["move /w/a → /w/b"]
    patch = make_git_patch("/w/a", "/w/b", "x\ny\n", "x\nz\n")
    edited = edit_of(
        v2([{"operation": "move", "oldPath": "/w/a", "path": "/w/b"}], patch), {"/w/a": "x\ny\n"}
    )
    assert edited.problems == []
    assert apply_workspace_edit(edited.edit, {"/w/a": "x\ny\n"}) == {"/w/b": "x\nz\n"}
    assert edited.files == [FileSummary("/w/b", 1, 1, "move", old_path="/w/a")]
    stale = edit_of(
        v2([{"operation": "move", "oldPath": "/w/a", "path": "/w/b"}], patch), {"/w/a": "q\n"}
    )
    assert stale.problems == ["pre-image of /w/a no longer matches the file"]
    assert [c["kind"] for c in stale.edit["documentChanges"]] == ["rename"]


def test_copy_becomes_create_with_source_content_and_annotation():
    result = edit_of(
        v2([{"operation": "copy", "oldPath": "/w/a.py", "path": "/w/b.py"}]), {"/w/a.py": A_OLD}
    )
    assert apply_workspace_edit(result.edit, {"/w/a.py": A_OLD}) == {
        "/w/a.py": A_OLD,
        "/w/b.py": A_OLD,
    }
    (annotation,) = result.edit["changeAnnotations"].values()
    assert annotation["label"] == "copy /w/a.py → /w/b.py"
    assert "copy of /w/a.py" in annotation["description"]
    binary = edit_of(
        v2(
            [{"operation": "copy", "oldPath": "/w/i.png", "path": "/w/j.png", "fileType": "binary"}]
        ),
        {"/w/i.png": "\x00"},
    )
    (create,) = binary.edit["documentChanges"]
    assert create["kind"] == "create" and create["uri"] == "file:///w/j.png"
    assert (
        "content not shown"
        in binary.edit["changeAnnotations"][create["annotationId"]]["description"]
    )


def test_copy_with_patch_applies_it_to_the_source():
    patch = (
        "diff --git /w/a.py /w/b.py\nsimilarity index 80%\ncopy from /w/a.py\ncopy to /w/b.py\n"
        + make_git_patch("/w/a.py", "/w/a.py", A_OLD, A_NEW).split("\n", 1)[1]
    )
    result = edit_of(
        v2([{"operation": "copy", "oldPath": "/w/a.py", "path": "/w/b.py"}], patch),
        {"/w/a.py": A_OLD},
    )
    assert result.problems == []
    assert apply_workspace_edit(result.edit, {"/w/a.py": A_OLD})["/w/b.py"] == A_NEW


def test_binary_directory_and_symlink_changes_without_text():
    changes = [
        {"operation": "modify", "path": "/w/logo.png", "fileType": "binary"},
        {"operation": "add", "path": "/w/img.png", "fileType": "binary"},
        {"operation": "add", "path": "/w/dir", "fileType": "directory"},
        {"operation": "delete", "path": "/w/olddir", "fileType": "directory"},
        {"operation": "modify", "path": "/w/link", "fileType": "symlink"},
    ]
    result = edit_of(v2(changes), {})
    kinds = [(c["kind"], uri_to_path(c["uri"])) for c in result.edit["documentChanges"]]
    assert kinds == [("create", "/w/img.png"), ("delete", "/w/olddir")]
    assert result.edit["documentChanges"][1]["options"] == {"recursive": True}
    assert unrendered_labels(result.edit) == ["modify /w/logo.png", "add /w/dir", "modify /w/link"]
    assert result.problems == []
    assert_every_edit_needs_confirmation(result.edit)


def test_binary_patch_section_is_consistent_but_renders_no_text():
    patch = "diff --git /w/logo.png /w/logo.png\nBinary files /w/logo.png and /w/logo.png differ\n"
    result = edit_of(v2([{"operation": "modify", "path": "/w/logo.png"}], patch), {})
    assert result.problems == [] and result.edit["documentChanges"] == []
    (annotation,) = result.edit["changeAnnotations"].values()
    assert annotation["label"] == "modify /w/logo.png" and "binary" in annotation["description"]


def test_mode_only_change_is_an_annotation():
    patch = "diff --git /w/run.sh /w/run.sh\nold mode 100644\nnew mode 100755\n"
    result = edit_of(v2([{"operation": "modify", "path": "/w/run.sh"}], patch), {"/w/run.sh": ""})
    (annotation,) = result.edit["changeAnnotations"].values()
    assert annotation["description"] == "mode 100644 → 100755"


def test_unknown_operation_is_kept_as_an_annotation():
    change = {"operation": "_chmod", "path": "/w/run.sh", "mode": "0755"}
    result = edit_of(v2([change]), {})
    assert result.edit["documentChanges"] == []
    (annotation,) = result.edit["changeAnnotations"].values()
    assert annotation["label"] == "_chmod /w/run.sh"
    assert '"mode": "0755"' in annotation["description"]
    assert result.files == [FileSummary("/w/run.sh", 0, 0, "_chmod")]


def test_known_operation_without_its_paths_is_kept_raw():
    result = edit_of(
        v2([{"operation": "move", "path": "/w/b"}, {"operation": "modify", "path": "rel.py"}]), {}
    )
    assert unrendered_labels(result.edit) == ["move /w/b", "modify rel.py"]
    assert result.edit["documentChanges"] == []


def test_relative_prefixed_patch_paths_match_absolute_changes():
    hunks = A_PATCH[A_PATCH.index("@@") :]
    patch = "diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py\n" + hunks
    result = edit_of(
        v2([{"operation": "modify", "path": "/w/src/a.py"}], patch), {"/w/src/a.py": A_OLD}
    )
    assert result.problems == []
    assert apply_workspace_edit(result.edit, {"/w/src/a.py": A_OLD}) == {"/w/src/a.py": A_NEW}


def test_unsupported_or_unreadable_patch_falls_back_to_changes():
    changes = [{"operation": "modify", "path": "/w/a.py"}]
    other = {"type": "diff", "changes": changes, "patch": {"format": "_hg", "text": "x"}}
    result = edit_of(other, {"/w/a.py": A_OLD})
    assert result.problems == ["patch format '_hg' is not supported; changes shown alone"]
    assert unrendered_labels(result.edit) == ["modify /w/a.py"]
    broken = edit_of(v2(changes, "diff --git /w/a.py /w/a.py\n--- /w/a.py\n@@ -1 +1 @@\n"), {})
    assert broken.problems[0].startswith("patch could not be read (line 3:")
    assert unrendered_labels(broken.edit) == ["modify /w/a.py"]


def test_two_sections_for_one_change_use_the_first():
    result = edit_of(
        v2([{"operation": "modify", "path": "/w/a.py"}], A_PATCH + A_PATCH), {"/w/a.py": A_OLD}
    )
    assert result.problems == ["patch has more than one section for /w/a.py; first used"]
    assert apply_workspace_edit(result.edit, {"/w/a.py": A_OLD}) == {"/w/a.py": A_NEW}


def test_several_diffs_of_one_tool_call_share_one_edit_with_unique_ids():
    content = [
        {"type": "content", "content": {"type": "text", "text": "hi"}},
        v2([{"operation": "modify", "path": "/w/a.py"}], A_PATCH),
        {"type": "diff", "path": "/w/n.py", "newText": "n\n"},
        "not even an object",
    ]
    result = workspace_edit_from_content(content, {"/w/a.py": A_OLD}.get)  # type: ignore[arg-type]
    assert result is not None
    assert set(result.edit["changeAnnotations"]) == {"acpls.change.0", "acpls.change.1"}
    assert apply_workspace_edit(result.edit, {"/w/a.py": A_OLD}) == {
        "/w/a.py": A_NEW,
        "/w/n.py": "n\n",
    }
    assert workspace_edit_from_content([{"type": "terminal", "terminalId": "t"}], {}.get) is None
    assert diffs_to_workspace_edit([], {}.get).edit == {
        "documentChanges": [],
        "changeAnnotations": {},
    }


def test_summarize_counts_lines_without_reading_files():
    patch = make_git_patch("/w/a.py", "/w/a.py", "a\nb\nc\n", "a\nB\nC\nd\n")
    diff = diff_from_content(
        v2(
            [
                {"operation": "modify", "path": "/w/a.py"},
                {"operation": "modify", "path": "/w/i.png", "fileType": "binary"},
            ],
            patch,
        )
    )
    assert diff is not None
    assert summarize(diff) == [
        FileSummary("/w/a.py", 3, 2, "modify"),
        FileSummary("/w/i.png", 0, 0, "modify"),
    ]
    assert summarize(diff)[0].summary_line() == "/w/a.py +3 -2"
    v1 = diff_from_content({"type": "diff", "path": "/w/x", "oldText": "1\n", "newText": "2\n3\n"})
    assert v1 is not None and summarize(v1) == [FileSummary("/w/x", 2, 1, "modify")]


# ---------------------------------------------------------------------------------------------
# The "Diffs" sentences of the ACP v2 "Tool Calls" text and editors/protocol.md section 6


def test_diff_always_includes_structured_changes_and_optionally_patch_text():
    with_patch = diff_from_content(v2([{"operation": "modify", "path": "/w/a.py"}], A_PATCH))
    without = diff_from_content(v2([{"operation": "modify", "path": "/w/a.py"}]))
    assert with_patch is not None and without is not None
    assert with_patch.changes == without.changes and without.patch is None
    assert to_workspace_edit(with_patch, {"/w/a.py": A_OLD}.get).edit["documentChanges"]
    assert labels(to_workspace_edit(without, {"/w/a.py": A_OLD}.get).edit) == ["modify /w/a.py"]


def test_changes_is_authoritative_for_paths_and_operations():
    # The patch speaks of a file the changes do not list: it is not edited, only reported.
    extra = make_git_patch("/w/other.py", "/w/other.py", "1\n", "2\n")
    result = edit_of(
        v2([{"operation": "modify", "path": "/w/a.py"}], A_PATCH + extra),
        {"/w/a.py": A_OLD, "/w/other.py": "1\n"},
    )
    touched = {uri_to_path(c["textDocument"]["uri"]) for c in result.edit["documentChanges"]}
    assert touched == {"/w/a.py"}
    assert result.problems == ["patch section for /w/other.py is not listed in changes"]
    assert [f.path for f in result.files] == ["/w/a.py"]
    # A change the patch leaves out is still there, with the operation changes gives it.
    partial = edit_of(
        v2(
            [{"operation": "modify", "path": "/w/a.py"}, {"operation": "delete", "path": "/w/z"}],
            A_PATCH,
        ),
        {"/w/a.py": A_OLD, "/w/z": "z\n"},
    )
    assert partial.edit["documentChanges"][-1] == {
        "kind": "delete",
        "uri": "file:///w/z",
        "annotationId": "acpls.change.1",
    }


def test_changes_paths_are_absolute_relative_ones_are_not_turned_into_uris():
    result = edit_of(v2([{"operation": "add", "path": "w/rel.py"}]), {})
    assert result.edit["documentChanges"] == []
    assert unrendered_labels(result.edit) == ["add w/rel.py"]


def test_patch_must_be_consistent_with_changes_mismatch_reported():
    # changes say modify, the patch says the file is new
    new_file_patch = make_git_patch(None, "/w/a.py", None, A_NEW)
    result = edit_of(
        v2([{"operation": "modify", "path": "/w/a.py"}], new_file_patch), {"/w/a.py": A_OLD}
    )
    assert result.problems == [
        "patch section for /w/a.py is a add but changes say modify; its text is not used"
    ]
    assert result.edit["documentChanges"] == []
    assert unrendered_labels(result.edit) == ["modify /w/a.py"]
    # a move whose patch renames from another path
    rename = make_git_patch("/w/elsewhere", "/w/b", "x\n", "y\n")
    moved = edit_of(
        v2([{"operation": "move", "oldPath": "/w/a", "path": "/w/b"}], rename), {"/w/a": "x\n"}
    )
    assert moved.problems == [
        "patch section for /w/b comes from /w/elsewhere but changes say /w/a; its text is not used"
    ]
    assert [c["kind"] for c in moved.edit["documentChanges"]] == ["rename"]


def test_agents_should_provide_patch_whenever_feasible_and_it_is_used_when_given():
    result = edit_of(v2([{"operation": "modify", "path": "/w/a.py"}], A_PATCH), {"/w/a.py": A_OLD})
    (text,) = result.edit["documentChanges"]
    assert text["edits"][0]["newText"] == "    return 2\n"


@pytest.mark.parametrize("patch", ["omitted", None])
def test_clients_must_handle_diffs_where_patch_is_omitted_or_null(patch: str | None):
    changes = [
        {"operation": "modify", "path": "/w/a.py", "fileType": "text"},
        {"operation": "add", "path": "/w/n.py"},
        {"operation": "delete", "path": "/w/d.py"},
        {"operation": "move", "oldPath": "/w/m1", "path": "/w/m2"},
    ]
    item = v2(changes) if patch == "omitted" else v2(changes, patch=None) | {"patch": None}
    result = edit_of(item, {"/w/a.py": A_OLD, "/w/d.py": "d\n", "/w/m1": "m\n"})
    assert result.problems == []
    assert [c.get("kind") for c in result.edit["documentChanges"]] == ["create", "delete", "rename"]
    assert unrendered_labels(result.edit) == ["modify /w/a.py"]
    assert [f.path for f in result.files] == ["/w/a.py", "/w/n.py", "/w/d.py", "/w/m2"]
    assert_every_edit_needs_confirmation(result.edit)


def test_patch_provides_text_for_some_or_all_changes():
    changes = [
        {"operation": "modify", "path": "/w/a.py"},
        {"operation": "modify", "path": "/w/logo.png", "fileType": "binary"},
    ]
    result = edit_of(v2(changes, A_PATCH), {"/w/a.py": A_OLD})
    assert result.problems == []
    assert [c["textDocument"]["uri"] for c in result.edit["documentChanges"]] == ["file:///w/a.py"]
    assert unrendered_labels(result.edit) == ["modify /w/logo.png"]


def test_omit_patch_for_binary_update_or_symlink_target_change_still_shown():
    changes = [
        {
            "operation": "modify",
            "path": "/w/assets/logo.png",
            "fileType": "binary",
            "mimeType": "image/png",
        },
        {"operation": "modify", "path": "/w/current", "fileType": "symlink"},
    ]
    result = edit_of(v2(changes), {})
    assert unrendered_labels(result.edit) == ["modify /w/assets/logo.png", "modify /w/current"]


def test_git_patch_paths_are_absolute_without_a_b_prefixes():
    assert A_PATCH.startswith("diff --git /w/a.py /w/a.py\n--- /w/a.py\n+++ /w/a.py\n")
    result = edit_of(v2([{"operation": "modify", "path": "/w/a.py"}], A_PATCH), {"/w/a.py": A_OLD})
    assert result.problems == []


def test_stale_pre_image_is_reported_not_applied_blindly():
    current = A_OLD.replace("import os", "import sys")
    result = edit_of(
        v2([{"operation": "modify", "path": "/w/a.py"}], A_PATCH), {"/w/a.py": current}
    )
    assert result.problems == ["pre-image of /w/a.py no longer matches the file"]
    assert result.edit["documentChanges"] == []
    assert result.files == [FileSummary("/w/a.py", 1, 1, "modify")]
    gone = edit_of(v2([{"operation": "modify", "path": "/w/a.py"}], A_PATCH), {})
    assert gone.problems == ["pre-image of /w/a.py no longer matches the file"]


def test_every_edit_carries_a_change_annotation_needing_confirmation():
    patch = A_PATCH + make_git_patch(None, "/w/n.py", None, "n\n")
    changes = [
        {"operation": "modify", "path": "/w/a.py"},
        {"operation": "add", "path": "/w/n.py"},
        {"operation": "delete", "path": "/w/d"},
        {"operation": "move", "oldPath": "/w/m", "path": "/w/mm"},
        {"operation": "copy", "oldPath": "/w/a.py", "path": "/w/c.py"},
        {"operation": "_future", "path": "/w/f"},
    ]
    result = edit_of(v2(changes, patch), {"/w/a.py": A_OLD, "/w/d": "", "/w/m": ""})
    # text edits of a, n and c; create n, delete d, rename m, create c
    assert len(all_annotation_ids(result.edit)) == 7
    assert_every_edit_needs_confirmation(result.edit)
    for change in changes:
        assert any(change["path"] in label for label in labels(result.edit))


def test_nothing_is_silently_dropped():
    changes = [
        {"operation": "modify", "path": "/w/a.py"},
        {"operation": "modify", "path": "/w/b.bin", "fileType": "binary"},
        {"operation": "add", "path": "/w/dir", "fileType": "directory"},
        {"operation": "copy", "oldPath": "/w/dir", "path": "/w/dir2", "fileType": "directory"},
        {"operation": "_future", "oldPath": "/w/x"},
        "garbage",
    ]
    result = edit_of(v2(changes), {})  # type: ignore[list-item]
    assert len(result.files) == len(changes)
    assert len(result.edit["changeAnnotations"]) == len(changes)
    assert result.files[-1].summary_line() == "(no path) +0 -0 (unknown)"


# ---------------------------------------------------------------------------------------------
# Round trip: for any texts, the edit applied to the pre-image gives the post-image

line = st.text(alphabet=st.sampled_from(["x", "y", " ", "é", "😀"]), max_size=3)
ending = st.sampled_from(["\n", "\n", "\r\n"])
text_strategy = st.builds(
    lambda lines, tail: "".join(body + end for body, end in lines) + tail,
    st.lists(st.tuples(line, ending), max_size=8),
    st.sampled_from(["", "tail"]),
)


@settings(max_examples=300, deadline=None)
@given(text_strategy, text_strategy)
def test_v2_patch_edit_round_trip(old: str, new: str):
    patch = make_git_patch("/w/f.txt", "/w/f.txt", old, new)
    result = edit_of(
        v2([{"operation": "modify", "path": "/w/f.txt"}], patch or None), {"/w/f.txt": old}
    )
    after = apply_workspace_edit(result.edit, {"/w/f.txt": old})
    assert after == {"/w/f.txt": new} or (not patch and after == {"/w/f.txt": old})


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.none(), text_strategy), text_strategy)
def test_v1_edit_round_trip(old: str | None, new: str):
    files = {} if old is None else {"/w/f.txt": old}
    result = edit_of({"type": "diff", "path": "/w/f.txt", "oldText": old, "newText": new}, files)
    assert result.problems == []
    assert apply_workspace_edit(result.edit, files) == {"/w/f.txt": new}


def test_acp_diff_is_a_plain_value():
    diff = AcpDiff(changes=(DiffChange("modify", "/w/a"),))
    assert diff == AcpDiff(changes=(DiffChange("modify", "/w/a", raw={"ignored": True}),))
