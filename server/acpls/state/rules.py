"""Remembered permission rules: acpls' own "always allow" / "always reject".

When the user picks an `allow_always` or `reject_always` option, acpls records a rule and answers
matching requests itself from then on, in this and later sessions. Agents mean different things by
"always" (one remembers a single command, another switches to a mode that allows every edit), so
the rule is narrow and acpls, not the agent, keeps it:

* file tools (`read`, `edit`, `delete`, `move`): one rule per path the tool call names (locations
  and diff paths), as a glob of that exact path relative to the workspace (absolute when outside).
  A request matches an allow rule only when *every* path it names is covered; one covered path is
  enough for a reject rule. A file tool call that names no path records nothing.
* `execute`: the command's fixed words and whether more may follow, from rawInput `command` (or
  the title), as `acpls.state.command_scope` works them out: program, wrappers, global options and
  subcommand word for word (`git -C /ws status`), further arguments only where they cannot run
  code or leave the workspace, otherwise the exact command. An allow rule only ever matches a
  simple command: anything with shell operators, substitutions or redirections (`;`, `&&`, `|`,
  `$(`, `>`, ...) is asked about again, and answering "always" to such a command records nothing.
* `fetch`: the scheme and host (and port) of the URLs in rawInput; a request matches when every
  URL it names has that origin. A fetch that names no URL records nothing.
* `search`, `think`: the whole kind, for that agent.
* `switch_mode`, `other` and unknown kinds: the exact tool-call title *and* the exact rawInput (as
  canonical JSON), since the kind says nothing and the title is the agent's own text; a mode
  switch can lift every other question (a "bypass permissions" mode), so it is never approved
  as a kind. An old whole-kind `switch_mode` rule matches nothing.

Rules written by earlier versions keep working, never wider than a new rule would be: a
`commandPrefix` without `commandArgs` allows further arguments only when the prefix is exactly
what a new rule for that command would fix (`git status`, `npm test`, `pytest`); otherwise (`git`,
`npx`, `python3`, `timeout`) it matches that exact command only. An old `other` rule without
`rawInput` matches only calls without input, and an old `fetch` rule without `urlOrigin` matches
nothing (it covered every URL); both stay listed so they can be removed.

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
from typing import IO, Any, Literal, NamedTuple
from urllib.parse import urlsplit

import attrs

from acpls.state.command_scope import (
    command_scope,
    describe,
    scope_allows,
    segment_words,
    shell_words,
)

log = logging.getLogger(__name__)

FILE_KINDS = frozenset({"read", "edit", "delete", "move"})
WHOLE_KINDS = frozenset({"search", "think"})
_FORMAT_VERSION = 1
# An `other` rule keeps the call's whole input; a bigger input is not remembered.
_MAX_RAW_INPUT = 8192
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
COMMAND_ARGS = ("any", "none")


class Scope(NamedTuple):
    """What one rule covers (all None: the whole kind)."""

    path_glob: str | None = None
    command_prefix: str | None = None
    command_args: str | None = None
    tool_title: str | None = None
    raw_input: str | None = None  # canonical JSON text
    url_origin: str | None = None


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
    command_args: str | None = None
    raw_input: str | None = None
    url_origin: str | None = None

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
            ("commandArgs", self.command_args),
            ("toolTitle", self.tool_title),
            ("urlOrigin", self.url_origin),
        ):
            if value is not None:
                data[key] = value
        if self.raw_input is not None:
            data["rawInput"] = json.loads(self.raw_input)
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
        keys = ("pathGlob", "commandPrefix", "commandArgs", "toolTitle", "urlOrigin")
        optional = {key: raw.get(key) for key in keys}
        if not all(v is None or isinstance(v, str) for v in optional.values()):
            raise ValueError("rule scope fields must be strings")
        if optional["commandArgs"] not in (None, *COMMAND_ARGS):
            raise ValueError(f"unknown commandArgs {optional['commandArgs']!r}")
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
            command_args=optional["commandArgs"],
            raw_input=canonical_json(raw["rawInput"]) if "rawInput" in raw else None,
            url_origin=optional["urlOrigin"],
        )

    def scope(self) -> Scope:
        return Scope(
            self.path_glob,
            self.command_prefix,
            self.command_args,
            self.tool_title,
            self.raw_input,
            self.url_origin,
        )

    def describe(self) -> str:
        """The rule as a prompt and a rules list show it."""
        scope = self.scope()
        if self.command_prefix is not None and self.command_args is None:
            args = "any" if _rule_is_free(self, self.workspace) else "none"
            scope = scope._replace(command_args=args)
        return describe_scope(self.kind, scope, self.workspace)


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
            return _match_command(rules, command_of(tool_call), self.workspace)
        if kind == "fetch":
            return _match_origin(rules, call_urls(tool_call))
        if kind in WHOLE_KINDS:
            return _reject_first([r for r in rules if r.scope() == Scope()])
        title, raw_input = _title(tool_call), canonical_json(tool_call.get("rawInput"))
        if title is None:
            return None
        fitting = [
            r
            for r in rules
            if r.tool_title == title
            and (r.raw_input or "null") == raw_input
            and r.scope()._replace(tool_title=None, raw_input=None) == Scope()
        ]
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
        scopes = self.scopes(tool_call)
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
                path_glob=scope.path_glob,
                command_prefix=scope.command_prefix,
                tool_title=scope.tool_title,
                command_args=scope.command_args,
                raw_input=scope.raw_input,
                url_origin=scope.url_origin,
            )
            for scope in scopes
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

    def scopes(self, tool_call: Mapping[str, Any]) -> list[Scope]:
        """What an "always" answer to this tool call records (empty: nothing). The prompt shows
        these before the user answers, and `record` records exactly these."""
        kind = _kind(tool_call)
        if kind in FILE_KINDS:
            return [Scope(path_glob=glob.escape(p)) for p in self._relative_paths(tool_call)]
        if kind == "execute":
            scope = command_scope(command_of(tool_call) or "", self.workspace)
            if scope is None:
                return []  # compound, or a pattern: no rule means what the user saw
            args = "any" if scope.free else "none"
            return [Scope(command_prefix=shlex.join(scope.prefix), command_args=args)]
        if kind == "fetch":
            origins = {url_origin(url) for url in call_urls(tool_call)}
            if len(origins) != 1 or None in origins:
                return []
            return [Scope(url_origin=origins.pop())]
        if kind in WHOLE_KINDS:
            return [Scope()]
        title, raw_input = _title(tool_call), canonical_json(tool_call.get("rawInput"))
        if title is None or len(raw_input) > _MAX_RAW_INPUT:
            return []
        return [Scope(tool_title=title, raw_input=raw_input)]

    def describe_scopes(self, tool_call: Mapping[str, Any]) -> list[dict[str, Any]]:
        """`scopes` as the prompt carries them (editors/protocol.md 5.3, `rememberAs`)."""
        kind = _kind(tool_call)
        return [
            scope_json(kind, scope, describe_scope(kind, scope, self.workspace))
            for scope in self.scopes(tool_call)
        ]

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
        _private_folder(self.path.parent)
        lock_path = self.path.with_name(self.path.name + ".lock")
        with _private_lock_file(lock_path) as lock:
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


def _private_folder(folder: Path) -> None:
    """`folder` and its missing parents, each created 0700 (`mkdir(parents=True, mode=...)`
    gives the mode to the last one only): services/private_files.make_dir's rule, kept here
    because state/ never imports services/."""
    missing: list[Path] = []
    probe = folder
    while not probe.exists() and probe.parent != probe:
        missing.append(probe)
        probe = probe.parent
    for each in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(each, 0o700)


def _private_lock_file(path: Path) -> IO[str]:
    """The lock file, created 0600 in the same open(2); a symlink planted there is refused."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
    return os.fdopen(os.open(path, flags | getattr(os, "O_CLOEXEC", 0), 0o600), "a")


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


