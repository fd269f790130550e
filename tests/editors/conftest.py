"""Plain LSP editors (Emacs eglot, Kakoune) with the configurations in `editors/`.

`make test-editors` installs the editors from Debian (editors/editors.mk). Run by hand without
them, the tests skip, unless ACPLS_REQUIRE_EDITORS=1 (set by the make target) makes a missing
editor a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import client, server_env, state_dir, workspace

__all__ = ["client", "server_env", "state_dir", "workspace"]

REPO = Path(__file__).resolve().parents[2]
EDITORS = REPO / "editors"
DEMO_WORKSPACE = REPO / "server" / "acpls" / "demo" / "workspace"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.editors)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "editors: drives a plain LSP editor (Emacs, Kakoune)")


def require_program(name: str, check: list[str] | None = None) -> str:
    """The path of `name`; skip (or fail under `make test-editors`) when it is not installed."""
    path = shutil.which(name)
    ok = path is not None
    if ok and check is not None:
        ok = subprocess.run(check, capture_output=True, timeout=60).returncode == 0
    if path is None or not ok:
        message = f"{name} is not installed (or lacks what {check} checks): run `make test-editors`"
        if os.environ.get("ACPLS_REQUIRE_EDITORS") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture
def demo_workspace(tmp_path: Path) -> Path:
    """A copy of the demo agent's sample project (its calc.py has the bug the demo fixes)."""
    root = tmp_path / "ws"
    shutil.copytree(DEMO_WORKSPACE, root)
    return root


def processes_in(directory: Path) -> list[tuple[int, str]]:
    """Live processes whose working directory is `directory` (acpls and its agent run there)."""
    found = []
    target = str(directory.resolve())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = next(
                line.split()[1]
                for line in (entry / "status").read_text().splitlines()
                if line.startswith("State:")
            )
        except (OSError, StopIteration):
            continue
        if cwd == target and state != "Z":
            found.append((int(entry.name), cmdline.strip()))
    return found


def wait_no_processes_in(directory: Path, timeout: float = 10.0) -> list[tuple[int, str]]:
    deadline = time.monotonic() + timeout
    while (left := processes_in(directory)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left
