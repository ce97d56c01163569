"""Column names that need quoting — non-ASCII, a dot, a leading digit, a `-`, a `%`, and
under the rules of Doris 4.0 and later (apache/doris#53479, unicode support on by default)
a space, a comma, parentheses and a double quote, in the table's name too — through every
write mode and format and back over both transports (the emulator runs Doris 4.1 with
`enable_unicode_name_support`, `--unicode-names on`).

Names travel in the Stream Load `columns` header (always for the atomic mode's staging
loads), in JSON keys and Arrow/Parquet fields, in the SELECTs of reads and of the atomic
publish; and the writer's table check reads `SHOW CREATE TABLE` against `DESC`.
"""

import daft
import pytest
from conftest import ROOT_PASSWORD, run_emulator
from daft_doris import DorisTable, read_doris, write_doris
from write_setup import conn, query

INIT = """
CREATE DATABASE w;
CREATE TABLE w.intl (`id` BIGINT NOT NULL, `名前` VARCHAR(16) NULL, `größe` INT NULL)
  UNIQUE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 2
  PROPERTIES ("enable_unique_key_merge_on_write" = "true");
CREATE TABLE w.marks (`id` BIGINT NOT NULL, `a.b-c` VARCHAR(16) NULL, `1st%` INT NULL)
  UNIQUE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 2
  PROPERTIES ("enable_unique_key_merge_on_write" = "true");
CREATE TABLE w.`any names 2026` (`id` BIGINT NOT NULL, `名 前, "x"` VARCHAR(16) NULL,
  `amount (usd), net` INT NULL)
  UNIQUE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 2
  PROPERTIES ("enable_unique_key_merge_on_write" = "true");
"""

# (table, the text column, the number column, how a SELECT names them)
TABLES = [
    ("intl", "名前", "größe", "`名前`, `größe`"),
    ("marks", "a.b-c", "1st%", "`a.b-c`, `1st%`"),
    ("any names 2026", '名 前, "x"', "amount (usd), net", '`名 前, "x"`, `amount (usd), net`'),
]

MODES = [
    {},
    {"format": "json"},
    {"format": "csv"},
    {"format": "parquet"},
    {"idempotence_key": "atomic"},
    {"idempotence_key": "labels", "atomic": False},
    {"two_phase_commit": True},
    {"write_mode": "overwrite", "idempotence_key": "ow"},
]


@pytest.fixture(scope="module")
def doris():
    with run_emulator(INIT, extra_args=("--unicode-names", "on"), root_password=ROOT_PASSWORD) as ports:
        yield ports


@pytest.mark.parametrize(("name", "text", "number", "selected"), TABLES, ids=["intl", "marks", "any"])
def test_quoted_column_names_work_in_every_write_mode_and_read_back(doris, name, text, number, selected):
    table = DorisTable("w", name)
    rows = {"id": [1, 2, 3], text: ["ä", "ß", None], number: [10, 20, 30]}
    for kwargs in MODES:
        key = name.replace(" ", "-")
        kwargs = {k: f"{key}-{v}" if k == "idempotence_key" else v for k, v in kwargs.items()}
        query(doris, f"TRUNCATE TABLE `{name}`")
        done = write_doris(daft.from_pydict(rows), connection=conn(doris), table=table, **kwargs).to_pydict()
        assert done["loaded_rows"] == [3], (kwargs, done)
        got = sorted(query(doris, f"SELECT id, {selected} FROM `{name}`"))
        assert got == [(1, "ä", 10), (2, "ß", 20), (3, None, 30)], kwargs
    for kwargs in ({}, {"idempotence_key": f"{name.replace(' ', '-')}-partial"}):
        write_doris(
            daft.from_pydict({"id": [1, 4], text: ["neu", "vier"]}),
            connection=conn(doris),
            table=table,
            operation="partial_update",
            **kwargs,
        )
    got = sorted(query(doris, f"SELECT id, {selected} FROM `{name}`"))
    assert got == [(1, "neu", 10), (2, "ß", 20), (3, None, 30), (4, "vier", None)]
    for transport in ("mysql", "flight"):
        read = read_back(doris, name, transport).sort("id")
        assert read.to_pydict()[text] == ["neu", "ß", None, "vier"], transport
        # The filter on the quoted column is pushed down; rows 2 and 3 hold 20 and 30.
        filtered = read_back(doris, name, transport, filter=daft.col(number) >= 20).sort("id")
        assert filtered.to_pydict()[text] == ["ß", None], transport


def read_back(ports, table, transport, **kwargs):
    return read_doris(
        host=ports["host"],
        mysql_port=ports["query_port"],
        http_port=ports["fe_http_port"],
        flight_port=ports["fe_flight_port"],
        password=ROOT_PASSWORD,
        database="w",
        table=table,
        transport=transport,
        **kwargs,
    )


def test_show_create_table_and_desc_name_the_same_columns(doris):
    """The writer's table check reads `SHOW CREATE TABLE` against `DESC`: both name the
    columns that need quoting the same way."""
    ((_, ddl),) = query(doris, "SHOW CREATE TABLE marks")
    assert "`a.b-c` varchar(16) NULL" in ddl, ddl
    assert [r[0] for r in query(doris, "DESC marks")] == ["id", "a.b-c", "1st%"]
