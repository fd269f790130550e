"""The diff preview applies a WorkspaceEdit's text edits to a copy of the text: the result equals
what Neovim's own `vim.lsp.util.apply_text_edits` makes of the same edits (UTF-16 columns,
multi-byte and astral characters, edits across lines, insertions)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.nvim

COMPARE = """
local lines, edits = ...
local ours = require('acpls.edit').apply_text_edits(lines, edits)
local buf = vim.api.nvim_create_buf(false, true)
vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
vim.lsp.util.apply_text_edits(edits, buf, 'utf-16')
local theirs = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
vim.api.nvim_buf_delete(buf, {force = true})
return {ours = ours, theirs = theirs}
"""


def utf16(text: str) -> int:
    return sum(2 if ord(c) > 0xFFFF else 1 for c in text)


@st.composite
def document_and_edits(draw: Any) -> tuple[list[str], list[dict[str, Any]]]:
    lines = draw(st.lists(st.text(alphabet="ab é😀", max_size=6), min_size=1, max_size=5))
    positions = draw(
        st.lists(
            st.tuples(
                st.integers(0, len(lines) - 1),
                st.integers(0, 6),
            ),
            max_size=6,
        )
    )
    # Distinct positions, so no two edits start at the same place (where Neovim's own function and
    # LSP's array order part ways); each edit takes one position (an insertion) or two (a range).
    points = sorted({(line, min(idx, len(lines[line]))) for line, idx in positions})
    edits = []
    while points:
        start = points.pop(0)
        end = points.pop(0) if points and draw(st.booleans()) else start
        new_text = draw(st.text(alphabet="xé😀\n", max_size=4))
        edits.append(
            {
                "range": {
                    "start": {"line": start[0], "character": utf16(lines[start[0]][: start[1]])},
                    "end": {"line": end[0], "character": utf16(lines[end[0]][: end[1]])},
                },
                "newText": new_text,
            }
        )
    return lines, draw(st.permutations(edits))


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(document_and_edits())
def test_text_edits_match_neovims_own(plain_nvim, case):
    lines, edits = case
    result = plain_nvim.exec_lua(COMPARE, lines, edits)
    assert result["ours"] == result["theirs"]


def test_edits_at_the_same_place_apply_in_array_order(plain_nvim):
    lines = plain_nvim.exec_lua(
        "return require('acpls.edit').apply_text_edits(...)",
        ["abc"],
        [
            {
                "range": {"start": {"line": 0, "character": 1}, "end": {"line": 0, "character": 2}},
                "newText": "B",
            },
            {
                "range": {"start": {"line": 0, "character": 1}, "end": {"line": 0, "character": 1}},
                "newText": "1",
            },
            {
                "range": {"start": {"line": 0, "character": 1}, "end": {"line": 0, "character": 1}},
                "newText": "2",
            },
        ],
    )
    assert lines == ["aB12c"]


def test_workspace_edit_files_and_texts(plain_nvim, workspace):
    calc = workspace / "calc.py"
    new = workspace / "new.py"
    wedit = {
        "documentChanges": [
            {
                "textDocument": {"uri": calc.as_uri(), "version": None},
                "edits": [
                    {
                        "range": {
                            "start": {"line": 1, "character": 13},
                            "end": {"line": 1, "character": 14},
                        },
                        "newText": "+",
                    }
                ],
            },
            {"kind": "create", "uri": new.as_uri()},
            {
                "textDocument": {"uri": new.as_uri(), "version": None},
                "edits": [
                    {
                        "range": {
                            "start": {"line": 0, "character": 0},
                            "end": {"line": 0, "character": 0},
                        },
                        "newText": "print('hi')\n",
                    }
                ],
            },
            {"kind": "delete", "uri": (workspace / "README.md").as_uri()},
        ]
    }
    result = plain_nvim.exec_lua(
        """
        local e = require('acpls.edit')
        local out = {}
        for _, f in ipairs(e.files(...)) do
          local cur, new = e.texts(f)
          table.insert(out, {op = f.op, path = f.path, current = cur, proposed = new})
        end
        return out
        """,
        wedit,
    )
    assert [(r["op"], r["path"]) for r in result] == [
        ("edit", str(calc)),
        ("create", str(new)),
        ("delete", str(workspace / "README.md")),
    ]
    assert result[0]["proposed"][1] == "    return a + b"
    assert result[1]["current"] == [] and result[1]["proposed"] == ["print('hi')"]
    assert result[2]["proposed"] == []
