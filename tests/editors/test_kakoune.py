"""Kakoune 2022.10 (Debian) with editors/kakoune/acpls.kak.

kakoune-lsp is not packaged in Debian, nor on PyPI or npm, so it cannot run here. These tests run
the configuration in a real headless Kakoune where kakoune-lsp's `lsp_servers` option and
`lsp-execute-command` command are stand-ins that record what kakoune-lsp would receive: the server
table (checked as TOML, with the keys kakoune-lsp documents) and the exact JSON arguments of the
acpls commands, including awkward text and paths.  The transcript command is run for real.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.editors.conftest import EDITORS, require_program

CONFIG = EDITORS / "kakoune" / "acpls.kak"
# The keys kakoune-lsp's `lsp_servers` docstring lists for a server table.
LSP_SERVERS_KEYS = {
    "root",
    "root_globs",
    "command",
    "args",
    "single_instance",
    "settings",
    "settings_section",
    "workspace_did_change_configuration_subsection",
    "experimental",
    "symbol_kinds",
}


class Kakoune:
    """A headless Kakoune session (`kak -d`) driven with `kak -p`."""

    def __init__(self, tmp_path: Path, project: Path, files: list[str]) -> None:
        self.program = require_program("kak")
        self.dir = tmp_path
        self.log = tmp_path / "lsp-execute-command.log"
        self.session = f"acpls-{os.getpid()}-{time.monotonic_ns() % 10**9}"
        # The session's socket lives here: a unix socket path must stay under 108 bytes, which
        # pytest's (xdist) temporary directories can exceed.
        self.runtime = Path(tempfile.mkdtemp(prefix="kak-"))
        runtime = self.runtime
        self.env = {
            **os.environ,
            "XDG_RUNTIME_DIR": str(runtime),
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "TMPDIR": str(tmp_path),
            "KAK_TEST_LOG": str(self.log),
        }
        self.daemon = subprocess.Popen(
            [self.program, "-n", "-d", "-s", self.session, *files],
            cwd=project,
            env=self.env,
        )
        self.wait(lambda: self.try_send("nop"), "the Kakoune session to start")
        self.send(
            "declare-option str lsp_servers ''\n"
            "define-command lsp-execute-command -params 2..3 %{ nop %sh{\n"
            '  printf \'%s\\n%s\\n\' "$1" "$2" >> "$KAK_TEST_LOG" } }\n'
            f"source '{CONFIG}'\n"
        )

    def try_send(self, commands: str) -> bool:
        done = subprocess.run(
            [self.program, "-p", self.session],
            input=commands,
            text=True,
            env=self.env,
            capture_output=True,
            timeout=30,
        )
        return done.returncode == 0

    def send(self, commands: str) -> None:
        assert self.try_send(commands), f"kak -p failed for {commands!r}"

    def in_buffer(self, buffer: str, commands: str) -> None:
        self.send(f"evaluate-commands -buffer '{buffer}' %{{\n{commands}\n}}\n")

    def value(self, buffer: str, expansion: str) -> str:
        """The value of a Kakoune expansion such as %opt{lsp_servers} in `buffer`."""
        out = self.dir / f"value-{time.monotonic_ns()}"
        self.in_buffer(buffer, f"echo -to-file '{out}' -- {expansion}")
        self.wait(out.exists, f"{expansion} in {buffer}")
        return out.read_text()

    def commands_sent(self) -> list[tuple[str, Any]]:
        if not self.log.exists():
            return []
        lines = self.log.read_text().splitlines()
        return [(lines[i], json.loads(lines[i + 1])) for i in range(0, len(lines), 2)]

    @staticmethod
    def wait(condition: Callable[[], Any], what: str, timeout: float = 10.0) -> Any:
        deadline = time.monotonic() + timeout
        while not (result := condition()):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            time.sleep(0.05)
        return result

    def close(self) -> None:
        self.try_send("kill!")
        try:
            self.daemon.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.daemon.kill()
            self.daemon.wait()
        shutil.rmtree(self.runtime, ignore_errors=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "my project é"
    root.mkdir()
    (root / "calc.py").write_text(
        "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a + b\n", encoding="utf-8"
    )
    (root / "notes.txt").write_text("plain text\n", encoding="utf-8")
    return root


@pytest.fixture
def kak(tmp_path: Path, project: Path) -> Iterator[Kakoune]:
    session = Kakoune(tmp_path, project, ["calc.py", "notes.txt"])
    yield session
    session.close()


def test_acpls_joins_the_buffers_language_servers_once(kak: Kakoune):
    kak.in_buffer("calc.py", "set-option buffer lsp_servers %{[pylsp]\nroot_globs = ['.git']\n}")
    kak.in_buffer("calc.py", "set-option buffer filetype python")
    kak.in_buffer("calc.py", "set-option buffer filetype python")  # set twice: still one entry
    servers = tomllib.loads(kak.value("calc.py", "%opt{lsp_servers}"))
    assert list(servers) == ["pylsp", "acpls"]
    acpls = servers["acpls"]
    assert set(acpls) <= LSP_SERVERS_KEYS
    assert acpls["settings_section"] == "acpls"
    # What kakoune-lsp sends as initializationOptions: acpls' settings, which acpls accepts.
    from acpls.settings import parse_settings

    settings, problems = parse_settings(acpls["settings"]["acpls"])
    assert problems == []
    assert settings.agent.name == "claude" and settings.follow_enabled is True


def test_other_filetypes_are_left_alone(kak: Kakoune):
    kak.in_buffer("notes.txt", "set-option buffer filetype plain")
    assert kak.value("notes.txt", "%opt{lsp_servers}") == ""


def test_prompt_sends_the_question_and_the_selected_lines(kak: Kakoune, project: Path):
    kak.in_buffer("calc.py", 'select 2.5,5.3\nacpls-prompt %{why does "sub" add? C:\\path\ttab}')
    kak.in_buffer("calc.py", "select 1.1,1.1\nacpls-prompt plain question")
    kak.wait(lambda: len(kak.commands_sent()) == 2, "two acpls.prompt commands")
    (first_command, first), (second_command, second) = kak.commands_sent()
    assert first_command == second_command == "acpls.prompt"
    assert first == [
        {
            "text": 'why does "sub" add? C:\\path\ttab',
            "context": [
                {
                    "uri": "file://"
                    + str(project / "calc.py").replace(" ", "%20").replace("é", "%C3%A9"),
                    "range": {
                        "start": {"line": 1, "character": 0},
                        "end": {"line": 5, "character": 0},
                    },
                }
            ],
        }
    ]
    assert second == [{"text": "plain question"}]


def test_cancel_sends_its_command(kak: Kakoune):
    kak.in_buffer("calc.py", "acpls-cancel")
    kak.wait(kak.commands_sent, "acpls.cancel")
    assert kak.commands_sent() == [("acpls.cancel", [{}])]


def test_transcript_buffer_follows_the_newest_transcript(kak: Kakoune, tmp_path: Path):
    transcripts = tmp_path / "state" / "acpls" / "transcripts"
    transcripts.mkdir(parents=True)
    old = transcripts / "old.md"
    old.write_text("# an older session\n")
    time.sleep(0.05)
    new = transcripts / "new.md"
    new.write_text("# acpls session new\n\n**You:** hello\n")
    os.utime(old, (time.time() - 60, time.time() - 60))

    kak.in_buffer("calc.py", "acpls-transcript")

    kak.wait(lambda: kak.value("*acpls*", "%val{buf_line_count}") == "4", "the transcript text")
    assert kak.value("*acpls*", "%opt{readonly} %opt{filetype}") == "true markdown"
    with new.open("a") as handle:
        handle.write("\n**claude:** hi there\n")
    kak.wait(lambda: kak.value("*acpls*", "%val{buf_line_count}") == "6", "the appended answer")

    fifo = Path(kak.value("*acpls*", "%opt{acpls_transcript_fifo}"))
    follower = int((fifo.parent / "pid").read_text())
    kak.send("delete-buffer *acpls*")
    kak.wait(lambda: not fifo.parent.exists(), "the fifo directory to go")
    kak.wait(lambda: not Path(f"/proc/{follower}").exists() or _zombie(follower), "tail to stop")


def _zombie(pid: int) -> bool:
    try:
        return "\nState:\tZ" in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True


def test_transcript_without_any_session_says_so(kak: Kakoune, tmp_path: Path):
    errors = tmp_path / "errors"
    kak.in_buffer(
        "calc.py",
        f"try %{{ acpls-transcript }} catch %{{ echo -to-file '{errors}' -- %val{{error}} }}",
    )
    kak.wait(errors.exists, "the error")
    assert "no transcript yet" in errors.read_text()
