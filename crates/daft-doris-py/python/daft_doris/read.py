"""``read_doris``: one Doris table as a Daft DataFrame, through Daft's DataSource API."""

from __future__ import annotations

import asyncio
import datetime
import logging
import uuid
import warnings
from collections.abc import AsyncIterator, Iterable
from typing import Any, Unpack

import daft
import pyarrow as pa
from daft.io.pushdowns import Pushdowns
from daft.io.source import DataSource, DataSourceTask
from daft.recordbatch import RecordBatch
from daft.schema import Schema

from daft_doris import _filters, _native, _snapshot
from daft_doris._runner import active_runner
from daft_doris.connection import DorisConnection
from daft_doris.errors import CompatibilityError, ConfigurationError, SchemaError, UnreadableColumnsWarning
from daft_doris.read_options import CONNECTION_OPTIONS, DorisReadOptions, check_option_names

log = logging.getLogger("daft_doris")


def _param_literal(value: Any) -> dict[str, Any]:
    """One ``query_parameters`` value as an IR literal.

    Beyond the filter literals: ``None`` binds SQL ``NULL`` (so ``col = :p`` matches no row,
    as in any SQL; write ``col <=> :p`` or ``col IS NULL`` to match NULLs), a
    ``datetime.time`` binds ``CAST('hh:mm:ss[.ffffff]' AS TIME)``, a ``uuid.UUID`` binds its
    canonical text (Doris stores UUIDs as strings)."""
    if value is None:
        return {"type": "null"}
    if isinstance(value, uuid.UUID):
        return {"type": "string", "value": str(value)}
    if isinstance(value, datetime.time):
        if value.tzinfo is not None:
            raise ConfigurationError("a time-zone-aware time query parameter has no Doris literal")
        return {"type": "time", "value": value.isoformat()}
    return _filters.literal(value)


def _literal_param(value: Any) -> Any:
    """A ``query_parameters`` value as IR JSON (a literal, or a list for ``IN :name``; the
    crates refuse an empty list and one holding ``None``)."""
    if isinstance(value, list | tuple):
        return [_param_literal(v) for v in value]
    try:
        return _param_literal(value)
    except ConfigurationError:
        raise
    except Exception:
        raise ConfigurationError(
            f"query parameter of type {type(value).__name__} cannot be rendered as a Doris literal"
        ) from None


def _daft_layout(schema: pa.Schema) -> pa.Schema:
    """The schema with Daft's own layout for strings and binaries (64-bit offsets).

    Daft keeps these columns as large_string / large_binary: batches that already have that
    layout are taken as they are, where 32-bit offsets would be converted (measured: 0.4 s vs
    0.15 s of CPU for 1 M rows through `from_arrow(...).to_arrow()`)."""
    large = {pa.string(): pa.large_string(), pa.binary(): pa.large_binary()}
    return pa.schema([f.with_type(large.get(f.type, f.type)) for f in schema], metadata=schema.metadata)


class DorisTask(DataSourceTask):
    """One or more SELECTs read together, on whichever worker Daft picks; plain data, so it
    pickles."""

    def __init__(
        self,
        transport: str,
        connection: DorisConnection,
        sql: str | list[str],
        arrow_schema: pa.Schema,
        batch_rows: int,
        batch_bytes: int,
    ) -> None:
        self._transport = transport
        self._connection = connection
        self._statements = [sql] if isinstance(sql, str) else list(sql)
        self._arrow_schema = arrow_schema
        self._batch_rows = batch_rows
        self._batch_bytes = batch_bytes

    @property
    def schema(self) -> Schema:
        return Schema.from_pyarrow_schema(self._arrow_schema)

    @property
    def sql(self) -> str:
        """The statements this task runs, one per line (for tests and debugging; may contain
        literals)."""
        return "\n".join(self._statements)

    @property
    def statements(self) -> list[str]:
        """The statements this task reads together (one per group of tablets)."""
        return list(self._statements)

    def __repr__(self) -> str:
        return (
            f"DorisTask(transport={self._transport!r}, connection={self._connection!r}, sql=<redacted>, "
            f"columns={self._arrow_schema.names})"
        )

    async def read(self) -> AsyncIterator[RecordBatch]:
        # Daft drives every task on one event loop: the blocking native calls run on threads.
        reader = await asyncio.to_thread(
            _native.BatchReader,
            self._transport,
            self._connection,
            self._statements,
            self._arrow_schema,
            self._batch_rows,
            self._batch_bytes,
        )
        try:
            while True:
                batch = await asyncio.to_thread(reader.next_batch)
                if batch is None:
                    return
                yield RecordBatch.from_arrow_record_batches([batch], batch.schema)
        finally:
            reader.close()


