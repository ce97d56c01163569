"""``DorisReadOptions``: every option of ``read_doris`` and ``DorisDataSource``, declared
once.

The two take these options as keywords (``**options: Unpack[DorisReadOptions]``), so a type
checker and an IDE see each one's name and type; an option left out takes the Rust
crates' default (``daft_doris._native.DEFAULTS["connection"]`` and ``["read"]``), applied
where the crates apply it, so this package holds none of them.
"""

# No `from __future__ import annotations` here: `typing` reads `Required` off evaluated
# annotations only.
from collections.abc import Iterable, Mapping
from typing import Any, Literal, Required, TypedDict

from daft_doris import _keywords
from daft_doris.connection import DorisConnection
from daft_doris.errors import ConfigurationError
from daft_doris.secrets import Secret

#: The options a ``connection`` supplies: given with one, the read refuses them by name;
#: without one, the read makes its connection of them.
CONNECTION_OPTIONS = (
    "host",
    "mysql_port",
    "http_port",
    "http_secure",
    "tls_ca_file",
    "tls_client_cert_file",
    "tls_client_key_file",
    "username",
    "password",
)


class DorisReadOptions(TypedDict, total=False):
    """The options of a Doris read. ``database``, ``table``, ``transport`` and either
    ``host`` (1.1's flat keywords) or ``connection`` are required; every other one has the
    default its description names."""

    connection: DorisConnection
    """Where the FE is and who connects, as writes, the catalog and jobs take it: its host,
    ports, user, password, TLS files and MySQL TLS mode (a read's ``mysql_options`` may
    raise that mode, never lower it) and its timeouts (unless ``connect_timeout_seconds``
    or ``query_timeout_seconds`` are given). Given with it, the flat keywords it supplies
    (``host``, ``username``, ``password``, the ports, ``http_secure``, ``tls_*``) are
    refused. Its Stream Load redirect settings (``redirect_*``) do not apply to reads."""
    host: str
    """The FE's host name or address (required unless ``connection`` is given)."""
    database: Required[str]
    """The table's database."""
    table: Required[str]
    """The table (one physical Doris table)."""
    transport: Required[Literal["mysql", "flight"]]
    """The wire the rows take: the MySQL text protocol, or Arrow Flight SQL (``DoGet`` on
    each BE). Never changed after a failure."""
    mysql_port: int
    """The FE's MySQL port (``query_port``, default 9030)."""
    http_port: int
    """The FE's HTTP port (``http_port``, default 8030): ``_query_plan`` and, for Flight,
    ``/api/backends``."""
    flight_port: int
    """The FE's Arrow Flight SQL port (``arrow_flight_sql_port``, default 8070)."""
    http_secure: bool
    """HTTPS to the FE (default False)."""
    flight_secure: bool
    """TLS on the Flight links (default False)."""
    tls_ca_file: str | None
    """A PEM file of CA certificates trusted on every TLS link (HTTPS, MySQL, Flight)."""
    tls_client_cert_file: str | None
    """A PEM file of the client certificate chain every TLS link presents when the server
    asks for one (mutual TLS), with ``tls_client_key_file``; read by each process that
    connects."""
    tls_client_key_file: str | None
    """The client certificate's private key (an unencrypted PEM file)."""
    username: str
    """The Doris user (default ``root``)."""
    password: Secret
    """The password: a string, or a ``SecretRef`` resolved where it is used (default
    empty)."""
    unreadable_columns: Literal["error", "omit"]
    """What a table with columns that have no Arrow form (HLL, BITMAP, QUANTILE_STATE,
    AGG_STATE) does: ``error`` (default, as the reference connector 1.1): the read raises
    ``SchemaError`` naming them; ``omit``: they are left out of the DataFrame with an
    ``UnreadableColumnsWarning``, and selecting one raises ``SchemaError``."""
    timestamp_units: Literal["microseconds", "by_precision"]
    """The Arrow unit of DATETIME columns: ``microseconds`` (default, as the reference
    connector 1.1 and MySQL clients read them): ``timestamp[us]`` whatever the column's
    precision; ``by_precision``: the narrowest unit that keeps the column exact,
    DATETIME(0) as ``timestamp[s]``, (1-3) as ``timestamp[ms]``, (4-6) as
    ``timestamp[us]``."""
    split: Literal["single", "auto"]
    """``single`` (default): one query; ``auto``: one query per group of tablets, planned
    by the FE's ``_query_plan``."""
    discovery_policy: Literal["single", "error"]
    """What a failed ``_query_plan`` does under ``split="auto"``: fall back to one query
    (``single``, default) or fail (``error``)."""
    batch_rows: int
    """The most rows in one batch (default 65,536)."""
    batch_bytes: int
    """The most Arrow bytes in one batch (default 64 MiB)."""
    target_tasks: int
    """The groups of tablets a split read aims at (default 8)."""
    max_tasks: int
    """The most groups of tablets a split read makes (default 256)."""
    queries_per_task: int | None
    """The queries one Daft task reads at once (default: the groups divided by this
    machine's cores, rounded up)."""
    connect_timeout_seconds: float
    """The wait to connect (default 10 s)."""
    query_timeout_seconds: float
    """The wait for a query's next row (default 300 s)."""
    planning_timeout_seconds: float
    """The wait for the FE's ``_query_plan`` (default 10 s)."""
    unsafe_where_sql: str | None
    """A trusted SQL fragment added to every query's ``WHERE``; ``:name`` markers bind
    ``query_parameters``."""
    query_parameters: Mapping[str, Any] | None
    """Values for the ``:name`` markers of ``unsafe_where_sql``, bound as typed literals."""
    mysql_options: Mapping[str, Any] | None
    """PyMySQL ``connect()`` keywords the MySQL link honours (TLS files, client
    certificates, ``ssl_mode``, ``server_public_key``, ...); the others are refused by
    name."""
    flight_options: Mapping[str, str] | None
    """ADBC Flight SQL driver keys the Flight link honours (root certificates, client
    certificates, message size, ``max_parallel_endpoints``, ...); the others are refused by
    name."""
    flight_endpoint_rewrite: Mapping[str, str] | None
    """BE ``host:port`` locations rewritten to addresses this client can reach."""
    flight_allowed_locations: Iterable[str] | None
    """``host:port`` locations a ``DoGet`` may go to besides the FE and the BEs the FE
    reports."""


def check_option_names(owner: str, options: Mapping[str, Any]) -> None:
    """Refuses, as Python refuses a bad keyword, an option that is not a
    ``DorisReadOptions`` key or a required one left out (``host`` or ``connection``), and
    a flat connection keyword given beside ``connection``."""
    _keywords.check_option_names(owner, options, DorisReadOptions)
    if "connection" not in options:
        if "host" not in options:
            raise TypeError(f"{owner}() missing required keyword arguments: 'host' (or 'connection')")
        return
    if not isinstance(options["connection"], DorisConnection):
        raise ConfigurationError("connection must be a DorisConnection")
    both = [name for name in CONNECTION_OPTIONS if name in options]
    if both:
        raise ConfigurationError(
            f"{', '.join(both)} given beside connection=, which supplies them: give each once"
        )
