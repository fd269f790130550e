"""The scripted model server: each API family's framing over real HTTP on loopback, the script's
progress by conversation (not by request count), side calls, stalls and the request log."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.model_server.framing import count_runs, example_value
from tests.model_server.script import SCRIPTS_DIR, ScriptError, load_script, parse_script
from tests.model_server.server import ModelServer

SCRIPT = {
    "steps": [
        {"text": "Reading it.", "tools": [{"name": "read", "input": {"path": "${ws}/a.py"}}]},
        {"tools": [{"name": "patch", "input": "*** Begin Patch\n*** End Patch\n"}]},
        {"text": "All done."},
    ],
    "side_json": {"next_speaker": "user"},
}
TOOLS_ANTHROPIC = [{"name": "read", "input_schema": {}}, {"name": "patch", "input_schema": {}}]


@pytest.fixture
def model(tmp_path: Path) -> Iterator[ModelServer]:
    with ModelServer(parse_script(SCRIPT, {"ws": "/w"}), log_path=tmp_path / "log.jsonl") as server:
        yield server


def post(server: ModelServer, path: str, body: Any, **headers: str) -> tuple[int, str, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        connection.request(
            "POST", path, json.dumps(body), {"Content-Type": "application/json", **headers}
        )
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type", ""), response.read()
    finally:
        connection.close()


def sse_events(raw: bytes) -> list[tuple[str | None, Any]]:
    events = []
    for block in raw.decode().split("\n\n"):
        if not block.strip():
            continue
        name = None
        data = None
        for line in block.splitlines():
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                data = line[len("data: ") :]
        assert data is not None, block
        events.append((name, data if data == "[DONE]" else json.loads(data)))
    return events


# --- Anthropic Messages -------------------------------------------------------------------------


def anthropic(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "model": "claude-x",
        "stream": True,
        "messages": messages,
        "tools": TOOLS_ANTHROPIC,
        **extra,
    }


def test_anthropic_stream_plays_text_then_tool_use(model: ModelServer):
    status, kind, raw = post(
        model, "/v1/messages?beta=true", anthropic([{"role": "user", "content": "go"}])
    )
    assert (status, kind) == (200, "text/event-stream")
    events = sse_events(raw)
    names = [n for n, _ in events]
    assert names == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(payload["type"] == name for name, payload in events)
    text = "".join(
        p["delta"]["text"] for n, p in events if n == "content_block_delta" and p["index"] == 0
    )
    assert text == "Reading it."
    tool = events[5][1]["content_block"]
    assert (tool["type"], tool["name"]) == ("tool_use", "read")
    assert json.loads(events[6][1]["delta"]["partial_json"]) == {"path": "/w/a.py"}
    assert events[8][1]["delta"]["stop_reason"] == "tool_use"


def test_anthropic_system_entries_do_not_move_the_script(model: ModelServer):
    messages = [
        {"role": "user", "content": "go"},
        {"role": "system", "content": "reminder"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "read", "input": {}}],
        },
        {"role": "system", "content": "another"},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]},
        {"role": "system", "content": "and another"},
    ]
    events = sse_events(post(model, "/v1/messages", anthropic(messages))[2])
    # Step 1: the patch tool (a string input is sent as JSON of that string here).
    starts = [p["content_block"] for n, p in events if n == "content_block_start"]
    assert [b["name"] for b in starts] == ["patch"]
    assert model.requests[-1].answer == "step 1"


def test_anthropic_title_call_without_tools_is_a_side_call(model: ModelServer):
    body = {
        "model": "claude-x",
        "stream": True,
        "tools": [],
        "messages": [{"role": "user", "content": "title?"}],
    }
    events = sse_events(post(model, "/v1/messages", body)[2])
    text = "".join(p["delta"]["text"] for n, p in events if n == "content_block_delta")
    assert text == "OK"
    assert events[-2][1]["delta"]["stop_reason"] == "end_turn"
    # The side call did not use up step 0.
    post(model, "/v1/messages", anthropic([{"role": "user", "content": "go"}]))
    assert [r.answer for r in model.requests] == ["side", "step 0"]


def test_anthropic_classifier_gets_a_low_severity(model: ModelServer):
    body = {
        "model": "claude-x",
        "system": "Answer with <severity>N</severity>",
        "messages": [{"role": "user", "content": "rm -rf?"}],
    }
    status, kind, raw = post(model, "/v1/messages", body)
    assert (status, kind) == (200, "application/json")
    reply = json.loads(raw)
    assert reply["content"] == [{"type": "text", "text": "<severity>1</severity>"}]
    assert reply["stop_reason"] == "end_turn"


def test_anthropic_non_streaming_main_call(model: ModelServer):
    body = anthropic([{"role": "user", "content": "go"}], stream=False)
    reply = json.loads(post(model, "/v1/messages", body)[2])
    assert [c["type"] for c in reply["content"]] == ["text", "tool_use"]
    assert reply["content"][1]["input"] == {"path": "/w/a.py"}
    assert reply["stop_reason"] == "tool_use"


# --- OpenAI Chat Completions --------------------------------------------------------------------

TOOLS_CHAT = [
    {"type": "function", "function": {"name": "read", "parameters": {}}},
    {"type": "function", "function": {"name": "patch", "parameters": {}}},
]


def test_chat_stream_ends_with_done_and_carries_tool_arguments(model: ModelServer):
    body = {
        "model": "m",
        "stream": True,
        "tools": TOOLS_CHAT,
        "messages": [{"role": "user", "content": "go"}],
    }
    events = sse_events(post(model, "/v1/chat/completions", body)[2])
    assert all(name is None for name, _ in events)
    assert events[-1][1] == "[DONE]"
    chunks = [p for _, p in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    deltas = [c["choices"][0]["delta"] for c in chunks]
    assert "".join(d.get("content") or "" for d in deltas) == "Reading it."
    (call,) = [tc for d in deltas for tc in d.get("tool_calls", [])]
    assert call["function"]["name"] == "read"
    assert json.loads(call["function"]["arguments"]) == {"path": "/w/a.py"}
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["usage"]["total_tokens"] > 0


def test_chat_progress_counts_assistant_turns_and_tool_results(model: ModelServer):
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "a"}]},
        {"role": "tool", "tool_call_id": "a", "content": [{"type": "text", "text": "x"}]},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "b"}]},
        {"role": "tool", "tool_call_id": "b", "content": "ok"},
    ]
    body = {"model": "m", "stream": True, "tools": TOOLS_CHAT, "messages": messages}
    events = sse_events(post(model, "/v1/chat/completions", body)[2])
    deltas = [p["choices"][0]["delta"] for _, p in events[:-1]]
    assert "".join(d.get("content") or "" for d in deltas) == "All done."
    assert events[-2][1]["choices"][0]["finish_reason"] == "stop"


def test_chat_forced_schema_tool_gets_valid_arguments(model: ModelServer):
    schema = {
        "type": "object",
        "properties": {
            "next_speaker": {"type": "string", "enum": ["model", "user"]},
            "reasoning": {"type": "string"},
            "allow": {"type": "boolean"},
        },
        "required": ["next_speaker", "reasoning", "allow"],
    }
    body = {
        "model": "m",
        "tools": [
            {"type": "function", "function": {"name": "respond_in_schema", "parameters": schema}}
        ],
        "tool_choice": "required",
        "messages": [{"role": "user", "content": "classify"}],
    }
    reply = json.loads(post(model, "/v1/chat/completions", body)[2])
    (call,) = reply["choices"][0]["message"]["tool_calls"]
    assert call["function"]["name"] == "respond_in_schema"
    assert json.loads(call["function"]["arguments"]) == {
        "next_speaker": "user",
        "reasoning": "",
        "allow": False,
    }
    assert model.requests[-1].answer == "side"


# --- OpenAI Responses ---------------------------------------------------------------------------

TOOLS_RESPONSES = [
    {"type": "function", "name": "read", "parameters": {}},
    {"type": "custom", "name": "patch"},
]


def test_responses_stream_events_end_with_completed(model: ModelServer):
    first = {
        "model": "gpt",
        "stream": True,
        "tools": TOOLS_RESPONSES,
        "input": [
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "d"}],
            },
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        ],
    }
    events = sse_events(post(model, "/v1/responses", first)[2])
    assert all(name == payload["type"] for name, payload in events)
    assert events[0][0] == "response.created"
    assert events[-1][0] == "response.completed"
    assert [p["sequence_number"] for _, p in events] == list(range(len(events)))
    done = [p["item"] for n, p in events if n == "response.output_item.done"]
    assert [i["type"] for i in done] == ["message", "function_call"]
    assert done[0]["content"][0]["text"] == "Reading it."
    assert json.loads(done[1]["arguments"]) == {"path": "/w/a.py"}
    assert events[-1][1]["response"]["output"] == done

    second = {
        **first,
        "input": [
            *first["input"],
            done[0],
            done[1],
            {"type": "function_call_output", "call_id": done[1]["call_id"], "output": "x"},
        ],
    }
    events = sse_events(post(model, "/v1/responses", second)[2])
    done = [p["item"] for n, p in events if n == "response.output_item.done"]
    assert [(i["type"], i["name"]) for i in done] == [("custom_tool_call", "patch")]
    assert done[0]["input"] == "*** Begin Patch\n*** End Patch\n"


def test_responses_websocket_upgrade_is_refused(model: ModelServer):
    connection = http.client.HTTPConnection("127.0.0.1", model.port, timeout=10)
    connection.request(
        "GET", "/v1/responses", headers={"Upgrade": "websocket", "Connection": "Upgrade"}
    )
    assert connection.getresponse().status == 404
    connection.close()


# --- Gemini -------------------------------------------------------------------------------------

TOOLS_GEMINI = [{"functionDeclarations": [{"name": "read"}, {"name": "patch"}]}]


def test_gemini_stream_sends_function_call_with_stop(model: ModelServer):
    body = {"contents": [{"role": "user", "parts": [{"text": "go"}]}], "tools": TOOLS_GEMINI}
    events = sse_events(
        post(model, "/v1beta/models/gemini-x:streamGenerateContent?alt=sse", body)[2]
    )
    parts = [part for _, p in events for part in p["candidates"][0]["content"]["parts"]]
    assert "".join(p.get("text", "") for p in parts) == "Reading it."
    assert [p["functionCall"] for p in parts if "functionCall" in p] == [
        {"name": "read", "args": {"path": "/w/a.py"}}
    ]
    assert events[-1][1]["candidates"][0]["finishReason"] == "STOP"
    assert events[-1][1]["usageMetadata"]["totalTokenCount"] > 0


def test_gemini_json_side_call_follows_its_schema(model: ModelServer):
    schema = {
        "type": "OBJECT",
        "properties": {
            "reasoning": {"type": "STRING"},
            "next_speaker": {"type": "STRING", "enum": ["model", "user"]},
        },
        "required": ["reasoning", "next_speaker"],
    }
    body = {
        "contents": [{"role": "user", "parts": [{"text": "who next?"}]}],
        "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": schema},
    }
    reply = json.loads(post(model, "/v1beta/models/gemini-x:generateContent", body)[2])
    text = reply["candidates"][0]["content"]["parts"][0]["text"]
    assert json.loads(text) == {"reasoning": "", "next_speaker": "user"}


def test_gemini_progress_counts_model_turns(model: ModelServer):
    contents = [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "read", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "read", "response": {}}}]},
    ]
    post(
        model,
        "/v1beta/models/g:streamGenerateContent?alt=sse",
        {"contents": contents, "tools": TOOLS_GEMINI},
    )
    assert model.requests[-1].answer == "step 1"


# --- stalls, extras, the log --------------------------------------------------------------------


def test_stall_holds_the_reply_until_the_client_leaves(tmp_path: Path):
    script = parse_script({"steps": [{"text": "thinking", "stall": True}]})
    with ModelServer(script) as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        body = {
            "model": "m",
            "stream": True,
            "tools": TOOLS_CHAT,
            "messages": [{"role": "user", "content": "go"}],
        }
        connection.request("POST", "/v1/chat/completions", json.dumps(body))
        response = connection.getresponse()
        assert response.status == 200
        assert server.stalled.wait(10)
        first = response.fp.readline()
        assert first.startswith(b"data: ")
        # Nothing else comes while the model stalls; the client going away ends the request.
        (stalled,) = server.requests
        assert not stalled.finished.is_set()
        response.close()
        connection.close()
        assert stalled.finished.wait(10)
        assert stalled.answer == "stall 0"


def test_past_the_end_of_the_script_the_turn_ends_with_text(model: ModelServer):
    messages = [{"role": "user", "content": "go"}] + [
        m
        for n in range(3)
        for m in (
            {"role": "assistant", "content": [{"type": "text", "text": str(n)}]},
            {"role": "user", "content": "more"},
        )
    ]
    reply = json.loads(post(model, "/v1/messages", anthropic(messages, stream=False))[2])
    assert reply["content"] == [{"type": "text", "text": "OK"}]
    assert model.requests[-1].answer == "extra 3"


def test_every_request_is_logged_in_memory_and_in_the_file(model: ModelServer, tmp_path: Path):
    post(model, "/v1/messages", anthropic([{"role": "user", "content": "go"}]))
    connection = http.client.HTTPConnection("127.0.0.1", model.port, timeout=10)
    connection.request("HEAD", "/api/hello")
    assert connection.getresponse().status == 200
    connection.close()
    assert post(model, "/nowhere", {})[0] == 404
    assert [r.answer for r in model.requests] == ["step 0", "http 200", "http 404"]
    assert all(r.finished.wait(10) for r in model.requests)
    lines = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [(entry["method"], entry["answer"]) for entry in lines] == [
        ("POST", "step 0"),
        ("HEAD", "http 200"),
        ("POST", "http 404"),
    ]
    assert lines[0]["body"]["messages"] == [{"role": "user", "content": "go"}]
    assert "#0 POST /v1/messages -> step 0" in model.format_log()


def test_gzip_request_bodies_are_read(model: ModelServer):
    import gzip

    body = gzip.compress(json.dumps(anthropic([{"role": "user", "content": "go"}])).encode())
    connection = http.client.HTTPConnection("127.0.0.1", model.port, timeout=10)
    connection.request("POST", "/v1/messages", body, {"Content-Encoding": "gzip"})
    assert connection.getresponse().status == 200
    connection.close()
    assert model.requests[-1].answer == "step 0"


# --- scripts ------------------------------------------------------------------------------------


def test_count_runs_merges_consecutive_assistant_entries_and_skips_transparent_ones():
    assert (
        count_runs(["user", "assistant", "assistant", None, "assistant", "user", "assistant"]) == 2
    )
    assert count_runs([]) == 0


def test_example_value_fills_required_fields():
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": ["string", "null"]}},
    }
    assert example_value(schema) == {"a": 0, "b": ""}
    assert example_value({"type": "object", "properties": {"x": {}}, "required": []}) == {}


def test_unknown_variable_and_unknown_step_keys_are_errors():
    with pytest.raises(ScriptError, match="missing"):
        parse_script({"steps": [{"text": "${missing}"}]})
    with pytest.raises(ScriptError, match="unknown keys"):
        parse_script({"steps": [{"txt": "typo"}]})
    with pytest.raises(ScriptError, match="non-empty"):
        parse_script({"steps": []})


@pytest.mark.parametrize(
    "path", sorted(SCRIPTS_DIR.glob("*/*.json")), ids=lambda p: f"{p.parent.name}/{p.stem}"
)
def test_every_script_file_loads(path: Path):
    text = path.read_text()
    names = {m.split("}")[0] for m in text.split("${")[1:]}
    script = load_script(path.parent.name, path.stem, **dict.fromkeys(names, "/x"))
    assert script.steps
