"""Settings for the whole test tree."""

from __future__ import annotations

from hypothesis import settings

# Property tests check what holds, not how fast: a per-example deadline fails at random when
# the two CI cores are busy (a stateful terminal test took 253 ms against the default 200 ms).
# Speed is measured by bench/, against same-run baselines.
settings.register_profile("acpls", deadline=None)
settings.load_profile("acpls")
