"""The repository is a Neovim plugin as plugin managers install it: its root carries `lua/`,
`plugin/` and `doc/` (links into `neovim/`), so lazy.nvim, packer and `vim.pack` load it from a
clone with no runtimepath settings of the user's. Each test loads a copy of the repository the way
that manager does and checks the command, the modules, the help and where `:Acpls install` installs
from."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import pynvim
import pytest

from tests.nvim.conftest import NVIM, REPO, nvim_env

pytestmark = pytest.mark.nvim

# What a clone holds that the plugin needs (the links are copied as links).
CLONED = ("lua", "plugin", "doc", "neovim", "pyproject.toml")


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
