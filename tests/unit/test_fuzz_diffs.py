"""The diff model (translate/diffs.py) against a reference model: a dict of file texts.

An agent proposes diffs (v1 `{path, oldText, newText}` and v2 `{changes, patch}` with a git patch)
that start from the file's current text or from a stale one; the user edits files in between; an
accepted edit is applied. Whatever the sequence, the WorkspaceEdit of a fresh diff applied to the
current text gives exactly the agent's new text, a stale diff yields no edit for its file and a
problem naming it, and every edit asks for confirmation.
"""

from __future__ import annotations

from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from acpls.translate.diffs import workspace_edit_from_content
from acpls.translate.git_patch import make_git_patch
from acpls.translate.uris import path_to_uri

PATHS = ("/ws/a.py", "/ws/b.txt", "/ws/new.py")
LINES = st.sampled_from(["x = 1", "y = 2", "", "é", "🦀 crab", "  indented", "x = 1"])
TEXTS = st.lists(LINES, max_size=6).flatmap(
    lambda lines: st.sampled_from(["\n", "\r\n"]).map(
        lambda eol: "".join(line + eol for line in lines)
    )
)


def offset(text: str, position: dict[str, int]) -> int:
    """An LSP position (0-based line, UTF-16 column) as an index into `text`."""
    index = 0
    for _ in range(position["line"]):
        newline = text.find("\n", index)
        assert newline >= 0, "edit addresses a line past the end"
        index = newline + 1
    units = 0
    while units < position["character"]:
        units += 2 if ord(text[index]) > 0xFFFF else 1
        index += 1
    assert units == position["character"], "a column in the middle of a surrogate pair"
    return index


def apply_edits(text: str, edits: list[dict[str, Any]]) -> str:
    """LSP TextEdits (non-overlapping, positions in the original text) applied to `text`."""
    spans = sorted(
        ((offset(text, e["range"]["start"]), offset(text, e["range"]["end"]), e) for e in edits),
        key=lambda span: span[0],
    )
    out, last = [], 0
    for start, end, edit in spans:
        assert start >= last, "overlapping edits"
        out.append(text[last:start])
        out.append(edit["newText"])
        last = end
    out.append(text[last:])
    return "".join(out)


def _count(text: str, needle: str) -> int:
    """Occurrences of a non-empty `needle`, overlapping ones included (empty: everywhere)."""
    if not needle:
        return len(text) + 1
    return sum(text.startswith(needle, i) for i in range(len(text)))


class DiffMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.files: dict[str, str] = {"/ws/a.py": "x = 1\n", "/ws/b.txt": "hello\r\n"}

    def read(self, path: str) -> str | None:
        return self.files.get(path)

    def check(
        self, item: dict[str, Any], path: str, new_text: str, fresh: bool, accept: bool
    ) -> None:
        result = workspace_edit_from_content([item], self.read)
        assert result is not None
        edit = result.edit
        uri = path_to_uri(path)
        text_edits = [
            e
            for change in edit["documentChanges"]
            if "textDocument" in change and change["textDocument"]["uri"] == uri
            for e in change["edits"]
        ]
        for change in edit["documentChanges"]:
            for e in change.get("edits", [change]):
                annotation = e.get("annotationId")
                assert annotation in edit["changeAnnotations"]
                assert edit["changeAnnotations"][annotation]["needsConfirmation"] is True
        if not fresh:
            current = self.files.get(path)
            old = item.get("oldText")
            if text_edits and current is not None and isinstance(old, str):
                # A stale whole text can still be a fragment found once in the file (acpls cannot
                # tell the two apart): then the edit is exactly that one replacement. In a file
                # with CRLF at every line end, LF texts are read with CRLF line ends first.
                if _count(current, old) != 1 or _count(current, new_text) != 0:
                    assert "\r" not in old + new_text
                    assert current.count("\r\n") == current.count("\n") > 0
                    old, new_text = old.replace("\n", "\r\n"), new_text.replace("\n", "\r\n")
                    if current == old:
                        assert apply_edits(current, text_edits) == new_text
                        return
                assert _count(current, old) == 1 and _count(current, new_text) == 0
                assert apply_edits(current, text_edits) == current.replace(old, new_text, 1)
                return
            assert text_edits == []
            if (
                isinstance(old, str)
                and old == new_text
                and current is not None
                and _count(current, old) == 1
            ):
                # A diff that changes nothing, whose text is once in the file: placed, nothing to edit.
                assert not result.problems, result.problems
                return
            assert any(path in problem for problem in result.problems), result.problems
            return
        assert not result.problems, result.problems
        creates = [c for c in edit["documentChanges"] if c.get("kind") == "create"]
        current = self.files.get(path)
        if current is None:
            assert [c["uri"] for c in creates] == [uri]
            current = ""
        assert apply_edits(current, text_edits) == new_text
        if accept:
            self.files[path] = new_text

    @rule(
        path=st.sampled_from(PATHS),
        new_text=TEXTS,
        stale=st.booleans(),
        stale_text=TEXTS,
        accept=st.booleans(),
    )
    def propose_v1(
        self, path: str, new_text: str, stale: bool, stale_text: str, accept: bool
    ) -> None:
        current = self.files.get(path)
        old = stale_text if stale else current
        item = {"type": "diff", "path": path, "oldText": old, "newText": new_text}
        if old is None:
            item.pop("oldText")
        # A new-file diff is fresh only when the file is not there (or empty); a modify diff only
        # when its oldText is the current text, or is "" for a file not there (a new file, as
        # Qwen Code sends it).
        fresh = (
            (not current) if old is None else (old == current or (old == "" and current is None))
        )
        self.check(item, path, new_text, fresh, accept)

    @precondition(lambda self: bool(self.files))
    @rule(data=st.data(), new_text=TEXTS, stale=st.booleans(), accept=st.booleans())
    def propose_v2_modify(self, data: Any, new_text: str, stale: bool, accept: bool) -> None:
        path = data.draw(st.sampled_from(sorted(self.files)))
        current = self.files[path]
        old = current + "stale line\n" if stale else current
        if old == new_text:
            return  # an empty patch: nothing to show
        item = {
            "type": "diff",
            "changes": [{"operation": "modify", "path": path}],
            "patch": {"format": "git_patch", "text": make_git_patch(path, path, old, new_text)},
        }
        self.check(item, path, new_text, not stale, accept)

    @rule(path=st.sampled_from(PATHS), text=st.one_of(st.none(), TEXTS))
    def user_edits(self, path: str, text: str | None) -> None:
        if text is None:
            self.files.pop(path, None)
        else:
            self.files[path] = text


DiffMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=25, deadline=None)
TestDiffModel = DiffMachine.TestCase


def test_a_fragment_that_changes_nothing_is_placed_without_an_edit_or_a_problem() -> None:
    """The machine's counterexample of 2026-12-02: a stale v1 fragment whose old and new text are
    the same line of the file changes nothing, so it needs neither an edit nor a warning."""
    files = {"/ws/a.py": "x = 1\ny = 2\n"}
    item = {"type": "diff", "path": "/ws/a.py", "oldText": "y = 2\n", "newText": "y = 2\n"}
    result = workspace_edit_from_content([item], files.get)
    assert result is not None
    assert result.edit["documentChanges"] == []
    assert result.problems == []
