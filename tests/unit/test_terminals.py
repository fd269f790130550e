"""TerminalStore: one test per sentence of the "Display-only Terminals" section of the ACP v2 "Tool
Calls" text (2026-10 draft) and of editors/protocol.md section 6, plus the editor-facing behaviour
(editors/protocol.md 5.5, 5.6, 10)."""

from __future__ import annotations

import base64
import itertools
import logging
from typing import Any

import pytest

from acpls.translate.terminals import (
    MAX_OUTPUT_CHARS,
    OutputBatch,
    StateUpdate,
    TerminalState,
    TerminalStore,
    raw_output_text,
    split_output,
)

S = "sess_1"
T = "term_001"
ESC = "\x1b"


def b64(data: bytes | str) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return base64.b64encode(raw).decode("ascii")


def update(**fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "terminal_update", "terminalId": T, **fields}


def shown(store: TerminalStore, session_id: str = S, terminal_id: str = T) -> dict[str, Any]:
    state = store.state(session_id, terminal_id)
    assert state is not None
    return state.to_editor()


def pulled_text(store: TerminalStore) -> str:
    return "".join(batch.text for batch in store.take_output())


@pytest.fixture
def store() -> TerminalStore:
    return TerminalStore()


# -- the terminal content item ------------------------------------------------------------


def test_terminal_content_item_references_an_agent_owned_terminal_by_id(
    store: TerminalStore,
) -> None:
    store.apply_update(S, update(command="cargo test"))
    store.set_tool_call(S, T, "call_1")
    assert shown(store) == {
        "sessionId": S,
        "terminalId": T,
        "command": "cargo test",
        "toolCallId": "call_1",
        "owner": "agent",
    }


def test_reference_is_only_a_display_anchor(store: TerminalStore) -> None:
    store.apply_update(S, update(output={"data": b64("kept")}))
    store.take_output()
    store.set_tool_call(S, T, "call_1")
    state = store.state(S, T)
    assert state is not None
    assert not state.exited
    assert store.output_text(S, T) == "kept"
    assert store.take_output() == []


def test_terminal_update_without_terminal_id_is_ignored_and_logged(
    store: TerminalStore, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="acpls.translate.terminals"):
        store.apply_update(S, {"sessionUpdate": "terminal_update", "command": "ls"})
    assert store.terminals(S) == []
    assert "terminalId" in caplog.text


def test_content_item_meta_does_not_touch_terminal_meta(store: TerminalStore) -> None:
    store.apply_update(S, update(_meta={"a": 1}))
    store.set_tool_call(S, T, "call_1")
    state = store.state(S, T)
    assert state is not None and state.meta == {"a": 1}


def test_terminal_id_is_unique_within_its_session_only(store: TerminalStore) -> None:
    store.apply_update("s1", update(command="one"))
    store.apply_update("s2", update(command="two"))
    assert shown(store, "s1")["command"] == "one"
    assert shown(store, "s2")["command"] == "two"


def test_terminal_id_remains_stable_for_the_terminal_lifetime(store: TerminalStore) -> None:
    store.apply_update(S, update(command="make"))
    store.append_chunk(S, T, b64("a"))
    store.apply_update(S, update(exitStatus={"exitCode": 0}))
    assert [state.terminal_id for state in store.terminals(S)] == [T]
    assert store.output_text(S, T) == "a"


def test_terminal_id_independent_of_tool_call_id_even_when_equal(store: TerminalStore) -> None:
    store.set_tool_call(S, "same", "same")
    store.set_tool_call(S, "other", "same")
    assert shown(store, S, "same")["toolCallId"] == "same"
    assert shown(store, S, "other")["toolCallId"] == "same"
    assert store.state(S, "call_without_terminal") is None


def test_reference_and_updates_in_either_order(store: TerminalStore) -> None:
    reference_first = TerminalStore()
    reference_first.set_tool_call(S, T, "call_1")
    reference_first.apply_update(S, update(command="ls", cwd="/ws"))
    reference_first.append_chunk(S, T, b64("out"))

    updates_first = TerminalStore()
    updates_first.apply_update(S, update(command="ls", cwd="/ws"))
    updates_first.append_chunk(S, T, b64("out"))
    updates_first.set_tool_call(S, T, "call_1")

    assert shown(reference_first) == shown(updates_first)
    assert pulled_text(reference_first) == pulled_text(updates_first) == "out"


def test_first_seen_terminal_id_state_is_retained_until_the_reference_arrives(
    store: TerminalStore,
) -> None:
    store.append_chunk(S, T, b64("early output"))
    store.apply_update(S, update(command="npm test"))
    store.take_output()
    store.take_state_changes()
    store.set_tool_call(S, T, "call_9")
    assert shown(store)["command"] == "npm test"
    assert store.output_text(S, T) == "early output"
    assert [state.to_editor()["toolCallId"] for state in store.take_state_changes()] == ["call_9"]


def test_first_reference_keeps_the_tool_call(store: TerminalStore) -> None:
    store.set_tool_call(S, T, "call_1")
    store.set_tool_call(S, T, "call_2")
    assert shown(store)["toolCallId"] == "call_1"


# -- terminal_update ----------------------------------------------------------------------


def test_terminal_update_is_an_upsert_keyed_by_terminal_id(store: TerminalStore) -> None:
    store.apply_update(S, update(command="a"))
    store.apply_update(S, update(cwd="/ws"))
    store.apply_update(S, {**update(command="b"), "terminalId": "term_002"})
    assert shown(store) == {
        "sessionId": S,
        "terminalId": T,
        "command": "a",
        "cwd": "/ws",
        "owner": "agent",
    }
    assert shown(store, S, "term_002")["command"] == "b"


