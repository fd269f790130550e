"""A local registry for tests: an HTTP server (stdlib, in a thread) serving a fixture registry.json
with ETag / Last-Modified, and agent archives (tar.gz and zip) built here, good and bad."""

from __future__ import annotations

import hashlib
import io
import json
import sys
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from acpls.registry.model import current_platform
from tests.agents import script_command

PLATFORM = current_platform() or "linux-x86_64"


class RegistryServer:
    """Serves `files` (path → bytes); counts requests and records their headers."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.etag = '"v1"'
        self.last_modified = "Tue, 01 Dec 2026 10:00:00 GMT"
        self.status_override: int | None = None
        self._server: ThreadingHTTPServer | None = None

    @property
    def base(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def url(self, path: str) -> str:
        return f"{self.base}/{path.lstrip('/')}"

    def set_registry(self, registry: dict[str, Any], etag: str = '"v1"') -> None:
        self.files["/registry.json"] = json.dumps(registry).encode()
        self.etag = etag

    def hits(self, path: str) -> list[dict[str, str]]:
        return [headers for p, headers in self.requests if p == path]

    def start(self) -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.requests.append((self.path, dict(self.headers.items())))
                if owner.status_override is not None:
                    self.send_error(owner.status_override)
                    return
                body = owner.files.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                if (
                    self.path == "/registry.json"
                    and self.headers.get("If-None-Match") == owner.etag
                ):
                    self.send_response(304)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                if self.path == "/registry.json":
                    self.send_header("ETag", owner.etag)
                    self.send_header("Last-Modified", owner.last_modified)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # quiet pytest output
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


@contextmanager
def registry_server() -> Iterator[RegistryServer]:
    server = RegistryServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _sh(argv: list[str]) -> str:
    return " ".join("'" + a.replace("'", "'\\''") + "'" for a in argv)


def launcher(argv: list[str]) -> bytes:
    """A shell script that starts `argv` (the scripted agent): the `cmd` inside an archive."""
    return f'#!/bin/sh\nexec {_sh(argv)} "$@"\n'.encode()


def tar_gz(members: dict[str, bytes], *, modes: dict[str, int] | None = None) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = (modes or {}).get(name, 0o755)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def tar_with_link(name: str, target: str) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        info = tarfile.TarInfo(name)
        info.type = tarfile.SYMTYPE
        info.linkname = target
        tar.addfile(info)
    return out.getvalue()


def zip_bytes(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o100755 << 16
            zf.writestr(info, data)
    return out.getvalue()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def entry(agent_id: str, distribution: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "id": agent_id,
        "name": extra.pop("name", agent_id.replace("-", " ").title()),
        "version": extra.pop("version", "1.2.3"),
        "description": extra.pop("description", f"the {agent_id} test agent"),
        "distribution": distribution,
        **extra,
    }


def binary(url: str, cmd: str = "./agent", **extra: Any) -> dict[str, Any]:
    return {"binary": {PLATFORM: {"archive": url, "cmd": cmd, **extra}}}


def fixture_registry(
    server: RegistryServer, script: dict[str, Any] | str = "v1_basic", log: Path | None = None
) -> dict[str, Any]:
    """Agents of every kind; their archives served by `server`. `tar-agent` and `zip-agent` run the
    scripted agent with `script` (logging what it receives to `log`); the others are broken in
    one way each."""
    run = launcher(script_command(script, log))
    good_tar = tar_gz({"pkg/agent": run, "pkg/README": b"hello\n"})
    server.files["/tar-agent.tar.gz"] = good_tar
    server.files["/zip-agent.zip"] = zip_bytes({"bin/agent": run})
    server.files["/mismatch.tar.gz"] = good_tar
    server.files["/garbage.tar.gz"] = b"this is not an archive at all" * 10
    server.files["/traversal.tar.gz"] = tar_gz({"../../escaped": b"gotcha\n", "agent": run})
    server.files["/traversal.zip"] = zip_bytes({"../../escaped": b"gotcha\n", "agent": run})
    server.files["/link.tar.gz"] = tar_with_link("agent", "/etc/passwd")
    return {
        "version": "1.0.0",
        "agents": [
            entry(
                "tar-agent",
                binary(server.url("tar-agent.tar.gz"), "./pkg/agent", sha256=sha256(good_tar)),
                icon="https://example.com/tar-agent.svg",
                futureKey={"kept": True},
            ),
            entry("zip-agent", binary(server.url("zip-agent.zip"), "bin/agent"), version="2.0.0"),
            entry("mismatch-agent", binary(server.url("mismatch.tar.gz"), sha256="0" * 64)),
            entry("garbage-agent", binary(server.url("garbage.tar.gz"))),
            entry("traversal-agent", binary(server.url("traversal.tar.gz"))),
            entry("traversal-zip-agent", binary(server.url("traversal.zip"))),
            entry("link-agent", binary(server.url("link.tar.gz"))),
            entry("missing-agent", binary(server.url("nowhere.tar.gz"))),
            entry(
                "npx-agent",
                {
                    "npx": {
                        "package": "@example/npx-agent",
                        "args": ["--acp"],
                        "env": {"NPX_AGENT": "1"},
                    }
                },
                version="0.4.0",
            ),
            entry("uvx-agent", {"uvx": {"package": "uvx-agent", "args": ["acp"]}}, version="3.1.0"),
            entry(
                "elsewhere-agent",
                {"binary": {"windows-aarch64": {"archive": server.url("x.zip"), "cmd": "x.exe"}}},
            ),
        ],
        "extensions": [],
    }


def fake_tool(
    bin_dir: Path, name: str, log: Path, script: dict[str, Any] | str = "v1_basic"
) -> None:
    """A stand-in `npx` / `uvx` on PATH: records its argv, then runs the scripted agent."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    argv = script_command(script)
    body = f"#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{log}'\nexec {_sh(argv)}\n"
    path = bin_dir / name
    path.write_text(body)
    path.chmod(0o755)


PYTHON = sys.executable
