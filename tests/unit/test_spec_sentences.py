"""One test per MUST/SHOULD sentence of the ACP v2 "Tool Calls" text (2026-10 draft) not covered
elsewhere, named after the sentence. The terminal sentences are in test_terminals.py
(`test_cwd_must_be_absolute`, `test_output_snapshot_replaces_all_previous_bytes_never_spliced`,
`test_chunks_decoded_separately_not_concatenated_before_decoding`, ...) and the diff sentences in
test_diffs.py (`test_patch_must_be_consistent_with_changes_mismatch_reported`,
`test_agents_should_provide_patch_whenever_feasible_and_it_is_used_when_given`,
`test_clients_must_handle_diffs_where_patch_is_omitted_or_null`)."""

from __future__ import annotations

import copy

from acpls.acp.converter import structure
from acpls.acp.models import RequestPermissionRequest
from acpls.translate import permissions as perm
from acpls.translate.session_updates import SessionUpdateNormalizer
from acpls.translate.terminals import TerminalStore
from acpls.translate.tool_calls import is_in_progress

OPTIONS = [
    {"optionId": "a", "name": "Allow", "kind": "allow_once"},
    {"optionId": "c", "name": "Escalate", "kind": "_acme_escalate"},
    {"optionId": "f", "name": "Defer", "kind": "defer"},
]


def request(options: list[dict]) -> RequestPermissionRequest:
    return structure({"sessionId": "s", "options": options}, RequestPermissionRequest)


def _tool_call_updates(normalizer: SessionUpdateNormalizer, update: dict) -> list[dict]:
    result = normalizer.normalize(update)
    return [u["toolCall"] for u in result.editor_updates if u["sessionUpdate"] == "tool_call"]


def test_custom_permission_kinds_must_begin_with_underscore_and_are_offered_unchanged() -> None:
    offered = perm.offered_options(request(copy.deepcopy(OPTIONS)))
    assert [o["kind"] for o in offered] == ["allow_once", "_acme_escalate", "defer"]
    assert perm.outcome_for_title(offered, "Escalate") == perm.selected("c")


def test_clients_that_do_not_understand_a_kind_should_preserve_it_and_treat_it_generically() -> (
    None
):
    offered = perm.offered_options(request(copy.deepcopy(OPTIONS)))
    assert offered[2] == OPTIONS[2]  # the unknown `defer` kind is kept as sent
    assert perm.kind_label("defer") == "defer"  # shown by its own name, as a plain option
    assert perm.outcome_for_option_id(offered, "f") == perm.selected("f")


def test_custom_status_values_must_begin_with_underscore_and_count_as_in_progress() -> None:
    normalizer = SessionUpdateNormalizer(2)
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "_acme_waiting"}
    (call,) = _tool_call_updates(normalizer, update)
    assert call["status"] == "_acme_waiting"
    assert is_in_progress("_acme_waiting")


def test_unknown_non_underscore_statuses_are_reserved_kept_and_in_progress() -> None:
    normalizer = SessionUpdateNormalizer(2)
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "queued_remotely"}
    (call,) = _tool_call_updates(normalizer, update)
    assert call["status"] == "queued_remotely"
    assert is_in_progress("queued_remotely")


def test_implementations_should_preserve_unknown_content_when_storing_replaying_forwarding() -> (
    None
):
    odd = {"type": "_acme_chart", "series": [1, 2, 3], "_meta": {"class": 1, "zed.dev": 2}}
    normalizer = SessionUpdateNormalizer(1)
    first = {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Plot", "content": [odd]}
    (stored,) = _tool_call_updates(normalizer, first)
    assert stored["content"] == [odd]  # forwarded
    later = {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed"}
    (merged,) = _tool_call_updates(normalizer, later)
    assert merged["content"] == [odd]  # stored across updates
    normalizer.replay_mode(True)
    replayed = normalizer.normalize(first)
    normalizer.replay_mode(False)
    calls = [u["toolCall"] for u in replayed.editor_updates if u["sessionUpdate"] == "tool_call"]
    assert all(c["content"] == [odd] for c in calls)  # replayed without loss


def test_terminal_id_must_not_be_reused_so_clients_key_state_by_session_and_id() -> None:
    store = TerminalStore()
    store.apply_update("s1", {"terminalId": "term", "command": "make"})
    store.apply_update("s2", {"terminalId": "term", "command": "pytest"})
    first, second = store.state("s1", "term"), store.state("s2", "term")
    assert first is not None and second is not None
    assert (first.command, second.command) == ("make", "pytest")


def test_terminal_id_is_independent_of_tool_call_id_even_when_equal() -> None:
    store = TerminalStore()
    store.set_tool_call("s", "same", "same")
    store.apply_update("s", {"terminalId": "same", "command": "ls"})
    state = store.state("s", "same")
    assert state is not None and state.tool_call_id == "same" and state.command == "ls"
