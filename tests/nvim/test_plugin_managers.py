"""The repository is a Neovim plugin as plugin managers install it: its root carries `lua/`,
`plugin/` and `doc/` (links into `neovim/`), so lazy.nvim, packer and `vim.pack` load it from a
clone with no runtimepath settings of the user's. Each test loads a copy of the repository the way
that manager does and checks the command, the modules, the help and where `:Acpls install` installs
from."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pynvim
import pytest

from tests.nvim.conftest import NVIM, REPO, nvim_env

pytestmark = pytest.mark.nvim

# What a clone holds that the plugin needs (the links are copied as links).
CLONED = ("lua", "plugin", "doc", "neovim", "pyproject.toml", "lazy.lua")


def clone(into: Path) -> Path:
    into.mkdir(parents=True)
    for name in CLONED:
        source = REPO / name
        if source.is_symlink():
            (into / name).symlink_to(source.readlink())
        elif source.is_dir():
            shutil.copytree(source, into / name, symlinks=True)
        else:
            shutil.copy2(source, into / name)
    return into


@contextlib.contextmanager
def nvim_with(tmp_path: Path, *commands: str) -> Iterator[pynvim.Nvim]:
    """A clean Neovim (no user config, no plugin of the test suite) that runs `commands` first."""
    env = nvim_env(tmp_path)
    argv = ["env", *(f"{k}={v}" for k, v in env.items()), str(NVIM), "--embed", "--headless"]
    argv += ["--clean", "-n", "-i", "NONE"]
    for command in commands:
        argv += ["--cmd", command]
    nvim = pynvim.attach("child", argv=argv)
    try:
        yield nvim
    finally:
        with contextlib.suppress(Exception):
            nvim.quit("qa!")
        with contextlib.suppress(Exception):
            nvim.close()


def assert_loaded(nvim: pynvim.Nvim, root: Path) -> None:
    assert nvim.funcs.exists(":Acpls") == 2, "the :Acpls command is defined by plugin/acpls.lua"
    assert nvim.exec_lua("return require('acpls').setup ~= nil")
    source = nvim.exec_lua("return require('acpls.install').source()")
    assert Path(source).resolve() == root.resolve(), "installs from the clone's pyproject.toml"
    nvim.command(f"helptags {root / 'doc'}")
    nvim.command("help acpls-install")
    assert nvim.exec_lua("return vim.bo.filetype") == "help"


def test_the_repository_root_links_into_neovim() -> None:
    for name in ("lua", "plugin", "doc"):
        link = REPO / name
        assert link.is_symlink() and link.readlink() == Path("neovim") / name


def test_native_packages_start_as_packer_installs(tmp_path: Path) -> None:
    site = tmp_path / "site"
    root = clone(site / "pack" / "packer" / "start" / "acpls")
    with nvim_with(tmp_path, f"set packpath^={site}") as nvim:
        assert_loaded(nvim, root)


def test_vim_pack_layout_opt_package_and_packadd(tmp_path: Path) -> None:
    # vim.pack (Neovim 0.12) clones into site/pack/core/opt/NAME and runs :packadd NAME.
    site = tmp_path / "site"
    root = clone(site / "pack" / "core" / "opt" / "acpls")
    with nvim_with(tmp_path, f"set packpath^={site}") as nvim:
        assert nvim.funcs.exists(":Acpls") == 0
        nvim.command("packadd acpls")
        assert_loaded(nvim, root)


def test_lazy_nvim_style_runtimepath_and_plugin_files(tmp_path: Path) -> None:
    # lazy.nvim puts the plugin's directory on the runtimepath and sources its plugin/ files.
    root = clone(tmp_path / "lazy" / "acpls")
    with nvim_with(tmp_path) as nvim:
        nvim.exec_lua(
            "vim.opt.rtp:prepend(...);"
            "for _, f in ipairs(vim.fn.globpath(..., 'plugin/**/*.lua', false, true)) do"
            " vim.cmd.source(f) end",
            str(root),
        )
        assert_loaded(nvim, root)


# -- the blocks users copy (neovim/README.md) and the repository's lazy.lua ----------------------

STUB_INSTALL = """
_G.installs = {}
package.loaded['acpls.install'] = nil
local install = require('acpls.install')
install.install = function(on_done, opts)
  table.insert(_G.installs, {wait = opts and opts.wait or false})
  if on_done then on_done(_G.install_ok ~= false, 'stub') end
