"""The command line beside the server: `acpls agents list | check` and `acpls doctor`.

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
from acpls.services.doctor import diagnose, report_lines
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


def add_doctor_parser(subparsers: Any) -> None:
    doctor = subparsers.add_parser(
        "doctor",
        help="what acpls needs here (Python, Node/npx, uv, agents, editors), and what is missing",
    )
    doctor.add_argument(
        "agents",
        nargs="*",
        help="agents you use (preset names or an agent setting as JSON); they must work. "
        "Default: every preset, reported but not required",
    )
    doctor.add_argument("--json", action="store_true", help="machine-readable output")
    doctor.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per agent")
    doctor.add_argument("--cwd", default=os.getcwd(), help="the agents' working directory")


def run_doctor(args: argparse.Namespace) -> int:
    """Exit status 1 when something acpls or a named agent needs is missing, 2 on bad arguments."""
    try:
        specs = [_spec(value) for value in args.agents]
    except ValueError as exc:
        print(f"acpls doctor: {exc}", file=sys.stderr)
        return 2
    findings = asyncio.run(
        diagnose(
            specs or [p.resolve() for p in PRESET_LIST],
            agents_needed=bool(specs),
            cwd=args.cwd,
            env=Settings().base_env(os.environ),
            answer_within=args.timeout,
        )
    )
    if args.json:
        print(json.dumps([f.to_json() for f in findings], indent=2))
    else:
        print("\n".join(report_lines(findings)))
    return 1 if any(f.blocking for f in findings) else 0
