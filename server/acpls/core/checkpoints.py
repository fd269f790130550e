"""Checkpoints: the workspace recorded before every turn, and put back on request.

Turn start order (editors/protocol.md "Checkpoints"): `acpls.prompt` arrives; the hub marks the
session busy; this controller snapshots every workspace folder (the prompt waits for that and
nothing else); then the prompt goes to the agent. At the turn's end a second snapshot gives the
files the turn changed (the editor's answer is not delayed by more than that).

The git work is `services.snapshots`; what to change on restore is `state.checkpoints`; this
module feeds them, drives `workspace/applyEdit`, and keeps the log (a JSON file beside the
private store, so checkpoints outlive acpls).
"""

from __future__ import annotations

import asyncio
import datetime
import itertools
import json
import logging
import os
import posixpath
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from acpls.core import ports
from acpls.core.errors import CommandError
from acpls.services import private_files
from acpls.services.snapshots import (
    Limits,
    SnapshotError,
    SnapshotStore,
    apply_disk_op,
    inside,
    store_dir_for,
)
from acpls.state.checkpoints import (
    Change,
    Checkpoint,
    CheckpointLog,
    FolderState,
    RestorePlan,
    conversation_context,
    effective_changes,
    plan_restore,
    restore_diff,
    workspace_edit,
)
from acpls.translate.transcript_lenses import lenses
from acpls.translate.uris import uri_to_path

if TYPE_CHECKING:
    from collections.abc import Mapping

    from acpls.acp.connection import AgentConnection
    from acpls.core.parts import RouterPart
    from acpls.core.session import Session
    from acpls.registry.spec import AgentSpec
    from acpls.settings import Settings
    from acpls.supervisor import TaskSupervisor


class CheckpointsHub(Protocol):
    """What checkpoints ask of the hub: the settings (checkpoints, fork, limits, MCP servers),
    whose transcript a file is, and the sessions to fork into or continue in."""

    @property
    def settings(self) -> Settings: ...

    @property
    def router(self) -> RouterPart: ...

    def connection_of(self, agent: str | None) -> AgentConnection | None: ...

    async def agent(self, name: Any = None) -> AgentConnection: ...

    def agent_spec(self, agent: Any = None) -> AgentSpec: ...

    async def new_session(self, cwd: str | None = None, agent: Any = None) -> Session: ...

    async def load_session(
        self, session_id: str, cwd: str | None = None, *, replay: bool = True, agent: Any = None
    ) -> Session: ...

    def adopt_session(
        self, session_id: str, cwd: str, response: dict[str, Any], conn: AgentConnection
    ) -> Session: ...


logger = logging.getLogger(__name__)

# How long the next prompt waits for a `session/fork` still running after the previous turn.
FORK_WAIT_S = 10.0


def _continued(session: Session, via: str, prompt: str) -> dict[str, Any]:
    """`acpls.continueFromCheckpoint`'s answer: the session, how it was made, the turn's prompt
    and the session's agent (section 13), so the editor labels it without asking."""
    return {"sessionId": session.id, "via": via, "prompt": prompt, "agent": session.agent}


