"""The exception classes of daft_doris.

The hierarchy follows the reference connector (``daft-doris`` 1.1) so that code written
for it keeps working; two classes are added, each also a child of an existing one:
``DorisTimeoutError`` (a ``TransportError``) and ``DorisWriteAuthenticationError`` (both a
``DorisWriteError`` and an ``AuthenticationError``).

Messages never contain a password, a bound value, SQL text or a response body.
"""

from __future__ import annotations


class DaftOlapError(RuntimeError):
    """Base error raised by daft_doris.

    An error of a load carries what Doris said as attributes (``None`` where they do not
    apply): ``label``, ``txn_id``, ``status`` (of an existing label, or of a two-phase
    step), ``error_url`` (the BE's log of the rejected rows; it shows row data to whoever
    can reach the BE, so it is not in the message), ``attempts`` and ``column`` (of a
    rejected value). An error that wraps another has it as ``__cause__``.

    ``kind`` says what kind of failure it is, in the vocabulary every Rust crate of the
    project uses (``doris_sql::ErrorKind``): ``"configuration"``, ``"authentication"``,
    ``"permission"``, ``"not_found"``, ``"incompatible"``, ``"transport"``, ``"timeout"``,
    ``"rejected"`` (Doris refused; nothing took effect) or ``"ambiguous"`` (it may have
    taken effect: rerun with the same key or label). Each class carries its usual kind; an
    error raised from a Rust crate carries that error's own (a ``DorisWriteError`` for a
    cut link says ``"transport"``, for a refused load ``"rejected"``).
    """

    kind: str | None = None
    label: str | None = None
    txn_id: int | None = None
    status: str | None = None
    error_url: str | None = None
    attempts: int | None = None
    column: str | None = None


class ConfigurationError(DaftOlapError, ValueError):
    """An option is invalid; nothing was sent to Doris."""

    kind = "configuration"


class DependencyError(DaftOlapError, ImportError):
    """An optional dependency is missing."""

    kind = "configuration"


class CompatibilityError(DaftOlapError):
    """Daft asked for something this connector cannot honour (e.g. an unknown column)."""

    kind = "incompatible"


class SchemaError(DaftOlapError):
    """The table's schema cannot be read, or a value does not match it."""

    kind = "incompatible"


class DiscoveryError(DaftOlapError):
    """Tablet planning or writer metadata discovery failed."""

    kind = "transport"


class AuthenticationError(DaftOlapError):
    """Doris refused the credentials."""

    kind = "authentication"


class DatabasePermissionError(DaftOlapError):
    """The user lacks a privilege."""

    kind = "permission"


class DatabaseObjectNotFoundError(DaftOlapError):
    """The database, table or column does not exist."""

    kind = "not_found"


class TransportError(DaftOlapError):
    """The connection failed or a query failed while running."""

    kind = "transport"


class DorisTimeoutError(TransportError):
    """An operation took longer than its timeout."""

    kind = "timeout"


class UnsupportedPredicateError(DaftOlapError):
    """A filter cannot be translated to Doris SQL (internal: such filters stay in Daft)."""

    kind = "configuration"


class UnreadableColumnsWarning(UserWarning):
    """A table has columns with no Arrow form (HLL, BITMAP, …); a read leaves them out of
    the DataFrame, and selecting one raises ``SchemaError``."""


class DorisWriteError(DaftOlapError):
    """A Stream Load failed with a known outcome: nothing of the failed load is committed."""

    kind = "rejected"


class DorisWriteAuthenticationError(DorisWriteError, AuthenticationError):
    """Stream Load refused the credentials."""

    kind = "authentication"


class DorisWritePermissionError(DorisWriteError, DatabasePermissionError):
    """The user lacks a privilege the write needs (an atomic write checks DROP and CREATE in
    the database, LOAD on the target and SELECT in the database before the first byte);
    nothing was written."""

    kind = "permission"


class DorisAmbiguousWriteError(DorisWriteError):
    """A load may or may not have been committed (its answer was lost after retries).

    With an idempotence key, rerunning the same write is safe: Doris refuses the labels
    of loads that did commit.
    """

    kind = "ambiguous"


class DorisPartialCommitError(DorisWriteError):
    """Settling a two-phase write stopped part-way: the message names the transactions that
    committed (their rows are visible), those aborted, and any left pre-committed (Doris
    aborts those at its pre-commit timeout). Doris commits one transaction at a time, so a
    two-phase write is all-or-nothing per load, not across loads.

    ``committed``, ``aborted`` and ``left`` list them (``"transaction [id]"`` or
    ``"label [l]"``); ``__cause__`` is the failure that stopped the settlement.
    """

    kind = "ambiguous"

    committed: list[str] | None = None
    aborted: list[str] | None = None
    left: list[str] | None = None


class DorisLabelExistsError(DorisWriteError):
    """A label is taken by a load that is not this write's own earlier attempt."""

    kind = "rejected"


class DorisMetadataError(DorisWriteError):
    """The table's metadata (SHOW CREATE TABLE / DESC) cannot be understood."""

    kind = "incompatible"


class DorisTableCompatibilityError(DorisWriteError):
    """The data does not fit the table (columns, keys, types, nulls or lengths)."""

    kind = "incompatible"


class DorisReleaseError(DorisWriteError, CompatibilityError):
    """The server's Doris release cannot run what the write asked (the atomic mode before
    3.0.4, ``partial_update_new_key_behavior`` or flexible partial updates before 3.1, group
    commit on 2.1.0); checked before anything is written. The message names the release,
    why, and what to use instead (docs/compatibility.md)."""

    kind = "incompatible"


class DorisStreamingJobError(DaftOlapError):
    """A streaming job cannot do what was asked (e.g. a failed task paused it)."""

    kind = "rejected"


class StagingOrderError(DorisStreamingJobError, ConfigurationError):
    """Staged file names would sort at or below a job's offset: Doris would never load them."""

    kind = "configuration"


__all__ = [
    "AuthenticationError",
    "CompatibilityError",
    "ConfigurationError",
    "DaftOlapError",
    "DatabaseObjectNotFoundError",
    "DatabasePermissionError",
    "DependencyError",
    "DiscoveryError",
    "DorisAmbiguousWriteError",
    "DorisLabelExistsError",
    "DorisPartialCommitError",
    "DorisMetadataError",
    "DorisReleaseError",
    "DorisStreamingJobError",
    "DorisTableCompatibilityError",
    "DorisTimeoutError",
    "DorisWriteAuthenticationError",
    "DorisWriteError",
    "DorisWritePermissionError",
    "SchemaError",
    "StagingOrderError",
    "TransportError",
    "UnreadableColumnsWarning",
    "UnsupportedPredicateError",
]
