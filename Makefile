# acpls: every set-up step lives here, so a fresh Debian machine needs only `make demo` or `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV      ?= .venv
PY        := $(VENV)/bin/python
PIP       := $(PY) -m pip
STAMP     := $(VENV)/.installed
PYTEST_ARGS ?=
# Two cores on CI: run the Python suite on both.
PYTEST_WORKERS ?= 2

.PHONY: help venv bytecode test test-python lint lint-workflows demo demo-transcript bench bench-editors bench-nvim stress clean apt-base update-schemas dist test-dist update-registry

help:
	@echo "make demo             the whole product on the built-in demo agent (no API key)"
	@echo "make demo-transcript  the demo turn as a live transcript of what the editor receives"
	@echo "make test             every test (Python, Neovim, VS Code, TypeScript, Lua fixtures)"
	@echo "make bench            benchmarks against baselines measured in the same run"
	@echo "make bench-editors    the same in a real VS Code and a real Neovim: terminal panes, latency, chat load"
	@echo "make stress           long fuzzing and load runs"
	@echo "make lint             ruff, pyright, tsc --strict and the release workflows"
	@echo "make dist             the release: wheel, sdist, five .vsix and SHA256SUMS in dist/, each checked"
	@echo "make update-schemas   refresh editors/acp-schema/ from npm @agentclientprotocol/sdk (ACP_SCHEMA_VERSION=x.y.z)"
	@echo "make update-registry  refresh the bundled ACP registry snapshot from the published registry (REGISTRY_URL=...)"

# Python: one virtualenv with the package (editable) and everything the tests need.
$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[test,dev]'
	touch $@

venv: $(STAMP)

# acpls' bytecode, as pip compiles it when it installs a package. An editable install has none,
# and where PYTHONDONTWRITEBYTECODE=1 is set (this machine, CI) Python never writes it: every acpls
# start compiled every acpls module again (~0.4 s of CPU, 0.2 s of it the core, which is built
# just as an editor's first request arrives). Cheap when nothing changed (one stat a module).
# The bench scripts compile it themselves (bench/bytecode.py): they also run without make.
bytecode: $(STAMP)
	@$(PY) -m compileall -q server/acpls

# Debian packages shared by several targets (apt-get update only once per run).
APT_STAMP := .cache/apt-base
$(APT_STAMP):
	@mkdir -p .cache
	@if ! command -v git >/dev/null || ! command -v script >/dev/null; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq git procps bsdutils; fi
	touch $@
apt-base: $(APT_STAMP)

test-python: $(STAMP) bytecode apt-base
	$(PY) -m pytest -q -n $(PYTEST_WORKERS) -m "not nvim and not vscode and not vsix and not slow and not editors and not interop and not real_agents" $(PYTEST_ARGS)

lint: $(STAMP) lint-workflows
	$(VENV)/bin/ruff check server tests bench
	$(VENV)/bin/ruff format --check server tests bench
	$(VENV)/bin/pyright

# The public repository's workflows (.github/): GitHub's workflow schema (vendored in
# check-jsonschema) and zizmor's security audits, both offline. Nothing here can run them.
lint-workflows: $(STAMP)
	$(VENV)/bin/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml
	$(VENV)/bin/zizmor --offline --quiet --config .github/zizmor.yml .github/workflows/

demo-transcript: $(STAMP) bytecode
	$(PY) -m acpls.demo.transcript

bench: $(STAMP)
	$(PY) bench/run.py

# What the user feels in real editors (issue 18), separate from `make bench` (~20 minutes): VS Code
# (bench-vscode, vscode-extension/vscode.mk) and Neovim (bench-nvim: terminal panes vs Neovim's own
# terminal, key and RPC latency while streaming, chat load at 5k/10k/20k updates). Each part runs
# even when one before it falls short (a part's exit status is 1 then), and each records its
# figures in bench/RESULTS.md; the exit status is 0 only when every part passed.
BENCH_EDITOR_PARTS ?= bench-vscode bench-nvim
bench-editors:
	@status=0; for part in $(BENCH_EDITOR_PARTS); do \
	  $(MAKE) --no-print-directory $$part || { echo "make $$part: FALL SHORT or failed"; status=1; }; \
	done; exit $$status

bench-nvim: $(STAMP)
	$(PY) bench/nvim_editor.py $(NVIM_BENCH_ARGS)

# The vendored ACP JSON Schemas (editors/acp-schema/SOURCE.txt): newest release unless a version is given.
ACP_SCHEMA_VERSION ?=
update-schemas:
	editors/acp-schema/update.sh $(ACP_SCHEMA_VERSION)

# The bundled registry snapshot (server/acpls/registry/SNAPSHOT.md): the published registry.json
# unless a URL is given; checked with acpls' own parser before anything is written.
REGISTRY_URL ?=
update-registry: $(STAMP)
	PYTHONPATH=server $(PY) -m acpls.registry.update $(if $(REGISTRY_URL),--url $(REGISTRY_URL))

# A release in dist/: the wheel and the sdist (`python -m build`, `twine check --strict`), the five
# .vsix (vscode-extension/vscode.mk), SHA256SUMS; then tests/install/test_dist.py and test_vsix.py
# check what each holds and start the ones this machine can run. .github/workflows/release.yml
# publishes what this makes.
DIST_VERSION = $(shell sed -n 's/^__version__ = "\(.*\)"/\1/p' server/acpls/__init__.py)
dist: $(STAMP) vsix
	rm -f dist/acpls-*.whl dist/acpls-*.tar.gz dist/SHA256SUMS
	set -o pipefail; $(PY) -m build -q --outdir dist . 2>&1 | { grep -v '^WARNING: Location' || true; }
	$(PY) -m twine check --strict dist/acpls-$(DIST_VERSION)-py3-none-any.whl dist/acpls-$(DIST_VERSION).tar.gz
	cd dist && sha256sum acpls-$(DIST_VERSION)-py3-none-any.whl acpls-$(DIST_VERSION).tar.gz \
	  acpls-$(DIST_VERSION)-*.vsix > SHA256SUMS
	VSIX_DIR=$(abspath dist) VSIX_VERSION=$(DIST_VERSION) $(PY) -m pytest -q -p no:cacheprovider \
	  -m vsix tests/install/test_dist.py tests/install/test_vsix.py $(PYTEST_ARGS)
	@echo "dist/ holds acpls $(DIST_VERSION): $$(ls dist | tr '\n' ' ')"

test-dist: dist

stress: $(STAMP) bytecode
	$(PY) -m pytest -q -m "slow" $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .cache build dist test-artifacts \
	  vscode-extension/node_modules vscode-extension/out vscode-extension/dist vscode-extension/bundled

# Front ends bring their own targets: test-nvim, demo-nvim (neovim/neovim.mk); test-vscode,
# test-ts, vsix (vscode-extension/vscode.mk); test-editors, test-interop (editors/editors.mk).
-include neovim/neovim.mk
-include vscode-extension/vscode.mk
-include editors/editors.mk
-include tests/real_agents/agents.mk
# tsc --strict for the extension is part of `make lint` when its fragment is here.
lint: $(if $(VSCODE_TEST_TARGETS),lint-ts)

TEST_TARGETS := test-python $(NVIM_TEST_TARGETS) $(EDITORS_TEST_TARGETS) $(VSCODE_TEST_TARGETS) \
  $(AGENTS_TEST_TARGETS)
test: $(TEST_TARGETS)
	@echo "all test suites passed: $(TEST_TARGETS)"

DEMO_TARGET ?= demo-transcript
demo: $(DEMO_TARGET)
