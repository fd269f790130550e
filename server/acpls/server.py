"""The LSP server: a thin pygls class, and `create_server()` wiring every handler.

Handlers are short adapters into the core (core/hub.py, which knows ACP): the commands and their
argument checks are commands.py (editors/protocol.md section 3 documents them), the pygls
protocol class is editor/protocol.py, code actions are editor/code_actions.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import default_converter

from acpls import __version__
from acpls.commands import COMMANDS, CommandHandler, command_adapter
from acpls.core.errors import CommandError
from acpls.editor.code_actions import code_actions
from acpls.editor.messages import register_message_hooks
from acpls.editor.port import LspEditorPort
from acpls.editor.protocol import AcplsProtocol, current_request_id
from acpls.flow import FlowGate
from acpls.services.memory import settle_collector
from acpls.translate.uris import uri_to_path

if TYPE_CHECKING:
    from acpls.core.hub import Hub

logger = logging.getLogger(__name__)

# How long the hub's close (the agents' and terminals' stop, each SIGTERM → grace → SIGKILL) may
# take before the watchdog stops what is left (services/owned_processes.py).
HUB_CLOSE_SECONDS = 5.0
# Signals that end acpls the ordinary way (everything stopped and awaited), with status 128 + n.
STOP_SIGNALS = ("SIGTERM", "SIGHUP")


def _converter_factory() -> Any:
    converter = default_converter()
    register_message_hooks(converter)
    return converter


async def _cancel_quietly(hub: Hub, session_id: str) -> None:
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
        # Closed while the editor reads more slowly than acpls writes (flow.py): given to the
        # stdio writer, which opens and closes it, and to the hub for each agent process.
        self.editor_output = FlowGate()
        self._hub: Hub | None = None
        self._closing: asyncio.Future[None] | None = None
        self._initialization_options: Any = None
        # acpls.prompt requests in flight: LSP request id -> the sessionId they named (or None).
        self.prompt_requests: dict[Any, str | None] = {}
        assert isinstance(self.protocol, AcplsProtocol)
        self.protocol.on_cancel_request = self._cancel_prompt

    @property
    def hub(self) -> Hub:
        """The core, imported and built on first use: `initialize` does not need it (the hub
        pulls in ACP, the models and the services), so the editor gets its result sooner. The
        settings from `initialize` are applied as it is built, before anything can use it."""
        if self._hub is None:
            from acpls.core.hub import Hub

            self._hub = Hub(self.port, editor_output=self.editor_output, editor_backlog=self.port)
            options, self._initialization_options = self._initialization_options, None
            if options is not None:
                for problem in self._hub.configure(options):
                    logger.warning("%s", problem)
            settle_collector()  # after the core's imports: they live as long as the process
        return self._hub

    def defer_configuration(self, options: Any) -> None:
        """Keep the `initialize` settings and build the hub just after the result is sent."""
        self._initialization_options = options if options is not None else {}
        asyncio.get_running_loop().call_soon(lambda: self.hub)

    def _cancel_prompt(self, msg_id: Any) -> None:
        """The editor gave up on an `acpls.prompt` request: the agent's turn is cancelled too (as
        with acpls.cancel), so it does not go on working for nobody."""
        if msg_id not in self.prompt_requests:
            return
        hub = self.hub
        session_id = self.prompt_requests[msg_id] or hub.current_session_id
        if session_id is not None:
            hub.tasks.spawn("editor-cancel", _cancel_quietly(hub, session_id))

    async def close_hub(self) -> None:
        """Stop the agents, their terminals and every process they started, and wait for it:
        `shutdown` and every way out of `serve_stdio` come here (twice is once)."""
        if self._hub is None:
            return  # no hub, no agent: acpls started no process
        if self._closing is None:
            self._closing = asyncio.ensure_future(self._hub.aclose())
        # Never cancelled: the kill of a process tree must not stop in its grace period. A close
        # that takes longer is left running while the watchdog stops what is left.
        done, _ = await asyncio.wait({self._closing}, timeout=HUB_CLOSE_SECONDS)
        if not done:
            logger.warning("closing takes more than %.0f s; stopping processes", HUB_CLOSE_SECONDS)
        elif (problem := self._closing.exception()) is not None:
            logger.error("closing failed", exc_info=problem)
        await self._hub.owned.stop_all()  # at once if the hub's close did it


def _command(
    handler: CommandHandler, prompts: dict[Any, str | None]
) -> Callable[..., Awaitable[Any]]:
    run = command_adapter(handler, current_request_id, prompts)

    async def on_command(ls: AcplsServer, *args: Any) -> Any:
        return await run(ls.hub, args[0] if len(args) == 1 else list(args))

    return on_command


def _transcript_lenses(ls: AcplsServer, uri: str) -> list[types.CodeLens]:
    try:
        path = uri_to_path(uri)
    except ValueError:
        return []
    found = ls.hub.checkpoints.transcript_lenses(path, ls.port.document_text(uri))
    return [ls.protocol._converter.structure(lens, types.CodeLens) for lens in found]


def create_server() -> AcplsServer:
    server = AcplsServer()

    for name, handler in COMMANDS.items():
        server.command(name)(_command(handler, server.prompt_requests))

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

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def on_open(ls: AcplsServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.hub.review.document_opened(params.text_document.uri)

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
        uri = params.text_document.uri
        return code_actions(params, ls.port.document_text(uri), ls.protocol._converter)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    def on_code_lens(ls: AcplsServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        return _transcript_lenses(ls, params.text_document.uri)

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(ls: AcplsServer, params: Any) -> None:
        await ls.close_hub()

    return server


async def serve_stdio(server: AcplsServer) -> int:
    """Read LSP from stdin until the editor goes away (or SIGTERM / SIGHUP), then stop the agent
    and everything else, and wait for that."""
    from acpls.editor.stdio import run_stdio

    serving = asyncio.ensure_future(run_stdio(server, server.editor_output))
    received = _stop_on_signals(serving)
    try:
        return await serving
    except asyncio.CancelledError:
        if not received:
            raise
        logger.info("%s received; stopping", received[0].name)
        return 128 + int(received[0])
    finally:
        await server.close_hub()


def _stop_on_signals(serving: asyncio.Future[int]) -> list[signal.Signals]:
    """SIGTERM and SIGHUP end serving; the list gets the signal that did."""
    received: list[signal.Signals] = []
    loop = asyncio.get_running_loop()

    def stop(signum: signal.Signals) -> None:
        if not received:
            received.append(signum)
            serving.cancel()

    for name in STOP_SIGNALS:
        signum = getattr(signal, name, None)
        if signum is not None:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signum, stop, signum)
    return received
