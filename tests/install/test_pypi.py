"""The server as PyPI users get it: the wheel and sdist `python -m build` makes pass `twine check`,
hold every file of the package, and install and run with `pipx install` and `uv tool install` in
clean environments (own homes, caches and bin directories; nothing from this checkout's venv)."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from acpls import __version__

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def run(*argv: str | Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, f"{argv} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    run(sys.executable, "-m", "build", "--outdir", out, REPO)
    return out


def only(folder: Path, pattern: str) -> Path:
    (found,) = folder.glob(pattern)
    return found


def package_files() -> set[str]:
    """Every tracked file of the package, as `acpls/...`."""
    listed = run("git", "-C", REPO, "ls-files", "server/acpls").splitlines()
    return {name.removeprefix("server/") for name in listed}


def _network(key: str) -> bool:
    """The machine's network settings (proxies, the CA bundle of a TLS proxy, pip's index)."""
    upper = key.upper()
    return upper.startswith("PIP_") or any(
        part in upper for part in ("PROXY", "CERT", "SSL", "CA_BUNDLE", "CAINFO")
    )


def clean_env(home: Path) -> dict[str, str]:
    """A user with nothing installed: own HOME and caches; this venv's tools only by full path."""
    keep = {k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL") or _network(k)}
    return {
        **keep,
        "HOME": str(home),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }


def test_twine_check_passes(dist: Path) -> None:
    out = run(sys.executable, "-m", "twine", "check", "--strict", *dist.iterdir())
    assert out.count("PASSED") == 2


def test_the_wheel_and_sdist_hold_the_whole_package(dist: Path) -> None:
    wheel = only(dist, f"acpls-{__version__}-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = set(archive.namelist())
    assert package_files() <= in_wheel
    sdist = only(dist, f"acpls-{__version__}.tar.gz")
    with tarfile.open(sdist) as archive:
        in_sdist = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
    assert {f"server/{name}" for name in package_files()} <= in_sdist


def check_installed(acpls: Path, env: dict[str, str]) -> None:
    assert run(acpls, "--version", env=env).strip() == f"acpls {__version__}"
    report = run(acpls, "doctor", "demo", env=env)
    assert "ok   demo: ok (acpls demo agent" in report


def test_pipx_install_from_the_wheel(dist: Path, tmp_path: Path) -> None:
    env = clean_env(tmp_path) | {
        "PIPX_HOME": str(tmp_path / "pipx"),
        "PIPX_BIN_DIR": str(tmp_path / "bin"),
        "PIPX_DEFAULT_PYTHON": sys.executable,
    }
    run(BIN / "pipx", "install", only(dist, "*.whl"), env=env)
    check_installed(tmp_path / "bin" / "acpls", env)


def test_uv_tool_install_from_the_sdist(dist: Path, tmp_path: Path) -> None:
    env = clean_env(tmp_path) | {
        "UV_TOOL_DIR": str(tmp_path / "uv-tools"),
        "UV_TOOL_BIN_DIR": str(tmp_path / "bin"),
        "UV_PYTHON": sys.executable,
    }
    run(BIN / "uv", "tool", "install", only(dist, "*.tar.gz"), env=env)
    check_installed(tmp_path / "bin" / "acpls", env)
