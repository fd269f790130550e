# Plain LSP editors and interop with published ACP agents; included by the top-level Makefile.
#   make test-editors   Emacs 28 + eglot (Debian) driven in batch mode with editors/emacs/acpls-eglot.el,
#                       the Kakoune configuration checked in a real Kakoune, the Helix one validated
#   make test-interop   the ACP Python SDK's example agent and npm claude-agent-acp through acpls
# Installs are cached: stamps under .cache/, npm and the SDK's sdist under .cache/interop/.
EDITORS_TEST_TARGETS := test-editors test-interop

EDITORS_APT_STAMP  := .cache/apt-editors
INTEROP_DIR        := .cache/interop
ACP_SDK_VERSION    := 0.12.1
CLAUDE_ACP_VERSION := 0.101.0
ACP_SDK_EXAMPLES   := $(INTEROP_DIR)/agent_client_protocol-$(ACP_SDK_VERSION)/examples
CLAUDE_ACP_STAMP   := $(INTEROP_DIR)/.claude-agent-acp-$(CLAUDE_ACP_VERSION)
EDITORS_PYTEST_WORKERS ?= $(PYTEST_WORKERS)

.PHONY: test-editors test-interop editors-deps interop-deps

# Debian's emacs-nox (28) with elpa-eglot (1.9), and kakoune; installed only when missing.
$(EDITORS_APT_STAMP):
	@mkdir -p .cache
	@if ! command -v emacs >/dev/null || ! command -v kak >/dev/null \
	    || ! emacs --batch --eval "(require 'eglot)" >/dev/null 2>&1; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    emacs-nox elpa-eglot kakoune; fi
	touch $@
editors-deps: $(EDITORS_APT_STAMP)

# The SDK's example agents ship only in its sdist.
$(ACP_SDK_EXAMPLES)/echo_agent.py: | $(STAMP)
	@mkdir -p $(INTEROP_DIR)/sdist
	$(PIP) download -q --no-deps --no-binary :all: agent-client-protocol==$(ACP_SDK_VERSION) \
	  -d $(INTEROP_DIR)/sdist
	tar -xzf $(INTEROP_DIR)/sdist/agent_client_protocol-$(ACP_SDK_VERSION).tar.gz -C $(INTEROP_DIR)
	touch $@

$(CLAUDE_ACP_STAMP):
	@mkdir -p $(INTEROP_DIR)
	npm install --prefix $(INTEROP_DIR) --no-audit --no-fund --loglevel=error \
	  @agentclientprotocol/claude-agent-acp@$(CLAUDE_ACP_VERSION)
	touch $@
interop-deps: $(ACP_SDK_EXAMPLES)/echo_agent.py $(CLAUDE_ACP_STAMP)

test-editors: $(STAMP) bytecode $(EDITORS_APT_STAMP)
	ACPLS_REQUIRE_EDITORS=1 $(PY) -m pytest -q -n $(EDITORS_PYTEST_WORKERS) -m editors tests/editors $(PYTEST_ARGS)

test-interop: $(STAMP) bytecode interop-deps
	ACPLS_REQUIRE_INTEROP=1 $(PY) -m pytest -q -n $(EDITORS_PYTEST_WORKERS) -m interop tests/interop $(PYTEST_ARGS)
