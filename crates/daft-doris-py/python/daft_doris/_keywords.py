"""Options given as keywords and declared once, in a ``TypedDict``: their names checked at
run time as Python checks a function's keywords (a type checker sees the same before the
code runs)."""

from collections.abc import Mapping
from typing import Any


def check_option_names(owner: str, options: Mapping[str, Any], declared: Any) -> None:
    """Refuses, as Python refuses a bad keyword, an option of ``options`` that is not a key
    of the ``TypedDict`` ``declared``, or a required key left out."""
    required: frozenset[str] = declared.__required_keys__
    known = required | declared.__optional_keys__
    unknown = sorted(set(options) - known)
    if unknown:
        raise TypeError(f"{owner}() got an unexpected keyword argument {unknown[0]!r}")
    missing = sorted(required - set(options))
    if missing:
        names = ", ".join(repr(name) for name in missing)
        raise TypeError(f"{owner}() missing required keyword arguments: {names}")
