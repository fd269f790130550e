"""Questions from the agent (ACP elicitation), pure: reading a request, checking an answer against
the form's schema, and the generic-mode shapes (one choice at a time, or a JSON file to fill in).

Editor contract section 8. Nothing here does I/O: `core/elicitation.py` asks the editor.
"""

from __future__ import annotations

import datetime
import json
import logging
import math
import re
from typing import Any
from urllib.parse import urlsplit

import attrs

from acpls.acp import models as m
from acpls.acp.converter import structure, unstructure
from acpls.acp.models import OMITTED, AcpModelError

logger = logging.getLogger(__name__)

ACTIONS = ("accept", "decline", "cancel")
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
DATE_TIME = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})?$"
)
YES, NO, SKIP = "Yes", "No", "Skip"
# URLs acpls asks the editor to open outside itself; anything else is only shown as text.
OPENABLE_SCHEMES = ("https", "http")


class InvalidQuestion(ValueError):
    """The agent's elicitation/create cannot be asked (the agent gets -32602 with this text)."""


@attrs.define(kw_only=True)
class Question:
    """One elicitation/create, as acpls keeps it."""

    mode: str  # "form" | "url"
    message: str
    schema: dict[str, Any] = attrs.field(factory=dict)
    url: str | None = None
    elicitation_id: str | None = None
    session_id: str | None = None
    tool_call_id: str | None = None


def parse_request(params: Any) -> Question:
    """The agent's `elicitation/create` params, checked against their model
    (`CreateElicitationRequest`) and against what acpls can ask: a form or a URL."""
    try:
        request = structure(params, m.CreateElicitationRequest)
    except AcpModelError as exc:
        raise InvalidQuestion(str(exc)) from exc
    question = Question(
        mode=_text(request.mode) or "",
        message=request.message,
        session_id=_text(request.session_id),
        tool_call_id=_text(request.tool_call_id),
    )
    if request.mode == "form":
        if request.requested_schema is OMITTED:
            raise InvalidQuestion("a form question needs requestedSchema (an object)")
        properties = request.requested_schema.get("properties", {})
        if not isinstance(properties, dict) or not all(
            isinstance(p, dict) for p in properties.values()
        ):
            raise InvalidQuestion("requestedSchema.properties must map names to objects")
        question.schema = request.requested_schema
    elif request.mode == "url":
        url, elicitation_id = _text(request.url), _text(request.elicitation_id)
        if not url:
            raise InvalidQuestion("a url question needs url (a string)")
        if elicitation_id is None:
            raise InvalidQuestion("a url question needs elicitationId (a string)")
        question.url, question.elicitation_id = url, elicitation_id
    else:
        mode = _text(request.mode)
        raise InvalidQuestion(f"unsupported elicitation mode {mode!r} (acpls offers form and url)")
    return question


def _text(value: str | m.Omitted | None) -> str | None:
    return value if isinstance(value, str) else None


def openable(url: str) -> bool:
    """Whether acpls may ask the editor to open this URL in the user's browser."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme.lower() in OPENABLE_SCHEMES and bool(parts.netloc)


# -- the form's fields -------------------------------------------------------------------------


def properties(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}


def required(schema: dict[str, Any]) -> list[str]:
    names = schema.get("required")
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


def label(name: str, prop: dict[str, Any]) -> str:
    title = prop.get("title")
    return title if isinstance(title, str) and title else name


def choices(prop: dict[str, Any]) -> list[tuple[str, str]] | None:
    """(value, title) of a single-choice string field, or None when it is not one."""
    if prop.get("type") != "string":
        return None
    return _options(prop)


def multi_choices(prop: dict[str, Any]) -> list[tuple[str, str]] | None:
    """(value, title) of a multi-select field's items, or None when it is not one."""
    if prop.get("type") != "array":
        return None
    items = prop.get("items")
    return _options(items) if isinstance(items, dict) else None


def _options(spec: dict[str, Any]) -> list[tuple[str, str]] | None:
    enum = spec.get("enum")
    if isinstance(enum, list) and enum:
        return [(v, v) for v in enum if isinstance(v, str)]
    titled = spec.get("oneOf", spec.get("anyOf"))
    if isinstance(titled, list) and titled:
        out = []
        for option in titled:
            if isinstance(option, dict) and isinstance(option.get("const"), str):
                title = option.get("title")
                out.append((option["const"], title if isinstance(title, str) else option["const"]))
        return out or None
    return None


# -- checking an answer ------------------------------------------------------------------------


def check(schema: dict[str, Any], content: Any) -> tuple[dict[str, Any], list[str]]:
    """The content to send the agent and the problems that keep it from fitting the schema.

    `null` (or a missing key) means "no value": the key is left out, and a required field without a
    value is a problem. An integral number given for an integer field becomes an integer.
    """
    if content is None:
        content = {}
    if not isinstance(content, dict):
        return {}, ["the answer must be an object of field values"]
    props = properties(schema)
    problems: list[str] = []
    out: dict[str, Any] = {}
    for name in content:
        if name not in props:
            problems.append(f"{name}: not a field of this form")
    for name, prop in props.items():
        value = content.get(name)
        if value is None:
            if name in required(schema):
                problems.append(f"{label(name, prop)}: a value is required")
            continue
        value, problem = check_value(prop, value)
        if problem is not None:
            problems.append(f"{label(name, prop)}: {problem}")
        else:
            out[name] = value
    return out, problems


