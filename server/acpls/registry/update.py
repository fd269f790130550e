"""`make update-registry` (`python -m acpls.registry.update [--url URL]`): refreshes the bundled
registry snapshot in a checkout from the published registry.

The published `registry.json` (DEFAULT_REGISTRY_URL, built by the registry's own CI from its
repository) is fetched, checked with the same parser acpls reads it with (a document that is not a
registry, or has no agent acpls can read, is refused and nothing is written), and written as
snapshot.json; `SNAPSHOT_DATE` / `SNAPSHOT_SOURCE` in bundled.py and the source and date lines of
SNAPSHOT.md follow. `acpls agents list` shows that date whenever it lists the snapshot.
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import sys
import urllib.request
from pathlib import Path
from typing import Any

from acpls import __version__
from acpls.registry.model import DEFAULT_REGISTRY_URL, RegistryFormatError, parse_registry

HERE = Path(__file__).resolve().parent
TIMEOUT = 60.0


class UpdateError(Exception):
    """The registry could not be fetched or is not one; nothing was written."""


def fetch(url: str) -> Any:
    request = urllib.request.Request(url, headers={"User-Agent": f"acpls/{__version__}"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return json.loads(response.read())
    except (OSError, ValueError) as exc:
        raise UpdateError(f"cannot read the registry at {url}: {exc}") from exc


def checked(raw: Any, url: str) -> Any:
    try:
        registry = parse_registry(raw)
    except RegistryFormatError as exc:
        raise UpdateError(f"{url} is not an ACP registry: {exc}") from exc
    if not registry.agents:
        raise UpdateError(f"{url} lists no agent acpls can read: the snapshot is kept")
    return raw


def update(url: str, date: str, into: Path = HERE) -> int:
    """Writes the snapshot and its date and source; the number of agents."""
    raw = checked(fetch(url), url)
    (into / "snapshot.json").write_text(json.dumps(raw, indent=2, ensure_ascii=False) + "\n")
    bundled = into / "bundled.py"
    text = bundled.read_text(encoding="utf-8")
    text = re.sub(r'SNAPSHOT_DATE = "[^"]*"', f'SNAPSHOT_DATE = "{date}"', text)
    text = re.sub(
        r"SNAPSHOT_SOURCE = \(?\s*\"[^\"]*\"\s*\)?",
        f"SNAPSHOT_SOURCE = {json.dumps(url)}",
        text,
    )
    bundled.write_text(text, encoding="utf-8")
    notes = into / "SNAPSHOT.md"
    text = notes.read_text(encoding="utf-8")
    text = re.sub(
        r"- Source: .*?\n(?=- )",
        f"- Source: {url} (the published registry, fetched by `make update-registry`).\n",
        text,
        count=1,
        flags=re.DOTALL,
    )
    text = re.sub(r"- Date of the snapshot: .*\n", f"- Date of the snapshot: {date}.\n", text)
    notes.write_text(text, encoding="utf-8")
    return len(raw["agents"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="refresh the bundled ACP registry snapshot")
    parser.add_argument("--url", default=DEFAULT_REGISTRY_URL, help="the registry.json to take")
    parser.add_argument("--date", default=datetime.datetime.now(datetime.UTC).date().isoformat())
    parser.add_argument("--into", type=Path, default=HERE, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        count = update(args.url, args.date, args.into)
    except UpdateError as exc:
        print(f"update-registry: {exc}", file=sys.stderr)
        return 1
    print(f"snapshot of {args.date}: {count} agents from {args.url}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
