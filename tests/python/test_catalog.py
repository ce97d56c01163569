"""DorisCatalog and DorisCatalogTable with Daft's own session and SQL, on the emulator:
namespaces and tables listed (system databases and staging tables hidden), tables created
from a Daft schema, read with pushdowns through daft.sql, appended, overwritten, dropped."""

import daft
import pymysql
import pytest
from conftest import run_emulator
from daft.catalog import Identifier, NotFoundError
from daft_doris import ConfigurationError, DorisCatalog, DorisConnection

INIT = """
CREATE DATABASE sales;
CREATE DATABASE empty_db;
CREATE TABLE sales.orders (`id` BIGINT NOT NULL, `amount` INT NULL, `who` VARCHAR(16) NULL)
  DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 3;
CREATE TABLE sales.daft_doris_stage_0000000000000000_1_00000000 (`__dd_load` VARCHAR(128) NOT NULL)
  DUPLICATE KEY(`__dd_load`) DISTRIBUTED BY HASH(`__dd_load`) BUCKETS 1;
"""


@pytest.fixture(scope="module")
def doris():
    with run_emulator(INIT) as ports:
        c = pymysql.connect(host="127.0.0.1", port=ports["query_port"], user="root", database="sales")
        with c, c.cursor() as cur:
            values = ", ".join(f"({i}, {i * 10}, 'w{i % 3}')" for i in range(1, 31))
            cur.execute(f"INSERT INTO orders VALUES {values}")
        yield ports


def catalog(ports, **kwargs):
    connection = DorisConnection(
        host="127.0.0.1", http_port=ports["fe_http_port"], mysql_port=ports["query_port"]
    )
    return DorisCatalog(connection, flight_port=ports["fe_flight_port"], **kwargs)


def test_namespaces_and_tables_are_listed_without_system_or_staging_ones(doris):
    c = catalog(doris)
    assert c.list_namespaces() == [Identifier("empty_db"), Identifier("sales")]
    assert c.list_namespaces("sal") == [Identifier("sales")]
    assert c.list_tables() == [Identifier("sales", "orders")]
    assert c.list_tables("sales") == [Identifier("sales", "orders")]
    assert c.list_tables("sales.ord") == [Identifier("sales", "orders")]
    assert c.list_tables("sales.x") == []
    # Not a database: a table-name prefix in every database.
    assert c.list_tables("ord") == [Identifier("sales", "orders")]
    assert c.list_tables("sal") == []
    assert c.has_namespace("sales") and not c.has_namespace("nope")
    assert c.has_table("sales.orders") and not c.has_table("sales.nope") and not c.has_table("nope.orders")
    with pytest.raises(NotFoundError):
        c.get_table("sales.nope")


@pytest.mark.parametrize("transport", ["mysql", "flight"])
def test_daft_sql_reads_through_the_attached_catalog_with_pushdowns(doris, transport):
    session = daft.Session()
    session.attach(catalog(doris, transport=transport), alias="doris")
    got = session.sql("SELECT id, amount FROM doris.sales.orders WHERE amount > 250 ORDER BY id").to_pydict()
    assert got == {"id": [26, 27, 28, 29, 30], "amount": [260, 270, 280, 290, 300]}
    counted = session.sql("SELECT count(*) AS n FROM doris.sales.orders WHERE who = 'w1'").to_pydict()
    assert counted["n"] == [10]
    table = session.get_table("doris.sales.orders")
    assert table.schema().column_names() == ["id", "amount", "who"]
    assert session.read_table("doris.sales.orders").count_rows() == 30


def test_tables_are_created_from_a_schema_appended_to_and_dropped(doris):
    c = catalog(doris)
    c.create_namespace("made")
    frame = daft.from_pydict({"name": ["a", "b"], "id": [1, 2], "score": [1.5, 2.5]})
    table = c.create_table(
        "made.scores",
        frame.schema(),
        properties={"key_model": "unique", "key_columns": "id", "buckets": 2, "replication_num": "1"},
    )
    table.append(frame)
    table.append(daft.from_pydict({"name": ["B"], "id": [2], "score": [20.5]}), operation="upsert")
    back = c.get_table("made.scores").read().sort("id").to_pydict()
    assert back == {"id": [1, 2], "name": ["a", "B"], "score": [1.5, 20.5]}
    dup = c.create_table(
        "made.log", daft.from_pydict({"ts": [1], "msg": ["x"]}), properties={"key_columns": ["ts"]}
    )
    assert c.list_tables("made") == [Identifier("made", "log"), Identifier("made", "scores")]
    assert dup.read().count_rows() == 1
    dup.append(daft.from_pydict({"ts": [5], "msg": ["z"]}))
    dup.overwrite(daft.from_pydict({"ts": [2, 3], "msg": ["y", "w"]}))
    assert dup.read().sort("ts").to_pydict() == {"ts": [2, 3], "msg": ["y", "w"]}
    with pytest.raises(ConfigurationError, match="write_mode"):
        dup.overwrite(daft.from_pydict({"ts": [2], "msg": ["y"]}), write_mode="append")
    with pytest.raises(ConfigurationError, match="database.table"):
        c.create_table("nodb", frame.schema())
    with pytest.raises(ConfigurationError, match="FLOAT or DOUBLE"):
        c.create_table("made.bad", daft.from_pydict({"f": [1.0]}).schema())
    c.drop_table("made.log")
    c.drop_table("made.scores")
    assert c.list_tables("made") == []
    c.drop_namespace("made")
    assert not c.has_namespace("made")


DEAD = DorisConnection(host="127.0.0.1", http_port=1, mysql_port=1)


@pytest.mark.parametrize(
    "settings, problem",
    [
        ({"transport": "adbc"}, "transport must be one of"),
        ({"flight_port": 0}, "flight_port must be an integer from 1 to 65535"),
        ({"flight_port": "8070"}, "flight_port must be"),
        ({"name": ""}, "name must be a non-empty string"),
    ],
)
def test_bad_catalog_settings_are_refused_when_it_is_made(settings, problem):
    with pytest.raises(ConfigurationError, match=problem):
        DorisCatalog(DEAD, **settings)


@pytest.mark.parametrize(
    "properties, problem",
    [
        ({"key_model": "aggregate"}, "key_model must be 'duplicate' or 'unique'"),
        ({"buckets": 0}, "buckets must be an integer from 1 to 1000000"),
        ({"buckets": "many"}, "buckets must be"),
        ({"key_columns": [1]}, "key column name"),
        ({"key_columns": ["a,b"]}, "must not contain ','"),
        ({"replication_num": None}, "property replication_num"),
        ("key_model=unique", "properties must be a mapping"),
    ],
)
def test_bad_table_properties_are_refused_before_anything_is_sent(properties, problem):
    schema = daft.from_pydict({"id": [1]}).schema()
    with pytest.raises(ConfigurationError, match=problem):
        DorisCatalog(DEAD).create_table("made.t", schema, properties=properties)
