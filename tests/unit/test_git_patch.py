"""git `--patch` parsing, applying and writing (acpls.translate.git_patch)."""

from __future__ import annotations

import difflib
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acpls.translate.git_patch import (
    FilePatch,
    Hunk,
    HunkLine,
    PatchApplyError,
    PatchError,
    apply_file_patch,
    make_git_patch,
    parse_git_patch,
    pre_image_matches,
    split_file_lines,
)

SPEC_EXAMPLE = (
    "diff --git /home/user/project/src/config.json /home/user/project/src/config.json\n"
    "--- /home/user/project/src/config.json\n"
    "+++ /home/user/project/src/config.json\n"
    "@@ -1,3 +1,3 @@\n"
    " {\n"
    '-  "debug": false\n'
    '+  "debug": true\n'
    " }\n"
)


def only(patches: list[FilePatch]) -> FilePatch:
    assert len(patches) == 1
    return patches[0]


# ---------------------------------------------------------------------------------------------
# Parsing: the shapes git writes


def test_spec_example_parses_with_absolute_paths_and_applies():
    fp = only(parse_git_patch(SPEC_EXAMPLE))
    assert fp.old_path == fp.new_path == "/home/user/project/src/config.json"
    assert not (fp.is_new or fp.is_deleted or fp.is_binary or fp.is_rename or fp.is_copy)
    assert fp.hunks == (
        Hunk(
            1,
            3,
            1,
            3,
            (
                HunkLine(" ", "{\n"),
                HunkLine("-", '  "debug": false\n'),
                HunkLine("+", '  "debug": true\n'),
                HunkLine(" ", "}\n"),
            ),
        ),
    )
    assert apply_file_patch('{\n  "debug": false\n}\n', fp) == '{\n  "debug": true\n}\n'
    assert (fp.added, fp.removed) == (1, 1)


def test_a_b_prefixes_are_removed_from_relative_paths():
    text = (
        "diff --git a/src/x.py b/src/x.py\n"
        "index 83db48f..bf269f4 100644\n"
        "--- a/src/x.py\n"
        "+++ b/src/x.py\n"
        "@@ -1 +1 @@\n"
        "-a\n"
        "+b\n"
    )
    fp = only(parse_git_patch(text))
    assert (fp.old_path, fp.new_path) == ("src/x.py", "src/x.py")
    assert fp.hunks[0].old_count == 1 and fp.hunks[0].new_count == 1  # counts left out mean 1


def test_several_sections_and_several_hunks():
    text = (
        "diff --git /w/a.txt /w/a.txt\n--- /w/a.txt\n+++ /w/a.txt\n"
        "@@ -1,2 +1,2 @@\n-1\n+one\n 2\n"
        "@@ -9,2 +9,3 @@ def section_heading():\n 9\n-10\n+ten\n+eleven\n"
        "diff --git /w/b.txt /w/b.txt\n--- /w/b.txt\n+++ /w/b.txt\n"
        "@@ -1 +1 @@\n-x\n+y\n"
    )
    first, second = parse_git_patch(text)
    assert first.path == "/w/a.txt" and len(first.hunks) == 2
    assert (first.hunks[1].old_start, first.hunks[1].new_count) == (9, 3)
    assert second.path == "/w/b.txt"
    old = "".join(f"{n}\n" for n in range(1, 11))
    assert apply_file_patch(old, first) == "one\n2\n3\n4\n5\n6\n7\n8\n9\nten\neleven\n"


def test_new_file_mode_and_dev_null():
    text = (
        "diff --git /w/new.py /w/new.py\nnew file mode 100755\nindex 0000000..e69de29\n"
        "--- /dev/null\n+++ /w/new.py\n@@ -0,0 +1,2 @@\n+a\n+b\n"
    )
    fp = only(parse_git_patch(text))
    assert fp.is_new and fp.old_path is None and fp.new_path == "/w/new.py"
    assert fp.new_mode == "100755"
    assert apply_file_patch("", fp) == "a\nb\n"
    assert not pre_image_matches("something\n", fp)


def test_empty_new_file_has_no_hunks():
    text = "diff --git a/empty b/empty\nnew file mode 100644\nindex 0000000..e69de29\n"
    fp = only(parse_git_patch(text))
    assert fp.is_new and fp.new_path == "empty" and fp.hunks == ()
    assert apply_file_patch("", fp) == ""


