"""A notification record that keeps when each message arrived (pacing tests count per second)."""

from __future__ import annotations

import time
from typing import Any


class TimedRecord(list[Any]):
    """The client's record of acpls/* notifications, each arrival's monotonic time beside it."""

    def __init__(self) -> None:
        super().__init__()
        self.times: list[float] = []

    def append(self, item: Any) -> None:
        self.times.append(time.monotonic())
        super().append(item)
