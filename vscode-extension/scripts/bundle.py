"""Bundle the acpls server for one VS Code target: everything `python -m acpls` imports, for that
platform and CPython 3.11 to 3.14, plus the `uv` binary of that platform (from PyPI's `uv` wheel),
which the extension uses to get a Python when the machine has none.

    python bundle.py TARGET ACPLS_WHEEL OUT_DIR --uv-version X.Y.Z

OUT_DIR/libs is a `pip install --target` of the acpls wheel made for the target's platform tags,
once per CPython version and merged: pure packages are the same for every version, and compiled
modules carry the version in their file name (orjson: `*.cpython-312-darwin.so`), so the versions'
modules sit side by side and each Python imports its own. abi3 modules (watchfiles) serve them all.
pip evaluates a dependency's environment marker against the machine it runs on, not the target,
so the wheel goes in without its dependencies, and those are read from its metadata, evaluated
for the target (Windows gets pywinpty and not uvloop) and named to pip without markers.
OUT_DIR/bin holds `uv` (`uv.exe` on Windows). OUT_DIR/manifest.json says what the bundle is for
(`target`, `pythons`): the extension compares the target with the machine it runs on and asks uv
for exactly those Pythons (src/model/startCheck.ts); the server's self-check gets the target too.
"""

from __future__ import annotations

import argparse
import json
import runpy
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# The CPython versions whose compiled modules the bundle carries: one list, in the server's
# acpls/requirements.py (read as a file: the build machine's acpls may be another).
PYTHONS: tuple[str, ...] = runpy.run_path(str(REPO / "server" / "acpls" / "requirements.py"))[
    "BUNDLED_PYTHONS"
]

# VS Code target -> the marker environment of that platform (what a marker may ask of it).
MARKER_ENVIRONMENTS: dict[str, dict[str, str]] = {
    "linux-x64": {
        "sys_platform": "linux",
        "platform_system": "Linux",
        "os_name": "posix",
        "platform_machine": "x86_64",
    },
    "linux-arm64": {
        "sys_platform": "linux",
        "platform_system": "Linux",
        "os_name": "posix",
        "platform_machine": "aarch64",
    },
    "darwin-x64": {
        "sys_platform": "darwin",
        "platform_system": "Darwin",
        "os_name": "posix",
        "platform_machine": "x86_64",
    },
    "darwin-arm64": {
        "sys_platform": "darwin",
        "platform_system": "Darwin",
        "os_name": "posix",
        "platform_machine": "arm64",
    },
    "win32-x64": {
        "sys_platform": "win32",
        "platform_system": "Windows",
        "os_name": "nt",
        "platform_machine": "AMD64",
    },
}

# VS Code target -> the wheel platform tags pip may take for it, best first.
PLATFORMS: dict[str, tuple[str, ...]] = {
    "linux-x64": ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"),
    "linux-arm64": ("manylinux_2_28_aarch64", "manylinux_2_17_aarch64", "manylinux2014_aarch64"),
    "darwin-x64": ("macosx_11_0_x86_64", "macosx_10_15_x86_64", "macosx_10_12_x86_64"),
    "darwin-arm64": ("macosx_11_0_arm64", "macosx_10_15_universal2", "macosx_10_12_universal2"),
    "win32-x64": ("win_amd64",),
}
UV_PLATFORMS: dict[str, tuple[str, ...]] = {
    "linux-x64": ("manylinux_2_17_x86_64", "musllinux_1_1_x86_64"),
    "linux-arm64": ("manylinux_2_17_aarch64", "manylinux_2_28_aarch64"),
    "darwin-x64": ("macosx_10_12_x86_64",),
    "darwin-arm64": ("macosx_11_0_arm64",),
    "win32-x64": ("win_amd64",),
}


def pip(*args: str) -> None:
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}")


def platform_args(tags: tuple[str, ...]) -> list[str]:
    return [arg for tag in tags for arg in ("--platform", tag)]


def requirements_of(wheel: Path) -> list[str]:
    """The wheel's Requires-Dist lines (extras' ones left out)."""
    with zipfile.ZipFile(wheel) as archive:
        (metadata,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        lines = archive.read(metadata).decode().splitlines()
    found = [line.split(":", 1)[1].strip() for line in lines if line.startswith("Requires-Dist:")]
    return [r for r in found if "extra ==" not in r]


def for_target(requirements: list[str], target: str, python: str) -> list[str]:
    """The requirements whose marker holds for the target (Windows: pywinpty, not uvloop), with
    their markers taken off, since pip would evaluate them on this machine."""
    from packaging.requirements import Requirement

    target_env = {
        **MARKER_ENVIRONMENTS[target],
        "python_version": python,
        "python_full_version": f"{python}.0",
        "platform_python_implementation": "CPython",
        "implementation_name": "cpython",
    }
    chosen = []
    for line in requirements:
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate(target_env):
            chosen.append(f"{req.name}{req.specifier}")
    return chosen


def install_for(target: str, wheel: Path, python: str, into: Path) -> None:
    """The wheel without its dependencies, then its dependencies as the target needs them."""
    common = [
        "install",
        "--no-compile",
        "--only-binary=:all:",
        "--implementation",
        "cp",
        "--python-version",
        python,
        *platform_args(PLATFORMS[target]),
        "--target",
    ]
    pip(*common, str(into), "--no-deps", str(wheel))
    requirements = for_target(requirements_of(wheel), target, python)
    deps = into.parent / f"{into.name}-deps"
    pip(*common, str(deps), *requirements)
    merge(deps, into)
    shutil.rmtree(deps)


def merge(source: Path, into: Path) -> int:
    """Copy every file of `source` that `into` lacks; the number copied."""
    added = 0
    for path in source.rglob("*"):
        if path.is_file():
            dest = into / path.relative_to(source)
            if not dest.exists():
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, dest)
                added += 1
    return added


def bundle_libs(target: str, wheel: Path, libs: Path, work: Path) -> None:
    for python in PYTHONS:
        staged = work / f"libs-{python}"
        install_for(target, wheel, python, staged)
        merge(staged, libs)
    shutil.rmtree(libs / "bin", ignore_errors=True)  # console scripts of the build machine


def bundle_uv(target: str, version: str, bin_dir: Path, work: Path) -> Path:
    downloads = work / "uv"
    pip(
        "download",
        "--no-deps",
        "--only-binary=:all:",
        *platform_args(UV_PLATFORMS[target]),
        "-d",
        str(downloads),
        f"uv=={version}",
    )
    (wheel,) = downloads.glob("uv-*.whl")
    name = "uv.exe" if target.startswith("win32") else "uv"
    with zipfile.ZipFile(wheel) as archive:
        (member,) = [m for m in archive.namelist() if m.endswith(f".data/scripts/{name}")]
        bin_dir.mkdir(parents=True, exist_ok=True)
        binary = bin_dir / name
        binary.write_bytes(archive.read(member))
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return binary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", choices=sorted(PLATFORMS))
    parser.add_argument("wheel", type=Path, help="the acpls wheel (pure Python)")
    parser.add_argument("out", type=Path)
    parser.add_argument("--uv-version", required=True)
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        bundle_libs(args.target, args.wheel.resolve(), args.out / "libs", Path(tmp))
        uv = bundle_uv(args.target, args.uv_version, args.out / "bin", Path(tmp))
    manifest = {"target": args.target, "pythons": list(PYTHONS)}
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"bundled acpls for {args.target} in {args.out} (uv: {uv.name})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
