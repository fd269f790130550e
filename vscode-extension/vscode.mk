# VS Code extension (included by the top-level Makefile).
#   make vsix          dist/acpls-<version>-<target>.vsix for each VS Code target, each with the
#                      acpls server, its dependencies for that platform and that platform's uv
#   make test-vsix     checks what each package holds (wheels, modules, uv's architecture)
#   make test-ts       tsc --strict on every TypeScript file, then the unit tests (node:test)
#   make test-vscode   end to end in a real VS Code: code-server + Debian chromium + playwright-core
#   make lint-ts       tsc --strict only
#   make bench-vscode  speed in a real VS Code against its own terminal (bench/README.md); also
#                      part of `make bench-editors`
# Everything is installed here, once, behind stamps under .cache/ (a fresh Debian machine needs
# nothing else). Installs are kept between runs: delete .cache/vscode to start over.

VSX_DIR           := vscode-extension
VSX_CACHE         := .cache/vscode
VSX_APT_PACKAGES  := chromium ripgrep build-essential pkg-config libkrb5-dev libxkbfile-dev libsecret-1-dev libx11-dev
VSX_APT_STAMP     := $(VSX_CACHE)/apt.stamp
# In node_modules itself: each checkout (and worktree) has its own node_modules.
VSX_NPM_STAMP     := $(VSX_DIR)/node_modules/.acpls-npm.stamp
# code-server 4.100.3 serves VS Code 1.100.3 and runs on Node 20 (the machine's); the extension's
# engines.vscode is ^1.100.0 to match.
CODE_SERVER_VERSION := 4.100.3
CODE_SERVER_DIR   := $(VSX_CACHE)/code-server-$(CODE_SERVER_VERSION)
CODE_SERVER_STAMP := $(CODE_SERVER_DIR).stamp
CODE_SERVER       := $(CODE_SERVER_DIR)/node_modules/code-server/out/node/entry.js
CODE_SERVER_VSCODE := $(CODE_SERVER_DIR)/node_modules/code-server/lib/vscode
VSX_VERSION       := $(shell sed -n 's/^__version__ = "\(.*\)"/\1/p' server/acpls/__init__.py)
VSX_TARGETS       := linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64
# The uv each package carries (PyPI's uv wheel for the target): it gets a Python where none is.
VSX_UV_VERSION    := 0.13.9
# npm's CLI (pure JavaScript, its dependencies inside its tarball): VS Code ships a Node but no
# npm, and agents whose PATH has no node run `npx` on VS Code's Node with it (model/editorNode.ts).
# npm 10 runs on every Node VS Code 1.100+ ships.
VSX_NPM_CLI_VERSION := 10.9.2
VSX_NPM_CLI        = $(VSX_BUILD)/npm-cli/package
vsix_of            = dist/acpls-$(VSX_VERSION)-$(1).vsix
VSIXES            := $(foreach t,$(VSX_TARGETS),$(call vsix_of,$(t)))
# The package the end-to-end tests install (this machine's).
VSIX              := $(call vsix_of,linux-x64)
VSX_BUILD         := build/vsix
VSX_WHEEL         := $(VSX_BUILD)/wheel/acpls-$(VSX_VERSION)-py3-none-any.whl
VSX_SOURCES       := $(shell find $(VSX_DIR)/src $(VSX_DIR)/media -type f 2>/dev/null) \
                     $(VSX_DIR)/package.json $(VSX_DIR)/esbuild.mjs $(VSX_DIR)/.vscodeignore $(VSX_DIR)/README.md
VSX_SERVER_SOURCES := pyproject.toml $(shell find server/acpls -name '*.py' 2>/dev/null)
VSX_ARTIFACTS     := test-artifacts/vscode
VSX_E2E_PYTHON    := $(firstword $(wildcard /usr/bin/python3) $(abspath $(PY)))

VSCODE_TEST_TARGETS := test-ts test-dist test-vscode

.PHONY: vsix test-vsix test-ts test-vscode lint-ts vscode-deps code-server bench-vscode

