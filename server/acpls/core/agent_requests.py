"""What acpls does when the agent asks: permission prompts, file reads and writes, terminals.

Each ACP client method is one short async handler. They answer with raw JSON (the agent's schema)
or raise `AcpError` with the JSON-RPC code ACP expects.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import itertools
import logging
import os
import stat
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import attrs

from acpls.acp.converter import permission_tool_call, structure, unstructure
from acpls.acp.errors import INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND, AcpError
from acpls.acp.models import (
    AcpModelError,
    CreateTerminalRequest,
    KillTerminalRequest,
    Omitted,
    ReadTextFileRequest,
    ReleaseTerminalRequest,
    RequestPermissionRequest,
    TerminalOutputRequest,
    WaitForTerminalExitRequest,
    WriteTextFileRequest,
)
from acpls.core import ports
from acpls.core.session import PendingPermission, Session
from acpls.editor import messages as msg
from acpls.services import private_files
from acpls.services.file_reads import (
    Accept,
    ReadRefused,
    TooLarge,
    Window,
    kind_of,
    read_text,
    read_window,
)
from acpls.services.terminals import ClientTerminals, ExitStatus, TerminalError
from acpls.state.paths import InvalidPath, PathDecision, PathPolicy
from acpls.state.protected import OUTSIDE, Protection, protection
from acpls.state.rules import RuleStore, choose_option, tool_call_paths
from acpls.translate import permissions as perm
from acpls.translate.diffs import workspace_edit_from_content
from acpls.translate.follow import FollowTarget
from acpls.translate.text_edits import minimal_line_edits
from acpls.translate.uris import path_to_uri

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from acpls.acp.connection import AgentConnection
    from acpls.core.follow import FollowController
    from acpls.core.parts import ReviewPart, RouterPart
    from acpls.core.pump import FlushScheduler
    from acpls.services.owned_processes import OwnedProcesses
    from acpls.settings import Settings
    from acpls.supervisor import TaskSupervisor
    from acpls.translate.terminals import TerminalStore


class RequestsHub(Protocol):
    """What answering the agent asks of the hub: the settings (roots, rules, limits, the default
    agent), the workspace root, and an agent's running process."""

    @property
    def settings(self) -> Settings: ...

    def workspace_root(self) -> str: ...

    def connection_of(self, agent: str | None) -> AgentConnection | None: ...


logger = logging.getLogger(__name__)

T = TypeVar("T")
TerminalRequest = (
    TerminalOutputRequest
    | WaitForTerminalExitRequest
    | KillTerminalRequest
    | ReleaseTerminalRequest
)


