"""The emulator's MySQL face, checked with PyMySQL (a client nobody here wrote)."""

import base64
import datetime
import decimal
import json
import urllib.request

import pymysql
import pytest


def connect(ports, user="root", password="", database=None):
    return pymysql.connect(
        host="127.0.0.1",
        port=ports["query_port"],
        user=user,
        password=password,
        database=database,
        charset="utf8mb4",
    )


def test_metadata_statements_in_doris_shapes(emulator):
    with connect(emulator, database="demo") as conn, conn.cursor() as cur:
        cur.execute("SELECT @@version_comment")
        assert cur.fetchone() == ("Doris version doris-4.0.6-emulator",)
        cur.execute("DESC orders")
        assert [d[0] for d in cur.description] == ["Field", "Type", "Null", "Key", "Default", "Extra"]
        rows = cur.fetchall()
        assert rows[0] == ("id", "bigint", "No", "true", None, "")
        assert rows[1] == ("amount", "decimal(20,6)", "Yes", "false", None, "NONE")
        cur.execute("SHOW CREATE TABLE orders")
        name, ddl = cur.fetchone()
        assert name == "orders"
        assert ddl.startswith("CREATE TABLE `orders` (\n  `id` bigint NOT NULL,")
        assert "UNIQUE KEY(`id`)" in ddl
        assert '"enable_unique_key_merge_on_write" = "true"' in ddl
        cur.execute("SET time_zone = '+00:00'")
        cur.execute("SELECT @@time_zone")
        assert cur.fetchone() == ("+00:00",)
        conn.ping()
        conn.select_db("demo")


def test_errors_carry_dorises_codes_and_texts(emulator):
    with pytest.raises(pymysql.err.OperationalError) as denied:
        connect(emulator, user="alice", password="wrong")
    assert denied.value.args[0] == 1045
    assert denied.value.args[1] == "Access denied for user 'alice@127.0.0.1' (using password: YES)"
    assert "wrong" not in str(denied.value)

    with connect(emulator) as conn, conn.cursor() as cur:
        with pytest.raises(pymysql.err.MySQLError) as non_constant:
            cur.execute("SET sql_mode = (SELECT CONCAT(@@sql_mode, ',PIPES_AS_CONCAT'))")
        assert non_constant.value.args == (
            1105,
            "errCode = 2, detailMessage = Set statement does't support non-constant expr.",
        )
        with pytest.raises(pymysql.err.MySQLError) as unknown_db:
            cur.execute("USE nope")
        assert unknown_db.value.args == (1049, "Unknown database 'nope'")


def test_privileges_gate_metadata(emulator):
    with connect(emulator, user="alice", password="pw") as conn, conn.cursor() as cur:
        cur.execute("SHOW DATABASES")
        assert cur.fetchall() == (("information_schema",),)
        with pytest.raises(pymysql.err.MySQLError) as denied:
            cur.execute("DESC demo.orders")
        assert denied.value.args[0] == 1105
        assert "DESCRIBE command denied to user 'alice'" in denied.value.args[1]
    with connect(emulator) as conn, conn.cursor() as cur:
        cur.execute("GRANT SELECT_PRIV ON demo.* TO 'alice'@'%'")
    with connect(emulator, user="alice", password="pw", database="demo") as conn, conn.cursor() as cur:
        cur.execute("SHOW TABLES")
        assert cur.fetchall() == (("orders",),)


def test_insert_and_select_with_tablet_hints(emulator):
    with connect(emulator, database="demo") as conn, conn.cursor() as cur:
        cur.execute(
            "INSERT INTO orders VALUES (1, 1.5, '2024-01-31 12:00:00.250'),"
            " (2, NULL, NULL), (3, 7, '2024-02-01 00:00:00')"
        )
        assert cur.rowcount == 3
        # A full-row upsert on the UNIQUE table: the column not given becomes NULL.
        cur.execute("INSERT INTO orders (id, amount) VALUES (1, 2.25)")
        cur.execute("SELECT id, amount, ts FROM orders ORDER BY id")
        assert cur.fetchall() == (
            (1, decimal.Decimal("2.250000"), None),
            (2, None, None),
            (3, decimal.Decimal("7.000000"), datetime.datetime(2024, 2, 1)),
        )
        cur.execute("SELECT ts FROM orders WHERE id = 3")
        assert cur.description[0][1] == pymysql.constants.FIELD_TYPE.DATETIME

        request = urllib.request.Request(
            f"http://127.0.0.1:{emulator['fe_http_port']}/api/demo/orders/_query_plan",
            data=json.dumps({"sql": "SELECT `id` FROM `demo`.`orders`"}).encode(),
            headers={"Authorization": "Basic " + base64.b64encode(b"root:").decode()},
            method="POST",
        )
        with urllib.request.urlopen(request) as answer:
            tablets = list(json.load(answer)["data"]["partitions"])
        assert len(tablets) == 2
        seen = 0
        for tablet in tablets:
            cur.execute(f"SELECT count(*) FROM orders TABLET({tablet})")
            seen += cur.fetchone()[0]
        assert seen == 3

        with pytest.raises(pymysql.err.MySQLError) as strict:
            cur.execute("INSERT INTO orders (id) VALUES (NULL)")
        assert "Insert has filtered data in strict mode" in strict.value.args[1]
