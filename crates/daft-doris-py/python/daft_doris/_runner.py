"""Which Daft runner drives this process."""

from __future__ import annotations

from daft_doris.errors import CompatibilityError


def active_runner() -> str:
    """Daft's runner in this process, ``"native"`` or ``"ray"`` (asked without starting one)."""
    import daft

    try:
        return daft.runners.get_or_infer_runner_type()
    except Exception:
        raise CompatibilityError("this Daft version does not tell which runner is active") from None
