"""`:checkhealth acpls` reports no errors, `:help acpls` works, options are validated, and the
plugin defines its command and mappings without loading its modules."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.nvim.conftest import ACPLS, PLUGIN
from tests.real_agents.harness import path_without_node

pytestmark = pytest.mark.nvim


def health_lines(nvim) -> list[str]:
    nvim.command("checkhealth acpls")
    return nvim.exec_lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")


def test_checkhealth_reports_no_errors(plain_nvim):
    nvim = plain_nvim
    nvim.exec_lua("require('acpls').setup(...)", {"cmd": [str(ACPLS)]})
    lines = health_lines(nvim)
    text = "\n".join(lines)
    assert "acpls: server" in text
    assert "acpls --version" not in text or "failed" not in text
    assert not [line for line in lines if "ERROR" in line], text
    assert "OK options are valid" in text.replace("- ", "")
    # the default agent (the demo) was started once and answered ACP initialize
    assert "agent demo answers: acpls demo agent 0.1.0, ACP v2" in text
    # the whole server imported (acpls --self-check), and the plugin and server versions agree
    assert "self-check: the server imports on Python" in text
    assert "json: orjson" in text
    assert "the plugin is acpls" not in text


def test_checkhealth_names_the_real_cause_when_the_server_cannot_import(plain_nvim, tmp_path):
    """A server whose dependency is missing: the self-check's cause and fix, not just a version."""
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text("import sys\nsys.modules['watchfiles'] = None\n")
    wrapper = tmp_path / "acpls"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{shim}:$PYTHONPATH" exec "{ACPLS}" "$@"\n')
    wrapper.chmod(0o755)
    nvim = plain_nvim
    nvim.exec_lua("require('acpls').setup(...)", {"cmd": [str(wrapper)]})
    text = "\n".join(health_lines(nvim))
    assert "cannot import watchfiles: it is not installed for" in text, text
    assert "reinstall acpls with its dependencies" in text


def test_checkhealth_says_when_the_agent_is_missing_or_silent(plain_nvim):
    nvim = plain_nvim
    nvim.exec_lua(
        "require('acpls').setup(...)",
        {"cmd": [str(ACPLS)], "agent": {"command": "/nonexistent/agent-x"}},
    )
    text = "\n".join(health_lines(nvim))
    assert "agent agent-x is not installed: /nonexistent/agent-x not found on PATH" in text
    nvim.exec_lua(
        "require('acpls').setup(...)", {"cmd": [str(ACPLS)], "agent": {"command": "/bin/false"}}
    )
    text = "\n".join(health_lines(nvim))
    assert "agent false does not answer initialize: exited with status 1" in text


def test_checkhealth_reports_bad_options_and_missing_server(plain_nvim):
    nvim = plain_nvim
    nvim.exec_lua(
        "vim.g.acpls = {cmd = {'/nonexistent/acpls'}, follow = {enabled = 'yes'}, colour = 1}"
    )
    text = "\n".join(health_lines(nvim))
    assert "follow.enabled: expected boolean, got string" in text
    assert "unknown option colour" in text
    assert "ERROR" in text


def test_setup_warns_once_about_unknown_keys_and_drops_bad_values(plain_nvim):
    nvim = plain_nvim
    result = nvim.exec_lua(
        """
        require('acpls').setup({agent = 'demo', protocolVersion = 3, ui = {chat = {widht = 1}}})
        local config = require('acpls.config')
        local settings = config.server_settings()
        config.get()
        return {notes = vim.tbl_map(function(n) return n.msg end, T.notes), settings = settings}
        """
    )
    notes = result["notes"]
    assert any("unknown option ui.chat.widht" in n for n in notes)
    assert any("protocolVersion: expected one of" in n for n in notes)
    assert len(notes) == 2  # reported once, not on every use
    assert result["settings"] == {"agent": "demo"}


def test_vim_g_acpls_reaches_the_server_settings(plain_nvim):
    nvim = plain_nvim
    settings = nvim.exec_lua(
        "vim.g.acpls = {agent = {command = 'x', args = {'y'}}, follow = {enabled = false},"
        " ui = {agent_sign = '>'}};"
        "return require('acpls.config').server_settings()"
    )
    assert settings == {"agent": {"command": "x", "args": ["y"]}, "follow": {"enabled": False}}


