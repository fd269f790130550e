"""The one cattrs converter for the ACP models, and builders for the payloads acpls sends.

Every hook is generated once per class (cattrs codegen), so structuring a `tool_call_update` costs
a generated function call plus one set difference for unknown keys: no per-call introspection.

    converter.structure(raw_dict, ToolCallUpdate)   # AcpModelError names the bad field
    converter.unstructure(model)                    # OMITTED fields are left out, None is null
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar

import attrs
import cattrs
from cattrs.cols import list_structure_factory
from cattrs.gen import make_dict_structure_fn, override
from cattrs.v import format_exception

from acpls.acp import models as m
from acpls.acp.models import (
    OMITTED,
    AcpModel,
    AcpModelError,
    JsonObject,
    Omitted,
    RawItem,
)

T = TypeVar("T")

_CAMEL_RE = re.compile(r"_([a-z])")


def wire_name(attribute: str) -> str:
    """`tool_call_id` -> `toolCallId`; `meta` -> `_meta`."""
    if attribute == "meta":
        return "_meta"
    return _CAMEL_RE.sub(lambda match: match.group(1).upper(), attribute)


# --------------------------------------------------------------------------- strict scalars
# cattrs' default str/int hooks coerce (`str(5)` == "5"); ACP payloads are checked instead.


def _structure_str(value: Any, _: Any) -> str:
    if type(value) is str:
        return value
    raise TypeError(f"expected a string, got {_json_type(value)}")


def _structure_int(value: Any, _: Any) -> int:
    if type(value) is int:
        return value
    raise TypeError(f"expected an integer, got {_json_type(value)}")


def _structure_float(value: Any, _: Any) -> float:
    if type(value) in (int, float):
        return value
    raise TypeError(f"expected a number, got {_json_type(value)}")


def _structure_bool(value: Any, _: Any) -> bool:
    if type(value) is bool:
        return value
    raise TypeError(f"expected a boolean, got {_json_type(value)}")


def _structure_request_id(value: Any, _: Any) -> int | str:
    if type(value) in (int, str):
        return value
    raise TypeError(f"expected an integer or a string, got {_json_type(value)}")


def _structure_json_object(value: Any, _: Any) -> JsonObject:
    # Kept as the same dict (no copy): these are raw pass-through payloads.
    if type(value) is dict:
        return value
    raise TypeError(f"expected an object, got {_json_type(value)}")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


# --------------------------------------------------------------------------- the converter


class AcpConverter(cattrs.Converter):
    """cattrs converter whose top-level `structure` raises `AcpModelError` naming the field."""

    def structure(self, obj: Any, cl: Any) -> Any:
        try:
            return super().structure(obj, cl)
        except AcpModelError:
            raise
        except (cattrs.BaseValidationError, TypeError, ValueError, KeyError) as exc:
            name = _type_name(cl)
            raise AcpModelError(f"invalid {name}: {_describe(exc, name)}") from exc


def _type_name(cl: Any) -> str:
    alias = _UNION_NAMES.get(cl)
    if alias is not None:
        return alias
    return getattr(cl, "__name__", None) or str(cl)


def _format_exception(exc: BaseException, tp: Any) -> str:
    if isinstance(exc, KeyError):
        return "required field missing"
    if isinstance(exc, TypeError | ValueError) and str(exc):
        return str(exc)
    return format_exception(exc, tp)


_PATH_SEGMENT = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)")


def _describe(exc: BaseException, name: str) -> str:
    """cattrs' messages with the wire (camelCase) names of the fields in their paths."""
    messages = []
    for message in cattrs.transform_error(exc, path=name, format_exception=_format_exception):
        text, sep, path = message.rpartition(" @ ")
        if sep:
            path = _PATH_SEGMENT.sub(lambda match: "." + wire_name(match.group(1)), path)
            message = f"{text} @ {path}"
        messages.append(message)
    return "; ".join(messages) if messages else str(exc)


def _is_model(cls: Any) -> bool:
    return isinstance(cls, type) and issubclass(cls, AcpModel)


def _is_patch_union(tp: Any) -> bool:
    return _is_union(tp) and Omitted in typing.get_args(tp)


def _is_union(tp: Any) -> bool:
    origin = typing.get_origin(tp)
    return origin is typing.Union or origin is types.UnionType


_INTERNAL_FIELDS = ("extra", "wire_order")