def _unwrap_shell(argv: list[str]) -> str:
    """`["bash", "-lc", "git status"]` is the command `git status`."""
    shells = ("sh", "bash", "dash")  # zsh expands words differently: its scripts stay exact
    if len(argv) == 3 and os.path.basename(argv[0]) in shells and argv[1] in ("-c", "-lc", "-ic"):
        return argv[2].strip()
    return shlex.join(argv)


def _rule_words(rule: Rule) -> tuple[str, ...]:
    words = shell_words(rule.command_prefix or "")
    return tuple(w.value for w in words) if words else ()


def _rule_is_free(rule: Rule, workspace: str) -> bool:
    """A rule's `commandArgs`; for a rule of an earlier version (none), further arguments only
    when a rule recorded now from its prefix would allow them with the same fixed words."""
    if rule.command_args is not None:
        return rule.command_args == "any"
    prefix = rule.command_prefix or ""
    scope = command_scope(prefix, workspace)
    return scope is not None and scope.free and scope.prefix == _rule_words(rule)


def _match_command(rules: list[Rule], command: str | None, workspace: str) -> Rule | None:
    if not command:
        return None
    scoped = [r for r in rules if r.command_prefix and _rule_words(r)]
    segments = segment_words(command)
    for rule in scoped:
        # A reject rule is looked for in every part of a compound command, and inside wrappers
        # (`timeout 5 git push`): rejecting more than asked is safe.
        wanted = list(_rule_words(rule))
        if rule.decision == "reject" and any(seg[: len(wanted)] == wanted for seg in segments):
            return rule
    for rule in scoped:
        if rule.decision == "allow" and scope_allows(
            _rule_words(rule), _rule_is_free(rule, workspace), command, workspace
        ):
            return rule
    return None


