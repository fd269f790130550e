"""`make bench-editors` (issue 18): both editors' parts run, and each records its figures in
bench/RESULTS.md with the revision. No timing here: the benchmarks themselves are not run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from bench import results_md

REPO = Path(__file__).resolve().parents[2]


def make_dry(*args: str) -> subprocess.CompletedProcess[str]:
    """`make -n` in the repository: nothing is built or measured, but the recursive `$(MAKE)`
    lines of a recipe run (in dry-run mode too), so what bench-editors hands on is seen."""
    # Not the flags of a `make test` this runs under (its jobserver, -k, -s ...).
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    return subprocess.run(
        ["make", "-n", "--no-print-directory", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_bench_editors_runs_the_vscode_and_the_neovim_parts() -> None:
    out = make_dry("bench-editors")
    assert out.returncode == 0, out.stderr
    assert "out/test/bench/editors.js" in out.stdout
    assert "bench/nvim_editor.py" in out.stdout


def test_a_part_that_falls_short_does_not_stop_the_next_and_the_status_says_so() -> None:
    """The VS Code part exits 1 when a figure falls short; the Neovim part must still run (it
    was a prerequisite of the Neovim recipe, so a VS Code FALL SHORT skipped Neovim)."""
    failed = make_dry("bench-editors", "BENCH_EDITOR_PARTS=no-such-part help")
    assert "make bench" in failed.stdout  # the second part (help's echo lines) ran
    assert "make no-such-part: FALL SHORT or failed" in failed.stdout
    assert failed.returncode != 0
    passed = make_dry("bench-editors", "BENCH_EDITOR_PARTS=help help")
    assert passed.returncode == 0, passed.stderr


def test_the_neovim_block_goes_under_its_heading_then_is_replaced_in_place(tmp_path: Path) -> None:
    md = tmp_path / "RESULTS.md"
    md.write_text(
        "# Benchmark results\n\n"
        f"{results_md.NVIM_HEADING}\n\nnotes written by hand\n\n## Later section\n"
    )
    for figure in ("E1 first -> PASS", "E1 second -> FALL SHORT"):
        results_md.record_nvim([figure], runs=3, quick=False, load_at_start="1.00", path=md)
    text = md.read_text()
    assert text.count("<!-- editors-nvim:begin -->") == 1
    assert text.count("<!-- editors-nvim:end -->") == 1
    assert "E1 second -> FALL SHORT" in text and "E1 first" not in text
    head, block_and_rest = text.split("<!-- editors-nvim:begin -->")
    assert head.rstrip().endswith(results_md.NVIM_HEADING)
    block, rest = block_and_rest.split("<!-- editors-nvim:end -->")
    assert "notes written by hand" in rest and "## Later section" in rest
    revision = results_md.revision()
    assert revision != "unknown"
    assert f"revision `{revision}`" in block
    assert "3 runs each" in block and "load average 1.00 at the start" in block


def test_a_file_without_the_heading_gets_heading_and_block_at_the_end() -> None:
    text = results_md.replace_block("# Benchmark results\n", "x", ["figure"], "## X")
    assert text == "# Benchmark results\n\n## X\n\n<!-- x:begin -->\nfigure\n<!-- x:end -->\n"
    # Another block's markers are not this one's.
    other = "<!-- y:begin -->\nold\n<!-- y:end -->\n"
    assert "old" in results_md.replace_block(other, "x", ["new"], "## X")


def test_the_quick_run_is_labelled() -> None:
    block = results_md.nvim_block(
        ["E4 -> PASS"], runs=1, quick=True, load_at_start="2.00", revision="abc1234"
    )
    assert "--quick" in block[0] and "revision `abc1234`" in block[0]
    assert block[-3:] == ["```", "E4 -> PASS", "```"]
