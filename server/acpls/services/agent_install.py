"""Running a registry agent: the command for its `npx` / `uvx` package (pinned to the registry's
version) or its binary archive, downloaded for this platform, checked and unpacked into
`$XDG_DATA_HOME/acpls/agents/<id>/<version>`.

An install is built in a temporary directory beside its target and renamed into place only when
whole, and a version directory is never written again once it exists: an agent running from it is
never touched, and a newer version goes to its own directory.

What is downloaded is told by its first bytes, not its URL: a zip, a tar (plain, gzip, bzip2 or
xz), or a raw executable (ELF, Mach-O, PE or a `#!` script), which the registry's schema allows
and which becomes the entry's `cmd`. Anything wrong with it (damaged or truncated data, entries
outside the directory, links out, special files, something that is none of these) is an
AgentInstallError naming the URL: the CLI prints it and exits 1, the editor gets -32000 with it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import posixpath
import shutil
import stat
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from acpls import __version__
from acpls.registry.model import BinaryTarget, RegistryAgent
from acpls.registry.spec import AgentSpec
from acpls.services import private_files
from acpls.services.fetch import run_blocking

if TYPE_CHECKING:
    import tarfile

logger = logging.getLogger(__name__)

DOWNLOAD_TIMEOUT = 60.0
_CHUNK = 256 * 1024
Which = Callable[[str], str | None]


class AgentInstallError(Exception):
    """An agent cannot be installed or run here; the message says why and what to do."""


def agents_dir(environ: Mapping[str, str]) -> Path:
    base = environ.get("XDG_DATA_HOME") or os.path.join(
        environ.get("HOME", "/tmp"), ".local", "share"
    )
    return Path(base) / "acpls" / "agents"


def install_dir(environ: Mapping[str, str], agent: RegistryAgent) -> Path:
    return agents_dir(environ) / agent.id / agent.version


def is_installed(environ: Mapping[str, str], agent: RegistryAgent) -> bool:
    return install_dir(environ, agent).is_dir()


def resolve(
    agent: RegistryAgent,
    *,
    environ: Mapping[str, str],
    platform: str | None,
    which: Which = shutil.which,
) -> AgentSpec:
    """The start command for this registry entry here. Preference: a binary already installed,
    then npx, then uvx (when their tool is on PATH), then a binary still to install."""
    dist = agent.distribution
    target = agent.binary_target(platform)
    if target is not None and is_installed(environ, agent):
        return _binary_spec(agent, target, environ)
    if dist.npx is not None and which("npx"):
        args = ("-y", dist.npx.pinned_npm(agent.version), *dist.npx.args)
        return _spec(agent, "npx", args, dist.npx.env)
    if dist.uvx is not None and which("uvx"):
        args = (dist.uvx.pinned_pypi(agent.version), *dist.uvx.args)
        return _spec(agent, "uvx", args, dist.uvx.env)
    if target is not None:
        return _binary_spec(agent, target, environ)
    raise AgentInstallError(_why_not(agent, platform))


def _spec(
    agent: RegistryAgent, command: str, args: tuple[str, ...], env: Mapping[str, str]
) -> AgentSpec:
    return AgentSpec(
        name=agent.id,
        command=command,
        args=args,
        env=tuple(sorted(env.items())),
        registry_id=agent.id,
    )


def _binary_spec(
    agent: RegistryAgent, target: BinaryTarget, environ: Mapping[str, str]
) -> AgentSpec:
    root = install_dir(environ, agent)
    return AgentSpec(
        name=agent.id,
        command=str(_inside(root, target.cmd)),
        args=target.args,
        env=tuple(sorted(target.env.items())),
        registry_id=agent.id,
        install_dir=str(root),
    )


def _why_not(agent: RegistryAgent, platform: str | None) -> str:
    dist = agent.distribution
    reasons = []
    if dist.npx is not None:
        reasons.append(
            f"it runs through npx ({dist.npx.pinned_npm(agent.version)}) and npx is not on PATH: "
            "install Node.js (https://nodejs.org, npm includes npx)"
        )
    if dist.uvx is not None:
        reasons.append(
            f"it runs through uvx ({dist.uvx.pinned_pypi(agent.version)}) and uvx is not on PATH: "
            "install uv (https://docs.astral.sh/uv/)"
        )
    if dist.binary:
        offered = ", ".join(sorted(dist.binary))
        reasons.append(f"its binaries are for {offered}, not for {platform or 'this platform'}")
    return f"{agent.name} ({agent.id} {agent.version}) cannot run here: " + "; ".join(reasons)


async def install_binary(
    agent: RegistryAgent, platform: str | None, environ: Mapping[str, str]
) -> Path:
    """Download, check and unpack this platform's archive; the install directory. A version
    already installed is left as it is."""
    target = agent.binary_target(platform)
    if target is None:
        raise AgentInstallError(_why_not(agent, platform))
    final = install_dir(environ, agent)
    if final.is_dir():
        return final
    return await run_blocking("install", lambda: _install(agent, target, final))


def _install(agent: RegistryAgent, target: BinaryTarget, final: Path) -> Path:
    # Private like the rest of acpls' state: folders 0700 (the work folder too: mkdtemp),
    # the archive 0600, what it unpacks narrowed to its owner inside the work folder no one
    # else can enter.
    private_files.make_dir(final.parent)
    work = Path(tempfile.mkdtemp(prefix=f".{agent.version}-", dir=final.parent))
    try:
        archive = work / "archive"
        _download(target.archive, archive, target.sha256)
        unpacked = private_files.make_dir(work / "unpacked")
        _unpack(archive, target.archive, unpacked, target.cmd)
        command = _inside(unpacked, target.cmd)
        if not command.is_file():
            raise AgentInstallError(f"the archive {target.archive} has no {target.cmd}")
        command.chmod(command.stat().st_mode | stat.S_IXUSR)
        private_files.tighten(unpacked)  # owner-only, its programs still run
        try:
            unpacked.rename(final)
        except OSError:
            if not final.is_dir():  # else another acpls installed the same version meanwhile
                raise
        logger.info("installed %s %s in %s", agent.id, agent.version, final)
        return final
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _download(url: str, dest: Path, sha256: str | None) -> None:
    # Imported here, not with the module: urllib.request, tarfile and zipfile (with http.client,
    # email, bz2, lzma) cost ~30 ms of CPU, and this module is part of the core that every editor
    # start builds, while only an install of a registry binary downloads or unpacks anything.
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, headers={"User-Agent": f"acpls/{__version__}"})
    digest = hashlib.sha256()
    try:
        with (
            urllib.request.urlopen(request, timeout=DOWNLOAD_TIMEOUT) as response,
            private_files.open_file(dest, "wb") as out,
        ):
            while chunk := response.read(_CHUNK):
                digest.update(chunk)
                out.write(chunk)
    except urllib.error.HTTPError as exc:
        raise AgentInstallError(f"download failed: {url}: HTTP {exc.code} {exc.reason}") from exc
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise AgentInstallError(f"download failed: {url}: {reason}") from exc
    if sha256 is not None and digest.hexdigest() != sha256:
        raise AgentInstallError(
            f"checksum mismatch for {url}: expected sha256 {sha256}, got {digest.hexdigest()}"
        )


def _has_tar_filter(tarfile_module: Any) -> bool:
    """tarfile's extraction filters came with Python 3.11.4 (and 3.12): Debian 12's Python 3.11.2,
    which VS Code runs acpls on, has neither `filter=` nor FilterError (the install failed with an
    AttributeError there), so acpls then checks every member itself before extracting."""
    return hasattr(tarfile_module, "data_filter")


# First bytes -> what the download is. Mach-O: 32/64-bit either byte order, and universal.
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_COMPRESSED_TAR_MAGIC = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00")
_EXECUTABLE_MAGIC = (
    b"\x7fELF",
    b"\xfe\xed\xfa\xce",
    b"\xce\xfa\xed\xfe",
    b"\xfe\xed\xfa\xcf",
    b"\xcf\xfa\xed\xfe",
    b"\xca\xfe\xba\xbe",
    b"MZ",
    b"#!",
)


def archive_kind(head: bytes) -> str:
    """ "zip", "tar", "executable" or "unknown", from the file's first 512+ bytes."""
    if head.startswith(_ZIP_MAGIC):
        return "zip"
    if head.startswith(_COMPRESSED_TAR_MAGIC) or head[257:262] == b"ustar":
        return "tar"
    if head.startswith(_EXECUTABLE_MAGIC):
        return "executable"
    return "unknown"


