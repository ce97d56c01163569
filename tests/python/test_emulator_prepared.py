"""Server-side prepared statements on the emulator's MySQL face, checked with MySQL
Connector/Python's prepared cursor (COM_STMT_PREPARE / COM_STMT_EXECUTE, binary rows: the
client decodes every value from its binary form, so types and widths must be right)."""

import datetime
import decimal

import mysql.connector
import pymysql
import pytest
from conftest import run_emulator

DDL = """
CREATE DATABASE demo;
CREATE TABLE demo.mixed (
  `id` BIGINT NOT NULL,
  `flag` BOOLEAN NULL,
  `tiny` TINYINT NULL,
  `small` SMALLINT NULL,
  `n` INT NULL,
  `big` LARGEINT NULL,
  `f` FLOAT NULL,
  `d` DOUBLE NULL,
  `amount` DECIMAL(18, 4) NULL,
  `day` DATE NULL,
  `ts` DATETIME(6) NULL,
  `ts0` DATETIME NULL,
  `name` VARCHAR(20) NULL,
  `tags` ARRAY<INT> NULL
) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 2;
"""


ROWS = """
INSERT INTO demo.mixed VALUES
  (1, true, -8, 300, -70000, 170141183460469231731687303715884105727, 1.5, -2.25,
   '12345.6789', '2024-02-29', '2024-02-29 23:59:58.123456', '2000-01-01 00:00:00', 'it''s', [1, 2]),
  (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
"""


@pytest.fixture(scope="module")
def ports():
    with run_emulator(DDL) as bound:
        conn = pymysql.connect(host="127.0.0.1", port=bound["query_port"], user="root")
        with conn, conn.cursor() as cur:
            cur.execute(ROWS)
        yield bound


def connect(ports):
    return mysql.connector.connect(
        host="127.0.0.1",
        port=ports["query_port"],
        user="root",
        password="",
        database="demo",
        use_pure=True,
        ssl_disabled=True,
    )


def test_prepared_cursor_reads_every_type_from_binary_rows(ports):
    conn = connect(ports)
    try:
        cur = conn.cursor(prepared=True)
        cur.execute("SELECT * FROM mixed WHERE id = %s", (1,))
        row = cur.fetchone()
        assert row == (
            1,
            1,
            -8,
            300,
            -70000,
            "170141183460469231731687303715884105727",
            1.5,
            -2.25,
            decimal.Decimal("12345.6789"),
            datetime.date(2024, 2, 29),
            datetime.datetime(2024, 2, 29, 23, 59, 58, 123456),
            datetime.datetime(2000, 1, 1, 0, 0, 0),
            "it's",
            "[1, 2]",
        )
        cur.execute("SELECT * FROM mixed WHERE id = %s", (2,))
        assert cur.fetchone() == (2,) + (None,) * 13
        # Parameters of every common type bind as values.
        cur.execute(
            "SELECT id FROM mixed WHERE day = %s AND ts > %s AND name = %s AND amount > %s AND d < %s",
            (
                datetime.date(2024, 2, 29),
                datetime.datetime(2024, 2, 29, 23, 59, 58),
                "it's",
                decimal.Decimal("12345.5"),
                0.0,
            ),
        )
        assert cur.fetchall() == [(1,)]
        cur.execute("SELECT count(*) FROM mixed WHERE n IS NULL OR n = %s", (None,))
        assert cur.fetchall() == [(1,)]
        cur.close()
    finally:
        conn.close()


def test_prepared_errors_keep_dorises_codes(ports):
    conn = connect(ports)
    try:
        cur = conn.cursor(prepared=True)
        with pytest.raises(mysql.connector.Error) as missing:
            cur.execute("SELECT * FROM nowhere WHERE id = %s", (1,))
        assert missing.value.errno == 1105
        assert missing.value.msg.startswith("errCode = 2, detailMessage = ")
        with pytest.raises(mysql.connector.Error) as labelled:
            cur.execute("INSERT INTO mixed WITH LABEL l1 (id) VALUES (%s)", (5,))
        assert labelled.value.msg == (
            "errCode = 2, detailMessage = Only support prepare InsertStmt without label now"
        )
        # The connection stays usable for plain queries afterwards.
        plain = conn.cursor()
        plain.execute("SELECT count(*) FROM mixed")
        assert plain.fetchall() == [(2,)]
    finally:
        conn.close()


def test_point_query_profile_refuses_prepare(ports):
    with run_emulator(DDL, extra_args=("--mysql-prepare", "point-query-only")) as old:
        conn = connect(old)
        try:
            with pytest.raises(mysql.connector.Error) as refused:
                conn.cursor(prepared=True).execute("SELECT * FROM mixed WHERE id = %s", (1,))
            assert refused.value.errno == 1105
            assert refused.value.msg == (
                "errCode = 2, detailMessage = Only support prepare SelectStmt point query now"
            )
        finally:
            conn.close()
