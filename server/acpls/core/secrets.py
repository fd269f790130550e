"""The secret values acpls knows, in one place, and the redaction of its logs.

Two sources: what the user typed to sign in (`acpls/authEnv` answers, core/auth.py) and the
environment acpls gives each agent it starts (the editor's minus `env.remove`, the agent's `env`
setting, the sign-in answers; terminals inherit it) where a variable's name says key, token,
secret or password (translate/redact.py `is_secret_name`). The writers of files that hold agent
output (the transcript) take `redactor` for each write; log records are redacted by a filter on
the root logger's handlers, so acpls' stderr (an editor's lsp.log) never carries them either.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Mapping

from acpls.translate.redact import MIN_SECRET_LENGTH, Redactor, secret_environment


class KnownSecrets:
    """`value -> name` of every secret acpls knows; `redactor` is rebuilt only when one is new."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}
        self._redactor = Redactor()
        self._lock = threading.Lock()  # sign-ins and agent starts may race

    @property
    def redactor(self) -> Redactor:
        return self._redactor

    def add(self, values: Mapping[str, str]) -> None:
        """`name -> value` pairs that are secret whatever their names (sign-in answers)."""
        with self._lock:
            fresh = {
                value: name
                for name, value in values.items()
                if len(value) >= MIN_SECRET_LENGTH and value not in self._names
            }
            if fresh:
                self._names = {**self._names, **fresh}
                self._redactor = Redactor(self._names)

    def add_environment(self, env: Mapping[str, str]) -> None:
        """The secret-named variables of an environment acpls gives an agent or a terminal."""
        self.add(secret_environment(env))

    def guard_logs(self) -> None:
        """Redact these secrets from every record the root logger's handlers write (acpls'
        stderr). The filter lets go by itself once this object is gone."""
        redaction = LogRedaction(self)
        for handler in logging.getLogger().handlers:
            handler.addFilter(redaction)


class LogRedaction(logging.Filter):
    """A handler filter: each record's message (and traceback) with the secrets redacted."""

    def __init__(self, secrets: KnownSecrets) -> None:
        super().__init__()
        self._secrets = weakref.ref(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = self._secrets()
        redactor = secrets.redactor if secrets is not None else None
        if not redactor:
            return True
        message = record.getMessage()
        redacted = redactor.redact(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redactor.redact(record.exc_text)
        return True
