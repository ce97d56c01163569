"""``read_doris``: one Doris table as a Daft DataFrame, through Daft's DataSource API."""

from __future__ import annotations

import asyncio
import datetime
import logging
import uuid
import warnings
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any, Literal

import daft
import pyarrow as pa
from daft.io.pushdowns import Pushdowns
from daft.io.source import DataSource, DataSourceTask
from daft.recordbatch import RecordBatch
from daft.schema import Schema

from daft_doris import _filters, _native, _snapshot
from daft_doris._endpoint import Endpoint
from daft_doris.errors import CompatibilityError, ConfigurationError, SchemaError, UnreadableColumnsWarning
from daft_doris.secrets import Secret, check_secret

# The crates' defaults (``_native.DEFAULTS``): each lives once, in the crate that applies it.
_CONNECTION: dict[str, Any] = _native.DEFAULTS["connection"]
_READ: dict[str, Any] = _native.DEFAULTS["read"]

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
    """A ``query_parameters`` value as IR JSON (a literal, or a list for ``IN :name``)."""
    if isinstance(value, list | tuple):
        if not value:
            raise ConfigurationError("a list query parameter must not be empty")
        if any(v is None for v in value):
            # `c IN (NULL, …)` never matches the NULL: refuse rather than mislead.
            raise ConfigurationError("a list query parameter must not contain None (IN never matches NULL)")
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
        endpoint: Endpoint,
        sql: str | list[str],
        arrow_schema: pa.Schema,
        batch_rows: int,
        batch_bytes: int,
    ) -> None:
        self._transport = transport
        self._endpoint = endpoint
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
            f"DorisTask(transport={self._transport!r}, endpoint={self._endpoint!r}, sql=<redacted>, "
            f"columns={self._arrow_schema.names})"
        )

    async def read(self) -> AsyncIterator[RecordBatch]:
        endpoint = self._endpoint
        # Daft drives every task on one event loop: the blocking native calls run on threads.
        reader = await asyncio.to_thread(
            _native.BatchReader,
            self._transport,
            endpoint.native(),
            endpoint.password_value(),
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


class DorisDataSource(DataSource):
    """A Doris table as a Daft data source (see ``read_doris`` for the arguments)."""

    def __init__(
        self,
        *,
        host: str,
        database: str,
        table: str,
        transport: Literal["mysql", "flight"],
        mysql_port: int = _CONNECTION["mysql_port"],
        http_port: int = _CONNECTION["http_port"],
        flight_port: int = _CONNECTION["flight_port"],
        http_secure: bool = False,
        flight_secure: bool = False,
        tls_ca_file: str | None = None,
        username: str = _CONNECTION["username"],
        password: Secret = "",
        split: Literal["single", "auto"] = _READ["split"],
        discovery_policy: Literal["single", "error"] = _READ["discovery_policy"],
        batch_rows: int = _READ["batch_rows"],
        batch_bytes: int = _READ["batch_bytes"],
        target_tasks: int = _READ["target_tasks"],
        max_tasks: int = _READ["max_tasks"],
        queries_per_task: int | None = None,
        connect_timeout_seconds: float = _CONNECTION["connect_timeout_seconds"],
        query_timeout_seconds: float = _CONNECTION["query_timeout_seconds"],
        planning_timeout_seconds: float = _READ["planning_timeout_seconds"],
        unsafe_where_sql: str | None = None,
        query_parameters: Mapping[str, Any] | None = None,
        mysql_options: Mapping[str, Any] | None = None,
        flight_options: Mapping[str, str] | None = None,
        flight_endpoint_rewrite: Mapping[str, str] | None = None,
        flight_allowed_locations: Iterable[str] | None = None,
    ) -> None:
        # The transport, batch bounds and the MySQL and Flight options, checked natively.
        options = _native.ReadOptions(
            transport=transport,
            batch_rows=batch_rows,
            batch_bytes=batch_bytes,
            queries_per_task=queries_per_task,
            mysql_options=mysql_options,
            flight_options=flight_options,
            flight_endpoint_rewrite=flight_endpoint_rewrite,
            flight_allowed_locations=flight_allowed_locations,
        )
        self._transport = options.transport
        params = _snapshot.mapping("query_parameters", query_parameters)
        # The table and the options that shape the plan, checked (and the trusted fragment
        # bound) by the native request, now.
        self._read_request = _native.ReadRequest(
            database,
            table,
            split,
            discovery_policy,
            target_tasks,
            max_tasks,
            planning_timeout_seconds,
            unsafe_where_sql,
            {k: _literal_param(v) for k, v in params.items()},
        )
        self._database, self._table, self._split = database, table, split
        self._batch_rows = options.batch_rows
        self._batch_bytes = options.batch_bytes
        self._queries_per_task = options.queries_per_task
        # Host, ports, user, flags and timeouts are checked by the native connection, which
        # `native()` makes (and describe_table needs) before any I/O.
        self._endpoint = Endpoint(
            host=host,
            mysql_port=mysql_port,
            http_port=http_port,
            http_secure=http_secure,
            user=username,
            password=check_secret(password),
            connect_timeout_seconds=connect_timeout_seconds,
            query_timeout_seconds=query_timeout_seconds,
            flight_port=flight_port,
            flight_secure=flight_secure,
            flight_endpoint_rewrite=tuple(options.flight_endpoint_rewrite),
            flight_allowed_locations=tuple(options.flight_allowed_locations),
            flight_options=tuple(options.flight_options),
            ca_pem=_native.read_ca_file(
                "mysql_options ssl_ca" if options.mysql_ssl_ca else "tls_ca_file",
                options.mysql_ssl_ca or tls_ca_file,
            ),
            mysql_ssl_mode=options.mysql_ssl_mode,
            mysql_server_public_key=options.mysql_server_public_key,
        )
        schema, unsupported = _native.describe_table(
            self._endpoint.native(), self._endpoint.password_value(), self._database, self._table
        )
        self._arrow_schema: pa.Schema = schema
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
            f"DorisDataSource(endpoint={self._endpoint!r}, table={self._database!r}.{self._table!r}, "
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
        # this column, built with Daft's own API (its visitor does not walk aggregations).
        counts = {str(daft.col(alias).count(mode)): mode for mode in ("all", "valid", "null")}
        mode = counts.get(str(pushdowns.aggregation))
        if mode is None:
            raise CompatibilityError("Daft pushed an aggregation other than a count of the read's column")
        filters = []
        if pushdowns.filters is not None:
            ir, complete = _filters.to_ir(pushdowns.filters)
            if not complete:
                raise CompatibilityError("count pushdown with a filter Doris cannot evaluate")
            filters.append(ir)
        if mode != "all":
            column = {"kind": "column", "name": alias}
            filters.append({"kind": "is_null", "arg": column, "negated": mode == "valid"})
        ir = None if not filters else filters[0] if len(filters) == 1 else {"kind": "and", "args": filters}
        return {"count_alias": alias, "filter": ir}

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
        endpoint = self._endpoint
        schema, groups, _residual, _limit_pushed, warning = await asyncio.to_thread(
            _native.plan_read,
            endpoint.native(),
            endpoint.password_value(),
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
                endpoint,
                statements,
                schema,
                self._batch_rows,
                self._batch_bytes,
            )


def read_doris(
    *,
    host: str,
    database: str,
    table: str,
    transport: Literal["mysql", "flight"],
    mysql_port: int = _CONNECTION["mysql_port"],
    http_port: int = _CONNECTION["http_port"],
    flight_port: int = _CONNECTION["flight_port"],
    http_secure: bool = False,
    flight_secure: bool = False,
    tls_ca_file: str | None = None,
    username: str = _CONNECTION["username"],
    password: Secret = "",
    columns: Iterable[str] | None = None,
    filter: daft.Expression | None = None,
    split: Literal["single", "auto"] = _READ["split"],
    discovery_policy: Literal["single", "error"] = _READ["discovery_policy"],
    batch_rows: int = _READ["batch_rows"],
    batch_bytes: int = _READ["batch_bytes"],
    target_tasks: int = _READ["target_tasks"],
    max_tasks: int = _READ["max_tasks"],
    queries_per_task: int | None = None,
    connect_timeout_seconds: float = _CONNECTION["connect_timeout_seconds"],
    query_timeout_seconds: float = _CONNECTION["query_timeout_seconds"],
    planning_timeout_seconds: float = _READ["planning_timeout_seconds"],
    unsafe_where_sql: str | None = None,
    query_parameters: Mapping[str, Any] | None = None,
    mysql_options: Mapping[str, Any] | None = None,
    flight_options: Mapping[str, str] | None = None,
    flight_endpoint_rewrite: Mapping[str, str] | None = None,
    flight_allowed_locations: Iterable[str] | None = None,
) -> daft.DataFrame:
    """Reads one physical Doris table into a lazy Daft DataFrame.

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
    source = DorisDataSource(
        host=host,
        database=database,
        table=table,
        transport=transport,
        mysql_port=mysql_port,
        http_port=http_port,
        flight_port=flight_port,
        http_secure=http_secure,
        flight_secure=flight_secure,
        tls_ca_file=tls_ca_file,
        username=username,
        password=password,
        split=split,
        discovery_policy=discovery_policy,
        batch_rows=batch_rows,
        batch_bytes=batch_bytes,
        target_tasks=target_tasks,
        max_tasks=max_tasks,
        queries_per_task=queries_per_task,
        connect_timeout_seconds=connect_timeout_seconds,
        query_timeout_seconds=query_timeout_seconds,
        planning_timeout_seconds=planning_timeout_seconds,
        unsafe_where_sql=unsafe_where_sql,
        query_parameters=query_parameters,
        mysql_options=mysql_options,
        flight_options=flight_options,
        flight_endpoint_rewrite=flight_endpoint_rewrite,
        flight_allowed_locations=flight_allowed_locations,
    )
    if names is not None:
        source.check_columns(names)
    frame = source.read()
    if filter is not None:
        frame = frame.where(filter)
    if names is not None:
        frame = frame.select(*names)
    return frame