def _unpack(archive: Path, url: str, dest: Path, cmd: str) -> None:
    with archive.open("rb") as file:
        head = file.read(512)
    kind = archive_kind(head)
    if kind == "zip":
        _unzip(archive, url, dest)
    elif kind == "tar":
        _untar(archive, url, dest)
    elif kind == "executable":
        # A raw binary (the registry's schema allows one): it is the command itself.
        command = _inside(dest, cmd, what=f"cmd {cmd!r} of {url}")
        command.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(archive, command)
    else:
        raise AgentInstallError(
            f"bad archive {url}: neither a zip or tar archive nor an executable"
            f" (it starts with {head[:8]!r})"
        )


def _untar(archive: Path, url: str, dest: Path) -> None:
    import tarfile  # see _download: only an install unpacks
    import zlib

    tar_filter = _has_tar_filter(tarfile)
    unsafe: tuple[type[Exception], ...] = (tarfile.FilterError,) if tar_filter else ()
    try:
        _read_whole_stream(archive)
        with tarfile.open(archive) as tar:
            if tar_filter:  # refuses absolute paths, `..`, links out, devices
                tar.extractall(dest, filter="data")
            else:
                _check_tar(tar, url)
                tar.extractall(dest)
    except AgentInstallError:
        raise
    except unsafe as exc:
        raise AgentInstallError(f"unsafe archive {url}: {exc}") from exc
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise AgentInstallError(f"bad archive {url}: damaged or truncated: {exc}") from exc
    except Exception as exc:  # lzma's and bz2's own errors, and whatever else bad data raises
        raise AgentInstallError(
            f"bad archive {url}: damaged or truncated: {type(exc).__name__}: {exc}"
        ) from exc