def _make_model_structure(cls: type[AcpModel], conv: cattrs.Converter) -> Callable[..., Any]:
    fields = [f for f in attrs.fields(cls) if f.name not in _INTERNAL_FIELDS]
    overrides = {f.name: override(rename=wire_name(f.name)) for f in fields}
    overrides.update({name: override(omit=True) for name in _INTERNAL_FIELDS})
    generated = make_dict_structure_fn(cls, conv, **overrides)  # type: ignore[arg-type]
    known = frozenset(wire_name(f.name) for f in fields)
    class_name = cls.__name__

    def structure(value: Any, _: Any) -> Any:
        if type(value) is not dict:
            raise TypeError(f"{class_name}: expected an object, got {_json_type(value)}")
        obj = generated(value, cls)
        obj.wire_order = tuple(value)
        unknown = value.keys() - known
        if unknown:
            obj.extra = {key: value[key] for key in value if key in unknown}
        return obj

    return structure


_PASSTHROUGH: frozenset[Any] = frozenset(
    {str, int, float, bool, Any, JsonObject, m.RequestId, list[str], list[JsonObject]}
)


def _strip_optional(tp: Any) -> Any:
    """`X | None | Omitted` -> `X` (a union of what is left when several types remain)."""
    if not _is_union(tp):
        return tp
    rest = tuple(a for a in typing.get_args(tp) if a is not Omitted and a is not type(None))
    return rest[0] if len(rest) == 1 else typing.Union[rest]  # noqa: UP007


def _make_model_unstructure(cls: type[AcpModel], conv: cattrs.Converter) -> Callable[..., Any]:
    """Writes a structured object's keys in the order they arrived (a built one's in declaration
    order, the schema's), so round trips are byte-exact; OMITTED fields are left out."""
    attrs.resolve_types(cls)
    specs: list[tuple[str, str, Callable[[Any], Any] | None, bool]] = []
    for f in attrs.fields(cls):
        if f.name in _INTERNAL_FIELDS:
            continue
        inner = _strip_optional(f.type)
        hook = None if inner in _PASSTHROUGH else conv.get_unstructure_hook(inner)
        specs.append((f.name, wire_name(f.name), hook, f.default is OMITTED))
    plan = tuple(specs)

    def unstructure(obj: Any) -> JsonObject:
        out: JsonObject = {}
        for name, wire, hook, omittable in plan:
            value = getattr(obj, name)
            if omittable and value is OMITTED:
                continue
            out[wire] = value if hook is None or value is None else hook(value)
        extra = obj.extra
        if extra:
            for key, value in extra.items():
                out.setdefault(key, value)
        order = obj.wire_order
        if order is not None and tuple(out) != order:
            # The sender's order first; keys set since then follow in declaration order.
            reordered = {key: out[key] for key in order if key in out}
            reordered.update(out)
            return reordered
        return out

    return unstructure


def _is_list(tp: Any) -> bool:
    return typing.get_origin(tp) is list


def _make_list_structure(tp: Any, conv: cattrs.Converter) -> Callable[..., Any]:
    """cattrs' list hook (per-index error paths) behind a check that the value is an array:
    cattrs alone would iterate an object's keys or a string's characters."""
    if tp == list[JsonObject] or tp == list[str]:
        elem = typing.get_args(tp)[0]
        check = dict if elem == JsonObject else str
        what = "an object" if check is dict else "a string"

        def structure_plain(value: Any, _: Any) -> Any:
            if type(value) is not list:
                raise TypeError(f"expected an array, got {_json_type(value)}")
            for item in value:
                if type(item) is not check:
                    raise TypeError(f"expected array items to be {what}, got {_json_type(item)}")
            return value

        return structure_plain
    inner = list_structure_factory(tp, conv)

    def structure(value: Any, _: Any) -> Any:
        if type(value) is not list:
            raise TypeError(f"expected an array, got {_json_type(value)}")
        return inner(value, tp)

    return structure


def _make_patch_structure(tp: Any, conv: cattrs.Converter) -> Callable[..., Any]:
    """`X | None | Omitted`: the generated class hook only calls this for present keys, so the
    value is either null (-> None) or an X."""
    inner = _strip_optional(tp)
    if inner is Any:
        return lambda value, _: value
    inner_hook = conv.get_structure_hook(inner)

    def structure(value: Any, _: Any) -> Any:
        if value is None:
            return None
        return inner_hook(value, inner)

    return structure


