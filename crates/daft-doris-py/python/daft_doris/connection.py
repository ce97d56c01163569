"""``DorisConnection``, where a Doris FE is and who connects, taken by every entry point
(``read_doris(connection=…)``, ``write_doris``, ``DorisCatalog``, streaming jobs,
``diagnose``), and ``DorisTable``, a physical table.

``DorisConnection`` is the native connection itself: its fields are declared once, in Rust
(``crates/daft-doris-py/src/connection.rs``), checked when it is made and turned there into
the endpoints every crate connects with, as a Rust service makes them from
``doris_connection::ConnectionSettings``. It pickles as its fields (a plain-string password
refuses to; ``daft_doris.secrets``):

>>> import pickle
>>> fe = DorisConnection(host="fe.example", password=SecretRef.env("DORIS_PASSWORD"))
>>> fe.http_port, fe.mysql_port, "password" in repr(fe)
(8030, 9030, False)
>>> pickle.loads(pickle.dumps(fe)) == fe
True

Reads take it beside 1.1's flat keywords:

>>> read_doris(connection=connection, database="demo", table="events",
...            transport="mysql").count_rows()
3
"""

from __future__ import annotations

from dataclasses import dataclass

from daft_doris import _native
from daft_doris._native import DorisConnection

__all__ = ["DorisConnection", "DorisTable"]


@dataclass(frozen=True)
class DorisTable:
    """A physical Doris table."""

    database: str
    name: str

    def __post_init__(self) -> None:
        _native.check_identifier("database", self.database)
        _native.check_identifier("table name", self.name)

    @property
    def qualified(self) -> str:
        """The table as Doris SQL names it: `` `db`.`name` `` (each backtick doubled).

        >>> DorisTable("sales", "order`s").qualified
        '`sales`.`order``s`'
        """
        return _native.qualified_name(self.database, self.name)
