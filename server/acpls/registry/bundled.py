"""The registry snapshot shipped inside the package (snapshot.json; SNAPSHOT.md says where and
when it was taken, and under which licence): what acpls knows with no network and no cache."""

from __future__ import annotations

import functools
import json
from importlib import resources

from acpls.registry.model import Registry, parse_registry

SNAPSHOT_DATE = "2026-02-07"
SNAPSHOT_SOURCE = (
    "https://github.com/agentclientprotocol/registry/tree/3de1678346d1b37b6c3f07de503043ebcbb9cbdb"
)


def snapshot_text() -> str:
    return resources.files("acpls.registry").joinpath("snapshot.json").read_text(encoding="utf-8")


@functools.cache
def load_snapshot() -> Registry:
    return parse_registry(json.loads(snapshot_text()))
