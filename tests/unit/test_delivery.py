"""acp/delivery.py: a large block is handled in slices; what arrives meanwhile is seen at once and
handled after everything before it, byte for byte in order."""

from __future__ import annotations

from acpls.acp.delivery import deliver, slice_end


class Sink:
    """Records what the line reader would be told, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, bytes]] = []

    def see(self, data: bytes) -> None:
        self.events.append(("see", data))

    def feed_range(self, data: bytes, start: int, stop: int) -> None:
        self.events.append(("feed", data[start:stop]))

    def handled(self) -> None:
        self.events.append(("handled", b""))

    def fed(self) -> bytes:
        return b"".join(data for kind, data in self.events if kind == "feed")


class Clock:
    """Each reading is `step` later than the last: every slice takes `step` seconds."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def lines(tag: bytes, count: int) -> bytes:
    return b"".join(b"%s-%05d\n" % (tag, i) for i in range(count))


async def test_what_arrives_while_a_block_is_handled_is_seen_before_the_block_ends() -> None:
    first, second, third = lines(b"A", 1000), lines(b"B", 300), lines(b"C", 10)
    arrivals = [second, b"", third]
    rooms: list[int] = []

    async def arrived(room: int) -> bytes:
        rooms.append(room)
        return arrivals.pop(0) if arrivals else b""

    sink = Sink()
    await deliver(first, sink, arrived, clock=Clock(0.005), turn_after=0.004, slice_bytes=1024)
    assert sink.fed() == first + second + third  # every byte, in order
    seen = [i for i, (kind, _) in enumerate(sink.events) if kind == "see"]
    assert [sink.events[i][1] for i in seen] == [first, second, third]
    last_of_first = max(i for i, (k, d) in enumerate(sink.events) if k == "feed" and b"A-" in d)
    assert seen[1] < last_of_first, "the newer block was seen before the first one was handled"
    assert sink.events[-1] == ("handled", b"") and sum(k == "handled" for k, _ in sink.events) == 1
    assert rooms[0] == 1024 * 1024 - len(first) and rooms[1] == rooms[0] - len(second)


async def test_fast_handling_takes_no_turn() -> None:
    """Slices handled within `turn_after` of the last turn are not interrupted (a fast terminal
    stream pays one loop turn per `turn_after`, not one per slice)."""
    calls: list[int] = []

    async def arrived(room: int) -> bytes:
        calls.append(room)
        return b""

    sink = Sink()
    block = lines(b"A", 1000)
    await deliver(block, sink, arrived, clock=Clock(0.0001), turn_after=0.004, slice_bytes=1024)
    assert sink.fed() == block
    assert sum(kind == "feed" for kind, _ in sink.events) > 5
    assert calls == []


def test_slices_end_at_a_line_end() -> None:
    block = b"aaaa\nbbbbbbbb\ncc\n"
    assert slice_end(block, 0, 3) == 5
    assert slice_end(block, 5, 3) == 14
    assert slice_end(block, 14, 3) == len(block)
    assert slice_end(b"no line end at all", 0, 3) == len(b"no line end at all")
