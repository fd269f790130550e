"""The LSP server: a thin pygls class, and `create_server()` wiring every handler.

Handlers are short adapters: they check the editor's arguments and call the hub (core/hub.py),
which knows ACP. Commands are listed in `COMMANDS`; editors/protocol.md section 3 documents them.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidRequest,
    JsonRpcServerNotInitialized,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, default_converter, lsp_method

from acpls import __version__
from acpls.acp.errors import AcpError
from acpls.core.errors import CommandError
from acpls.editor.messages import register_message_hooks
from acpls.editor.port import LspEditorPort
from acpls.services.agent_check import check_agents
from acpls.settings import parse_settings
from acpls.translate.fix_actions import fix_actions
from acpls.translate.mentions import parse_mentions
from acpls.translate.transcript_lenses import lenses
from acpls.translate.uris import uri_to_path

if TYPE_CHECKING:
    from acpls.core.hub import Hub

logger = logging.getLogger(__name__)

AGENT_COMMENT = re.compile(r"@agent\b[:\s]*(?P<question>.*)$")


def _converter_factory() -> Any:
    converter = default_converter()
    register_message_hooks(converter)
    return converter


class AcplsProtocol(LanguageServerProtocol):
    """Advertises the acpls editor protocol in the initialize result, and keeps LSP's order: before
    `initialize` a request gets ServerNotInitialized (-32002) and a notification is dropped; after
    `shutdown` a request gets InvalidRequest (-32600); `exit` is always handled (pygls itself
    answers neither, and silently drops what comes after shutdown)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_received = False

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        # pygls runs each message's handler in a copy of this context: a command can read its id.
        _REQUEST_ID.set(getattr(message, "id", None))
        if method == types.CANCEL_REQUEST:
            self._cancel_prompt(getattr(getattr(message, "params", None), "id", None))
        if isinstance(method, str) and method != types.EXIT:
            error = self._out_of_order(method)
            if error is not None:
                if hasattr(message, "id"):
                    self._send_response(message.id, error=error.to_response_error())
                else:
                    logger.debug("dropping the %s notification: %s", method, error.message)
                return
            if method == types.INITIALIZE:
                self._initialize_received = True
        super().handle_message(message)

    def _cancel_prompt(self, msg_id: Any) -> None:
        """The editor gave up on an `acpls.prompt` request: the agent's turn is cancelled too (as
        with acpls.cancel), so it does not go on working for nobody."""
        server = self._server
        if not isinstance(server, AcplsServer) or msg_id not in server.prompt_requests:
            return
        hub = server.hub
        session_id = server.prompt_requests[msg_id] or hub.current_session_id
        if session_id is not None:
            hub.tasks.spawn("editor-cancel", _cancel_quietly(hub, session_id))

    def _out_of_order(self, method: str) -> JsonRpcException | None:
        if self._shutdown:
            return JsonRpcInvalidRequest(message=f"{method} after shutdown: acpls is stopping")
        if method == types.INITIALIZE and self._initialize_received:
            return JsonRpcInvalidRequest(message="initialize was already received")
        if not self._initialize_received and method != types.INITIALIZE:
            return JsonRpcServerNotInitialized(message=f"{method} before initialize")
        return None

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Any:  # type: ignore[override]
        result = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {"acpls": {"version": 1}}
        return result

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Any:  # type: ignore[override]
        """pygls' own cancels pending requests while iterating over the dict that their
        cancellation shrinks ("dictionary changed size during iteration"); iterate a copy."""
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current_id = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current_id and not future.done():
                future.cancel()
        self._shutdown = True
        return None


# The id of the LSP request being handled (set per message; read by the acpls.prompt adapter).
_REQUEST_ID: contextvars.ContextVar[Any] = contextvars.ContextVar("acpls_request_id", default=None)


async def _cancel_quietly(hub: Hub, session_id: str) -> None:
    from acpls.core.hub import CommandError

    with contextlib.suppress(CommandError):
        await hub.cancel(session_id)


class AcplsServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            name="acpls",
            version=__version__,
            protocol_cls=AcplsProtocol,
            converter_factory=_converter_factory,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.port = LspEditorPort(self)
        self._hub: Hub | None = None
        self._initialization_options: Any = None
        # acpls.prompt requests in flight: LSP request id -> the sessionId they named (or None).
        self.prompt_requests: dict[Any, str | None] = {}

    @property
    def hub(self) -> Hub:
        """The core, imported and built on first use: `initialize` does not need it (the hub
        pulls in ACP, the models and the services), so the editor gets its result sooner. The
        settings from `initialize` are applied as it is built, before anything can use it."""
        if self._hub is None:
            from acpls.core.hub import Hub

            self._hub = Hub(self.port)
            options, self._initialization_options = self._initialization_options, None
            if options is not None:
                for problem in self._hub.configure(options):
                    logger.warning("%s", problem)
        return self._hub

    def defer_configuration(self, options: Any) -> None:
        """Keep the `initialize` settings and build the hub just after the result is sent."""
        self._initialization_options = options if options is not None else {}
        asyncio.get_running_loop().call_soon(lambda: self.hub)

    async def close_hub(self) -> None:
        if self._hub is not None:
            await self._hub.aclose()


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


async def _new_session(hub: Hub, args: dict[str, Any]) -> Any:
    session = await hub.new_session(_string(args, "cwd"))
    return {"sessionId": session.id}


async def _prompt(hub: Hub, args: dict[str, Any]) -> Any:
    text = _string(args, "text", required=True)
    assert text is not None
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
    return await _admin(hub).list(_string(args, "cwd"), _string(args, "cursor"), every_page)


async def _load_session(hub: Hub, args: dict[str, Any], *, replay: bool = True) -> Any:
    session_id = _string(args, "sessionId")
    if session_id == "":
        raise InvalidParams("sessionId must not be empty")
    if session_id is None:  # an editor without a picker: acpls asks (window/showMessageRequest)
        session_id = await _admin(hub).pick("Load" if replay else "Resume")
    session = await hub.load_session(session_id, _string(args, "cwd"), replay=replay)
    return {"sessionId": session.id}


async def _resume_session(hub: Hub, args: dict[str, Any]) -> Any:
    return await _load_session(hub, args, replay=False)


async def _steer(hub: Hub, args: dict[str, Any]) -> Any:
    from acpls.core.steering import steer

    text = _string(args, "text", required=True)
    assert text is not None
    return await steer(hub, args.get("sessionId"), text, _context(args))


async def _fork_session(hub: Hub, args: dict[str, Any]) -> Any:
    return await _admin(hub).fork(_string(args, "sessionId"))


async def _authenticate(hub: Hub, args: dict[str, Any]) -> Any:
    if not await hub.authenticate(None, _string(args, "methodId")):
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
    await hub.restart_agent()
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
    """`acpls.checkAgents`: the configured agent (or the ones named) installed and answering?"""
    names = args.get("agents")
    if names is None:
        specs = [hub.settings.agent]
    elif isinstance(names, list):
        specs = []
        for value in names:
            settings, problems = parse_settings({"agent": value}, hub.settings, hub.resolve_agent)
            if problems:
                raise InvalidParams("; ".join(problems))
            specs.append(settings.agent)
    else:
        raise InvalidParams("agents must be a list of preset names or agent objects")
    results = await check_agents(
        specs, cwd=hub.workspace_root(), env=hub.settings.base_env(hub.environ)
    )
    return {"agents": [r.to_json() for r in results]}


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
    from acpls.core.errors import CommandError
    from acpls.services.agent_install import AgentInstallError

    name = _string(args, "agent", required=True) or ""
    try:
        return await hub.catalog.install(name)
    except UnknownAgent as exc:
        raise InvalidParams(str(exc)) from exc
    except AgentInstallError as exc:
        raise CommandError(str(exc), -32000) from exc


