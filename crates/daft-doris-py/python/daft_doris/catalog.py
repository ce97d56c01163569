"""Doris as a Daft catalog: databases are namespaces, tables are ``db.table``.

Attach it to a Daft session and query it with SQL::

    catalog = DorisCatalog(DorisConnection(host="fe"), name="doris")
    session = daft.Session()
    session.attach(catalog, alias="doris")
    session.sql("SELECT id FROM doris.sales.orders WHERE amount > 10")

Reads go through ``read_doris`` (so filters, projections, limits and counts are pushed into
Doris), appends through ``write_doris``, overwrites through ``write_doris(write_mode=
"overwrite")`` (one atomic ``INSERT OVERWRITE``). This module is Daft glue only: the statements
(``SHOW DATABASES``, ``SHOW TABLES``, ``CREATE TABLE`` from a schema, ``DROP``) are built
and run by the Rust crates (``doris_read::catalog``, ``doris_sql::create_table_ddl``).
See docs/catalog.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from daft.catalog import Catalog, Function, Identifier, NotFoundError, Table
from daft.dataframe import DataFrame
from daft.schema import Schema

from daft_doris import _native
from daft_doris.connection import DorisConnection, DorisTable
from daft_doris.errors import ConfigurationError
from daft_doris.read import read_doris
from daft_doris.write import write_doris


def _parts(ident: Identifier) -> tuple[str, str]:
    if len(ident) != 2:
        raise ConfigurationError(f"a Doris table is named database.table, not {ident}")
    return ident[0], ident[1]


def _database(ident: Identifier) -> str:
    if len(ident) != 1:
        raise ConfigurationError(f"a Doris namespace is one database name, not {ident}")
    return ident[0]


class DorisCatalog(Catalog):
    """A Doris FE as a Daft catalog (see the module docs).

    Args:
        connection: where the FE is and who connects (``DorisConnection``).
        name: the catalog's name.
        transport: the default transport of reads, ``"mysql"`` or ``"flight"``
            (``table.read(transport=…)`` overrides it).
        flight_port: the FE's Arrow Flight SQL port, for Flight reads.

    >>> session = daft.Session()
    >>> session.attach(DorisCatalog(connection), alias="doris")
    >>> session.sql("SELECT id, name FROM doris.demo.events WHERE score < 20").to_pydict()
    {'id': [1], 'name': ['a']}
    >>> DorisCatalog(connection).has_table("demo.events"), DorisCatalog(connection).has_table("demo.nope")
    (True, False)
    """

    def __init__(
        self,
        connection: DorisConnection,
        *,
        name: str = "doris",
        transport: str = "mysql",
        flight_port: int = _native.DEFAULTS["read"]["flight_port"],
    ) -> None:
        if not isinstance(connection, DorisConnection):
            raise ConfigurationError("connection must be a DorisConnection")
        self._connection = connection
        self._options = _native.CatalogOptions(name=name, transport=transport, flight_port=flight_port)

    @property
    def name(self) -> str:
        return self._options.name

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        return fn(self._connection, *args)

    # namespaces

    def _list_namespaces(self, pattern: str | None = None) -> list[Identifier]:
        return [Identifier(d) for d in self._call(_native.catalog_list_databases, pattern)]

    def _has_namespace(self, ident: Identifier) -> bool:
        return self._call(_native.catalog_exists, _database(ident), None)

    def _create_namespace(self, ident: Identifier) -> None:
        self._call(_native.catalog_database, _database(ident), True, False)

    def _drop_namespace(self, ident: Identifier) -> None:
        self._call(_native.catalog_database, _database(ident), False, False)

    # tables

    def _list_tables(self, pattern: str | None = None) -> list[Identifier]:
        """Every table, or with ``pattern``: ``"db"`` (that database's tables, if it is
        one), ``"db.prefix"`` (its tables starting with ``prefix``), else a table-name
        prefix in every database."""
        return [Identifier(d, t) for d, t in self._call(_native.catalog_find_tables, pattern)]

    def _has_table(self, ident: Identifier) -> bool:
        if len(ident) != 2:
            return False
        return self._call(_native.catalog_exists, ident[0], ident[1])

    def _get_table(self, ident: Identifier) -> Table:
        database, table = _parts(ident)
        if not self._has_table(ident):
            raise NotFoundError(f"Table {ident} not found")
        return DorisCatalogTable(self, database, table)

    def _create_table(
        self,
        ident: Identifier,
        schema: Schema,
        properties: Any = None,
        partition_fields: Any = None,
    ) -> Table:
        """``CREATE TABLE`` from a Daft schema. ``properties``: ``key_model``
        (``"duplicate"``, the default, or ``"unique"``), ``key_columns`` (default: the first
        column), ``buckets`` (default ``AUTO``); every other key is a Doris table property."""
        database, table = _parts(ident)
        if partition_fields:
            raise ConfigurationError(
                "partitioned tables are not created from a schema; create them with Doris DDL"
            )
        self._call(
            _native.catalog_create_table,
            database,
            table,
            schema.to_pyarrow_schema(),
            properties,
            False,
        )
        return DorisCatalogTable(self, database, table)

    def _drop_table(self, ident: Identifier) -> None:
        database, table = _parts(ident)
        self._call(_native.catalog_drop_table, database, table)

    # functions

    def _create_function(self, ident: Identifier, function: Function | Callable[..., Any]) -> None:
        raise NotImplementedError("a Doris catalog holds no Daft functions")

    def _get_function(self, ident: Identifier) -> Function:
        raise NotFoundError(f"a Doris catalog holds no Daft functions ({ident})")


class DorisCatalogTable(Table):
    """One Doris table of a ``DorisCatalog``: ``read`` is ``read_doris``, ``append`` is
    ``write_doris``, ``overwrite`` is ``write_doris(write_mode="overwrite")`` (options are
    theirs)."""

    def __init__(self, catalog: DorisCatalog, database: str, table: str) -> None:
        self._catalog = catalog
        self._database = database
        self._table = table

    @property
    def name(self) -> str:
        return self._table

    def schema(self) -> Schema:
        arrow, _unreadable = _native.describe_table(self._catalog._connection, self._database, self._table)
        return Schema.from_pyarrow_schema(arrow)

    def read(self, **options: Any) -> DataFrame:
        options.setdefault("transport", self._catalog._options.transport)
        options.setdefault("flight_port", self._catalog._options.flight_port)
        # The whole connection (its MySQL TLS mode the floor of the read's own, its
        # timeouts unless the read gives its own): read_doris(connection=…).
        return read_doris(
            connection=self._catalog._connection,
            database=self._database,
            table=self._table,
            **options,
        )

    def append(self, df: DataFrame, **options: Any) -> None:
        write_doris(
            df,
            connection=self._catalog._connection,
            table=DorisTable(self._database, self._table),
            **options,
        )

    def overwrite(self, df: DataFrame, **options: Any) -> None:
        """Replaces every row in one Doris transaction (``write_doris(write_mode=
        "overwrite")``: staged, then ``INSERT OVERWRITE TABLE … WITH LABEL``)."""
        if "write_mode" in options:
            raise ConfigurationError("overwrite sets write_mode itself")
        write_doris(
            df,
            connection=self._catalog._connection,
            table=DorisTable(self._database, self._table),
            write_mode="overwrite",
            **options,
        )
