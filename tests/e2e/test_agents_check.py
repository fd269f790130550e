"""`acpls agents check` and `acpls.checkAgents`: installed? answers initialize? nothing left behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from acpls.presets import AgentSpec
from acpls.services.agent_check import check_agent

ACPLS = [sys.executable, "-m", "acpls"]


def _agent(tmp_path: Path, body: str) -> AgentSpec:
    script = tmp_path / "agent.py"
    script.write_text(textwrap.dedent(body))
    return AgentSpec(name="fake", command=sys.executable, args=(str(script),))


async def _check(tmp_path: Path, body: str, answer_within: float = 10.0):
    spec = _agent(tmp_path, body)
    return await check_agent(
        spec, cwd=str(tmp_path), env=dict(os.environ), answer_within=answer_within
    )


async def test_an_agent_that_asks_and_floods_first_still_counts_as_answering(tmp_path):
    result = await _check(
        tmp_path,
        """
        import json, sys
        request = json.loads(sys.stdin.readline())
        assert request["method"] == "initialize", request
        assert request["params"]["protocolVersion"] == 2  # asked as sessions ask: 2, 1 accepted
        print("not json at all", flush=True)
        # a request of its own first (answered -32601), and a 600 KB notification
        print(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "x/ask", "params": {}}), flush=True)
        reply = json.loads(sys.stdin.readline())
        assert reply["id"] == 0 and reply["error"]["code"] == -32601, reply
        print(json.dumps({"jsonrpc": "2.0", "method": "x/big", "params": {"s": "x" * 600_000}}), flush=True)
        print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {
            "protocolVersion": 1, "agentInfo": {"name": "fake", "version": "9.9"},
            "authMethods": [{"id": "openai-api-key", "name": "API key"}]}}), flush=True)
        sys.stdin.read()
        """,
    )
    assert result.ok, result.detail
    assert (result.agent_name, result.agent_version, result.protocol_version) == ("fake", "9.9", 1)
    assert result.auth_methods == ("openai-api-key",)
    assert "ok (fake 9.9, ACP v1, sign-in: openai-api-key" in result.summary()


async def test_an_agent_that_exits_is_reported_with_its_status_and_stderr(tmp_path):
    result = await _check(
        tmp_path,
        """
        import sys
        sys.stdin.readline()
        print("no API key configured", file=sys.stderr, flush=True)
        sys.exit(3)
        """,
    )
    assert not result.ok and result.installed
    assert "status 3" in result.detail and "no API key configured" in result.detail


async def test_an_error_answer_is_a_failure(tmp_path):
    result = await _check(
        tmp_path,
        """
        import json, sys
        request = json.loads(sys.stdin.readline())
        print(json.dumps({"jsonrpc": "2.0", "id": request["id"],
                          "error": {"code": -32602, "message": "bad version"}}), flush=True)
        sys.stdin.read()
        """,
    )
    assert not result.ok and "bad version" in result.detail


async def test_a_silent_agent_times_out_and_its_whole_process_group_is_stopped(tmp_path):
    pid_file = tmp_path / "child.pid"
    result = await _check(
        tmp_path,
        f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        time.sleep(600)
        """,
        answer_within=3.0,
    )
    assert not result.ok and "no answer to initialize within 3 s" in result.detail
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "the agent's child outlived the check"


# An agent that speaks ACP v2 only: it refuses an initialize without v2's fields, as a strict
# v2 implementation does, and answers v2 (with `info`) otherwise.
V2_ONLY = """
import json, sys
request = json.loads(sys.stdin.readline())
params = request["params"]
if params.get("protocolVersion") != 2 or "info" not in params or "capabilities" not in params:
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"],
                      "error": {"code": -32602, "message": "this agent speaks ACP v2 only"}}),
          flush=True)
else:
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {
        "protocolVersion": 2, "info": {"name": "v2-only", "version": "2.0"},
        "capabilities": {}, "authMethods": []}}), flush=True)
sys.stdin.read()
"""


async def test_a_v2_only_agent_answers_the_check_as_it_answers_sessions(tmp_path):
    """Health told the user a v2-only agent "does not answer initialize" (it was asked for v1
    only) while sessions with it worked: the check now negotiates as sessions do."""
    result = await _check(tmp_path, V2_ONLY)
    assert result.ok, result.detail
    assert (result.agent_name, result.agent_version, result.protocol_version) == (
        "v2-only",
        "2.0",
        2,
    )
    assert "ok (v2-only 2.0, ACP v2" in result.summary()


@pytest.mark.parametrize("protocol", [1, 2])
async def test_the_scripted_agent_is_checked_at_the_version_it_speaks(tmp_path, protocol):
    from tests.agents import script_command

    argv = script_command({"protocol": protocol})
    spec = AgentSpec(name=f"v{protocol}", command=argv[0], args=tuple(argv[1:]))
    result = await check_agent(spec, cwd=str(tmp_path), env=dict(os.environ))
    assert result.ok, result.detail
    assert (result.agent_name, result.protocol_version) == ("scripted-agent", protocol)


