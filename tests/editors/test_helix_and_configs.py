"""Helix cannot be installed here (not in Debian, no registry package), so its configuration is
validated against what Helix documents, and the one Helix behaviour acpls must cope with is
reproduced with a generic LSP client. The legacy kak-lsp.toml is validated the same way."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pygls.exceptions import JsonRpcException
from pytest_lsp.client import captured_exception_key

from acpls.settings import parse_settings
from tests.e2e.conftest import command, scripted, start
from tests.e2e.test_core import permission_answers, permission_script
from tests.editors.conftest import EDITORS

HELIX = EDITORS / "helix" / "languages.toml"
KAK_LSP_TOML = EDITORS / "kakoune" / "kak-lsp.toml"

# From Helix's book (languages.md): the keys of a [language-server.<name>] table ...
HELIX_SERVER_KEYS = {
    "command",
    "args",
    "config",
    "timeout",
    "environment",
    "required-root-patterns",
}
# ... and of a [[language]] entry.
HELIX_LANGUAGE_KEYS = {
    "name", "language-id", "scope", "injection-regex", "file-types", "shebangs", "roots",
    "auto-format", "diagnostic-severity", "comment-tokens", "comment-token",
    "block-comment-tokens", "indent", "language-servers", "grammar", "formatter", "soft-wrap",
    "text-width", "rulers", "path-completion", "word-completion", "workspace-lsp-roots",
    "persistent-diagnostic-sources", "rainbow-brackets", "code-actions-on-save",
}  # fmt: skip
# Helix 25.07.1's own servers for these languages (its languages.toml): a user's list replaces
# them, so the configuration must keep them and only add acpls.
HELIX_25_07_SERVERS = {
    "python": ["ty", "ruff", "jedi", "pylsp"],
    "rust": ["rust-analyzer"],
    "typescript": ["typescript-language-server"],
    "javascript": ["typescript-language-server"],
    "go": ["gopls", "golangci-lint-lsp"],
    "c": ["clangd"],
    "cpp": ["clangd"],
    "markdown": ["marksman", "markdown-oxide"],
}
# kak-lsp 15/16 (kak-lsp.toml): the keys of a [language_server.<name>] table.
KAK_LSP_SERVER_KEYS = {
    "filetypes", "roots", "command", "args", "settings_section", "settings",
    "offset_encoding", "experimental", "workaround_eslint",
}  # fmt: skip


def load(path: Path) -> dict[str, Any]:
    with path.open("rb") as handle:
        return tomllib.load(handle)


def test_helix_server_table_uses_documented_keys_and_valid_settings():
    server = load(HELIX)["language-server"]["acpls"]
    assert set(server) <= HELIX_SERVER_KEYS
    assert server["command"] == "acpls"
    # A prompt is one executeCommand request for the whole turn: Helix's 20 s default would cut it.
    assert server["timeout"] >= 600
    settings, problems = parse_settings(server["config"])
    assert problems == []
    assert settings.agent.name == "claude"


def test_helix_languages_keep_their_servers_and_add_acpls():
    languages = load(HELIX)["language"]
    assert {entry["name"] for entry in languages} == set(HELIX_25_07_SERVERS)
    for entry in languages:
        assert set(entry) <= HELIX_LANGUAGE_KEYS, entry
        assert entry["language-servers"] == [*HELIX_25_07_SERVERS[entry["name"]], "acpls"]


def test_legacy_kak_lsp_toml():
    server = load(KAK_LSP_TOML)["language_server"]["acpls"]
    assert set(server) <= KAK_LSP_SERVER_KEYS
    assert server["command"] == "acpls"
    settings, problems = parse_settings(server["settings"][server["settings_section"]])
    assert problems == []
    assert settings.follow_enabled is True


async def test_permission_when_the_editor_rejects_show_message_request(
    client, workspace: Path, tmp_path: Path
):
    """Helix 25.07 answers window/showMessageRequest with MethodNotFound: the prompt counts as
    dismissed (the agent's reject_once option), and the turn goes on."""

    def method_not_found(_params: Any) -> Any:
        raise JsonRpcException(code=-32601, message="Method not found")

    client.answer_message_request = method_not_found
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, scripted(permission_script(1), log), custom=False)
    result = await command(client, "acpls.prompt", {"text": "fix it"})
    assert result["stopReason"] == "end_turn"
    assert len(client.message_requests) == 1
    assert permission_answers(log) == [{"outcome": {"outcome": "selected", "optionId": "reject"}}]
    # pytest-lsp reports any exception raised in a client handler as a failure; here it is the
    # editor's answer under test.
    client._pytest_item.stash[captured_exception_key] = None
