"""What an "always" answer to a command covers: its fixed words, and whether more may follow.

A rule made from a command is never wider than what the user saw. The command line is split into
shell words the way a POSIX shell would (quotes and backslashes resolved); then

* everything up to the program's subcommand is fixed, word for word: assignments (`FOO=1`),
  wrappers and their options (`env`, `timeout 60`, `nice -n 5`, `nohup`), runners and the package
  they start (`npx prettier`, `uvx ruff`, `pnpm dlx x`, `uv run pytest`), global options of the
  tool (`git -C /ws -c k=v`, `npm --prefix app`, `cargo +nightly`). So `git -C /ws status` allows
  `git -C /ws status --short`, never `git status`, `git -c core.pager=x status` or `git push`;
  `timeout 60 pytest` never allows `timeout 5 rm -rf ~`. An option acpls does not know before the
  subcommand makes the whole command exact (its argument count is unknown, so the subcommand is).
* after that, further arguments are free only for subcommands whose arguments cannot run code or
  write outside what was approved (`git status`/`log`/`diff`, `cargo test`, `pytest`, `ls`, ...),
  and even there options that run programs or write files (`--output`, `--upload-pack`,
  `--ext-diff`, `git grep -O`, `go test -exec`, `pytest -p`, `rg --pre`, `cargo --config`) and
  paths that leave the workspace (`/etc/x`, `~/.ssh`, `../..`) make the request ask again. Every
  other command (`git push`, `rm`, `make`, `curl`, `python script.py`, `sudo`, `xargs`, `find`,
  unknown programs) is remembered exactly: the same words, nothing added.
* `sh -c 'cmd'` / `bash -lc 'cmd'` with nothing after the script is `cmd`.

A command that is not simple gets no scope: shell operators and substitutions (`;`, `&&`, `||`,
`|`, `&`, `$(...)`, `$VAR`, backticks), redirections (`>`, `<`), grouping, comments, newlines,
invisible or unusual space characters (zero-width, bidi controls, no-break space), and a program
name that is not plain ASCII (a look-alike of `git`). Words with shell patterns (`*`, `?`, `[`,
`~`) cannot be pinned, so they never fill a fixed place, and in a free place they may not start
with a pattern or a dash (a file named `--upload-pack=x` must not be able to arrive by a glob).
"""

from __future__ import annotations

import os
import re
import shlex
import unicodedata
from collections.abc import Sequence
from typing import NamedTuple

import attrs

_UNSAFE_CHARS = frozenset(";&|<>`$\n\r(){}")
_PATTERN_CHARS = frozenset("*?[~")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_DURATION = re.compile(r"\d+(\.\d+)?[smhd]?")
# zsh is left out: its words expand differently (`=cmd`, more patterns), so its scripts stay exact.
_SHELLS = frozenset({"sh", "bash", "dash"})
_SHELL_C = frozenset({"-c", "-lc", "-ic"})

# Options of wrappers and tools before the program / subcommand: (take a value, plain flags,
# take a value only as `--x=value`). Anything else there makes the command exact.
_Options = tuple[frozenset[str], frozenset[str], frozenset[str]]
_NO_OPTIONS: _Options = (frozenset(), frozenset(), frozenset())
_WRAPPERS: dict[str, _Options] = {
    "env": (frozenset({"-u", "--unset", "-C", "--chdir"}),
            frozenset({"-i", "--ignore-environment"}), frozenset()),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}),
                frozenset({"--preserve-status", "--foreground", "-v", "--verbose"}), frozenset()),
    "nice": (frozenset({"-n", "--adjustment"}), frozenset(), frozenset()),
    "nohup": _NO_OPTIONS,
}  # fmt: skip
# Programs that fetch and run a package: the package is the program.
_RUNNERS: dict[str, _Options] = {
    "npx": (frozenset({"-p", "--package"}), frozenset({"-y", "--yes", "--no", "-q", "--quiet"}),
            frozenset()),
    "bunx": (frozenset({"-p", "--package"}), frozenset({"--bun"}), frozenset()),
    "uvx": (frozenset({"--from", "--with", "--python", "-p"}),
            frozenset({"-q", "--quiet", "--isolated", "--offline"}), frozenset()),
}  # fmt: skip
# `<tool> <sub>` that runs a package or project command, like npx: options as for npx.
_RUNNER_SUBCOMMANDS: dict[str, frozenset[str]] = {
    "npm": frozenset({"exec", "x"}),
    "pnpm": frozenset({"dlx", "exec"}),
    "yarn": frozenset({"dlx", "exec"}),
    "bun": frozenset({"x"}),
}
_UV_RUN_OPTIONS: _Options = (
    frozenset({"--with", "--python", "-p", "--package", "--extra", "--group", "--directory"}),
    frozenset({"--frozen", "--locked", "--no-sync", "-q", "--quiet", "--isolated",
               "--no-project", "--offline", "--all-extras"}),
    frozenset(),
)  # fmt: skip
_PACKAGE_SCRIPTS: dict[str, _Options] = {
    "npm": (frozenset({"--prefix", "-w", "--workspace"}),
            frozenset({"-s", "--silent", "-q", "--quiet", "--if-present"}), frozenset()),
    "pnpm": (frozenset({"-C", "--dir", "--filter", "-F"}),
             frozenset({"-s", "--silent", "-r", "--recursive", "--if-present"}), frozenset()),
    "yarn": (frozenset({"--cwd"}), frozenset({"-s", "--silent"}), frozenset()),
    "bun": (frozenset({"--cwd"}), frozenset({"--silent"}), frozenset()),
}  # fmt: skip
_SCRIPT_RUN = frozenset({"run", "run-script"})
_SCRIPT_TEST = frozenset({"test"})

