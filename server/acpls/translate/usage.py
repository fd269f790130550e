"""The context meter, pure: how a session's `usage` (used / size tokens, cost) is worded, and when
it has come near the limit (editors/protocol.md section 5.4, `usage`).

Every front end warns once per session when the context is at least `WARN_AT` full; the generic
mode's transcript and warning come from here.
"""

from __future__ import annotations

from typing import Any

# How full the context window is when editors warn (once per session, when it first gets there).
WARN_AT = 0.8


def fraction(used: Any, size: Any) -> float | None:
    if not _count(used) or not _count(size) or size <= 0:
        return None
    return max(0.0, used / size)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def describe(update: dict[str, Any]) -> str | None:
    """`context 1,200/200,000 (1%) · 0.01 USD`, or None when the update has no usable counts."""
    used, size = update.get("used"), update.get("size")
    share = fraction(used, size)
    if share is None:
        return None
    text = f"context {used:,}/{size:,} ({round(share * 100)}%)"
    cost = update.get("cost")
    if isinstance(cost, dict) and isinstance(cost.get("amount"), (int, float)):
        currency = cost.get("currency") if isinstance(cost.get("currency"), str) else ""
        text += f" · {cost['amount']:.2f} {currency}".rstrip()
    return text


class WarnOnce:
    """True the first time a session's usage reaches `WARN_AT` (again after it drops below, as
    after a compaction)."""

    def __init__(self) -> None:
        self._warned = False

    def crossed(self, update: dict[str, Any]) -> bool:
        share = fraction(update.get("used"), update.get("size"))
        if share is None:
            return False
        if share < WARN_AT:
            self._warned = False
            return False
        if self._warned:
            return False
        self._warned = True
        return True


def turn_usage(result: Any) -> dict[str, Any] | None:
    """The token counts of a v1 prompt result (`usage`, unstable in ACP v1), kept as sent."""
    counts = result.get("usage") if isinstance(result, dict) else None
    if isinstance(counts, dict) and _count(counts.get("totalTokens")):
        return counts
    return None


def tokens_text(counts: dict[str, Any]) -> str | None:
    """`1,234 tokens (1,000 in, 234 out)`, or None without a total."""
    total = counts.get("totalTokens")
    if not _count(total):
        return None
    parts = [
        f"{counts[key]:,} {word}"
        for key, word in (
            ("inputTokens", "in"),
            ("outputTokens", "out"),
            ("thoughtTokens", "thought"),
        )
        if _count(counts.get(key))
    ]
    return f"{total:,} tokens" + (f" ({', '.join(parts)})" if parts else "")
