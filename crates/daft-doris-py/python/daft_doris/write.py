"""``write_doris``: a Daft DataFrame into a Doris table through Stream Load (Daft DataSink)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
from contextlib import suppress
from typing import Any, Unpack

import daft
import pyarrow as pa
from daft.io.sink import DataSink, WriteResult
from daft.recordbatch import MicroPartition
from daft.schema import Schema

from daft_doris import _native
from daft_doris._runner import active_runner
from daft_doris.connection import DorisConnection, DorisTable
from daft_doris.errors import ConfigurationError, DaftOlapError
from daft_doris.write_options import DorisWriteKeywords, DorisWriteOptions, check_option_names

# The crates' defaults (``_native.DEFAULTS``): each lives once, in the crate that applies it.
_WRITE: dict[str, Any] = _native.DEFAULTS["write"]

#: The commit ledger atomic writes record their keys in (one table per database).
DEFAULT_COMMIT_LEDGER: str = _WRITE["commit_ledger"]

SUMMARY_SCHEMA = pa.schema(
    [
        ("status", pa.string()),
        ("batches", pa.int64()),
        ("attempted_rows", pa.int64()),
        ("loaded_rows", pa.int64()),
        ("filtered_rows", pa.int64()),
        ("uploaded_bytes", pa.int64()),
        ("already_loaded_batches", pa.int64()),
    ]
)


class DorisDataSink(DataSink[dict]):
    """Daft DataSink that loads every micropartition through Stream Load.

    ``write_doris`` builds one and checks the DataFrame first; it also works as a plain
    Daft sink (each task checks its first micropartition against the table). ``options``
    is one ``DorisWriteOptions`` mapping (``DorisWriteOptions(operation="upsert")``), an
    option left out taking the crates' default:

    >>> frame = daft.from_pydict({"id": [10, 11], "name": ["p", "q"], "score": [1, 2]})
    >>> written = frame.write_sink(DorisDataSink(connection, DorisTable("demo", "sink")))
    >>> sum(written.to_pydict()["loaded_rows"])
    2
    """

    def __init__(
        self, connection: DorisConnection, table: DorisTable, options: DorisWriteOptions | None = None
    ) -> None:
        if not isinstance(connection, DorisConnection):
            raise ConfigurationError("connection must be a DorisConnection")
        if not isinstance(table, DorisTable):
            raise ConfigurationError("table must be a DorisTable")
        if options is not None and not isinstance(options, Mapping):
            raise ConfigurationError("options must be a DorisWriteOptions mapping")
        if active_runner() == "ray":
            # Every task carries the sink: refuse now, before anything is written, what
            # could not be pickled then.
            connection.check_travels()
        self._connection = connection
        self._table = table
        # The options as given (a snapshot: later changes to the caller's mappings do not
        # reach the tasks); the crates fill in the rest and check every value.
        given = dict(options or {})
        check_option_names("DorisDataSink", given)
        if isinstance(given.get("load_properties"), Mapping):
            given["load_properties"] = dict(given["load_properties"])
        self._options: dict[str, Any] = given
        # The write (`_native.WriteRun`, over `doris_write::WriteRun`): every step decided
        # in the crates; it pickles with its state to the workers.
        self._run = _native.WriteRun(connection, table.database, table.name, given)
        self._data_schema: pa.Schema | None = None

    def __repr__(self) -> str:
        return (
            f"DorisDataSink(connection={self._connection!r}, table={self._table!r}, "
            f"options={self._options!r})"
        )

    def name(self) -> str:
        return "Apache Doris Stream Load"

    def schema(self) -> Schema:
        return Schema.from_pyarrow_schema(SUMMARY_SCHEMA)

    def bind_schema(self, schema: pa.Schema) -> None:
        """The DataFrame's schema, checked against the table by ``start()`` (``write_doris``
        binds it). Without it, as with ``df.write_sink(DorisDataSink(...))``, each task
        checks its first micropartition's schema before that micropartition's upload."""
        self._data_schema = schema

    def start(self) -> None:
        """Describes the table and checks the write against it and the server's release
        (the bound schema too), before any byte; begins an atomic run."""
        self._run.start(self._data_schema, retried_tasks=active_runner() != "native")

    def write(self, micropartitions: Iterator[MicroPartition]) -> Iterator[WriteResult[dict]]:
        if self._run.committed_before:
            # The key's write was committed by an earlier run: load nothing.
            for _ in micropartitions:
                pass
            return
        task = self._run.task()
        for micropartition in micropartitions:
            report = task.write(micropartition.to_arrow())
            if report is not None:
                yield WriteResult(
                    result=report,
                    bytes_written=report["uploaded_bytes"],
                    rows_written=report["loaded_rows"],
                )

    def finalize(self, write_results: list[WriteResult[dict]]) -> MicroPartition:
        """Publishes an atomic run, commits a two-phase write's loads; the summary row."""
        summary = self._run.finish([r.result for r in write_results])
        if summary["staging_left"]:
            warnings.warn(
                f"the write committed, but its staging table {summary['staging_left']} could not "
                "be dropped: daft_doris.cleanup_staging removes it",
                stacklevel=2,
            )
        return _summary(summary)

    def abort(self) -> None:
        """Undoes a failed write (best effort): aborts this process's pre-committed loads
        of a two-phase write, drops an atomic run's staging table (a rerun with the same
        key drops it as well)."""
        with suppress(DaftOlapError):
            self._run.abort()


