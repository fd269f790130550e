"""The review store over a file's whole life, as a hypothesis state machine: proofs that keep and
reject never lose anything of the user's.

The agent edits the file (whole-file writes as a v2 diff or `fs/write_text_file` give them, v1
fragment diffs placed by `translate.fragments` before or after the agent wrote, writes straight
to disk, a deletion, a file it creates), the user edits the buffer in between, and the user keeps
or rejects hunks, files or everything in any order. Every line carries who wrote it: base lines
`bN`, agent lines `aN`, user lines `uN` (each number used once), plus lines any of them may write
(`x`, so the diff meets repeated lines). The invariants, after every step:

- a reject writes only where the file still holds the agent's text: no line of the user's is
  replaced or removed by it, and the edit it returns gives exactly the text the store records;
- keep never changes the file's bytes;
- with no user edit and nothing kept since the agent first touched the file, rejecting everything
  gives back the bytes from before the agent's first change exactly (or no file, when it had none).
"""

from __future__ import annotations

import itertools

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from acpls.state.review import RejectEdit, ReviewError, ReviewStore, UnprovenReject
from acpls.translate.fragments import Placement, place_v1_diff
from acpls.translate.text_edits import apply_text_edits, split_lines

P = "/ws/src/app.py"
SHARED = ["x\n", "x\r\n"]


def _apply(text: str | None, edit: RejectEdit) -> str | None:
    if edit.operation == "delete":
        return None
    if edit.operation == "create":
        return edit.new_text
    assert text is not None
    return apply_text_edits(text, edit.edits)


def _users(text: str | None) -> list[str]:
    return sorted(line for line in split_lines(text or "") if line.startswith("u"))