def check_value(prop: dict[str, Any], value: Any) -> tuple[Any, str | None]:
    kind = prop.get("type")
    if kind == "string":
        return value, _check_string(prop, value)
    if kind in ("number", "integer"):
        return _check_number(prop, value, integer=kind == "integer")
    if kind == "boolean":
        return value, None if isinstance(value, bool) else "must be true or false"
    if kind == "array":
        return value, _check_multi(prop, value)
    # A field type acpls does not know: pass on what the user gave if it is a content value.
    if isinstance(value, (str, bool, int, float)) or (
        isinstance(value, list) and all(isinstance(v, str) for v in value)
    ):
        return value, None
    return value, "must be a string, number, boolean or list of strings"


def _check_string(prop: dict[str, Any], value: Any) -> str | None:
    if not isinstance(value, str):
        return "must be text"
    options = choices(prop)
    if options is not None:
        allowed = [v for v, _ in options]
        return None if value in allowed else f"must be one of {', '.join(allowed)}"
    low, high = _int(prop.get("minLength")), _int(prop.get("maxLength"))
    if low is not None and len(value) < low:
        return f"must be at least {low} character{'s' if low != 1 else ''}"
    if high is not None and len(value) > high:
        return f"must be at most {high} character{'s' if high != 1 else ''}"
    pattern = prop.get("pattern")
    if isinstance(pattern, str):
        try:
            if re.search(pattern, value) is None:
                return f"must match the pattern {pattern}"
        except re.error:
            logger.warning("ignoring a form pattern Python cannot read: %r", pattern)
    fmt = prop.get("format")
    if isinstance(fmt, str) and not _fits_format(fmt, value):
        return f"must be {FORMAT_NAMES.get(fmt, 'a valid ' + fmt)}"
    return None


FORMAT_NAMES = {
    "email": "an email address",
    "uri": "a URI (scheme:...)",
    "date": "a date (YYYY-MM-DD)",
    "date-time": "a date and time (YYYY-MM-DDTHH:MM:SSZ)",
}


def _fits_format(fmt: str, value: str) -> bool:
    if fmt == "email":
        return EMAIL.match(value) is not None
    if fmt == "uri":
        try:
            parts = urlsplit(value)
        except ValueError:
            return False
        return bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]*$", parts.scheme)) and bool(
            parts.netloc or parts.path
        )
    if fmt == "date":
        return DATE.match(value) is not None and _parses(datetime.date.fromisoformat, value)
    if fmt == "date-time":
        text = value.replace("z", "Z").replace("Z", "+00:00")
        return DATE_TIME.match(value) is not None and _parses(datetime.datetime.fromisoformat, text)
    return True  # a format acpls does not know is not held against the user


def _parses(parse: Any, value: str) -> bool:
    try:
        parse(value)
    except ValueError:
        return False
    return True


def _check_number(prop: dict[str, Any], value: Any, *, integer: bool) -> tuple[Any, str | None]:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return value, "must be a whole number" if integer else "must be a number"
    if integer and isinstance(value, float):
        if not value.is_integer():
            return value, "must be a whole number"
        value = int(value)
    low, high = _number(prop.get("minimum")), _number(prop.get("maximum"))
    if low is not None and value < low:
        return value, f"must be at least {_show(low)}"
    if high is not None and value > high:
        return value, f"must be at most {_show(high)}"
    return value, None


def _check_multi(prop: dict[str, Any], value: Any) -> str | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return "must be a list of choices"
    options = multi_choices(prop)
    if options is not None:
        allowed = [v for v, _ in options]
        wrong = [v for v in value if v not in allowed]
        if wrong:
            return f"{', '.join(wrong)} is not one of {', '.join(allowed)}"
    if len(set(value)) != len(value):
        return "has a choice twice"
    low, high = _int(prop.get("minItems")), _int(prop.get("maxItems"))
    if low is not None and len(value) < low:
        return f"choose at least {low}"
    if high is not None and len(value) > high:
        return f"choose at most {high}"
    return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def _show(number: float | int) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


def fits_type(prop: dict[str, Any], value: Any) -> bool:
    """Whether a value has the field's JSON type (and so may stand as its default)."""
    kind = prop.get("type")
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return False


def with_defaults(schema: dict[str, Any], content: Any) -> dict[str, Any]:
    """The schema again, with the user's values (those of the field's type) as the defaults, so a
    form asked again does not make the user type everything anew."""
    if not isinstance(content, dict):
        return schema
    props = dict(properties(schema))
    for name, prop in props.items():
        value = content.get(name)
        if value is not None and fits_type(prop, value):
            props[name] = {**prop, "default": value}
    return {**schema, "properties": props}


def retry_message(message: str, problems: list[str]) -> str:
    lines = "\n".join(f"- {p}" for p in problems)
    return f"{message}\n\nPlease fix:\n{lines}"


