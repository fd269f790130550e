"""What each VS Code package `make vsix` builds holds: the server and its dependencies with compiled
modules of the package's own platform and architecture for CPython 3.11 to 3.14, the `uv` binary of
that platform, the built extension, and nothing of another platform. Run by `make test-vsix`."""

from __future__ import annotations

import json
import os
import re
import struct
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.vsix

PYTHONS = ("311", "312", "313", "314")
# target -> (binary format, architecture, compiled module suffix for CPython 3.XY)
TARGETS = {
    "linux-x64": ("elf", "x86_64", "cpython-{v}-x86_64-linux-gnu.so"),
    "linux-arm64": ("elf", "arm64", "cpython-{v}-aarch64-linux-gnu.so"),
    "darwin-x64": ("macho", "x86_64", "cpython-{v}-darwin.so"),
    "darwin-arm64": ("macho", "arm64", "cpython-{v}-darwin.so"),
    "win32-x64": ("pe", "x86_64", "cp{v}-win_amd64.pyd"),
}
PACKAGES = ("acpls", "pygls", "lsprotocol", "attrs", "cattrs", "watchfiles", "orjson")
LIBS = "extension/bundled/libs/"

ELF_MACHINES = {0x3E: "x86_64", 0xB7: "arm64"}
MACHO_CPUS = {0x01000007: "x86_64", 0x0100000C: "arm64"}
PE_MACHINES = {0x8664: "x86_64", 0xAA64: "arm64"}


def architectures(data: bytes) -> tuple[str, set[str]]:
    """(format, architectures) of an executable or shared library (a fat Mach-O has several)."""
    if data[:4] == b"\x7fELF":
        return "elf", {ELF_MACHINES.get(struct.unpack_from("<H", data, 18)[0], "?")}
    if data[:4] == b"\xcf\xfa\xed\xfe":
        return "macho", {MACHO_CPUS.get(struct.unpack_from("<I", data, 4)[0], "?")}
    if data[:4] == b"\xca\xfe\xba\xbe":
        count = struct.unpack_from(">I", data, 4)[0]
        cpus = (struct.unpack_from(">I", data, 8 + 20 * i)[0] for i in range(count))
        return "macho", {MACHO_CPUS.get(cpu, "?") for cpu in cpus}
    if data[:2] == b"MZ":
        header = struct.unpack_from("<I", data, 0x3C)[0]
        assert data[header : header + 4] == b"PE\0\0"
        return "pe", {PE_MACHINES.get(struct.unpack_from("<H", data, header + 4)[0], "?")}
    return "unknown", set()


def package(target: str) -> Path:
    folder = Path(os.environ.get("VSIX_DIR", "dist"))
    version = os.environ.get("VSIX_VERSION", "0.1.0")
    path = folder / f"acpls-{version}-{target}.vsix"
    assert path.is_file(), f"{path} is missing: run make vsix"
    return path


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_package_holds_its_platforms_server_and_uv(target: str) -> None:
    fmt, arch, suffix = TARGETS[target]
    with zipfile.ZipFile(package(target)) as vsix:
        names = set(vsix.namelist())
        manifest = vsix.read("extension.vsixmanifest").decode()
        assert f'TargetPlatform="{target}"' in manifest
        assert "extension/dist/extension.js" in names
        assert "extension/LICENSE.txt" in names
        for name in PACKAGES:
            assert f"{LIBS}{name}/__init__.py" in names, f"{name} is not bundled"
        assert not any("__pycache__" in n for n in names)

        compiled = sorted(n for n in names if re.search(r"\.(so|pyd|dylib)$", n))
        for version in PYTHONS:
            module = f"{LIBS}orjson/orjson.{suffix.format(v=version)}"
            assert module in names, f"orjson for CPython {version} missing in {target}"
        # Agent terminals on Windows run on ConPTY: pywinpty, in the win32 package only.
        for version in PYTHONS:
            winpty = f"{LIBS}winpty/_winpty.{suffix.format(v=version)}"
            assert (winpty in names) == (fmt == "pe"), f"{winpty} in {target}: {winpty in names}"
        # The speed-ups: pybase64 everywhere, uvloop where it runs (not on Windows).
        assert any(n.startswith(f"{LIBS}pybase64/") for n in compiled), "pybase64 is missing"
        has_uvloop = any(n.startswith(f"{LIBS}uvloop/") for n in compiled)
        assert has_uvloop == (fmt != "pe"), f"uvloop in {target}: {has_uvloop}"
        watchfiles = [n for n in compiled if n.startswith(f"{LIBS}watchfiles/")]
        assert watchfiles, "watchfiles' compiled module is missing"
        for name in compiled:
            found_fmt, arches = architectures(vsix.read(name))
            assert found_fmt == fmt and arch in arches, f"{name}: {found_fmt} {arches}"

        # npm's CLI for agents without a Node of their own (they run on VS Code's): the JavaScript
        # and its dependencies, the same in every package.
        npm = "extension/bundled/npm/"
        assert f"{npm}bin/npx-cli.js" in names and f"{npm}bin/npm-cli.js" in names
        assert f"{npm}node_modules/@npmcli/config/package.json" in names

        # What the extension reads to check the platform and to ask uv for a Python
        # (src/model/startCheck.ts): this package's target, and the Pythons it has modules for.
        bundle = json.loads(vsix.read("extension/bundled/manifest.json"))
        assert bundle == {"target": target, "pythons": [f"{v[0]}.{v[1:]}" for v in PYTHONS]}

        uv = "extension/bundled/bin/uv" + (".exe" if fmt == "pe" else "")
        assert uv in names
        found_fmt, arches = architectures(vsix.read(uv))
        assert (found_fmt, arches) == (fmt, {arch}), f"uv is {found_fmt} {arches}"
        if fmt != "pe":  # the executable bit survives packaging (zip external attributes)
            mode = vsix.getinfo(uv).external_attr >> 16
            assert mode & 0o111, f"uv is not executable in {target}: {oct(mode)}"


def test_the_packages_differ_only_where_platforms_do() -> None:
    """The server's own files are the same in every package."""

    def server_files(target: str) -> dict[str, int]:
        with zipfile.ZipFile(package(target)) as vsix:
            return {
                i.filename: i.CRC for i in vsix.infolist() if i.filename.startswith(f"{LIBS}acpls/")
            }

    first, *rest = (server_files(t) for t in sorted(TARGETS))
    assert first and all(files == first for files in rest)
