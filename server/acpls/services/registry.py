"""The ACP registry as acpls knows it: fetched from `registry.url` when it can be, else the last
copy cached for that URL in `$XDG_CACHE_HOME/acpls/registry/`, else the snapshot in the package.

`current()` never touches the network (at most it reads the small cache file once), so no command
waits for a slow registry; `refresh()` makes one conditional GET (ETag / Last-Modified) and is run
by its owner (the hub's task supervisor, or the command line) when it chooses.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from acpls import __version__
from acpls.registry.bundled import SNAPSHOT_DATE, SNAPSHOT_SOURCE, load_snapshot
from acpls.registry.model import (
    DEFAULT_REGISTRY_URL,
    Registry,
    RegistryFormatError,
    parse_registry,
)
from acpls.services import private_files
from acpls.services.fetch import run_blocking

logger = logging.getLogger(__name__)

FETCH_TIMEOUT = 10.0
MAX_REGISTRY_BYTES = 16 * 1024 * 1024


@attrs.frozen
class RegistryState:
    """A registry and where it came from: `network` (fetched or revalidated by this process),
    `cache` (an earlier fetch of the same URL) or `snapshot` (bundled)."""

    registry: Registry
    source: str
    url: str
    fetched_at: float | None = None
    error: str | None = None  # why the last refresh failed, if it did

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"url": self.url, "source": self.source}
        out["version"] = self.registry.version
        if self.fetched_at is not None:
            out["fetchedAt"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.fetched_at))
        if self.source == "snapshot":
            out["snapshot"] = {"date": SNAPSHOT_DATE, "source": SNAPSHOT_SOURCE}
        if self.error:
            out["error"] = self.error
        return out


def cache_dir(environ: Mapping[str, str]) -> Path:
    base = environ.get("XDG_CACHE_HOME") or os.path.join(environ.get("HOME", "/tmp"), ".cache")
    return Path(base) / "acpls" / "registry"


class RegistryService:
    """One registry URL's state. An empty URL means offline: the snapshot only."""

    def __init__(self, environ: Mapping[str, str], url: str = DEFAULT_REGISTRY_URL) -> None:
        self.environ = dict(environ)
        self.url = url
        self._state: RegistryState | None = None

    def set_url(self, url: str) -> None:
        if url != self.url:
            self.url = url
            self._state = None

    @property
    def cache_file(self) -> Path:
        digest = hashlib.sha256(self.url.encode()).hexdigest()[:16]
        return cache_dir(self.environ) / f"{digest}.json"

    def current(self) -> RegistryState:
        if self._state is None:
            self._state = self._from_cache() or self._snapshot()
        return self._state

    def _snapshot(self, error: str | None = None) -> RegistryState:
        return RegistryState(load_snapshot(), "snapshot", self.url, error=error)

    def _read_cache(self) -> dict[str, Any] | None:
        if not self.url:
            return None
        try:
            cached = json.loads(self.cache_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return cached if isinstance(cached, dict) and cached.get("url") == self.url else None

    def _from_cache(self) -> RegistryState | None:
        cached = self._read_cache()
        if cached is None:
            return None
        try:
            registry = parse_registry(cached.get("registry"))
        except RegistryFormatError:
            logger.warning("ignoring a malformed registry cache %s", self.cache_file)
            return None
        return RegistryState(registry, "cache", self.url, fetched_at=cached.get("fetchedAt"))

    async def refresh(self, http_timeout: float = FETCH_TIMEOUT) -> RegistryState:
        """One conditional GET; on any failure the current registry stays, with the error."""
        if not self.url:
            return self.current()
        url = self.url
        cached = self._read_cache()
        try:
            state = await run_blocking("registry", lambda: self._fetch(url, cached, http_timeout))
        except (OSError, ValueError, RegistryFormatError) as exc:
            detail = _describe(exc)
            logger.info("registry %s unreachable, using %s: %s", url, self.current().source, detail)
            if self.url == url:
                self._state = attrs.evolve(self.current(), error=detail)
            return self.current()
        if self.url == url:  # the URL did not change while the request ran
            self._state = state
        return state

    def _fetch(self, url: str, cached: dict[str, Any] | None, timeout: float) -> RegistryState:
        # Imported here, not with the module: urllib.request (http.client, email) costs ~20 ms of
        # CPU, and this module is part of the core every editor start builds, while the catalog
        # is fetched only when the user lists agents (in a worker thread: services/fetch.py).
        import urllib.error
        import urllib.request

        headers = {"Accept": "application/json", "User-Agent": f"acpls/{__version__}"}
        if cached and cached.get("etag"):
            headers["If-None-Match"] = cached["etag"]
        if cached and cached.get("lastModified"):
            headers["If-Modified-Since"] = cached["lastModified"]
        request = urllib.request.Request(url, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                body = response.read(MAX_REGISTRY_BYTES + 1)
                etag = response.headers.get("ETag")
                last_modified = response.headers.get("Last-Modified")
        except urllib.error.HTTPError as exc:
            if exc.code == 304 and cached is not None:
                return self._revalidated(cached)
            raise
        if len(body) > MAX_REGISTRY_BYTES:
            raise ValueError(f"the registry is larger than {MAX_REGISTRY_BYTES} bytes")
        raw = json.loads(body)
        registry = parse_registry(raw)
        now = time.time()
        self._write_cache(
            {
                "url": url,
                "etag": etag,
                "lastModified": last_modified,
                "fetchedAt": now,
                "registry": raw,
            }
        )
        return RegistryState(registry, "network", url, fetched_at=now)

    def _revalidated(self, cached: dict[str, Any]) -> RegistryState:
        now = time.time()
        self._write_cache({**cached, "fetchedAt": now})
        return RegistryState(
            parse_registry(cached["registry"]), "network", self.url, fetched_at=now
        )

    def _write_cache(self, content: dict[str, Any]) -> None:
        """Whole or not at all: a reader never sees half a file."""
        path = self.cache_file
        try:
            private_files.make_dir(path.parent)
            private_files.write_atomic(path, json.dumps(content), fsync=False)
        except OSError as exc:
            logger.warning("cannot cache the registry in %s: %s", path, exc)


def _describe(exc: BaseException) -> str:
    import urllib.error  # loaded by _fetch already, whose failures these are

    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        return f"unreachable: {exc.reason}"
    return str(exc) or type(exc).__name__
