"""translate/elicitation.py: reading a question, checking answers, the generic mode's shapes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from acpls.translate import elicitation as q

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tests.schema import validate_client_message, validate_definition  # noqa: E402

FIXTURES = ROOT / "editors" / "fixtures"
FORM: dict[str, Any] = json.loads((FIXTURES / "acpls_elicitation.json").read_text())["params"][
    "requestedSchema"
]
GOOD: dict[str, Any] = json.loads((FIXTURES / "acpls_elicitation.result.json").read_text())[
    "result"
]["content"]


def question(schema: dict[str, Any] = FORM) -> q.Question:
    return q.parse_request(
        {"sessionId": "s", "mode": "form", "message": "Tell me\nplease", "requestedSchema": schema}
    )


@pytest.mark.parametrize("version", [1, 2])
def test_fixture_form_and_answers_are_valid_acp(version: int) -> None:
    params = {"sessionId": "s", "mode": "form", "message": "m", "requestedSchema": FORM}
    validate_definition(version, "CreateElicitationRequest", params)
    for result in (q.answer("accept", GOOD), q.answer("decline"), q.answer(q.CANCEL)):
        validate_client_message(
            version, {"jsonrpc": "2.0", "id": 1, "result": result}, method="elicitation/create"
        )


def test_good_answer_fits_unchanged() -> None:
    assert q.check(FORM, GOOD) == (GOOD, [])


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("name", 5, "Name: must be text"),
        ("name", "x" * 41, "Name: must be at most 40 characters"),
        ("email", "a@b", "email: must be an email address"),
        ("age", 17, "Age: must be at least 18"),
        ("age", 121, "Age: must be at most 120"),
        ("age", 20.5, "Age: must be a whole number"),
        ("age", True, "Age: must be a whole number"),
        ("age", "20", "Age: must be a whole number"),
        ("ratio", 1.5, "ratio: must be at most 1"),
        ("subscribe", "yes", "Subscribe: must be true or false"),
        ("color", "blue", "color: must be one of red, green"),
        ("size", "Small", "size: must be one of s, l"),
        ("tags", ["a", "b", "c"], "tags: choose at most 2"),
        ("tags", ["a", "a"], "tags: has a choice twice"),
        ("tags", ["z"], "tags: z is not one of a, b, c"),
        ("tags", "a", "tags: must be a list of choices"),
        ("langs", ["rust"], "langs: rust is not one of py, lua"),
        ("born", "1990-02-30", "born: must be a date (YYYY-MM-DD)"),
        ("born", "28/02/1990", "born: must be a date (YYYY-MM-DD)"),
    ],
)
def test_each_misfit_is_named(field: str, value: Any, problem: str) -> None:
    content, problems = q.check(FORM, {**GOOD, field: value})
    assert problems == [problem]
    assert field not in content


def test_required_missing_and_unknown_fields() -> None:
    answer = {k: v for k, v in GOOD.items() if k not in ("name", "ratio")}
    answer["email"] = None
    answer["extra"] = 1
    content, problems = q.check(FORM, answer)
    assert problems == [
        "extra: not a field of this form",
        "Name: a value is required",
        "email: a value is required",
    ]
    assert "ratio" not in content  # optional and absent: left out


def test_integral_float_becomes_an_integer_and_formats_pass() -> None:
    content, problems = q.check(FORM, {**GOOD, "age": 30.0})
    assert problems == [] and content["age"] == 30 and isinstance(content["age"], int)
    schema = {
        "type": "object",
        "properties": {
            "u": {"type": "string", "format": "uri"},
            "t": {"type": "string", "format": "date-time"},
            "p": {"type": "string", "pattern": "^[a-z]+$"},
        },
    }
    assert (
        q.check(schema, {"u": "https://x.org/a", "t": "2026-12-01T10:00:00Z", "p": "abc"})[1] == []
    )
    _, problems = q.check(schema, {"u": "not a uri", "t": "yesterday", "p": "ABC"})
    assert problems == [
        "u: must be a URI (scheme:...)",
        "t: must be a date and time (YYYY-MM-DDTHH:MM:SSZ)",
        "p: must match the pattern ^[a-z]+$",
    ]


def test_with_defaults_keeps_values_of_the_right_type() -> None:
    schema = q.with_defaults(FORM, {"name": "A", "age": "old", "tags": ["a"]})
    props = schema["properties"]
    assert props["name"]["default"] == "A"
    assert "default" not in props["age"]  # a string is no integer default
    assert props["tags"]["default"] == ["a"]
    assert FORM["properties"]["name"].get("default") is None  # the original is untouched


def test_parse_request_refuses_what_cannot_be_asked() -> None:
    for params in (
        None,
        {"mode": "form", "message": "m"},
        {"mode": "url", "message": "m", "url": "https://x"},
        {"mode": "sms", "message": "m"},
        {"mode": "form", "message": 3, "requestedSchema": {}},
        {"mode": "form", "message": "m", "requestedSchema": {"properties": {"a": 1}}},
    ):
        with pytest.raises(q.InvalidQuestion):
            q.parse_request(params)
    url = q.parse_request(
        {"mode": "url", "message": "m", "url": "https://x.org", "elicitationId": "e"}
    )
    assert (url.mode, url.url, url.elicitation_id, url.session_id) == (
        "url",
        "https://x.org",
        "e",
        None,
    )


def test_parse_request_reads_the_model_and_names_a_wrong_field() -> None:
    with pytest.raises(q.InvalidQuestion, match=r"CreateElicitationRequest\.message"):
        q.parse_request({"mode": "form", "message": 3, "requestedSchema": {}})
    with pytest.raises(q.InvalidQuestion, match=r"CreateElicitationRequest\.requestId"):
        q.parse_request({"mode": "url", "message": "m", "requestId": [1]})
    with pytest.raises(q.InvalidQuestion, match="unsupported elicitation mode '_sms'"):
        q.parse_request({"mode": "_sms", "message": "m", "sessionId": "s"})
    # Scoped to a request outside any session (auth, configuration): asked like any other.
    before_session = q.parse_request(
        {"mode": "form", "message": "m", "requestId": 7, "requestedSchema": FORM}
    )
    assert (before_session.session_id, before_session.schema) == (None, FORM)
    in_a_tool = q.parse_request(
        {
            "mode": "form",
            "message": "m",
            "sessionId": "s",
            "toolCallId": "t",
            "requestedSchema": FORM,
        }
    )
    assert (in_a_tool.session_id, in_a_tool.tool_call_id) == ("s", "t")


def test_only_web_urls_are_opened() -> None:
    assert q.openable("https://example.org/x")
    assert q.openable("http://127.0.0.1:8080/cb")
    for url in ("file:///etc/passwd", "javascript:alert(1)", "vscode://x", "https://", "nonsense"):
        assert not q.openable(url)


def test_choice_steps_only_for_choice_and_boolean_forms() -> None:
    assert q.choice_steps(question()) is None  # a text field needs typing
    schema = {
        "type": "object",
        "properties": {
            "pick": {
                "type": "string",
                "oneOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "A"}],
            },
            "ok": {"type": "boolean"},
        },
        "required": ["pick"],
    }
    steps = q.choice_steps(question(schema))
    assert steps is not None
    assert [s.actions for s in steps] == [["A", "A (2)"], ["Yes", "No", "Skip"]]
    assert steps[0].values == {"A": "a", "A (2)": "b"}
    assert steps[1].values == {"Yes": True, "No": False, "Skip": None}
    assert steps[0].message.startswith("Tell me\nplease\n\npick") and "(1/2)" in steps[0].message


def test_form_file_round_trips_its_defaults() -> None:
    text = q.form_file_text(question(), FORM, [])
    assert text.splitlines()[:2] == ["// Tell me", "// please"]
    assert '  // one of: "s" (Small), "l" (Large)' in text
    assert "  // Name: text, required" in text
    assert "  // What we call you" in text
    assert "  // email: an email address, required" in text
    assert "  // at least 2 characters; at most 40 characters" in text
    parsed = q.parse_form_file(text)
    assert list(parsed) == list(FORM["properties"])
    assert parsed["subscribe"] is False and parsed["name"] is None


def test_form_file_errors_keep_the_files_line_numbers() -> None:
    with pytest.raises(q.FormFileError, match="line 3"):
        q.parse_form_file('// a comment\n{\n  "a": ,\n}\n')
    with pytest.raises(q.FormFileError, match="one JSON object"):
        q.parse_form_file("// x\n[1]\n")
