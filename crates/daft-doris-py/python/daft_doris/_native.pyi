"""Types of ``daft_doris._native``, the PyO3 binding over the Rust crates.

The binding converts types and maps errors; every rule lives in the crates (see
docs/architecture.md). Options travel as the ``DorisWriteOptions`` keys and ``ReadOptions`` fields;
rows as Arrow (the C data interface). ``tests/python/test_docstrings.py`` checks that this
file names exactly what the module holds.
"""

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

__version__: str
#: The crates' defaults, keyed "connection", "read", "write" and "jobs", then by argument name.
DEFAULTS: dict[str, dict[str, Any]]
ERROR_KINDS: list[str]
ERROR_CLASSES: list[str]

class Connection:
    def __init__(
        self,
        *,
        host: str,
        mysql_port: int | None = None,
        user: str | None = None,
        http_port: int | None = None,
        http_secure: bool | None = None,
        connect_timeout_seconds: float | None = None,
        query_timeout_seconds: float | None = None,
        flight_port: int | None = None,
        flight_secure: bool | None = None,
        flight_endpoint_rewrite: Mapping[str, str] = ...,
        flight_options: Sequence[tuple[str, str]] | None = None,
        flight_allowed_locations: Sequence[str] | None = None,
        ca_pem: bytes | None = None,
        mysql_ca_pem: bytes | None = None,
        mysql_ssl_mode: str | None = None,
        mysql_server_public_key: str | None = None,
        mysql_max_packet_bytes: int | None = None,
        request_timeout_seconds: float | None = None,
        redirect_hosts: Sequence[str] | None = None,
        redirect_ports: Sequence[int] | None = None,
        trust_reported_backends: bool | None = None,
        redirect_policy: str | None = None,
        verify_tls: bool | None = None,
        client_cert_file: str | None = None,
        client_key_file: str | None = None,
        mysql_client_cert_file: str | None = None,
        mysql_client_key_file: str | None = None,
    ) -> None: ...
    @property
    def connect_timeout_seconds(self) -> float: ...
    @property
    def query_timeout_seconds(self) -> float: ...
    @property
    def mysql_ssl_mode(self) -> str: ...

class ReadOptions:
    def __init__(
        self,
        *,
        transport: str,
        batch_rows: int | None = None,
        batch_bytes: int | None = None,
        queries_per_task: int | None = None,
        mysql_options: Mapping[str, Any] | None = None,
        flight_options: Mapping[str, Any] | None = None,
        flight_endpoint_rewrite: Mapping[str, str] | None = None,
        flight_allowed_locations: Sequence[str] | None = None,
        unreadable_columns: str | None = None,
    ) -> None: ...
    transport: str
    batch_rows: int
    batch_bytes: int
    queries_per_task: int | None
    mysql_ssl_mode: str | None
    mysql_ssl_ca: str | None
    mysql_server_public_key: str | None
    mysql_ssl_cert: str | None
    mysql_ssl_key: str | None
    flight_options: list[tuple[str, str]]
    flight_endpoint_rewrite: list[tuple[str, str]]
    flight_allowed_locations: list[str]
    mysql_connect_timeout_seconds: float | None
    mysql_query_timeout_seconds: float | None
    mysql_max_packet_bytes: int | None
    unreadable_columns: str
    timestamp_units: str

def check_unreadable_columns(policy: str, unreadable: Sequence[tuple[str, str, str]]) -> None: ...
def mysql_ssl_mode_at_least(mysql_options: Mapping[str, Any] | None, floor: str) -> str: ...

class ReadRequest:
    def __init__(
        self,
        database: str,
        table: str,
        split: str | None = None,
        discovery_policy: str | None = None,
        target_tasks: int | None = None,
        max_tasks: int | None = None,
        planning_timeout_seconds: float | None = None,
        unsafe_where_sql: str | None = None,
        query_parameters: Mapping[str, Any] | None = None,
    ) -> None: ...
    @property
    def split(self) -> str: ...

class BatchReader:
    def __init__(
        self,
        transport: str,
        connection: Connection,
        password: str,
        sql: str,
        schema: pa.Schema,
        batch_rows: int,
        batch_bytes: int,
    ) -> None: ...
    def __iter__(self) -> BatchReader: ...
    def __next__(self) -> pa.RecordBatch: ...

class CatalogOptions:
    def __init__(self, *, name: str, transport: str, flight_port: int | None) -> None: ...

class WriteTarget:
    columns: list[str]
    def __init__(self, columns: Sequence[str], rules: Any) -> None: ...

class WriteLabels:
    @staticmethod
    def of(options: Mapping[str, Any]) -> WriteLabels | None: ...

class TableWriter:
    def __init__(
        self,
        connection: Connection,
        password: str,
        *,
        database: str,
        table: str,
        options: Mapping[str, Any],
        target: WriteTarget | None = None,
        staging_table: str | None = None,
    ) -> None: ...
    def write(
        self, data: pa.Table | pa.RecordBatchReader, labels: WriteLabels | None = None
    ) -> dict[str, Any]: ...
    def settle(self, txns: Sequence[tuple[int, str | None]], commit: bool) -> None: ...

