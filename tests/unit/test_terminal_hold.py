"""Terminal output waits in the terminal store while the editor is behind (core/routing.py
`UpdateRouter._terminals_may_go`, protocol.md 5.6 and 6): bounded by the scrollback, the middle
dropped, and sent as a reset saying how much was dropped, then the tail, once the editor-output
gate opens again (flow.py `FlowGate.call_when_open`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from acpls.core.review import ReviewController
from acpls.core.routing import UpdateRouter
from acpls.editor import messages as msg
from acpls.flow import FlowGate
from acpls.translate.terminals import TerminalStore

SCROLLBACK = 64 * 1024
LINE = b"flood 0123456789abcdefghijklmnopqrstuvwxyz\r\n"


class _Editor:
    custom_mode = True

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    def notify(self, method: str, params: Any) -> None:
        self.sent.append((method, params))

    def supports(self, feature: str) -> bool:
        return False


class _Pump:
    def __init__(self) -> None:
        self.forced = False
        self.pokes = 0

    def poke(self) -> None:
        self.pokes += 1


def _router(editor: _Editor, pump: _Pump, store: TerminalStore, gate: FlowGate) -> UpdateRouter:
    unused = cast(Any, None)  # a flush touches only the editor, the pump and the terminals
    return UpdateRouter(
        cast(Any, editor),
        {},
        cast(Any, pump),
        store,
        unused,
        unused,
        unused,
        Path("."),
        unused,
        editor_output=gate,
    )


def _outputs(editor: _Editor) -> list[msg.TerminalOutputParams]:
    return [params for method, params in editor.sent if method == msg.TERMINAL_OUTPUT]


def _flood(store: TerminalStore, total: int, end: bytes = b"END\r\n") -> int:
    """Append `total` bytes of lines to terminal t1 in 4 KiB chunks, then `end`; the bytes
    appended."""
    chunk = LINE * (4096 // len(LINE))
    sent = 0
    while sent < total:
        store.append_bytes("s1", "t1", chunk)
        sent += len(chunk)
    store.append_bytes("s1", "t1", end)
    return sent + len(end)


def test_a_closed_gate_holds_terminal_output_in_the_bounded_store() -> None:
    editor, pump, gate = _Editor(), _Pump(), FlowGate()
    store = TerminalStore(scrollback_bytes=SCROLLBACK)
    router = _router(editor, pump, store, gate)
    store.open_client_terminal("s1", "t1", command="yes", cwd="/ws")
    store.append_bytes("s1", "t1", b"first line\r\n")
    router.flush()
    assert [p.text for p in _outputs(editor)] == ["first line\r\n"]
    gate.close()  # the editor stopped reading
    total = _flood(store, 8 * 1024 * 1024)
    router.flush()
    assert _outputs(editor) == [_outputs(editor)[0]]  # nothing more while it is behind
    pokes = pump.pokes
    gate.open()
    assert pump.pokes == pokes + 1  # what waits is sent as soon as the editor caught up
    router.flush()
    held = _outputs(editor)[1:]
    assert held[0].reset is True
    shown = "".join(p.text for p in held)
    assert len(shown) <= SCROLLBACK
    assert shown.endswith("END\r\n")
    assert held[0].dropped == len("first line\r\n") + total - len(shown)


def test_the_held_output_never_exceeds_the_scrollback() -> None:
    store = TerminalStore(scrollback_bytes=SCROLLBACK)
    store.open_client_terminal("s1", "t1", command="yes", cwd="/ws")
    for _ in range(64):
        _flood(store, 256 * 1024)
        kept = store._sessions["s1"]["t1"].out
        assert len(kept.data) + kept.pending_bytes <= SCROLLBACK


def test_a_forced_flush_sends_what_waits_even_while_the_editor_is_behind() -> None:
    """The end of a turn: its answer follows its terminals' output (protocol.md 5.6)."""
    editor, pump, gate = _Editor(), _Pump(), FlowGate()
    store = TerminalStore(scrollback_bytes=SCROLLBACK)
    router = _router(editor, pump, store, gate)
    gate.close()
    store.open_client_terminal("s1", "t1", command="true", cwd="/ws")
    store.append_bytes("s1", "t1", b"done\r\n")
    router.flush()
    assert editor.sent == []
    pump.forced = True
    router.flush()
    assert [p.text for p in _outputs(editor)] == ["done\r\n"]


def test_exit_and_output_keep_their_order_across_the_hold() -> None:
    editor, pump, gate = _Editor(), _Pump(), FlowGate()
    store = TerminalStore(scrollback_bytes=SCROLLBACK)
    router = _router(editor, pump, store, gate)
    gate.close()
    store.open_client_terminal("s1", "t1", command="true", cwd="/ws")
    store.append_bytes("s1", "t1", b"last line\r\n")
    store.set_exit_status("s1", "t1", exit_code=0)
    router.flush()
    assert editor.sent == []
    gate.open()
    router.flush()
    methods = [method for method, _ in editor.sent]
    assert methods == [msg.TERMINAL_UPDATE, msg.TERMINAL_OUTPUT, msg.TERMINAL_UPDATE]
    assert editor.sent[-1][1].exitStatus == {"exitCode": 0}


def test_call_when_open_calls_once_and_at_once_when_open() -> None:
    gate = FlowGate()
    calls: list[str] = []
    gate.call_when_open(lambda: calls.append("open"))
    assert calls == ["open"]
    gate.close()

    def poke() -> None:
        calls.append("poke")

    gate.call_when_open(poke)
    gate.call_when_open(poke)  # already waiting: not twice
    assert calls == ["open"]
    gate.open()
    gate.close()
    gate.open()
    assert calls == ["open", "poke"]


def test_the_change_set_waits_while_the_editor_is_behind_and_goes_once_in_its_latest_state() -> (
    None
):
    editor, gate = _Editor(), FlowGate()
    unused = cast(Any, None)
    review = ReviewController(cast(Any, editor), {}, unused, unused, unused, editor_output=gate)
    review.store.baseline("/ws/big.txt", "old\n", session_id="s1")
    review.store.changed("/ws/big.txt", "new 0\n")
    review.publish()
    assert len(editor.sent) == 1
    gate.close()  # the editor stopped reading
    for n in range(1, 100):
        review.store.changed("/ws/big.txt", f"new {n}\n")
        review.publish()
    assert len(editor.sent) == 1
    gate.open()
    assert len(editor.sent) == 2
    method, params = editor.sent[-1]
    assert method == msg.CHANGES
    assert params.files[0]["hunks"][0]["newText"] == "new 99\n"