def _tagged_union(
    conv: cattrs.Converter, pick: Callable[[JsonObject], type | None], what: str
) -> Callable[[Any, Any], Any]:
    """A union of models told apart by `pick`; a dict that fits none stays a `RawItem`."""

    hooks: dict[type, Callable[[Any, Any], Any]] = {}  # filled on first use of each class

    def structure(value: Any, _: Any) -> Any:
        if type(value) is not dict:
            raise TypeError(f"{what}: expected an object, got {_json_type(value)}")
        cls = pick(value)
        if cls is None:
            return RawItem(value)
        hook = hooks.get(cls)
        if hook is None:
            hook = hooks[cls] = conv.get_structure_hook(cls)
        return hook(value, cls)

    return structure


def _by_tag(tag: str, mapping: Mapping[str, type]) -> Callable[[JsonObject], type | None]:
    def pick(value: JsonObject) -> type | None:
        key = value.get(tag)
        return mapping.get(key) if isinstance(key, str) else None

    return pick


def _pick_tool_call_content(value: JsonObject) -> type | None:
    kind = value.get("type")
    if kind == "content":
        return m.ContentToolCallContent
    if kind == "terminal":
        return m.TerminalToolCallContent
    if kind == "diff":
        # v2 diffs carry `changes`; v1 diffs a `path` with whole texts.
        if "changes" in value:
            return m.DiffV2
        if "path" in value:
            return m.DiffV1
    return None


def _pick_resource(value: JsonObject) -> type | None:
    if "text" in value:
        return m.TextResourceContents
    if "blob" in value:
        return m.BlobResourceContents
    return None


def _build_converter() -> AcpConverter:
    conv = AcpConverter(detailed_validation=True, forbid_extra_keys=False)
    conv.register_structure_hook(str, _structure_str)
    conv.register_structure_hook(int, _structure_int)
    conv.register_structure_hook(float, _structure_float)
    conv.register_structure_hook(bool, _structure_bool)
    conv.register_structure_hook_func(lambda t: t == JsonObject, _structure_json_object)
    conv.register_structure_hook_func(lambda t: t == m.RequestId, _structure_request_id)
    conv.register_structure_hook_factory(_is_list, _make_list_structure)
    conv.register_structure_hook_factory(_is_patch_union, _make_patch_structure)
    conv.register_structure_hook_factory(_is_model, _make_model_structure)
    conv.register_unstructure_hook_factory(_is_model, _make_model_unstructure)
    conv.register_unstructure_hook(RawItem, lambda item: item.data)
    conv.register_unstructure_hook(Omitted, _refuse_omitted)

    unions: list[tuple[Any, Callable[[JsonObject], type | None], str]] = [
        (m.ContentBlock, _by_tag("type", _CONTENT_BLOCKS), "content block"),
        (m.ToolCallContent, _pick_tool_call_content, "tool call content"),
        (m.EmbeddedResourceResource, _pick_resource, "embedded resource"),
        (m.RequestPermissionOutcome, _by_tag("outcome", _OUTCOMES), "permission outcome"),
    ]
    for union, pick, what in unions:
        hook = _tagged_union(conv, pick, what)
        conv.register_structure_hook_func(lambda t, union=union: t == union, hook)
    return conv


def _refuse_omitted(_: Any) -> Any:
    # Reaching this means an OMITTED value sat where it cannot be left out (e.g. in a list).
    raise AcpModelError("OMITTED cannot be written to the wire outside an optional field")


_CONTENT_BLOCKS: dict[str, type] = {
    "text": m.TextContent,
    "image": m.ImageContent,
    "audio": m.AudioContent,
    "resource_link": m.ResourceLink,
    "resource": m.EmbeddedResource,
}

_OUTCOMES: dict[str, type] = {
    "selected": m.SelectedPermissionOutcome,
    "cancelled": m.CancelledPermissionOutcome,
}

_UNION_NAMES: dict[Any, str] = {
    m.ContentBlock: "ContentBlock",
    m.ToolCallContent: "ToolCallContent",
    m.EmbeddedResourceResource: "EmbeddedResourceResource",
    m.RequestPermissionOutcome: "RequestPermissionOutcome",
}

