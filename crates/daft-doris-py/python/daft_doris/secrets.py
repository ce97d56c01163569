"""Passwords: where they live, and which of them may travel inside a pickled task.

A password is a string or a ``SecretRef``:

- ``SecretRef.env(NAME)`` and ``SecretRef.file(PATH)`` travel as the name or the path and
  are resolved in each process that connects (the driver for planning and metadata, every
  worker for its own reads and loads);
- a plain string stays in the process that was given it: an object holding one refuses to
  be pickled (on Daft's Ray runner every task is pickled into Ray's object store, and from
  there to spill files and workers), with an error naming the choices;
- ``SecretRef.inline(value)`` is the explicit choice to send the value itself with every
  task, for a cluster whose object store is trusted (the reference connector 1.1 pickled
  plain passwords this way, without asking).

No form shows its value in ``repr``, an error or a log line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from daft_doris import _native
from daft_doris.errors import ConfigurationError

# What an object holding a plain-string password says when asked to pickle it.
PLAIN_PASSWORD_PICKLED = (
    "the password is a plain string, which stays in this process: pickling it (as Daft's Ray "
    "runner does with every task) would put it in Ray's object store. Pass "
    "password=SecretRef.env(NAME) or SecretRef.file(PATH), resolved on each worker, or "
    "SecretRef.inline(password) to send it with the tasks"
)


@dataclass(frozen=True)
class SecretRef:
    """A password kept out of a task's pickle (``env``, ``file``), or sent in it by choice
    (``inline``).

    >>> import os, pickle
    >>> os.environ["DOC_DORIS_PW"] = "s3cr3t-doc-value"
    >>> ref = SecretRef.env("DOC_DORIS_PW")
    >>> ref, ref.resolve() == "s3cr3t-doc-value", b"s3cr3t" in pickle.dumps(ref)
    (SecretRef.env('DOC_DORIS_PW'), True, False)
    >>> SecretRef.inline("s3cr3t-doc-value")
    SecretRef.inline(<redacted>)
    """

    environment_variable: str | None = None
    path: str | None = None
    value: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        given = [v for v in (self.environment_variable, self.path, self.value) if v is not None]
        if len(given) != 1:
            raise ConfigurationError("a SecretRef names one of an environment variable, a file or a value")
        if self.value is None:
            # The source's rule (`doris_connection::SecretRef`).
            _native.secret_source(*self._source(), resolve=False)
        elif not isinstance(self.value, str):
            raise ConfigurationError("an inline secret is a string")

    def _source(self) -> tuple[str, object]:
        return ("env", self.environment_variable) if self.path is None else ("file", self.path)

    @classmethod
    def env(cls, name: str) -> SecretRef:
        """The environment variable ``name``, read in each process that connects."""
        return cls(environment_variable=name)

    @classmethod
    def file(cls, path: str) -> SecretRef:
        """The text of the file at ``path`` (one trailing line break dropped), read in each
        process that connects: a secret mounted on every worker (a Kubernetes secret, say)."""
        return cls(path=os.fspath(path))

    @classmethod
    def inline(cls, value: str) -> SecretRef:
        """The value itself, sent inside every pickled task: the explicit choice for a
        cluster whose object store and spill files are trusted."""
        return cls(value=value)

    def resolve(self) -> str:
        """The secret's value in this process (a file's text without one trailing line
        break, at most 64 KiB of UTF-8)."""
        if self.value is not None:
            return self.value
        return _native.secret_source(*self._source(), resolve=True)

    def __repr__(self) -> str:
        if self.value is not None:
            return "SecretRef.inline(<redacted>)"
        if self.path is not None:
            return f"SecretRef.file({self.path!r})"
        return f"SecretRef.env({self.environment_variable!r})"


Secret = str | SecretRef


def check_secret(value: object) -> Secret:
    """Checks a password argument's type."""
    if not isinstance(value, str | SecretRef):
        raise ConfigurationError("password must be a string or SecretRef")
    return value


def resolve_secret(value: Secret) -> str:
    """The password itself."""
    return value.resolve() if isinstance(value, SecretRef) else value


def check_picklable(value: Secret) -> None:
    """Refuses to pickle a plain-string password (an empty one is no password and may)."""
    if isinstance(value, str) and value:
        raise ConfigurationError(PLAIN_PASSWORD_PICKLED)
