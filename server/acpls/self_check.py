"""`acpls --self-check`: can this Python run the whole server, and if not, why?

Editors start `python -m acpls` and see only that it died. This check imports every module of the
server (what a session may import later, not only what the start imports), says which fast paths
(acpls/speedups.py) are active, and when something is wrong exits 1 with the cause and the fix:

- `python-too-old`: the interpreter is older than acpls' minimum (acpls/requirements.py).
- `wrong-platform`: a package built for another platform (`--platform darwin-arm64`, the VS Code
  target the .vsix was built for, differs from this machine), or a compiled module that is not
  for this operating system or processor.
- `missing-module`: a dependency is not installed (a broken install).
- `broken-module`: a module fails to import for another reason (its error is quoted).

`--json` prints one object (`ok`, `python`, `platform`, `speedups`, `warnings` [text],
`problems` [{kind, cause, fix}]) for the editors' start checks. Kept importable on old Pythons
(no syntax newer than 3.8), so that "Python too old" is what an old Python says, not a SyntaxError.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import platform
import sys
from typing import Any

from acpls import requirements

# Modules that are not part of the running server (a demo's workspace, entry points).
_SKIPPED_PARTS = ("workspace",)
_SKIPPED_NAMES = ("__main__",)
# Words the dynamic loader uses when a compiled module is for another system or processor.
_FOREIGN_BINARY = (
    "invalid elf header",
    "wrong elf class",
    "exec format error",
    "mach-o",
    "not a mach-o file",
    "incompatible architecture",
    "not a valid win32 application",
    "%1 is not a valid",
    "cannot open shared object file",
    "dll load failed",
)
_OS_NAMES = {"linux": "linux", "darwin": "darwin", "win32": "win32", "cygwin": "win32"}
_ARCH_NAMES = {
    "x86_64": "x64",
    "amd64": "x64",
    "aarch64": "arm64",
    "arm64": "arm64",
    "armv7l": "armhf",
}


def running_platform() -> str:
    """This machine as a VS Code target names it (`linux-x64`, `darwin-arm64`, `win32-x64`)."""
    system = _OS_NAMES.get(sys.platform, sys.platform)
    machine = platform.machine().lower()
    return f"{system}-{_ARCH_NAMES.get(machine, machine)}"


def _problem(kind: str, cause: str, fix: str) -> dict[str, str]:
    return {"kind": kind, "cause": cause, "fix": fix}


def python_problem(version: tuple[int, ...]) -> dict[str, str] | None:
    """The interpreter is too old, or None."""
    if tuple(version[:2]) >= requirements.PYTHON:
        return None
    shown = ".".join(map(str, version[:3]))
    return _problem(
        "python-too-old",
        f"Python {shown} is too old: acpls needs Python {requirements.PYTHON_TEXT} or newer",
        f"run acpls with Python {requirements.PYTHON_TEXT} or newer",
    )


def platform_problem(built_for: str, here: str) -> dict[str, str] | None:
    """The package was built for another platform, or None."""
    if not built_for or built_for == here:
        return None
    return _problem(
        "wrong-platform",
        f"this package is for {built_for}, and this machine is {here}",
        f"install the acpls package for {here}",
    )


def server_modules() -> list[str]:
    """Every module of the installed acpls package, found on disk (nothing imported yet)."""
    root = os.path.dirname(os.path.abspath(__file__))
    names = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in _SKIPPED_PARTS and os.path.exists(os.path.join(folder, d, "__init__.py"))
        )
        relative = os.path.relpath(folder, os.path.dirname(root))
        package = relative.replace(os.sep, ".")
        for file in sorted(files):
            stem, ext = os.path.splitext(file)
            if ext != ".py" or stem in _SKIPPED_NAMES:
                continue
            names.append(package if stem == "__init__" else f"{package}.{stem}")
    return names


def import_problem(module: str, exc: BaseException) -> dict[str, str]:
    """What an import failure means for the user."""
    text = f"{type(exc).__name__}: {exc}"
    missing = getattr(exc, "name", None) if isinstance(exc, ModuleNotFoundError) else None
    if isinstance(exc, ImportError) and any(word in text.lower() for word in _FOREIGN_BINARY):
        return _problem(
            "wrong-platform",
            f"a compiled module that {module} needs is not for this machine"
            f" ({running_platform()}, CPython {platform.python_version()}): {text}",
            f"install the acpls package for {running_platform()}",
        )
    foreign = _compiled_elsewhere(missing) if missing else None
    if foreign is not None:
        return _problem(
            "wrong-platform",
            f"{module} needs the compiled module {missing}, and the one here ({foreign}) is not"
            f" for this machine ({running_platform()}, CPython {platform.python_version()})",
            f"install the acpls package for {running_platform()}",
        )
    if missing and not missing.startswith("acpls"):
        return _problem(
            "missing-module",
            f"{module} cannot import {missing}: it is not installed for {sys.executable}",
            "reinstall acpls with its dependencies",
        )
    return _problem("broken-module", f"{module} does not import: {text}", "reinstall acpls")


_COMPILED_SUFFIXES = (".so", ".pyd", ".dylib")


def _compiled_elsewhere(name: str) -> str | None:
    """A compiled file of module `name` that Python did not take (a Windows `.pyd` on Linux, a
    module built for another CPython): the file's name, or None."""
    package, _, leaf = name.rpartition(".")
    if package:
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            return None
        folders = list(spec.submodule_search_locations or []) if spec else []
    else:
        folders = [p for p in sys.path if p and os.path.isdir(p)]
    for folder in folders:
        try:
            files = sorted(os.listdir(folder))
        except OSError:
            continue
        for file in files:
            if file.startswith(leaf + ".") and file.endswith(_COMPILED_SUFFIXES):
                return file
    return None


