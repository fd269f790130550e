"""The editor's commands (`workspace/executeCommand`, editors/protocol.md section 3): each checks
its one object argument and calls the core. `COMMANDS` is the table server.py registers;
`command_adapter` turns a handler into a pygls command (the hub's errors become JSON-RPC errors).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcException

from acpls.acp.errors import AcpError
from acpls.core.errors import CommandError

if TYPE_CHECKING:
    from acpls.core.hub import Hub
    from acpls.services.agent_check import AgentCheck


class InvalidParams(JsonRpcException):
    CODE = -32602
    MESSAGE = "Invalid params"


def _argument(args: Any) -> dict[str, Any]:
    """Commands take one object argument (editors/protocol.md section 3)."""
    if isinstance(args, list):
        if not args:
            return {}
        args = args[0]
    if args is None:
        return {}
    if not isinstance(args, dict):
        raise InvalidParams("the command argument must be one JSON object")
    return args


def _string(args: dict[str, Any], key: str, *, required: bool = False) -> str | None:
    value = args.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value):
        raise InvalidParams(f"{key} must be a {'non-empty ' if required else ''}string")
    return value


def _context(args: dict[str, Any]) -> list[dict[str, Any]]:
    context = args.get("context") or []
    if not isinstance(context, list):
        raise InvalidParams("context must be a list of {uri, range?}")
    for item in context:
        if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
            raise InvalidParams("each context item needs a uri")
        rng = item.get("range")
        if rng is not None and not _is_range(rng):
            raise InvalidParams("context range must be an LSP range")
    return context


def _is_range(rng: Any) -> bool:
    def pos(p: Any) -> bool:
        return isinstance(p, dict) and isinstance(p.get("line"), int) and p["line"] >= 0

    return isinstance(rng, dict) and pos(rng.get("start")) and pos(rng.get("end"))


CommandHandler = Callable[["Hub", dict[str, Any]], Awaitable[Any]]


def _agent_arg(args: dict[str, Any]) -> Any:
    """`agent`: a name (preset, registry id, or an agent already started) or an agent object."""
    agent = args.get("agent")
    if agent is not None and not (isinstance(agent, dict) or (isinstance(agent, str) and agent)):
        raise InvalidParams("agent must be a name or {command, args?, env?, name?}")
    return agent


async def _new_session(hub: Hub, args: dict[str, Any]) -> Any:
    session = await hub.new_session(_string(args, "cwd"), _agent_arg(args))
    return {"sessionId": session.id, "agent": session.agent}


async def _prompt(hub: Hub, args: dict[str, Any]) -> Any:
    text = _string(args, "text", required=True)
    assert text is not None
    # Imported here, like agent_check below: not on the path from spawn to `initialize` (P4).
    from acpls.translate.mentions import parse_mentions

    try:
        mentions = parse_mentions(args.get("mentions"))
    except ValueError as exc:
        raise InvalidParams(str(exc)) from exc
    return await hub.prompt(args.get("sessionId"), text, _context(args), mentions)


async def _cancel(hub: Hub, args: dict[str, Any]) -> Any:
    await hub.cancel(args.get("sessionId"))
    return None


async def _set_follow(hub: Hub, args: dict[str, Any]) -> Any:
    enabled = args.get("enabled")
    if not isinstance(enabled, bool):
        raise InvalidParams("enabled must be true or false")
    hub.follow.set_enabled(enabled)
    return {"enabled": hub.follow.active}


async def _set_mode(hub: Hub, args: dict[str, Any]) -> Any:
    await hub.set_mode(args.get("sessionId"), _string(args, "modeId", required=True))
    return None


async def _set_config_option(hub: Hub, args: dict[str, Any]) -> Any:
    if "value" not in args:
        raise InvalidParams("value is required")
    config_id = _string(args, "configId", required=True)
    return await hub.set_config_option(args.get("sessionId"), config_id, args["value"])


async def _list_sessions(hub: Hub, args: dict[str, Any]) -> Any:
    every_page = args.get("all", False)
    if not isinstance(every_page, bool):
        raise InvalidParams("all must be true or false")
    return await _admin(hub).list(
        _string(args, "cwd"), _string(args, "cursor"), every_page, _agent_arg(args)
    )


async def _load_session(hub: Hub, args: dict[str, Any], *, replay: bool = True) -> Any:
    session_id = _string(args, "sessionId")
    if session_id == "":
        raise InvalidParams("sessionId must not be empty")
    if session_id is None:  # an editor without a picker: acpls asks (window/showMessageRequest)
        session_id = await _admin(hub).pick("Load" if replay else "Resume", _agent_arg(args))
    session = await hub.load_session(
        session_id, _string(args, "cwd"), replay=replay, agent=_agent_arg(args)
    )
    return {"sessionId": session.id, "agent": session.agent}


async def _resume_session(hub: Hub, args: dict[str, Any]) -> Any:
    return await _load_session(hub, args, replay=False)


async def _steer(hub: Hub, args: dict[str, Any]) -> Any:
    from acpls.core.steering import steer

    text = _string(args, "text", required=True)
    assert text is not None
    return await steer(hub, args.get("sessionId"), text, _context(args))


async def _fork_session(hub: Hub, args: dict[str, Any]) -> Any:
    result = await _admin(hub).fork(_string(args, "sessionId"), _agent_arg(args))
    forked = hub.sessions.get(result["sessionId"])
    return {**result, "agent": forked.agent} if forked else result


async def _authenticate(hub: Hub, args: dict[str, Any]) -> Any:
    conn = await hub.agent(_agent_arg(args))
    if not await hub.authenticate(conn, _string(args, "methodId")):
        raise CommandError("sign-in did not complete", -32000)
    return None


async def _sessions(hub: Hub, args: dict[str, Any]) -> Any:
    return hub.session_summaries()


async def _open_transcript(hub: Hub, args: dict[str, Any]) -> Any:
    session = hub.session(args.get("sessionId"))
    assert session is not None
    uri = hub.router.transcript_uri(session)
    await hub.editor.show_document(uri, None)
    return {"uri": uri}


async def _restart_agent(hub: Hub, args: dict[str, Any]) -> Any:
    await hub.restart_agent(_agent_arg(args))
    return None


async def _review(hub: Hub, args: dict[str, Any]) -> Any:
    return hub.review.files(_string(args, "sessionId"))


async def _keep_hunk(hub: Hub, args: dict[str, Any]) -> Any:
    return hub.review.keep_hunk(_string(args, "hunkId", required=True) or "")


async def _reject_hunk(hub: Hub, args: dict[str, Any]) -> Any:
    return await hub.review.reject_hunk(_string(args, "hunkId", required=True) or "")


def _optional_path(hub: Hub, args: dict[str, Any]) -> str | None:
    uri = _string(args, "uri")
    return hub.path_of(uri) if uri is not None else None


async def _keep_all(hub: Hub, args: dict[str, Any]) -> Any:
    return hub.review.keep_all(_optional_path(hub, args))


async def _reject_all(hub: Hub, args: dict[str, Any]) -> Any:
    return await hub.review.reject_all(_optional_path(hub, args))


async def _rejected(hub: Hub, args: dict[str, Any]) -> Any:
    return hub.review.rejected(_optional_path(hub, args))


async def _check_agents(hub: Hub, args: dict[str, Any]) -> Any:
    """`acpls.checkAgents`: the configured agents (`agent` and the `agents` setting's) or the
    ones named (names of the `agents` setting too) installed and answering?"""
    from acpls.services.agent_check import AgentCheck, check_agents

    names = args.get("agents")
    unresolved: list[AgentCheck] = []
    if names is None:
        specs = [hub.settings.agent]
        for name, _ in hub.settings.agents:
            try:
                spec = hub.agent_spec(name)
            except CommandError as exc:  # a bad entry is one failed check, not a failed command
                unresolved.append(AgentCheck(name, (), installed=False, ok=False, detail=str(exc)))
                continue
            if all(spec.name != s.name for s in specs):
                specs.append(spec)
    elif isinstance(names, list):
        specs = []
        for value in names:
            if not isinstance(value, (str, dict)):
                raise InvalidParams("agents must be a list of preset names or agent objects")
            try:
                specs.append(hub.agent_spec(value))
            except CommandError as exc:
                raise InvalidParams(str(exc)) from exc
    else:
        raise InvalidParams("agents must be a list of preset names or agent objects")
    results = await check_agents(
        specs, cwd=hub.workspace_root(), env=hub.settings.base_env(hub.environ), node=hub.node
    )
    return {"agents": [r.to_json() for r in [*results, *unresolved]]}


async def _agents(hub: Hub, args: dict[str, Any]) -> Any:
    """`acpls.agents`: presets and registry agents; `refresh: true` waits for a fresh registry."""
    refresh = args.get("refresh", False)
    if not isinstance(refresh, bool):
        raise InvalidParams("refresh must be true or false")
    if refresh:
        await hub.catalog.refresh()
    else:
        hub.catalog.schedule_refresh()
    return {
        "agents": hub.catalog.entries(),
        "default": hub.settings.agent.name,
        "platform": hub.catalog.platform,
        "registry": hub.catalog.current().to_json(),
    }


async def _install_agent(hub: Hub, args: dict[str, Any]) -> Any:
    """`acpls.installAgent`: download a registry binary, or check an npx / uvx agent's tool."""
    from acpls.core.agents import UnknownAgent
    from acpls.services.agent_install import AgentInstallError

    name = _string(args, "agent", required=True) or ""
    try:
        return await hub.catalog.install(name)
    except UnknownAgent as exc:
        raise InvalidParams(str(exc)) from exc
    except AgentInstallError as exc:
        raise CommandError(str(exc), -32000) from exc


async def _list_rules(hub: Hub, args: dict[str, Any]) -> Any:
    rules = hub.agent_requests.rules.list()
    return {"rules": [{**r.to_json(), "description": r.describe()} for r in rules]}


async def _remove_rule(hub: Hub, args: dict[str, Any]) -> Any:
    rule_id = _string(args, "ruleId", required=True) or ""
    if hub.agent_requests.rules.remove(rule_id) is None:
        raise InvalidParams(f"no rule {rule_id!r}")
    return await _list_rules(hub, {})


async def _checkpoints(hub: Hub, args: dict[str, Any]) -> Any:
    return hub.checkpoints.listing(_string(args, "sessionId"))


async def _restore_checkpoint(hub: Hub, args: dict[str, Any]) -> Any:
    include = args.get("includeUnsaved") or []
    if not isinstance(include, list) or not all(isinstance(p, str) for p in include):
        raise InvalidParams("includeUnsaved must be a list of paths")
    preview = args.get("preview", False)
    if not isinstance(preview, bool):
        raise InvalidParams("preview must be true or false")
    return await hub.checkpoints.restore(_string(args, "id", required=True), preview, include)


async def _checkpoint_diff(hub: Hub, args: dict[str, Any]) -> Any:
    return await hub.checkpoints.diff(_string(args, "id", required=True))


async def _continue_from_checkpoint(hub: Hub, args: dict[str, Any]) -> Any:
    return await hub.checkpoints.continue_from(_string(args, "id", required=True))


async def _close_session(hub: Hub, args: dict[str, Any]) -> Any:
    return await _admin(hub).close(_string(args, "sessionId"))


async def _delete_session(hub: Hub, args: dict[str, Any]) -> Any:
    session_id = _string(args, "sessionId", required=True) or ""
    return await _admin(hub).delete(session_id, _agent_arg(args))


async def _logout(hub: Hub, args: dict[str, Any]) -> Any:
    await _admin(hub).logout(_agent_arg(args))
    return None


async def _mention_candidates(hub: Hub, args: dict[str, Any]) -> Any:
    """`acpls.mentionCandidates`: files and sessions matching `query`, for @-mention completion."""
    limit = args.get("limit", 50)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise InvalidParams("limit must be a positive integer")
    from acpls.core.mentions import mention_candidates

    return await mention_candidates(hub, _string(args, "query") or "", limit)


def _admin(hub: Hub) -> Any:
    return hub.admin


COMMANDS: dict[str, CommandHandler] = {
    "acpls.newSession": _new_session,
    "acpls.prompt": _prompt,
    "acpls.cancel": _cancel,
    "acpls.setFollow": _set_follow,
    "acpls.setMode": _set_mode,
    "acpls.setConfigOption": _set_config_option,
    "acpls.listSessions": _list_sessions,
    "acpls.loadSession": _load_session,
    "acpls.resumeSession": _resume_session,
    "acpls.forkSession": _fork_session,
    "acpls.steer": _steer,
    "acpls.closeSession": _close_session,
    "acpls.deleteSession": _delete_session,
    "acpls.logout": _logout,
    "acpls.authenticate": _authenticate,
    "acpls.sessions": _sessions,
    "acpls.openTranscript": _open_transcript,
    "acpls.restartAgent": _restart_agent,
    "acpls.review": _review,
    "acpls.keepHunk": _keep_hunk,
    "acpls.rejectHunk": _reject_hunk,
    "acpls.keepAll": _keep_all,
    "acpls.rejectAll": _reject_all,
    "acpls.rejected": _rejected,
    "acpls.checkAgents": _check_agents,
    "acpls.agents": _agents,
    "acpls.installAgent": _install_agent,
    "acpls.listRules": _list_rules,
    "acpls.removeRule": _remove_rule,
    "acpls.checkpoints": _checkpoints,
    "acpls.restoreCheckpoint": _restore_checkpoint,
    "acpls.checkpointDiff": _checkpoint_diff,
    "acpls.continueFromCheckpoint": _continue_from_checkpoint,
    "acpls.mentionCandidates": _mention_candidates,
}


def command_adapter(
    handler: CommandHandler, request_id: Callable[[], Any], prompts: dict[Any, str | None]
) -> Callable[[Hub, Any], Awaitable[Any]]:
    """`handler` as a command of one argument; `acpls.prompt` requests in flight are kept in
    `prompts` (LSP request id -> the sessionId they named) so the editor can cancel them."""

    async def run(hub: Hub, args: Any) -> Any:
        arg = _argument(args)
        msg_id = request_id() if handler is _prompt else None
        if msg_id is not None:
            session_id = arg.get("sessionId")
            prompts[msg_id] = session_id if isinstance(session_id, str) else None
        try:
            return await handler(hub, arg)
        except CommandError as exc:
            raise JsonRpcException(message=str(exc), code=exc.code) from exc
        except AcpError as exc:
            raise JsonRpcException(message=exc.message, code=exc.code) from exc
        finally:
            if msg_id is not None:
                prompts.pop(msg_id, None)

    return run
