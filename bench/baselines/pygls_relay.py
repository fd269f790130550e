"""Baseline (b): a naive relay on pygls, one editor notification per agent chunk.

The obvious way to write acpls' relay: a pygls `LanguageServer`, the agent as an asyncio
subprocess, each `terminal_output_chunk` base64- and UTF-8-decoded and sent at once through
pygls' own `notify` (which unstructures the params, `json.dumps` them with a default hook and
logs the body). Nothing is coalesced.
"""

from __future__ import annotations

import asyncio
import base64
import codecs
import json
from typing import Any

from pygls.lsp.server import LanguageServer

server = LanguageServer("pygls-relay", "1")
agent: dict[str, Any] = {}
state: dict[str, Any] = {"next_id": 0, "pending": {}, "turns": {}, "decoders": {}, "tasks": set()}


@server.feature("initialize")
def on_initialize(ls: LanguageServer, params: Any) -> None:
    options = params.initialization_options["agent"]
    agent["argv"] = [options["command"], *options.get("args", [])]


async def request(method: str, params: Any) -> Any:
    state["next_id"] += 1
    msg_id = state["next_id"]
    future = asyncio.get_running_loop().create_future()
    state["pending"][msg_id] = future
    line = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    agent["proc"].stdin.write(line.encode() + b"\n")
    return await future


async def read_agent(ls: LanguageServer) -> None:
    stdout = agent["proc"].stdout
    while True:
        line = await stdout.readline()
        if not line:
            return
        message = json.loads(line)
        if message.get("method") == "session/update":
            on_update(ls, message["params"])
        elif "id" in message and "method" not in message:
            future = state["pending"].pop(message["id"], None)
            if future is not None:
                future.set_result(message.get("result"))


def on_update(ls: LanguageServer, params: dict[str, Any]) -> None:
    update = params["update"]
    kind = update.get("sessionUpdate")
    if kind == "terminal_output_chunk":
        key = (params["sessionId"], update["terminalId"])
        decoder = state["decoders"].get(key)
        if decoder is None:
            decoder = state["decoders"][key] = codecs.getincrementaldecoder("utf-8")("replace")
        text = decoder.decode(base64.b64decode(update["data"]))
        ls.protocol.notify(
            "acpls/terminalOutput",
            {"sessionId": key[0], "terminalId": key[1], "text": text},
        )
    elif kind == "state_update" and update.get("state") == "idle":
        future = state["turns"].pop(params["sessionId"], None)
        if future is not None:
            future.set_result(update.get("stopReason", "end_turn"))


@server.command("acpls.newSession")
async def new_session(ls: LanguageServer, *args: Any) -> Any:
    if "proc" not in agent:
        agent["proc"] = await asyncio.create_subprocess_exec(
            *agent["argv"],
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=1 << 22,
        )
        task = asyncio.get_running_loop().create_task(read_agent(ls))
        state["tasks"].add(task)
        await request("initialize", {"protocolVersion": 2, "info": {"name": "b", "version": "1"}})
    result = await request("session/new", {"cwd": "/bench/ws", "mcpServers": []})
    return {"sessionId": result["sessionId"]}


@server.command("acpls.prompt")
async def prompt(ls: LanguageServer, *args: Any) -> Any:
    arg = args[0]
    session_id = arg.sessionId if hasattr(arg, "sessionId") else arg["sessionId"]
    text = arg.text if hasattr(arg, "text") else arg["text"]
    done = asyncio.get_running_loop().create_future()
    state["turns"][session_id] = done
    await request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    )
    stop = await done
    return {"sessionId": session_id, "stopReason": stop}


if __name__ == "__main__":
    server.start_io()
