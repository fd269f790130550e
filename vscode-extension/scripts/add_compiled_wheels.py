"""Make a `pip install --target` bundle import on several CPython versions.

Packages whose compiled modules are built per CPython version (orjson: `*.cpython-311-*.so`) get
the same release's modules for the other versions beside them; Python picks the one whose suffix
matches it, so one bundle serves CPython 3.11 to 3.14 on linux x86_64. abi3 modules (watchfiles)
already serve every version and are left alone.

Usage: python add_compiled_wheels.py BUNDLE_DIR [VERSION ...]
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

PLATFORM = "manylinux_2_17_x86_64"
PER_VERSION = re.compile(r"\.cpython-3\d+-x86_64-linux-gnu\.so$")


def per_version_packages(bundle: Path) -> list[tuple[str, str]]:
    """(distribution, version) of every installed distribution with version-specific modules."""
    found = []
    for info in sorted(bundle.glob("*.dist-info")):
        record = info / "RECORD"
        if record.exists() and any(
            PER_VERSION.search(line.split(",")[0]) for line in record.read_text().splitlines()
        ):
            name, version = info.name.removesuffix(".dist-info").rsplit("-", 1)
            found.append((name, version))
    return found


def add_modules(bundle: Path, name: str, version: str, python: str, workdir: Path) -> int:
    target = workdir / python
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--disable-pip-version-check",
            "--no-deps",
            "--only-binary=:all:",
            "--implementation",
            "cp",
            "--python-version",
            python,
            "--platform",
            PLATFORM,
            "-d",
            str(target),
            f"{name}=={version}",
        ],
        check=True,
    )
    added = 0
    for wheel in target.glob("*.whl"):
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                if PER_VERSION.search(member) and not (bundle / member).exists():
                    archive.extract(member, bundle)
                    added += 1
    return added


def main() -> int:
    bundle = Path(sys.argv[1])
    versions = sys.argv[2:] or ["3.11", "3.12", "3.13", "3.14"]
    with tempfile.TemporaryDirectory() as tmp:
        for name, version in per_version_packages(bundle):
            for python in versions:
                count = add_modules(bundle, name, version, python, Path(tmp))
                if count:
                    print(f"bundled {name} {version} for CPython {python}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
