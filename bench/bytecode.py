"""acpls as pip installs it: with its modules' bytecode compiled (the Makefile's `bytecode`).

An editable install has no bytecode, and where PYTHONDONTWRITEBYTECODE=1 is set (this machine,
CI) Python never writes it, so every acpls start would compile every acpls module again: ~0.4 s
of CPU, which no installed acpls pays. The benches run directly as well as through make, so each
compiles what changed before it measures (one stat a module when nothing did).
"""

from __future__ import annotations

import compileall
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "server" / "acpls"


def compile_acpls() -> None:
    if not compileall.compile_dir(str(SOURCE), quiet=1):
        raise SystemExit(f"acpls' sources in {SOURCE} do not compile")
