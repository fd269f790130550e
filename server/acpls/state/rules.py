"""Remembered permission rules: acpls' own "always allow" / "always reject".

When the user picks an `allow_always` or `reject_always` option, acpls records a rule and answers
matching requests itself from then on, in this and later sessions. Agents mean different things by
"always" (one remembers a single command, another switches to a mode that allows every edit), so
the rule is narrow and acpls, not the agent, keeps it:

* file tools (`read`, `edit`, `delete`, `move`): one rule per path the tool call names (locations
  and diff paths), as a glob of that exact path relative to the workspace (absolute when outside).
  A request matches an allow rule only when *every* path it names is covered; one covered path is
  enough for a reject rule. A file tool call that names no path records nothing.
* `execute`: the command's first word(s) (`git status`, `npm run build`, `pytest`), from rawInput
  `command` (or the title); for commands that can destroy or leak (`rm`, `sudo`, `curl`, `find`,
  ...) the exact command. An allow rule only ever matches a simple command: anything with shell
  operators, substitutions or redirections (`;`, `&&`, `|`, `$(`, `>`, ...) is asked about again,
  and answering "always" to such a command records nothing.
* `search`, `fetch`, `think`, `switch_mode`: the whole kind, for that agent.
* `other` and unknown kinds: the exact tool-call title, since the kind says nothing.

When a rule matches, acpls answers with the agent's `allow_once` (or `reject_once`) option when
there is one, and only falls back to the `*_always` option: answering "once" keeps the agent from
widening the permission in its own way.

Rules live in `$XDG_STATE_HOME/acpls/rules.json` (default `~/.local/state/acpls/rules.json`), one
list with each rule's workspace. Writes are atomic (temporary file, fsync, rename) under an
advisory lock, re-reading the file first so two acpls processes do not drop each other's rules.
Entries this version cannot read are kept in the file untouched. A file that is not valid JSON is
logged, renamed to `rules.json.corrupt-<timestamp>`, and acpls starts from an empty list.
"""

from __future__ import annotations

import contextlib
import fcntl
import fnmatch
import glob
import json
import logging
import os
import re
import secrets
import shlex
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import attrs

log = logging.getLogger(__name__)

FILE_KINDS = frozenset({"read", "edit", "delete", "move"})
WHOLE_KINDS = frozenset({"search", "fetch", "think", "switch_mode"})
_FORMAT_VERSION = 1

# Tools whose second word is a subcommand that changes what the command does.
_SUBCOMMAND_TOOLS = frozenset(
    {
        "git", "npm", "pnpm", "yarn", "bun", "deno", "cargo", "go", "docker", "podman",
        "kubectl", "helm", "pip", "pip3", "uv", "poetry", "pipenv", "gh", "dotnet", "mvn",
        "gradle", "./gradlew", "make", "just", "brew", "apt", "apt-get", "conda", "rustup",
        "terraform", "nix", "hatch", "tox", "nox", "composer", "bundle", "rails", "mix",
    }
)  # fmt: skip
# `npm run build`, `uv run pytest`: the third word is the real command.
_RUNNER_WORDS = frozenset({"run", "exec", "x", "dlx"})
_PYTHONS = frozenset({"python", "python3", "py"})
# Commands where "the same first word" is far too wide: a rule is for the exact command only.
_EXACT_COMMANDS = frozenset(
    {
        "rm", "rmdir", "sudo", "su", "doas", "dd", "mkfs", "shred", "chmod", "chown", "kill",
        "pkill", "killall", "shutdown", "reboot", "curl", "wget", "ssh", "scp", "rsync", "eval",
        "sh", "bash", "zsh", "env", "xargs", "find",
    }
)  # fmt: skip
_UNSAFE_CHARS = frozenset(";&|<>`$\n\r(){}")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")

Decision = Literal["allow", "reject"]
ALWAYS_KINDS: dict[str, Decision] = {"allow_always": "allow", "reject_always": "reject"}