def _summary(summary: dict[str, Any]) -> MicroPartition:
    """The one-row summary of a write (``SUMMARY_SCHEMA``) from the native summary."""
    row = {name: [summary[name]] for name in SUMMARY_SCHEMA.names}
    return MicroPartition.from_arrow(pa.table(row, schema=SUMMARY_SCHEMA))


def write_doris(
    dataframe: daft.DataFrame,
    *,
    connection: DorisConnection,
    table: DorisTable,
    checkpoint: daft.IdempotentCommit | None = None,
    **options: Unpack[DorisWriteKeywords],
) -> daft.DataFrame:
    """Writes a DataFrame into an existing Doris table; returns a one-row summary.

    ``options`` are the keywords of ``DorisWriteOptions`` (each one's type and default
    there); ``checkpoint`` gives the ``idempotence_key`` of a Daft ``IdempotentCommit``. The
    data's columns are checked against the table (by name: keys, model, types,
    nullability) before the first upload. Each load carries a label; with an
    ``idempotence_key`` the labels are deterministic, so rerunning the same write after a
    failure loads nothing twice. Loads are retried under the same label; ``Label Already
    Exists`` is resolved by the existing job's status. ``two_phase_commit=True``
    pre-commits every load and commits them all at the end (aborting them on failure).

    ``atomic=True`` (the default when an ``idempotence_key`` or a ``checkpoint`` is given)
    makes the whole write one Doris transaction labelled by the key: rows are staged,
    then published with one ``INSERT … WITH LABEL``; a rerun with the same key after any
    failure, partitioning or task retry writes nothing twice, and a committed key is a
    no-op (``status = "already_committed"``). It works on Daft's Ray runner too.

    Doris forgets a finished label after ``label_keep_max_second`` (3 days by default) and
    beyond ``label_num_threshold`` newer transactions in the database (2,000 by default),
    so an atomic write also records its key in ``commit_ledger``, a table of the target's
    database (``daft_doris_commits`` by default, created on first use), in the same
    transaction as the rows: a rerun of a key is a no-op however long after.
    ``commit_ledger=None`` relies on the label alone (a rerun after Doris forgot it writes
    the rows again). See docs/consistency.md for what every mode guarantees.

    ``request_timeout_seconds`` (default: the connection's) is the client's wait for Doris's
    answer to each load (to the headers, and after the last body byte), as in 1.1: nothing
    of it is sent to Doris; ``load_timeout_seconds`` is the Stream Load ``timeout`` header
    (default: Doris's own). The upload itself has no time limit while its bytes keep moving,
    and a body the BE stops reading for 60 s fails the attempt (retried under the same
    label).

    ``write_mode="overwrite"`` replaces every row of the table with the DataFrame's in the
    same one transaction (``INSERT OVERWRITE TABLE … WITH LABEL`` from the staging table; an
    empty DataFrame empties the table); it implies the atomic mode and ``operation="load"``.

    >>> frame = daft.from_pydict({"id": [1, 2, 3], "name": ["a", "b", "c"], "score": [7, 8, 9]})
    >>> sink = DorisTable("demo", "sink")
    >>> first = write_doris(frame, connection=connection, table=sink, idempotence_key="doc-1")
    >>> first.select("status", "attempted_rows").to_pydict()
    {'status': ['success'], 'attempted_rows': [3]}
    >>> again = write_doris(frame, connection=connection, table=sink, idempotence_key="doc-1")
    >>> again.select("status").to_pydict()  # the key committed once: nothing is written twice
    {'status': ['already_committed']}
    """
    if not isinstance(dataframe, daft.DataFrame):
        raise ConfigurationError("dataframe must be a daft.DataFrame")
    check_option_names("write_doris", options)
    if checkpoint is not None:
        if not isinstance(checkpoint, daft.IdempotentCommit):
            raise ConfigurationError("checkpoint must be a daft.IdempotentCommit")
        key = options.get("idempotence_key")
        if key is not None and key != checkpoint.idempotence_key:
            raise ConfigurationError("idempotence_key and checkpoint name different keys")
        options["idempotence_key"] = checkpoint.idempotence_key
    sink = DorisDataSink(connection, table, options)
    sink.bind_schema(dataframe.schema().to_pyarrow_schema())
    try:
        return dataframe.write_sink(sink)
    except BaseException as error:
        # Any failure, KeyboardInterrupt included: nothing pre-committed or staged is left.
        sink.abort()
        if isinstance(error, DaftOlapError) or not isinstance(error, RuntimeError):
            raise
        # Daft wraps exceptions raised in write() in a RuntimeError; give back the typed one.
        cause = error.__cause__
        while cause is not None and not isinstance(cause, DaftOlapError):
            cause = cause.__cause__
        if isinstance(cause, DaftOlapError):
            # The typed error, without Daft's wrapper in its context, keeping its own cause.
            cause.__suppress_context__ = True
            raise cause  # noqa: B904
        raise


