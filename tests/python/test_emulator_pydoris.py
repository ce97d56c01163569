"""pydoris 1.2, Doris's own Python package, against the emulator: its SQLAlchemy dialect
(over mysqlclient, the libmariadb C client) reflects schemas, tables, columns and comments
with the statements it sends a Doris FE (``SHOW schemas``, ``SHOW FULL TABLES``, ``SHOW
COLUMNS``, ``information_schema.tables``) and queries a reflected table with SQLAlchemy
Core; its Stream Load client (``pydoris.doris_client.DorisClient``, over requests) loads
CSV and JSON through the FE's redirect, with labels. A client nobody here wrote, reading
the emulator's answers as it reads Doris's."""

import decimal

import pytest
import sqlalchemy as sa
from conftest import run_emulator

INIT = """
CREATE DATABASE shop;
CREATE TABLE shop.orders (`id` BIGINT NOT NULL, `item` VARCHAR(32) NULL, `amount` DECIMAL(10, 2) NULL,
  `at` DATETIME NULL) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 2 COMMENT 'order lines';
CREATE TABLE shop.stock (`sku` VARCHAR(16) NOT NULL, `qty` INT SUM NULL DEFAULT "0")
  AGGREGATE KEY(`sku`) DISTRIBUTED BY HASH(`sku`) BUCKETS 1;
CREATE TABLE shop.events (`id` INT NOT NULL, `name` VARCHAR(16) NULL) DUPLICATE KEY(`id`)
  DISTRIBUTED BY HASH(`id`) BUCKETS 2;
CREATE DATABASE vault;
CREATE TABLE vault.keys (`k` INT NOT NULL) DUPLICATE KEY(`k`) DISTRIBUTED BY HASH(`k`) BUCKETS 1;
CREATE USER 'clerk'@'%' IDENTIFIED BY 'clerk-pw';
GRANT SELECT_PRIV ON shop.* TO 'clerk'@'%';
"""


@pytest.fixture(scope="module")
def doris():
    with run_emulator(INIT) as ports:
        yield ports


def engine(ports, user="root", password=""):
    return sa.create_engine(f"doris://{user}:{password}@127.0.0.1:{ports['query_port']}/shop")


def test_pydoris_reflects_tables_columns_and_comments(doris):
    inspector = sa.inspect(engine(doris))
    assert {"shop", "vault"} <= set(inspector.get_schema_names())
    assert sorted(inspector.get_table_names("shop")) == ["events", "orders", "stock"]
    assert inspector.has_table("orders", schema="shop")
    assert not inspector.has_table("missing", schema="shop")
    columns = inspector.get_columns("orders", schema="shop")
    assert [(c["name"], str(c["type"]), c["nullable"]) for c in columns] == [
        ("id", "BIGINT", False),
        ("item", "VARCHAR(32)", True),
        ("amount", "DECIMAL(10, 2)", True),
        ("at", "DATETIME", True),
    ]
    assert inspector.get_table_comment("orders", schema="shop") == {"text": "order lines"}
    # Doris lists a table without a comment with an empty one.
    assert inspector.get_table_comment("stock", schema="shop") == {"text": ""}


def test_a_user_reflects_only_what_it_may_read(doris):
    inspector = sa.inspect(engine(doris, "clerk", "clerk-pw"))
    assert inspector.has_table("orders", schema="shop")
    # `information_schema.tables` lists the tables a user holds a privilege on.
    assert not inspector.has_table("keys", schema="vault")
    assert sa.inspect(engine(doris)).has_table("keys", schema="vault")


def test_a_reflected_table_is_queried_with_sqlalchemy_core(doris):
    e = engine(doris)
    orders = sa.Table("orders", sa.MetaData(), autoload_with=e, schema="shop")
    with e.connect() as c:
        c.execute(
            sa.text(
                "INSERT INTO shop.orders VALUES (1, 'a', 1.50, '2024-01-01 00:00:00'), "
                "(2, 'b', 2.50, NULL), (3, NULL, 7.25, '2024-02-01 12:30:00')"
            )
        )
        query = sa.select(orders.c.id, orders.c.amount).where(orders.c.amount > 2).order_by(orders.c.id)
        assert c.execute(query).all() == [(2, decimal.Decimal("2.50")), (3, decimal.Decimal("7.25"))]
        count = sa.select(sa.func.count()).select_from(orders).where(orders.c.item.is_(None))
        assert c.execute(count).scalar() == 1


def events(ports):
    with engine(ports).connect() as c:
        return c.execute(sa.text("SELECT id, name FROM shop.events ORDER BY id")).all()


def stream_load_client(ports, password=""):
    from pydoris.doris_client import DorisClient

    return DorisClient("127.0.0.1", str(ports["fe_http_port"]), "root", password)


def test_pydoris_stream_loads_csv_and_json_through_the_fes_redirect(doris):
    client = stream_load_client(doris)
    client.options.set_csv_format(",").set_label("pydoris-csv-1")
    assert client.write("shop", "events", "1,one\n2,two\n") is True
    assert events(doris) == [(1, "one"), (2, "two")]
    # The same label again: Doris answers "Label Already Exists" and loads nothing.
    assert client.write("shop", "events", "1,one\n2,two\n") is False
    assert events(doris) == [(1, "one"), (2, "two")]
    json_client = stream_load_client(doris)
    json_client.options.set_json_format().set_auto_uuid_label()
    lines = '{"id": 3, "name": "three"}\n{"id": 4, "name": null}\n'
    assert json_client.write("shop", "events", lines) is True
    assert events(doris)[2:] == [(3, "three"), (4, None)]


def test_pydoris_sees_a_load_with_a_bad_row_fail_and_load_nothing(doris):
    before = events(doris)
    client = stream_load_client(doris)
    client.options.set_csv_format(",").set_label("pydoris-bad-1")
    # `x` is no INT: strict filtering, max_filter_ratio 0, so the whole load fails.
    assert client.write("shop", "events", "10,ten\nx,bad\n") is False
    assert events(doris) == before
    client.options.set_option("max_filter_ratio", "0.5").set_label("pydoris-bad-2")
    assert client.write("shop", "events", "10,ten\nx,bad\n") is True
    assert events(doris) == sorted([*before, (10, "ten")])
