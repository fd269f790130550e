"""The command line beside the server: `acpls agents list | check`.

`acpls` with no subcommand is the language server (stdout carries only LSP); the subcommands are
for people, and print to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

from acpls.presets import PRESET_LIST, PRESETS_BY_NAME, AgentSpec
from acpls.services.agent_check import DEFAULT_TIMEOUT, check_agents
from acpls.settings import Settings, parse_settings


def add_agents_parser(subparsers: Any) -> None:
    agents = subparsers.add_parser(
        "agents", help="the agents acpls can start, and whether they work"
    )
    verbs = agents.add_subparsers(dest="verb", required=True)
    listing = verbs.add_parser("list", help="the presets and the command each starts here")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    check = verbs.add_parser(
        "check", help="whether each agent is installed and answers ACP initialize"
    )
    check.add_argument(
        "agents",
        nargs="*",
        help='preset names, or an agent setting as JSON (\'{"command": "x", "args": []}\'); '
        "default: every preset",
    )
    check.add_argument("--json", action="store_true", help="machine-readable output")
    check.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per agent")
    check.add_argument("--cwd", default=os.getcwd(), help="the agent's working directory")


def run_agents(args: argparse.Namespace) -> int:
    if args.verb == "list":
        return _list(args.json)
    try:
        specs = [_spec(value) for value in args.agents] or [p.resolve() for p in PRESET_LIST]
    except ValueError as exc:
        print(f"acpls agents check: {exc}", file=sys.stderr)
        return 2
    results = asyncio.run(
        check_agents(
            specs,
            cwd=args.cwd,
            env=Settings().base_env(os.environ),
            answer_within=args.timeout,
        )
    )
    if args.json:
        print(json.dumps([r.to_json() for r in results], indent=2))
    else:
        for result in results:
            print(result.summary())
    return 0 if all(r.ok for r in results) else 1


def _spec(value: str) -> AgentSpec:
    """A preset name or an `agent` setting in JSON, parsed exactly as the editor's setting is."""
    raw: Any = value
    if value.lstrip().startswith("{"):
        try:
            raw = json.loads(value)
        except ValueError as exc:
            raise ValueError(f"not valid JSON: {value!r}: {exc}") from exc
    settings, problems = parse_settings({"agent": raw})
    if problems:
        raise ValueError("; ".join(problems))
    return settings.agent


def _list(as_json: bool) -> int:
    rows = []
    for preset in PRESET_LIST:
        spec = preset.resolve()
        rows.append(
            {
                "name": preset.name,
                "title": preset.title,
                "package": preset.package,
                "command": spec.argv,
                "install": preset.install_hint,
            }
        )
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    width = max(len(n) for n in PRESETS_BY_NAME)
    for row in rows:
        print(f"{row['name']:<{width}}  {row['title']}: {' '.join(row['command'])}")
    return 0
