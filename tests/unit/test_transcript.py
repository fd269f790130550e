"""services/transcript.py: a message's text read from its blocks."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from acpls.services import transcript

_VALUES = st.none() | st.integers(0, 3) | st.text(max_size=4) | st.just({"uri": "file:///a"})
_RESOURCES = st.fixed_dictionaries({}, optional={"text": _VALUES, "uri": _VALUES})
_BLOCKS = st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "resource_link", "resource", "image"]) | _VALUES},
        # `resource` an object: the agent's blocks are validated before they reach here.
        optional={"text": _VALUES, "name": _VALUES, "uri": _VALUES, "resource": _RESOURCES},
    ),
    _VALUES,
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_BLOCKS, max_size=4))
def test_a_messages_text_is_each_blocks_text_joined(blocks: list[Any]) -> None:
    """The in-place read of plain text blocks writes what `_content_text` of each block writes."""
    expected = "".join(transcript._content_text(block) for block in blocks)
    assert transcript._blocks_text(blocks) == expected
