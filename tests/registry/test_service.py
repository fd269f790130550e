"""Registry refresh against a local HTTP server: fetched and cached, revalidated with a
conditional GET (304), offline falls back to the cache and then to the bundled snapshot."""

from __future__ import annotations

import json
from pathlib import Path

from acpls.registry.bundled import load_snapshot
from acpls.services.registry import RegistryService


async def test_a_fetch_is_cached_then_revalidated_with_a_conditional_get(served, xdg):
    service = RegistryService(xdg, served.url("registry.json"))
    assert service.current().source == "snapshot"  # nothing cached yet, no network touched
    assert served.requests == []

    state = await service.refresh()
    assert state.source == "network" and state.error is None
    assert state.registry.agent("tar-agent") is not None
    cached = json.loads(service.cache_file.read_text())
    assert cached["etag"] == '"v1"' and cached["url"] == served.url("registry.json")
    assert str(service.cache_file).startswith(xdg["XDG_CACHE_HOME"] + "/acpls/")

    state = await service.refresh()
    first, second = served.hits("/registry.json")
    assert "If-None-Match" not in first
    assert second["If-None-Match"] == '"v1"'
    assert second["If-Modified-Since"] == served.last_modified
    assert state.source == "network" and state.registry.agent("tar-agent") is not None


async def test_a_changed_registry_replaces_the_cached_one(served, xdg):
    service = RegistryService(xdg, served.url("registry.json"))
    await service.refresh()
    served.set_registry({"version": "1.0.0", "agents": [], "extensions": []}, etag='"v2"')
    state = await service.refresh()
    assert state.registry.agents == ()
    assert json.loads(service.cache_file.read_text())["etag"] == '"v2"'


async def test_offline_with_a_cache_uses_the_cache(served, xdg):
    url = served.url("registry.json")
    await RegistryService(xdg, url).refresh()
    served.stop()
    fresh = RegistryService(xdg, url)  # a new acpls process, the server gone
    assert fresh.current().source == "cache"
    state = await fresh.refresh()
    assert state.source == "cache" and state.registry.agent("zip-agent") is not None
    assert state.error is not None and "unreachable" in state.error


async def test_offline_with_no_cache_uses_the_snapshot(xdg):
    service = RegistryService(xdg, "http://127.0.0.1:9/registry.json")  # discard port: refused
    state = await service.refresh()
    assert state.source == "snapshot" and state.registry == load_snapshot()
    assert state.error and state.to_json()["snapshot"]["date"] == "2026-02-07"


async def test_an_http_error_or_a_malformed_registry_keeps_what_was_there(served, xdg):
    service = RegistryService(xdg, served.url("registry.json"))
    await service.refresh()
    served.status_override = 500
    state = await service.refresh()
    assert state.registry.agent("tar-agent") is not None and "HTTP 500" in (state.error or "")
    served.status_override = None
    served.files["/registry.json"] = b'{"agents": "nope"}'
    served.etag = '"v3"'
    state = await service.refresh()
    assert state.registry.agent("tar-agent") is not None and state.error


async def test_each_url_has_its_own_cache_and_an_empty_url_never_fetches(
    served, xdg, tmp_path: Path
):
    one = RegistryService(xdg, served.url("registry.json"))
    await one.refresh()
    other = RegistryService(xdg, served.url("other/registry.json"))
    assert other.cache_file != one.cache_file and other.current().source == "snapshot"
    offline = RegistryService(xdg, "")
    before = len(served.requests)
    assert (await offline.refresh()).source == "snapshot"
    assert len(served.requests) == before


async def test_a_file_url_is_a_custom_registry(xdg, tmp_path: Path):
    path = tmp_path / "registry.json"
    path.write_text(
        json.dumps(
            {
                "version": "1.0.0",
                "agents": [
                    {
                        "id": "corp",
                        "name": "Corp",
                        "version": "1.0.0",
                        "description": "ours",
                        "distribution": {"npx": {"package": "@corp/agent"}},
                    }
                ],
            }
        )
    )
    state = await RegistryService(xdg, path.as_uri()).refresh()
    assert [a.id for a in state.registry.agents] == ["corp"]