def cleanup_staging(
    connection: DorisConnection, database: str, older_than_seconds: float = 86_400.0
) -> list[str]:
    """Drops atomic-write staging tables of ``database`` made more than
    ``older_than_seconds`` ago (left by runs that crashed and were never rerun); returns
    their names.

    >>> cleanup_staging(connection, "demo", older_than_seconds=3600)
    []
    """
    if not isinstance(connection, DorisConnection):
        raise ConfigurationError("connection must be a DorisConnection")
    _native.check_identifier("database", database)
    return list(_native.atomic_cleanup(connection, database, float(older_than_seconds)))


def cleanup_commit_ledger(
    connection: DorisConnection,
    database: str,
    older_than_seconds: float = 30 * 86_400.0,
    commit_ledger: str = DEFAULT_COMMIT_LEDGER,
) -> int:
    """Deletes the commit ledger's records of ``database`` written more than
    ``older_than_seconds`` ago (30 days by default); returns how many.

    A key whose record is gone and whose label Doris forgot is no longer recognised: its
    rerun writes again. Keep records at least as long as anything may rerun a key.

    >>> cleanup_commit_ledger(connection, "demo", older_than_seconds=365 * 86_400)
    0
    """
    if not isinstance(connection, DorisConnection):
        raise ConfigurationError("connection must be a DorisConnection")
    _native.check_identifier("database", database)
    _native.check_identifier("commit_ledger", commit_ledger)
    return int(_native.atomic_cleanup_ledger(connection, database, commit_ledger, float(older_than_seconds)))
