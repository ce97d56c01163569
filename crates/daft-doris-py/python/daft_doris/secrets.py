"""Passwords: literal strings or ``SecretRef.env(NAME)``, resolved where they are used."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from daft_doris.errors import ConfigurationError

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class SecretRef:
    """A password read from an environment variable in each process that needs it.

    The driver resolves it for planning and metadata, every worker for its own reads and
    loads; the value is never pickled, logged or shown by ``repr``.

    >>> import os, pickle
    >>> os.environ["DOC_DORIS_PW"] = "s3cr3t-doc-value"
    >>> ref = SecretRef.env("DOC_DORIS_PW")
    >>> ref, ref.resolve() == "s3cr3t-doc-value", b"s3cr3t" in pickle.dumps(ref)
    (SecretRef.env('DOC_DORIS_PW'), True, False)
    """

    environment_variable: str

    def __post_init__(self) -> None:
        if not isinstance(self.environment_variable, str) or not _ENV_NAME.match(self.environment_variable):
            raise ConfigurationError("secret environment variable has an invalid name")

    @classmethod
    def env(cls, name: str) -> SecretRef:
        """A reference to the environment variable ``name``."""
        return cls(name)

    def resolve(self) -> str:
        """The variable's value in this process."""
        value = os.environ.get(self.environment_variable)
        if value is None:
            raise ConfigurationError(
                f"required secret environment variable {self.environment_variable!r} is not set"
            )
        return value

    def __repr__(self) -> str:
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
