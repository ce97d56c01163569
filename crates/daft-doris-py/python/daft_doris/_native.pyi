"""Types of ``daft_doris._native``, the PyO3 binding over the Rust crates.

The binding converts types and maps errors; every rule lives in the crates (see
docs/architecture.md). Options travel as the ``DorisWriteOptions`` keys and ``ReadOptions`` fields;
rows as Arrow (the C data interface). ``tests/python/test_docstrings.py`` checks that this
file names exactly what the module holds.
"""

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import pyarrow as pa

from daft_doris.secrets import SecretRef

__version__: str
#: The crates' defaults, keyed "connection", "read", "write" and "jobs", then by argument name.
DEFAULTS: dict[str, dict[str, Any]]
OPTION_NAMES: dict[str, list[str]]
ERROR_KINDS: list[str]
ERROR_CLASSES: list[str]

class DorisConnection:
    """Where a Doris FE is and who connects (``daft_doris.connection``)."""

    def __init__(
        self,
        *,
        host: str,
        username: str = "root",
        password: str | SecretRef = "",
        http_port: int = 8030,
        mysql_port: int = 9030,
        http_secure: bool = False,
        request_timeout_seconds: float = 300.0,
        redirect_hosts: Sequence[str] = (),
        redirect_ports: Sequence[int] = (),
        trust_reported_backends: bool | None = None,
        redirect_policy: Literal["", "direct", "random-be", "public", "private", "public-private"] = "",
        verify_tls: bool = True,
        tls_ca_file: str | None = None,
        mysql_ssl_mode: Literal[
            "disabled", "preferred", "required", "verify_ca", "verify_identity"
        ] = "preferred",
        tls_client_cert_file: str | None = None,
        tls_client_key_file: str | None = None,
    ) -> None: ...
    host: str
    username: str
    password: str | SecretRef
    http_port: int
    mysql_port: int
    http_secure: bool
    request_timeout_seconds: float
    redirect_hosts: tuple[str, ...]
    redirect_ports: tuple[int, ...]
    trust_reported_backends: bool | None
    redirect_policy: str
    verify_tls: bool
    tls_ca_file: str | None
    mysql_ssl_mode: str
    tls_client_cert_file: str | None
    tls_client_key_file: str | None
    @property
    def connect_timeout_seconds(self) -> float: ...
    @property
    def query_timeout_seconds(self) -> float: ...
    def password_value(self) -> str: ...
    def check_travels(self) -> None: ...
    def _for_read(self, *, given: bool, **read_options: Any) -> DorisConnection: ...

def check_unreadable_columns(policy: str, unreadable: Sequence[tuple[str, str, str]]) -> None: ...

class ReadRequest:
    NAMES: list[str]
    def __init__(
        self,
        database: str,
        table: str,
        query_parameters: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> None: ...
    split: str
    transport: str
    batch_rows: int
    batch_bytes: int
    queries_per_task: int | None
    timestamp_units: str
    unreadable_columns: str

class BatchReader:
    def __init__(
        self,
        transport: str,
        connection: DorisConnection,
        sql: str,
        schema: pa.Schema,
        batch_rows: int,
        batch_bytes: int,
    ) -> None: ...
    def __iter__(self) -> BatchReader: ...
    def __next__(self) -> pa.RecordBatch: ...

class CatalogOptions:
    def __init__(self, *, name: str, transport: str, flight_port: int | None) -> None: ...

class WriteTask:
    def write(self, data: pa.Table | pa.RecordBatchReader) -> dict[str, Any] | None: ...

class WriteRun:
    def __init__(
        self,
        connection: DorisConnection,
        database: str,
        table: str,
        options: Mapping[str, Any],
        state: Mapping[str, Any] | None = None,
    ) -> None: ...
    mode: str
    committed_before: bool
    state: dict[str, Any]
    def start(self, schema: pa.Schema | None, *, retried_tasks: bool) -> None: ...
    def task(self) -> WriteTask: ...
    def finish(self, results: Sequence[Mapping[str, Any]]) -> dict[str, Any]: ...
    def abort(self) -> None: ...

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
    connection: DorisConnection, database: str, table: str, timestamp_units: str | None = None
) -> tuple[pa.Schema, list[tuple[str, str, str]]]: ...
def plan_read(
    connection: DorisConnection,
    request: ReadRequest,
    columns: Sequence[str] | None = None,
    filter: Any = None,
    limit: int | None = None,
    count_alias: str | None = None,
    count_mode: str | None = None,
    schema: pa.Schema | None = None,
    queries_per_task: int | None = None,
) -> Any: ...
def check_write_options(options: Mapping[str, Any]) -> None: ...
def secret_source(kind: str, name: object, *, resolve: bool) -> str | None: ...
def atomic_cleanup(connection: DorisConnection, database: str, older_than_seconds: float) -> list[str]: ...
def atomic_cleanup_ledger(
    connection: DorisConnection, database: str, ledger: str, older_than_seconds: float
) -> int: ...
def catalog_list_databases(connection: DorisConnection, prefix: str | None = None) -> list[str]: ...
def catalog_find_tables(connection: DorisConnection, pattern: str | None = None) -> list[tuple[str, str]]: ...
def catalog_exists(connection: DorisConnection, database: str, table: str | None = None) -> bool: ...
def catalog_database(
    connection: DorisConnection, database: str, create: bool, if_not_exists: bool
) -> None: ...
def catalog_create_table(
    connection: DorisConnection,
    database: str,
    table: str,
    schema: pa.Schema,
    properties: Mapping[str, Any] | None = None,
    if_not_exists: bool = False,
) -> None: ...
def catalog_drop_table(connection: DorisConnection, database: str, table: str) -> None: ...
def diagnose(
    connection: DorisConnection,
    database: str | None = None,
    table: str | None = None,
    flight: bool = False,
) -> Any: ...
def check_identifier(what: str, value: Any) -> str: ...
def qualified_name(database: str, table: str) -> str: ...
def check_flag(what: str, value: Any) -> bool: ...
def check_columns(value: Any) -> list[str] | None: ...
def check_s3_source(uri: str, format: str, properties: Mapping[str, str] | None = None) -> Any: ...
def check_job_name(name: str) -> str: ...
def redact_properties(pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]: ...
def job_wait(
    connection: DorisConnection,
    name: str,
    last_key: str,
    *,
    timeout_seconds: float,
    poll_seconds: float,
) -> Any: ...
def job_create(
    connection: DorisConnection,
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
    connection: DorisConnection,
    name: str,
    *,
    insert: S3Insert | None = None,
    max_batch_files: int | None = None,
    max_batch_bytes: int | None = None,
    max_interval_seconds: float | None = None,
    session: Mapping[str, str] | None = None,
    offset: str | None = None,
) -> str: ...
def job_control(connection: DorisConnection, action: str, name: str, if_exists: bool = False) -> None: ...
def job_list(connection: DorisConnection, name: str | None = None) -> pa.Table: ...
def task_list(connection: DorisConnection, name: str | None = None) -> pa.Table: ...
def jobs_schema() -> pa.Schema: ...
def tasks_schema() -> pa.Schema: ...
