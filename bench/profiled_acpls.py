"""acpls under pyinstrument, for bench/profile.py: `python bench/profiled_acpls.py OUT.txt`.

acpls leaves with `os._exit` (so idle worker threads cannot delay it), which skips pyinstrument's
own exit hook; this wrapper writes the report on that way out.
"""

from __future__ import annotations

import os
import sys

from pyinstrument import Profiler


def main() -> int:
    out = sys.argv[1]
    profiler = Profiler()
    real_exit = os._exit

    def write_and_exit(code: int) -> None:
        profiler.stop()
        with open(out, "w", encoding="utf-8") as report:
            report.write(profiler.output_text(show_all=True))
        real_exit(code)

    os._exit = write_and_exit  # type: ignore[assignment]
    profiler.start()
    from acpls.__main__ import main as acpls_main

    code = acpls_main([])
    write_and_exit(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