def test_deleted_file_mode():
    text = (
        "diff --git /w/old.py /w/old.py\ndeleted file mode 100644\n"
        "--- /w/old.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n"
    )
    fp = only(parse_git_patch(text))
    assert fp.is_deleted and fp.new_path is None and fp.old_path == "/w/old.py"
    assert fp.old_mode == "100644" and fp.path == "/w/old.py"
    assert apply_file_patch("a\nb\n", fp) == ""
    assert not pre_image_matches("a\nb\nc\n", fp)  # a deletion must remove everything


def test_mode_change_only():
    text = "diff --git /w/run.sh /w/run.sh\nold mode 100644\nnew mode 100755\n"
    fp = only(parse_git_patch(text))
    assert (fp.old_mode, fp.new_mode) == ("100644", "100755")
    assert fp.hunks == () and fp.path == "/w/run.sh"
    assert apply_file_patch("echo\n", fp) == "echo\n"


def test_rename_with_similarity_and_hunk():
    text = (
        "diff --git /w/a b.txt /w/c d.txt\n"
        "similarity index 90%\n"
        "rename from /w/a b.txt\n"
        "rename to /w/c d.txt\n"
        "index 1..2 100644\n"
        "--- /w/a b.txt\t\n"
        "+++ /w/c d.txt\t\n"
        "@@ -1,2 +1,2 @@\n x\n-y\n+z\n"
    )
    fp = only(parse_git_patch(text))
    assert fp.is_rename and not fp.is_copy
    assert (fp.old_path, fp.new_path) == ("/w/a b.txt", "/w/c d.txt")
    assert apply_file_patch("x\ny\n", fp) == "x\nz\n"


def test_pure_rename_in_git_prefixed_form():
    text = (
        "diff --git a/old name.txt b/new name.txt\n"
        "similarity index 100%\nrename from old name.txt\nrename to new name.txt\n"
    )
    fp = only(parse_git_patch(text))
    assert fp.is_rename and (fp.old_path, fp.new_path) == ("old name.txt", "new name.txt")
    assert fp.hunks == ()


def test_copy_from_and_to():
    text = "diff --git /w/a.py /w/b.py\nsimilarity index 100%\ncopy from /w/a.py\ncopy to /w/b.py\n"
    fp = only(parse_git_patch(text))
    assert fp.is_copy and not fp.is_rename
    assert (fp.old_path, fp.new_path) == ("/w/a.py", "/w/b.py")


def test_binary_files_differ_marker():
    text = (
        "diff --git /w/logo.png /w/logo.png\nindex 1..2 100644\n"
        "Binary files /w/logo.png and /w/logo.png differ\n"
        "diff --git /w/x.txt /w/x.txt\n--- /w/x.txt\n+++ /w/x.txt\n@@ -1 +1 @@\n-a\n+b\n"
    )
    binary, text_patch = parse_git_patch(text)
    assert binary.is_binary and binary.hunks == () and binary.path == "/w/logo.png"
    assert not text_patch.is_binary and len(text_patch.hunks) == 1
    with pytest.raises(PatchApplyError):
        apply_file_patch("", binary)
    assert not pre_image_matches("", binary)


def test_git_binary_patch_payload_is_skipped():
    text = (
        "diff --git a/img.bin b/img.bin\nnew file mode 100644\nindex 0000000..1111111\n"
        "GIT binary patch\nliteral 12\nTcmZ?wbc{q&cL@MR2Lgxy\n\nliteral 0\nHcmV?d00001\n\n"
        "diff --git a/t.txt b/t.txt\n--- a/t.txt\n+++ b/t.txt\n@@ -1 +1 @@\n-a\n+b\n"
    )
    binary, text_patch = parse_git_patch(text)
    assert binary.is_binary and binary.is_new and binary.hunks == ()
    assert text_patch.path == "t.txt"


def test_no_newline_marker_applies_to_the_line_before_on_each_side():
    text = (
        "diff --git /w/f /w/f\n--- /w/f\n+++ /w/f\n"
        "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n"
    )
    fp = only(parse_git_patch(text))
    assert fp.hunks[0].lines == (
        HunkLine(" ", "a\n"),
        HunkLine("-", "b", no_newline=True),
        HunkLine("+", "c\n"),
    )
    assert apply_file_patch("a\nb", fp) == "a\nc\n"
    assert not pre_image_matches("a\nb\n", fp)