class S3Insert:
    def __init__(
        self,
        database: str,
        table: str,
        uri: str,
        format: str,
        columns: Sequence[str] | None = None,
        source_properties: Mapping[str, str] | None = None,
    ) -> None: ...

class StagePlan:
    def __init__(self, *, destination: str, prefix: str, file_format: str, rows_per_file: int) -> None: ...

def describe_table(
    connection: Connection, password: str, database: str, table: str, timestamp_units: str | None = None
) -> tuple[pa.Schema, list[tuple[str, str, str]]]: ...
def plan_read(
    connection: Connection,
    password: str,
    request: ReadRequest,
    columns: Sequence[str] | None = None,
    filter: Any = None,
    limit: int | None = None,
    count_alias: str | None = None,
    schema: pa.Schema | None = None,
    queries_per_task: int | None = None,
) -> Any: ...
def check_write_target(
    connection: Connection,
    password: str,
    database: str,
    table: str,
    schema: pa.Schema,
    options: Mapping[str, Any],
) -> WriteTarget: ...
def check_write_options(options: Mapping[str, Any]) -> None: ...
def check_retried_tasks(options: Mapping[str, Any]) -> None: ...
def commit_mode(options: Mapping[str, Any]) -> str: ...
def summarize_loads(results: Sequence[Mapping[str, Any]], two_phase_committed: bool) -> dict[str, Any]: ...
def atomic_begin(
    connection: Connection, password: str, database: str, table: str, options: Mapping[str, Any]
) -> dict[str, Any]: ...
def atomic_publish(
    connection: Connection,
    password: str,
    database: str,
    table: str,
    options: Mapping[str, Any],
    key: str,
    staging: str,
    results: Sequence[Mapping[str, Any]],
    table_columns: Sequence[str],
) -> dict[str, Any]: ...
def atomic_summary(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]: ...
def atomic_discard(
    connection: Connection,
    password: str,
    database: str,
    table: str,
    options: Mapping[str, Any],
    key: str,
    staging: str,
) -> None: ...
def atomic_cleanup(
    connection: Connection, password: str, database: str, older_than_seconds: float
) -> list[str]: ...
def atomic_cleanup_ledger(
    connection: Connection, password: str, database: str, ledger: str, older_than_seconds: float
) -> int: ...
def catalog_list_databases(connection: Connection, password: str, prefix: str | None = None) -> list[str]: ...
def catalog_list_tables(
    connection: Connection, password: str, database: str, prefix: str | None = None
) -> list[str]: ...
def catalog_exists(
    connection: Connection, password: str, database: str, table: str | None = None
) -> bool: ...
def catalog_database(
    connection: Connection, password: str, database: str, create: bool, if_not_exists: bool
) -> None: ...
def catalog_create_table(
    connection: Connection,
    password: str,
    database: str,
    table: str,
    schema: pa.Schema,
    properties: Mapping[str, Any] | None = None,
    if_not_exists: bool = False,
) -> None: ...
def catalog_drop_table(connection: Connection, password: str, database: str, table: str) -> None: ...
def diagnose(
    connection: Connection,
    password: str,
    database: str | None = None,
    table: str | None = None,
    flight: bool = False,
) -> Any: ...
def check_identifier(what: str, value: Any) -> str: ...
def qualified_name(database: str, table: str) -> str: ...
def check_flag(what: str, value: Any) -> bool: ...
def check_columns(value: Any) -> list[str] | None: ...
def read_ca_file(name: str, path: str | None) -> bytes | None: ...
def check_s3_source(uri: str, format: str, properties: Mapping[str, str] | None = None) -> Any: ...
def check_job_name(name: str) -> str: ...
def redact_properties(pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]: ...
def job_wait(
    connection: Connection,
    password: str,
    name: str,
    last_key: str,
    *,
    timeout_seconds: float,
    poll_seconds: float,
) -> Any: ...
def job_create(
    connection: Connection,
    password: str,
    name: str,
    insert: S3Insert,
    *,
    max_batch_files: int | None = None,
    max_batch_bytes: int | None = None,
    max_interval_seconds: float | None = None,
    session: Mapping[str, str] | None = None,
    offset: str | None = None,
    comment: str | None = None,
) -> str: ...
def job_alter(
    connection: Connection,
    password: str,
    name: str,
    *,
    insert: S3Insert | None = None,
    max_batch_files: int | None = None,
    max_batch_bytes: int | None = None,
    max_interval_seconds: float | None = None,
    session: Mapping[str, str] | None = None,
    offset: str | None = None,
) -> str: ...
def job_control(
    connection: Connection, password: str, action: str, name: str, if_exists: bool = False
) -> None: ...
def job_list(connection: Connection, password: str, name: str | None = None) -> pa.Table: ...
def task_list(connection: Connection, password: str, name: str | None = None) -> pa.Table: ...
def jobs_schema() -> pa.Schema: ...
def tasks_schema() -> pa.Schema: ...
