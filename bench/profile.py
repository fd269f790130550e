"""Profile acpls relaying one scenario: `python bench/profile.py [--chunk 4096] [--count N]
[--protocol 2] [--scenario terminal|toolcalls] [--out FILE]`.

acpls runs under pyinstrument (the `dev` extra) with the same editor and load agent as
`make bench`; the text report goes to `--out` (default bench/results/profile-<scenario>.txt).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import run  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description="profile acpls on one benchmark scenario")
    parser.add_argument("--scenario", default="terminal", choices=["terminal", "toolcalls"])
    parser.add_argument("--chunk", type=int, default=4096)
    parser.add_argument("--count", type=int, default=16384)
    parser.add_argument("--protocol", type=int, default=2, choices=[1, 2])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    out = args.out or run.RESULTS_DIR / f"profile-{args.scenario}-v{args.protocol}.txt"
    out.parent.mkdir(exist_ok=True)
    run.RELAYS["profiled"] = [run.PY, str(run.BENCH / "profiled_acpls.py"), str(out)]
    ctx = run.Context()
    try:
        relay = ctx.relay("profiled", args.protocol)
        session_id = relay.new_session()
        relay.editor.handlers["acpls/terminalOutput"] = run.TerminalView().on_output
        if args.scenario == "terminal":
            scenario = {"scenario": "terminal", "chunk": args.chunk, "count": args.count}
        else:
            scenario = {"scenario": "toolcalls", "updates": args.count, "calls": 5}
        relay.prompt(session_id, scenario)
        relay.close()
    finally:
        ctx.cleanup()
    print(json.dumps({"profile": str(out)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
