# The six published ACP agents of the full-turn tests (tests/real_agents), included by the
# top-level Makefile.
#   make agents        install the missing ones, in parallel, each into its own npm prefix
#                      .cache/agents/NAME-VERSION/ (reused between runs: a stamp per prefix)
#   make test-agents   full turns of each agent through the real acpls with a scripted model
# A prefix is built under a temporary name and renamed into place when complete, so a failed or
# interrupted install, or two worktrees installing at once, never leaves a half prefix that
# looks installed. tests/real_agents/installed.py reads the lines below (one source of versions).
AGENTS_TEST_TARGETS := test-agents

AGENTS_DIR ?= .cache/agents
AGENTS_PYTEST_WORKERS ?= $(PYTEST_WORKERS)

#            name      npm package                           version   executable
AGENT_claude   := @agentclientprotocol/claude-agent-acp 0.101.0 claude-agent-acp
AGENT_gemini   := @google/gemini-cli                    0.61.0  gemini
AGENT_codex    := @zed-industries/codex-acp             0.16.0  codex-acp
AGENT_opencode := opencode-ai                           1.18.33 opencode
AGENT_qwen     := @qwen-code/qwen-code                  0.24.4  qwen
AGENT_copilot  := @github/copilot                       1.0.102 copilot
AGENT_NAMES    := claude gemini codex opencode qwen copilot

agent_prefix = $(AGENTS_DIR)/$(1)-$(word 2,$(AGENT_$(1)))
AGENT_STAMPS := $(foreach a,$(AGENT_NAMES),$(call agent_prefix,$(a))/.installed)

# Copilot CLI unpacks ~235 MB into COPILOT_CACHE_HOME on its first start: done once here, into a
# cache every test run shares (the tests point COPILOT_CACHE_HOME at the same folder).
COPILOT_CACHE_HOME := $(AGENTS_DIR)/copilot-cache
COPILOT_CACHE_STAMP := $(COPILOT_CACHE_HOME)/.unpacked-$(word 2,$(AGENT_copilot))

.PHONY: agents test-agents agents-install

# One npm install per agent; `make agents` runs them side by side whatever -j make was given.
define agent_rule
$(call agent_prefix,$(1))/.installed:
	@mkdir -p $(AGENTS_DIR)
	@tmp=$$$$(mktemp -d $(AGENTS_DIR)/.partial-$(1)-XXXXXX) \
	  && echo "npm install $(word 1,$(AGENT_$(1)))@$(word 2,$(AGENT_$(1))) -> $$(@D)" \
	  && npm install --prefix "$$$$tmp" --no-audit --no-fund --loglevel=error \
	       $(word 1,$(AGENT_$(1)))@$(word 2,$(AGENT_$(1))) \
	  && test -x "$$$$tmp/node_modules/.bin/$(word 3,$(AGENT_$(1)))" \
	  && touch "$$$$tmp/.installed" \
	  && { mv -T "$$$$tmp" "$$(@D)" 2>/dev/null || rm -rf "$$$$tmp"; } \
	  || { rm -rf "$$$$tmp"; exit 1; }
	@test -f $$@
endef
$(foreach a,$(AGENT_NAMES),$(eval $(call agent_rule,$(a))))

$(COPILOT_CACHE_STAMP): $(call agent_prefix,copilot)/.installed
	@mkdir -p $(COPILOT_CACHE_HOME)
	@home=$$(mktemp -d) && COPILOT_CACHE_HOME=$(abspath $(COPILOT_CACHE_HOME)) HOME=$$home \
	  COPILOT_OFFLINE=true COPILOT_AUTO_UPDATE=false \
	  $(call agent_prefix,copilot)/node_modules/.bin/copilot --version; rc=$$?; rm -rf $$home; exit $$rc
	touch $@

# Codex's default mode runs every command (and its file reads for apply_patch) inside bubblewrap;
# without it each tool call fails. Debian's package, installed only when missing.
AGENTS_APT_STAMP := .cache/apt-agents
$(AGENTS_APT_STAMP):
	@mkdir -p .cache
	@if ! command -v bwrap >/dev/null; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; fi
	touch $@

# One agent alone, for suites that need only it (test-nvim runs a real Claude Code turn).
$(foreach a,$(AGENT_NAMES),$(eval agent-$(a): $(call agent_prefix,$(a))/.installed))
.PHONY: $(addprefix agent-,$(AGENT_NAMES))

agents-install: $(AGENT_STAMPS) $(COPILOT_CACHE_STAMP) $(AGENTS_APT_STAMP)

agents:
	@$(MAKE) --no-print-directory -j6 agents-install

test-agents: $(STAMP) bytecode agents
	ACPLS_AGENTS_DIR=$(abspath $(AGENTS_DIR)) $(PY) -m pytest -q -n $(AGENTS_PYTEST_WORKERS) \
	  -m real_agents tests/real_agents $(PYTEST_ARGS)
