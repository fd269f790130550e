"""What `make dist` leaves in dist/ for a release: the wheel, the sdist and the five .vsix of one
version, each listed in SHA256SUMS with its digest; the wheel installs into a fresh virtualenv and
its server answers LSP `initialize`; the linux-x64 .vsix's bundled server (its own dependencies,
nothing of this checkout) does the same on this machine's Python. The other packages are checked
by listing (tests/install/test_vsix.py): their compiled modules are for other machines. Run by
`make dist`."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.vsix

TARGETS = ("linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64")


def dist_dir() -> Path:
    return Path(os.environ.get("VSIX_DIR", "dist"))


def version() -> str:
    return os.environ.get("VSIX_VERSION", "0.1.0")


def release_files() -> list[str]:
    v = version()
    return sorted(
        [f"acpls-{v}-py3-none-any.whl", f"acpls-{v}.tar.gz"]
        + [f"acpls-{v}-{t}.vsix" for t in TARGETS]
    )


def initialize(argv: list[str], env: dict[str, str] | None = None) -> dict:
    """The server's answer to one LSP `initialize` (then its stdin closes, and it exits)."""
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"processId": None, "rootUri": None, "capabilities": {}}}  # fmt: skip
    body = json.dumps(request).encode()
    framed = b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    done = subprocess.run(argv, input=framed, capture_output=True, timeout=120, env=env)
    stderr = done.stderr.decode(errors="replace")[-2000:]
    assert done.stdout.startswith(b"Content-Length: "), stderr
    header, rest = done.stdout.split(b"\r\n\r\n", 1)
    length = int(header.split(b"\r\n")[0].split(b":")[1])
    return json.loads(rest[:length])


def test_every_release_file_is_there_with_its_digest() -> None:
    folder = dist_dir()
    sums = (folder / "SHA256SUMS").read_text().splitlines()
    listed = {line.split("  ", 1)[1]: line.split("  ", 1)[0] for line in sums}
    assert sorted(listed) == release_files()
    for name, digest in listed.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, name


def test_the_wheel_installs_and_its_server_starts(tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    wheel = dist_dir() / f"acpls-{version()}-py3-none-any.whl"
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", wheel],
        check=True, timeout=600,
    )  # fmt: skip
    answer = initialize([str(env_dir / "bin" / "acpls")])
    assert answer["result"]["serverInfo"] == {"name": "acpls", "version": version()}


def test_the_linux_vsix_server_starts_from_what_the_package_holds(tmp_path: Path) -> None:
    with zipfile.ZipFile(dist_dir() / f"acpls-{version()}-linux-x64.vsix") as vsix:
        vsix.extractall(tmp_path)
    libs = tmp_path / "extension" / "bundled" / "libs"
    # `-I`: only the package's libraries, never this checkout's or the user's site-packages.
    argv = [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(libs)!r});"
            " from acpls.__main__ import main; main()"]  # fmt: skip
    answer = initialize(argv, env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)})
    assert answer["result"]["serverInfo"]["version"] == version()
    assert "Apache License" in (tmp_path / "extension" / "LICENSE.txt").read_text()


def test_the_sdist_carries_the_licence_and_the_changelog() -> None:
    import tarfile

    with tarfile.open(dist_dir() / f"acpls-{version()}.tar.gz") as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    assert {"LICENSE", "CHANGELOG.md", "pyproject.toml", "README.md"} <= names