def _read_connection(options: dict[str, Any], read_options: dict[str, Any]) -> DorisConnection:
    """The read's connection: the ``connection`` given, or one made of 1.1's flat keywords
    (the fields ``CONNECTION_OPTIONS`` names), with the read's options laid over it by the
    crates (``doris_read::options::ReadOptions::apply``: a given connection's timeouts stay
    unless the read gives its own and its MySQL TLS mode is the floor of the read's)."""
    connection = options.get("connection")
    if connection is None:
        flat = DorisConnection(**{name: options.get(name) for name in CONNECTION_OPTIONS})
        return flat._for_read(given=False, **read_options)
    return connection._for_read(given=True, **read_options)


class DorisDataSource(DataSource):
    """A Doris table as a Daft data source. Its options are ``read_doris``'s
    (``DorisReadOptions``); an option left out takes the crates' default."""

    def __init__(self, **options: Unpack[DorisReadOptions]) -> None:
        check_option_names("DorisDataSource", options)
        given = options.get
        database, table = options["database"], options["table"]
        # The table, every read option and the trusted fragment bound to its parameters,
        # checked by the native request now (the connection lays the same options over its
        # own below).
        read_options = {name: given(name) for name in _native.ReadRequest.NAMES}
        params = _snapshot.mapping("query_parameters", given("query_parameters"))
        checked = self._read_request = _native.ReadRequest(
            database, table, {k: _literal_param(v) for k, v in params.items()}, **read_options
        )
        self._transport = checked.transport
        self._database, self._table = database, table
        self._split = checked.split
        self._batch_rows = checked.batch_rows
        self._batch_bytes = checked.batch_bytes
        self._queries_per_task = checked.queries_per_task
        # Host, ports, user, flags and timeouts are checked by the native connection, made now
        # (before any I/O).
        self._connection = _read_connection(dict(options), read_options)
        if active_runner() == "ray":
            # Every task carries the connection: refuse now, before any I/O, a secret that
            # could not travel with them (daft_doris.secrets).
            self._connection.check_travels()
        schema, unsupported = _native.describe_table(
            self._connection,
            self._database,
            self._table,
            checked.timestamp_units,
        )
        self._arrow_schema: pa.Schema = schema
        # Columns with no Arrow form fail the read (as in 1.1) unless it asked to omit them.
        _native.check_unreadable_columns(checked.unreadable_columns, list(unsupported))
        self._unsupported = {name: (doris_type, reason) for name, doris_type, reason in unsupported}
        if self._unsupported:
            # A read of the whole table must not lose columns quietly: say which, once.
            left_out = ", ".join(
                f"{name} ({doris_type})" for name, (doris_type, _) in self._unsupported.items()
            )
            warnings.warn(
                UnreadableColumnsWarning(
                    f"{self._database}.{self._table}: columns with no Arrow form are left out of the "
                    f"DataFrame: {left_out}"
                ),
                stacklevel=3,
            )

    @property
    def name(self) -> str:
        return f"doris:{self._database}.{self._table}:{self._transport}"

    @property
    def schema(self) -> Schema:
        return Schema.from_pyarrow_schema(self._arrow_schema)

    def __repr__(self) -> str:
        return (
            f"DorisDataSource(connection={self._connection!r}, table={self._database!r}.{self._table!r}, "
            f"transport={self._transport!r}, split={self._split!r})"
        )

    def supports_count_pushdown(self) -> bool:
        return True

    def check_columns(self, names: Iterable[str]) -> None:
        """Refuses columns that are unknown or have no Arrow form, naming the type."""
        known = set(self._arrow_schema.names)
        for name in names:
            if name in self._unsupported:
                doris_type, reason = self._unsupported[name]
                raise SchemaError(f"column {name!r} has type {doris_type}, which cannot be read: {reason}")
            if name not in known:
                raise CompatibilityError(f"column {name!r} is not in {self._database}.{self._table}")

    def _count_request(self, pushdowns: Pushdowns) -> dict[str, Any]:
        columns = list(pushdowns.columns or [])
        alias = columns[0] if columns else self._arrow_schema.names[0]
        # The aggregation Daft pushed, matched whole against the counts Daft can push on
        # this column, built with Daft's own API (its visitor does not walk aggregations);
        # doris-read adds the mode's NULL rule and refuses a filter it cannot render.
        counts = {str(daft.col(alias).count(mode)): mode for mode in ("all", "valid", "null")}
        mode = counts.get(str(pushdowns.aggregation))
        if mode is None:
            raise CompatibilityError("Daft pushed an aggregation other than a count of the read's column")
        ir, complete = _filters.to_ir(pushdowns.filters)
        if not complete:
            raise CompatibilityError("count pushdown with a filter Doris cannot evaluate")
        return {"count_alias": alias, "count_mode": mode, "filter": ir}

    async def get_tasks(self, pushdowns: Pushdowns) -> AsyncIterator[DataSourceTask]:
        # The columns to read, as described when the source was made: planning does not
        # describe the table a second time.
        projected = None
        if pushdowns.aggregation is not None:
            # A count under a limit counts at most `limit` rows (the plan caps it).
            request = {**self._count_request(pushdowns), "limit": pushdowns.limit}
        else:
            wanted = set(pushdowns.columns or self._arrow_schema.names)
            wanted |= _filters.required_columns(pushdowns.filters)
            self.check_columns(wanted)
            columns = [n for n in self._arrow_schema.names if n in wanted]
            ir, complete = _filters.to_ir(pushdowns.filters)
            limit = pushdowns.limit if complete else None
            request = {"columns": columns, "filter": ir, "limit": limit}
            projected = pa.schema([self._arrow_schema.field(n) for n in columns])
        schema, groups, _residual, _limit_pushed, warning = await asyncio.to_thread(
            _native.plan_read,
            self._connection,
            self._read_request,
            schema=projected,
            queries_per_task=self._queries_per_task,
            **request,
        )
        if warning:
            log.warning("%s", warning)
        schema = _daft_layout(schema)
        # A task reads its statements together (grouped by the plan: by default one group
        # per core, as many as Daft's native runner reads at once).
        for statements in groups:
            yield DorisTask(
                self._transport,
                self._connection,
                statements,
                schema,
                self._batch_rows,
                self._batch_bytes,
            )


