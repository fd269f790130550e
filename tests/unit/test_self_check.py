"""`acpls --self-check` (acpls/self_check.py): the whole server imports, and when it cannot, the
check names the real cause and the fix (Python too old, a package of another platform, a missing
or broken module) and exits 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acpls import requirements, self_check

SERVER = str(Path(__file__).resolve().parents[2] / "server")


def run_check(tmp_path: Path, shim: str = "", *args: str) -> tuple[int, dict[str, Any]]:
    """`python -m acpls --self-check --json` with `shim` as its sitecustomize."""
    (tmp_path / "sitecustomize.py").write_text(shim, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), SERVER])}
    env.pop("ACPLS_SPEEDUPS", None)
    done = subprocess.run(
        [sys.executable, "-m", "acpls", "--self-check", "--json", *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode, json.loads(done.stdout)


def test_a_whole_install_passes_and_names_its_fast_paths(tmp_path: Path) -> None:
    code, result = run_check(tmp_path)
    assert (code, result["ok"], result["problems"]) == (0, True, [])
    assert result["speedups"] == {"json": "orjson", "base64": "pybase64", "loop": "asyncio"}
    assert result["platform"] == self_check.running_platform()


def test_every_server_module_is_imported() -> None:
    names = self_check.server_modules()
    assert {"acpls.server", "acpls.core.hub", "acpls.cli", "acpls.services.agent_install"} <= set(
        names
    )
    assert not [n for n in names if n.endswith("__main__") or n.startswith("acpls.demo.workspace.")]


def test_a_package_for_another_platform_is_named(tmp_path: Path) -> None:
    other = "darwin-arm64" if self_check.running_platform() != "darwin-arm64" else "linux-x64"
    code, result = run_check(tmp_path, "", "--platform", other)
    assert code == 1
    (problem,) = result["problems"]
    assert problem["kind"] == "wrong-platform"
    assert problem["cause"] == (
        f"this package is for {other}, and this machine is {self_check.running_platform()}"
    )
    assert self_check.running_platform() in problem["fix"]


def test_the_same_platform_passes(tmp_path: Path) -> None:
    code, _ = run_check(tmp_path, "", "--platform", self_check.running_platform())
    assert code == 0


def test_a_missing_dependency_is_named_with_the_fix(tmp_path: Path) -> None:
    code, result = run_check(tmp_path, "import sys\nsys.modules['watchfiles'] = None\n")
    assert code == 1
    kinds = {p["kind"] for p in result["problems"]}
    assert kinds == {"missing-module"}
    assert any("cannot import watchfiles" in p["cause"] for p in result["problems"])
    assert all(p["fix"] == "reinstall acpls with its dependencies" for p in result["problems"])


def test_a_compiled_module_of_another_system_is_a_wrong_platform(tmp_path: Path) -> None:
    """What the dynamic loader says when a Mach-O or Windows module is loaded on Linux."""
    shim = (
        "import sys, importlib.abc\n"
        "class Foreign(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'watchfiles._rust_notify':\n"
        "            raise ImportError('/x/_rust_notify.abi3.so: invalid ELF header')\n"
        "sys.meta_path.insert(0, Foreign())\n"
    )
    code, result = run_check(tmp_path, shim)
    assert code == 1
    problem = result["problems"][0]
    assert problem["kind"] == "wrong-platform"
    assert "invalid ELF header" in problem["cause"]
    assert problem["fix"] == f"install the acpls package for {self_check.running_platform()}"


def test_a_broken_module_is_quoted(tmp_path: Path) -> None:
    shim = "import sys\nsys.modules['pygls.server'] = None\n"
    code, result = run_check(tmp_path, shim)
    assert code == 1
    assert {p["kind"] for p in result["problems"]} <= {"missing-module", "broken-module"}
    assert any("pygls.server" in p["cause"] for p in result["problems"])


def test_missing_speedups_are_not_a_failure_and_say_why(tmp_path: Path) -> None:
    shim = "import sys\nsys.modules['orjson'] = None\nsys.modules['pybase64'] = None\n"
    code, result = run_check(tmp_path, shim)
    assert (code, result["problems"]) == (0, [])
    assert result["speedups"]["json"].startswith(
        "json (orjson not usable here: ModuleNotFoundError"
    )
    assert result["speedups"]["base64"].startswith("binascii (pybase64 not usable here")


@pytest.mark.parametrize(
    ("version", "too_old"), [((3, 10, 14), True), ((3, 9, 0), True), ((3, 11, 0), False)]
)
def test_python_too_old(version: tuple[int, ...], too_old: bool) -> None:
    problem = self_check.python_problem(version)
    if not too_old:
        assert problem is None
        return
    assert problem is not None and problem["kind"] == "python-too-old"
    shown = ".".join(map(str, version))
    assert problem["cause"] == (
        f"Python {shown} is too old: acpls needs Python {requirements.PYTHON_TEXT} or newer"
    )


def test_the_text_report_says_the_cause_and_the_fix(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": SERVER}
    done = subprocess.run(
        [sys.executable, "-m", "acpls", "--self-check", "--platform", "win32-x64"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert "FAIL this package is for win32-x64" in done.stdout
    assert "fix: install the acpls package for" in done.stdout


def test_the_self_check_module_parses_as_python_3_8() -> None:
    """An old Python must reach the "too old" message, not a SyntaxError."""
    import ast

    for module in ("self_check.py", "requirements.py", "__init__.py", "__main__.py"):
        source = (Path(SERVER) / "acpls" / module).read_text(encoding="utf-8")
        ast.parse(source, feature_version=(3, 8))


def test_windows_without_pywinpty_warns_but_starts() -> None:
    """pywinpty is imported only when a terminal starts (services/ptys.py): its absence cannot
    stop the server, and the check says terminals will not work (not installed here)."""
    (warning,) = self_check.terminal_warnings(on_windows=True)
    assert warning.startswith("agent terminals need pywinpty, which does not load here")
    assert "use a CPython 3.11 to 3.14" in warning
    assert self_check.terminal_warnings(on_windows=False) == []


def test_a_compiled_module_python_does_not_take_is_a_wrong_platform(tmp_path: Path) -> None:
    """The win32 package on Linux: watchfiles' `_rust_notify.pyd` is there, but Linux' Python
    looks for `.so` only and says "No module named": that is the wrong package, not a missing
    dependency."""
    package = tmp_path / "nativepkg"
    package.mkdir()
    (package / "__init__.py").write_text("from ._native import Native\n")
    (package / "_native.cp312-win_amd64.pyd").write_bytes(b"MZ")
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(ModuleNotFoundError) as caught:
            import nativepkg  # noqa: F401  # type: ignore[import-not-found]
        problem = self_check.import_problem("acpls.core.hub", caught.value)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("nativepkg", None)
    assert problem["kind"] == "wrong-platform"
    assert "nativepkg._native" in problem["cause"]
    assert "(_native.cp312-win_amd64.pyd) is not for this machine" in problem["cause"]
    plain = self_check.import_problem("acpls.x", ModuleNotFoundError("x", name="nowhere_at_all"))
    assert plain["kind"] == "missing-module"