def test_terminal_update_omitted_field_leaves_previous_value_unchanged(
    store: TerminalStore,
) -> None:
    store.apply_update(
        S,
        update(
            command="cargo test",
            cwd="/home/user/project",
            exitStatus={"exitCode": 0},
            size={"cols": 80, "rows": 24},
            capabilities={"cancel": {}},
            _meta={"k": "v"},
            output={"data": b64("snap")},
        ),
    )
    store.apply_update(S, update())
    state = store.state(S, T)
    assert state is not None
    assert state.command == "cargo test"
    assert state.cwd == "/home/user/project"
    assert state.exit_status is not None and state.exit_status.exit_code == 0
    assert state.size == {"cols": 80, "rows": 24}
    assert state.capabilities == {"cancel": {}}
    assert state.meta == {"k": "v"}
    assert store.output_text(S, T) == "snap"


def test_terminal_update_null_clears_it(store: TerminalStore) -> None:
    store.apply_update(
        S,
        update(
            command="cargo test",
            cwd="/ws",
            exitStatus={"exitCode": 1},
            size={"cols": 80, "rows": 24},
            capabilities={"cancel": {}},
            _meta={"k": "v"},
            output={"data": b64("old")},
        ),
    )
    store.take_output()
    store.apply_update(
        S,
        update(
            command=None,
            cwd=None,
            exitStatus=None,
            size=None,
            capabilities=None,
            _meta=None,
            output=None,
        ),
    )
    state = store.state(S, T)
    assert state is not None
    assert (state.command, state.cwd, state.exit_status) == (None, None, None)
    assert (state.size, state.capabilities, state.meta) == (None, None, None)
    assert not state.exited
    assert shown(store) == {"sessionId": S, "terminalId": T, "owner": "agent"}
    assert store.output_bytes(S, T) == b""
    assert store.take_output() == [OutputBatch(S, T, "", True)]


def test_terminal_update_concrete_value_replaces_it(store: TerminalStore) -> None:
    store.apply_update(S, update(command="a", cwd="/one", size={"cols": 80, "rows": 24}))
    store.apply_update(S, update(command="b", cwd="/two", size={"cols": 120, "rows": 40}))
    state = store.state(S, T)
    assert state is not None
    assert (state.command, state.cwd, state.size) == ("b", "/two", {"cols": 120, "rows": 40})


def test_first_seen_id_fields_start_unknown(store: TerminalStore) -> None:
    store.apply_update(S, update(command="ls"))
    state = store.state(S, T)
    assert state is not None
    assert state.cwd is None and state.exit_status is None and state.tool_call_id is None
    assert state.size is None and state.capabilities is None and state.meta is None
    assert store.output_bytes(S, T) == b""
    assert shown(store) == {"sessionId": S, "terminalId": T, "command": "ls", "owner": "agent"}


def test_first_seen_id_from_a_chunk_starts_with_empty_state(store: TerminalStore) -> None:
    store.append_chunk(S, T, b64("x"))
    assert shown(store) == {"sessionId": S, "terminalId": T, "owner": "agent"}


def test_command_describes_the_command_being_run(store: TerminalStore) -> None:
    store.apply_update(S, update(command="pytest -q"))
    assert shown(store)["command"] == "pytest -q"


def test_cwd_must_be_absolute(store: TerminalStore, caplog: pytest.LogCaptureFixture) -> None:
    store.apply_update(S, update(cwd="/ws"))
    with caplog.at_level(logging.ERROR, logger="acpls.translate.terminals"):
        store.apply_update(S, update(cwd="relative/dir", command="kept"))
    assert shown(store)["cwd"] == "/ws"
    assert shown(store)["command"] == "kept"
    assert "absolute" in caplog.text


def test_windows_absolute_cwd_is_accepted(store: TerminalStore) -> None:
    store.apply_update(S, update(cwd="C:\\Users\\dev\\project"))
    assert shown(store)["cwd"] == "C:\\Users\\dev\\project"


def test_output_snapshot_replaces_all_previous_bytes_never_spliced(store: TerminalStore) -> None:
    store.apply_update(S, update(output={"data": b64("first snapshot, long")}))
    store.append_chunk(S, T, b64(" + chunk"))
    store.take_output()
    store.apply_update(S, update(output={"data": b64("second")}))
    assert store.output_bytes(S, T) == b"second"
    assert store.take_output() == [OutputBatch(S, T, "second", True)]


def test_output_snapshot_after_pending_text_resets_with_only_the_snapshot_and_later_chunks(
    store: TerminalStore,
) -> None:
    store.append_chunk(S, T, b64("old pending"))
    store.apply_update(S, update(output={"data": b64("snap")}))
    store.append_chunk(S, T, b64("+later"))
    assert store.take_output() == [OutputBatch(S, T, "snap+later", True)]


def test_chunks_after_a_snapshot_append_to_it(store: TerminalStore) -> None:
    store.apply_update(S, update(output={"data": b64("snap")}))
    assert store.take_output() == [OutputBatch(S, T, "snap", True)]
    store.append_chunk(S, T, b64("+1"))
    store.append_chunk(S, T, b64("+2"))
    assert store.take_output() == [OutputBatch(S, T, "+1+2", False)]
    assert store.output_bytes(S, T) == b"snap+1+2"


def test_output_snapshot_with_invalid_base64_is_logged_and_ignored(
    store: TerminalStore, caplog: pytest.LogCaptureFixture
) -> None:
    store.apply_update(S, update(output={"data": b64("kept")}))
    with caplog.at_level(logging.ERROR, logger="acpls.translate.terminals"):
        store.apply_update(S, update(output={"data": "***not base64***"}, command="ls"))
    assert store.output_bytes(S, T) == b"kept"
    assert shown(store)["command"] == "ls"
    assert "base64" in caplog.text