def test_help_acpls_works_after_helptags(plain_nvim, tmp_path):
    nvim = plain_nvim
    doc = tmp_path / "rtp" / "doc"
    shutil.copytree(PLUGIN / "doc", doc)
    nvim.command(f"set rtp+={doc.parent}")
    nvim.command(f"helptags {doc}")
    assert nvim.exec_lua("return vim.v.errmsg") == ""
    for tag in ("acpls", "acpls-options", ":Acpls-follow", "hl-AcplsAgentCursor", "acpls-setup"):
        nvim.command(f"help {tag}")
        assert nvim.exec_lua("return vim.fn.expand('%:t')") == "acpls.txt", tag
        nvim.command("helpclose")
    # Every |link| in the file points at a tag that exists.
    missing = nvim.exec_lua(
        """
        local lines = vim.fn.readfile(...)
        local missing = {}
        for _, line in ipairs(lines) do
          for link in line:gmatch('|([^|%s]+)|') do
            if not vim.tbl_contains(vim.fn.getcompletion(link, 'help'), link) then
              table.insert(missing, link)
            end
          end
        end
        return missing
        """,
        str(doc / "acpls.txt"),
    )
    assert missing == []


def test_plugin_loads_lazily_and_defines_command_and_plugs(plain_nvim):
    nvim = plain_nvim
    loaded = nvim.exec_lua(
        "local out = {} for name in pairs(package.loaded) do"
        " if name:match('^acpls') then table.insert(out, name) end end return out"
    )
    assert loaded == []
    assert nvim.exec_lua("return vim.fn.exists(':Acpls')") == 2
    plugs = nvim.exec_lua(
        "local out = {} for _, m in ipairs(vim.api.nvim_get_keymap('n')) do"
        " if m.lhs:match('^<Plug>%(acpls') then table.insert(out, m.lhs) end end return out"
    )
    assert "<Plug>(acpls-keep-hunk)" in plugs
    assert "<Plug>(acpls-chat)" in plugs
    completions = nvim.exec_lua("return vim.fn.getcompletion('Acpls fol', 'cmdline')")
    assert completions == ["follow"]
    assert nvim.exec_lua("return vim.fn.getcompletion('Acpls follow ', 'cmdline')") == [
        "on",
        "off",
        "toggle",
    ]


def test_highlight_groups_are_default_links(plain_nvim):
    nvim = plain_nvim
    nvim.exec_lua("vim.api.nvim_set_hl(0, 'AcplsAgentCursor', {bg = '#123456'})")
    nvim.exec_lua("require('acpls').setup({})")
    user = nvim.exec_lua("return vim.api.nvim_get_hl(0, {name = 'AcplsAgentCursor'})")
    assert user.get("bg") == 0x123456
    link = nvim.exec_lua("return vim.api.nvim_get_hl(0, {name = 'AcplsToolFailed'})")
    assert link["link"] == "DiagnosticError"
    assert link.get("default") is True


def test_install_source_is_the_repository_around_the_plugin(plain_nvim, tmp_path):
    nvim = plain_nvim
    info = nvim.exec_lua(
        "local i = require('acpls.install');"
        "return {source = i.source(), dir = i.dir(), exe = i.executable()}"
    )
    assert info["source"] == str(PLUGIN.parent)
    assert (PLUGIN.parent / "pyproject.toml").exists()
    data = nvim.exec_lua("return vim.fn.stdpath('data')")
    assert info["dir"] == f"{data}/acpls/venv"
    assert info["exe"] == f"{data}/acpls/venv/bin/acpls"
    # A source without pyproject.toml is refused with a clear message, and nothing is created.
    nvim.exec_lua("require('acpls').setup(...)", {"install": {"source": str(tmp_path)}})
    result = nvim.exec_lua(
        "local out; require('acpls.install').install(function(ok, msg) out = {ok, msg} end,"
        " {wait = true}); return out"
    )
    assert result[0] is False
    assert "has no pyproject.toml" in result[1]
    assert not (tmp_path / "xdg" / "data" / "acpls").exists()