def test_no_newline_marker_on_both_sides_and_on_context():
    both = (
        "diff --git /w/f /w/f\n--- /w/f\n+++ /w/f\n@@ -1 +1 @@\n-old\n"
        "\\ No newline at end of file\n+new\n\\ No newline at end of file\n"
    )
    assert apply_file_patch("old", only(parse_git_patch(both))) == "new"
    context = (
        "diff --git /w/f /w/f\n--- /w/f\n+++ /w/f\n@@ -1,2 +1,2 @@\n-a\n+A\n end\n"
        "\\ No newline at end of file\n"
    )
    fp = only(parse_git_patch(context))
    assert fp.hunks[0].lines[-1] == HunkLine(" ", "end", no_newline=True)
    assert apply_file_patch("a\nend", fp) == "A\nend"


def test_crlf_content_is_kept_exactly():
    text = "diff --git /w/f /w/f\n--- /w/f\n+++ /w/f\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n"
    fp = only(parse_git_patch(text))
    assert fp.hunks[0].lines[0] == HunkLine(" ", "a\r\n")
    assert apply_file_patch("a\r\nb\r\n", fp) == "a\r\nc\r\n"
    assert not pre_image_matches("a\nb\n", fp)  # LF file: the CRLF pre-image does not match


def test_crlf_last_line_without_newline_keeps_its_cr():
    text = "diff --git /w/f /w/f\n--- /w/f\n+++ /w/f\n@@ -1 +1 @@\n-a\r\n+a\r\n\\ No newline\n"
    fp = only(parse_git_patch(text))
    assert fp.hunks[0].lines[1] == HunkLine("+", "a\r", no_newline=True)
    assert apply_file_patch("a\r\n", fp) == "a\r"


def test_quoted_paths_with_c_escapes():
    text = (
        'diff --git "a/sp ace\\t\\"q\\".txt" "b/sp ace\\t\\"q\\".txt"\n'
        'new file mode 100644\n--- /dev/null\n+++ "b/sp ace\\t\\"q\\".txt"\n'
        "@@ -0,0 +1 @@\n+x\n"
        'diff --git "/w/caf\\303\\251.txt" "/w/caf\\303\\251.txt"\n'
        "deleted file mode 100644\n"
    )
    created, deleted = parse_git_patch(text)
    assert created.new_path == 'sp ace\t"q".txt'
    assert deleted.old_path == "/w/café.txt" and deleted.is_deleted


def test_unquoted_paths_with_spaces_in_git_line():
    text = "diff --git /w/a b/c d /w/a b/c d\nold mode 100644\nnew mode 100755\n"
    fp = only(parse_git_patch(text))
    assert fp.path == "/w/a b/c d"


def test_plain_unified_diff_without_git_header():
    text = "--- /w/a.txt\t2024-01-01\n+++ /w/a.txt\t2024-01-02\n@@ -1 +1 @@\n-a\n+b\n"
    fp = only(parse_git_patch(text))
    assert fp.path == "/w/a.txt" and apply_file_patch("a\n", fp) == "b\n"


def test_preamble_signature_trailing_blank_lines_and_missing_final_newline():
    text = (
        "From 123 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] fix\n---\n x | 2 +-\n\n"
        "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n-- \n2.39.5\n\n"
    )
    assert only(parse_git_patch(text)).path == "x"
    trailing = SPEC_EXAMPLE + "\n\n"
    assert only(parse_git_patch(trailing)).hunks == only(parse_git_patch(SPEC_EXAMPLE)).hunks
    unterminated = SPEC_EXAMPLE.removesuffix("\n")
    assert only(parse_git_patch(unterminated)).hunks == only(parse_git_patch(SPEC_EXAMPLE)).hunks


def test_empty_context_line_without_its_space_is_accepted():
    text = "diff --git /w/f /w/f\n--- /w/f\n+++ /w/f\n@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n"
    fp = only(parse_git_patch(text))
    assert apply_file_patch("a\n\nb\n", fp) == "a\n\nc\n"


def test_empty_patch_text_has_no_sections():
    assert parse_git_patch("") == []