def test_output_meta_is_scoped_to_that_snapshot(store: TerminalStore) -> None:
    store.apply_update(S, update(output={"data": b64("a"), "_meta": {"origin": "replay"}}))
    state = store.state(S, T)
    assert state is not None and state.output_meta == {"origin": "replay"}
    store.apply_update(S, update(output={"data": b64("b")}))
    assert state.output_meta is None
    assert state.meta is None


def test_concrete_exit_status_marks_the_terminal_exited(store: TerminalStore) -> None:
    store.apply_update(S, update(command="sleep 1"))
    state = store.state(S, T)
    assert state is not None and not state.exited
    store.apply_update(S, update(exitStatus={}))
    assert state.exited
    assert shown(store)["exitStatus"] == {}


def test_exit_status_with_exit_code(store: TerminalStore) -> None:
    store.apply_update(S, update(exitStatus={"exitCode": 0, "signal": None}))
    assert shown(store)["exitStatus"] == {"exitCode": 0}


def test_exit_status_with_negative_exit_code(store: TerminalStore) -> None:
    store.apply_update(S, update(exitStatus={"exitCode": -1073741510}))
    assert shown(store)["exitStatus"] == {"exitCode": -1073741510}


def test_exit_status_with_signal(store: TerminalStore) -> None:
    store.apply_update(S, update(exitStatus={"signal": "SIGTERM"}))
    assert shown(store)["exitStatus"] == {"signal": "SIGTERM"}


def test_exit_status_omitted_and_null_fields_mean_not_provided(store: TerminalStore) -> None:
    store.apply_update(S, update(exitStatus={"exitCode": None}))
    omitted = TerminalStore()
    omitted.apply_update(S, update(exitStatus={}))
    assert shown(store)["exitStatus"] == shown(omitted)["exitStatus"] == {}


def test_exit_status_with_wrong_types_keeps_the_exit_and_drops_the_field(
    store: TerminalStore,
) -> None:
    store.apply_update(S, update(exitStatus={"exitCode": "1", "signal": 9}))
    state = store.state(S, T)
    assert state is not None and state.exited
    assert shown(store)["exitStatus"] == {}


def test_exit_status_meta_is_scoped_to_the_exit_information(store: TerminalStore) -> None:
    store.apply_update(S, update(exitStatus={"exitCode": 2, "_meta": {"why": "oom"}}))
    state = store.state(S, T)
    assert state is not None and state.exit_status is not None
    assert state.exit_status.meta == {"why": "oom"}
    assert state.meta is None
    assert shown(store)["exitStatus"] == {"exitCode": 2}


def test_terminal_exit_independent_of_tool_call_status(store: TerminalStore) -> None:
    store.set_tool_call(S, T, "call_1")
    store.apply_update(S, update(command="server --watch"))
    # The tool call completing says nothing about the terminal; only exitStatus does.
    state = store.state(S, T)
    assert state is not None and not state.exited
    store.apply_update(S, update(exitStatus={"exitCode": 0}))
    assert state.exited and state.tool_call_id == "call_1"


def test_meta_patches_by_top_level_key(store: TerminalStore) -> None:
    store.apply_update(S, update(_meta={"a": 1, "b": {"x": 1}}))
    store.apply_update(S, update(_meta={"b": {"y": 2}, "c": 3}))
    store.apply_update(S, update(_meta={"a": None}))
    state = store.state(S, T)
    assert state is not None and state.meta == {"b": {"y": 2}, "c": 3}


def test_meta_null_clears_all_of_it(store: TerminalStore) -> None:
    store.apply_update(S, update(_meta={"a": 1}))
    store.apply_update(S, update(_meta=None))
    state = store.state(S, T)
    assert state is not None and state.meta is None


def test_size_and_capabilities_follow_the_patch_semantics(store: TerminalStore) -> None:
    store.apply_update(S, update(size={"cols": 80, "rows": 24}, capabilities={"cancel": {}}))
    store.apply_update(S, update(capabilities=None))
    state = store.state(S, T)
    assert state is not None
    assert state.size == {"cols": 80, "rows": 24} and state.capabilities is None


def test_wrongly_typed_fields_are_logged_and_the_rest_applied(
    store: TerminalStore, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="acpls.translate.terminals"):
        store.apply_update(S, update(command=5, exitStatus="done", size=[80], _meta="x", cwd="/ok"))
    state = store.state(S, T)
    assert state is not None
    assert (state.command, state.exit_status, state.size, state.meta) == (None, None, None, None)
    assert state.cwd == "/ok"
    assert len(caplog.records) == 4


# -- terminal_output_chunk ----------------------------------------------------------------


def test_output_chunk_requires_terminal_id_and_data(
    store: TerminalStore, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="acpls.translate.terminals"):
        assert not store.apply_output_chunk(S, {"sessionUpdate": "terminal_output_chunk"})
        assert not store.apply_output_chunk(S, {"terminalId": T})
    assert store.terminals(S) == []
    assert store.apply_output_chunk(S, {"terminalId": T, "data": b64("ok")})
    assert store.output_text(S, T) == "ok"


def test_chunks_decoded_separately_not_concatenated_before_decoding(store: TerminalStore) -> None:
    # "YQ==" + "Yg==" is not valid base64 as one string; each chunk is.
    assert store.append_chunk(S, T, "YQ==")
    assert store.append_chunk(S, T, "Yg==")
    assert store.output_bytes(S, T) == b"ab"


