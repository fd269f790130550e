"""The checkpoint store on disk (editors/protocol.md section 11, "The store"), through the real
acpls: within `maxCount` and `maxStorageBytes` after every turn (pruned at once, before the next
turn starts), packed (≤ 1.5x the bytes of the files it holds), private (folders 0700, files 0600
or read-only 0400: another user reads nothing, not the copy of a `.env`), an older store migrated
on first use, and turn numbers that are never used twice in a session."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from bench.checkpoint_store import make_files
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from acpls.services.snapshots import store_dir_for
from tests.e2e.checkpoint_support import apply_on_disk, folder_state
from tests.e2e.conftest import SERVER, command, make_client, scripted, start, stop_client
from tests.e2e.test_checkpoints import editor as editor
from tests.e2e.test_checkpoints import run_command, say

SETTLE_S = 60.0
SECRET = "API_KEY=sk-live-5e3f9a1c7b2d4e6f"


def du(path: Path) -> int:
    """Bytes on disk as `du` counts them (the allocated blocks of every folder and file; one
    that a repack removes as it is counted is not)."""
    total = 0
    for folder, _dirs, files in os.walk(path):
        for entry in [folder, *(os.path.join(folder, name) for name in files)]:
            with contextlib.suppress(FileNotFoundError):
                total += os.lstat(entry).st_blocks * 512
    return total


def store_of(state_dir: Path, workspace: Path) -> Path:
    return store_dir_for(state_dir / "acpls", str(workspace))


async def eventually(condition: Any, what: str | Callable[[], str]) -> None:
    """Poll `condition()` (the prune runs as the turn's result goes out) until it holds; it may
    be a coroutine function."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SETTLE_S
    while True:
        held = condition()
        if asyncio.iscoroutine(held):
            held = await held
        if held:
            return
        assert loop.time() < deadline, f"never: {what() if callable(what) else what}"
        await asyncio.sleep(0.05)


def loose_objects(store: Path) -> list[Path]:
    return list((store / "git" / "objects").glob("[0-9a-f][0-9a-f]"))


def open_modes(root: Path) -> list[str]:
    """Every folder under `root` that is not 0700 and every file that is not the owner's 0600
    (or 0400: git's objects and packs are read-only). A file git removes meanwhile is skipped."""
    bad: list[str] = []
    for folder, _dirs, files in os.walk(root):
        for path, wanted in [(folder, (0o700,))] + [
            (os.path.join(folder, name), (0o600, 0o400)) for name in files
        ]:
            try:
                mode = stat.S_IMODE(os.lstat(path).st_mode)
            except FileNotFoundError:
                continue
            if mode not in wanted:
                bad.append(f"{path} {mode:o}")
    return bad


def random_file_turn(workspace: Path, size: int, seen: Path) -> list[dict[str, Any]]:
    """A turn that first records what the agent finds in the store as the turn starts (its size
    and log, into `seen`), then rewrites `big.txt` with `size` random bytes (as base64: no
    delta, little compression), so every turn adds that much to the store."""
    store = seen.parent / "state" / "acpls" / "checkpoints"
    record = (
        f"du -s -B1 {store}/* | cut -f1 > '{seen}.du'; cp {store}/*/checkpoints.json '{seen}.log'"
    )
    return [
        *run_command(f"{record}; head -c {size} /dev/urandom | base64 > '{workspace}/big.txt'"),
        say("rewrote big.txt"),
    ]


async def test_store_within_max_count_and_storage_after_every_turn(
    editor: LanguageClient,
    workspace: Path,
    tmp_path: Path,
    state_dir: Path,
) -> None:
    make_files(workspace, 1000)
    limit, max_count = 2_500_000, 3
    # Five turns of 300 KB: maxCount binds. Then 700 KB each: three checkpoints would hold four
    # versions (2.8 MB), so maxStorageBytes binds and older checkpoints go.
    sizes = [300_000] * 5 + [700_000] * 3
    seen = [tmp_path / f"seen-{n}" for n in range(1, len(sizes) + 1)]
    turns = [random_file_turn(workspace, size, at) for size, at in zip(sizes, seen, strict=True)]
    agent = scripted({"protocol": 1, "on_prompt": turns}, tmp_path / "a.log")
    await start(
        editor, workspace, agent, checkpoints={"maxCount": max_count, "maxStorageBytes": limit}
    )
    store = store_of(state_dir, workspace)
    sid: str | None = None
    before_last: dict[str, Any] = {}
    # One prompt after the other, as fast as the editor can: the prune after a turn is done
    # before the next turn starts, which is when the agent looks.
    for n in range(1, len(sizes) + 1):
        before_last = folder_state(workspace)
        params = {"text": f"turn {n}"} | ({"sessionId": sid} if sid else {})
        sid = (await command(editor, "acpls.prompt", params))["sessionId"]
    for n, at in enumerate(seen[1:], start=2):
        # What the agent saw: the previous turns' checkpoints within the limits, this turn's new.
        size = int(Path(f"{at}.du").read_text())
        log = json.loads(Path(f"{at}.log").read_text())["checkpoints"]
        turns_logged = [c["turn"] for c in log]
        assert size <= limit, f"turn {n} started with a store of {size} bytes"
        assert len(log) - 1 <= max_count, f"turn {n} started with {turns_logged}"
        assert turns_logged == sorted(set(turns_logged)) and turns_logged[-1] == n

    async def settled() -> bool:
        listing = await command(editor, "acpls.checkpoints", {})
        return du(store) <= limit and len(listing) <= max_count and not loose_objects(store)

    await eventually(settled, lambda: f"{du(store)} bytes, loose {loose_objects(store)[:3]}")
    listing = await command(editor, "acpls.checkpoints", {})
    # The storage limit bound: fewer checkpoints than maxCount were left.
    assert [c["turn"] for c in listing] == list(range(len(sizes), len(sizes) - len(listing), -1))
    assert len(listing) < max_count
    assert open_modes(state_dir / "acpls" / "checkpoints") == []
    # What was kept restores exactly: the newest checkpoint is the workspace before the last turn.
    restored = await command(editor, "acpls.restoreCheckpoint", {"id": listing[0]["id"]})
    assert restored["skipped"] == []
    assert folder_state(workspace) == before_last


async def test_store_of_small_files_is_packed_within_one_and_a_half_times_their_bytes(
    editor: LanguageClient,
    workspace: Path,
    tmp_path: Path,
    state_dir: Path,
) -> None:
    data = make_files(workspace, 5000) + sum(
        p.stat().st_size for p in workspace.iterdir() if p.is_file()
    )
    agent = scripted({"protocol": 1, "on_prompt": [[say("nothing")]]}, tmp_path / "a.log")
    await start(editor, workspace, agent)
    await command(editor, "acpls.prompt", {"text": "one"})
    store = store_of(state_dir, workspace)
    await eventually(
        lambda: du(store) <= 1.5 * data and not loose_objects(store),
        f"the store ({du(store)} B) packed within 1.5 x {data} B",
    )


async def test_turn_numbers_are_never_reused_across_restarts_and_loads(
    editor: LanguageClient,
    workspace: Path,
    tmp_path: Path,
    server_env: dict[str, str],
) -> None:
    script = {
        "protocol": 1,
        "on_initialize": {"agentCapabilities": {"loadSession": True}},
        "on_new_session": {"sessionId": "first"},
        "on_prompt": [[say("ok")]],
    }
    # maxCount 2: pruning removes the session's oldest turns as it goes.
    bounds = {"maxCount": 2}
    await start(editor, workspace, scripted(script, tmp_path / "a.log"), checkpoints=bounds)
    await command(editor, "acpls.prompt", {"text": "t0"})
    for n in range(1, 3):
        await command(editor, "acpls.prompt", {"sessionId": "first", "text": f"t{n}"})
    first = await command(editor, "acpls.checkpoints", {"sessionId": "first"})
    assert [c["turn"] for c in first] == [3, 2]
    await stop_client(editor)

    # acpls again on the same state: the session loaded again continues its numbers; a new
    # session starts at 1.
    async with fresh_editor(server_env) as again:
        script["on_new_session"] = {"sessionId": "second"}
        await start(again, workspace, scripted(script, tmp_path / "b.log"), checkpoints=bounds)
        await command(again, "acpls.loadSession", {"sessionId": "first"})
        await command(again, "acpls.prompt", {"sessionId": "first", "text": "t3"})
        await command(again, "acpls.prompt", {"sessionId": "first", "text": "t4"})
        second = await command(again, "acpls.newSession", {})
        assert second["sessionId"] == "second"
        await command(again, "acpls.prompt", {"sessionId": "second", "text": "other"})
        await command(again, "acpls.prompt", {"sessionId": "first", "text": "t5"})
        listing = await command(again, "acpls.checkpoints", {"sessionId": "first"})
        assert [c["turn"] for c in listing] == [6]
        assert [c["turn"] for c in await command(again, "acpls.checkpoints", {})] == [6, 1]


@contextlib.asynccontextmanager
async def fresh_editor(env: dict[str, str]) -> AsyncIterator[LanguageClient]:
    """Another editor and acpls (on the state folder `env` names) that applies edits to disk."""
    config = ClientServerConfig(server_command=SERVER, client_factory=make_client, server_env=env)
    client = await config.start()
    assert isinstance(client, LanguageClient)

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        apply_on_disk(client.protocol._converter.unstructure(params.edit))
        return types.ApplyWorkspaceEditResult(applied=True)

    try:
        yield client
    finally:
        await stop_client(client)


def make_old_store(state_dir: Path, workspace: Path) -> tuple[Path, str]:
    """A store as an older acpls left it: loose objects, 0755 folders, 0644 files, a log without
    `lastTurns`. Returns the store and its tree."""
    store = store_of(state_dir, workspace)
    store.mkdir(parents=True)
    env = {
        **os.environ,
        "GIT_DIR": str(store / "git"),
        "GIT_INDEX_FILE": str(store / "index"),
        "GIT_WORK_TREE": str(workspace),
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=workspace, env=env, check=True, capture_output=True, text=True
        ).stdout.strip()

    git("init", "-q")
    git("add", "-A")
    tree = git("write-tree")
    git("update-ref", f"refs/acpls/{tree}", tree)
    (store / "folder").write_text(f"{workspace}\n")
    folders = {str(workspace): {"tree": tree, "unsaved": {}, "unsaved_tree": None}}
    old = {"id": "old-1", "sessionId": "old-session", "turn": 7, "prompt": "old turn"}
    log = {"version": 1, "checkpoints": [old | {"time": "2026-01-01", "folders": folders}]}
    (store / "checkpoints.json").write_text(json.dumps(log))
    for folder, _dirs, files in os.walk(state_dir):
        os.chmod(folder, 0o755)
        for name in files:
            path = Path(folder, name)
            os.chmod(path, 0o444 if "objects" in path.parts else 0o644)
    return store, tree


async def test_old_store_is_migrated_and_made_private_on_first_use(
    editor: LanguageClient,
    workspace: Path,
    tmp_path: Path,
    state_dir: Path,
) -> None:
    (workspace / ".env").write_text(SECRET + "\n")
    make_files(workspace, 200)
    before = folder_state(workspace)
    store, _tree = make_old_store(state_dir, workspace)
    assert loose_objects(store)
    assert open_modes(store)

    script = {
        "protocol": 1,
        "on_initialize": {"agentCapabilities": {"loadSession": True}},
        "on_prompt": [[*run_command("rm .env; echo changed > pkg00/mod0.py"), say("done")]],
    }
    await start(editor, workspace, scripted(script, tmp_path / "a.log"))
    # The old log is read: its checkpoint is listed.
    listing = await command(editor, "acpls.checkpoints", {})
    assert [(c["id"], c["turn"]) for c in listing] == [("old-1", 7)]
    # The old session continues its numbers.
    await command(editor, "acpls.loadSession", {"sessionId": "old-session"})
    await command(editor, "acpls.prompt", {"sessionId": "old-session", "text": "next"})
    listing = await command(editor, "acpls.checkpoints", {"sessionId": "old-session"})
    assert [c["turn"] for c in listing] == [8, 7]
    # Narrowed, and its loose objects packed, once the turn's prune ran.
    await eventually(
        lambda: not loose_objects(store),
        "the old loose objects packed",
    )
    assert open_modes(store) == []
    # The old checkpoint restores exactly from the packed store.
    restored = await command(editor, "acpls.restoreCheckpoint", {"id": "old-1"})
    assert restored["skipped"] == []
    assert folder_state(workspace) == before


@pytest.fixture
def exposed_state_dir() -> Iterator[Path]:
    """A state folder another user can reach, as `~/.local/state` in a 0755 home is (pytest's own
    temporary folders are 0700, which would hide the store whatever its modes)."""
    home = Path(tempfile.mkdtemp(prefix="acpls-home-", dir="/tmp"))
    os.chmod(home, 0o755)
    # acpls' folder as an older acpls made it: only the store's own modes stand in the way.
    (home / "state" / "acpls").mkdir(parents=True)
    for folder in (home / "state", home / "state" / "acpls"):
        os.chmod(folder, 0o755)
    yield home / "state"
    shutil.rmtree(home, ignore_errors=True)


def read_as_other_user(store: Path) -> str:
    """What another local user gets out of the store: every object git can read there (as
    `nobody`: `git cat-file --batch-all-objects`) and every file's bytes. As root the attack
    runs as uid 65534; otherwise another user's access is what the mode bits give them."""
    if os.geteuid() != 0:
        return "\n".join(
            Path(folder, name).read_text(errors="replace")
            for folder, _dirs, files in os.walk(store)
            for name in files
            if os.lstat(os.path.join(folder, name)).st_mode & 0o004
        )
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    env = {"PATH": os.environ["PATH"], "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1"}
    cat_all = "git -c safe.directory='*' cat-file --batch-all-objects --batch"
    files = f"find '{store}' -type f -exec cat {{}} + 2>/dev/null"
    script = f"cd / && GIT_DIR='{store}/git' {cat_all} 2>/dev/null; {files}"
    out = subprocess.run([*nobody, "sh", "-c", script], capture_output=True, env=env)
    return out.stdout.decode("utf-8", "replace")


async def test_another_user_cannot_read_the_checkpoint_copy_of_a_private_file(
    workspace: Path,
    tmp_path: Path,
    exposed_state_dir: Path,
    server_env: dict[str, str],
) -> None:
    (workspace / ".env").write_text(SECRET + "\n")
    os.chmod(workspace / ".env", 0o600)
    async with fresh_editor(server_env | {"XDG_STATE_HOME": str(exposed_state_dir)}) as user:
        agent = scripted({"protocol": 1, "on_prompt": [[say("ok")]]}, tmp_path / "a.log")
        await start(user, workspace, agent)
        await command(user, "acpls.prompt", {"text": f"remember {SECRET}"})
        store = store_of(exposed_state_dir, workspace)
        # The attack works on what the store holds: as root it reads the secret there.
        everything = subprocess.run(
            ["git", "--git-dir", str(store / "git"), "cat-file", "--batch-all-objects", "--batch"],
            capture_output=True,
            check=True,
        ).stdout
        assert SECRET.encode() in everything
        assert SECRET not in read_as_other_user(store)
        assert open_modes(exposed_state_dir / "acpls" / "checkpoints") == []
