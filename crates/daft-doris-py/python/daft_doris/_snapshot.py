"""Plain, picklable copies of the option mappings a read or write keeps.

A ``DataSource`` or ``DataSink`` is pickled to Ray workers; a mapping the caller keeps
(and may change later) is copied when the read or write is made. This is conversion, not
policy: what the keys and values mean is checked by the native layer.
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from typing import Any

from daft_doris.errors import ConfigurationError


def mapping(what: str, value: object, *, str_values: bool = False) -> dict[str, Any]:
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