@attrs.frozen
class Rule:
    """One remembered answer. At most one of the scope fields is set (none: the whole kind)."""

    rule_id: str
    workspace: str
    agent: str
    kind: str
    decision: Decision
    created_at: str
    path_glob: str | None = None
    command_prefix: str | None = None
    tool_title: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "ruleId": self.rule_id,
            "workspace": self.workspace,
            "agent": self.agent,
            "kind": self.kind,
            "decision": self.decision,
            "createdAt": self.created_at,
        }
        for key, value in (
            ("pathGlob", self.path_glob),
            ("commandPrefix", self.command_prefix),
            ("toolTitle", self.tool_title),
        ):
            if value is not None:
                data[key] = value
        return data

    @classmethod
    def from_json(cls, raw: Any) -> Rule:
        """Raises ValueError for an entry that is not a rule this version understands."""
        if not isinstance(raw, dict):
            raise ValueError("rule is not an object")
        required = ("ruleId", "workspace", "agent", "kind", "decision", "createdAt")
        values = {key: raw.get(key) for key in required}
        if not all(isinstance(v, str) and v for v in values.values()):
            raise ValueError(f"rule misses one of {required}")
        if values["decision"] not in ("allow", "reject"):
            raise ValueError(f"unknown decision {values['decision']!r}")
        optional = {key: raw.get(key) for key in ("pathGlob", "commandPrefix", "toolTitle")}
        if not all(v is None or isinstance(v, str) for v in optional.values()):
            raise ValueError("rule scope fields must be strings")
        return cls(
            rule_id=raw["ruleId"],
            workspace=raw["workspace"],
            agent=raw["agent"],
            kind=raw["kind"],
            decision=raw["decision"],
            created_at=raw["createdAt"],
            path_glob=optional["pathGlob"],
            command_prefix=optional["commandPrefix"],
            tool_title=optional["toolTitle"],
        )

    def scope(self) -> tuple[str | None, str | None, str | None]:
        return self.path_glob, self.command_prefix, self.tool_title


def default_rules_path(environ: Mapping[str, str] | None = None) -> Path:
    """`$XDG_STATE_HOME/acpls/rules.json`, or `~/.local/state/acpls/rules.json`."""
    env = os.environ if environ is None else environ
    state_home = env.get("XDG_STATE_HOME", "")
    if not os.path.isabs(state_home):
        # The XDG spec says to ignore a relative value.
        state_home = os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(state_home) / "acpls" / "rules.json"


