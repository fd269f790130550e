"""`python -m acpls.demo`: run the demo ACP agent on stdin/stdout.

`python -m acpls.demo --copy-workspace DIR` instead copies the sample project into DIR (so that a
demo or a test has something to work on) and prints DIR.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m acpls.demo", description=__doc__)
    parser.add_argument(
        "--copy-workspace",
        type=Path,
        metavar="DIR",
        help="copy the sample project into DIR and exit",
    )
    parser.add_argument("--log-level", default="WARNING", help="stderr log level")
    args = parser.parse_args(argv)
    if args.copy_workspace is not None:
        from acpls.demo.workspace_scan import copy_sample_workspace

        print(copy_sample_workspace(args.copy_workspace.resolve()))
        return 0

    from acpls.demo.agent_kit import setup_stderr_logging

    setup_stderr_logging(getattr(logging, str(args.log_level).upper(), logging.WARNING))
    try:
        asyncio.run(_serve())
    except KeyboardInterrupt:
        return 130
    return 0


async def _serve() -> None:
    from acpls.demo.agent import DemoAgent
    from acpls.demo.agent_kit import open_stdio_peer

    peer = await open_stdio_peer()
    DemoAgent(peer)
    await peer.run()


if __name__ == "__main__":
    sys.exit(main())
