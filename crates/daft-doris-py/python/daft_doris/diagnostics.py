"""``daft_doris.diagnose``: check, from this machine's network, every link a read or a
write will use, and read which setting fixes each failure.

The checks themselves are ``doris_read::diagnose`` (Rust); this module converts the
connection, prints the report and returns it as a Daft DataFrame.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence

import daft

from daft_doris import _native, _snapshot
from daft_doris.connection import DorisConnection, DorisTable
from daft_doris.errors import ConfigurationError

#: The report's columns.
COLUMNS = ("check", "target", "outcome", "detail", "fix")


def diagnose(
    connection: DorisConnection,
    table: DorisTable | None = None,
    *,
    flight: bool = False,
    flight_port: int = _native.DEFAULTS["read"]["flight_port"],
    flight_secure: bool = _native.DEFAULTS["read"]["flight_secure"],
    flight_endpoint_rewrite: Mapping[str, str] | None = None,
    flight_allowed_locations: Sequence[str] | None = None,
    show: bool = True,
) -> daft.DataFrame:
    """Checks the FE's HTTP port (``/api/backends``), each BE address Stream Load redirects
    to, the MySQL port and credentials, SELECT and LOAD on ``table`` (when given), and with
    ``flight=True`` the Flight SQL port and every ``DoGet`` location the FE hands out; one
    row per check (``check``, ``target``, ``outcome`` = ok / FAILED / skipped, ``detail``,
    ``fix``: the setting that fixes a failure). Nothing is written. With ``show`` (default)
    the report is also printed, one line per check.

    >>> report = diagnose(connection, DorisTable("demo", "events"), show=False)
    >>> report.where(daft.col("outcome") != "ok").count_rows()
    0
    >>> sorted(set(report.to_pydict()["check"]))
    ['be_http', 'fe_http', 'load', 'mysql', 'select']
    """
    if not isinstance(connection, DorisConnection):
        raise ConfigurationError("connection must be a DorisConnection")
    if table is not None and not isinstance(table, DorisTable):
        raise ConfigurationError("table must be a DorisTable or None")
    _native.check_flag("flight", flight)
    _native.check_flag("show", show)
    rewrite = _snapshot.mapping("flight_endpoint_rewrite", flight_endpoint_rewrite, str_values=True)
    # The Flight port, TLS switch and locations are checked by the native connection.
    probed = connection._for_read(
        given=True,
        transport="flight",
        flight_port=flight_port,
        flight_secure=flight_secure,
        flight_endpoint_rewrite=rewrite,
        flight_allowed_locations=list(flight_allowed_locations or ()),
    )
    rows = _native.diagnose(
        probed,
        table.database if table else None,
        table.name if table else None,
        flight,
    )
    report = daft.from_pydict({name: [row[i] for row in rows] for i, name in enumerate(COLUMNS)})
    if show:
        for line in format_report(rows):
            print(line)
    return report


def format_report(rows: Sequence[tuple]) -> list[str]:
    """The report as printed: each check's line (formatted by the Rust core), then a count."""
    failed = sum(1 for r in rows if r[2] == "FAILED")
    return [r[5] for r in rows] + [f"{len(rows)} checks, {failed} failed"]


def _command_line() -> argparse.ArgumentParser:
    """The ``diagnose`` command's arguments; their defaults are the crates'."""
    parser = argparse.ArgumentParser(prog="python -m daft_doris diagnose")
    parser.add_argument("--host", required=True)
    # The defaults are the crates' (``_native.DEFAULTS``), as in every Python signature.
    defaults = _native.DEFAULTS["connection"]
    parser.add_argument("--user", default=defaults["username"])
    parser.add_argument("--password-env", default="DORIS_PASSWORD", help="variable holding the password")
    parser.add_argument("--http-port", type=int, default=defaults["http_port"])
    parser.add_argument("--mysql-port", type=int, default=defaults["mysql_port"])
    parser.add_argument("--flight-port", type=int, default=_native.DEFAULTS["read"]["flight_port"])
    parser.add_argument("--https", action="store_true")
    parser.add_argument("--tls-ca-file")
    parser.add_argument("--table", help="database.table whose SELECT and LOAD privileges are checked")
    parser.add_argument("--flight", action="store_true", help="also check Arrow Flight SQL")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m daft_doris diagnose --host … [--table db.t] [--flight]``; exit status 1
    when a check failed. The password comes from ``--password-env`` (an environment
    variable's name), never from the command line."""
    parser = _command_line()
    args = parser.parse_args(argv)
    from daft_doris.secrets import SecretRef

    # An unset variable means no password (Doris's root has none by default).
    password = SecretRef.env(args.password_env) if args.password_env in os.environ else ""
    connection = DorisConnection(
        host=args.host,
        username=args.user,
        password=password,
        http_port=args.http_port,
        mysql_port=args.mysql_port,
        http_secure=args.https,
        tls_ca_file=args.tls_ca_file,
    )
    table = None
    if args.table:
        database, _, name = args.table.partition(".")
        if not name:
            parser.error("--table takes database.table")
        table = DorisTable(database, name)
    # The same checks and report as the function; the exit status says whether one failed.
    report = diagnose(connection, table, flight=args.flight, flight_port=args.flight_port)
    return 1 if "FAILED" in report.to_pydict()["outcome"] else 0


if __name__ == "__main__":
    sys.exit(main())
