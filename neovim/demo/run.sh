#!/usr/bin/env bash
# `make demo`: Neovim (the one the Makefile installed in the virtualenv) on a fresh copy of the sample
# project, with this plugin and the built-in demo agent. Extra arguments go to nvim (the tests pass
# --headless). Environment: VENV (default: the repository's .venv), ACPLS_DEMO_SPEED (pace).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${VENV:-$repo/.venv}"
case "$venv" in /*) ;; *) venv="$repo/$venv" ;; esac

work="$(mktemp -d "${TMPDIR:-/tmp}/acpls-demo.XXXXXX")"
"$venv/bin/python" -m acpls.demo --copy-workspace "$work/calc" >/dev/null
cd "$work/calc"

# Keep the demo away from the user's own Neovim config, plugins and state.
export XDG_CONFIG_HOME="$work/xdg/config" XDG_DATA_HOME="$work/xdg/data" \
  XDG_STATE_HOME="$work/xdg/state" XDG_CACHE_HOME="$work/xdg/cache"
export PATH="$venv/bin:$PATH"
export ACPLS_CMD="$venv/bin/acpls"
echo "acpls demo: $work/calc (:qa to quit)" >&2
exec "$venv/bin/nvim" -n -i NONE -u "$here/init.lua" "$@" calc.py
