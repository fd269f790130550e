"""The core of acpls: the agents, their sessions, and the editor, wired together.

The hub owns one process per agent (core/agent_processes.py: each started lazily, restarted
after it exits; the default is the `agent` setting's, others are named by `acpls.newSession`), the
sessions they created, the terminal store, follow-along and the output pump. LSP handlers call its
commands; the agents' messages reach it through `routing.UpdateRouter` and
`agent_requests.AgentRequests`, each agent speaking only of its own sessions. Nothing here knows
pygls: the editor is reached through `ports.EditorPort`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from acpls.acp.connection import AgentConnection
from acpls.acp.converter import config_options_of, set_config_option_params
from acpls.acp.errors import AUTH_REQUIRED, INTERNAL_ERROR, AcpError
from acpls.acp.models import AcpModelError
from acpls.core import ports
from acpls.core.agent_processes import AgentProcesses
from acpls.core.agent_requests import AgentRequests
from acpls.core.agents import AgentCatalog
from acpls.core.auth import SignIn, auth_required_message
from acpls.core.checkpoints import CheckpointController
from acpls.core.elicitation import Questions
from acpls.core.errors import CommandError
from acpls.core.follow import FollowController
from acpls.core.mentions import mention_blocks
from acpls.core.pump import FlushScheduler, MessageBudget, ReplayPacer
from acpls.core.review import ReviewController
from acpls.core.routing import UpdateRouter
from acpls.core.secrets import KnownSecrets
from acpls.core.session import Session, Turn
from acpls.core.session_admin import SessionAdmin
from acpls.core.sessions import SessionRegistry
from acpls.flow import FlowGate
from acpls.registry.spec import AgentSpec
from acpls.services import agent_install, node_runtime, private_files
from acpls.services.fetch import run_blocking
from acpls.services.owned_processes import OwnedProcesses
from acpls.services.registry import cache_dir as registry_cache_dir
from acpls.settings import Settings, parse_settings
from acpls.supervisor import TaskSupervisor
from acpls.translate import usage
from acpls.translate.config_defaults import plan_defaults
from acpls.translate.mentions import Mention
from acpls.translate.session_updates import SessionUpdateNormalizer
from acpls.translate.terminals import TerminalStore
from acpls.translate.uris import uri_to_path

logger = logging.getLogger(__name__)

CANCEL_GRACE_SECONDS = 3.0
# At a turn's end, how long to wait for the didChange of edits the editor said it applied
# (Neovim debounces them by 150 ms); a no-op edit never sends one, so this bounds the wait.
DIDCHANGE_SETTLE_S = 0.5


def state_home(environ: Mapping[str, str]) -> Path:
    """`$XDG_STATE_HOME`: where programs keep their logs and histories (Neovim's lsp.log, which
    holds acpls' own stderr, among them)."""
    base = environ.get("XDG_STATE_HOME") or os.path.join(
        environ.get("HOME", "/tmp"), ".local", "state"
    )
    return Path(base)


def default_state_dir(environ: Mapping[str, str]) -> Path:
    return state_home(environ) / "acpls"


class Hub:
    def __init__(
        self,
        editor: ports.EditorPort,
        *,
        environ: Mapping[str, str] | None = None,
        state_dir: Path | None = None,
        editor_output: FlowGate | None = None,
        editor_backlog: ports.EditorBacklog | None = None,
        owned: OwnedProcesses | None = None,
    ) -> None:
        self.editor = editor
        # The mark on every process acpls starts and the watchdog that stops them all when acpls
        # ends (services/owned_processes.py).
        self.owned = owned if owned is not None else OwnedProcesses()
        # Closed while the editor is behind: each agent's output is left unread (flow.py).
        self.editor_output = editor_output if editor_output is not None else FlowGate()
        self.environ = dict(environ if environ is not None else os.environ)
        self.state_dir = state_dir or default_state_dir(self.environ)
        # Agents whose PATH has no Node.js run on acpls' (services/node_runtime.py).
        self.node = node_runtime.NodeShims(self.state_dir / "node" / "bin", self.environ)
        # Sign-in values and secret-named variables of the agents' environments: redacted from
        # the transcripts and the logs (core/secrets.py).
        self.secrets = KnownSecrets()
        self.secrets.guard_logs()
        self.settings = Settings()
        self.tasks = TaskSupervisor("hub")
        self.registry = SessionRegistry()
        self.sessions = self.registry.by_id  # read-only view: the registry adds and closes
        self.terminals = TerminalStore(scrollback_bytes=self.settings.scrollback_bytes)
        self.follow = FollowController(
            editor,
            self.tasks,
            enabled=self.settings.follow_enabled,
            budget_of=self._message_budget,
        )
        self.pump = FlushScheduler(self._flush)
        # Each controller is handed the parts it uses; what it asks of the hub itself is a small
        # protocol in its module. Built in this order so each peer exists before its users.
        self.checkpoints = CheckpointController(
            editor, self.sessions, self.tasks, self.state_dir, self.environ, self
        )
        self.review = ReviewController(
            editor,
            self.sessions,
            self.tasks,
            self.follow,
            baselines=self.checkpoints,
            unwatched=(str(self.state_dir), str(state_home(self.environ))),
            editor_output=self.editor_output,
        )
        self.router = UpdateRouter(
            editor,
            self.sessions,
            self.pump,
            self.terminals,
            self.follow,
            self.review,
            self.tasks,
            self.state_dir,
            self,
            pacer=ReplayPacer(editor_backlog.unread_bytes) if editor_backlog else None,
            editor_output=self.editor_output,
        )
        self.agent_requests = AgentRequests(
            editor,
            self.sessions,
            self.pump,
            self.terminals,
            self.follow,
            self.router,
            self.review,
            self.tasks,
            self.state_dir,
            self.environ,
            self,
            owned=self.owned,
        )
        self.questions = Questions(editor, self.sessions, self.tasks, self.state_dir)
        self.catalog = AgentCatalog(
            self.node.completed(self.environ), self.settings.registry_url, tasks=self.tasks
        )
        self.processes = AgentProcesses(
            editor,
            self.registry,
            self.tasks,
            self.catalog,
            self.agent_requests,
            self.router,
            self.editor_output,
            self.environ,
            self,
            node=self.node,
            owned=self.owned,
        )
        self.sign_in = SignIn(editor, self, self.secrets)
        self.admin = SessionAdmin(editor, self.registry, self)
        self._register_closers()
        self._make_state_private()

    def _make_state_private(self) -> None:
        """State an older acpls left readable by others (0755 folders, 0644 files) is narrowed
        once at start: the state folder, the registry cache and the agent installs. A walk of
        lstat calls, on a worker thread: the loop never waits for a large checkpoint store."""
        data = agent_install.agents_dir(self.environ).parent
        folders = (self.state_dir, registry_cache_dir(self.environ), data)

        def narrow() -> int:
            return sum(private_files.tighten(folder) for folder in folders)

        try:
            asyncio.get_running_loop()
        except RuntimeError:  # built outside a loop (a test, a tool): at once
            narrow()
            return
        self.tasks.spawn("private-state", run_blocking("private-state", narrow))

    def _message_budget(self, session_id: str) -> MessageBudget | None:
        """A session's budget of editor messages (core/pump.py), shared by follow."""
        session = self.registry.get(session_id)
        return session.queue.budget if session is not None else None

    def _register_closers(self) -> None:
        """Each owner of per-session state drops it when the session ends (core/sessions.py)."""
        registry = self.registry
        registry.on_close("permissions and paths", self.agent_requests.session_closed)
        registry.on_close("questions", lambda s: self.questions.withdraw(s.id))
        # The router first: it sends what the session's terminals still owe the editor.
        registry.on_close("updates and transcript", self.router.session_closed)
        registry.on_close("terminals", lambda s: self.terminals.drop_session(s.id))
        registry.on_close("review", self.review.session_closed)
        registry.on_close("checkpoints", self.checkpoints.session_closed)
        registry.on_close("follow", lambda s: self.follow.forget_session(s.id))

    @property
    def current_session_id(self) -> str | None:
        return self.registry.current_id

    @current_session_id.setter
    def current_session_id(self, session_id: str | None) -> None:
        self.registry.current_id = session_id

    # -- settings --------------------------------------------------------------------------------
    def configure(self, raw: Any) -> list[str]:
        settings, problems = parse_settings(raw, self.settings, self.processes.resolve_agent)
        self.settings = settings
        self.catalog.set_url(settings.registry_url)
        if self.follow.enabled != settings.follow_enabled:
            self.follow.set_enabled(settings.follow_enabled)
        self.terminals.configure(
            scrollback_bytes=settings.scrollback_bytes,
            sanitize=not settings.raw_terminal_output,
        )
        if settings.log_level is not None:
            logging.getLogger("acpls").setLevel(settings.log_level.upper())
        for problem in problems:
            logger.warning("settings: %s", problem)
        return problems

    # -- the agents (core/agent_processes.py) ---------------------------------------------------
    def agent_spec(self, agent: Any = None) -> AgentSpec:
        return self.processes.agent_spec(agent)

    def agent_env(self, spec: AgentSpec) -> dict[str, str]:
        return self.processes.agent_env(spec)

    def agent_name_of(self, conn: AgentConnection) -> str:
        return self.processes.name_of(conn)

    async def agent(self, name: Any = None) -> AgentConnection:
        """The running process of the agent `name` (default: the `agent` setting's), started
        (or restarted) on first need."""
        return await self.processes.agent(name)

    async def agent_of(self, session: Session) -> AgentConnection:
        """The process of the agent that holds `session`."""
        return await self.processes.agent(session.agent or None)

    async def restart_agent(self, name: Any = None) -> None:
        await self.processes.restart(name)

    def sign_in_env(self, agent: str) -> Mapping[str, str]:
        return self.sign_in.env_for(agent)

    def wire(self, conn: AgentConnection, agent: str, env: Mapping[str, str]) -> None:
        self.secrets.add_environment(env)  # the agent's and its terminals' environment
        self.agent_requests.register(conn, agent, dict(env))
        self.questions.register(conn)
        conn.register({}, {"session/update": self.router.on_session_update})
        conn.look_ahead(self.router.look_ahead, self.follow.block_done)
        conn.take_lines_first(self.router.output_lines(agent))

    # -- sessions --------------------------------------------------------------------------------
    def workspace_root(self) -> str:
        roots = self.editor.workspace_roots
        return roots[0] if roots else os.getcwd()

    def session(self, session_id: Any, *, create_ok: bool = False) -> Session | None:
        if session_id is None:
            session_id = self.current_session_id
            if session_id is None:
                if create_ok:
                    return None
                raise CommandError("there is no session yet: start one with acpls.newSession")
        if not isinstance(session_id, str):
            raise CommandError("sessionId must be a string")
        session = self.sessions.get(session_id)
        if session is None:
            raise CommandError(f"unknown session {session_id!r}")
        return session

    def _register_session(
        self, conn: AgentConnection, session_id: str, cwd: str, response: dict[str, Any]
    ) -> Session:
        agent = self.agent_name_of(conn)
        held = self.sessions.get(session_id)
        if held is not None and held.agent != agent:
            raise CommandError(
                f"the agent {agent} answered with session id {session_id!r}, which the agent"
                f" {held.agent} already uses in acpls",
                INTERNAL_ERROR,
            )
        session = Session(
            id=session_id, cwd=cwd, normalizer=SessionUpdateNormalizer(conn.version), agent=agent
        )
        self.registry.add(session)
        self.router.session_started(session, response)
        return session

    @property
    def connection(self) -> AgentConnection | None:
        """The default agent's running process, or None (never starts one)."""
        return self.connection_of(None)

    def connection_of(self, agent: str | None) -> AgentConnection | None:
        """The running process of `agent` (None: the default agent), or None; never starts one."""
        return self.processes.running(agent)

    def adopt_session(
        self, session_id: str, cwd: str, response: dict[str, Any], conn: AgentConnection
    ) -> Session:
        """A session the agent `conn` made itself (`session/fork`), now the current one."""
        held = self.sessions.get(session_id)
        return held or self._register_session(conn, session_id, cwd, response)

    async def new_session(self, cwd: str | None = None, agent: Any = None) -> Session:
        """A new session of `agent` (default: the `agent` setting's), whose process is started
        or reused."""
        cwd = cwd or self.workspace_root()
        if not os.path.isabs(cwd):
            raise CommandError(f"cwd must be an absolute path, got {cwd!r}")
        conn = await self.agent(agent)
        name = self.agent_name_of(conn)
        params = self.lifecycle_params(conn, cwd)
        result = await self.with_auth(conn, "session/new", params)
        if not isinstance(result, dict) or not isinstance(result.get("sessionId"), str):
            raise CommandError(f"the agent answered session/new with {result!r}", INTERNAL_ERROR)
        conn = self.connection_of(name) or conn  # a sign-in may have restarted it
        session = self._register_session(conn, result["sessionId"], cwd, result)
        await self.apply_defaults(session, result)
        return session

    async def apply_defaults(self, session: Session, result: Any) -> None:
        """The agent's `defaultMode` and `defaultConfig`, on a session it just made, loaded,
        resumed or forked (`result`: the agent's answer)."""
        agent = session.agent or self.settings.agent.name
        answer = result if isinstance(result, dict) else {}
        await self._apply_default_mode(session, agent, answer)
        await self._apply_default_config(session, agent)

    async def _apply_default_config(self, session: Session, agent: str) -> None:
        """Each option of `defaultConfig` set with `session/set_config_option`; one the agent
        does not offer, a value it does not list, or a refusal is shown as defaultMode's are."""
        wanted = self.settings.default_config(agent)
        if not wanted:
            return
        to_set, problems = plan_defaults(session.config_options, wanted)
        for config_id, value in to_set:
            try:
                await self.set_config_option(session.id, config_id, value)
            except (CommandError, AcpError) as exc:
                problems.append(f"{config_id}: {exc}")
        for problem in problems:
            self._default_not_set(session, agent, "defaultConfig", problem)

    def _default_not_set(self, session: Session, agent: str, setting: str, problem: str) -> None:
        message = f"acpls: {agent} did not take {setting} ({problem})"
        logger.warning("%s", message)
        self.editor.show_message(ports.MESSAGE_WARNING, message)
        self.router.send_update(
            session,
            {
                "sessionUpdate": "notice",
                "severity": "warning",
                "title": f"{agent}: {setting} not set",
                "description": problem,
            },
        )

    async def _apply_default_mode(self, session: Session, agent: str, result: dict) -> None:
        """Put the session in the agent's `defaultMode`. A mode it does not offer, or a
        refusal, is shown (window/showMessage and a notice), never silent; the session keeps
        the agent's own mode."""
        mode = self.settings.default_mode(agent)
        if mode is None:
            return
        current, offered = _modes_of(result)
        if mode == current:
            return
        if offered and mode not in offered:
            problem = f"it offers {', '.join(offered)}"
        else:
            try:
                config_id = self.router.mode_config_id(session)
                if not isinstance(result.get("modes"), dict) and config_id is not None:
                    await self.set_config_option(session.id, config_id, mode)  # OpenCode
                else:
                    await self.set_mode(session.id, mode)
                return
            except (CommandError, AcpError) as exc:
                problem = str(exc)
        self._default_not_set(session, agent, f"defaultMode {mode!r}", problem)

    def lifecycle_params(self, conn: AgentConnection, cwd: str) -> dict[str, Any]:
        """`cwd`, `mcpServers` and, where the agent takes them, the editor's other workspace
        folders as `additionalDirectories` (session/new, load, resume and fork alike)."""
        params: dict[str, Any] = {"cwd": cwd, "mcpServers": list(self.settings.mcp_servers)}
        if conn.session_capability("additionalDirectories"):
            extra = [r for r in self.editor.workspace_roots if os.path.isabs(r) and r != cwd]
            if extra:
                params["additionalDirectories"] = list(dict.fromkeys(extra))
        return params

    async def load_session(
        self, session_id: str, cwd: str | None = None, *, replay: bool = True, agent: Any = None
    ) -> Session:
        """`session/load` (v1) or `session/resume` of a session `agent` (default: the `agent`
        setting's) stored; with `replay`, the agent's history reaches the editor as updates (v1
        load, v2 resume from the start), else only what comes next."""
        if not isinstance(session_id, str):
            raise CommandError("sessionId must be a string")
        cwd = cwd or self.workspace_root()
        conn = await self.agent(agent)
        if session_id in self.sessions:
            return self.sessions[session_id]
        session = self._register_session(conn, session_id, cwd, {})
        self.router.replay(session, True)  # also keeps a v1 agent that replays on resume honest
        can_load = conn.session_capability("load") and conn.version == 1
        try:
            if can_load and (replay or not conn.session_capability("resume")):
                params = {"sessionId": session_id, **self.lifecycle_params(conn, cwd)}
                result = await self.with_auth(conn, "session/load", params)
            elif conn.session_capability("resume"):
                params = {"sessionId": session_id, **self.lifecycle_params(conn, cwd)}
                if conn.version == 2 and replay:
                    params["replayFrom"] = {"type": "start"}
                result = await self.with_auth(conn, "session/resume", params)
                if conn.version == 1 and session.updates_routed:
                    logger.warning(
                        "the agent replayed session %s on session/resume, which ACP v1 says it"
                        " must not do; acpls shows each message once",
                        session_id,
                    )
            else:
                raise CommandError("the agent cannot load or resume sessions")
            await self.router.replay_sent(session)
        except BaseException:
            self.registry.close(session, "the session could not be loaded")
            raise
        finally:
            self.router.replay(session, False)
        self.router.session_started(session, result if isinstance(result, dict) else {})
        await self.apply_defaults(session, result)
        self.pump.flush_now()
        return session

    def session_summaries(self) -> dict[str, Any]:
        sessions = [
            {"sessionId": s.id, "title": s.title, "active": s.turn is not None, "agent": s.agent}
            for s in self.sessions.values()
        ]
        out: dict[str, Any] = {
            "sessions": [{k: v for k, v in s.items() if v is not None} for s in sessions]
        }
        if self.current_session_id:
            out["current"] = self.current_session_id
        out["agents"] = self.processes.listing()
        out["defaultAgent"] = self.settings.agent.name
        return out

    # -- authentication ----------------------------------------------------------------------------
    async def with_auth(self, conn: AgentConnection, method: str, params: Any) -> Any:
        """Send a request; on "authentication required", ask the user to sign in and retry once
        (with the same agent's process, which a sign-in may have restarted)."""
        name = self.agent_name_of(conn)
        making = method in ("session/new", "session/fork")
        with self.router.expecting_sessions() if making else contextlib.nullcontext():
            try:
                return await conn.request(method, params)
            except AcpError as exc:
                if exc.code != AUTH_REQUIRED:
                    raise
                if not await self.authenticate(conn, None, reason=exc.message):
                    message = auth_required_message(conn.auth_methods, exc.message)
                    raise CommandError(message, AUTH_REQUIRED) from exc
            # A sign-in may have restarted the agent (env_var and terminal methods).
            return await (await self.agent(name)).request(method, params)

    def turn_failure(self, session: Session, error: Mapping[str, Any]) -> CommandError:
        """The editor's error for a v2 turn that ended `idle` with stopReason `error`, worded like
        the v1 error answer to session/prompt (an agent without an API key ends this way)."""
        code = error.get("code")
        code = code if isinstance(code, int) and not isinstance(code, bool) else INTERNAL_ERROR
        reason = error.get("message")
        reason = reason if isinstance(reason, str) and reason else "the agent's turn failed"
        conn = self.connection_of(session.agent or None)
        if code == AUTH_REQUIRED and conn is not None:
            return CommandError(auth_required_message(conn.auth_methods, reason), code)
        return CommandError(reason, code)

    async def authenticate(
        self, conn: AgentConnection | None, method_id: str | None, reason: str = ""
    ) -> bool:
        """Sign in to `conn`'s agent (default: the default agent's) with `method_id`, or with
        the method the user picks (core/auth.py)."""
        conn = conn or await self.agent()
        return await self.sign_in.sign_in(conn, self.agent_name_of(conn), method_id, reason)

    # -- the turn ------------------------------------------------------------------------------
    async def prompt(
        self,
        session_id: Any,
        text: str,
        context: list[dict[str, Any]],
        mentions: list[Mention] | None = None,
    ) -> dict[str, Any]:
        session = self.session(session_id, create_ok=True) or await self.new_session()
        await self._wait_for_turn(session)
        conn = await self.agent_of(session)
        blocks = self.router.prompt_blocks(conn, text, context)
        blocks += mention_blocks(self, conn, mentions or [])
        loop = asyncio.get_running_loop()
        turn = Turn(done=loop.create_future())
        session.turn = turn
        self.current_session_id = session.id
        await self.checkpoints.turn_started(session, text, blocks)  # waits for the snapshot
        self.router.turn_started(session, text, blocks)
        await self.review.turn_started(session)
        request = self.tasks.spawn(
            f"prompt:{session.id}", self._send_prompt(conn, session, turn, blocks)
        )
        try:
            stop_reason = await turn.done
        finally:
            if not request.done():
                request.cancel()
            session.turn = None
            self.agent_requests.cancel_permissions(session)
            # Review and the checkpoint read the buffers: the agent's last edits must be in them.
            await self.editor.documents_settled(DIDCHANGE_SETTLE_S)
            await self.review.turn_ended(session)
            await self.checkpoints.turn_ended(session, "".join(turn.reply))
        self.router.turn_ended(session, stop_reason, "".join(turn.reply), turn.usage)
        self.pump.flush_now()
        done: dict[str, Any] = {"sessionId": session.id, "stopReason": stop_reason}
        if turn.usage is not None:
            done["usage"] = turn.usage
        return done

    async def _wait_for_turn(self, session: Session) -> None:
        """A prompt sent while the session's turn runs waits for it to end (editors without a
        queue of their own get one this way; the front ends queue, edit and steer themselves)."""
        while session.turn is not None:
            running = session.turn
            if running.done.done():
                await asyncio.sleep(0.02)  # the ended turn is finishing its bookkeeping
            else:
                await asyncio.wait([running.done])

    async def _send_prompt(
        self, conn: AgentConnection, session: Session, turn: Turn, blocks: list[dict[str, Any]]
    ) -> None:
        params = {"sessionId": session.id, "prompt": blocks}
        try:
            result = await self.with_auth(conn, "session/prompt", params)
        except (AcpError, CommandError) as exc:
            if not turn.done.done():
                code = exc.code if isinstance(exc, (AcpError, CommandError)) else INTERNAL_ERROR
                text = exc.message if isinstance(exc, AcpError) else str(exc)
                turn.done.set_exception(CommandError(text, code))
            return
        if conn.version == 1 and not turn.done.done():
            stop = result.get("stopReason") if isinstance(result, dict) else None
            turn.usage = usage.turn_usage(result)
            turn.done.set_result(stop if isinstance(stop, str) else "end_turn")

    async def cancel(self, session_id: Any) -> None:
        session = self.session(session_id)
        assert session is not None
        self.agent_requests.cancel_permissions(session)
        self.questions.withdraw(session.id)
        conn = self.connection_of(session.agent or None)
        if conn is not None:
            conn.notify("session/cancel", {"sessionId": session.id})
        turn = session.turn
        if turn is None or turn.cancel_requested:
            return
        turn.cancel_requested = True
        self.tasks.spawn(f"cancel-guard:{session.id}", self._end_unanswered_turn(turn))

    async def _end_unanswered_turn(self, turn: Turn) -> None:
        """An agent that ignores session/cancel must not keep the editor's turn open forever."""
        try:
            await asyncio.wait_for(asyncio.shield(turn.done), CANCEL_GRACE_SECONDS)
        except TimeoutError:
            if not turn.done.done():
                logger.warning("the agent did not end the turn after cancel; ending it here")
                turn.done.set_result("cancelled")
        except Exception:  # the turn ended with an error: nothing to do
            return

    # -- modes and config ------------------------------------------------------------------------
    async def set_mode(self, session_id: Any, mode_id: Any) -> None:
        if not isinstance(mode_id, str):
            raise CommandError("modeId must be a string")
        session = self.session(session_id)
        assert session is not None
        conn = await self.agent_of(session)
        if conn.version == 1:
            await conn.request("session/set_mode", {"sessionId": session.id, "modeId": mode_id})
            self.router.mode_changed(session, mode_id)
            return
        # ACP v2 has no modes: the mode is a config option of category "mode".
        config_id = self.router.mode_config_id(session)
        if config_id is None:
            raise CommandError("the agent offers no mode to set")
        await self.set_config_option(session.id, config_id, mode_id)

    async def set_config_option(self, session_id: Any, config_id: Any, value: Any) -> dict:
        if not isinstance(config_id, str):
            raise CommandError("configId must be a string")
        if not isinstance(value, (str, bool)):
            raise CommandError("value must be a string (the id of a value) or a boolean")
        session = self.session(session_id)
        assert session is not None
        conn = await self.agent_of(session)
        params = set_config_option_params(conn.version, session.id, config_id, value)
        result = await conn.request("session/set_config_option", params)
        try:
            options = config_options_of(result)
        except AcpModelError as exc:
            # ACP reads this field default-on-error: the option was set, only the list is lost.
            logger.warning("the agent's answer to session/set_config_option: %s", exc)
            return {"configOptions": []}
        self.router.config_changed(session, options)
        return {"configOptions": options}

    # -- output pump -----------------------------------------------------------------------------
    def _flush(self) -> None:
        self.router.flush()

    # -- shutdown --------------------------------------------------------------------------------
    async def aclose(self) -> None:
        # Escaped daemons get their SIGTERM now: their grace runs while the agents and terminals
        # stop; `stop_all` at the end SIGKILLs what is left of everything acpls started.
        self.owned.begin_stop()
        self.pump.close()
        self.follow.close()
        self.registry.close_all("acpls is shutting down")
        # The agents and their terminals stop together (each SIGTERM → grace → SIGKILL), so the
        # whole stop takes one grace period, not one after the other.
        await asyncio.gather(self.processes.aclose(), self.agent_requests.aclose())
        await self.review.aclose()
        await self.checkpoints.aclose()
        self.router.close()
        await self.tasks.aclose()
        await self.owned.stop_all()

    def path_of(self, uri: str) -> str:
        try:
            return uri_to_path(uri)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc


def _modes_of(result: dict) -> tuple[Any, list[str]]:
    """The current mode and the mode ids a session/new result offers: v1 `modes`, or a config
    option of category `mode` (v2, and v1 agents that have only config options)."""
    modes = result.get("modes")
    if isinstance(modes, dict):
        available = modes.get("availableModes") or []
        ids = [m.get("id") for m in available if isinstance(m, dict)]
        return modes.get("currentModeId"), [i for i in ids if isinstance(i, str)]
    for option in result.get("configOptions") or []:
        if isinstance(option, dict) and option.get("category") == "mode":
            values = [v.get("value") for v in option.get("options") or [] if isinstance(v, dict)]
            return option.get("currentValue"), [v for v in values if isinstance(v, str)]
    return None, []
