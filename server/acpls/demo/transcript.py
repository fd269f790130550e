"""`make demo-transcript`: the demo turn as a readable live transcript of what an editor receives.

It plays the editor: starts `acpls` over stdio in custom mode on a copy of the sample workspace,
asks the demo agent to fix the failing test, and prints every `acpls/*` message as it arrives:
streamed text, thoughts, the plan, tool calls updated in place, where follow-along moves, the
permission prompt with the diff preview, and the terminal output with its colours. Edits the
editor is asked to apply are applied to the copy, as an editor would.

Run `python -m acpls.demo.transcript [--ask] [--workspace DIR] [--protocol auto|1|2]`; `--ask`
lets you answer the permission prompt yourself.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acpls.translate.text_edits import apply_text_edits

SAMPLE = Path(__file__).with_name("workspace")
PROMPT = "The tests in test_calc.py fail. Find the bug, fix it, and run the tests."

DIM, BOLD, RESET = "\x1b[2m", "\x1b[1m", "\x1b[0m"
CYAN, GREEN, YELLOW, RED, MAGENTA = "\x1b[36m", "\x1b[32m", "\x1b[33m", "\x1b[31m", "\x1b[35m"
STATUS_COLOUR = {"completed": GREEN, "failed": RED, "cancelled": YELLOW, "in_progress": CYAN}


def _path(uri: str) -> str:
    return unquote(urlparse(uri).path)


class Printer:
    """Turns editor-side messages into lines a person can follow."""

    def __init__(self, root: Path, out: Any = sys.stdout) -> None:
        self.root = root
        self.out = out
        self._stream: tuple[str, str] | None = None  # (role, messageId) being streamed
        self._tool_status: dict[str, str] = {}

    def _short(self, path: str) -> str:
        try:
            return str(Path(path).relative_to(self.root))
        except ValueError:
            return path

    def _line(self, text: str) -> None:
        if self._stream is not None:
            self.out.write("\n")
            self._stream = None
        self.out.write(text + "\n")
        self.out.flush()

    def session_update(self, update: dict[str, Any]) -> None:
        kind = update.get("sessionUpdate")
        if kind == "message_chunk":
            self._chunk(update)
        elif kind == "message":
            text = "".join(
                c.get("text", "") for c in update.get("content", []) if isinstance(c, dict)
            )
            self._line(f"{BOLD}{update.get('role')}:{RESET} {text}")
        elif kind == "tool_call":
            self._tool_call(update["toolCall"])
        elif kind == "plan":
            marks = {"completed": "✓", "in_progress": "▸", "pending": "·"}
            entries = update.get("entries", [])
            lines = [f"  {marks.get(e.get('status'), '?')} {e.get('content')}" for e in entries]
            self._line(f"{MAGENTA}plan{RESET}\n" + "\n".join(lines))
        elif kind == "state":
            reason = f" ({update['stopReason']})" if update.get("stopReason") else ""
            self._line(f"{DIM}[session {update.get('state')}{reason}]{RESET}")
        elif kind in ("available_commands", "modes", "config_options", "usage", "session_info"):
            self._line(f"{DIM}[{kind}: {_summary(update)}]{RESET}")
        else:
            self._line(f"{DIM}[{kind}] {json.dumps(update)[:120]}{RESET}")

    def _chunk(self, update: dict[str, Any]) -> None:
        role, message_id = str(update.get("role")), str(update.get("messageId"))
        content = update.get("content") or {}
        text = content.get("text", "") if isinstance(content, dict) else ""
        if self._stream != (role, message_id):
            if self._stream is not None:
                self.out.write("\n")
            label = {
                "agent": f"{BOLD}agent:{RESET} ",
                "thought": f"{DIM}thinking: ",
                "user": "you: ",
            }
            self.out.write(label.get(role, f"{role}: "))
            self._stream = (role, message_id)
        self.out.write(f"{DIM}{text}{RESET}" if role == "thought" else text)
        self.out.flush()

    def _tool_call(self, call: dict[str, Any]) -> None:
        call_id, status = str(call.get("toolCallId")), str(call.get("status") or "pending")
        if self._tool_status.get(call_id) == status:
            return
        self._tool_status[call_id] = status
        colour = STATUS_COLOUR.get(status, YELLOW)
        kind, title = call.get("kind", "tool"), call.get("title")
        self._line(f"{colour}● {kind}{RESET} {title} {DIM}[{status}]{RESET}")

    def follow(self, params: dict[str, Any]) -> None:
        line = params.get("range", {}).get("start", {}).get("line")
        where = self._short(_path(params["uri"])) + (f":{line + 1}" if line is not None else "")
        self._line(f"{CYAN}  → follow: {where}{RESET}")

    def permission(self, params: dict[str, Any]) -> None:
        title = params.get("title") or params["toolCall"].get("title")
        self._line(f"{YELLOW}{BOLD}permission:{RESET} {title}")
        for change in (params.get("preview") or {}).get("documentChanges", []):
            document = change.get("textDocument")
            if document:
                for edit in change.get("edits", []):
                    start = edit["range"]["start"]["line"] + 1
                    where = f"{self._short(_path(document['uri']))}:{start}"
                    self._line(f"  {where} {GREEN}+ {edit['newText'].rstrip()}{RESET}")
        for number, option in enumerate(params["options"], 1):
            self._line(f"  {number}. {option['name']} {DIM}({option['kind']}){RESET}")

    def terminal_update(self, params: dict[str, Any]) -> None:
        status = params.get("exitStatus")
        if status is not None:
            code = status.get("exitCode", status.get("signal", "?"))
            self._line(f"{DIM}  [terminal {params['terminalId']} exited: {code}]{RESET}")
        elif params.get("command"):
            self._line(f"{DIM}  [terminal {params['terminalId']}: $ {params['command']}]{RESET}")

    def terminal_output(self, params: dict[str, Any]) -> None:
        if self._stream is not None:
            self.out.write("\n")
            self._stream = None
        text = params["text"].replace("\r\n", "\n")
        self.out.write("".join(f"  │ {line}\n" for line in text.splitlines()))
        self.out.flush()


def _summary(update: dict[str, Any]) -> str:
    if "availableCommands" in update:
        return ", ".join("/" + c.get("name", "?") for c in update["availableCommands"])
    if "currentModeId" in update:
        return f"mode {update['currentModeId']}"
    if "configOptions" in update:
        return ", ".join(str(o.get("name")) for o in update["configOptions"])
    if "used" in update:
        return f"{update['used']}/{update['size']} tokens"
    return str(update.get("title", ""))


class EditorClient:
    """Just enough of an LSP client: framing, requests, and the server's requests."""

    def __init__(self, process: asyncio.subprocess.Process, printer: Printer, ask: bool) -> None:
        self.process = process
        self.printer = printer
        self.ask = ask
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def request(self, method: str, params: Any) -> Any:
        self._next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = future
        self._send({"id": self._next_id, "method": method, "params": params})
        return await future

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    async def read_forever(self) -> None:
        reader = self.process.stdout
        assert reader is not None
        while True:
            length = 0
            while (line := await reader.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if line == b"":
                return
            message = json.loads(await reader.readexactly(length))
            await self._handle(message)

    async def _handle(self, message: dict[str, Any]) -> None:
        if "method" not in message:
            future = self._pending.pop(message.get("id", -1), None)
            if future is not None and not future.done():
                if "error" in message:
                    future.set_exception(RuntimeError(message["error"].get("message")))
                else:
                    future.set_result(message.get("result"))
            return
        method, params = message["method"], message.get("params") or {}
        handler = {
            "acpls/sessionUpdate": lambda p: self.printer.session_update(p["update"]),
            "acpls/followAgent": self.printer.follow,
            "acpls/terminalUpdate": self.printer.terminal_update,
            "acpls/terminalOutput": self.printer.terminal_output,
        }.get(method)
        if handler is not None:
            handler(params)
        elif method == "window/showMessage":
            self.printer._line(f"{DIM}[message] {params.get('message')}{RESET}")
        if "id" in message:
            result = await self._answer(method, params)
            self._send({"id": message["id"], "result": result})

    async def _answer(self, method: str, params: dict[str, Any]) -> Any:
        if method == "acpls/requestPermission":
            self.printer.permission(params)
            return {"optionId": await self._choose(params["options"])}
        if method == "workspace/applyEdit":
            return apply_workspace_edit(params["edit"])
        if method == "window/showMessageRequest":
            actions = params.get("actions") or []
            return actions[0] if actions else None
        if method == "window/showDocument":
            return {"success": True}
        return None

    async def _choose(self, options: list[dict[str, Any]]) -> str:
        if self.ask and sys.stdin.isatty():
            loop = asyncio.get_running_loop()
            while True:
                answer = await loop.run_in_executor(None, input, "  choose: ")
                if answer.strip().isdigit() and 1 <= int(answer) <= len(options):
                    return options[int(answer) - 1]["optionId"]
        chosen = next((o for o in options if o.get("kind") == "allow_once"), options[0])
        self.printer._line(f"  {DIM}(answering: {chosen['name']}; pass --ask to choose){RESET}")
        return chosen["optionId"]


def apply_workspace_edit(edit: dict[str, Any]) -> dict[str, Any]:
    """Apply text edits and file creations to disk, as an editor with no open buffers would."""
    for change in edit.get("documentChanges", []):
        if change.get("kind") == "create":
            path = Path(_path(change["uri"]))
            if not path.exists():
                path.write_text("", encoding="utf-8")
        elif "textDocument" in change:
            path = Path(_path(change["textDocument"]["uri"]))
            text = path.read_text(encoding="utf-8") if path.exists() else ""
            path.write_text(apply_text_edits(text, change["edits"]), encoding="utf-8")
    return {"applied": True}


async def run(workspace: Path, protocol: str, ask: bool) -> int:
    env = {**os.environ, "ACPLS_DEMO_SPEED": os.environ.get("ACPLS_DEMO_SPEED", "1")}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "acpls", "--log-level", "WARNING",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    printer = Printer(workspace)
    client = EditorClient(process, printer, ask)
    reader = asyncio.create_task(client.read_forever())
    try:
        version: Any = int(protocol) if protocol in ("1", "2") else "auto"
        await client.request("initialize", _initialize_params(workspace, version))
        client.notify("initialized", {})
        printer._line(f"{BOLD}you:{RESET} {PROMPT}")
        result = await client.request(
            "workspace/executeCommand",
            {"command": "acpls.prompt", "arguments": [{"text": PROMPT}]},
        )
        printer._line(f"{BOLD}turn ended:{RESET} {result['stopReason']}  (workspace: {workspace})")
        await client.request("shutdown", None)
        client.notify("exit", None)
        await asyncio.wait_for(process.wait(), 10)
        return 0
    finally:
        reader.cancel()
        if process.returncode is None:
            process.kill()
            await process.wait()


def _initialize_params(workspace: Path, version: Any) -> dict[str, Any]:
    return {
        "processId": os.getpid(),
        "rootUri": workspace.as_uri(),
        "workspaceFolders": [{"uri": workspace.as_uri(), "name": workspace.name}],
        "capabilities": {
            "experimental": {"acpls": {"version": 1}},
            "window": {"showDocument": {"support": True}},
            "workspace": {
                "workspaceEdit": {"documentChanges": True, "resourceOperations": ["create"]}
            },
        },
        "initializationOptions": {"agent": "demo", "protocolVersion": version},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="the demo turn as a live editor transcript")
    parser.add_argument("--workspace", type=Path, help="work here instead of a copy of the sample")
    parser.add_argument("--protocol", default="auto", choices=["auto", "1", "2"])
    parser.add_argument("--ask", action="store_true", help="answer the permission prompt yourself")
    args = parser.parse_args(argv)
    if args.workspace is not None:
        return asyncio.run(run(args.workspace.resolve(), args.protocol, args.ask))
    with tempfile.TemporaryDirectory(prefix="acpls-demo-") as tmp:
        workspace = Path(tmp) / "workspace"
        shutil.copytree(SAMPLE, workspace)
        return asyncio.run(run(workspace, args.protocol, args.ask))


if __name__ == "__main__":
    sys.exit(main())
