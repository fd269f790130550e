"""Every way a session ends goes through one close (issue 17): only core/sessions.py
(`SessionRegistry`) adds a session to or removes one from the session map; everyone else holds
a read-only view of it (hub.sessions, SessionAdmin.sessions, ...). Read from the source with
`ast`, so a controller that drops a session itself (skipping the closers: its terminals, review
state, pending questions stay behind) fails here. tests/e2e/test_session_close.py checks what
each way of ending leaves."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "acpls"
OWNER = PACKAGE / "core" / "sessions.py"
MAPS = {"sessions", "by_id"}
MUTATORS = {"pop", "popitem", "clear", "update", "setdefault", "__setitem__", "__delitem__"}
# Not acpls' own session map: the demo agent's sessions, the terminal store's per-session table.
OTHERS = {PACKAGE / "demo" / "agent.py", PACKAGE / "translate" / "terminals.py"}


def _is_map(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in MAPS


def mutations(source: str) -> list[int]:
    """Lines that add to, remove from or clear a `.sessions` / `.by_id` map."""
    found = []
    for node in ast.walk(ast.parse(source)):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = list(node.targets) if isinstance(node, ast.Assign) else [node.target]
        elif isinstance(node, ast.Delete):
            targets = list(node.targets)
        if any(isinstance(t, ast.Subscript) and _is_map(t.value) for t in targets):
            found.append(targets[0].lineno)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in MUTATORS
            and _is_map(node.func.value)
        ):
            found.append(node.lineno)
    return sorted(found)


def test_only_the_registry_adds_or_removes_sessions() -> None:
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == OWNER or path in OTHERS:
            continue
        bad += [f"{path.relative_to(PACKAGE)}:{line}" for line in mutations(path.read_text())]
    assert not bad, "sessions added or removed outside SessionRegistry: " + ", ".join(bad)


def test_the_registry_itself_is_seen_mutating() -> None:
    """The check can fail: the owner's own adds and removes are found."""
    assert len(mutations(OWNER.read_text())) >= 2
    assert mutations("self.hub.sessions.pop(sid)\ndel hub.sessions[sid]\nx.by_id[k] = s\n") == [
        1,
        2,
        3,
    ]
