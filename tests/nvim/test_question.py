"""Questions from the agent in a real Neovim: one field after another through vim.ui.input and
vim.ui.select (multi-select too), defaults shown, Esc cancels, a misfit asked again, withdrawal."""

from __future__ import annotations

import json

import pytest

from tests.agents import load_script, read_log
from tests.nvim.conftest import REPO

pytestmark = pytest.mark.nvim

GOOD = json.loads((REPO / "editors/fixtures/acpls_elicitation.result.json").read_text())["result"][
    "content"
]


def question_answers(log_path) -> list[dict]:
    return [
        m["result"]
        for m in read_log(log_path)
        if "method" not in m and isinstance(m.get("result"), dict) and "action" in m["result"]
    ]


def _wait_log(ed, count: int) -> list[dict]:
    for _ in range(400):
        got = question_answers(ed.agent_log)
        if len(got) >= count:
            return got
        ed.lua("vim.wait(50)")
    raise AssertionError(f"the agent got {question_answers(ed.agent_log)}")


def wait_question(ed) -> dict:
    return ed.wait("return require('acpls.question').current()", what="a question")


@pytest.mark.parametrize("protocol", [1, 2])
def test_form_asked_field_by_field_misfit_asked_again(editor_factory, protocol):
    ed = editor_factory(load_script(f"v{protocol}_elicitation"))
    ed.nvim.command("Acpls prompt ask me")
    first = wait_question(ed)
    assert first["field"] == "name"  # the agent's field order
    assert "Tell me about you — Name: What we call you" in ed.lua(
        "return T.open_inputs()[1].prompt"
    )
    ed.lua("T.fill_question(...)", {**GOOD, "age": 5, "email": "nope"})
    # Asked again: the problems in the prompt, the values given as defaults.
    prompt = ed.wait(
        "for _, i in ipairs(T.open_inputs()) do"
        " if i.prompt:find('Please fix', 1, true) then return i.prompt end end",
        what="the form asked again",
    )
    assert "Please fix:" in prompt and "Age: must be at least 18" in prompt
    assert "email: must be an email address" in prompt
    assert ed.lua("return T.open_inputs()[#T.open_inputs()].default") == "Ann"
    ed.lua("T.fill_question(...)", GOOD)
    ed.wait_turn_end()
    assert question_answers(ed.agent_log) == [{"action": "accept", "content": GOOD}]
    chat = "\n".join(ed.lua("return T.lines(require('acpls.chat').list()[1].buf)"))
    assert "Question answer: accept" in chat
    assert ed.errors() == []


def test_multi_select_and_boolean_pickers_show_defaults(editor_factory):
    ed = editor_factory(load_script("v1_elicitation"))
    ed.nvim.command("Acpls prompt ask me")
    wait_question(ed)
    # Answer the text fields until the boolean picker (its default first and marked).
    for field in ("name", "email", "age", "ratio"):
        inp = ed.lua("return T.open_inputs()[1]")
        ed.lua("T.answer_input(..., ...)", inp["index"], str(GOOD[field]))
    sel = ed.wait_select("acpls.question")
    assert sel["labels"] == ["No (default)", "Yes", "Skip"]
    assert "Subscribe" in sel["prompt"] and "(5/11)" in sel["prompt"]
    ed.lua("T.answer_label(..., 'Yes')", sel["index"])
    sel = ed.wait_select("acpls.question")
    assert sel["labels"] == ["red", "green", "Skip"]
    ed.lua("T.answer_label(..., 'green')", sel["index"])
    sel = ed.wait_select("acpls.question")
    assert sel["labels"] == ["Small", "Large", "Skip"]
    ed.lua("T.answer_label(..., 'Large')", sel["index"])
    sel = ed.wait_select("acpls.question")
    assert sel["labels"] == ["[ ] a", "[ ] b", "[ ] c", "Done (0 chosen)"]
    ed.lua("T.answer_label(..., '[ ] b')", sel["index"])
    sel = ed.wait_select("acpls.question")
    assert sel["labels"] == ["[ ] a", "[x] b", "[ ] c", "Done (1 chosen)"]
    ed.lua("T.answer(...)", sel["index"])  # Esc cancels the whole question
    ed.wait_turn_end()
    assert question_answers(ed.agent_log) == [{"action": "cancel"}]


def test_decline_at_the_end(editor_factory):
    ed = editor_factory(load_script("v2_elicitation"))
    ed.nvim.command("Acpls prompt ask me")
    wait_question(ed)
    ed.lua("T.fill_question(..., 'Decline')", GOOD)
    ed.wait_turn_end()
    assert question_answers(ed.agent_log) == [{"action": "decline"}]


def test_url_question_done(editor_factory):
    ed = editor_factory(load_script("v1_elicitation_url"))
    ed.nvim.command("Acpls prompt sign in")
    sel = ed.wait_select("acpls.question")
    assert sel["labels"] == ["Open https://example.org/sign-in", "Done", "Decline"]
    assert "Sign in to the MCP server" in sel["prompt"]
    ed.lua("T.answer_label(..., 'Done')", sel["index"])
    ed.wait_turn_end()
    assert question_answers(ed.agent_log) == [{"action": "accept"}]


def test_cancelled_turn_withdraws_the_open_question(editor_factory):
    script = load_script("v1_elicitation")
    script["on_prompt"].insert(1, {"wait_cancel": True})
    script["on_prompt"][0]["wait"] = False
    ed = editor_factory(script)
    ed.nvim.command("Acpls prompt ask me")
    wait_question(ed)
    ed.nvim.command("Acpls cancel")
    ed.wait_turn_end()
    ed.wait("return #require('acpls.question').pending() == 0", what="the question withdrawn")
    assert question_answers(ed.agent_log) == [{"action": "cancel"}]
    notes = ed.lua("return vim.tbl_map(function(n) return n.msg end, T.notes)")
    assert any("no longer needs the answer" in n for n in notes)