# Tools with subcommands: global options, the subcommands whose further arguments are free.
_SUBCOMMAND_TOOLS: dict[str, tuple[_Options, frozenset[str]]] = {
    # Read-only subcommands only: `push`, `clean`, `reset`, `checkout`, `commit` (hooks), `add`,
    # `branch -D`, `config`, `fetch --upload-pack` ... are remembered exactly.
    "git": (
        (frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env",
                    "--super-prefix", "--attr-source"}),
         frozenset({"-p", "--paginate", "-P", "--no-pager", "--bare", "--no-replace-objects",
                    "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs",
                    "--icase-pathspecs", "--no-optional-locks", "--no-advice"}),
         frozenset({"--exec-path"})),
        frozenset({"status", "log", "diff", "show", "blame", "ls-files", "ls-tree", "rev-parse",
                   "describe", "shortlog", "grep"}),
    ),
    # Builds and tests run the project's own code, which is what the user approved; `run`,
    # `install`, `publish` ... are exact.
    "cargo": (
        (frozenset({"--color", "-C", "-Z", "--config"}),
         frozenset({"-q", "--quiet", "-v", "-vv", "--verbose", "--locked", "--offline",
                    "--frozen"}), frozenset()),
        frozenset({"test", "build", "check", "clippy", "doc", "bench", "tree"}),
    ),
    "go": (
        (frozenset({"-C"}), frozenset(), frozenset()),
        frozenset({"test", "build", "vet", "list", "version"}),
    ),
    "ruff": (_NO_OPTIONS, frozenset({"check", "format"})),
}  # fmt: skip
_PYTHONS = frozenset({"python", "python3", "py"})
_PYTHON_OPTIONS: _Options = (
    frozenset({"-X", "-W"}),
    frozenset({"-u", "-B", "-O", "-OO", "-q", "-s", "-E", "-I", "-b", "-bb"}),
    frozenset(),
)

# Programs whose arguments are free (read-only tools and test runners), with the options that
# would run another program or write a file: (long option prefixes, short option letters, which
# also count inside a bundle like `-vp`).
_Forbidden = tuple[tuple[str, ...], str]
_FREE_PROGRAMS: dict[str, _Forbidden] = {
    "ls": ((), ""), "pwd": ((), ""), "wc": ((), ""), "head": ((), ""), "tail": ((), ""),
    "cat": ((), ""), "grep": ((), ""), "diff": ((), ""), "which": ((), ""), "file": ((), ""),
    "stat": ((), ""), "du": ((), ""), "df": ((), ""), "echo": ((), ""), "whoami": ((), ""),
    "uname": ((), ""), "true": ((), ""), "false": ((), ""), "basename": ((), ""),
    "dirname": ((), ""), "realpath": ((), ""),
    "mypy": (("--python-executable",), ""),
    "pyright": (("--pythonpath",), ""),
    "rg": (("--pre", "--hostname-bin"), ""),
    "tree": (("-o",), "o"),
    "date": (("--set", "-s"), "s"),
    # pytest runs the project's tests (their code is what was approved); plugins, other config
    # files and other root directories are not.
    "pytest": (("-p", "--rootdir", "-c", "--config-file", "--override-ini", "-o",
                "--confcutdir", "--pyargs", "--basetemp"), "pco"),
}  # fmt: skip
_SUBCOMMAND_FORBIDDEN: dict[str, _Forbidden] = {
    "git": (("--output", "--upload-pack", "--receive-pack", "--exec", "--ext-diff",
             "--open-files-in-pager", "--no-index", "--textconv", "-O"), "O"),
    "cargo": (("--config", "-Z"), "Z"),
    "go": (("-exec", "--exec", "-toolexec", "--toolexec", "-vettool", "--vettool", "-overlay",
            "--overlay", "-modfile", "--modfile"), ""),
    "ruff": ((), ""),
}  # fmt: skip
_NOTHING: _Forbidden = ((), "")
# After `--` only: `npm run build -- --watch`; options before it are npm's own config
# (`--script-shell=/tmp/x` runs a program), so they make the command exact.
SCRIPT_TAIL = "script"


