"""The four model API families: what a request says, and a reply in each family's framing.

For every family: `read_*` turns a request body into a `Request` (streaming or not, the tools it
offers, a forced tool, a JSON schema it wants back, how far the conversation has gone), and
`*_events` / `*_body` turn a `Reply` into that family's SSE events or JSON body.

How far the conversation has gone is the number of assistant turns already in the request: runs
of assistant entries (text, tool calls) separated by anything the user side sends (a prompt, tool
results). System and developer entries are transparent: Claude Code puts `role: "system"` entries
among the messages after the prompt, and they must not shift the script.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from typing import Any

import attrs

from tests.model_server.script import Reply, ToolCall

# SSE event: (event name or None, JSON payload or a raw string such as "[DONE]").
Event = tuple[str | None, Any]

USAGE_IN, USAGE_OUT = 12, 7


@attrs.frozen
class Request:
    family: str
    stream: bool
    model: str
    tools: tuple[str, ...]
    # The one tool the request forces the model to call (`tool_choice`), if any.
    forced_tool: str | None
    # Every tool's parameter schema by name (side calls that must call one need valid arguments).
    tool_schemas: dict[str, Any]
    # A JSON schema the reply text must follow (structured output), if asked.
    json_schema: Any
    progress: int


def count_runs(sides: Iterable[str | None]) -> int:
    """Runs of "assistant" in a sequence of "assistant" / "user" / None (transparent)."""
    runs = 0
    previous = None
    for side in sides:
        if side is None:
            continue
        if side == "assistant" and previous != "assistant":
            runs += 1
        previous = side
    return runs


# --- Anthropic Messages -------------------------------------------------------------------------


def read_anthropic(body: dict[str, Any]) -> Request:
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    choice = body.get("tool_choice") or {}
    forced = (
        choice.get("name") if isinstance(choice, dict) and choice.get("type") == "tool" else None
    )
    sides = []
    for message in body.get("messages") or []:
        role = message.get("role") if isinstance(message, dict) else None
        sides.append(role if role in ("assistant", "user") else None)
    schema = None
    output_format = body.get("output_format")
    if isinstance(output_format, dict) and output_format.get("type") == "json_schema":
        schema = output_format.get("schema")
    return Request(
        family="anthropic",
        stream=bool(body.get("stream")),
        model=str(body.get("model", "claude")),
        tools=tuple(str(t.get("name")) for t in tools),
        forced_tool=forced,
        tool_schemas={str(t.get("name")): t.get("input_schema") for t in tools},
        json_schema=schema,
        progress=count_runs(sides),
    )


def anthropic_events(reply: Reply, model: str) -> Iterator[Event]:
    message_id = f"msg_{time.monotonic_ns()}"
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": USAGE_IN, "output_tokens": 1},
            },
        },
    )
    if reply.stall:
        return
    index = 0
    if reply.text:
        block = {"type": "text", "text": ""}
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        )
        for piece in _halves(reply.text):
            delta = {"type": "text_delta", "text": piece}
            yield (
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": delta},
            )
        yield ("content_block_stop", {"type": "content_block_stop", "index": 0})
        index = 1
    for offset, tool in enumerate(reply.tools):
        at = index + offset
        block = {"type": "tool_use", "id": _anthropic_id(tool), "name": tool.name, "input": {}}
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": at, "content_block": block},
        )
        delta = {"type": "input_json_delta", "partial_json": json.dumps(tool.input)}
        yield ("content_block_delta", {"type": "content_block_delta", "index": at, "delta": delta})
        yield ("content_block_stop", {"type": "content_block_stop", "index": at})
    stop = "tool_use" if reply.tools else "end_turn"
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": USAGE_OUT},
        },
    )
    yield ("message_stop", {"type": "message_stop"})


def anthropic_body(reply: Reply, model: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    for tool in reply.tools:
        content.append(
            {"type": "tool_use", "id": _anthropic_id(tool), "name": tool.name, "input": tool.input}
        )
    return {
        "id": f"msg_{time.monotonic_ns()}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if reply.tools else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": USAGE_IN, "output_tokens": USAGE_OUT},
    }


def _anthropic_id(tool: ToolCall) -> str:
    return f"toolu_{tool.call_id}"


# --- OpenAI Chat Completions --------------------------------------------------------------------


def read_chat(body: dict[str, Any]) -> Request:
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    names = tuple(str((t.get("function") or t).get("name")) for t in tools)
    schemas = {
        str((t.get("function") or t).get("name")): (t.get("function") or t).get("parameters")
        for t in tools
    }
    choice = body.get("tool_choice")
    forced = None
    if isinstance(choice, dict):
        forced = (choice.get("function") or {}).get("name") or choice.get("name")
    elif choice == "required" and len(names) == 1:
        forced = names[0]
    sides = []
    for message in body.get("messages") or []:
        role = message.get("role") if isinstance(message, dict) else None
        sides.append(
            "assistant" if role == "assistant" else "user" if role in ("user", "tool") else None
        )
    schema = None
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
    return Request(
        family="chat",
        stream=bool(body.get("stream")),
        model=str(body.get("model", "m")),
        tools=names,
        forced_tool=forced,
        tool_schemas=schemas,
        json_schema=schema,
        progress=count_runs(sides),
    )


def chat_events(reply: Reply, model: str) -> Iterator[Event]:
    chunk_id = f"chatcmpl-{time.monotonic_ns()}"
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> Event:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        payload = {
            "id": chunk_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [choice],
            **extra,
        }
        return (None, payload)

    yield chunk({"role": "assistant", "content": ""})
    if reply.stall:
        return
    for piece in _halves(reply.text or ""):
        yield chunk({"content": piece})
    for index, tool in enumerate(reply.tools):
        call = {
            "index": index,
            "id": tool.call_id,
            "type": "function",
            "function": {"name": tool.name, "arguments": _arguments(tool)},
        }
        yield chunk({"tool_calls": [call]})
    finish = "tool_calls" if reply.tools else "stop"
    yield chunk({}, finish, usage=_chat_usage())
    yield (None, "[DONE]")


def chat_body(reply: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tools:
        message["tool_calls"] = [
            {
                "id": tool.call_id,
                "type": "function",
                "function": {"name": tool.name, "arguments": _arguments(tool)},
            }
            for tool in reply.tools
        ]
    return {
        "id": f"chatcmpl-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tools else "stop",
            }
        ],
        "usage": _chat_usage(),
    }


def _chat_usage() -> dict[str, int]:
    return {
        "prompt_tokens": USAGE_IN,
        "completion_tokens": USAGE_OUT,
        "total_tokens": USAGE_IN + USAGE_OUT,
    }


# --- OpenAI Responses ---------------------------------------------------------------------------

_RESPONSES_ASSISTANT_ITEMS = {
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "web_search_call",
    "reasoning",
}


def read_responses(body: dict[str, Any]) -> Request:
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict) and t.get("name")]
    names = tuple(str(t["name"]) for t in tools)
    choice = body.get("tool_choice")
    forced = choice.get("name") if isinstance(choice, dict) else None
    items = body.get("input")
    sides: list[str | None] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        role = item.get("role")
        if kind in _RESPONSES_ASSISTANT_ITEMS or (kind == "message" and role == "assistant"):
            sides.append("assistant")
        elif kind == "message" and role in ("system", "developer"):
            sides.append(None)
        else:
            sides.append("user")
    schema = None
    text_format = (body.get("text") or {}).get("format")
    if isinstance(text_format, dict) and text_format.get("type") == "json_schema":
        schema = text_format.get("schema")
    return Request(
        family="responses",
        stream=bool(body.get("stream")),
        model=str(body.get("model", "m")),
        tools=names,
        forced_tool=forced,
        tool_schemas={str(t["name"]): t.get("parameters") for t in tools},
        json_schema=schema,
        progress=count_runs(sides),
    )


def responses_events(reply: Reply, model: str) -> Iterator[Event]:
    response_id = f"resp_{time.monotonic_ns()}"
    sequence = iter(range(1_000_000))

    def event(kind: str, **fields: Any) -> Event:
        return (kind, {"type": kind, "sequence_number": next(sequence), **fields})

    shell = _response_object(response_id, model, "in_progress", [])
    yield event("response.created", response=shell)
    if reply.stall:
        yield event("response.in_progress", response=shell)
        return
    items = _response_items(reply)
    for index, item in enumerate(items):
        yield event("response.output_item.added", output_index=index, item=_in_progress(item))
        if item["type"] == "message":
            text = item["content"][0]["text"]
            for piece in _halves(text):
                yield event(
                    "response.output_text.delta",
                    item_id=item["id"],
                    output_index=index,
                    content_index=0,
                    delta=piece,
                )
        elif item["type"] == "function_call":
            yield event(
                "response.function_call_arguments.delta",
                item_id=item["id"],
                output_index=index,
                delta=item["arguments"],
            )
        yield event("response.output_item.done", output_index=index, item=item)
    done = _response_object(response_id, model, "completed", items)
    yield event("response.completed", response=done)


def responses_body(reply: Reply, model: str) -> dict[str, Any]:
    return _response_object(
        f"resp_{time.monotonic_ns()}", model, "completed", _response_items(reply)
    )


def _response_items(reply: Reply) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if reply.text:
        items.append(
            {
                "type": "message",
                "id": f"msg_{time.monotonic_ns()}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    for tool in reply.tools:
        if isinstance(tool.input, str):
            items.append(
                {
                    "type": "custom_tool_call",
                    "id": f"ctc_{tool.call_id}",
                    "call_id": tool.call_id,
                    "name": tool.name,
                    "input": tool.input,
                    "status": "completed",
                }
            )
        else:
            items.append(
                {
                    "type": "function_call",
                    "id": f"fc_{tool.call_id}",
                    "call_id": tool.call_id,
                    "name": tool.name,
                    "arguments": json.dumps(tool.input),
                    "status": "completed",
                }
            )
    return items


def _in_progress(item: dict[str, Any]) -> dict[str, Any]:
    started = {**item, "status": "in_progress"}
    if item["type"] == "message":
        started["content"] = []
    elif item["type"] == "function_call":
        started["arguments"] = ""
    return started


def _response_object(
    response_id: str, model: str, status: str, output: list[dict[str, Any]]
) -> dict[str, Any]:
    usage = {
        "input_tokens": USAGE_IN,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": USAGE_OUT,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": USAGE_IN + USAGE_OUT,
    }
    return {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": model,
        "output": output,
        "usage": usage if status == "completed" else None,
    }


# --- Gemini -------------------------------------------------------------------------------------


def read_gemini(body: dict[str, Any], model: str, stream: bool) -> Request:
    declarations = [
        d
        for tool in body.get("tools") or []
        if isinstance(tool, dict)
        for d in tool.get("functionDeclarations") or []
        if isinstance(d, dict)
    ]
    names = tuple(str(d.get("name")) for d in declarations)
    config = (body.get("toolConfig") or {}).get("functionCallingConfig") or {}
    allowed = config.get("allowedFunctionNames") or []
    forced = allowed[0] if config.get("mode") == "ANY" and len(allowed) == 1 else None
    sides = []
    for content in body.get("contents") or []:
        role = content.get("role") if isinstance(content, dict) else None
        sides.append("assistant" if role == "model" else "user")
    generation = body.get("generationConfig") or {}
    schema = generation.get("responseJsonSchema") or generation.get("responseSchema")
    return Request(
        family="gemini",
        stream=stream,
        model=model,
        tools=names,
        forced_tool=forced,
        tool_schemas={
            str(d.get("name")): d.get("parametersJsonSchema") or d.get("parameters")
            for d in declarations
        },
        json_schema=schema,
        progress=count_runs(sides),
    )


def gemini_events(reply: Reply, model: str) -> Iterator[Event]:
    if reply.stall:
        yield (None, _gemini_chunk([{"text": ""}], model, None))
        return
    pieces = _halves(reply.text or "")
    for piece in pieces[:-1]:
        yield (None, _gemini_chunk([{"text": piece}], model, None))
    last: list[dict[str, Any]] = [{"text": pieces[-1]}] if pieces and pieces[-1] else []
    last += [{"functionCall": {"name": t.name, "args": t.input}} for t in reply.tools]
    yield (None, _gemini_chunk(last or [{"text": ""}], model, "STOP"))


def gemini_body(reply: Reply, model: str) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"text": reply.text}] if reply.text else []
    parts += [{"functionCall": {"name": t.name, "args": t.input}} for t in reply.tools]
    return _gemini_chunk(parts or [{"text": ""}], model, "STOP")


def _gemini_chunk(parts: list[dict[str, Any]], model: str, finish: str | None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": model}
    if finish:
        chunk["usageMetadata"] = {
            "promptTokenCount": USAGE_IN,
            "candidatesTokenCount": USAGE_OUT,
            "totalTokenCount": USAGE_IN + USAGE_OUT,
        }
    return chunk


# --- shared -------------------------------------------------------------------------------------


def sse(events: Iterable[Event]) -> Iterator[bytes]:
    for name, payload in events:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        head = f"event: {name}\n" if name else ""
        yield f"{head}data: {data}\n\n".encode()


def _halves(text: str) -> list[str]:
    """Text in two deltas (so clients that join deltas are exercised), or one if it is short."""
    if len(text) < 2:
        return [text] if text else []
    middle = len(text) // 2
    return [text[:middle], text[middle:]]


def _arguments(tool: ToolCall) -> str:
    return tool.input if isinstance(tool.input, str) else json.dumps(tool.input)


def example_value(schema: Any, overrides: dict[str, Any] | None = None) -> Any:
    """A small value valid for a JSON schema: required properties, first enum value, empty
    strings, zeros, false; `overrides` replaces properties by name at any depth."""
    overrides = overrides or {}
    if not isinstance(schema, dict):
        return {}
    if schema.get("enum"):
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return example_value(schema[key][0], overrides)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    kind = str(kind).lower() if kind else ("object" if "properties" in schema else "string")
    if kind == "object":
        properties = schema.get("properties") or {}
        required = schema.get("required", list(properties))
        return {
            name: overrides[name]
            if name in overrides
            else example_value(properties.get(name), overrides)
            for name in required
        }
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return ""