def test_chunks_appended_in_received_order_for_that_terminal_id(store: TerminalStore) -> None:
    for index in range(5):
        store.append_chunk(S, T, b64(f"{index},"))
        store.append_chunk(S, "other", b64(f"o{index},"))
    assert store.output_text(S, T) == "0,1,2,3,4,"
    assert store.output_text(S, "other") == "o0,o1,o2,o3,o4,"


@pytest.mark.parametrize("pieces", [2, 3, 4])
def test_four_byte_utf8_character_split_over_chunks_comes_out_whole(
    store: TerminalStore, pieces: int
) -> None:
    encoded = "🦀".encode()
    cuts = {2: [0, 2, 4], 3: [0, 1, 3, 4], 4: [0, 1, 2, 3, 4]}[pieces]
    texts = []
    for start, end in itertools.pairwise(cuts):
        store.append_chunk(S, T, b64(encoded[start:end]))
        texts.append(pulled_text(store))
    assert texts[:-1] == [""] * (pieces - 1)
    assert texts[-1] == "🦀"


def test_utf8_character_split_between_snapshot_and_chunk_comes_out_whole(
    store: TerminalStore,
) -> None:
    encoded = "é".encode()
    store.apply_update(S, update(output={"data": b64(b"x" + encoded[:1])}))
    assert store.take_output() == [OutputBatch(S, T, "x", True)]
    store.append_chunk(S, T, b64(encoded[1:]))
    assert store.take_output() == [OutputBatch(S, T, "é", False)]


def test_snapshot_resets_the_utf8_decoder(store: TerminalStore) -> None:
    store.append_chunk(S, T, b64("é".encode()[:1]))
    store.take_output()
    store.apply_update(S, update(output={"data": b64("new")}))
    store.append_chunk(S, T, b64(" text"))
    assert store.take_output() == [OutputBatch(S, T, "new text", True)]


def test_escape_sequence_split_over_two_chunks_comes_out_whole(store: TerminalStore) -> None:
    store.append_chunk(S, T, b64(f"ok {ESC}[3"))
    assert pulled_text(store) == "ok "
    store.append_chunk(S, T, b64("2mgreen"))
    assert pulled_text(store) == f"{ESC}[32mgreen"


def test_invalid_base64_chunk_is_logged_and_changes_nothing(
    store: TerminalStore, caplog: pytest.LogCaptureFixture
) -> None:
    store.append_chunk(S, T, b64("before"))
    store.take_output()
    with caplog.at_level(logging.ERROR, logger="acpls.translate.terminals"):
        assert store.append_chunk(S, T, "not*base64!") is False
        assert store.append_chunk(S, T, "YWJj\n") is False  # no line breaks in RFC 4648 data
    assert [record.levelno for record in caplog.records] == [logging.ERROR, logging.ERROR]
    assert "base64" in caplog.records[0].getMessage()
    assert store.output_bytes(S, T) == b"before"
    assert store.take_output() == []


def test_invalid_utf8_shows_replacement_characters(store: TerminalStore) -> None:
    store.append_chunk(S, T, b64(b"a\xffb"))
    assert pulled_text(store) == "a\ufffdb"


def test_chunk_meta_does_not_touch_terminal_meta(store: TerminalStore) -> None:
    store.apply_output_chunk(S, {"terminalId": T, "data": b64("x"), "_meta": {"seq": 1}})
    state = store.state(S, T)
    assert state is not None and state.meta is None


# -- sanitising -----------------------------------------------------------------------------


def test_output_is_sanitised_by_default(store: TerminalStore) -> None:
    store.append_chunk(S, T, b64(f"{ESC}]52;c;aGk={ESC}\\{ESC}[31mred{ESC}[0m"))
    assert pulled_text(store) == f"{ESC}[31mred{ESC}[0m"
    assert store.output_text(S, T).startswith(f"{ESC}]52")  # the bytes are kept as received


def test_raw_output_passes_control_strings() -> None:
    store = TerminalStore(sanitize=False)
    text = f"{ESC}]0;title{ESC}\\x"
    store.append_chunk(S, T, b64(text))
    assert pulled_text(store) == text


def test_switching_sanitising_resends_the_output_filtered_the_new_way(
    store: TerminalStore,
) -> None:
    text = f"{ESC}]0;title\x07x"
    store.append_chunk(S, T, b64(text))
    assert pulled_text(store) == "x"
    store.configure(sanitize=False)
    assert store.take_output() == [OutputBatch(S, T, text, True)]


# -- scrollback -----------------------------------------------------------------------------