def read_doris(
    *,
    columns: Iterable[str] | None = None,
    filter: daft.Expression | None = None,
    **options: Unpack[DorisReadOptions],
) -> daft.DataFrame:
    """Reads one physical Doris table into a lazy Daft DataFrame.

    ``options`` are ``DorisReadOptions``: ``host``, ``database``, ``table`` and
    ``transport`` are required, every other option has its default there (the crates'
    own). ``columns`` selects columns and ``filter`` rows, as ``select`` and ``where`` on
    the result would.

    The transport is explicit and never changes after a failure. Columns, the filter's
    translatable conjuncts, the limit (only when the whole filter is pushed) and counts
    are pushed into the SQL; Daft applies the rest. ``split="auto"`` plans one query per
    group of tablets (at most ``target_tasks`` groups) through the FE's ``_query_plan``
    (queries do not share a snapshot). A Daft task reads ``queries_per_task`` of them at
    once (default: the groups divided by this machine's cores, rounded up, since Daft's
    native runner runs about one task per core), so every group is read at the same time.

    Over Flight, each result endpoint's ``DoGet`` receives the session's bearer token, so
    it goes only to the FE, to a location rewritten by ``flight_endpoint_rewrite``, to a
    host the FE reports at ``/api/backends`` (any port), or to a ``host:port`` listed in
    ``flight_allowed_locations``; any other location fails the read with
    ``ConfigurationError`` before a row is fetched. ``tls_ca_file`` is trusted on every
    TLS link (HTTPS, MySQL, ``flight_secure``).

    ``query_parameters`` bind ``:name`` markers of ``unsafe_where_sql`` as typed literals
    (never spliced text): bool, int, float, ``Decimal``, str, bytes, ``date``, naive
    ``datetime``, naive ``time``, ``UUID`` (its text), a non-empty list or tuple for
    ``IN (:name)``, and ``None`` for SQL ``NULL``. ``col = :p`` with ``None`` matches no
    row, as in any SQL: write ``col <=> :p`` (null-safe equality) or ``col IS NULL``. The
    fragment must keep its structure (balanced parentheses, no ``;``), and ``--`` must be
    followed by a space: Doris reads ``--x`` as a comment where MySQL reads two minus signs.

    >>> fe = {"host": ports["host"], "mysql_port": ports["query_port"], "http_port": ports["fe_http_port"]}
    >>> events = read_doris(**fe, database="demo", table="events", transport="mysql", split="auto",
    ...                     filter=daft.col("score") >= 20)
    >>> events.sort("id").select("id", "score").to_pydict()
    {'id': [2, 3], 'score': [20, 30]}
    >>> read_doris(**fe, database="demo", table="events", transport="mysql",
    ...            unsafe_where_sql="name = :who", query_parameters={"who": "a"}).count_rows()
    1
    """
    names = _native.check_columns(columns)
    if filter is not None and not isinstance(filter, daft.Expression):
        raise ConfigurationError("filter must be a daft.Expression")
    check_option_names("read_doris", options)
    source = DorisDataSource(**options)
    if names is not None:
        source.check_columns(names)
    frame = source.read()
    if filter is not None:
        frame = frame.where(filter)
    if names is not None:
        frame = frame.select(*names)
    return frame
