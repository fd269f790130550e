"""The pure "ask the agent" code actions: a selection, and an `@agent <question>` comment."""

from __future__ import annotations

from acpls.translate.prompt_actions import agent_comment_action, selection_action

URI = "file:///w/a.py"


def _range(sl: int, sc: int, el: int, ec: int) -> dict:
    return {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}


def test_a_selection_asks_about_exactly_that_range() -> None:
    action = selection_action(URI, _range(2, 1, 4, 0))
    assert action is not None
    assert action.prompt == {
        "text": "Explain this code.",
        "context": [{"uri": URI, "range": _range(2, 1, 4, 0)}],
    }
    assert selection_action(URI, _range(3, 5, 3, 5)) is None


def test_an_agent_comment_sends_its_question_with_the_lines_around_it() -> None:
    lines = [f"x{i} = {i}" for i in range(60)]
    lines[30] = "# @agent: why is this slow? -->"
    action = agent_comment_action(URI, "\n".join(lines), 30)
    assert action is not None
    assert action.title == "Send to agent: why is this slow?"
    assert action.prompt == {
        "text": "why is this slow?",
        "context": [{"uri": URI, "range": _range(10, 0, 51, 0)}],
    }


def test_the_context_is_cut_at_the_file_edges() -> None:
    action = agent_comment_action(URI, "// @agent rename this\nint x;\n", 0)
    assert action is not None
    assert action.prompt["context"][0]["range"] == _range(0, 0, 2, 0)


def test_no_action_without_a_question_or_off_the_comment_line() -> None:
    text = "// @agent\n// @agentsmith hello\nplain\n"
    assert agent_comment_action(URI, text, 0) is None
    assert agent_comment_action(URI, text, 1) is None
    assert agent_comment_action(URI, text, 2) is None
    assert agent_comment_action(URI, text, 9) is None