# ---------------------------------------------------------------------------------------------
# Malformed input


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        # header says 2 old lines, hunk has 1, then the patch ends
        ("diff --git /a /a\n--- /a\n+++ /a\n@@ -1,2 +1 @@\n-x\n", 6, "ends inside the hunk"),
        # header says 1+1, hunk has an extra added line
        ("diff --git /a /a\n--- /a\n+++ /a\n@@ -1 +1 @@\n-x\n+y\n+z\n", 7, "more lines"),
        # garbage inside a hunk
        ("diff --git /a /a\n--- /a\n+++ /a\n@@ -1,2 +1,2 @@\n x\n?y\n", 6, "unexpected line"),
        # bad hunk header
        ("diff --git /a /a\n--- /a\n+++ /a\n@@ -x +1 @@\n", 4, "bad hunk header"),
        # garbage between the header lines
        ("diff --git /a /a\nwhat is this\n", 2, "unexpected line in patch header"),
        # --- without +++
        ("diff --git /a /a\n--- /a\n@@ -1 +1 @@\n", 3, "'+++'"),
        # no-newline marker with no line before it
        ("diff --git /a /a\n--- /a\n+++ /a\n@@ -0,0 +0,0 @@\n\\ No newline\n", 5, "without"),
        # a line after a no-newline line on the same side
        (
            "diff --git /a /a\n--- /a\n+++ /a\n@@ -1,2 +1 @@\n-x\n\\ No newline\n-y\n+z\n",
            7,
            "more lines",
        ),
        # unterminated quoted path
        ('diff --git "/a /a\n', 1, "unterminated"),
        # bad C escape in a quoted path
        ('diff --git "/\\q" "/\\q"\n', 1, "bad escape"),
        # combined diff
        ("diff --cc file\n", 1, "combined"),
        # stuff after a complete hunk
        ("diff --git /a /a\n--- /a\n+++ /a\n@@ -1 +1 @@\n-x\n+y\nnonsense\n", 7, "unexpected"),
    ],
)
def test_malformed_patch_raises_with_line_number(text: str, line: int, words: str):
    with pytest.raises(PatchError) as caught:
        parse_git_patch(text)
    assert caught.value.line == line
    assert words in str(caught.value)
    assert str(caught.value).startswith(f"line {line}:")


# ---------------------------------------------------------------------------------------------
# Applying


def test_apply_refuses_a_hunk_that_does_not_match():
    fp = only(parse_git_patch(SPEC_EXAMPLE))
    with pytest.raises(PatchApplyError):
        apply_file_patch('{\n  "debug": true\n}\n', fp)
    assert not pre_image_matches('{\n  "debug": true\n}\n', fp)
    assert pre_image_matches('{\n  "debug": false\n}\n', fp)


def test_apply_does_not_search_for_a_shifted_hunk():
    fp = only(parse_git_patch(SPEC_EXAMPLE))
    assert not pre_image_matches('// added\n{\n  "debug": false\n}\n', fp)


def test_apply_refuses_out_of_order_hunks():
    text = "diff --git /f /f\n--- /f\n+++ /f\n@@ -3 +3 @@\n-c\n+C\n@@ -1 +1 @@\n-a\n+A\n"
    with pytest.raises(PatchApplyError, match="precedes"):
        apply_file_patch("a\nb\nc\n", only(parse_git_patch(text)))


def test_insertion_hunk_with_zero_old_lines_goes_after_the_named_line():
    text = "diff --git /f /f\n--- /f\n+++ /f\n@@ -2,0 +3,1 @@\n+new\n"
    assert apply_file_patch("a\nb\nc\n", only(parse_git_patch(text))) == "a\nb\nnew\nc\n"


# ---------------------------------------------------------------------------------------------
# Writing


def test_make_git_patch_is_in_acp_form():
    patch = make_git_patch("/w/x.py", "/w/x.py", "a\nb\n", "a\nc\n")
    assert patch.startswith(
        "diff --git /w/x.py /w/x.py\n--- /w/x.py\n+++ /w/x.py\n@@ -1,2 +1,2 @@\n"
    )
    assert "a/" not in patch and "b/" not in patch


