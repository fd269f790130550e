"""The command the demo agent runs in a terminal: a tiny, dependency-free test runner.

Run as a script (`python checks.py [--tests FILE ...] [--compile FILE ...]`) in the session's
working directory. `--tests` imports each file and runs its `test_*` functions (used only on the
demo's own sample project); `--compile` byte-compiles files without running them (safe on any
project). Output is coloured with ANSI SGR codes and uses "✓"/"✗", so an editor's terminal shows
colours and multi-byte characters. Lines are paced by `ACPLS_DEMO_SPEED` so the output streams.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

sys.dont_write_bytecode = True  # never leave __pycache__ behind in the user's project

GREEN = "\x1b[32m"
RED = "\x1b[31m"
BOLD = "\x1b[1m"
DIM = "\x1b[2m"
RESET = "\x1b[0m"


def _pause() -> None:
    try:
        speed = float(os.environ.get("ACPLS_DEMO_SPEED", "1"))
    except ValueError:
        speed = 1.0
    if speed > 0:
        time.sleep(0.08 * speed)


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
    _pause()


def _test_functions(path: Path) -> list[tuple[str, Callable[[], object]]]:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [
        (name, getattr(module, name))
        for name in sorted(vars(module))
        if name.startswith("test_") and callable(getattr(module, name))
    ]


def run_tests(paths: list[Path]) -> int:
    """Run the `test_*` functions of each file; return the number of failures."""
    sys.path.insert(0, str(Path.cwd()))
    failures = 0
    passed = 0
    for path in paths:
        try:
            tests = _test_functions(path)
        except Exception as error:
            _say(f"{RED}✗ {path.name}: cannot import ({error}){RESET}")
            failures += 1
            continue
        for name, test in tests:
            try:
                test()
            except Exception:
                failures += 1
                last = traceback.format_exc().strip().splitlines()[-1]
                _say(f"{RED}✗ {path.name}::{name}{RESET} {DIM}{last}{RESET}")
            else:
                passed += 1
                _say(f"{GREEN}✓ {path.name}::{name}{RESET}")
    colour = RED if failures else GREEN
    _say(f"{BOLD}{colour}{passed} passed, {failures} failed{RESET}")
    return failures


def compile_files(paths: list[Path]) -> int:
    """Byte-compile each file without running it; return the number that failed."""
    failures = 0
    for path in paths:
        try:
            compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
        except (SyntaxError, ValueError, OSError) as error:
            failures += 1
            _say(f"{RED}✗ {path}{RESET} {DIM}{type(error).__name__}: {error}{RESET}")
        else:
            _say(f"{GREEN}✓ {path} compiles{RESET}")
    colour = RED if failures else GREEN
    _say(f"{BOLD}{colour}{len(paths) - failures} ok, {failures} failed{RESET}")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tests", nargs="*", default=[], type=Path)
    parser.add_argument("--compile", nargs="*", default=[], type=Path)
    args = parser.parse_args(argv)
    _say(f"{BOLD}acpls demo checks{RESET} in {Path.cwd()}")
    failures = 0
    if args.tests:
        failures += run_tests(args.tests)
    if args.compile:
        failures += compile_files(args.compile)
    if not args.tests and not args.compile:
        _say(f"{DIM}nothing to check{RESET}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