def test_scrollback_trims_at_a_character_boundary_without_resending_what_was_sent() -> None:
    store = TerminalStore(scrollback_bytes=64, trim_to=0.5)
    store.append_chunk(S, T, b64("€" * 20))  # 60 bytes
    store.take_output()
    store.append_chunk(S, T, b64("€€"))  # 66 bytes: over the limit
    kept = store.output_bytes(S, T)
    assert len(kept) <= 32
    assert kept.decode("utf-8") == "€" * (len(kept) // 3)
    # Only bytes the editor already had were cut: it gets the new text, not a reset.
    assert store.take_output() == [OutputBatch(S, T, "€€", False)]


def test_scrollback_trim_into_unsent_bytes_resets_to_what_is_kept() -> None:
    store = TerminalStore(scrollback_bytes=64, trim_to=0.5)
    store.append_chunk(S, T, b64("€" * 10))
    store.take_output()
    store.append_chunk(S, T, b64("€" * 12))  # 66 bytes: the cut reaches unsent bytes
    kept = store.output_bytes(S, T)
    # The reset says how many bytes before its text are gone, so the pane can say so.
    [batch] = store.take_output()
    assert batch == OutputBatch(S, T, kept.decode(), True, 66 - len(kept))
    assert batch.to_editor()["dropped"] == 66 - len(kept)
    store.append_chunk(S, T, b64("more"))
    assert store.take_output() == [OutputBatch(S, T, "more", False, 0)]


def test_only_the_first_piece_of_a_reset_says_what_was_dropped() -> None:
    pieces = split_output(OutputBatch(S, T, "x" * 10, True, 99), 4)
    assert [(p.reset, p.dropped) for p in pieces] == [(True, 99), (False, 0), (False, 0)]
    assert "dropped" not in pieces[1].to_editor()


def test_a_snapshot_reset_drops_nothing(store: TerminalStore) -> None:
    store.append_chunk(S, T, b64("first"))
    store.apply_update(S, update(output={"data": b64("snap")}))
    [batch] = store.take_output()
    assert (batch.text, batch.reset, batch.dropped) == ("snap", True, 0)
    assert "dropped" not in batch.to_editor()


def test_scrollback_trim_prefers_a_line_start() -> None:
    store = TerminalStore(scrollback_bytes=64, trim_to=0.5)
    store.append_chunk(S, T, b64("x" * 40 + "\nline two\n" + "y" * 20))
    assert store.output_text(S, T) == "line two\n" + "y" * 20


def test_scrollback_is_not_trimmed_on_every_chunk_once_full() -> None:
    store = TerminalStore(scrollback_bytes=100, trim_to=0.5)
    store.append_chunk(S, T, b64("a" * 101))
    assert store.take_output()[0].reset
    resets = 0
    for _ in range(49):
        store.append_chunk(S, T, b64("b"))
        resets += sum(batch.reset for batch in store.take_output())
    assert resets == 0
    assert len(store.output_bytes(S, T)) == 99


def test_snapshot_larger_than_scrollback_keeps_its_tail() -> None:
    store = TerminalStore(scrollback_bytes=10, trim_to=0.5)
    store.apply_update(S, update(output={"data": b64("0123456789abcdefghij")}))
    assert store.output_bytes(S, T) == b"fghij"
    # The pane shows the snapshot's last 5 bytes and can say that 15 before them are not kept.
    assert store.take_output() == [OutputBatch(S, T, "fghij", True, 15)]


def test_pending_text_never_exceeds_the_scrollback() -> None:
    store = TerminalStore(scrollback_bytes=1000)
    for _ in range(500):
        store.append_chunk(S, T, b64("0123456789"))
    [batch] = store.take_output()
    assert batch.reset and len(batch.text) <= 1000
    assert batch.text == store.output_text(S, T)


def test_smaller_scrollback_setting_applies_at_once() -> None:
    store = TerminalStore(scrollback_bytes=100)
    store.append_chunk(S, T, b64("z" * 90))
    store.take_output()
    store.configure(scrollback_bytes=20)
    [batch] = store.take_output()
    assert batch.reset and len(batch.text) <= 20


def test_invalid_scrollback_is_rejected() -> None:
    with pytest.raises(ValueError, match="scrollback"):
        TerminalStore(scrollback_bytes=0)


# -- pulling: coalescing and order --------------------------------------------------------


def test_take_output_coalesces_chunks_into_one_batch_per_terminal(store: TerminalStore) -> None:
    for index in range(100):
        store.append_chunk(S, T, b64(f"{index} "))
    [batch] = store.take_output()
    assert batch == OutputBatch(S, T, "".join(f"{index} " for index in range(100)), False)
    assert store.take_output() == []


def test_take_output_orders_terminals_by_first_activity(store: TerminalStore) -> None:
    store.append_chunk("s2", "b", b64("1"))
    store.append_chunk(S, "a", b64("2"))
    store.append_chunk("s2", "b", b64("3"))
    batches = store.take_output()
    assert [(batch.session_id, batch.terminal_id, batch.text) for batch in batches] == [
        ("s2", "b", "13"),
        (S, "a", "2"),
    ]


def test_output_batch_to_editor_matches_protocol(store: TerminalStore) -> None:
    store.apply_update(S, update(output={"data": b64("a")}))
    store.append_chunk(S, T, b64("b"))
    [reset] = store.take_output()
    assert reset.to_editor() == {"sessionId": S, "terminalId": T, "text": "ab", "reset": True}
    store.append_chunk(S, T, b64("c"))
    [plain] = store.take_output()
    assert plain.to_editor() == {"sessionId": S, "terminalId": T, "text": "c"}


def test_take_state_changes_reports_each_changed_terminal_once(store: TerminalStore) -> None:
    store.apply_update(S, update(command="a"))
    store.apply_update(S, update(cwd="/ws"))
    store.apply_update(S, {**update(), "terminalId": "t2"})
    changed = store.take_state_changes()
    assert [state.terminal_id for state in changed] == [T, "t2"]
    assert changed[0].to_editor()["cwd"] == "/ws"
    assert store.take_state_changes() == []


def test_changes_invisible_to_the_editor_are_not_state_changes(store: TerminalStore) -> None:
    store.apply_update(S, update(command="a"))
    store.take_state_changes()
    store.apply_update(S, update(command="a", size={"cols": 1, "rows": 1}, _meta={"x": 1}))
    store.append_chunk(S, T, b64("output is not state"))
    assert store.take_state_changes() == []


def test_has_changes_tells_whether_a_pull_would_return_anything(store: TerminalStore) -> None:
    assert not store.has_changes()
    store.append_chunk(S, T, b64("x"))
    assert store.has_changes()
    store.take_output()
    store.take_state_changes()
    assert not store.has_changes()


# -- the editor's view of the state ---------------------------------------------------------


def test_to_editor_is_the_whole_state_with_unknown_keys_absent() -> None:
    state = TerminalState(session_id=S, terminal_id=T)
    assert state.to_editor() == {"sessionId": S, "terminalId": T, "owner": "agent"}
    assert state.to_editor("other")["sessionId"] == "other"


def test_to_editor_with_every_field(store: TerminalStore) -> None:
    store.apply_update(
        S, update(command="pytest -q", cwd="/ws", exitStatus={"exitCode": 1, "signal": "SIGINT"})
    )
    store.set_tool_call(S, T, "call_3")
    assert shown(store) == {
        "sessionId": S,
        "terminalId": T,
        "command": "pytest -q",
        "cwd": "/ws",
        "exitStatus": {"exitCode": 1, "signal": "SIGINT"},
        "toolCallId": "call_3",
        "owner": "agent",
    }


# -- client-owned terminals -----------------------------------------------------------------


def test_client_terminal_reaches_the_editor_through_the_same_notifications(
    store: TerminalStore,
) -> None:
    store.open_client_terminal(S, "c1", command="make", cwd="/ws", tool_call_id="call_1")
    store.append_bytes(S, "c1", b"building\r\n")
    store.set_exit_status(S, "c1", exit_code=2)
    [state] = store.take_state_changes()
    assert state.to_editor() == {
        "sessionId": S,
        "terminalId": "c1",
        "command": "make",
        "cwd": "/ws",
        "exitStatus": {"exitCode": 2},
        "toolCallId": "call_1",
        "owner": "client",
    }
    assert store.take_output() == [OutputBatch(S, "c1", "building\r\n", False)]


def test_released_client_terminal_keeps_its_output(store: TerminalStore) -> None:
    store.open_client_terminal(S, "c1", command="ls")
    store.append_bytes(S, "c1", b"a b c\n")
    store.take_state_changes()
    assert store.release(S, "c1")
    assert store.output_text(S, "c1") == "a b c\n"
    [state] = store.take_state_changes()
    assert state.released and state.to_editor()["released"] is True
    assert not store.release(S, "unknown")


def test_output_tail_is_the_v1_terminal_output_answer(store: TerminalStore) -> None:
    store.open_client_terminal(S, "c1", command="seq")
    store.append_bytes(S, "c1", "ab€".encode())
    assert store.output_tail(S, "c1") == ("ab€", False)
    assert store.output_tail(S, "c1", byte_limit=4) == ("b€", True)
    assert store.output_tail(S, "c1", byte_limit=2) == ("", True)  # never half a character
    assert store.output_tail(S, "missing") == ("", False)


def test_output_tail_reports_scrollback_trimming_as_truncation() -> None:
    store = TerminalStore(scrollback_bytes=8)
    store.append_bytes(S, "c1", b"0123456789")
    text, truncated = store.output_tail(S, "c1")
    assert truncated and "0123456789".endswith(text)


def test_drop_session_forgets_its_terminals_and_pending_changes(store: TerminalStore) -> None:
    store.append_chunk(S, T, b64("x"))
    store.append_chunk("keep", T, b64("y"))
    store.drop_session(S)
    assert store.state(S, T) is None
    assert store.output_bytes(S, T) == b""
    assert [batch.session_id for batch in store.take_output()] == ["keep"]
    assert [state.session_id for state in store.take_state_changes()] == ["keep"]


# -- ACP v1 `_meta` terminal extension ------------------------------------------------------


def test_v1_meta_terminal_info_links_the_tool_call(store: TerminalStore) -> None:
    store.apply_v1_meta(S, "toolu_1", {"terminal_info": {"terminal_id": "toolu_1", "cwd": "/ws"}})
    assert shown(store, S, "toolu_1") == {
        "sessionId": S,
        "terminalId": "toolu_1",
        "cwd": "/ws",
        "toolCallId": "toolu_1",
        "owner": "agent",
    }


def test_v1_meta_terminal_output_and_delta_append_text(store: TerminalStore) -> None:
    store.apply_v1_meta(S, "toolu_1", {"terminal_output": {"terminal_id": "toolu_1", "data": "a"}})
    store.apply_v1_meta(
        S, "toolu_1", {"terminal_output_delta": {"terminal_id": "toolu_1", "data": "b\n"}}
    )
    store.apply_v1_meta(S, "toolu_1", {"terminal_output": {"terminalId": "toolu_1", "data": "ü"}})
    assert store.output_text(S, "toolu_1") == "ab\r\nü"
    assert pulled_text(store) == "ab\r\nü"


def test_v1_meta_output_marked_snapshot_replaces(store: TerminalStore) -> None:
    store.apply_v1_meta(S, "t", {"terminal_output": {"terminal_id": "t", "data": "old"}})
    store.take_output()
    store.apply_v1_meta(
        S, "t", {"terminal_output": {"terminal_id": "t", "data": "new", "snapshot": True}}
    )
    assert store.take_output() == [OutputBatch(S, "t", "new", True)]


def test_v1_meta_terminal_exit_with_code_and_signal(store: TerminalStore) -> None:
    store.apply_v1_meta(
        S,
        "toolu_1",
        {"terminal_exit": {"terminal_id": "toolu_1", "exit_code": 0, "signal": None}},
    )
    assert shown(store, S, "toolu_1")["exitStatus"] == {"exitCode": 0}
    store.apply_v1_meta(
        S, "toolu_2", {"terminal_exit": {"terminal_id": "toolu_2", "signal": "SIGKILL"}}
    )
    assert shown(store, S, "toolu_2")["exitStatus"] == {"signal": "SIGKILL"}


def test_v1_meta_whole_claude_sequence(store: TerminalStore) -> None:
    """What claude-agent-acp sends for one Bash call: info, then output, then exit."""
    store.apply_v1_meta(S, "toolu_bash", {"terminal_info": {"terminal_id": "toolu_bash"}})
    store.apply_v1_meta(
        S,
        "toolu_bash",
        {"terminal_output_delta": {"data": "a.ts\nb.ts", "terminal_id": "toolu_bash"}},
    )
    store.apply_v1_meta(
        S,
        "toolu_bash",
        {"terminal_exit": {"exit_code": 0, "signal": None, "terminal_id": "toolu_bash"}},
    )
    assert [state.to_editor() for state in store.take_state_changes()] == [
        {
            "sessionId": S,
            "terminalId": "toolu_bash",
            "exitStatus": {"exitCode": 0},
            "toolCallId": "toolu_bash",
            "owner": "agent",
        }
    ]
    assert store.take_output() == [OutputBatch(S, "toolu_bash", "a.ts\r\nb.ts", False)]


def test_codex_terminal_without_output_gets_the_raw_output(store: TerminalStore) -> None:
    """codex-acp shows a terminal (`terminal_info`, `terminal_exit`) it never sends output for:
    the command's output is only in the ended tool call's rawOutput, and goes there once."""
    store.apply_v1_meta(S, "call_s2", {"terminal_info": {"terminal_id": "call_s2", "cwd": "/ws"}})
    raw = {"stdout": "ok\n", "stderr": "", "aggregated_output": "ok\nwarn\n", "exit_code": 0}
    assert store.fill_from_raw_output(S, "call_s2", raw)
    assert pulled_text(store) == "ok\r\nwarn\r\n"
    assert not store.fill_from_raw_output(S, "call_s2", raw)  # once
    assert store.output_text(S, "call_s2") == "ok\r\nwarn\r\n"


def test_raw_output_never_adds_to_a_terminal_that_had_output(store: TerminalStore) -> None:
    store.apply_v1_meta(S, "toolu_1", {"terminal_output": {"terminal_id": "toolu_1", "data": "a"}})
    assert not store.fill_from_raw_output(S, "toolu_1", {"stdout": "a"})
    store.open_client_terminal(S, "client_1", tool_call_id="call_9")
    assert not store.fill_from_raw_output(S, "call_9", {"stdout": "b"})  # acpls runs it
    assert not store.fill_from_raw_output(S, "unknown", {"stdout": "c"})
    assert store.output_text(S, "toolu_1") == "a" and store.output_text(S, "client_1") == ""


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        ({"formatted_output": "f", "aggregated_output": "a", "stdout": "s"}, "f"),
        ({"aggregated_output": "a", "stdout": "s"}, "a"),
        ({"stdout": "s\n", "stderr": "e\n"}, "s\ne\n"),
        ({"type": "shell_result", "output": "o"}, "o"),
        ("plain", "plain"),
        ({"exit_code": 1}, None),
        (None, None),
        ([1], None),
    ],
)
def test_raw_output_text(raw: Any, text: str | None) -> None:
    assert raw_output_text(raw) == text


