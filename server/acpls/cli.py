"""The command line beside the server: `acpls agents list | show ID | install ID | check` and
`acpls doctor`.

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

from acpls.core.agents import AgentCatalog, UnknownAgent
from acpls.core.hub import default_state_dir
from acpls.presets import PRESET_LIST, AgentSpec
from acpls.registry.bundled import SNAPSHOT_DATE
from acpls.registry.model import DEFAULT_REGISTRY_URL
from acpls.services.agent_check import DEFAULT_TIMEOUT, check_agents
from acpls.services.agent_install import AgentInstallError
from acpls.services.doctor import diagnose, fix_node, report_lines
from acpls.services.node_runtime import NodeShims
from acpls.settings import Settings, parse_settings


def add_agents_parser(subparsers: Any) -> None:
    agents = subparsers.add_parser(
        "agents",
        help="the agents acpls can start (presets and the ACP registry), and whether they work",
    )
    agents.add_argument(
        "--registry-url",
        default=DEFAULT_REGISTRY_URL,
        help="the ACP registry to read (default: the public one); a file:// URL works too",
    )
    agents.add_argument(
        "--offline",
        action="store_true",
        help="do not fetch the registry: use the cached copy, else the bundled snapshot",
    )
    verbs = agents.add_subparsers(dest="verb", required=True)
    listing = verbs.add_parser("list", help="presets and registry agents, and how each starts here")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    show = verbs.add_parser("show", help="one agent: its registry entry and its command here")
    show.add_argument("agent", help="a preset name or a registry id")
    show.add_argument("--json", action="store_true", help="machine-readable output")
    install = verbs.add_parser(
        "install", help="download a registry agent's binary (or check its npx / uvx tool)"
    )
    install.add_argument("agent", help="a preset name or a registry id")
    check = verbs.add_parser(
        "check", help="whether each agent is installed and answers ACP initialize"
    )
    check.add_argument(
        "agents",
        nargs="*",
        help="preset names, registry ids, or an agent setting as JSON "
        '(\'{"command": "x", "args": []}\'); default: every preset',
    )
    check.add_argument("--json", action="store_true", help="machine-readable output")
    check.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per agent")
    check.add_argument("--cwd", default=os.getcwd(), help="the agent's working directory")


def run_agents(args: argparse.Namespace) -> int:
    return asyncio.run(_run_agents(args))


async def _run_agents(args: argparse.Namespace) -> int:
    catalog = AgentCatalog(os.environ, args.registry_url)
    if not args.offline:
        state = await catalog.refresh()
        if state.error:
            print(
                f"acpls agents: registry {state.url} unreachable ({state.error}); "
                f"using the {state.source}",
                file=sys.stderr,
            )
    try:
        if args.verb == "list":
            return _list(catalog, args.json)
        if args.verb == "show":
            return _show(catalog, args.agent, args.json)
        if args.verb == "install":
            result = await catalog.install(args.agent)
            where = f" in {result['installDir']}" if "installDir" in result else ""
            print(f"{args.agent}: ready{where}: {' '.join(result['command'])}")
            return 0
        return await _check(catalog, args)
    except UnknownAgent as exc:
        print(f"acpls agents {args.verb}: {exc}", file=sys.stderr)
        return 2
    except AgentInstallError as exc:
        print(f"acpls agents {args.verb}: {exc}", file=sys.stderr)
        return 1


async def _check(catalog: AgentCatalog, args: argparse.Namespace) -> int:
    try:
        specs = [_spec(catalog, value) for value in args.agents] or [
            p.resolve() for p in PRESET_LIST
        ]
    except ValueError as exc:
        print(f"acpls agents check: {exc}", file=sys.stderr)
        return 2
    results = await check_agents(
        specs,
        cwd=args.cwd,
        env=Settings().base_env(os.environ),
        answer_within=args.timeout,
        node=node_shims(),
    )
    if args.json:
        print(json.dumps([r.to_json() for r in results], indent=2))
    else:
        for result in results:
            print(result.summary())
    return 0 if all(r.ok for r in results) else 1


def _spec(catalog: AgentCatalog, value: str) -> AgentSpec:
    """A preset name, a registry id or an `agent` setting in JSON, parsed exactly as the editor's
    setting is."""
    raw: Any = value
    if value.lstrip().startswith("{"):
        try:
            raw = json.loads(value)
        except ValueError as exc:
            raise ValueError(f"not valid JSON: {value!r}: {exc}") from exc
    settings, problems = parse_settings(
        {"agent": raw, "registry": {"url": catalog.service.url}}, None, _resolver(catalog)
    )
    if problems:
        raise ValueError("; ".join(problems))
    return settings.agent


def _resolver(catalog: AgentCatalog) -> Any:
    def resolve(name: str, url: str) -> AgentSpec:
        try:
            return catalog.resolve(name)
        except AgentInstallError as exc:
            raise ValueError(str(exc)) from exc

    return resolve


def _list(catalog: AgentCatalog, as_json: bool) -> int:
    rows = catalog.entries()
    if as_json:
        print(json.dumps({"agents": rows, "registry": catalog.current().to_json()}, indent=2))
        return 0
    state = catalog.current()
    # The bundled snapshot says how old it is: a user offline knows what they are choosing from.
    source = f"snapshot of {SNAPSHOT_DATE}" if state.source == "snapshot" else state.source
    print(f"# registry: {state.url or '(offline)'} ({source}, version {state.registry.version})")
    width = max(len(r["id"]) for r in rows)
    for row in rows:
        mark = (
            "installed"
            if row["installed"]
            else "runnable"
            if row["runnable"]
            else "missing"
            if "problem" in row
            else "to install"
        )
        version = row["version"] or "-"
        print(f"{row['id']:<{width}}  {version:<10} {mark:<10} {row['name']}: {row['description']}")
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
    doctor.add_argument(
        "--fix",
        action="store_true",
        help="install what acpls can bring itself: a Node.js for the agents (acpls[node]) where"
        " there is none",
    )
    doctor.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per agent")
    doctor.add_argument("--cwd", default=os.getcwd(), help="the agents' working directory")


def run_doctor(args: argparse.Namespace) -> int:
    """Exit status 1 when something acpls or a named agent needs is missing, 2 on bad arguments."""
    try:
        specs = [_spec(AgentCatalog(os.environ), value) for value in args.agents]
    except ValueError as exc:
        print(f"acpls doctor: {exc}", file=sys.stderr)
        return 2
    if args.fix:
        fixed = fix_node(node_shims(), Settings().base_env(os.environ))
        if fixed:
            print(f"acpls doctor --fix: {fixed}", file=sys.stderr)
    findings = asyncio.run(
        diagnose(
            specs or [p.resolve() for p in PRESET_LIST],
            agents_needed=bool(specs),
            cwd=args.cwd,
            env=Settings().base_env(os.environ),
            answer_within=args.timeout,
            node=node_shims(),
        )
    )
    if args.json:
        print(json.dumps([f.to_json() for f in findings], indent=2))
    else:
        print("\n".join(report_lines(findings)))
    return 1 if any(f.blocking for f in findings) else 0


def node_shims() -> NodeShims:
    """The Node.js agents started from here run on where their PATH has none, as the server's."""
    return NodeShims(default_state_dir(os.environ) / "node" / "bin", os.environ)


def _show(catalog: AgentCatalog, name: str, as_json: bool) -> int:
    out = catalog.row(name)
    agent = catalog.registry_agent(out.get("registryId") or "")
    if agent is not None:
        out["entry"] = _entry(agent)
    if as_json:
        print(json.dumps(out, indent=2))
        return 0
    for key in ("id", "name", "description", "version", "distributions", "command", "installDir"):
        value = out.get(key)
        if value not in (None, [], ""):
            print(f"{key}: {' '.join(value) if isinstance(value, list) else value}")
    print(f"installed: {'yes' if out.get('installed') else 'no'}")
    if out.get("problem"):
        print(f"problem: {out['problem']}")
    return 0


def _entry(agent: Any) -> dict[str, Any]:
    from acpls.registry.model import Registry, unstructure_registry

    return unstructure_registry(Registry(version="", agents=(agent,)))["agents"][0]
