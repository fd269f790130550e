"""`acpls` / `python -m acpls`: the language server on stdio (stdout carries only LSP)."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys

from acpls import __version__


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="acpls", description="A language server that runs an ACP coding agent for your editor."
    )
    parser.add_argument("--version", action="version", version=f"acpls {__version__}")
    parser.add_argument("--stdio", action="store_true", help="speak LSP on stdio (the default)")
    parser.add_argument(
        "--self-check",
        action="store_true",
        help="import the whole server, show the fast paths in use, exit 1 with the cause and the"
        " fix when it cannot start here (--json: one JSON object; --platform TARGET: the platform"
        " the package was built for, e.g. linux-x64)",
    )
    parser.add_argument(
        "--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"]
    )
    words = sys.argv[1:] if argv is None else argv
    if not {"agents", "doctor", "-h", "--help"} & set(words):
        # The language server itself (what editors start): acpls.cli and what it imports (the
        # agent registry, installs, doctor) stay out of the start (bench P4).
        args = parser.parse_args(words)
        args.command = None
        return args
    subparsers = parser.add_subparsers(dest="command", metavar="{agents,doctor}")
    from acpls.cli import add_agents_parser, add_doctor_parser

    add_agents_parser(subparsers)
    add_doctor_parser(subparsers)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    if "--self-check" in words:
        # Before argparse and anything else: it must speak on a Python or an install too broken
        # for the rest (acpls/self_check.py).
        from acpls.self_check import main as self_check

        return self_check(words)
    args = _parse_args(argv)
    if args.command == "agents":
        from acpls.cli import run_agents

        return run_agents(args)
    if args.command == "doctor":
        from acpls.cli import run_doctor

        return run_doctor(args)
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, args.log_level),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # pygls logs every message body at INFO: far too much, and on the hot path.
    logging.getLogger("pygls").setLevel(logging.WARNING)
    # watchfiles logs each change it detects at INFO. Editors keep a server's stderr in a log file
    # (Neovim's lsp.log); inside the watched folder, each such line was a change to detect.
    logging.getLogger("watchfiles").setLevel(logging.WARNING)
    from acpls import speedups
    from acpls.server import create_server, serve_stdio

    logging.getLogger("acpls").info("%s", speedups.describe())
    server = create_server()
    try:
        code = speedups.run(serve_stdio(server))
    except KeyboardInterrupt:
        code = 130
    except SystemExit as exc:  # pygls' `exit` handler may exit from inside the loop
        code = exc.code if isinstance(exc.code, int) else 1
    # The agent and every terminal are stopped by now. Leave at once: interpreter shutdown would
    # wait for idle worker threads (watchfiles' anyio workers) for up to a second or more, and an
    # editor sees a server that lingers after `exit` as hung.
    logging.shutdown()
    with contextlib.suppress(OSError, ValueError):  # stdout may be closed already
        sys.stdout.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