def answer(action: str, content: dict[str, Any] | None = None) -> dict[str, Any]:
    """The elicitation/create result (`CreateElicitationResponse`): content only with accept."""
    response = m.CreateElicitationResponse(action=action)
    if action == "accept" and content is not None:
        response.content = content
    return unstructure(response)


CANCEL = "cancel"


# -- generic mode: one choice at a time --------------------------------------------------------


@attrs.define(frozen=True)
class ChoiceStep:
    """One window/showMessageRequest: the field, the text, and the value of each action title."""

    name: str
    message: str
    actions: list[str]
    values: dict[str, Any]  # action title -> value; SKIP maps to None


def choice_steps(question: Question) -> list[ChoiceStep] | None:
    """The form as one showMessageRequest per field, when every field is a single choice or a
    boolean; None when some field needs typing (then the form is a JSON file)."""
    props = properties(question.schema)
    if not props:
        return None
    needed = required(question.schema)
    steps = []
    for index, (name, prop) in enumerate(props.items(), 1):
        if prop.get("type") == "boolean":
            pairs: list[tuple[Any, str]] = [(True, YES), (False, NO)]
        else:
            options = choices(prop)
            if options is None:
                return None
            pairs = list(options)
        if name not in needed:
            pairs.append((None, SKIP))
        titles = _unique([title for _, title in pairs])
        values = {title: value for title, (value, _) in zip(titles, pairs, strict=True)}
        description = prop.get("description")
        text = f"{question.message}\n\n{label(name, prop)}"
        if isinstance(description, str) and description:
            text += f": {description}"
        if len(props) > 1:
            text += f" ({index}/{len(props)})"
        steps.append(ChoiceStep(name=name, message=text, actions=titles, values=values))
    return steps


def _unique(titles: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for title in titles:
        count = seen.get(title, 0) + 1
        seen[title] = count
        out.append(title if count == 1 else f"{title} ({count})")
    return out


# -- generic mode: a JSON file to fill in ------------------------------------------------------


def form_file_text(question: Question, schema: dict[str, Any], problems: list[str]) -> str:
    """The `.json` file the user fills in: one key per field with its default (or null), the
    field's description and constraints as whole `//` lines above it."""
    lines = [f"// {line}" if line else "//" for line in question.message.splitlines()]
    lines.append("//")
    lines.append("// Fill in the values below and save this file to answer the agent.")
    lines.append("// Close it without saving to cancel. (Lines starting with // are ignored.)")
    for problem in problems:
        lines.append(f"// Problem: {problem}")
    lines.append("{")
    props = list(properties(schema).items())
    needed = required(schema)
    for index, (name, prop) in enumerate(props):
        for comment in field_comments(name, prop, name in needed):
            lines.append(f"  // {comment}")
        default = prop.get("default")
        value = json.dumps(default if default is not None else None, ensure_ascii=False)
        comma = "," if index < len(props) - 1 else ""
        lines.append(f"  {json.dumps(name, ensure_ascii=False)}: {value}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def field_comments(name: str, prop: dict[str, Any], is_required: bool) -> list[str]:
    kind = prop.get("type")
    head = f"{label(name, prop)}: {_kind_name(prop)}"
    head += ", required" if is_required else ", optional (null for none)"
    out = [head]
    description = prop.get("description")
    if isinstance(description, str) and description:
        out.extend(line for line in description.splitlines() if line.strip())
    options = choices(prop) if kind == "string" else multi_choices(prop)
    if options:
        out.append(
            "one of: "
            + ", ".join(json.dumps(v) + (f" ({t})" if t != v else "") for v, t in options)
        )
    constraints = _constraints(prop)
    if constraints:
        out.append(constraints)
    return out


def _kind_name(prop: dict[str, Any]) -> str:
    kind = prop.get("type")
    if kind == "array":
        return "a list of choices"
    names = {"string": "text", "integer": "a whole number", "number": "a number"}
    name = names.get(str(kind), str(kind))
    fmt = prop.get("format")
    if kind == "string" and isinstance(fmt, str):
        name = FORMAT_NAMES.get(fmt, fmt)
    return name


def _constraints(prop: dict[str, Any]) -> str:
    parts = []
    for key, words in (
        ("minLength", "at least {} characters"),
        ("maxLength", "at most {} characters"),
        ("minimum", "at least {}"),
        ("maximum", "at most {}"),
        ("minItems", "choose at least {}"),
        ("maxItems", "choose at most {}"),
        ("pattern", "matching {}"),
    ):
        value = prop.get(key)
        if value is not None and not isinstance(value, bool):
            parts.append(words.format(value))
    return "; ".join(parts)


class FormFileError(ValueError):
    """The saved file is not a JSON object once its `//` lines are taken out."""


def parse_form_file(text: str) -> dict[str, Any]:
    # Comment lines become empty ones, so a JSON error's line number is the file's.
    body = "\n".join("" if line.lstrip().startswith("//") else line for line in text.splitlines())
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        raise FormFileError(f"not valid JSON ({exc.msg}, line {exc.lineno})") from exc
    if not isinstance(value, dict):
        raise FormFileError("the file must hold one JSON object")
    return value