def test_v1_meta_without_terminal_id_uses_the_tool_call_id(store: TerminalStore) -> None:
    store.apply_v1_meta(S, "call_7", {"terminal_output": {"data": "x"}, "terminal_exit": {}})
    state = store.state(S, "call_7")
    assert state is not None and state.exited and state.tool_call_id == "call_7"
    assert store.output_text(S, "call_7") == "x"


def test_v1_meta_malformed_items_are_logged_and_skipped(
    store: TerminalStore, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="acpls.translate.terminals"):
        store.apply_v1_meta(
            S,
            "call_1",
            {
                "terminal_info": "nope",
                "terminal_output": {"terminal_id": 5, "data": "x"},
                "terminal_output_delta": {"terminal_id": "t", "data": 5},
                "other": {"kept": True},
            },
        )
    assert len(caplog.records) == 3
    assert store.output_bytes(S, "t") == b""


def test_v1_meta_without_terminal_keys_does_nothing(store: TerminalStore) -> None:
    store.apply_v1_meta(S, "call_1", {"claudeCode": {"toolName": "Read"}})
    assert store.terminals(S) == []
    assert not store.has_changes()


def test_snapshot_is_complete_so_output_tail_is_not_truncated_after_it() -> None:
    store = TerminalStore(scrollback_bytes=8)
    store.append_chunk(S, T, b64("0123456789"))
    assert store.output_tail(S, T)[1]
    store.apply_update(S, update(output={"data": b64("full")}))
    assert store.output_tail(S, T) == ("full", False)


