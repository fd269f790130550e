"""The package's import graph, read from the source with `ast`: no cycles, and the layers hold as
README.md states them (`translate/` and `state/` are pure; `core/` never sees pygls).

Every import counts, including those inside functions and under `TYPE_CHECKING`: a back-import
that only the type checker follows is still two modules that know each other.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "acpls"

# layer (module prefix) -> module prefixes it must not import
FORBIDDEN = {
    "acpls.translate": (
        "pygls",
        "lsprotocol",
        "acpls.acp.transport",
        "acpls.acp.connection",
        "acpls.acp.process",
        "acpls.core",
        "acpls.editor",
        "acpls.server",
        "acpls.services",
    ),
    "acpls.state": (
        "pygls",
        "lsprotocol",
        "acpls.acp.transport",
        "acpls.acp.connection",
        "acpls.acp.process",
        "acpls.core",
        "acpls.editor",
        "acpls.server",
        "acpls.services",
    ),
    "acpls.core": (
        "pygls",
        "lsprotocol",
        # Error types and codes come from acp/errors.py, the small module both sides import.
        "acpls.acp.transport",
        "acpls.server",
        "acpls.editor.port",
        "acpls.editor.stdio",
    ),
    "acpls.acp": ("acpls.core", "acpls.editor", "acpls.server"),
    "acpls.services": ("acpls.core", "acpls.editor", "acpls.server"),
    # Settings sit below core/: the agent catalog that resolves a registry id is handed in.
    "acpls.settings": ("acpls.core", "acpls.services", "acpls.editor", "acpls.server"),
    "acpls.editor": ("acpls.server",),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """Modules `name` imports: `from a.b import c` is `a.b.c` when that is a module, else `a.b`."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                found.add(candidate if candidate in known else base)
    return found


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {
        name: {m for m in imports_of(name, path, known) if m in known and m != name}
        for name, path in mods.items()
    }


def external_imports() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports_of(name, path, set(mods)) for name, path in mods.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """A cycle as a list of modules (first == last), or None. Packages' `__init__` modules are
    left out: importing `a.b.c` runs `a/__init__` and `a/b/__init__`, which import nothing."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)) is not None:
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(edges):
        if start not in state and (cycle := visit(start)) is not None:
            return cycle
    return None


def test_the_package_has_no_import_cycle() -> None:
    cycle = find_cycle(graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layers_import_only_what_the_readme_allows(layer: str) -> None:
    bad = []
    for name, imported in external_imports().items():
        if name != layer and not name.startswith(layer + "."):
            continue
        for target in imported:
            for banned in FORBIDDEN[layer]:
                if target == banned or target.startswith(banned + "."):
                    bad.append(f"{name} imports {target}")
    assert not bad, "\n".join(sorted(bad))


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The check itself can fail: a made-up graph with a cycle is reported."""
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(edges) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_graph_sees_function_level_and_type_checking_imports() -> None:
    edges = graph()
    assert "acpls.core.ports" in edges["acpls.core.hub"]
    assert edges, "no modules found"


def nested_imports(source: str) -> list[int]:
    """Lines of imports inside a function or class: a module's needs hidden from its head (the
    function-local imports core/ once used to dodge its cycles). `if TYPE_CHECKING:` blocks at
    module level are the head too."""
    tree = ast.parse(source)
    top = {id(n) for n in tree.body}
    for node in tree.body:
        if isinstance(node, ast.If):
            top.update(id(n) for n in node.body)
    return sorted(
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom) and id(n) not in top
    )


def test_core_imports_at_the_head_of_its_modules() -> None:
    bad = [
        f"{path.relative_to(PACKAGE)}:{line}"
        for path in sorted((PACKAGE / "core").rglob("*.py"))
        for line in nested_imports(path.read_text(encoding="utf-8"))
    ]
    assert not bad, "imports inside functions in core/: " + ", ".join(bad)


def test_the_nested_import_finder_finds_one() -> None:
    source = (
        "import os\nif TYPE_CHECKING:\n    import x\n"
        "def f():\n    from acpls.core.routing import _slice_lines\n"
    )
    assert nested_imports(source) == [5]


def module_instances(source: str) -> list[str]:
    """Module-level objects made from the package's own classes (`EDITOR_OUTPUT = FlowGate()`):
    state every importer shares, where it should be passed to whoever uses it."""
    tree = ast.parse(source)
    classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("acpls"):
            classes.update(a.asname or a.name for a in node.names if a.name[:1].isupper())
    return [
        ast.unparse(node)
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id in classes
    ]


def test_no_module_holds_an_instance_of_the_packages_classes() -> None:
    bad = [
        f"{path.relative_to(PACKAGE)}: {found}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for found in module_instances(path.read_text(encoding="utf-8"))
    ]
    assert not bad, "module-level state (pass it in instead): " + "; ".join(bad)


def test_the_module_instance_finder_finds_the_old_editor_pipe() -> None:
    source = (
        "from acpls.flow import FlowGate\nclass Gate: ...\nEDITOR_OUTPUT = FlowGate()\nG = Gate()\n"
    )
    assert module_instances(source) == ["EDITOR_OUTPUT = FlowGate()", "G = Gate()"]
    assert module_instances("import logging\nlogger = logging.getLogger(__name__)\n") == []


def readme_layers() -> set[str]:
    """The modules and packages README.md's "How it works" box names, as module names."""
    readme = (PACKAGE.parents[1] / "README.md").read_text(encoding="utf-8")
    box = readme.split("## How it works", 1)[1].split("```", 2)[1]
    names = re.findall(r"^ │ (\w+)(/|\.py) ", box, flags=re.MULTILINE)
    return {f"acpls.{name}" for name, _ in names}


def test_the_readme_names_every_layer_the_rules_hold_and_only_real_ones() -> None:
    named = readme_layers()
    assert set(FORBIDDEN) <= named, sorted(set(FORBIDDEN) - named)
    assert named <= set(modules()), sorted(named - set(modules()))
