"""`make update-registry` (acpls/registry/update.py) against a registry served on 127.0.0.1: the
snapshot, its date and its source are rewritten together; a document that is not a registry (or
lists no readable agent) is refused and nothing changes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from acpls.registry import update

PACKAGE = Path(update.__file__).resolve().parent
FILES = ("snapshot.json", "bundled.py", "SNAPSHOT.md")


@pytest.fixture
def package_copy(tmp_path: Path) -> Path:
    for name in FILES:
        shutil.copy(PACKAGE / name, tmp_path / name)
    return tmp_path


def _run(url: str, into: Path, date: str = "2026-12-05") -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "acpls.registry.update", "--url", url, "--date", date]
    return subprocess.run([*argv, "--into", str(into)], capture_output=True, text=True, timeout=60)


def test_the_snapshot_its_date_and_its_source_are_refreshed(served, package_copy: Path):
    url = served.url("registry.json")
    done = _run(url, package_copy)
    assert done.returncode == 0, done.stderr
    assert json.loads((package_copy / "snapshot.json").read_text()) == json.loads(
        served.files["/registry.json"]
    )
    bundled = (package_copy / "bundled.py").read_text()
    assert 'SNAPSHOT_DATE = "2026-12-05"' in bundled
    assert f'SNAPSHOT_SOURCE = "{url}"' in bundled
    compile(bundled, "bundled.py", "exec")
    notes = (package_copy / "SNAPSHOT.md").read_text()
    assert (
        f"- Source: {url} (the published registry, fetched by `make update-registry`).\n" in notes
    )
    assert "- Date of the snapshot: 2026-12-05.\n" in notes
    assert "- Licence: Apache License 2.0" in notes  # the rest is kept
    assert "snapshot of 2026-12-05:" in done.stderr


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        ({"agents": "nope"}, "is not an ACP registry"),
        ({"version": "1.0.0", "agents": [{"id": 3}]}, "lists no agent acpls can read"),
    ],
)
def test_a_document_that_is_no_registry_changes_nothing(
    served, package_copy: Path, document, reason
):
    served.set_registry(document)
    before = {name: (package_copy / name).read_bytes() for name in FILES}
    done = _run(served.url("registry.json"), package_copy)
    assert done.returncode == 1
    assert reason in done.stderr and "Traceback" not in done.stderr
    assert {name: (package_copy / name).read_bytes() for name in FILES} == before


def test_an_unreachable_registry_changes_nothing(package_copy: Path):
    before = (package_copy / "snapshot.json").read_bytes()
    done = _run("http://127.0.0.1:9/registry.json", package_copy)
    assert done.returncode == 1 and "cannot read the registry at http://127.0.0.1:9/" in done.stderr
    assert (package_copy / "snapshot.json").read_bytes() == before


def test_the_shipped_snapshot_date_is_what_snapshot_md_says():
    from acpls.registry.bundled import SNAPSHOT_DATE

    notes = (PACKAGE / "SNAPSHOT.md").read_text()
    assert f"- Date of the snapshot: {SNAPSHOT_DATE}." in notes