# Debian packages: chromium for the browser, ripgrep for VS Code's search, and the headers that
# code-server's native modules compile against. Only what is missing is installed.
$(VSX_APT_STAMP):
	@mkdir -p $(@D)
	@missing=$$(for p in $(VSX_APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "apt-get install $$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; fi
	touch $@

# The extension's npm packages, exactly as locked.
$(VSX_NPM_STAMP): $(VSX_DIR)/package.json $(VSX_DIR)/package-lock.json
	@mkdir -p $(@D)
	cd $(VSX_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# code-server from npm. Its postinstall cannot run here (it refuses root, downloads ripgrep from
# GitHub, and node-gyp asks before installing), so it is installed with --ignore-scripts and the
# postinstall's steps are done by hand: VS Code's production dependencies, the native modules
# rebuilt from source, Debian's rg in place of the downloaded one, and the symlinks it makes.
$(CODE_SERVER_STAMP): | $(VSX_APT_STAMP)
	rm -rf $(CODE_SERVER_DIR) && mkdir -p $(CODE_SERVER_DIR)
	cd $(CODE_SERVER_DIR) && npm install --no-audit --no-fund --loglevel=error --ignore-scripts code-server@$(CODE_SERVER_VERSION)
	cd $(CODE_SERVER_DIR) && npm_config_yes=true npm rebuild --loglevel=error argon2
	cd $(CODE_SERVER_VSCODE) && npm install --no-audit --no-fund --loglevel=error --omit=dev --ignore-scripts
	cd $(CODE_SERVER_VSCODE) && npm_config_yes=true npm rebuild --loglevel=error \
	  @parcel/watcher @vscode/deviceid @vscode/spdlog kerberos native-watchdog node-pty
	mkdir -p $(CODE_SERVER_VSCODE)/node_modules/@vscode/ripgrep/bin
	cp "$$(command -v rg)" $(CODE_SERVER_VSCODE)/node_modules/@vscode/ripgrep/bin/rg
	ln -sfn node_modules $(CODE_SERVER_VSCODE)/node_modules.asar
	ln -sfn code-linux.sh $(CODE_SERVER_VSCODE)/bin/remote-cli/code-server
	ln -sfn browser-linux.sh $(CODE_SERVER_VSCODE)/bin/helpers/browser.sh
	cd $(CODE_SERVER_VSCODE)/extensions && npm install --no-audit --no-fund --loglevel=error --omit=dev --ignore-scripts \
	  && node postinstall.mjs >/dev/null
	printf 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n' > $(VSX_CACHE)/code-server.yaml
	node $(CODE_SERVER) --config $(VSX_CACHE)/code-server.yaml --version
	touch $@
code-server: $(CODE_SERVER_STAMP)

vscode-deps: $(VSX_APT_STAMP) $(VSX_NPM_STAMP) $(CODE_SERVER_STAMP)

# The server as one pure wheel, then per target: that wheel installed for the target's platform and
# CPython 3.11 to 3.14 (compiled modules side by side), plus uv (scripts/bundle.py).
$(VSX_WHEEL): $(VSX_SERVER_SOURCES) | $(STAMP)
	rm -rf $(@D) && mkdir -p $(@D)
	set -o pipefail; $(PIP) wheel -q --no-deps --disable-pip-version-check -w $(@D) . 2>&1 \
	  | { grep -v '^WARNING: Location' || true; }

$(VSX_BUILD)/%/.bundled: $(VSX_WHEEL) $(VSX_DIR)/scripts/bundle.py
	set -o pipefail; $(PY) $(VSX_DIR)/scripts/bundle.py $* $(VSX_WHEEL) $(VSX_BUILD)/$*/bundled \
	  --uv-version $(VSX_UV_VERSION) 2>&1 | { grep -v '^WARNING: Location' || true; }
	touch $@

$(VSX_NPM_CLI)/.unpacked:
	rm -rf $(VSX_BUILD)/npm-cli && mkdir -p $(VSX_BUILD)/npm-cli
	cd $(VSX_BUILD)/npm-cli && npm pack --silent --loglevel=error npm@$(VSX_NPM_CLI_VERSION) >/dev/null \
	  && tar xzf npm-$(VSX_NPM_CLI_VERSION).tgz && test -f package/bin/npx-cli.js
	touch $@

# Each package is made from a staging copy of the extension with only its target's bundle, so the
# five can be built one after another (or at once) without touching vscode-extension/.
$(VSX_BUILD)/extension.built: $(VSX_NPM_STAMP) $(VSX_SOURCES)
	@v=$$(node -p "require('./$(VSX_DIR)/package.json').version"); \
	  if [ "$$v" != "$(VSX_VERSION)" ]; then echo "package.json version $$v differs from acpls $(VSX_VERSION)"; exit 1; fi
	cd $(VSX_DIR) && node esbuild.mjs --production
	@mkdir -p $(@D) && touch $@

dist/acpls-$(VSX_VERSION)-%.vsix: $(VSX_BUILD)/%/.bundled $(VSX_BUILD)/extension.built $(VSX_NPM_CLI)/.unpacked LICENSE
	@mkdir -p $(@D)
	rm -rf $(VSX_BUILD)/$*/stage && mkdir -p $(VSX_BUILD)/$*/stage
	cp -r $(VSX_DIR)/package.json $(VSX_DIR)/README.md $(VSX_DIR)/.vscodeignore $(VSX_DIR)/dist \
	  $(VSX_DIR)/media $(VSX_BUILD)/$*/bundled $(VSX_BUILD)/$*/stage/
	cp -r $(VSX_NPM_CLI) $(VSX_BUILD)/$*/stage/bundled/npm && rm -f $(VSX_BUILD)/$*/stage/bundled/npm/.unpacked
	cp LICENSE $(VSX_BUILD)/$*/stage/LICENSE.txt
	cd $(VSX_BUILD)/$*/stage && $(abspath $(VSX_DIR))/node_modules/.bin/vsce package --no-dependencies \
	  --target $* --allow-missing-repository --out $(abspath $@) >/dev/null
	@echo "built $@"

# Keep each target's bundle between runs (make would delete it as an intermediate file).
.PRECIOUS: $(VSX_BUILD)/%/.bundled

vsix: $(VSIXES)

test-vsix: $(VSIXES) $(STAMP)
	VSIX_DIR=$(abspath dist) VSIX_VERSION=$(VSX_VERSION) $(PY) -m pytest -q -p no:cacheprovider \
	  -m vsix tests/install/test_vsix.py $(PYTEST_ARGS)

lint-ts: $(VSX_NPM_STAMP)
	cd $(VSX_DIR) && npm run -s lint

test-ts: lint-ts
	cd $(VSX_DIR) && npm test -s

# End to end: code-server on 127.0.0.1 with the .vsix installed, driven by playwright-core in
# chromium, with the demo agent, scripted agents, and the real Claude Code (realClaude.test.ts: its
# pinned adapter is installed first, `agent-claude` of tests/real_agents/agents.mk, a no-op once
# installed; the scripted model server runs on the venv's Python, TEST_PYTHON). Screenshots of each
# step land in test-artifacts/vscode/. The server runs on Debian's python3 (not the venv), so it
# can only import what the .vsix bundles.
test-vscode: $(VSIX) $(CODE_SERVER_STAMP) $(VSX_APT_STAMP) $(STAMP) agent-claude
	@rm -rf $(VSX_ARTIFACTS) && mkdir -p $(VSX_ARTIFACTS)
	cd $(VSX_DIR) && node esbuild.mjs --e2e
	CODE_SERVER="$(abspath $(CODE_SERVER))" VSIX="$(abspath $(VSIX))" ACPLS_PYTHON="$(VSX_E2E_PYTHON)" \
	  UV_ARCHIVE_PYTHON="$(abspath $(PY))" TEST_PYTHON="$(abspath $(PY))" \
	  ARTIFACTS="$(abspath $(VSX_ARTIFACTS))" REPO_ROOT="$(CURDIR)" \
	  node --test --test-reporter=spec --test-timeout=240000 $(VSX_DIR)/out/test/e2e/

# Speed in a real VS Code (issue #18): the agent's terminal and panel against VS Code's integrated
# terminal fed the same bytes, in the same run; PASS / FALL SHORT per target, the VS Code block of
# bench/RESULTS.md rewritten. RUNS=N runs per figure (default 3). Timing only here, never in tests.
bench-vscode: $(VSIX) $(CODE_SERVER_STAMP) $(VSX_APT_STAMP) $(STAMP)
	@rm -rf $(VSX_ARTIFACTS)-bench && mkdir -p $(VSX_ARTIFACTS)-bench
	cd $(VSX_DIR) && node esbuild.mjs --bench
	CODE_SERVER="$(abspath $(CODE_SERVER))" VSIX="$(abspath $(VSIX))" ACPLS_PYTHON="$(VSX_E2E_PYTHON)" \
	  ARTIFACTS="$(abspath $(VSX_ARTIFACTS))-bench" REPO_ROOT="$(CURDIR)" \
	  node $(VSX_DIR)/out/test/bench/editors.js