async def _list_rules(hub: Hub, args: dict[str, Any]) -> Any:
    return {"rules": [r.to_json() for r in hub.agent_requests.rules.list()]}


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
    return await _admin(hub).delete(_string(args, "sessionId", required=True) or "")


async def _logout(hub: Hub, args: dict[str, Any]) -> Any:
    await _admin(hub).logout()
    return None


async def _mention_candidates(hub: Hub, args: dict[str, Any]) -> Any:
    """`acpls.mentionCandidates`: files of the workspace folders matching `query` (fuzzy,
    .gitignore respected) and the open sessions, for @-mention completion."""
    from acpls.services.workspace_files import workspace_files
    from acpls.translate.mentions import best_matches
    from acpls.translate.uris import path_to_uri

    query = _string(args, "query") or ""
    limit = args.get("limit", 50)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise InvalidParams("limit must be a positive integer")
    roots = hub.editor.workspace_roots or [hub.workspace_root()]
    paths: dict[str, str] = {}  # label -> absolute path
    for root in roots:
        prefix = "" if len(roots) == 1 else root.rstrip("/").rsplit("/", 1)[-1] + "/"
        for rel in await workspace_files(root):
            paths[prefix + rel] = f"{root.rstrip('/')}/{rel}"
    items: list[dict[str, Any]] = [
        {"type": "file", "label": label, "uri": path_to_uri(paths[label])}
        for label in best_matches(query, list(paths), limit)
    ]
    for summary in hub.session_summaries().get("sessions", []):
        label = summary.get("title") or summary["sessionId"]
        if best_matches(query, [label], 1):
            items.append({"type": "session", "label": label, "sessionId": summary["sessionId"]})
    return {"items": items}


def _admin(hub: Hub) -> Any:
    from acpls.core.session_admin import SessionAdmin

    return SessionAdmin(hub)


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


def _command_adapter(handler: CommandHandler) -> Callable[..., Awaitable[Any]]:
    async def run(ls: AcplsServer, *args: Any) -> Any:
        arg = _argument(args[0] if len(args) == 1 else list(args))
        msg_id = _REQUEST_ID.get() if handler is _prompt else None
        if msg_id is not None:
            session_id = arg.get("sessionId")
            ls.prompt_requests[msg_id] = session_id if isinstance(session_id, str) else None
        try:
            return await handler(ls.hub, arg)
        except CommandError as exc:
            raise JsonRpcException(message=str(exc), code=exc.code) from exc
        except AcpError as exc:
            raise JsonRpcException(message=exc.message, code=exc.code) from exc
        finally:
            if msg_id is not None:
                ls.prompt_requests.pop(msg_id, None)

    return run