class ReviewLife(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.store = ReviewStore()
        self.numbers = itertools.count()
        self.text: str | None = None
        # The file before the agent first touched it since nothing was pending; None when the
        # store is not tracking the file. `clean`: no user edit and nothing kept since then.
        self.pre: str | None = None
        self.tracking = False
        self.clean = True
        self.known = True

    def _fresh(self, who: str, newline: str = "\n") -> str:
        return f"{who}{next(self.numbers)}{newline}"

    @initialize(
        exists=st.booleans(),
        lines=st.lists(st.sampled_from(["b\n", "b\r\n", "x\n", "x\r\n"]), max_size=6),
        last=st.sampled_from(["", "tail"]),
    )
    def start(self, exists: bool, lines: list[str], last: str) -> None:
        if exists:
            body = [self._fresh("b", line[1:]) if line[0] == "b" else line for line in lines]
            self.text = "".join(body) + last

    # -- the agent -------------------------------------------------------------------------------

    def _agent_wrote(self, new: str | None, *, known: bool = True) -> None:
        """What the controller does around an agent's write: the baseline first, then the text."""
        if not self.store.files():
            self.pre, self.clean, self.known = self.text, True, known
            if not known:
                assert new is not None
                self.store.unknown_baseline(P, new, session_id="s")
                self.text = new
                return
            assert self.store.baseline(P, self.text, session_id="s")
        self.store.changed(P, new)
        self.text = new

    def _splice(self, data: st.DataObject) -> tuple[list[str], int, int, list[str]]:
        lines = split_lines(self.text or "")
        start = data.draw(st.integers(0, len(lines)), label="start")
        end = data.draw(st.integers(start, len(lines)), label="end")
        if start == len(lines) and lines and not lines[-1].endswith("\n"):
            start = len(lines) - 1  # nothing goes after a last line with no end but through it
        kinds = st.lists(st.sampled_from(["a\n", "a\r\n", "x\n", "a"]), max_size=3)
        new = [k if k[0] == "x" else self._fresh("a", k[1:]) for k in data.draw(kinds)]
        # A line without its end only at the end of the file.
        new = [
            line
            if line.endswith("\n") or (end == len(lines) and i == len(new) - 1)
            else line + "\n"
            for i, line in enumerate(new)
        ]
        return lines, start, end, new

    @rule(data=st.data())
    def agent_writes_whole_file(self, data: st.DataObject) -> None:
        """A v2 diff, `fs/write_text_file` or a write straight to disk: the whole new text."""
        lines, start, end, new = self._splice(data)
        self._agent_wrote("".join(lines[:start] + new + lines[end:]))

    @precondition(lambda self: self.text is not None)
    @rule(data=st.data(), after=st.booleans())
    def agent_sends_v1_fragment(self, data: st.DataObject, after: bool) -> None:
        """A v1 diff whose texts are only the replaced lines (Claude Code, Copilot, Codex with
        context), placed in the file before the agent wrote it, or after."""
        lines, start, end, new = self._splice(data)
        old_fragment, new_fragment = "".join(lines[start:end]), "".join(new)
        before = self.text or ""
        if not old_fragment and before:
            return  # a fragment has context (an empty `oldText` means an empty file)
        result = "".join(lines[:start] + new + lines[end:])
        placed = place_v1_diff(result if after else before, old_fragment, new_fragment)
        if isinstance(placed, Placement):
            # Placed means placed right: the whole texts are the file's before and after.
            assert (placed.pre_image, placed.post_image) == (before, result)
        if not self.store.is_tracked(P) and not isinstance(placed, Placement):
            return  # no baseline from an unplaced fragment; the agent's write is not made
        self._agent_wrote(result)

    @precondition(lambda self: self.text is not None)
    @rule()
    def agent_deletes_the_file(self) -> None:
        self._agent_wrote(None)

    @precondition(lambda self: self.text is not None)
    @rule(data=st.data())
    def agent_writes_to_disk_with_nothing_known_before(self, data: st.DataObject) -> None:
        """A write the watcher saw with no earlier text from anywhere: an unknown baseline."""
        if self.store.is_tracked(P):
            return
        lines, start, end, new = self._splice(data)
        self._agent_wrote("".join(lines[:start] + new + lines[end:]), known=False)

    # -- the user --------------------------------------------------------------------------------

    @precondition(lambda self: self.text is not None)
    @rule(data=st.data(), what=st.sampled_from(["insert", "replace", "delete"]))
    def user_types(self, data: st.DataObject, what: str) -> None:
        lines = split_lines(self.text or "")
        at = data.draw(st.integers(0, len(lines)), label="at")
        if what != "insert" and at == len(lines):
            return
        mine = [] if what == "delete" else [self._fresh("u")]
        if at == len(lines) and lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        lines[at : at if what == "insert" else at + 1] = mine
        self.text = "".join(lines)
        if self.store.files():
            self.clean = False
        self.store.user_edited(P, self.text)

    # -- deciding --------------------------------------------------------------------------------

    def _hunk_ids(self) -> list[str]:
        return [h.hunk_id for f in self.store.files() for h in f.hunks]

    def _rejected(self, edit: RejectEdit) -> None:
        before = self.text
        after = _apply(before, edit)
        assert after == edit.new_text, "the edit does not give the text the store records"
        if edit.operation == "edit":
            assert before is not None
            for change in edit.edits:
                start, end = change["range"]["start"], change["range"]["end"]
                replaced = split_lines(before)[start["line"] : end["line"] + 1]
                if end["character"] == 0:
                    replaced = split_lines(before)[start["line"] : end["line"]]
                assert not _users("".join(replaced)), f"reject replaced the user's {replaced}"
        assert set(_users(before)) <= set(_users(after)), "reject removed the user's text"
        self.text = after

    @precondition(lambda self: self.store.files())
    @rule(data=st.data())
    def keep_hunk(self, data: st.DataObject) -> None:
        self.store.keep_hunk(data.draw(st.sampled_from(self._hunk_ids())))
        self.clean = False

    @precondition(lambda self: self.store.files())
    @rule(data=st.data())
    def reject_hunk(self, data: st.DataObject) -> None:
        hunk_id = data.draw(st.sampled_from(self._hunk_ids()))
        try:
            edit = self.store.reject_hunk(hunk_id)
        except UnprovenReject as exc:
            assert exc.conflict.mine == self.text
            return
        except ReviewError:
            assert not self.known, "only a file with an unknown past refuses a reject"
            return
        self._rejected(edit)

    @rule(one_file=st.booleans())
    def reject_all(self, one_file: bool) -> None:
        try:
            edits = self.store.reject_all(P if one_file else None)
        except ReviewError:
            assert not self.store.is_tracked(P) or not self.known
            return
        for edit in edits:
            self._rejected(edit)

    @rule(one_file=st.booleans())
    def keep_all(self, one_file: bool) -> None:
        if one_file and not self.store.is_tracked(P):
            return
        self.store.keep_all(P if one_file else None)
        self.clean = False

    @rule()
    def keep_mine_when_asked(self) -> None:
        for conflict in self.store.unproven():
            assert conflict.mine == self.text
            self.store.keep_hunks(conflict.hunk_ids)
            self.clean = False

    # -- what always holds -----------------------------------------------------------------------

    @invariant()
    def store_holds_the_files_text(self) -> None:
        if self.store.is_tracked(P):
            assert self.store.current_text(P) == self.text

    def teardown(self) -> None:
        """Reject everything: with nothing of the user's in between, the bytes from before."""
        if not self.store.files() or not self.known:
            return
        clean = self.clean
        for edit in self.store.reject_all():
            self._rejected(edit)
        if clean:
            assert self.text == self.pre, "rejecting everything did not give the bytes back"
            assert not self.store.files()


ReviewLife.TestCase.settings = settings(max_examples=100, stateful_step_count=25)
test_review_life = ReviewLife.TestCase
