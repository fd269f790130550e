"""Every way a downloaded agent archive can be wrong, served from a local HTTP server on
127.0.0.1: a damaged deflate stream (zlib.error), a truncated zip or tar.gz, entries outside the
directory, something that is no archive; and the raw binary the registry's schema allows. Each
error names the URL, leaves nothing installed, exits `acpls agents install` with 1 and one line
(no traceback), and reaches the editor as -32000 with the same message (not -32603)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from acpls.core.agents import AgentCatalog
from acpls.services.agent_install import AgentInstallError, archive_kind
from tests.agents import script_command
from tests.e2e.conftest import command, start
from tests.registry.support import (
    PLATFORM,
    RegistryServer,
    binary,
    entry,
    launcher,
    registry_server,
    tar_gz,
    zip_bytes,
)

RUN = launcher(script_command("v1_basic"))


def damaged_zip() -> bytes:
    """A zip whose headers and CRC are intact but whose deflate data is not: zipfile raises
    zlib.error while extracting (what crashed `acpls agents install`)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("agent", os.urandom(64) + b"x" * 20_000)
    data = bytearray(out.getvalue())
    start_of_data = 30 + len("agent")  # local header + name: the deflate stream follows
    data[start_of_data : start_of_data + 40] = b"\xff" * 40
    return bytes(data)


def damaged_tar_gz() -> bytes:
    data = bytearray(tar_gz({"agent": RUN + b"#" * 50_000, "more": os.urandom(30_000)}))
    middle = len(data) // 2
    data[middle : middle + 64] = b"\x00" * 64
    return bytes(data)


def half(data: bytes) -> bytes:
    return data[: len(data) // 2]


# agent id -> (file served, what the error says besides the URL)
BAD: dict[str, tuple[bytes, str]] = {
    "zlib-zip": (damaged_zip(), "bad archive"),
    "zlib-tar": (damaged_tar_gz(), "bad archive"),
    "truncated-zip": (half(zip_bytes({"agent": RUN + os.urandom(4000)})), "bad archive"),
    "truncated-tar": (half(tar_gz({"agent": RUN + os.urandom(40_000)})), "bad archive"),
    "absolute-zip": (zip_bytes({"/tmp/escaped-abs": b"x", "agent": RUN}), "escapes its directory"),
    "dotdot-zip": (zip_bytes({"a/../../escaped": b"x", "agent": RUN}), "escapes its directory"),
    "dotdot-tar": (tar_gz({"../escaped": b"x", "agent": RUN}), "unsafe archive"),
    "html-page": (b"<!doctype html><title>Not Found</title>" * 20, "neither a zip or tar"),
    "empty": (b"", "neither a zip or tar"),
}


def _registry(server: RegistryServer) -> None:
    agents = []
    for agent_id, (data, _) in BAD.items():
        server.files[f"/{agent_id}.bin"] = data
        agents.append(entry(agent_id, binary(server.url(f"{agent_id}.bin"))))
    server.files["/raw-agent"] = RUN
    agents.append(entry("raw-agent", binary(server.url("raw-agent"), "bin/agent")))
    server.set_registry({"version": "1.0.0", "agents": agents, "extensions": []})


@pytest.fixture
def bad_archives() -> Iterator[RegistryServer]:
    with registry_server() as server:
        _registry(server)
        yield server


async def _catalog(server: RegistryServer, xdg: dict[str, str]) -> AgentCatalog:
    catalog = AgentCatalog(
        xdg, server.url("registry.json"), platform=PLATFORM, which=lambda _name: None
    )
    await catalog.refresh()
    return catalog


def _left_in(xdg: dict[str, str], agent_id: str) -> list[str]:
    home = Path(xdg["XDG_DATA_HOME"]) / "acpls" / "agents" / agent_id
    return sorted(p.name for p in home.iterdir()) if home.exists() else []


def test_the_damaged_archives_are_what_they_claim() -> None:
    """The test data itself: the zip really fails with zlib.error, the rest as named."""
    import zlib

    with (
        zipfile.ZipFile(io.BytesIO(BAD["zlib-zip"][0])) as zf,
        pytest.raises(zlib.error),
    ):
        zf.read("agent")
    assert archive_kind(BAD["truncated-zip"][0]) == "zip"
    assert archive_kind(BAD["truncated-tar"][0]) == "tar"
    assert archive_kind(RUN) == "executable"
    assert archive_kind(BAD["html-page"][0]) == "unknown"


@pytest.mark.parametrize("agent_id", sorted(BAD))
async def test_each_archive_error_names_the_url_and_leaves_nothing(
    bad_archives, xdg, tmp_path, agent_id
):
    catalog = await _catalog(bad_archives, xdg)
    with pytest.raises(AgentInstallError) as caught:
        await catalog.install(agent_id)
    message = str(caught.value)
    assert bad_archives.url(f"{agent_id}.bin") in message
    assert BAD[agent_id][1] in message
    assert _left_in(xdg, agent_id) == []
    assert not list(tmp_path.rglob("escaped*"))
    assert not Path("/tmp/escaped-abs").exists()


async def test_a_raw_binary_becomes_the_command(bad_archives, xdg):
    catalog = await _catalog(bad_archives, xdg)
    result = await catalog.install("raw-agent")
    command_path = Path(result["installDir"]) / "bin" / "agent"
    assert result["command"] == [str(command_path)]
    assert os.access(command_path, os.X_OK)
    request = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n'
    done = subprocess.run(
        result["command"], input=request, capture_output=True, text=True, timeout=30
    )
    assert '"result"' in done.stdout
    assert _left_in(xdg, "raw-agent") == ["1.2.3"]


@pytest.mark.parametrize("agent_id", ["zlib-zip", "truncated-tar", "html-page"])
def test_the_command_line_exits_1_with_one_line_and_no_traceback(bad_archives, xdg, agent_id):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "acpls",
            "agents",
            "--registry-url",
            bad_archives.url("registry.json"),
            "install",
            agent_id,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **xdg},
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"acpls agents install: bad archive {bad_archives.url(agent_id)}")


async def test_the_editor_gets_the_message_not_an_internal_error(
    client, workspace, server_env, tmp_path
):
    with registry_server() as server:
        _registry(server)
        server_env["XDG_DATA_HOME"] = str(tmp_path / "data")
        server_env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
        await start(
            client, workspace, "demo", custom=True, registry={"url": server.url("registry.json")}
        )
        await command(client, "acpls.agents", {"refresh": True})
        with pytest.raises(JsonRpcException) as caught:
            await command(client, "acpls.installAgent", {"agent": "zlib-zip"})
        assert caught.value.code == -32000
        assert f"bad archive {server.url('zlib-zip.bin')}" in json.dumps(str(caught.value))