def _code_actions(ls: AcplsServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    rng = params.range
    actions: list[types.CodeAction] = []
    if (rng.start.line, rng.start.character) != (rng.end.line, rng.end.character):
        context = [{"uri": uri, "range": ls.protocol._converter.unstructure(rng)}]
        actions.append(
            _prompt_action("Ask the agent about this selection…", "Explain this code.", context)
        )
    text = ls.port.document_text(uri)
    if text is not None:
        lines = text.splitlines()
        if rng.start.line < len(lines):
            match = AGENT_COMMENT.search(lines[rng.start.line])
            if match and match.group("question").strip():
                question = match.group("question").strip().rstrip("*/#-> ").strip()
                line = rng.start.line
                context_range = {
                    "start": {"line": max(line - 20, 0), "character": 0},
                    "end": {"line": min(line + 21, len(lines)), "character": 0},
                }
                actions.append(
                    _prompt_action(
                        f"Send to agent: {question[:60]}",
                        question,
                        [{"uri": uri, "range": context_range}],
                    )
                )
    return actions + _fix_actions(ls, params, text)


def _fix_actions(
    ls: AcplsServer, params: types.CodeActionParams, text: str | None
) -> list[types.CodeAction]:
    """ "Ask the agent to fix: …" for each diagnostic the editor passed, and "fix all"."""
    uri = params.text_document.uri
    diagnostics = params.context.diagnostics
    as_json = [ls.protocol._converter.unstructure(d) for d in diagnostics]
    # CodeAction.diagnostics carries the editor's own diagnostics back.
    originals = {id(json): d for json, d in zip(as_json, diagnostics, strict=True)}
    try:
        name = uri_to_path(uri).rsplit("/", 1)[-1]
    except ValueError:
        name = uri
    line_count = len(text.splitlines()) if text is not None else None
    actions = []
    for fix in fix_actions(uri, name, as_json, line_count):
        action = _prompt_action(fix.title, fix.prompt["text"], fix.prompt["context"])
        action.kind = types.CodeActionKind.QuickFix
        action.diagnostics = [originals[id(json)] for json in fix.diagnostics]
        actions.append(action)
    return actions


def _transcript_lenses(ls: AcplsServer, uri: str) -> list[types.CodeLens]:
    """Restore and continue lenses on the prompts of a session's transcript (generic mode)."""
    try:
        path = uri_to_path(uri)
    except ValueError:
        return []
    session_id = ls.hub.router.session_of_transcript(path)
    if session_id is None:
        return []
    text = ls.port.document_text(uri)
    if text is None:
        with contextlib.suppress(OSError):
            text = Path(path).read_text(encoding="utf-8", errors="replace")
    if text is None:
        return []
    found = lenses(text, ls.hub.checkpoints.listing(session_id))
    return [ls.protocol._converter.structure(lens, types.CodeLens) for lens in found]


def _prompt_action(title: str, text: str, context: list[dict[str, Any]]) -> types.CodeAction:
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.Empty,
        command=types.Command(
            title=title, command="acpls.prompt", arguments=[{"text": text, "context": context}]
        ),
    )


def create_server() -> AcplsServer:
    server = AcplsServer()

    for name, handler in COMMANDS.items():
        server.command(name)(_command_adapter(handler))

    @server.feature(types.INITIALIZE)
    def on_initialize(ls: AcplsServer, params: types.InitializeParams) -> None:
        ls.defer_configuration(params.initialization_options)

    @server.feature(types.INITIALIZED)
    def on_initialized(ls: AcplsServer, params: types.InitializedParams) -> None:
        logger.info("editor connected (%s mode)", "custom" if ls.port.custom_mode else "generic")

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def on_configuration(ls: AcplsServer, params: types.DidChangeConfigurationParams) -> None:
        problems = ls.hub.configure(params.settings)
        if problems:
            ls.port.show_message(2, "acpls: " + "; ".join(problems))

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def on_change(ls: AcplsServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        if ls.port.is_own_edit(uri) or ls.port.matches_disk(uri):
            return  # acpls' own edit, or the editor reloading a file written to disk
        if ls.hub.questions.owns(uri):
            return  # the user filling in an agent's question (generic mode)
        ls.hub.follow.user_edited()
        ls.hub.review.user_edited(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=True))
    def on_save(ls: AcplsServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.hub.questions.did_save(params.text_document.uri, params.text)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def on_close(ls: AcplsServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.hub.questions.did_close(params.text_document.uri)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.Empty, types.CodeActionKind.QuickFix]
        ),
    )
    def on_code_action(ls: AcplsServer, params: types.CodeActionParams) -> Any:
        return _code_actions(ls, params)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    def on_code_lens(ls: AcplsServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        return _transcript_lenses(ls, params.text_document.uri)

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(ls: AcplsServer, params: Any) -> None:
        await ls.close_hub()

    return server


async def serve_stdio(server: AcplsServer) -> int:
    """Read LSP from stdin until the editor goes away, then stop the agent and everything else."""
    from acpls.editor.stdio import run_stdio

    try:
        return await run_stdio(server)
    finally:
        await asyncio.wait_for(server.close_hub(), timeout=5)