def test_server_command_falls_back_to_path(plain_nvim):
    nvim = plain_nvim
    cmd, why = nvim.exec_lua("return {require('acpls.client').server_cmd()}")
    assert cmd == [str(ACPLS)]
    assert why == "PATH"


def test_chat_keys_can_be_changed_or_turned_off(editor_factory):
    ed = editor_factory("v1_basic", ui={"chat": {"keys": {"send": "<C-g>", "close": False}}})
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls chat")
    maps = ed.lua(
        "local out = {} for _, m in ipairs(vim.api.nvim_buf_get_keymap(0, 'n')) do"
        " out[m.lhs] = m.desc end return out"
    )
    assert maps.get("<C-G>") == "acpls: send the prompt"
    assert "<C-S>" not in maps
    assert "q" not in maps
    assert maps.get("<CR>") == "acpls: send the prompt"
    ed.nvim.input("hi<C-g>")
    ed.wait_turn_end()


def test_the_plugins_own_server_wins_over_an_older_acpls_on_path(plain_nvim, tmp_path):
    """An `acpls` on PATH of another version is used only when the plugin has no server of its
    own, and then with a warning naming the fix; the one `:Acpls install` made wins."""
    nvim = plain_nvim
    old = tmp_path / "old-bin" / "acpls"
    old.parent.mkdir()
    old.write_text("#!/bin/sh\necho acpls 0.0.1\n")
    old.chmod(0o755)
    nvim.exec_lua("vim.env.PATH = ... .. ':/usr/bin:/bin'", str(old.parent))
    nvim.exec_lua("_G.notes = {}; vim.notify = function(m, l) table.insert(_G.notes, m) end")
    cmd, why = nvim.exec_lua("return {require('acpls.client').server_cmd()}")
    assert (cmd, why) == ([str(old)], "PATH")
    notes = nvim.exec_lua("return _G.notes")
    assert len(notes) == 1 and 'says "acpls 0.0.1", the plugin is acpls ' in notes[0], notes
    assert "run :Acpls install" in notes[0]
    # The plugin's own server, once installed, is preferred.
    data = nvim.exec_lua("return vim.fn.stdpath('data')")
    own = Path(data) / "acpls" / "bin" / "acpls"
    own.parent.mkdir(parents=True, exist_ok=True)
    own.symlink_to(ACPLS)
    cmd, why = nvim.exec_lua("return {require('acpls.client').server_cmd()}")
    assert (cmd, why) == ([str(own)], ":Acpls install")


@pytest.mark.slow
def test_acpls_install_makes_a_working_server(plain_nvim):
    nvim = plain_nvim
    # Only the virtualenv counts: no acpls on PATH, no cmd option.
    nvim.exec_lua("vim.env.PATH = '/usr/bin:/bin'")
    assert nvim.exec_lua("return vim.fn.executable('acpls')") == 0
    result = nvim.exec_lua(
        "local out; require('acpls.install').install(function(ok, msg) out = {ok, msg} end,"
        " {wait = true}); return out"
    )
    assert result[0] is True, result[1]
    cmd, why = nvim.exec_lua("return {require('acpls.client').server_cmd()}")
    assert why == ":Acpls install"
    version = nvim.exec_lua("return vim.fn.system({...})", cmd[0], "--version")
    assert version.startswith("acpls ")


def _install(nvim) -> list:
    return nvim.exec_lua(
        "local out; require('acpls.install').install(function(ok, msg) out = {ok, msg} end,"
        " {wait = true}); return out"
    )


