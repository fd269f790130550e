"""The frame fuzzer (frame_fuzzer.py) as tests: a short run in `make test`, the full 100k in
`make stress`. Zero exceptions of any kind, and the figures printed (`-s` shows them)."""

from __future__ import annotations

import pytest

from tests.fuzz.frame_fuzzer import run


async def test_short_frame_fuzz_run_finds_no_exception() -> None:
    report = await run(5_000, seed=11)
    print(report.summary())
    assert report.frames == 5_000
    assert report.exceptions == 0, "\n---\n".join(report.samples)
    assert report.editor_messages > 0  # the frames reached the editor side, not only the parser


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("seed", [1, 2])
async def test_full_frame_fuzz_run_finds_no_exception(seed: int) -> None:
    report = await run(100_000, seed=seed)
    print(report.summary())
    assert report.frames == 100_000
    assert report.exceptions == 0, "\n---\n".join(report.samples)
    assert report.max_rss_mb < 512
