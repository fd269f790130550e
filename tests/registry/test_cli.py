"""`acpls agents [--registry-url URL] [--offline] list | show ID | install ID | check` against the
local registry: listing, one entry, a binary installed and checked with ACP initialize, offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from acpls.registry.bundled import SNAPSHOT_DATE

ACPLS = [sys.executable, "-m", "acpls", "agents"]


def _run(xdg, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **xdg}
    return subprocess.run([*ACPLS, *args], capture_output=True, text=True, timeout=60, env=env)


def test_list_show_install_and_check_a_registry_agent(served, xdg):
    url = served.url("registry.json")
    listing = _run(xdg, "--registry-url", url, "list", "--json")
    assert listing.returncode == 0, listing.stderr
    data = json.loads(listing.stdout)
    assert data["registry"]["source"] == "network"
    assert "tar-agent" in [a["id"] for a in data["agents"]]

    shown = _run(xdg, "--registry-url", url, "--offline", "show", "tar-agent", "--json")
    entry = json.loads(shown.stdout)
    assert entry["installed"] is False and entry["entry"]["futureKey"] == {"kept": True}

    installed = _run(xdg, "--registry-url", url, "install", "tar-agent")
    assert installed.returncode == 0, installed.stderr
    assert "tar-agent: ready in " in installed.stdout

    check = _run(xdg, "--registry-url", url, "--offline", "check", "tar-agent", "--json")
    assert check.returncode == 0, check.stdout + check.stderr
    assert json.loads(check.stdout)[0]["ok"] is True


def test_offline_with_no_cache_lists_the_snapshot(xdg):
    proc = _run(xdg, "--offline", "list")
    assert proc.returncode == 0
    assert proc.stdout.startswith("# registry: https://cdn.agentclientprotocol.com/")
    assert f"(snapshot of {SNAPSHOT_DATE}, version 1.0.0)" in proc.stdout.splitlines()[0]
    assert any(line.startswith("codex-acp ") for line in proc.stdout.splitlines()) is False
    assert any(line.startswith("auggie ") for line in proc.stdout.splitlines())


def test_unreachable_registry_says_so_and_falls_back(xdg):
    proc = _run(xdg, "--registry-url", "http://127.0.0.1:9/registry.json", "list")
    assert proc.returncode == 0
    assert "unreachable" in proc.stderr and "using the snapshot" in proc.stderr


def test_install_errors_exit_nonzero_with_the_reason(served, xdg):
    url = served.url("registry.json")
    proc = _run(xdg, "--registry-url", url, "install", "traversal-agent")
    assert proc.returncode == 1 and "unsafe archive" in proc.stderr
    proc = _run(xdg, "--registry-url", url, "install", "nope")
    assert proc.returncode == 2 and "unknown agent 'nope'" in proc.stderr