def test_make_git_patch_new_deleted_renamed_and_unchanged():
    new = make_git_patch(None, "/w/n.txt", None, "x\n")
    assert "new file mode" in new and "--- /dev/null\n+++ /w/n.txt\n@@ -0,0 +1 @@\n+x\n" in new
    assert apply_file_patch("", only(parse_git_patch(new))) == "x\n"
    deleted = make_git_patch("/w/d.txt", None, "x\ny\n", None)
    fp = only(parse_git_patch(deleted))
    assert fp.is_deleted and apply_file_patch("x\ny\n", fp) == ""
    renamed = only(parse_git_patch(make_git_patch("/w/a b", "/w/c d", "1\n", "1\n")))
    assert renamed.is_rename and (renamed.old_path, renamed.new_path) == ("/w/a b", "/w/c d")
    assert make_git_patch("/w/s", "/w/s", "same\n", "same\n") == ""
    empty_new = only(parse_git_patch(make_git_patch(None, "/w/e", None, "")))
    assert empty_new.is_new and empty_new.hunks == ()


def test_make_git_patch_quotes_awkward_paths():
    path = '/w/tab\there "q" é.txt'
    fp = only(parse_git_patch(make_git_patch(path, path, "a\n", "b\n")))
    assert fp.old_path == fp.new_path == path


# ---------------------------------------------------------------------------------------------
# Property tests: patches made by difflib and by git parse back and apply

line_text = st.text(
    alphabet=st.sampled_from(["a", "b", "c", " ", "\t", "é", "€", "😀", "\\", '"', "+", "-", "@"]),
    max_size=6,
)
line_ending = st.sampled_from(["\n", "\n", "\n", "\r\n"])


@st.composite
def file_texts(draw: st.DrawFn) -> str:
    lines = draw(st.lists(st.tuples(line_text, line_ending), max_size=12))
    text = "".join(content + ending for content, ending in lines)
    if text and draw(st.booleans()):
        text = text.removesuffix("\n")  # no final newline (a CRLF file keeps its `\r`)
    return text


@st.composite
def related_texts(draw: st.DrawFn) -> tuple[str, str]:
    """An old text and a new text sharing most lines, so hunks have context."""
    old = draw(file_texts())
    lines = split_file_lines(old)
    edited: list[str] = []
    for line in lines:
        action = draw(st.sampled_from(["keep", "keep", "keep", "drop", "change", "insert"]))
        if action == "keep":
            edited.append(line)
        elif action == "change":
            edited.append(draw(line_text) + draw(line_ending))
        elif action == "insert":
            edited.extend([draw(line_text) + draw(line_ending), line])
    if draw(st.booleans()):
        edited.append(draw(file_texts()))
    return old, "".join(edited)


def difflib_git_patch(path: str, old: str, new: str) -> str:
    """A git section around difflib.unified_diff's hunks, with git's no-newline markers."""
    body: list[str] = []
    in_hunks = False
    for line in difflib.unified_diff(
        split_file_lines(old), split_file_lines(new), fromfile=path, tofile=path
    ):
        body.append(line)
        in_hunks = in_hunks or line.startswith("@@ ")
        if in_hunks and not line.endswith("\n"):
            body.append("\n\\ No newline at end of file\n")
    if not body:
        return ""
    return f"diff --git {path} {path}\n" + "".join(body)


def plus_minus_counts(patch: str) -> tuple[int, int]:
    # Everything after the first hunk header is hunk text: a removed "-- " line reads "--- ".
    lines = patch[patch.index("\n@@ ") :].split("\n")
    return sum(line.startswith("+") for line in lines), sum(line.startswith("-") for line in lines)


@settings(max_examples=200, deadline=None)
@given(related_texts())
def test_difflib_patches_parse_back_and_apply(texts: tuple[str, str]):
    old, new = texts
    patch = difflib_git_patch("/w/file.txt", old, new)
    sections = parse_git_patch(patch)
    if old == new:
        assert sections == []
        return
    fp = only(sections)
    assert apply_file_patch(old, fp) == new
    assert (fp.added, fp.removed) == plus_minus_counts(patch)