class RuleStore:
    """The rules of one workspace (the file holds every workspace's rules)."""

    def __init__(
        self,
        workspace: str,
        *,
        path: str | os.PathLike[str] | None = None,
        auto_approve: Iterable[str] = (),
    ) -> None:
        self.workspace = os.path.normpath(workspace)
        self.path = Path(path) if path is not None else default_rules_path()
        self.auto_approve_kinds = frozenset(auto_approve)
        self._cache_key: tuple[int, int, int] | None = None
        self._entries: list[Any] = []

    # -- asking --------------------------------------------------------------------------------

    def match(self, agent: str, tool_call: Mapping[str, Any]) -> Rule | None:
        """The rule that answers this request, or None (then the user is asked)."""
        kind = _kind(tool_call)
        rules = [r for r in self.list() if r.agent == agent and r.kind == kind]
        if not rules:
            return None
        if kind in FILE_KINDS:
            return _match_paths(rules, self._relative_paths(tool_call))
        if kind == "execute":
            return _match_command(rules, command_of(tool_call))
        wanted_title = None if kind in WHOLE_KINDS else _title(tool_call)
        if kind not in WHOLE_KINDS and wanted_title is None:
            return None
        fitting = [r for r in rules if r.scope() == (None, None, wanted_title)]
        return _reject_first(fitting)

    def auto_approve_option(
        self, tool_call: Mapping[str, Any], options: Sequence[Mapping[str, Any]]
    ) -> str | None:
        """The first `allow_*` option when the tool kind is pre-approved by settings."""
        if _kind(tool_call) not in self.auto_approve_kinds:
            return None
        for option in options:
            if str(option.get("kind", "")).startswith("allow_") and option.get("optionId"):
                return str(option["optionId"])
        return None

    # -- remembering ---------------------------------------------------------------------------

    def record(self, agent: str, tool_call: Mapping[str, Any], option_kind: str) -> list[Rule]:
        """Remember the user's `allow_always` / `reject_always` answer. Returns the new rules
        (none for other option kinds, or when the tool call does not say what it touches)."""
        decision = ALWAYS_KINDS.get(option_kind)
        if decision is None:
            return []
        kind = _kind(tool_call)
        scopes = self._scopes(kind, tool_call)
        if not scopes:
            log.info("permission rule not recorded: %s tool call names no scope", kind)
            return []
        now = datetime.now(UTC).isoformat(timespec="seconds")
        rules = [
            Rule(
                rule_id=f"rule-{secrets.token_hex(6)}",
                workspace=self.workspace,
                agent=agent,
                kind=kind,
                decision=decision,
                created_at=now,
                path_glob=path_glob,
                command_prefix=prefix,
                tool_title=title,
            )
            for path_glob, prefix, title in scopes
        ]
        with self._update() as entries:
            # A new answer for the same scope replaces the old one, whichever way it went.
            replaced = {(r.agent, r.kind, r.scope()) for r in rules}
            entries[:] = [e for e in entries if _key(e, self.workspace) not in replaced]
            entries.extend(rule.to_json() for rule in rules)
        return rules

    def list(self, workspace: str | None = None) -> list[Rule]:
        """The rules of `workspace` (default: this store's), oldest first."""
        wanted = self.workspace if workspace is None else os.path.normpath(workspace)
        return [r for r in self._rules() if r.workspace == wanted]

    def remove(self, rule_id: str) -> Rule | None:
        """Forget a rule; returns it, or None when no rule has that id."""
        removed: list[Rule] = []
        with self._update() as entries:
            kept = []
            for entry in entries:
                rule = _parse(entry)
                if rule is not None and rule.rule_id == rule_id:
                    removed.append(rule)
                else:
                    kept.append(entry)
            entries[:] = kept
        return removed[0] if removed else None

    # -- scopes --------------------------------------------------------------------------------

    def _scopes(
        self, kind: str, tool_call: Mapping[str, Any]
    ) -> list[tuple[str | None, str | None, str | None]]:
        if kind in FILE_KINDS:
            return [(glob.escape(p), None, None) for p in self._relative_paths(tool_call)]
        if kind == "execute":
            command = command_of(tool_call) or ""
            # A compound command has no single prefix that would mean what the user approved.
            prefix = command_prefix(command) if _is_simple(command) else None
            return [(None, prefix, None)] if prefix else []
        if kind in WHOLE_KINDS:
            return [(None, None, None)]
        title = _title(tool_call)
        return [(None, None, title)] if title else []

    def _relative_paths(self, tool_call: Mapping[str, Any]) -> list[str]:
        result = []
        for path in tool_call_paths(tool_call):
            normal = os.path.normpath(path)
            if normal == self.workspace or normal.startswith(self.workspace.rstrip("/") + "/"):
                normal = os.path.relpath(normal, self.workspace)
            if normal not in result:
                result.append(normal)
        return result

    # -- the file ------------------------------------------------------------------------------

    def _rules(self) -> list[Rule]:
        self._load()
        return [rule for entry in self._entries if (rule := _parse(entry)) is not None]

    def _load(self) -> None:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            self._cache_key, self._entries = None, []
            return
        key = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        if key == self._cache_key:
            return
        self._entries = self._read()
        self._cache_key = key

    def _read(self) -> list[Any]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        try:
            data = json.loads(raw)
            if not isinstance(data, dict) or not isinstance(data.get("rules"), list):
                raise ValueError("expected an object with a 'rules' list")
        except ValueError as exc:
            self._set_aside(exc)
            return []
        entries: list[Any] = data["rules"]
        for entry in entries:
            if _parse(entry) is None:
                log.warning("%s: keeping an entry acpls cannot read: %.200r", self.path, entry)
        return entries

    def _set_aside(self, error: Exception) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        aside = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        try:
            os.replace(self.path, aside)
        except OSError as exc:
            log.error(
                "rules file %s is corrupt (%s) and cannot be moved: %s", self.path, error, exc
            )
            return
        log.error("rules file %s is corrupt (%s); moved to %s", self.path, error, aside)

    @contextlib.contextmanager
    def _update(self) -> Iterator[list[Any]]:
        """Read-modify-write under the lock; the caller mutates the yielded entries."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        lock_path = self.path.with_name(self.path.name + ".lock")
        with open(lock_path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                entries = self._read()
                yield entries
                self._write(entries)
                self._cache_key = None
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _write(self, entries: list[Any]) -> None:
        payload = json.dumps({"version": _FORMAT_VERSION, "rules": entries}, indent=2) + "\n"
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(payload)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def choose_option(rule: Rule, options: Sequence[Mapping[str, Any]]) -> str | None:
    """The option to answer with for a matched rule: `*_once` first, then `*_always`; None when
    the agent offers neither (then the user is asked)."""
    for kind in (f"{rule.decision}_once", f"{rule.decision}_always"):
        for option in options:
            if option.get("kind") == kind and isinstance(option.get("optionId"), str):
                return str(option["optionId"])
    return None


# -- what a tool call touches ------------------------------------------------------------------


def tool_call_paths(tool_call: Mapping[str, Any]) -> list[str]:
    """Absolute paths a tool call names: locations, v1 diff `path`, v2 diff `changes`."""
    paths: list[str] = []

    def add(value: Any) -> None:
        if isinstance(value, str) and os.path.isabs(value) and value not in paths:
            paths.append(value)

    for location in _list(tool_call.get("locations")):
        if isinstance(location, dict):
            add(location.get("path"))
    for item in _list(tool_call.get("content")):
        if not isinstance(item, dict) or item.get("type") != "diff":
            continue
        add(item.get("path"))
        for change in _list(item.get("changes")):
            if isinstance(change, dict):
                add(change.get("oldPath"))
                add(change.get("path"))
    return paths


def command_of(tool_call: Mapping[str, Any]) -> str | None:
    """The command line of an execute tool call: rawInput `command`/`cmd`, else the title."""
    raw = tool_call.get("rawInput")
    if isinstance(raw, dict):
        for key in ("command", "cmd"):
            value = raw.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
            if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                return _unwrap_shell(value)
    title = _title(tool_call)
    return title.strip("`").strip() if title else None


def command_prefix(command: str) -> str | None:
    """The first word(s) that say what a command does: `git push`, `npm run build`, `ls`.
    For commands that can destroy or leak (`rm`, `sudo`, `curl`, ...) it is the whole command,
    and such a rule only matches that exact command."""
    words = _words(command)
    if not words:
        return None
    if os.path.basename(words[0]) in _EXACT_COMMANDS:
        return shlex.join(words)
    return shlex.join(words[: _prefix_length(words)])


def _prefix_length(words: list[str]) -> int:
    tool = os.path.basename(words[0])
    second = words[1] if len(words) > 1 else None
    third = words[2] if len(words) > 2 else None
    if tool in _PYTHONS:
        # `python -m pytest` runs pytest; `python script.py` runs the interpreter on a script.
        return 3 if second == "-m" and third else 1
    if words[0] not in _SUBCOMMAND_TOOLS or second is None or second.startswith("-"):
        return 1
    if second in _RUNNER_WORDS and third and not third.startswith("-"):
        return 3
    return 2


def _unwrap_shell(argv: list[str]) -> str:
    """`["bash", "-lc", "git status"]` is the command `git status`."""
    shells = ("sh", "bash", "zsh", "dash")
    if len(argv) == 3 and os.path.basename(argv[0]) in shells and argv[1] in ("-c", "-lc", "-ic"):
        return argv[2].strip()
    return shlex.join(argv)


def _words(command: str) -> list[str]:
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    while words and _ASSIGNMENT.match(words[0]):
        words.pop(0)  # `FOO=1 make` runs make
    return words


def _is_simple(command: str) -> bool:
    return not any(ch in _UNSAFE_CHARS for ch in command)


def _segments(command: str) -> list[str]:
    return [part for part in re.split(r"&&|\|\||[;|&\n]", command) if part.strip()]


def _prefix_matches(prefix: str, command: str) -> bool:
    wanted, words = _words(prefix), _words(command)
    if not wanted:
        return False
    if os.path.basename(wanted[0]) in _EXACT_COMMANDS:
        return words == wanted
    return words[: len(wanted)] == wanted


def _match_command(rules: list[Rule], command: str | None) -> Rule | None:
    if not command:
        return None
    scoped = [r for r in rules if r.command_prefix]
    for rule in scoped:
        if rule.decision == "reject" and any(
            _prefix_matches(rule.command_prefix or "", part) for part in _segments(command)
        ):
            return rule
    if not _is_simple(command):
        return None
    for rule in scoped:
        if rule.decision == "allow" and _prefix_matches(rule.command_prefix or "", command):
            return rule
    return None


def _match_paths(rules: list[Rule], paths: list[str]) -> Rule | None:
    if not paths:
        return None
    globbed = [r for r in rules if r.path_glob]
    for rule in globbed:
        if rule.decision == "reject" and any(_glob_match(p, rule) for p in paths):
            return rule
    allows = [r for r in globbed if r.decision == "allow"]
    covering = [next((r for r in allows if _glob_match(p, r)), None) for p in paths]
    if all(rule is not None for rule in covering):
        return covering[0]
    return None


def _glob_match(path: str, rule: Rule) -> bool:
    return fnmatch.fnmatchcase(path, rule.path_glob or "")


def _reject_first(rules: list[Rule]) -> Rule | None:
    for rule in rules:
        if rule.decision == "reject":
            return rule
    return rules[0] if rules else None


def _kind(tool_call: Mapping[str, Any]) -> str:
    kind = tool_call.get("kind")
    return kind if isinstance(kind, str) and kind else "other"


def _title(tool_call: Mapping[str, Any]) -> str | None:
    title = tool_call.get("title")
    return title if isinstance(title, str) and title.strip() else None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _parse(entry: Any) -> Rule | None:
    try:
        return Rule.from_json(entry)
    except ValueError:
        return None


def _key(entry: Any, workspace: str) -> tuple[str, str, tuple[str | None, ...]] | None:
    rule = _parse(entry)
    if rule is None or rule.workspace != workspace:
        return None
    return rule.agent, rule.kind, rule.scope()