def _match_origin(rules: list[Rule], urls: list[str]) -> Rule | None:
    """A fetch rule matches when every URL of the call has its origin (old rules without one
    covered every URL and match nothing now)."""
    origins = {url_origin(url) for url in urls}
    if len(origins) != 1 or None in origins:
        return None
    origin = origins.pop()
    fitting = [r for r in rules if r.url_origin is not None and r.url_origin == origin]
    return _reject_first(fitting)


def call_urls(tool_call: Mapping[str, Any]) -> list[str]:
    """Every string in the call's rawInput that is a URL (`scheme://...`), any depth."""
    found: list[str] = []

    def walk(value: Any, depth: int) -> None:
        if isinstance(value, str) and _URL.match(value.strip()):
            found.append(value.strip())
        elif isinstance(value, dict) and depth < 8:
            for item in value.values():
                walk(item, depth + 1)
        elif isinstance(value, list) and depth < 8:
            for item in value:
                walk(item, depth + 1)

    walk(tool_call.get("rawInput"), 0)
    return found


def url_origin(url: str) -> str | None:
    """`https://example.com` (port kept when given) of a URL, or None when it has no host or
    holds characters a URL cannot."""
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        return None
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    host = (parts.hostname or "").rstrip(".")
    if not parts.scheme or not host:
        return None
    return f"{parts.scheme.lower()}://{host}" + (f":{port}" if port is not None else "")


def canonical_json(value: Any) -> str:
    """One text per JSON value (keys sorted), so equal inputs compare equal."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def describe_scope(kind: str, scope: Scope, workspace: str) -> str:
    """How a rule reads: `execute: git status [any arguments inside the workspace]`."""
    if scope.command_prefix is not None:
        words = command_scope(scope.command_prefix, workspace)
        prefix = words.words if words is not None else (scope.command_prefix,)
        return f"{kind}: {describe(prefix, scope.command_args == 'any')}"
    if scope.path_glob is not None:
        return f"{kind}: {scope.path_glob}"
    if scope.url_origin is not None:
        return f"{kind}: URLs on {scope.url_origin}"
    if scope.tool_title is not None:
        shown = scope.raw_input if scope.raw_input is not None else "no input"
        if len(shown) > 200:
            shown = shown[:200] + "…"
        return f"{kind}: {scope.tool_title!r} with input {shown}"
    if kind == "fetch":
        return "fetch: (an old rule for every URL; it matches nothing now)"
    return f"{kind}: every {kind} request"


def scope_json(kind: str, scope: Scope, description: str) -> dict[str, Any]:
    data: dict[str, Any] = {"kind": kind}
    for key, value in (
        ("pathGlob", scope.path_glob),
        ("commandPrefix", scope.command_prefix),
        ("commandArgs", scope.command_args),
        ("toolTitle", scope.tool_title),
        ("urlOrigin", scope.url_origin),
    ):
        if value is not None:
            data[key] = value
    if scope.raw_input is not None:
        data["rawInput"] = json.loads(scope.raw_input)
    data["description"] = description
    return data


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