class Word(NamedTuple):
    value: str
    pattern: bool  # an unquoted `*`, `?`, `[` or `~`: the shell may expand it
    first: str  # the first character as written (a quote, a pattern character, a dash ...)
    raw: str  # the word as written


@attrs.frozen
class CommandScope:
    """`prefix`: the fixed words; `free`: whether further (checked) arguments may follow;
    `words`: the whole command's words; `patterns`: whether any word may be expanded."""

    prefix: tuple[str, ...]
    free: bool
    words: tuple[str, ...]
    patterns: bool


def shell_words(command: str) -> list[Word] | None:
    """The words of a simple command as a POSIX shell splits them, or None when the command is
    not simple (operators, substitutions, redirections, comments, unclosed quotes, invisible
    characters)."""
    if any(ch in _UNSAFE_CHARS or _invisible(ch) for ch in command):
        return None
    words: list[Word] = []
    i, n = 0, len(command)
    while i < n:
        if command[i] in " \t":
            i += 1
            continue
        if command[i] == "#":
            return None  # a comment: what runs is not what is shown
        word = _read_word(command, i)
        if word is None:
            return None
        words.append(word[0])
        i = word[1]
    return words


def _read_word(command: str, i: int) -> tuple[Word, int] | None:
    start = i
    first = command[i]
    parts: list[str] = []
    pattern = False
    n = len(command)
    while i < n and command[i] not in " \t":
        ch = command[i]
        if ch == "'":
            end = command.find("'", i + 1)
            if end < 0:
                return None
            parts.append(command[i + 1 : end])
            i = end + 1
        elif ch == '"':
            quoted = _double_quoted(command, i + 1)
            if quoted is None:
                return None
            parts.append(quoted[0])
            i = quoted[1]
        elif ch == "\\":
            if i + 1 >= n:
                return None
            parts.append(command[i + 1])
            i += 2
        else:
            pattern = pattern or ch in _PATTERN_CHARS
            parts.append(ch)
            i += 1
    return Word("".join(parts), pattern, first, command[start:i]), i


def _double_quoted(command: str, i: int) -> tuple[str, int] | None:
    parts: list[str] = []
    n = len(command)
    while i < n and command[i] != '"':
        if command[i] == "\\" and i + 1 < n and command[i + 1] in '"\\':
            parts.append(command[i + 1])
            i += 2
        else:
            parts.append(command[i])
            i += 1
    return ("".join(parts), i + 1) if i < n else None


def _invisible(ch: str) -> bool:
    if ch == "\t":
        return False
    category = unicodedata.category(ch)
    return category[0] == "C" or category in ("Zl", "Zp") or (category == "Zs" and ch != " ")


def command_scope(command: str, workspace: str) -> CommandScope | None:
    """What an "always" answer to `command` covers, or None when nothing can be remembered."""
    words = shell_words(command)
    if words and _is_shell_c(words):
        words = shell_words(words[2].value)  # `bash -lc 'git status'` is `git status`
    if not words:
        return None
    values = [w.value for w in words]
    leading = next((i for i, v in enumerate(values) if not _ASSIGNMENT.match(v)), len(values))
    if any(
        not _ASSIGNMENT.match(w.raw) for w in words[: leading + 1] if _ASSIGNMENT.match(w.value)
    ):
        return None  # `'FOO=1' cmd` runs a program named `FOO=1`: not what it looks like
    program = values[leading] if leading < len(values) else ""
    if not program.isascii() or not program.isprintable():
        return None  # a look-alike of a known program name is never pinned or widened
    patterns = any(w.pattern for w in words)
    fixed, tail_policy = _analyse(values)
    if tail_policy is not None and not any(w.pattern for w in words[:fixed]):
        tail = words[fixed:]
        if _tail_allowed(tail_policy, tail, workspace):
            return CommandScope(tuple(values[:fixed]), True, tuple(values), patterns)
    if patterns:
        return None  # an exact rule cannot pin what a pattern expands to
    return CommandScope(tuple(values), False, tuple(values), patterns)