class AgentRequests:
    def __init__(
        self,
        editor: ports.EditorPort,
        sessions: Mapping[str, Session],
        pump: FlushScheduler,
        terminals: TerminalStore,
        follow: FollowController,
        router: RouterPart,
        review: ReviewPart,
        tasks: TaskSupervisor,
        state_dir: Path,
        environ: Mapping[str, str],
        hub: RequestsHub,
        owned: OwnedProcesses | None = None,
    ) -> None:
        self.editor = editor
        self.owned = owned  # marks the terminals' processes as this acpls' (None: unmarked)
        self.sessions = sessions  # the registry's, read only
        self.pump = pump
        self.terminal_store = terminals  # what the editor is shown of each terminal
        self.follow = follow
        self.router = router  # permission prompts and tool calls reach the session through it
        self.review = review  # sees the agent's reads and writes
        self.tasks = tasks
        self.state_dir = state_dir  # rules.json, proposed writes
        self.environ = environ  # client terminals' base environment
        self.hub = hub
        self._keys = itertools.count(1)
        # What the agent last read of each path, to tell its writes from clobbering the user's.
        self._read_texts: dict[str, str] = {}
        self.paths = PathPolicy([])
        # Files with more than one hard link the user let each session read: (st_dev, st_ino).
        self._linked_ok: dict[str, set[tuple[int, int]]] = {}
        self._rules: RuleStore | None = None
        # The commands each agent runs through terminal/create, in that agent's environment.
        self._terminals: dict[str, ClientTerminals] = {}

    def register(self, conn: AgentConnection, agent: str, env: dict[str, str]) -> None:
        """Serve `conn`'s requests; the process of `agent`, started with `env`."""
        self.paths.set_roots(self.editor.workspace_roots, self.hub.settings.allowed_roots)
        old = self._terminals.get(agent)
        if old is not None:  # its processes were killed when the agent stopped (close_all)
            self.tasks.spawn(f"close-terminals-of:{agent}", old.aclose())
        self._terminals[agent] = ClientTerminals(
            base_env=env,
            on_output=self._terminal_output,
            on_exit=self._terminal_exit,
            owned=self.owned,
        )
        conn.register(
            {
                "session/request_permission": self.request_permission,
                "fs/read_text_file": self.read_text_file,
                "fs/write_text_file": self.write_text_file,
                "terminal/create": self.terminal_create,
                "terminal/output": self.terminal_output,
                "terminal/wait_for_exit": self.terminal_wait_for_exit,
                "terminal/kill": self.terminal_kill,
                "terminal/release": self.terminal_release,
            },
            {},
        )

    @property
    def terminals(self) -> ClientTerminals:
        """The default agent's terminals (tests read them)."""
        return self._terminals_of(self.hub.settings.agent.name)

    def _terminals_of(self, agent: str) -> ClientTerminals:
        agent = agent or self.hub.settings.agent.name
        terminals = self._terminals.get(agent)
        if terminals is None:
            terminals = self._terminals[agent] = ClientTerminals(
                base_env=self.hub.settings.base_env(self.environ),
                on_output=self._terminal_output,
                on_exit=self._terminal_exit,
                owned=self.owned,
            )
        return terminals

    @property
    def rules(self) -> RuleStore:
        settings = self.hub.settings
        store = self._rules
        root = self.hub.workspace_root()
        if store is None or store.workspace != os.path.normpath(root):
            store = RuleStore(root, path=self.state_dir / "rules.json")
            self._rules = store
        store.auto_approve_kinds = frozenset(settings.auto_approve_kinds)
        return store

    # -- sessions --------------------------------------------------------------------------------
    def _session_of(self, session_id: Any) -> Session:
        session = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is None:
            raise AcpError(INVALID_PARAMS, f"unknown sessionId {session_id!r}")
        return session

    # -- permission ------------------------------------------------------------------------------
    async def request_permission(self, params: Any) -> dict[str, Any]:
        request = _decode(params, RequestPermissionRequest)
        session = self._session_of(request.session_id)
        options = perm.offered_options(request)
        if not options:
            raise AcpError(
                INVALID_PARAMS, "RequestPermissionRequest.options: at least one option is needed"
            )
        if session.turn is not None and session.turn.cancel_requested:
            # The user cancelled the turn: a request that comes later is answered at once.
            return perm.cancelled()
        if len(session.pending_permissions) >= self.hub.settings.max_pending_permissions:
            logger.warning("too many pending permission requests; answering cancelled")
            return perm.cancelled()
        # A deep copy: what the prompt shows, what a rule matches and what an "always" answer
        # records all come from this one snapshot, whatever tool_call_update the agent sends
        # while the user decides.
        tool_call = copy.deepcopy(self._permission_tool_call(session, request))
        guarded = self._guarded_edit(tool_call)
        if guarded is not None:
            # A write to a place that runs code (or outside the workspace): the user decides,
            # whatever a remembered rule or `permissions.autoApprove` says, and is told why.
            logger.info("permission for %r asked: %s", tool_call.get("title"), guarded)
            request = attrs.evolve(request, description=_with_reason(request, guarded))
        else:
            automatic = self._answer_by_rule(session, tool_call, options)
            if automatic is not None:
                return automatic
        key = next(self._keys)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        pending = PendingPermission(request_key=key, options=options, answer=future)
        session.pending_permissions[key] = pending
        asker = self.tasks.spawn(
            f"permission:{key}", self._ask(session, pending, request, tool_call)
        )
        try:
            outcome = await future
            self._remember_choice(session, tool_call, options, outcome)
            return outcome
        finally:
            session.pending_permissions.pop(key, None)
            if not asker.done():
                asker.cancel()
            if pending.editor_msg_id is not None and not asker.done():
                self.editor.cancel_request(pending.editor_msg_id)

    def _guarded_edit(self, tool_call: dict[str, Any]) -> str | None:
        """Why a tool call that writes (an edit, delete or move, or any carrying a diff) must be
        put to the user: the first path it names in a protected place, with the reason."""
        kind = tool_call.get("kind")
        content = tool_call.get("content")
        diffs = isinstance(content, list) and any(
            isinstance(item, dict) and item.get("type") == "diff" for item in content
        )
        if kind not in _WRITING_KINDS and not diffs:
            return None
        for path in _named_paths(tool_call):
            try:
                decision = self.paths.check(path)
            except InvalidPath:
                continue
            found = self._protection(decision)
            if found is not None:
                return f"{path}: {found.reason}"
        return None

    def _protection(self, decision: PathDecision) -> Protection | None:
        """Why writing this path is always asked about (state/protected.py), judged by where it
        really is and by the name it was given (a link named `.git/hooks/x` counts too)."""
        settings = self.hub.settings
        own = self._own_dirs()
        found = protection(decision.resolved, self.paths.roots, own, settings.always_ask)
        if found is not None:
            return found
        named = protection(
            os.path.normpath(decision.path), self.paths.editor_roots, own, settings.always_ask
        )
        return named if named is not None and named.reason != OUTSIDE else None

    def _own_dirs(self) -> tuple[str, ...]:
        """acpls' state folder, `$XDG_STATE_HOME/acpls` and `$XDG_CONFIG_HOME/acpls`, resolved
        and as named: an agent that rewrites acpls' rules allows itself anything."""
        env = self.environ
        home = env.get("HOME") or os.path.expanduser("~")
        found: list[str] = []
        for folder in (
            str(self.state_dir),
            os.path.join(_xdg(env, "XDG_STATE_HOME", home, ".local/state"), "acpls"),
            os.path.join(_xdg(env, "XDG_CONFIG_HOME", home, ".config"), "acpls"),
        ):
            for form in (os.path.normpath(folder), os.path.realpath(folder)):
                if os.path.isabs(form) and form not in found:
                    found.append(form)
        return tuple(found)

    def _answer_by_rule(
        self, session: Session, tool_call: dict[str, Any], options: list[dict[str, Any]]
    ) -> dict[str, Any] | None:
        """A remembered rule or a pre-approved kind answers without asking; the editor is told."""
        rules = self.rules
        rule = rules.match(session.agent or self.hub.settings.agent.name, tool_call)
        option_id = choose_option(rule, options) if rule is not None else None
        if option_id is None:
            rule = None
            option_id = rules.auto_approve_option(tool_call, options)
        if option_id is None:
            return None
        kind = next((o.get("kind") for o in options if o["optionId"] == option_id), None)
        update: dict[str, Any] = {
            "sessionUpdate": "auto_permission",
            "toolCall": tool_call,
            "optionId": option_id,
            "optionKind": kind,
        }
        if rule is not None:
            update["ruleId"] = rule.rule_id
        self.router.send_update(session, update)
        logger.info(
            "permission for %r answered by %s",
            tool_call.get("title"),
            rule.rule_id if rule else "autoApprove",
        )
        return perm.selected(option_id)

    def _remember_choice(
        self,
        session: Session,
        tool_call: dict[str, Any],
        options: list[dict[str, Any]],
        outcome: dict[str, Any],
    ) -> None:
        if not self.hub.settings.remember_rules:
            return
        chosen = outcome.get("outcome", {}).get("optionId")
        kind = next((o.get("kind") for o in options if o["optionId"] == chosen), None)
        if isinstance(kind, str) and kind in ("allow_always", "reject_always"):
            # `record` records exactly the scopes `_remember_as` showed: both are computed from
            # this same deep-copied tool-call snapshot (request_permission), not the live state.
            try:
                recorded = self.rules.record(
                    session.agent or self.hub.settings.agent.name, tool_call, kind
                )
            except OSError as exc:
                logger.warning("could not save the permission rule: %s", exc)
                return
            for rule in recorded:
                logger.info("remembered %s %s (%s)", rule.decision, rule.describe(), rule.rule_id)

    def _remember_as(
        self, tool_call: dict[str, Any], options: list[dict[str, Any]]
    ) -> list[dict[str, Any]] | None:
        """What an "always" answer would record, shown with the prompt; None when no option is
        an "always" one or rules are off."""
        if not self.hub.settings.remember_rules:
            return None
        if not any(o.get("kind") in ("allow_always", "reject_always") for o in options):
            return None
        return self.rules.describe_scopes(tool_call)

    def _permission_tool_call(
        self, session: Session, request: RequestPermissionRequest
    ) -> dict[str, Any]:
        """The tool call the request is about (v1 `toolCall`, or a v2 `tool_call` subject's),
        merged with what acpls already knows of it; a v2 request about something else (a
        command, an unknown subject) is shown by its title."""
        try:
            call = permission_tool_call(request)
        except AcpModelError as exc:
            raise AcpError(INVALID_PARAMS, f"{exc} (in subject.toolCall)") from exc
        if call is None:
            return {"toolCallId": "", "title": _given(request.title) or "permission"}
        return self.router.merge_tool_call(session, unstructure(call))

    async def _ask(
        self,
        session: Session,
        pending: PendingPermission,
        request: RequestPermissionRequest,
        tool_call: dict[str, Any],
    ) -> None:
        try:
            if self.editor.custom_mode:
                outcome = await self._ask_custom(session, pending, request, tool_call)
            else:
                outcome = await self._ask_generic(pending, request, tool_call)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("asking the editor for permission failed; answering as dismissed")
            outcome = perm.dismissed_outcome(pending.options)
        if not pending.answer.done():
            pending.answer.set_result(outcome)

    def _preview(self, tool_call: dict[str, Any]) -> Any:
        content = tool_call.get("content")
        if not isinstance(content, list):
            return None
        return workspace_edit_from_content(content, self.current_text)

    async def _ask_custom(
        self,
        session: Session,
        pending: PendingPermission,
        request: RequestPermissionRequest,
        tool_call: dict[str, Any],
    ) -> dict[str, Any]:
        preview = self._preview(tool_call)
        asked = msg.RequestPermissionParams(
            sessionId=session.id,
            toolCall=tool_call,
            options=pending.options,
            title=_given(request.title) or tool_call.get("title"),
            description=_given(request.description),
            subject=_given(request.subject),
            preview=preview.edit if preview is not None else None,
            previewProblems=(preview.problems or None) if preview is not None else None,
            rememberAs=self._remember_as(tool_call, pending.options),
        )
        pending.editor_msg_id = f"acpls-permission-{uuid.uuid4().hex[:12]}"
        result = await self.editor.request(msg.REQUEST_PERMISSION, asked, pending.editor_msg_id)
        option_id = (
            result.get("optionId")
            if isinstance(result, dict)
            else getattr(result, "optionId", None)
        )
        return perm.outcome_for_option_id(pending.options, option_id)

    async def _ask_generic(
        self,
        pending: PendingPermission,
        request: RequestPermissionRequest,
        tool_call: dict[str, Any],
    ) -> dict[str, Any]:
        preview = self._preview(tool_call)
        files = [(f.path, f.added, f.removed) for f in preview.files] if preview else []
        message = perm.generic_message(
            _given(request.title) or str(tool_call.get("title") or "tool call"),
            tool_call.get("kind") if isinstance(tool_call.get("kind"), str) else None,
            files,
            _given(request.description),
            self._remember_as(tool_call, pending.options),
        )
        options = perm.unique_titles(pending.options)
        pending.options = options
        choice = await self.editor.show_message_request(
            ports.MESSAGE_INFO, message, [o["name"] for o in options]
        )
        return perm.outcome_for_title(options, choice)

    def session_closed(self, session: Session) -> None:
        """The session ended (core/sessions.py): its prompts are answered `cancelled`, its
        outside-the-workspace approvals forgotten, and the commands it ran stopped."""
        self.cancel_permissions(session)
        self.paths.forget_session(session.id)
        self._linked_ok.pop(session.id, None)
        terminals = self._terminals_of(session.agent)
        if terminals.terminal_ids(session.id):
            self.tasks.spawn(f"close-terminals:{session.id}", terminals.close_session(session.id))

    def cancel_permissions(self, session: Session) -> None:
        """session/cancel: every pending request of the session is answered `cancelled`."""
        for pending in list(session.pending_permissions.values()):
            if not pending.answer.done():
                pending.answer.set_result(perm.cancelled())

    # -- files -----------------------------------------------------------------------------------
    def current_text(self, path: str) -> str | None:
        return ports.current_text(self.editor, path, self.hub.settings.max_read_bytes)

    def _judge(self, path: Any) -> PathDecision:
        if not isinstance(path, str) or not path:
            raise AcpError(INVALID_PARAMS, "path must be a non-empty string")
        try:
            return self.paths.check(path)
        except InvalidPath as exc:
            raise AcpError(INVALID_PARAMS, str(exc)) from exc

    async def check_path(self, session: Session, path: Any, action: str) -> str:
        """Absolute, inside the workspace (after symlinks and `..`), or approved by the user for
        the session. Returns the resolved path (as the editor names it): what is then used."""
        return (await self._checked(session, path, action)).usable

    async def _checked(self, session: Session, path: Any, action: str) -> PathDecision:
        decision = self._judge(path)
        if decision.inside or self.paths.is_approved(session.id, decision.path):
            return decision
        question = (
            f"The agent wants to {action} {decision.path}, outside the workspace"
            + _really(decision)
            + ". Allow it for this session?"
        )
        if not await self._allowed(question):
            raise AcpError(
                INVALID_PARAMS, f"{decision.path} is outside the workspace and was not allowed"
            )
        self.paths.approve(session.id, decision.path)
        return decision

    async def _allowed(self, question: str) -> bool:
        try:
            answer = await self.editor.show_message_request(
                ports.MESSAGE_WARNING, question, ["Allow", "Deny"]
            )
        except Exception:
            answer = None
        return answer == "Allow"

    async def read_text_file(self, params: Any) -> dict[str, Any]:
        request = _decode(params, ReadTextFileRequest)
        session = self._session_of(request.session_id)
        decision = await self._checked(session, request.path, "read")
        path = decision.usable
        line, limit = _given(request.line), _given(request.limit)
        text = self.editor.document_text(path_to_uri(path))
        if text is None:
            await self._check_hard_links(session, path)
            window = await self._read_disk(session, decision, line, limit)
            if window is None:
                return {"content": ""}
            text = window.text
            if window.whole:  # what the agent has seen of the file: all of it
                self._read_texts[path] = text
                self.review.agent_read(path, text)
        else:
            self._read_texts[path] = text
            self.review.agent_read(path, text)
            if line is not None or limit is not None:
                text = _slice(text, line, limit)
        if session.top_level:
            start = line if line is not None and line > 0 else 1
            self.follow.move(FollowTarget(session.id, "fs/read_text_file", path, start, "read"))
        return {"content": text}

    async def _read_disk(
        self, session: Session, decision: PathDecision, line: int | None, limit: int | None
    ) -> Window | None:
        """The file's text off the event loop: a regular file only, still where the path was
        judged to lead, with no hard link the user did not allow; the line window cut while
        reading, at most `limits.maxReadBytes` read. None: a missing file an agent that cannot
        tell one over ACP gets as empty (Gemini CLI)."""
        path = decision.usable
        max_bytes = self.hub.settings.max_read_bytes
        linked_ok = frozenset(self._linked_ok.get(session.id, ()))

        def accept(info: os.stat_result) -> str | None:
            if info.st_nlink > 1 and (info.st_dev, info.st_ino) not in linked_ok:
                return "got another hard link since it was checked"
            return None

        try:
            return await asyncio.to_thread(_read_confined, decision, max_bytes, line, limit, accept)
        except TooLarge as exc:
            wanted = "the lines asked for end" if line or limit is not None else "it is"
            raise AcpError(
                INVALID_PARAMS,
                f"cannot read {path}: {wanted} past limits.maxReadBytes ({max_bytes} bytes);"
                " read it in parts with line and limit",
            ) from exc
        except ReadRefused as exc:
            raise AcpError(INVALID_PARAMS, f"cannot read {exc}") from exc
        except FileNotFoundError:
            if self._reads_missing_as_empty(session):
                # Gemini CLI tells a missing file by a Node ENOENT error, which no JSON-RPC error
                # becomes on its side: its write_file of a new file would fail. It reads this
                # way only to make an edit (its read_file checks the disk itself), where a
                # missing file means "empty, new": answered as such, nothing recorded as read.
                return None
            raise _not_readable(path) from None
        except (OSError, UnicodeDecodeError):
            raise _not_readable(path) from None

    async def _check_hard_links(self, session: Session, path: str) -> None:
        """A file with more than one hard link is the same file as another name, maybe outside
        the workspace: it is read only after the user allowed it for the session."""
        try:
            info = os.stat(path)
        except OSError:
            return
        identity = (info.st_dev, info.st_ino)
        if info.st_nlink <= 1 or identity in self._linked_ok.get(session.id, ()):
            return
        question = (
            f"The agent wants to read {path}, which has {info.st_nlink} hard links: the same"
            " file has another name, maybe outside the workspace. Allow it for this session?"
        )
        if not await self._allowed(question):
            raise AcpError(
                INVALID_PARAMS, f"{path} has more than one hard link and was not allowed"
            )
        self._linked_ok.setdefault(session.id, set()).add(identity)

    async def _writable(self, session: Session, raw_path: Any) -> _Target:
        """Where an fs/write_text_file goes, asked about every time when it is a protected place
        (state/protected.py: outside the workspace, `.git`, the editor's and acpls' own settings,
        `files.alwaysAsk`) or a file with more than one hard link. FIFOs, sockets and devices
        are never written."""
        decision = self._judge(raw_path)
        reasons: list[str] = []
        found = self._protection(decision)
        if found is not None:
            reasons.append(found.reason)
        target = _Target.of(decision)
        if target.links > 1:
            reasons.append(
                f"it has {target.links} hard links: the same file has another name, maybe"
                " outside the workspace"
            )
        if not reasons:
            return target
        question = (
            f"The agent wants to write {decision.path}{_really(decision)}: "
            + "; ".join(reasons)
            + ". Allow this write?"
        )
        if not await self._allowed(question):
            raise AcpError(
                INVALID_PARAMS,
                f"the user did not allow the write to {decision.path} ({'; '.join(reasons)})",
            )
        return target

    def _reads_missing_as_empty(self, session: Session) -> bool:
        conn = self.hub.connection_of(session.agent or None)
        return conn is not None and conn.agent_info.get("name") in _MISSING_READS_EMPTY

    async def write_text_file(self, params: Any) -> dict[str, Any]:
        request = _decode(params, WriteTextFileRequest)
        session = self._session_of(request.session_id)
        target = await self._writable(session, request.path)
        path = target.path
        content = request.content
        old = self.current_text(path)
        exists = old is not None or os.path.exists(path)
        await self._protect_unsaved_work(path, content)
        # Nothing awaited from here to the edit's sending: what was judged is what is written.
        target.confirm()
        edit, first_line = self._write_edit(path, old if exists else None, content)
        if first_line is None:
            return {}
        self.review.before_write(session, path, old if exists else None)
        # No edit: a new file acpls wrote itself (an editor without `resourceOperations`).
        applied, reason = (
            await self.editor.apply_edit(edit, f"Agent: write {path}") if edit else (True, None)
        )
        if not applied:
            raise AcpError(
                INTERNAL_ERROR, f"the editor did not apply the write to {path}: {reason}"
            )
        if not exists:
            target.confirm()
            await self._converge_new_file(path, content)
        self.review.after_write(path, content)
        self._read_texts[path] = content
        if session.top_level and first_line is not None:
            self.follow.move(
                FollowTarget(session.id, "fs/write_text_file", path, first_line + 1, "edit")
            )
        return {}

    async def _converge_new_file(self, path: str, content: str) -> None:
        """A new file's write is the editor's create and an insert at its start. An agent that
        also writes the file itself (OpenCode) can land its copy after the create and before the
        editor loads the file for the insert, which then goes in front of that copy: the text
        twice. What the insert went to is compared, never anything else: the editor's document
        when the editor has the file open (once its didChange is in), else the disk. Only a
        text that starts with the agent's and holds more shows the insert landed on top of
        something: it is brought to the agent's text with one more edit. Any other text means
        the insert went where acpls cannot see (an unsaved buffer the editor does not sync with
        acpls) or is not reported yet, and a second insert would put the text there twice."""
        now = await self._new_file_text(path, content)
        if now is None or now == content or not now.startswith(content):
            return
        logger.info("new file %s holds more than the agent's text after the write; fixing", path)
        edit, _ = self._write_edit(path, now, content)
        if edit is None:
            return
        applied, reason = await self.editor.apply_edit(edit, f"Agent: write {path}")
        if not applied:
            raise AcpError(
                INTERNAL_ERROR, f"the editor did not apply the write to {path}: {reason}"
            )

    async def _new_file_text(self, path: str, content: str) -> str | None:
        """The text the new file's insert went to: the editor's document once it starts with the
        agent's text (editors debounce didChange, and send it after their applyEdit reply), at
        most `_NEW_FILE_SETTLE_S` waited; the disk's when the editor did not open it."""
        uri = path_to_uri(path)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _NEW_FILE_SETTLE_S
        while (text := self.editor.document_text(uri)) is not None:
            if text.startswith(content) or loop.time() >= deadline:
                return text
            await asyncio.sleep(_NEW_FILE_POLL_S)
        return self.current_text(path)  # no document: the disk's

    async def _protect_unsaved_work(self, path: str, content: str) -> None:
        """A write over unsaved changes the agent never read is not applied without asking."""
        buffer = self.editor.document_text(path_to_uri(path))
        if buffer is None or buffer == content or self._read_texts.get(path) == buffer:
            return
        try:
            on_disk: str | None = read_text(path, max_bytes=self.hub.settings.max_read_bytes)
        except (OSError, UnicodeDecodeError):
            on_disk = None
        if buffer == on_disk:
            return  # not dirty: nothing of the user's would be lost
        if self.review.matches_disk_before_write(path, buffer):
            # The agent wrote the disk itself before this request (OpenCode writes its edit both
            # ways): the buffer is still the disk's text from before that write, not the user's.
            return
        keep, take, show = "Keep mine", "Take the agent's", "Show the diff"
        question = (
            f"The agent wants to write {path}, which has unsaved changes it has not seen. "
            "Your changes stay in the undo history either way."
        )
        while True:
            answer = await self.editor.show_message_request(
                ports.MESSAGE_WARNING, question, [keep, take, show]
            )
            if answer == take:
                return
            if answer != show:
                raise AcpError(
                    INTERNAL_ERROR,
                    f"the user kept their unsaved changes to {path}; the write was not applied",
                )
            await self._show_proposed(path, content)

    async def _show_proposed(self, path: str, content: str) -> None:
        """Write the agent's text beside the state files (never the workspace) and show it."""
        directory = private_files.make_dir(self.state_dir / "proposed")
        target = directory / os.path.basename(path)
        private_files.write_atomic(target, content, fsync=False)  # 0600: the agent's text
        await self.editor.show_document(path_to_uri(str(target)), None)

    def _write_edit(
        self, path: str, old: str | None, new: str
    ) -> tuple[dict[str, Any] | None, int | None]:
        """The edit that makes `path` hold `new`, and the first line it changes; (None, None)
        when it already does. A new file (`old` None) in an editor without `resourceOperations`
        is written here, whole, and gets no edit (None, 0): an empty file acpls created for the
        editor's insert went into a buffer the editor may not save (eglot), leaving the disk
        empty, and acpls may not see that buffer to tell whether the agent's own copy of the
        file got in under the insert."""
        uri = path_to_uri(path)
        if old is None:
            changes: list[dict[str, Any]] = []
            if self.editor.supports_create_file:
                # `overwrite`, not `ignoreIfExists`: the file may appear between this check and
                # the editor's apply (OpenCode writes it itself right after asking acpls to), and
                # the text is then inserted into an empty file, never beside the agent's own
                # copy (the file held its text twice). The request is for the whole content.
                changes.append({"kind": "create", "uri": uri, "options": {"overwrite": True}})
            else:
                try:
                    _create_with_text(path, new)
                except FileExistsError:
                    return self._write_edit(path, self.current_text(path) or "", new)
                except OSError as exc:
                    raise AcpError(INTERNAL_ERROR, f"cannot create {path}: {exc}") from exc
                return None, 0
            edits = minimal_line_edits("", new)
            changes.append({"textDocument": {"uri": uri, "version": None}, "edits": edits})
            return {"documentChanges": changes}, 0
        edits = minimal_line_edits(old, new)
        if not edits:
            return None, None
        first_line = edits[0]["range"]["start"]["line"]
        return {
            "documentChanges": [{"textDocument": {"uri": uri, "version": None}, "edits": edits}]
        }, first_line

    # -- terminals (ACP v1: client-owned) ---------------------------------------------------------
    def _terminal_output(self, session_id: str, terminal_id: str, data: bytes) -> None:
        if session_id not in self.sessions:
            return  # the session ended; its terminals are being stopped (session_closed)
        self.terminal_store.append_bytes(session_id, terminal_id, data)
        self.pump.poke()

    def _terminal_exit(self, session_id: str, terminal_id: str, status: ExitStatus) -> None:
        if session_id not in self.sessions:
            return
        self.terminal_store.set_exit_status(
            session_id, terminal_id, exit_code=status.exit_code, signal=status.signal
        )
        self.pump.poke()

    def _terminal_id(self, params: Any, cls: type[TerminalRequest]) -> tuple[Session, str]:
        request = _decode(params, cls)
        return self._session_of(request.session_id), request.terminal_id

    async def terminal_create(self, params: Any) -> dict[str, Any]:
        request = _decode(params, CreateTerminalRequest)
        session = self._session_of(request.session_id)
        command, args = request.command, _given(request.args) or []
        if not command:
            raise AcpError(INVALID_PARAMS, "command must be a non-empty string")
        cwd = _given(request.cwd) or session.cwd
        await self.check_path(session, cwd, "run a command in")
        variables = _given(request.env)
        env = None if variables is None else [{"name": v.name, "value": v.value} for v in variables]
        with _terminal_errors():
            terminal_id = await self._terminals_of(session.agent).create(
                session.id, command, args, env, cwd, _given(request.output_byte_limit)
            )
        shown = " ".join([command, *args])
        self.terminal_store.open_client_terminal(session.id, terminal_id, command=shown, cwd=cwd)
        self.pump.poke()
        return {"terminalId": terminal_id}

    async def terminal_output(self, params: Any) -> dict[str, Any]:
        session, terminal_id = self._terminal_id(params, TerminalOutputRequest)
        with _terminal_errors():
            return self._terminals_of(session.agent).output(session.id, terminal_id).to_acp()

    async def terminal_wait_for_exit(self, params: Any) -> dict[str, Any]:
        session, terminal_id = self._terminal_id(params, WaitForTerminalExitRequest)
        with _terminal_errors():
            status = await self._terminals_of(session.agent).wait_for_exit(session.id, terminal_id)
        return status.to_acp()

    async def terminal_kill(self, params: Any) -> dict[str, Any]:
        session, terminal_id = self._terminal_id(params, KillTerminalRequest)
        with _terminal_errors():
            await self._terminals_of(session.agent).kill(session.id, terminal_id)
        return {}

    async def terminal_release(self, params: Any) -> dict[str, Any]:
        session, terminal_id = self._terminal_id(params, ReleaseTerminalRequest)
        with _terminal_errors():
            await self._terminals_of(session.agent).release(session.id, terminal_id)
        self.terminal_store.release(session.id, terminal_id)
        self.pump.poke()
        return {}

    async def close_all(self, agent: str) -> None:
        """The agent is gone: stop every process acpls ran for it."""
        terminals = self._terminals.get(agent)
        if terminals is not None:
            await terminals.kill_all()

    async def aclose(self) -> None:
        for terminals in list(self._terminals.values()):
            await terminals.aclose()