converter: AcpConverter = _build_converter()
"""The converter for every ACP model (structure raises `AcpModelError`)."""


def structure(obj: Any, cls: type[T]) -> T:
    """Raw JSON -> model; `AcpModelError` names the wrong field."""
    return converter.structure(obj, cls)


def unstructure(obj: Any) -> Any:
    """Model -> JSON-ready value (OMITTED fields absent, None as null, extras written back)."""
    return converter.unstructure(obj)


def permission_tool_call(request: m.RequestPermissionRequest) -> m.ToolCallUpdate | None:
    """The tool call a permission request is about: v1 `toolCall`, or the `toolCall` of a v2
    `{"type": "tool_call"}` subject. None for other subjects (a command, an unknown type).
    Raises `AcpModelError` when a tool-call subject's `toolCall` is malformed."""
    if isinstance(request.tool_call, m.ToolCallUpdate):
        return request.tool_call
    subject = request.subject
    if isinstance(subject, dict) and subject.get("type") == "tool_call":
        return structure(subject.get("toolCall"), m.ToolCallUpdate)
    return None


# --------------------------------------------------------------------------- builders

VersionMode = Literal["auto", 1, 2]


# acpls asks the agent's questions in the editor, as forms and as URLs to open (contract 8).
ELICITATION_CAPABILITIES: JsonObject = {"form": {}, "url": {}}


def initialize_params(
    version_mode: VersionMode,
    *,
    fs: bool,
    terminal: bool,
    terminal_output_meta: bool,
    client_name: str,
    client_version: str,
    client_title: str | None = None,
) -> JsonObject:
    """`initialize` params for the protocol version asked.

    1: v1 fields (`clientCapabilities` with `fs`/`terminal`, `clientInfo`). 2: v2 fields
    (`capabilities`, `info`). "auto": asks for version 2 and carries both sets, so an agent that
    answers 1 still knows what acpls offers. Both official schemas leave InitializeRequest open
    (no `additionalProperties: false`), so the "auto" payload validates against v1 and v2.

    `terminal_output_meta` advertises the v1 `_meta.terminal_output` extension (agents then put
    terminal output in tool-call `_meta` instead of asking for client terminals).
    """
    if version_mode not in ("auto", 1, 2):
        raise ValueError(f"protocol version mode must be 'auto', 1 or 2, not {version_mode!r}")
    info = m.Implementation(name=client_name, version=client_version)
    if client_title is not None:
        info.title = client_title
    request = m.InitializeRequest(protocol_version=1 if version_mode == 1 else 2)
    if version_mode in ("auto", 1):
        v1_caps: JsonObject = {
            "fs": {"readTextFile": fs, "writeTextFile": fs},
            "terminal": terminal,
            "elicitation": dict(ELICITATION_CAPABILITIES),
        }
        if terminal_output_meta:
            v1_caps["_meta"] = {"terminal_output": True}
        request.client_capabilities = v1_caps
        request.client_info = info
    if version_mode in ("auto", 2):
        # v2 has no client fs/terminal methods (terminals are the agent's): only questions.
        request.capabilities = {"elicitation": dict(ELICITATION_CAPABILITIES)}
        request.info = info
    return unstructure(request)


def set_config_option_params(
    version: int, session_id: str, config_id: str, value: str | bool
) -> JsonObject:
    """`session/set_config_option` params with the value tagged the way each version wants."""
    request = m.SetSessionConfigOptionRequest(
        session_id=session_id, config_id=config_id, value=value
    )
    if isinstance(value, bool):
        request.type = "boolean"
    elif version >= 2:
        request.type = "id"
    return unstructure(request)


def config_options_of(result: Any) -> list[JsonObject]:
    """The options of the agent's `session/set_config_option` answer, each the agent's object
    as sent; `AcpModelError` names the field of an answer that does not fit."""
    return structure(result, m.SetSessionConfigOptionResponse).config_options


def permission_selected(option_id: str) -> JsonObject:
    """`session/request_permission` result for a chosen option."""
    return unstructure(
        m.RequestPermissionResponse(outcome=m.SelectedPermissionOutcome(option_id=option_id))
    )


def permission_cancelled() -> JsonObject:
    """`session/request_permission` result for a dismissed or cancelled prompt."""
    return unstructure(m.RequestPermissionResponse(outcome=m.CancelledPermissionOutcome()))