def test_v1_meta_text_gets_carriage_returns_for_the_terminal(store: TerminalStore) -> None:
    store.apply_v1_meta(S, "c", {"terminal_output": {"data": "one\ntwo\r\nthree\n"}})
    assert store.output_text(S, "c") == "one\r\ntwo\r\nthree\r\n"


def test_command_may_arrive_after_the_first_update(store: TerminalStore) -> None:
    store.append_chunk(S, T, b64("output first"))
    store.apply_update(S, update(cwd="/ws"))
    store.apply_update(S, update(command="late"))
    assert shown(store)["command"] == "late"


@pytest.mark.parametrize("signal", ["SIGKILL", "SIGINT", "CTRL_BREAK_EVENT"])
def test_signal_names_pass_through_unchanged(store: TerminalStore, signal: str) -> None:
    store.apply_update(S, update(exitStatus={"signal": signal}))
    assert shown(store)["exitStatus"] == {"signal": signal}


def test_terminal_notifications_may_come_before_the_tool_call_reference(
    store: TerminalStore,
) -> None:
    store.apply_update(S, update(command="ls"))
    store.append_chunk(S, T, b64("a\r\n"))
    [state] = store.take_state_changes()
    assert "toolCallId" not in state.to_editor()
    assert store.take_output() == [OutputBatch(S, T, "a\r\n", False)]