def _decode(params: Any, cls: type[T]) -> T:
    """The agent's params as the ACP model `cls`; a wrong shape is InvalidParams naming it."""
    try:
        return structure(params, cls)
    except AcpModelError as exc:
        raise AcpError(INVALID_PARAMS, str(exc)) from exc


def _given(value: T | Omitted | None) -> T | None:
    """A field's value, None when the agent left it out or sent null."""
    return None if isinstance(value, Omitted) else value


@contextlib.contextmanager
def _terminal_errors() -> Iterator[None]:
    """A terminal request that cannot be served answers the agent with the error's own code."""
    try:
        yield
    except TerminalError as exc:
        raise AcpError(exc.code, exc.message) from exc


# Tool kinds that write files: a permission request of one naming a protected place is asked.
_WRITING_KINDS = frozenset({"edit", "delete", "move"})
# rawInput keys agents name a file by (Claude Code `file_path`, others `path`, `filePath`).
_RAW_PATH_KEYS = ("file_path", "filePath", "path", "notebook_path", "destination", "new_path")


def _named_paths(tool_call: Mapping[str, Any]) -> list[str]:
    """Every absolute path a tool call names: locations, diffs and its rawInput's path keys."""
    paths = tool_call_paths(tool_call)
    raw = tool_call.get("rawInput")
    if isinstance(raw, dict):
        for key in _RAW_PATH_KEYS:
            value = raw.get(key)
            if isinstance(value, str) and os.path.isabs(value) and value not in paths:
                paths.append(value)
    return paths