@settings(max_examples=200, deadline=None)
@given(related_texts())
def test_make_git_patch_round_trips(texts: tuple[str, str]):
    old, new = texts
    patch = make_git_patch("/w/a file.txt", "/w/a file.txt", old, new)
    if old == new:
        assert patch == ""
        return
    fp = only(parse_git_patch(patch))
    assert fp.path == "/w/a file.txt"
    assert apply_file_patch(old, fp) == new
    assert (fp.added, fp.removed) == plus_minus_counts(patch)


def git_diff_no_index(work: Path, old: str, new: str) -> str:
    (work / "old.txt").write_bytes(old.encode())
    (work / "new.txt").write_bytes(new.encode())
    done = subprocess.run(
        [
            "git",
            "-c",
            "core.quotepath=false",
            "diff",
            "--no-index",
            "--no-color",
            "--no-ext-diff",
            "--text",
            "old.txt",
            "new.txt",
        ],
        cwd=work,
        capture_output=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.stdout.decode()


def git_numstat(work: Path) -> tuple[int, int]:
    done = subprocess.run(
        ["git", "diff", "--no-index", "--numstat", "--text", "old.txt", "new.txt"],
        cwd=work,
        capture_output=True,
        check=False,
    )
    added, removed = done.stdout.decode().split()[:2]
    return int(added), int(removed)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(texts=related_texts())
def test_git_diff_no_index_patches_parse_back_and_apply(tmp_path: Path, texts: tuple[str, str]):
    old, new = texts
    patch = git_diff_no_index(tmp_path, old, new)
    if old == new:
        assert parse_git_patch(patch) == []
        return
    fp = only(parse_git_patch(patch))
    assert (fp.old_path, fp.new_path) == ("old.txt", "new.txt")
    assert apply_file_patch(old, fp) == new
    assert (fp.added, fp.removed) == git_numstat(tmp_path)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_rename_copy_mode_and_binary_sections(tmp_path: Path):
    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=tmp_path,
            capture_output=True,
            check=True,
        )
        return done.stdout.decode()

    git("init", "-q")
    (tmp_path / "keep me.txt").write_text("".join(f"line {n}\n" for n in range(20)))
    (tmp_path / "gone.txt").write_text("bye\n")
    (tmp_path / "logo.bin").write_bytes(b"\x00\x01\x02")
    (tmp_path / "run.sh").write_text("echo\n")
    git("add", ".")
    git("commit", "-q", "-m", "base")
    (tmp_path / "keep me.txt").rename(tmp_path / "kept now.txt")
    with (tmp_path / "kept now.txt").open("a") as handle:
        handle.write("one more\n")
    (tmp_path / "gone.txt").unlink()
    (tmp_path / "logo.bin").write_bytes(b"\x00\x03")
    (tmp_path / "run.sh").chmod(0o755)
    (tmp_path / "new é.txt").write_text("hello\n")
    git("add", "-A")
    patch = git("diff", "--cached", "-M", "-C", "--find-copies-harder")
    by_path = {fp.path: fp for fp in parse_git_patch(patch)}
    renamed = by_path["kept now.txt"]
    assert renamed.is_rename and renamed.old_path == "keep me.txt" and renamed.added == 1
    assert by_path["gone.txt"].is_deleted
    assert by_path["logo.bin"].is_binary and by_path["logo.bin"].hunks == ()
    assert (by_path["run.sh"].old_mode, by_path["run.sh"].new_mode) == ("100644", "100755")
    assert by_path["new é.txt"].is_new
    old = "".join(f"line {n}\n" for n in range(20))
    assert apply_file_patch(old, renamed) == old + "one more\n"
    binary = git("diff", "--cached", "--binary", "--", "logo.bin")
    assert only(parse_git_patch(binary)).is_binary


def test_make_git_patch_groups_nearby_changes_into_one_hunk():
    old = "".join(f"{n}\n" for n in range(40))
    near = old.replace("10\n", "ten\n").replace("15\n", "fifteen\n")
    (near_fp,) = parse_git_patch(make_git_patch("/f", "/f", old, near))
    assert [(h.old_start, h.old_count) for h in near_fp.hunks] == [(8, 12)]
    far = old.replace("10\n", "ten\n").replace("30\n", "thirty\n")
    (far_fp,) = parse_git_patch(make_git_patch("/f", "/f", old, far))
    assert [(h.old_start, h.old_count) for h in far_fp.hunks] == [(8, 7), (28, 7)]
    assert apply_file_patch(old, far_fp) == far
