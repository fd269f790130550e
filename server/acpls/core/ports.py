"""What the core needs from the editor side, as an interface.

The core knows ACP and acpls' rules; it does not know pygls. `editor/port.py` implements this
over the LSP connection, and tests can implement it in memory.
"""

from __future__ import annotations

from typing import Any, Protocol

from acpls.services.file_reads import read_text
from acpls.settings import DEFAULT_MAX_READ_BYTES
from acpls.translate.uris import path_to_uri

MESSAGE_ERROR = 1
MESSAGE_WARNING = 2
MESSAGE_INFO = 3
MESSAGE_LOG = 4


class EditorPort(Protocol):
    @property
    def custom_mode(self) -> bool:
        """The editor speaks the acpls/* protocol (capabilities.experimental.acpls)."""
        ...

    def supports(self, feature: str) -> bool:
        """The editor declared `capabilities.experimental.acpls.<feature>: true` (custom
        requests newer than version 1, such as `resolveConflict`)."""
        ...

    @property
    def supports_show_document(self) -> bool: ...

    @property
    def supports_create_file(self) -> bool: ...

    @property
    def workspace_roots(self) -> list[str]: ...

    def notify(self, method: str, params: Any) -> None:
        """Send an acpls/* notification (an attrs message from editor/messages.py)."""
        ...

    async def request(self, method: str, params: Any, msg_id: str) -> Any:
        """Send an acpls/* request with the given id (so it can be cancelled); await its result
        (plain JSON)."""
        ...

    def cancel_request(self, msg_id: str) -> None:
        """Tell the editor a request it was sent is no longer wanted ($/cancelRequest)."""
        ...

    def show_message(self, level: int, text: str) -> None: ...

    async def show_message_request(
        self, level: int, message: str, actions: list[str], msg_id: str | None = None
    ) -> str | None:
        """window/showMessageRequest; with `msg_id`, `cancel_request(msg_id)` withdraws it."""
        ...

    async def show_document(
        self, uri: str, selection: dict[str, Any] | None, *, take_focus: bool = False
    ) -> None: ...

    async def open_external(self, url: str) -> bool:
        """window/showDocument with `external: true`; False when the editor cannot or did not."""
        ...

    async def apply_edit(self, edit: dict[str, Any], label: str) -> tuple[bool, str | None]:
        """workspace/applyEdit; returns (applied, failure reason)."""
        ...

    def open_documents(self) -> dict[str, str]:
        """Every open document's synced text, by URI."""
        ...

    async def documents_settled(self, limit_s: float) -> None:
        """Wait (at most `limit_s` seconds) until the editor has reported, with didChange, every
        edit of an open document it said it applied: editors debounce didChange and may send it
        after their applyEdit reply, and a snapshot taken in between would miss the edit."""
        ...

    def document_text(self, uri: str) -> str | None:
        """The editor's synced text of an open document (unsaved changes included)."""
        ...


class EditorBacklog(Protocol):
    def unread_bytes(self) -> int | None:
        """Bytes sent to the editor that it has not read yet (acpls' own buffer and the OS's
        pipe or socket); None where that cannot be known (then nothing waits for the editor)."""
        ...


def current_text(
    editor: EditorPort, path: str, max_bytes: int = DEFAULT_MAX_READ_BYTES
) -> str | None:
    """`path`'s text as the user sees it: the editor's buffer when it is open (unsaved edits
    included), else the disk's; None when neither can be read as UTF-8. The disk is read only
    when `path` is a regular file of at most `max_bytes` bytes: the agent names these paths, and
    a FIFO would block acpls, a device never end."""
    try:
        uri = path_to_uri(path)
    except ValueError:
        return None
    text = editor.document_text(uri)
    if text is not None:
        return text
    try:
        return read_text(path, max_bytes=max_bytes)
    except (OSError, UnicodeDecodeError):
        return None