class CheckpointController:
    def __init__(
        self,
        editor: ports.EditorPort,
        sessions: Mapping[str, Session],
        tasks: TaskSupervisor,
        state_dir: Path,
        environ: Mapping[str, str],
        hub: CheckpointsHub,
    ) -> None:
        self.editor = editor
        self.sessions = sessions  # the registry's, read only
        self.tasks = tasks
        self.state_dir = state_dir  # the snapshot stores and checkpoints.json
        self.environ = environ  # git's environment
        self.hub = hub
        self._stores: dict[str, SnapshotStore] = {}
        self._log: CheckpointLog | None = None
        self._log_path: Path | None = None
        self._open: dict[str, Checkpoint] = {}  # session id -> its running turn's checkpoint
        self._ids = itertools.count(1)
        self._pruning: asyncio.Task[Any] | None = None
        self._warned = False
        self._lock = asyncio.Lock()
        self._forks: dict[str, asyncio.Task[Any]] = {}  # session id -> fork after its last turn
        self._preambles: dict[str, str] = {}  # session id -> context for its first prompt
        self._fork_conns: dict[str, Any] = {}  # fork session id -> the agent process that made it

    def session_closed(self, session: Session) -> None:
        """The session ended (core/sessions.py): its open checkpoint, fork and preamble go."""
        self._open.pop(session.id, None)
        self._preambles.pop(session.id, None)
        task = self._forks.pop(session.id, None)
        if task is not None and not task.done():
            task.cancel()

    # -- stores and the log ----------------------------------------------------------------------
    def _roots(self) -> list[str]:
        return [r for r in self.editor.workspace_roots if os.path.isdir(r)]

    def _store(self, root: str) -> SnapshotStore:
        settings = self.hub.settings
        limits = Limits(settings.checkpoint_max_file_bytes, settings.checkpoint_binary_budget_bytes)
        store = self._stores.get(root)
        if store is None:
            store = SnapshotStore(root, self.state_dir, limits=limits, environ=self.environ)
            self._stores[root] = store
        store.limits = limits
        return store

    def log(self) -> CheckpointLog:
        roots = self._roots()
        path = store_dir_for(self.state_dir, roots[0]) / "checkpoints.json" if roots else None
        if self._log is None or path != self._log_path:
            self._log_path = path
            self._log = CheckpointLog()
            if path is not None and path.exists():
                try:
                    self._log = CheckpointLog.from_json(json.loads(path.read_text("utf-8")))
                except (OSError, ValueError, KeyError, TypeError) as exc:
                    logger.warning("the checkpoint log %s cannot be read: %s", path, exc)
        return self._log

    def _save(self) -> None:
        if self._log is None or self._log_path is None:
            return
        private_files.make_dir(self._log_path.parent)
        private_files.write_atomic(self._log_path, json.dumps(self._log.to_json()))

    def _new_id(self) -> str:
        return f"{int(time.time() * 1000):x}-{os.getpid():x}-{next(self._ids)}"

    # -- snapshots -------------------------------------------------------------------------------
    async def _snapshot(self) -> dict[str, FolderState] | None:
        roots = self._roots()
        if not roots:
            return None
        buffers: dict[str, str] = {}
        for uri, text in self.editor.open_documents().items():
            try:
                buffers[uri_to_path(uri)] = text
            except ValueError:
                continue
        folders: dict[str, FolderState] = {}
        try:
            for root in roots:
                snap = await self._store(root).snapshot(buffers)
                folders[root] = FolderState(
                    tree=snap.tree,
                    unsaved=snap.unsaved,
                    unsaved_tree=snap.unsaved_tree,
                    not_recorded={n.path: n.reason for n in snap.not_recorded},
                )
        except (SnapshotError, OSError) as exc:
            self._warn(f"acpls: no checkpoint for this turn: {exc}")
            return None
        return folders

    def _warn(self, text: str) -> None:
        logger.warning("%s", text)
        if not self._warned:
            self._warned = True
            self.editor.show_message(ports.MESSAGE_WARNING, text)

    async def turn_started(
        self, session: Session, prompt: str, blocks: list[dict[str, Any]] | None = None
    ) -> None:
        """Record the workspace before the prompt goes to the agent (and put the conversation
        a continued session carries before its first prompt, in `blocks`). Never raises."""
        preamble = self._preambles.pop(session.id, None)
        if preamble is not None and blocks is not None:
            blocks.insert(0, {"type": "text", "text": preamble})
        await self._fork_settled(session.id)
        if not self.hub.settings.checkpoints_enabled:
            return
        await self._prune_settled()
        async with self._lock:
            folders = await self._snapshot()
            if folders is None:
                return
            log = self.log()
            checkpoint = Checkpoint(
                id=self._new_id(),
                session_id=session.id,
                turn=log.next_turn(session.id),
                prompt=prompt,
                time=_now(),
                folders=folders,
                agent=session.agent or None,
            )
            log.add(checkpoint)
            self._open[session.id] = checkpoint
            self._save_quietly()

    async def turn_ended(self, session: Session, reply: str) -> None:
        """Record which files the turn changed. Never raises."""
        checkpoint = self._open.pop(session.id, None)
        if checkpoint is None:
            return
        checkpoint.reply = reply
        async with self._lock:
            after = await self._snapshot()
            if after is not None:
                checkpoint.after = after
                try:
                    checkpoint.files = await self._changed_paths(checkpoint.folders, after)
                except (SnapshotError, OSError) as exc:
                    logger.warning(
                        "cannot list the files turn %s changed: %s", checkpoint.turn, exc
                    )
            self._save_quietly()
        self._schedule_prune()
        self._fork_later(session, checkpoint)

    async def text_before_turn(self, session_id: str, path: str) -> tuple[bool, str | None]:
        """`path`'s text in the checkpoint taken before the session's running turn, for review
        baselines the turn watcher cannot know (no git, untracked or dirty files): `(True,
        text)` when the snapshot holds the file as UTF-8 text, else `(False, None)` (no
        checkpoint, outside the folders, not recorded, ignored, binary). Never raises."""
        checkpoint = self._open.get(session_id)
        if checkpoint is None:
            return False, None
        for root, folder in checkpoint.folders.items():
            store = self._stores.get(root)
            rel = store.relative(path) if store is not None else None
            if store is None or rel is None:
                continue
            if rel in folder.not_recorded:
                return False, None
            try:
                entry = (await store.entries(folder.tree, [rel])).get(rel)
                if entry is None or entry[0] not in ("100644", "100755"):
                    return False, None  # absent may mean ignored, not "did not exist"
                data = (await store.blobs([entry[1]])).get(entry[1])
            except (SnapshotError, OSError, ValueError) as exc:
                logger.info("no checkpoint text of %s: %s", path, exc)
                return False, None
            if data is None:
                return False, None
            try:
                return True, data.decode("utf-8")
            except UnicodeDecodeError:
                return False, None
        return False, None

    # -- the conversation --------------------------------------------------------------------------
    def _fork_later(self, session: Session, checkpoint: Checkpoint) -> None:
        """Where the agent offers `session/fork`, keep the agent's copy of the conversation as it
        is now, after this turn: the point a restore to before the next turn goes back to."""
        conn = self.hub.connection_of(session.agent or None)
        if conn is None or not conn.session_capability("fork"):
            return
        if not self.hub.settings.checkpoint_fork:
            return
        self._forks[session.id] = self.tasks.spawn(
            f"checkpoint-fork:{session.id}", self._fork(conn, session, checkpoint)
        )

    async def _fork(self, conn: Any, session: Session, checkpoint: Checkpoint) -> None:
        params = {
            "sessionId": session.id,
            "cwd": session.cwd,
            "mcpServers": list(self.hub.settings.mcp_servers),
        }
        try:
            with self.hub.router.expecting_sessions():
                result = await conn.request("session/fork", params)
        except Exception as exc:  # an agent that offers fork and fails it: no fork, no harm
            logger.warning("session/fork of %s failed: %s", session.id, exc)
            return
        fork_id = result.get("sessionId") if isinstance(result, dict) else None
        if isinstance(fork_id, str):
            checkpoint.fork_after = fork_id
            self._fork_conns[fork_id] = (conn, session.cwd, result)
            async with self._lock:
                self._save_quietly()

    async def _fork_settled(self, session_id: str) -> None:
        """A fork still running when the next prompt comes must not see that prompt."""
        task = self._forks.pop(session_id, None)
        if task is not None and not task.done():
            await asyncio.wait([task], timeout=FORK_WAIT_S)
            if not task.done():
                task.cancel()

    async def _open_fork(self, fork_id: str, agent: str | None) -> Session | None:
        """The fork as a session of the agent that made it (`agent`, None: the default): adopted
        when its process that made it still runs, else loaded (its conversation replayed to the
        editor) where the agent can."""
        made_by = self._fork_conns.get(fork_id)
        if made_by is not None and made_by[0].alive:
            return self.hub.adopt_session(fork_id, made_by[1], made_by[2], made_by[0])
        conn = await self.hub.agent(agent)
        if conn.session_capability("load") or conn.session_capability("resume"):
            try:
                return await self.hub.load_session(fork_id, agent=agent)
            except Exception as exc:  # the agent forgot it: fall back to the conversation as text
                logger.warning("cannot load the fork %s: %s", fork_id, exc)
        return None

    async def continue_from(self, checkpoint_id: Any) -> dict[str, Any]:
        """A session whose conversation is the one before the checkpoint's turn: the agent's fork
        made after the previous turn where there is one, else a new session that gets the earlier
        turns as context with its first prompt."""
        target = self.find(checkpoint_id)
        if target.session_id is None or target.turn is None:
            raise CommandError("only the checkpoint of a turn can be continued from")
        log = self.log()
        previous = log.previous_turn(target)
        agent = self._agent_of(target)
        if previous is None:  # before the first turn: nothing was said yet
            session = await self.hub.new_session(agent=agent)
            return _continued(session, "new", target.prompt)
        if previous.fork_after is not None:
            session = await self._open_fork(previous.fork_after, agent)
            if session is not None:
                return _continued(session, "fork", target.prompt)
        session = await self.hub.new_session(agent=agent)
        self._preambles[session.id] = conversation_context(log.history(target))
        return _continued(session, "context", target.prompt)

    def _agent_of(self, target: Checkpoint) -> str | None:
        """The agent a continuation of `target` goes to: the one whose session the turn was (held
        now, or recorded with the checkpoint, so a closed session or another acpls process still
        reaches it); None (the default agent) for checkpoints recorded before agents were.
        A recorded agent acpls cannot start by its name is an error naming it, never a silent
        switch to another agent."""
        origin = self.sessions.get(target.session_id or "")
        agent = (origin.agent if origin is not None else target.agent) or None
        if agent is None:
            return None
        try:
            self.hub.agent_spec(agent)
        except CommandError as exc:
            raise CommandError(
                f"turn {target.turn} was a session of the agent {agent}, which acpls cannot"
                f" start by that name ({exc}): start a session of it with acpls.newSession"
                ' {"agent": {...}} and continue again'
            ) from exc
        return agent

    def _save_quietly(self) -> None:
        try:
            self._save()
        except OSError as exc:
            logger.warning("cannot save the checkpoint log: %s", exc)

    async def _changed_paths(
        self, before: dict[str, FolderState], after: dict[str, FolderState]
    ) -> list[str]:
        paths: list[str] = []
        for root, old in before.items():
            new = after.get(root)
            if new is not None:
                changes = await self._effective_changes(root, old, new)
                paths += [posixpath.join(root, c.rel) for c in changes]
        return paths

    async def _effective_changes(
        self, root: str, current: FolderState, target: FolderState
    ) -> list[Change]:
        store = self._store(root)
        tree_changes = [
            (
                c.path,
                (c.old_mode, c.old_oid) if c.old_mode and c.old_oid else None,
                (c.new_mode, c.new_oid) if c.new_mode and c.new_oid else None,
            )
            for c in await store.changes(current.tree, target.tree)
        ]
        overlaid = sorted(set(current.unsaved) | set(target.unsaved))
        entries: dict[str, Any] = {}
        if overlaid:
            cur = await store.entries(current.tree, overlaid)
            tgt = await store.entries(target.tree, overlaid)
            entries = {rel: (None, cur.get(rel), tgt.get(rel)) for rel in overlaid}
        return effective_changes(tree_changes, current, target, entries)

    # -- storage bounds --------------------------------------------------------------------------
    def _schedule_prune(self) -> None:
        """After a turn: the store back within its limits, before the next turn starts (which
        waits for it). A prune already running prunes again once it is done: this turn's
        checkpoint came after it looked."""
        previous = self._pruning
        if previous is not None and not previous.done():
            self._pruning = self.tasks.spawn("checkpoints-prune", self._prune_after(previous))
        else:
            self._pruning = self.tasks.spawn("checkpoints-prune", self._prune())

    async def _prune_after(self, previous: asyncio.Task[Any]) -> None:
        await asyncio.wait([previous])
        await self._prune()

    async def _prune_settled(self) -> None:
        task = self._pruning
        if task is not None and not task.done():
            await asyncio.wait([task])

    async def _prune(self) -> None:
        """`maxCount` checkpoints at most, each store packed and within `maxStorageBytes`: the
        oldest checkpoints go (half of them at a time) until it is, the newest always stays.
        The objects of what was dropped are freed now, not minutes later."""
        settings = self.hub.settings
        limit = settings.checkpoint_max_storage_bytes
        log = self.log()
        roots = self._roots()
        dropped = await self._drop_unused(log.prune(settings.checkpoint_max_count))
        for root in roots:
            await self._pack(root, prune=root in dropped)
        while over := [r for r in roots if await self._storage_bytes(r) > limit]:
            removed = log.prune(max(len(log.items) // 2, 1))
            if not removed:
                logger.warning(
                    "the newest checkpoint alone takes more than checkpoints.maxStorageBytes"
                    " (%d bytes) in %s",
                    limit,
                    over[0],
                )
                return
            for root in await self._drop_unused(removed):
                await self._pack(root, prune=True)

    async def _pack(self, root: str, *, prune: bool) -> None:
        try:
            await self._store(root).pack(prune=prune)
        except (SnapshotError, OSError) as exc:
            logger.warning("cannot pack the checkpoints of %s: %s", root, exc)

    async def _storage_bytes(self, root: str) -> int:
        return await asyncio.to_thread(self._store(root).storage_bytes)

    async def _drop_unused(self, removed: list[Checkpoint]) -> set[str]:
        """Forget the refs of the trees only `removed` kept; returns the folders that had some."""
        if not removed:
            return set()
        in_use = self.log().trees_in_use()
        by_root: dict[str, list[str]] = {}
        for checkpoint in removed:
            for root, tree in checkpoint.trees():
                if (root, tree) not in in_use:
                    by_root.setdefault(root, []).append(tree)
        async with self._lock:
            self._save_quietly()
        for root, trees in by_root.items():
            try:
                await self._store(root).drop(trees)
            except (SnapshotError, OSError) as exc:
                logger.warning("cannot drop old checkpoints of %s: %s", root, exc)
        return set(by_root)

    # -- commands --------------------------------------------------------------------------------
    def listing(self, session_id: str | None) -> list[dict[str, Any]]:
        return self.log().listing(session_id)

    def transcript_lenses(self, path: str, text: str | None) -> list[dict[str, Any]]:
        """Restore and continue lenses (LSP JSON) on the prompts of a session's transcript at
        `path` (generic editors); `text` is the editor's buffer, else the file is read."""
        session_id = self.hub.router.session_of_transcript(path)
        if session_id is None:
            return []
        if text is None:
            try:
                text = Path(path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                return []
        return lenses(text, self.listing(session_id))

    def find(self, checkpoint_id: Any) -> Checkpoint:
        checkpoint = self.log().get(checkpoint_id) if isinstance(checkpoint_id, str) else None
        if checkpoint is None:
            raise CommandError(f"unknown checkpoint {checkpoint_id!r}")
        return checkpoint

    async def restore(
        self, checkpoint_id: Any, preview: bool, include_unsaved: list[str]
    ) -> dict[str, Any]:
        await self._prune_settled()  # the target is not dropped under the restore's feet
        target = self.find(checkpoint_id)
        busy = [s.id for s in self.sessions.values() if s.turn is not None]
        if busy:
            raise CommandError(f"a turn is running in session {busy[0]}: cancel it first")
        label = f"Restore to before turn {target.turn}: {target.title()}"
        if target.turn is None:
            label = f"Restore to before: {target.title()}"
        async with self._lock:
            current = await self._snapshot()
            if current is None:
                raise CommandError(
                    "the workspace cannot be recorded, so it is not restored", -32603
                )
            undo = Checkpoint(
                id=self._new_id(),
                session_id=target.session_id,
                turn=None,
                prompt=label,
                time=_now(),
                folders=current,
            )
            self.log().add(undo)
            self._save_quietly()
            plan = await self._plan(target, current, set(include_unsaved), preview)
        result = await self._carry_out(plan, label, preview)
        async with self._lock:
            undo.files = result["restored"]
            self._save_quietly()
        result["checkpoint"] = undo.id
        result["prompt"] = target.prompt
        return result

    async def _plan(
        self,
        target: Checkpoint,
        current: dict[str, FolderState],
        include_unsaved: set[str],
        preview: bool,
    ) -> RestorePlan:
        plan = RestorePlan()
        for root, target_state in target.folders.items():
            now = current.get(root)
            if now is None:
                plan.skip(root, "this workspace folder is not open")
                continue
            store = self._store(root)
            changes = await self._effective_changes(root, now, target_state)
            oids = [e[1] for c in changes for e in (c.current, c.target) if e is not None]
            blobs = await store.blobs(oids)
            outside = frozenset(
                c.rel for c in changes if not inside(root, posixpath.join(root, c.rel))
            )
            plan_restore(
                root,
                changes,
                blobs,
                now,
                target_state,
                include_unsaved=include_unsaved,
                preview=preview,
                outside=outside,
                plan=plan,
            )
        return plan

    async def _carry_out(self, plan: RestorePlan, label: str, preview: bool) -> dict[str, Any]:
        restored: list[str] = []
        skipped = list(plan.skipped)
        if plan.document_changes:
            edit = workspace_edit(plan, label, preview)
            applied, reason = await self.editor.apply_edit(edit, label)
            if not applied:
                why = f"the editor did not apply the edit: {reason or 'declined'}"
                skipped += [{"path": p, "reason": why} for p in plan.edited]
                skipped += [{"path": op.path, "reason": why} for op in plan.disk]
                return {"restored": [], "skipped": skipped}
            restored += plan.edited
        for op in plan.disk:
            roots = [r for r in self._roots() if op.path.startswith(r.rstrip("/") + "/")]
            failure = (
                await asyncio.to_thread(apply_disk_op, roots[0], op.kind, op.path, op.data, op.mode)
                if roots
                else "the path leaves the workspace"
            )
            if failure is None:
                restored.append(op.path)
            else:
                skipped.append({"path": op.path, "reason": failure})
        done = set(restored) - {s["path"] for s in skipped}
        return {"restored": [p for p in dict.fromkeys(restored) if p in done], "skipped": skipped}

    async def diff(self, checkpoint_id: Any) -> dict[str, Any]:
        """What restoring `checkpoint_id` would change now, as unified diffs (nothing applied)."""
        await self._prune_settled()
        target = self.find(checkpoint_id)
        async with self._lock:
            current = await self._snapshot()
            if current is None:
                raise CommandError("the workspace cannot be recorded", -32603)
            files: list[dict[str, Any]] = []
            for root, target_state in target.folders.items():
                now = current.get(root)
                if now is None:
                    continue
                changes = await self._effective_changes(root, now, target_state)
                oids = [e[1] for c in changes for e in (c.current, c.target) if e is not None]
                blobs = await self._store(root).blobs(oids)
                files += [restore_diff(root, c, blobs) for c in changes]
            await self._forget_unused(current)
        return {"files": files}

    async def _forget_unused(self, folders: dict[str, FolderState]) -> None:
        in_use = self.log().trees_in_use()
        for root, state in folders.items():
            unused = [t for t in state.trees() if (root, t) not in in_use]
            if unused:
                await self._store(root).drop_unlocked(unused)

    async def aclose(self) -> None:
        forks, self._forks = list(self._forks.values()), {}
        for fork in forks:
            fork.cancel()
        await asyncio.gather(*forks, return_exceptions=True)
        task, self._pruning = self._pruning, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")