def test_acpls_install_with_uv_puts_the_server_in_the_plugins_bin(plain_nvim, tmp_path):
    nvim = plain_nvim
    nvim.exec_lua("vim.env.UV_CACHE_DIR = ...", str(tmp_path / "uv-cache"))
    nvim.exec_lua("vim.env.UV_TOOL_DIR = ...", str(tmp_path / "uv-tools"))
    assert nvim.exec_lua("return require('acpls.install').tool()") == "uv"
    ok, message = _install(nvim)
    assert ok, message
    data = nvim.exec_lua("return vim.fn.stdpath('data')")
    assert message == f"installed {data}/acpls/bin/acpls (uv)"
    # Only the installed server counts now: nothing on PATH.
    nvim.exec_lua("vim.env.PATH = '/usr/bin:/bin'")
    cmd, why = nvim.exec_lua("return {require('acpls.client').server_cmd()}")
    assert (cmd, why) == ([f"{data}/acpls/bin/acpls"], ":Acpls install")
    assert nvim.exec_lua("return vim.fn.system({...})", cmd[0], "--version").startswith("acpls ")


def test_acpls_install_on_a_machine_without_node_brings_a_node_for_the_agents(plain_nvim, tmp_path):
    """No `node` on PATH: `:Acpls install` installs `acpls[node]`, and the server it installed
    gives an npm agent's `#!/usr/bin/env node` a Node (services/node_runtime.py)."""
    nvim = plain_nvim
    uv = shutil.which("uv", path=os.path.dirname(sys.executable)) or shutil.which("uv")
    assert uv is not None, "uv (a test extra) is missing"
    path = path_without_node(tmp_path / "no-node") + os.pathsep + os.path.dirname(uv)
    nvim.exec_lua(
        "local path, tools = ...; vim.env.PATH = path; vim.env.UV_TOOL_DIR = tools",
        path,
        str(tmp_path / "uv-tools"),
    )
    source = nvim.exec_lua("return require('acpls.install').source()")
    assert nvim.exec_lua("return require('acpls.install').requirement(...)", source) == (
        f"{source}[node]"
    )
    assert nvim.exec_lua("return require('acpls.install').requirement(..., true)", source) == source
    ok, message = _install(nvim)
    assert ok, message
    data = nvim.exec_lua("return vim.fn.stdpath('data')")
    assert Path(f"{data}/acpls/bin/acpls").exists()
    # The Python of the environment uv made for the tool (its launcher may be a /bin/sh trampoline).
    python = str(tmp_path / "uv-tools" / "acpls" / "bin" / "python")
    found = subprocess.run(
        [python, "-c", "from acpls.services import node_runtime as n; print(n._from_wheel().node)"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert found.returncode == 0, found.stderr
    done = subprocess.run([found.stdout.strip(), "--version"], capture_output=True, text=True)
    assert done.stdout.startswith("v"), done.stderr


@pytest.mark.parametrize("tool", ["uv", "pipx"])
def test_acpls_install_offline_says_so_and_installs_nothing(plain_nvim, tmp_path, tool):
    nvim = plain_nvim
    # No network for either tool: uv offline with an empty cache, pip with no index at all.
    nvim.exec_lua(
        "vim.env.UV_OFFLINE = '1'; vim.env.UV_CACHE_DIR = ...;"
        "vim.env.PIP_NO_INDEX = '1'; vim.env.PIP_FIND_LINKS = ''; vim.env.PIP_EXTRA_INDEX_URL = '';"
        "vim.env.PIPX_HOME = ...",
        str(tmp_path / "empty-cache"),
        str(tmp_path / "pipx-home"),
    )
    nvim.exec_lua("require('acpls').setup({install = {tool = ...}})", tool)
    ok, message = _install(nvim)
    assert not ok
    step = "uv tool install" if tool == "uv" else "pipx install"
    assert message.startswith(f"install: {step} could not reach the package index (PyPI)"), message
    assert "connect to the network and run :Acpls install again" in message
    data = nvim.exec_lua("return vim.fn.stdpath('data')")
    assert not Path(f"{data}/acpls/bin/acpls").exists()


def test_acpls_install_names_a_missing_chosen_tool(plain_nvim):
    nvim = plain_nvim
    nvim.exec_lua("require('acpls').setup({install = {tool = 'no-such-installer'}})")
    ok, message = _install(nvim)
    assert not ok
    assert (
        message
        == "install: install.tool is no-such-installer, and no-such-installer is not on PATH"
    )