def _is_shell_c(words: list[Word]) -> bool:
    return (
        len(words) == 3
        and os.path.basename(words[0].value) in _SHELLS
        and words[1].value in _SHELL_C
        and not (words[0].pattern or words[1].pattern)
    )


def scope_allows(prefix: Sequence[str], free: bool, command: str, workspace: str) -> bool:
    """Whether a rule of `prefix` (and free arguments when `free`) covers `command`."""
    scope = command_scope(command, workspace)
    if scope is None:
        return False
    if free and scope.free and scope.prefix == tuple(prefix):
        return True
    return not scope.patterns and scope.words == tuple(prefix)


def segment_words(command: str) -> list[list[str]]:
    """Loose words of each part of a compound command (`a && b; c | d`), each also unwrapped
    from its wrappers: what a reject rule is looked for in."""
    result = []
    for part in re.split(r"&&|\|\||[;|&\n]|\$\(|`|\)", command):
        words = [w.value for w in (shell_words(part.strip()) or [])] or part.split()
        if not words:
            continue
        result.append(words)
        inner = _inner_start(words)
        if 0 < inner < len(words):
            result.append(words[inner:])
    return result


# -- how many words are fixed --------------------------------------------------------------------


def _analyse(values: list[str]) -> tuple[int, str | None]:
    """(number of fixed words, the policy for the words after them; None: nothing may follow)."""
    start = 0
    while start < len(values) and _ASSIGNMENT.match(values[start]):
        start += 1
    return _program_at(values, start)


def _program_at(values: list[str], i: int) -> tuple[int, str | None]:
    exact = (len(values), None)
    if i >= len(values):
        return exact
    name = os.path.basename(values[i])
    if name in _WRAPPERS:
        after = _skip_wrapper(name, values, i + 1)
        return exact if after is None else _program_at(values, after)
    if name in _RUNNERS:
        after = _skip_options(values, i + 1, _RUNNERS[name])
        return exact if after is None else _package_at(values, after)
    if name in _PACKAGE_SCRIPTS:
        return _package_script(name, values, i)
    if name in _PYTHONS:
        return _python(values, i)
    if name == "uv":
        return _uv(values, i)
    if name in _SUBCOMMAND_TOOLS:
        return _subcommand(name, values, i)
    if name in _FREE_PROGRAMS:
        return i + 1, name
    return exact


def _skip_wrapper(name: str, values: list[str], i: int) -> int | None:
    if name == "nice" and i < len(values) and re.fullmatch(r"-\d+", values[i]):
        i += 1  # `nice -5 cmd`
    after = _skip_options(values, i, _WRAPPERS[name])
    if after is None:
        return None
    if name == "env":
        while after < len(values) and _ASSIGNMENT.match(values[after]):
            after += 1
    if name == "timeout":
        if after >= len(values) or not _DURATION.fullmatch(values[after]):
            return None
        after += 1
    return after


def _skip_options(values: list[str], i: int, options: _Options) -> int | None:
    """The index of the first word after the options, or None at an option not in the table."""
    with_value, flags, equals_only = options
    while i < len(values) and values[i].startswith("-") and values[i] != "-":
        word = values[i]
        if word == "--":
            return i + 1
        name = word.split("=", 1)[0]
        if word in flags:
            i += 1
        elif word in with_value and i + 1 < len(values):
            i += 2
        elif "=" in word and (name in with_value or name in equals_only):
            i += 1
        elif not word.startswith("--") and word[:2] in with_value and len(word) > 2:
            i += 1  # `-C/path`, `-n5`
        else:
            return None
    return i


def _package_at(values: list[str], i: int) -> tuple[int, str | None]:
    """A runner's package: fixed as written; its arguments free only for a free program."""
    if i >= len(values):
        return len(values), None
    name = values[i]
    if name in _PYTHONS:
        return _python(values, i)
    if name in _FREE_PROGRAMS:
        return i + 1, name
    return len(values), None


def _package_script(tool: str, values: list[str], i: int) -> tuple[int, str | None]:
    exact = (len(values), None)
    sub_at = _skip_options(values, i + 1, _PACKAGE_SCRIPTS[tool])
    if sub_at is None or sub_at >= len(values):
        return exact
    sub = values[sub_at]
    if sub in _RUNNER_SUBCOMMANDS.get(tool, ()):
        after = _skip_options(values, sub_at + 1, _RUNNERS["npx"])
        return exact if after is None else _package_at(values, after)
    if sub in _SCRIPT_TEST:
        return sub_at + 1, SCRIPT_TAIL
    if sub in _SCRIPT_RUN and sub_at + 1 < len(values) and not values[sub_at + 1].startswith("-"):
        return sub_at + 2, SCRIPT_TAIL
    return exact


