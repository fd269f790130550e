from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import client, server_env, state_dir, workspace  # noqa: F401 (fixtures)
from tests.registry.support import RegistryServer, fixture_registry, registry_server


@pytest.fixture
def served() -> Iterator[RegistryServer]:
    with registry_server() as server:
        server.set_registry(fixture_registry(server))
        yield server


@pytest.fixture
def xdg(tmp_path: Path) -> dict[str, str]:
    """A private cache and data home (the registry cache, installed agents)."""
    return {
        "HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