# -- the order and size of what the editor is sent (editors/protocol.md 5.5, 5.6) -------------


def _kinds(events: list[Any]) -> list[str]:
    return ["output" if isinstance(e, OutputBatch) else "state" for e in events]


def test_output_comes_before_the_update_that_ends_the_terminal_in_one_pull(
    store: TerminalStore,
) -> None:
    store.apply_update(S, update(command="make"))
    store.take_in_order()
    store.append_chunk(S, T, b64("last line\r\n"))
    store.apply_update(S, update(exitStatus={"exitCode": 0}))
    events = store.take_in_order()
    assert _kinds(events) == ["output", "state"]
    assert isinstance(events[0], OutputBatch) and events[0].text == "last line\r\n"
    assert isinstance(events[1], StateUpdate)
    assert events[1].params["exitStatus"] == {"exitCode": 0}


def test_a_new_terminal_that_ends_in_its_first_pull_is_announced_then_output_then_exit(
    store: TerminalStore,
) -> None:
    store.apply_update(S, update(command="make"))
    store.append_chunk(S, T, b64("out\r\n"))
    store.apply_update(S, update(exitStatus={"exitCode": 2}))
    store.release(S, T)
    events = store.take_in_order()
    assert _kinds(events) == ["state", "output", "state"]
    first, last = events[0], events[2]
    assert isinstance(first, StateUpdate) and isinstance(last, StateUpdate)
    assert first.params["command"] == "make"
    assert "exitStatus" not in first.params and "released" not in first.params
    assert last.params["exitStatus"] == {"exitCode": 2} and last.params["released"] is True
    assert store.take_in_order() == []


def test_a_new_running_terminal_is_announced_once_before_its_output(
    store: TerminalStore,
) -> None:
    store.apply_update(S, update(command="make"))
    store.append_chunk(S, T, b64("a\r\n"))
    assert _kinds(store.take_in_order()) == ["state", "output"]
    store.append_chunk(S, T, b64("b\r\n"))
    assert _kinds(store.take_in_order()) == ["output"]


def test_terminals_keep_their_own_order_in_one_pull(store: TerminalStore) -> None:
    for tid in ("t1", "t2"):
        store.apply_update(S, {"terminalId": tid, "command": tid})
    store.take_in_order()
    store.append_chunk(S, "t2", b64("two"))
    store.apply_update(S, {"terminalId": "t2", "exitStatus": {"exitCode": 0}})
    store.apply_update(S, {"terminalId": "t1", "exitStatus": {"exitCode": 1}})
    store.append_chunk(S, "t1", b64("one"))
    events = store.take_in_order()
    per_terminal: dict[str, list[str]] = {}
    for event in events:
        tid = event.terminal_id if isinstance(event, OutputBatch) else event.params["terminalId"]
        per_terminal.setdefault(tid, []).append(_kinds([event])[0])
    assert per_terminal == {"t1": ["output", "state"], "t2": ["output", "state"]}


def test_output_is_sent_in_pieces_of_at_most_the_cap_that_join_to_the_whole(
    store: TerminalStore,
) -> None:
    lines = "".join(f"line {i:06d}\r\n" for i in range(20_000))  # 260,000 characters
    store.apply_update(S, update(command="cat big.log"))
    store.take_in_order()
    store.append_chunk(S, T, b64(lines))
    store.apply_update(S, update(exitStatus={"exitCode": 0}))
    events = store.take_in_order(max_chars=64 * 1024)
    outputs = [e for e in events if isinstance(e, OutputBatch)]
    assert len(outputs) >= 4
    assert all(len(b.text) <= 64 * 1024 for b in outputs)
    assert "".join(b.text for b in outputs) == lines
    # Each piece ends at a line end here (there is one in every piece's last quarter).
    assert all(b.text.endswith("\r\n") for b in outputs)
    assert _kinds(events)[-1] == "state"


def test_only_the_first_piece_of_a_reset_is_a_reset() -> None:
    batch = OutputBatch(S, T, "x" * 10, True)
    pieces = split_output(batch, 4)
    assert [p.text for p in pieces] == ["xxxx", "xxxx", "xx"]
    assert [p.reset for p in pieces] == [True, False, False]
    assert split_output(OutputBatch(S, T, "", True), 4) == [OutputBatch(S, T, "", True)]


def test_the_default_cap_is_64_ki_characters() -> None:
    assert MAX_OUTPUT_CHARS == 64 * 1024


def test_one_sessions_terminals_are_taken_in_order_and_the_others_stay_pending(
    store: TerminalStore,
) -> None:
    """What a session that ends still owes the editor (core/routing.py session_closed): its
    terminals' output, then their exit; another session's changes wait for the next flush."""
    store.apply_update(S, update(command="make"))
    store.apply_update("other", update(command="ls"))
    store.take_in_order()
    store.append_chunk("other", T, b64("theirs\r\n"))
    store.append_chunk(S, T, b64("last line\r\n"))
    store.apply_update(S, update(exitStatus={"exitCode": 0}))
    events = store.take_session_in_order(S)
    assert _kinds(events) == ["output", "state"]
    assert isinstance(events[0], OutputBatch) and events[0].text == "last line\r\n"
    assert isinstance(events[1], StateUpdate) and events[1].params["exitStatus"] == {"exitCode": 0}
    assert store.take_session_in_order(S) == []
    rest = store.take_in_order()
    assert [(e.session_id, e.text) for e in rest if isinstance(e, OutputBatch)] == [
        ("other", "theirs\r\n")
    ]
    assert _kinds(rest) == ["output"]