def _python(values: list[str], i: int) -> tuple[int, str | None]:
    """`python -m pytest ...` runs pytest; `python script.py` and `python -c` are exact."""
    after = _skip_options_until_m(values, i + 1)
    if after is None or after + 1 >= len(values):
        return len(values), None
    module = values[after + 1]
    if module in _FREE_PROGRAMS:
        return after + 2, module
    return len(values), None


def _skip_options_until_m(values: list[str], i: int) -> int | None:
    while i < len(values) and values[i] != "-m":
        after = _skip_options(values, i, _PYTHON_OPTIONS)
        if after is None or after == i:
            return None
        i = after
    return i if i < len(values) else None


def _uv(values: list[str], i: int) -> tuple[int, str | None]:
    if i + 1 < len(values) and values[i + 1] == "run":
        after = _skip_options(values, i + 2, _UV_RUN_OPTIONS)
        if after is not None:
            return _package_at(values, after)
    return len(values), None


def _subcommand(tool: str, values: list[str], i: int) -> tuple[int, str | None]:
    options, free = _SUBCOMMAND_TOOLS[tool]
    start = i + 1
    if tool == "cargo" and start < len(values) and values[start].startswith("+"):
        start += 1  # `cargo +nightly test`
    sub_at = _skip_options(values, start, options)
    if sub_at is None or sub_at >= len(values) or values[sub_at] not in free:
        return len(values), None
    return sub_at + 1, tool


# -- what may follow ----------------------------------------------------------------------------


def _tail_allowed(policy: str, tail: Sequence[Word], workspace: str) -> bool:
    if policy == SCRIPT_TAIL:
        if tail and tail[0].value != "--":
            return False
        tail = tail[1:]
        forbidden = _NOTHING
    else:
        forbidden = _FREE_PROGRAMS.get(policy) or _SUBCOMMAND_FORBIDDEN.get(policy, _NOTHING)
    return all(_free_word_allowed(word, forbidden, workspace) for word in tail)


def _free_word_allowed(word: Word, forbidden: _Forbidden, workspace: str) -> bool:
    if word.pattern and word.first in "*?[-":
        return False  # `*` may expand to a file named like an option
    value = word.value
    prefixes, letters = forbidden
    if any(value == p or value.startswith(p + "=") or _stuck(value, p) for p in prefixes):
        return False
    short = value.startswith("-") and not value.startswith("--")
    if short and any(letter in value[1:] for letter in letters):
        return False
    return _stays_inside(value, workspace)


def _stuck(value: str, option: str) -> bool:
    """`-Ofile`, `-pplugin`: a short option with its value attached; `--output` as a prefix of
    a long one (`--output-directory`)."""
    if option.startswith("--"):
        return value.startswith(option)
    return len(option) == 2 and value.startswith(option) and len(value) > 2


def _stays_inside(value: str, workspace: str) -> bool:
    """No path in the word leaves the workspace: absolute paths must be inside it, `~` and
    `..` are not followed."""
    if value.startswith("-"):
        if "=" in value:
            value = value.split("=", 1)[1]
        elif value.startswith("--"):
            return True
        elif "/" in value or "~" in value:
            return False  # `-rf/home/u/.ssh/id_rsa`: where a bundle's value starts is unknown
        else:
            value = value[2:]
    for part in re.split(r"[=:,]", value):
        if part.startswith("~") or ".." in part.split("/"):
            return False
        if part.startswith("/"):
            normal = os.path.normpath(part)
            root = workspace.rstrip("/") or "/"
            if normal != root and not normal.startswith(root.rstrip("/") + "/"):
                return False
    return True


def _inner_start(values: list[str]) -> int:
    """Where the wrapped command starts (`timeout 5 git push` → 2), 0 when not wrapped."""
    start = 0
    while start < len(values) and _ASSIGNMENT.match(values[start]):
        start += 1
    while start < len(values) and os.path.basename(values[start]) in _WRAPPERS:
        after = _skip_wrapper(os.path.basename(values[start]), values, start + 1)
        if after is None:
            return 0
        start = after
    return start


def describe(prefix: Sequence[str], free: bool) -> str:
    """How a command rule reads in a prompt and a rules list."""
    text = shlex.join(prefix)
    if not free:
        return f"{text} (exactly this command)"
    if _analyse(list(prefix))[1] == SCRIPT_TAIL:
        return f"{text} [-- any arguments inside the workspace]"
    return f"{text} [any arguments inside the workspace]"
