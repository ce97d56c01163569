"""pydoris 1.2, Doris's own SQLAlchemy dialect (over mysqlclient, the libmariadb C client),
against the emulator: it reflects schemas, tables, columns and comments with the
statements it sends a Doris FE (``SHOW schemas``, ``SHOW FULL TABLES``, ``SHOW COLUMNS``,
``information_schema.tables``) and queries a reflected table with SQLAlchemy Core. A client
nobody here wrote, reading the emulator's answers as it reads Doris's."""

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
    assert sorted(inspector.get_table_names("shop")) == ["orders", "stock"]
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
