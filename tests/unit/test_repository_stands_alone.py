"""The repository stands alone: no tracked file points outside it, and the ACP schemas it vendors
are where the tests read them (a plain clone with nothing beside it passes every test)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "editors" / "acp-schema"

# Names of places outside the repository that files once pointed at (a sibling `shared` folder,
# the machine the project started on, the contract file that now lives in editors/protocol.md).
OUTSIDE = re.compile(
    r"\.\./shared|/work/|shared/(acp-schema|design|spec|notes)|editor-contract\.md"
)


def tracked_text_files() -> list[Path]:
    names = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True
    ).stdout.split(b"\0")
    files = []
    for name in names:
        path = ROOT / name.decode()
        if name and path.is_file() and path.suffix not in {".json", ".png", ".svg", ".gif"}:
            files.append(path)
    return files


def test_no_tracked_file_refers_outside_the_repository() -> None:
    this = Path(__file__).resolve()
    offenders = []
    for path in tracked_text_files():
        if path.resolve() == this:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []


def test_vendored_schemas_have_source_version_and_licence() -> None:
    source = (SCHEMAS / "SOURCE.txt").read_text(encoding="utf-8")
    assert re.search(r"@agentclientprotocol/sdk \d+\.\d+\.\d+", source)
    assert "Apache-2.0" in source
    assert "Apache License" in (SCHEMAS / "LICENSE").read_text(encoding="utf-8")
    for version in ("v1", "v2"):
        for name in ("schema.json", "schema.unstable.json"):
            schema = json.loads((SCHEMAS / version / name).read_text(encoding="utf-8"))
            assert "ClientRequest" in schema["$defs"], (version, name)


def test_protocol_md_carries_every_contract_section() -> None:
    text = (ROOT / "editors" / "protocol.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (\d+)\. ", text, flags=re.MULTILINE)
    assert [int(n) for n in headings][:9] == list(range(1, 10))
    for needed in (
        "acpls/elicitation",
        "acpls.checkpoints",
        "acpls.restoreCheckpoint",
        "Front ends",
    ):
        assert needed in text
