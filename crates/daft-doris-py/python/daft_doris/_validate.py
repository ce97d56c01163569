"""Argument checks run before any network I/O.

Each raises ``ConfigurationError`` with a message that names the argument and the rule,
never the offending value (it may be a secret pasted into the wrong argument).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Mapping
from typing import Any

from daft_doris.errors import ConfigurationError


def identifier(what: str, value: object) -> str:
    """A database, table or column name: a non-empty string without NUL."""
    if not isinstance(value, str) or not value or "\x00" in value:
        raise ConfigurationError(f"{what} must be a non-empty string without NUL characters")
    return value


def flag(what: str, value: object) -> bool:
    """A boolean switch."""
    if not isinstance(value, bool):
        raise ConfigurationError(f"{what} must be a bool")
    return value


def choice(what: str, value: object, allowed: tuple[str, ...]) -> str:
    """One of a fixed set of strings."""
    if value not in allowed:
        names = ", ".join(repr(a) for a in allowed)
        raise ConfigurationError(f"{what} must be one of {names}")
    return value  # type: ignore[return-value]


def columns(value: object) -> tuple[str, ...] | None:
    """A non-empty list of distinct column names, or ``None``."""
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise ConfigurationError("columns must be an iterable of column names, not a single string")
    names = tuple(identifier("column name", c) for c in value)
    if not names:
        raise ConfigurationError("columns must name at least one column")
    if len(set(names)) != len(names):
        raise ConfigurationError("columns must not repeat a name")
    return names


def snapshot_mapping(what: str, value: object, *, str_values: bool = False) -> dict[str, Any]:
    """A plain, picklable copy of an option mapping (keys are strings)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigurationError(f"{what} must be a mapping")
    out: dict[str, Any] = {}
    for key in sorted(value, key=str):
        if not isinstance(key, str) or not key:
            raise ConfigurationError(f"{what} keys must be non-empty strings")
        item = value[key]
        if str_values and not isinstance(item, str):
            raise ConfigurationError(f"{what} value of {key!r} must be a string")
        try:
            out[key] = pickle.loads(pickle.dumps(item))
        except Exception:
            raise ConfigurationError(
                f"{what} value of {key!r} cannot be copied safely ({type(item).__name__})"
            ) from None
    return out


MAX_PEM_BYTES = 1 << 20


def read_pem(name: str, path: object) -> str | None:
    """The PEM text of the CA file `path` (read now, where the connection is configured),
    or `None`."""
    if path is None:
        return None
    if not isinstance(path, str) or not path:
        raise ConfigurationError(f"{name} must be the path of a PEM file")
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_PEM_BYTES + 1)
    except OSError as error:
        raise ConfigurationError(f"{name} {path} cannot be read: {error.strerror}") from None
    if len(data) > MAX_PEM_BYTES:
        raise ConfigurationError(f"{name} {path} is larger than {MAX_PEM_BYTES} bytes")
    text = data.decode("ascii", errors="replace")
    if "-----BEGIN CERTIFICATE-----" not in text:
        raise ConfigurationError(f"{name} {path} holds no PEM certificate")
    return text