def _read_whole_stream(archive: Path) -> None:
    """Decompresses a gzip, bzip2 or xz file to its end, which checks its CRC: tarfile stops at
    the tar's end-of-archive blocks and never reads the trailer, so damaged data that still
    inflates would otherwise be installed as it came."""
    import bz2
    import gzip
    import lzma

    with archive.open("rb") as file:
        head = file.read(6)
    opener: Any = (
        gzip.open
        if head.startswith(b"\x1f\x8b")
        else bz2.open
        if head.startswith(b"BZh")
        else lzma.open
        if head.startswith(b"\xfd7zXZ\x00")
        else None
    )
    if opener is None:
        return
    with opener(archive, "rb") as stream:
        while stream.read(_CHUNK * 4):
            pass


def _check_tar(tar: tarfile.TarFile, url: str) -> None:
    """What the `data` filter refuses, for Pythons without it: a member outside the directory (an
    absolute path, `..`), a link whose target is outside it, a device or FIFO; other members lose
    set-id bits and group/other write."""
    for member in tar.getmembers():
        try:
            _inside(Path("/x"), member.name, what=f"entry {member.name!r}")
            if member.issym():
                target = posixpath.normpath(
                    posixpath.join(posixpath.dirname(member.name), member.linkname)
                )
                _inside(Path("/x"), target, what=f"link {member.name!r} -> {member.linkname!r}")
            elif member.islnk():
                _inside(Path("/x"), member.linkname, what=f"link {member.name!r}")
        except AgentInstallError as exc:
            raise AgentInstallError(f"unsafe archive {url}: {exc}") from exc
        if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
            raise AgentInstallError(f"unsafe archive {url}: {member.name!r} is a special file")
        member.mode &= 0o755


def _unzip(archive: Path, url: str, dest: Path) -> None:
    import zipfile  # see _download
    import zlib

    try:
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                _inside(dest, info.filename, what=f"unsafe archive {url}: entry {info.filename!r}")
            for info in zf.infolist():
                zf.extract(info, dest)
                mode = info.external_attr >> 16
                if mode & 0o111 and not info.is_dir():
                    path = dest / info.filename
                    path.chmod(path.stat().st_mode | (mode & 0o755))
    except AgentInstallError:
        raise
    except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as exc:
        raise AgentInstallError(f"bad archive {url}: damaged or truncated: {exc}") from exc
    except Exception as exc:  # encrypted entries, unknown compression methods, ...
        raise AgentInstallError(f"bad archive {url}: {type(exc).__name__}: {exc}") from exc


def _inside(root: Path, relative: str, what: str = "path") -> Path:
    """`root/relative`, refusing anything that would land outside root."""
    pure = PurePosixPath(relative.replace("\\", "/"))
    if pure.is_absolute() or ".." in pure.parts or (pure.parts and ":" in pure.parts[0]):
        raise AgentInstallError(f"{what} escapes its directory: {relative!r}")
    return root.joinpath(*[p for p in pure.parts if p != "."])