def test_the_command_line_reports_a_v2_only_agent_as_ok(tmp_path):
    """`acpls agents check` (what `:checkhealth acpls` runs) on the v2-only agent."""
    script = tmp_path / "v2_only.py"
    script.write_text(V2_ONLY)
    agent = json.dumps({"command": sys.executable, "args": [str(script)]})
    proc = subprocess.run(
        [*ACPLS, "agents", "--offline", "check", "--json", agent],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (check,) = json.loads(proc.stdout)
    assert check["ok"] and check["protocolVersion"] == 2 and check["agentName"] == "v2-only"


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def test_a_missing_command_is_not_installed_with_the_install_hint():
    spec = AgentSpec(name="copilot", command="copilot-not-here-x")
    result = await check_agent(spec, cwd="/", env=dict(os.environ))
    assert not result.installed and not result.ok
    assert "npm install -g @github/copilot@1.0.102" in result.detail


def test_the_command_line_checks_the_demo_and_a_broken_agent_and_exits_1(tmp_path):
    broken = json.dumps({"command": "/bin/false"})
    proc = subprocess.run(
        [*ACPLS, "agents", "check", "--json", "--timeout", "20", "demo", broken],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr
    demo, false = json.loads(proc.stdout)
    assert demo["ok"] and demo["agentName"] == "acpls demo agent" and demo["protocolVersion"] == 2
    assert not false["ok"] and "status 1" in false["detail"]


def test_the_command_line_lists_every_preset_with_its_command():
    proc = subprocess.run(
        [*ACPLS, "agents", "--offline", "list", "--json"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    rows = {r["id"]: r for r in json.loads(proc.stdout)["agents"]}
    assert {"claude", "gemini", "codex", "opencode", "qwen", "copilot", "goose", "demo"} <= set(
        rows
    )
    assert rows["gemini"]["command"][-1] == "--acp"


def test_a_bad_agent_argument_is_a_clear_usage_error():
    proc = subprocess.run(
        [*ACPLS, "agents", "check", "nope"], capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 2 and "unknown agent 'nope'" in proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize("argv", [["--version"], []])
def test_the_server_entry_point_is_unchanged(argv):
    if not argv:
        proc = subprocess.run([*ACPLS], input="", capture_output=True, text=True, timeout=30)
        assert (
            proc.stdout == ""
        )  # LSP only on stdout: an empty input is a clean exit with nothing said
    else:
        proc = subprocess.run([*ACPLS, *argv], capture_output=True, text=True, timeout=30)
        assert proc.stdout.startswith("acpls ")


async def test_the_lsp_command_checks_the_configured_agent_and_named_ones(client, workspace):
    from pygls.exceptions import JsonRpcException

    from tests.e2e.conftest import command, start

    await start(client, workspace, "demo", custom=True)
    configured = await command(client, "acpls.checkAgents", {})
    (demo,) = configured["agents"]
    assert demo["ok"] and demo["name"] == "demo"
    named = await command(client, "acpls.checkAgents", {"agents": [{"command": "/bin/false"}]})
    assert not named["agents"][0]["ok"] and "status 1" in named["agents"][0]["detail"]
    with pytest.raises(JsonRpcException) as info:
        await command(client, "acpls.checkAgents", {"agents": ["nope"]})
    assert info.value.code == -32602


async def test_the_lsp_command_checks_the_agents_setting_too(client, workspace, tmp_path):
    """Without names, every configured agent: `agent` and each of the `agents` setting (a bad
    entry is one failed check); a name of the `agents` setting is checked as its entry says."""
    from tests.agents import script_command
    from tests.e2e.conftest import command, start

    argv = script_command("v1_basic")
    beta = {"command": argv[0], "args": argv[1:]}
    agents = {
        "beta": beta,
        "demo-too": "demo",
        "gone": {"command": "/nonexistent/agent"},
        "nope": "no-such-registry-agent",
    }
    await start(client, workspace, "demo", agents=agents)
    checked = await command(client, "acpls.checkAgents", {})
    by_name = {c["name"]: c for c in checked["agents"]}
    # demo-too is the demo preset, checked once; nope names no preset or registry agent
    assert list(by_name) == ["demo", "beta", "gone", "nope"], by_name
    assert by_name["demo"]["ok"] and by_name["beta"]["ok"], by_name
    assert by_name["beta"]["agentName"] == "scripted-agent"
    assert not by_name["gone"]["ok"] and not by_name["gone"]["installed"]
    assert not by_name["nope"]["ok"] and "no-such-registry-agent" in by_name["nope"]["detail"]
    named = await command(client, "acpls.checkAgents", {"agents": ["beta"]})
    assert [c["name"] for c in named["agents"]] == ["beta"] and named["agents"][0]["ok"]
