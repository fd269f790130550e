"""Each controller of core/ is handed only what it uses (core/parts.py).

The shape is read from the source with `ast`: every constructor argument is kept and used, and
each small protocol a controller asks of the hub names exactly what the module uses of it (a
member nobody uses is a collaborator handed for nothing; pyright catches the reverse). Then
controllers are built and run with fakes of just those collaborators, no hub.
"""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path
from typing import Any, cast

import pytest

from acpls.acp.connection import AgentConnection
from acpls.core import ports
from acpls.core.errors import CommandError
from acpls.core.follow import FollowController
from acpls.core.parts import RouterPart
from acpls.core.review import ReviewController
from acpls.core.session import Session
from acpls.core.steering import STEER_METHOD, steer
from acpls.editor import messages as msg
from acpls.supervisor import TaskSupervisor
from acpls.translate.session_updates import SessionUpdateNormalizer

CORE = Path(__file__).resolve().parents[2] / "server" / "acpls" / "core"

# controller module -> (its class, or None for functions taking `hub`; its hub protocol, if any)
CONTROLLERS: dict[str, tuple[str | None, str | None]] = {
    "routing": ("UpdateRouter", "RoutingHub"),
    "agent_requests": ("AgentRequests", "RequestsHub"),
    "agent_processes": ("AgentProcesses", "ProcessesHub"),
    "review": ("ReviewController", None),
    "checkpoints": ("CheckpointController", "CheckpointsHub"),
    "elicitation": ("Questions", None),
    "session_admin": ("SessionAdmin", "SessionsHub"),
    "auth": ("SignIn", None),
    "mentions": (None, "MentionSources"),
    "steering": (None, "SteeringPart"),
}


def tree(module: str) -> ast.Module:
    return ast.parse((CORE / f"{module}.py").read_text(encoding="utf-8"))


def find_class(module: ast.Module, name: str) -> ast.ClassDef:
    found = [n for n in module.body if isinstance(n, ast.ClassDef) and n.name == name]
    assert found, f"no class {name}"
    return found[0]


def protocol_members(cls: ast.ClassDef) -> set[str]:
    return {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def is_hub(node: ast.expr) -> bool:
    """`hub` or `self.hub`: where a controller reaches what it asks of the hub."""
    if isinstance(node, ast.Name):
        return node.id == "hub"
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "hub"
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def hub_uses(module: ast.Module, protocol: str | None) -> set[str]:
    skip = find_class(module, protocol) if protocol else None
    used: set[str] = set()
    for node in ast.walk(module):
        if node is skip:
            continue
        if isinstance(node, ast.Attribute) and is_hub(node.value):
            used.add(node.attr)
    return used


def self_reads(cls: ast.ClassDef, outside: ast.AST) -> set[str]:
    skip = set(ast.walk(outside))
    return {
        n.attr
        for n in ast.walk(cls)
        if n not in skip
        and isinstance(n, ast.Attribute)
        and isinstance(n.value, ast.Name)
        and n.value.id == "self"
        and isinstance(n.ctx, ast.Load)
    }


@pytest.mark.parametrize("module", sorted(CONTROLLERS))
def test_controller_is_handed_only_what_it_uses(module: str) -> None:
    parsed = tree(module)
    class_name, protocol = CONTROLLERS[module]
    source = (CORE / f"{module}.py").read_text(encoding="utf-8")
    assert "acpls.core.hub" not in source, f"{module} imports the hub"
    declared = protocol_members(find_class(parsed, protocol)) if protocol else set()
    assert hub_uses(parsed, protocol) == declared, (
        f"{module}: what it uses of the hub differs from what {protocol} declares"
    )
    if class_name is None:
        return
    cls = find_class(parsed, class_name)
    init = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    params = [a.arg for a in init.args.args[1:] + init.args.kwonlyargs]
    kept = {
        t.attr: v.id
        for n in ast.walk(init)
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name)
        for t in n.targets
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
        for v in [n.value]
    }
    read = self_reads(cls, init)
    for param in params:
        attrs_of_param = [a for a, v in kept.items() if v == param]
        assert attrs_of_param, f"{class_name}.__init__ does not keep {param}"
        assert any(a in read for a in attrs_of_param), f"{class_name} never uses its {param}"
    if protocol is None:
        assert "hub" not in params


def test_the_shape_check_fails_on_a_collaborator_handed_for_nothing() -> None:
    """The check above can fail: a protocol member no code uses is reported."""
    module = ast.parse(
        "class P(Protocol):\n"
        "    def used(self) -> None: ...\n"
        "    def unused(self) -> None: ...\n"
        "def f(hub: P) -> None:\n"
        "    hub.used()\n"
    )
    assert hub_uses(module, "P") != protocol_members(find_class(module, "P"))


class ReviewEditor:
    """The part of the editor port review uses in this test, recording what it is told."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.sent: list[tuple[str, Any]] = []

    @property
    def custom_mode(self) -> bool:
        return True

    @property
    def workspace_roots(self) -> list[str]:
        return [self.root]

    def notify(self, method: str, params: Any) -> None:
        self.sent.append((method, params))

    def document_text(self, uri: str) -> str | None:
        return None


class NoBaselines:
    async def text_before_turn(self, session_id: str, path: str) -> tuple[bool, str | None]:
        return False, None


def session(session_id: str = "s1") -> Session:
    return Session(id=session_id, cwd="/", normalizer=SessionUpdateNormalizer(1), agent="a")


async def test_review_runs_on_its_own_collaborators(tmp_path: Path) -> None:
    editor = ReviewEditor(str(tmp_path))
    port = cast(ports.EditorPort, editor)
    tasks = TaskSupervisor("test")
    s = session()
    review = ReviewController(
        port, {s.id: s}, tasks, FollowController(port, tasks), baselines=NoBaselines()
    )
    path = str(tmp_path / "a.py")
    review.before_write(s, path, "old\n")
    review.after_write(path, "new\n")
    changes = [p for m, p in editor.sent if m == msg.CHANGES]
    assert len(changes) == 1
    assert isinstance(changes[0], msg.ChangesParams)
    assert path in repr(changes[0])
    await review.aclose()
    await tasks.aclose()


class SteerConn:
    def __init__(self, can_steer: bool) -> None:
        self.can_steer = can_steer
        self.requests: list[tuple[str, Any]] = []

    async def request(self, method: str, params: Any) -> Any:
        self.requests.append((method, params))
        return {"outcome": "startedNewTurn"}


class SteerRouter:
    def prompt_blocks(
        self, conn: AgentConnection, text: str, context: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        return [{"type": "text", "text": text}]


class SteeringFake:
    def __init__(self, conn: SteerConn) -> None:
        self.conn = conn
        self.held = session()

    @property
    def router(self) -> RouterPart:
        return cast(RouterPart, SteerRouter())

    def session(self, session_id: Any) -> Session | None:
        assert session_id == self.held.id
        return self.held

    async def agent_of(self, session: Session) -> AgentConnection:
        return cast(AgentConnection, self.conn)


async def test_steering_runs_on_its_own_collaborators() -> None:
    fake = SteeringFake(SteerConn(can_steer=True))
    out = await steer(fake, "s1", "go left", [])
    assert out == {"sessionId": "s1", "outcome": "startedNewTurn"}
    [(method, params)] = fake.conn.requests
    assert method == STEER_METHOD
    assert params["prompt"] == [{"type": "text", "text": "go left"}]
    refusing = SteeringFake(SteerConn(can_steer=False))
    with pytest.raises(CommandError):
        await steer(refusing, "s1", "go left", [])
    assert refusing.conn.requests == []
    await asyncio.sleep(0)