def _with_reason(request: RequestPermissionRequest, why: str) -> str:
    """The request's description with why acpls asks the user this, first."""
    given = _given(request.description)
    asked = f"acpls always asks about this: {why}."
    return f"{asked}\n\n{given}" if given else asked


def _really(decision: PathDecision) -> str:
    resolved = decision.resolved
    return f" (really {resolved})" if resolved != os.path.normpath(decision.path) else ""


def _xdg(env: Mapping[str, str], name: str, home: str, default: str) -> str:
    """An XDG base folder: the variable when absolute (the spec ignores a relative one)."""
    value = env.get(name, "")
    return value if os.path.isabs(value) else os.path.join(home, default)


@attrs.frozen
class _Target:
    """A file a write was judged for: where it really is (`resolved`; `path` is that as the
    editor names it), and what it was then: (st_dev, st_ino) when it existed, its links."""

    path: str
    resolved: str
    identity: tuple[int, int] | None
    links: int

    @classmethod
    def of(cls, decision: PathDecision) -> _Target:
        try:
            info = os.lstat(decision.resolved)
        except FileNotFoundError:
            return cls(decision.usable, decision.resolved, None, 0)
        except OSError as exc:
            raise AcpError(INVALID_PARAMS, f"cannot write {decision.path}: {exc}") from exc
        if not stat.S_ISREG(info.st_mode):
            raise AcpError(
                INVALID_PARAMS,
                f"cannot write {decision.path}: it is {kind_of(info.st_mode)}, not a regular file",
            )
        return cls(decision.usable, decision.resolved, (info.st_dev, info.st_ino), info.st_nlink)

    def confirm(self) -> None:
        """Right before the write is sent (no await in between): the path still leads to the
        same place and the same file, so a symlink or hard link swapped in while acpls waited
        (for the user, for the editor) gets nothing written."""
        problem = self._changed()
        if problem is not None:
            logger.warning("write to %s refused: %s", self.path, problem)
            raise AcpError(
                INTERNAL_ERROR, f"{self.path} {problem} while the write waited; nothing was written"
            )

    def _changed(self) -> str | None:
        now = os.path.realpath(self.path)
        if now != self.resolved:
            return f"now leads to {now}"
        try:
            info = os.lstat(self.resolved)
        except FileNotFoundError:
            return None if self.identity is None else "was removed"
        except OSError as exc:
            return f"cannot be checked ({exc.strerror})"
        if not stat.S_ISREG(info.st_mode):
            return f"became {kind_of(info.st_mode)}"
        if self.identity is not None and (info.st_dev, info.st_ino) != self.identity:
            return "was replaced by another file"
        if info.st_nlink > max(self.links, 1):
            return "got another hard link"
        return None


