"""``write_doris``: a Daft DataFrame into a Doris table through Stream Load (Daft DataSink)."""

from __future__ import annotations

import threading
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
from daft_doris.errors import (
    ConfigurationError,
    DaftOlapError,
    DorisPartialCommitError,
)
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
        _native.check_write_options(given)
        self._options: dict[str, Any] = given
        self._target: Any = None
        self._data_schema: pa.Schema | None = None
        self._started = False
        self._lock = threading.Lock()
        self._mode = _native.commit_mode(self._options)
        # Per-load labels of a keyed write that is not atomic (shared by its tasks here).
        self._labels: Any = None
        self._precommitted: list[dict[str, Any]] = []
        # Atomic mode: the run (`_native.AtomicRun`: key, label, staging table or the key's
        # earlier commit; set by start()).
        self._atomic: Any = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_lock", None)
        state.pop("_labels", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._labels = None

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

    def _check(self, schema: pa.Schema) -> Any:
        """The table check of ``schema`` (keys, model, types, nullability), before any byte:
        a picklable ``_native.WriteTarget`` (the columns written and their value rules)."""
        return _native.check_write_target(
            self._connection,
            self._table.database,
            self._table.name,
            schema,
            self._options,
        )

    def start(self) -> None:
        if active_runner() != "native":
            _native.check_retried_tasks(self._options)
        if self._data_schema is not None:
            self._target = self._check(self._data_schema)
        self._started = True
        if self._mode == "atomic":
            self._atomic = _native.atomic_begin(
                self._connection,
                self._table.database,
                self._table.name,
                self._options,
            )

    def _writer(self, target: Any) -> Any:
        """A native writer of this write's loads (of the atomic run's staging table)."""
        return _native.TableWriter(
            self._connection,
            database=self._table.database,
            table=self._table.name,
            options=self._options,
            target=target,
            staging_table=self._atomic.staging if self._atomic is not None else None,
        )

    def write(self, micropartitions: Iterator[MicroPartition]) -> Iterator[WriteResult[dict]]:
        if not self._started:
            raise ConfigurationError("write() was called before start()")
        if self._atomic is not None and self._atomic.committed:
            # The key's write was committed by an earlier run: load nothing.
            for _ in micropartitions:
                pass
            return
        with self._lock:
            if self._labels is None:
                # Deterministic per-load labels (a keyed write that is not atomic), shared
                # by this process's tasks; False: the write has none.
                self._labels = _native.WriteLabels.of(self._options) or False
        target, writer = self._target, None
        for micropartition in micropartitions:
            table = micropartition.to_arrow()
            if table.num_rows == 0:
                continue
            if writer is None:
                target = target or self._check(table.schema)
                writer = self._writer(target)
            report = writer.write(table, self._labels or None)
            if report["precommitted"]:
                with self._lock:
                    self._precommitted.extend(report["precommitted"])
            yield WriteResult(
                result=report,
                bytes_written=report["uploaded_bytes"],
                rows_written=report["loaded_rows"],
            )

    def settle(self, commit: bool) -> None:
        """Commits (or aborts) every pre-committed load of a two-phase write.

        A commit that fails aborts every load not yet committed and raises
        ``DorisPartialCommitError`` naming those that did; an abort goes on past a failed
        one. The list is emptied only once the native layer has handled every load.
        """
        with self._lock:
            txns = list(self._precommitted)
        if not txns:
            return
        writer = self._writer(None)
        try:
            writer.settle(txns, commit)
        except DorisPartialCommitError:
            # Every load was handled: committed, aborted, or reported left (a commit whose
            # outcome is unknown is never aborted here).
            self._forget(txns)
            raise
        self._forget(txns)

    def _forget(self, txns: list[dict[str, Any]]) -> None:
        """Settled loads leave the list; any other failure keeps them for the abort."""
        with self._lock:
            self._precommitted = [t for t in self._precommitted if t not in txns]

    def discard(self) -> None:
        """Drops a failed atomic run's staging table (a rerun with the key would too)."""
        if self._atomic is None or self._atomic.committed:
            return
        _native.atomic_discard(
            self._connection, self._table.database, self._table.name, self._options, self._atomic
        )

    def finalize(self, write_results: list[WriteResult[dict]]) -> MicroPartition:
        results = [r.result for r in write_results]
        if self._atomic is not None:
            if self._atomic.committed:
                return _summary(_native.atomic_summary(results))
            summary = _native.atomic_publish(
                self._connection,
                self._table.database,
                self._table.name,
                self._options,
                self._atomic,
                results,
                list(self._target.columns) if self._target else [],
            )
            if summary["staging_left"]:
                warnings.warn(
                    f"the write committed, but its staging table {summary['staging_left']} could not "
                    "be dropped: daft_doris.cleanup_staging removes it",
                    stacklevel=2,
                )
            return _summary(summary)
        if self._mode == "two_phase":
            self.settle(commit=True)
        return _summary(_native.summarize_loads(results, self._mode == "two_phase"))


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
        _clean_up_after_failure(sink)
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


def _clean_up_after_failure(sink: DorisDataSink) -> None:
    """Aborts a failed two-phase write's loads still pre-committed; drops a failed atomic
    run's staging table (best effort: a rerun with the same key drops it as well)."""
    with suppress(DaftOlapError):
        sink.settle(commit=False)
    with suppress(DaftOlapError):
        sink.discard()


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