end
"""


def readme_blocks() -> dict[str, str]:
    """The ```lua blocks of neovim/README.md's Install section, by the manager they name."""
    text = (REPO / "neovim" / "README.md").read_text()
    section = text.split("## Install", 1)[1].split("\n## ", 1)[0]
    blocks = [b.split("```", 1)[0] for b in section.split("```lua\n")[1:]]
    named = {}
    for block in blocks:
        first = block.splitlines()[0]
        for manager in ("lazy.nvim", "packer.nvim", "vim.pack"):
            if manager in first:
                named[manager] = block.replace("~/src/acpls", "{CLONE}")
    assert sorted(named) == ["lazy.nvim", "packer.nvim", "vim.pack"], blocks
    return named


def test_lazy_nvim_spec_and_the_repositorys_lazy_lua_install_the_server(tmp_path: Path) -> None:
    root = clone(tmp_path / "src" / "acpls")
    block = readme_blocks()["lazy.nvim"].replace("{CLONE}", str(root))
    with nvim_with(tmp_path, f"set rtp^={root}") as nvim:
        user = nvim.exec_lua(f"return ({block.strip().rstrip(',')})")
        assert user == {"dir": str(root), "opts": {"agent": "claude"}}
        package = nvim.exec_lua(
            "local p = dofile(...) return {name = p.name, opts = p.opts, build = type(p.build)}",
            str(root / "lazy.lua"),
        )
        assert package == {"name": "acpls", "opts": [], "build": "function"}  # {} arrives as []
        nvim.exec_lua(STUB_INSTALL)
        nvim.exec_lua("dofile(...).build()", str(root / "lazy.lua"))
        assert nvim.exec_lua("return _G.installs") == [{"wait": True}]
        nvim.exec_lua("_G.install_ok = false")
        failed = nvim.exec_lua(
            "local ok, err = pcall(dofile(...).build) return {ok, err}", str(root / "lazy.lua")
        )
        assert failed == [False, "stub"]  # lazy.nvim shows the failed build


def test_packer_use_block_installs_the_server_in_its_run_step(tmp_path: Path) -> None:
    root = clone(tmp_path / "src" / "acpls")
    block = readme_blocks()["packer.nvim"].replace("{CLONE}", str(root))
    with nvim_with(tmp_path, f"set rtp^={root}", "runtime! plugin/acpls.lua") as nvim:
        nvim.exec_lua("_G.use = function(spec) _G.spec = spec end")
        nvim.exec_lua(block)
        assert nvim.exec_lua("return _G.spec[1]") == str(root)
        nvim.exec_lua(STUB_INSTALL)
        nvim.exec_lua("_G.spec.run()")
        assert nvim.exec_lua("return _G.installs") == [{"wait": True}]
        nvim.exec_lua("_G.spec.config()")
        assert nvim.exec_lua("return require('acpls.config').get().agent") == "claude"


def test_vim_pack_block_installs_the_server_when_the_package_changes(tmp_path: Path) -> None:
    """Neovim 0.12's vim.pack.add clones the source into pack/core/opt/NAME and sends PackChanged
    with `{spec = {name = NAME}, kind = 'install'}`: a stand-in does that here (the tests'
    Neovim is 0.11, which has neither), and the README's block runs as written."""
    root = clone(tmp_path / "src" / "acpls")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"],
        check=True,
    )
    site = tmp_path / "site"
    block = readme_blocks()["vim.pack"].replace("vim.fn.expand('{CLONE}')", repr(str(root)))
    with nvim_with(tmp_path, f"set packpath^={site}") as nvim:
        nvim.exec_lua(VIM_PACK_STAND_IN, str(site))
        # The installer itself is stubbed (the plugin is not on the runtimepath before the clone).
        nvim.exec_lua(
            "_G.installs = {}; package.loaded['acpls.install'] = {install = function(cb, opts)"
            " table.insert(_G.installs, {wait = opts and opts.wait or false}) end}"
        )
        nvim.exec_lua(block)
        assert nvim.exec_lua("return _G.installs") == [{"wait": True}]
        nvim.exec_lua("package.loaded['acpls.install'] = nil")
        assert_loaded(nvim, site / "pack" / "core" / "opt" / "acpls")
        assert nvim.exec_lua("return require('acpls.config').get().agent") == "claude"


# What Neovim 0.12's vim.pack does for vim.pack.add({src}) of a plugin not yet installed.
VIM_PACK_STAND_IN = """
local site = ...
local callbacks = {}
local create = vim.api.nvim_create_autocmd
vim.api.nvim_create_autocmd = function(event, opts)
  if event == 'PackChanged' then table.insert(callbacks, opts.callback) return 0 end
  return create(event, opts)
end
vim.pack = {add = function(specs)
  for _, src in ipairs(specs) do
    local name = src:gsub('/+$', ''):match('([^/]+)$')
    local dest = site .. '/pack/core/opt/' .. name
    vim.fn.system({'git', 'clone', '-q', src, dest})
    assert(vim.v.shell_error == 0, 'clone failed')
    for _, cb in ipairs(callbacks) do cb({data = {spec = {name = name, src = src}, kind = 'install', path = dest}}) end
    vim.cmd.packadd(name)
  end
end}
"""