def _read_confined(
    decision: PathDecision, max_bytes: int, line: int | None, limit: int | None, accept: Accept
) -> Window:
    """In a worker thread: the path still leads where it was judged to (no link swapped in while
    the user was asked), its last part is no symlink (O_NOFOLLOW), and the opened file passes
    `accept`; then the bounded read (services/file_reads.py)."""
    path = decision.usable
    now = os.path.realpath(path)
    if now != decision.resolved:
        raise ReadRefused(f"{path}: it now leads to {now}, not where it was checked to")
    return read_window(
        path, max_bytes=max_bytes, line=line, limit=limit, follow=False, accept=accept
    )


# Agents (by `agentInfo.name`) that cannot tell a missing file from an error over ACP.
_MISSING_READS_EMPTY = frozenset({"gemini-cli"})

# How long a new file's write waits for the editor's didChange of its insert, and how often it
# looks (editors send didChange after a pause in typing: eglot 0.5 s, Neovim 0.15 s).
_NEW_FILE_SETTLE_S = 1.0
_NEW_FILE_POLL_S = 0.01


def _create_with_text(path: str, text: str) -> None:
    """Create `path` holding `text`; FileExistsError when something is there already (the
    agent's own copy, or a symlink swapped in: O_EXCL follows none). A failed write leaves no
    part of a file behind."""
    with open(path, "x", encoding="utf-8", newline="") as handle:
        try:
            handle.write(text)
            handle.flush()
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(path)
            raise


def _not_readable(path: str) -> AcpError:
    """ACP's ResourceNotFound, worded as the ACP SDK words it: agents tell a missing file from
    other failures by this text (Gemini CLI's write_file treats any other error as "the file
    exists but cannot be read" and refuses to create it)."""
    if not os.path.lexists(path):
        return AcpError(RESOURCE_NOT_FOUND, f"Resource not found: {path}", {"uri": path})
    return AcpError(RESOURCE_NOT_FOUND, f"cannot read {path}: not a UTF-8 text file", {"uri": path})


def _slice(text: str, line: Any, limit: Any) -> str:
    lines = text.splitlines(keepends=True)
    start = line - 1 if isinstance(line, int) and line > 0 else 0
    end = start + limit if isinstance(limit, int) and limit >= 0 else len(lines)
    return "".join(lines[start:end])