def import_server() -> list[dict[str, str]]:
    """Imports every module; one problem per distinct cause, in import order."""
    problems: list[dict[str, str]] = []
    seen = set()
    for module in server_modules():
        try:
            importlib.import_module(module)
        except Exception as exc:  # any failure here is what the editor would see later
            problem = import_problem(module, exc)
            key = (problem["kind"], getattr(exc, "name", None) or str(exc))
            if key not in seen:
                seen.add(key)
                problems.append(problem)
    return problems


def speedup_report() -> dict[str, str]:
    """Which implementation each fast path uses, and why a wanted one is not in use."""
    from acpls import speedups

    report = {"json": speedups.JSON, "base64": speedups.BASE64}
    report["loop"] = speedups.loop_factory(speedups.chosen(os.environ.get("ACPLS_SPEEDUPS")))[1]
    for name, module, fast in (("json", "orjson", "orjson"), ("base64", "pybase64", "pybase64")):
        if report[name] != fast:
            report[name] += _why_not(module)
    return report


def _why_not(module: str) -> str:
    try:
        importlib.import_module(module)
    except Exception as exc:
        return f" ({module} not usable here: {type(exc).__name__}: {exc})"
    return " (turned off by ACPLS_SPEEDUPS)"


def terminal_warnings(on_windows: bool) -> list[str]:
    """Agent terminals on Windows need pywinpty, which is imported only when a terminal starts:
    the server starts without it, so its absence is a warning, not a failure."""
    if not on_windows:
        return []
    try:
        importlib.import_module("winpty")
    except Exception as exc:
        return [
            f"agent terminals need pywinpty, which does not load here ({type(exc).__name__}:"
            f" {exc}): use a CPython {requirements.BUNDLED_PYTHONS[0]} to"
            f" {requirements.BUNDLED_PYTHONS[-1]}, or pip install pywinpty"
        ]
    return []


def run(built_for: str = "") -> dict[str, Any]:
    """The whole check as one JSON-ready object."""
    here = running_platform()
    result: dict[str, Any] = {
        "python": platform.python_version(),
        "executable": sys.executable,
        "platform": here,
        "speedups": {},
        "warnings": [],
    }
    found = python_problem(tuple(sys.version_info[:3])) or platform_problem(built_for, here)
    problems = [found] if found else import_server()
    if not problems:
        result["speedups"] = speedup_report()
        result["warnings"] = terminal_warnings(sys.platform == "win32")
    result["problems"] = problems
    result["ok"] = not problems
    return result


def _text(result: dict[str, Any]) -> list[str]:
    lines = [f"acpls on Python {result['python']} ({result['executable']}), {result['platform']}"]
    for problem in result["problems"]:
        lines.append(f"FAIL {problem['cause']}; fix: {problem['fix']}")
    for name, used in result["speedups"].items():
        lines.append(f"{name}: {used}")
    lines.extend(f"WARNING {warning}" for warning in result["warnings"])
    if result["ok"]:
        lines.append("acpls imports and can start here")
    return lines


def main(argv: list[str]) -> int:
    """`acpls --self-check [--json] [--platform TARGET]`: exit 0 when the server can start."""
    built_for = ""
    if "--platform" in argv:
        position = argv.index("--platform") + 1
        built_for = argv[position] if position < len(argv) else ""
    result = run(built_for)
    if "--json" in argv:
        print(json.dumps(result))
    else:
        print("\n".join(_text(result)))
    return 0 if result["ok"] else 1
