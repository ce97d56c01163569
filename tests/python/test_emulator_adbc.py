"""The emulator's Flight SQL faces checked with the ADBC Flight SQL driver (a client nobody
here wrote), and compared with read_doris over Flight."""

import adbc_driver_flightsql.dbapi as flightsql
import pymysql
import pytest
from conftest import run_emulator
from daft_doris import read_doris

INIT = """
CREATE DATABASE a;
CREATE TABLE a.t (`id` INT NOT NULL, `name` VARCHAR(16) NULL, `amount` DECIMAL(10, 2) NULL,
  `ts` DATETIME(3) NULL, `big` LARGEINT NULL) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 3;
CREATE USER 'adbc'@'%' IDENTIFIED BY 'adbc-pw';
"""


@pytest.fixture(scope="module")
def doris():
    with run_emulator(INIT) as ports:
        conn = pymysql.connect(host="127.0.0.1", port=ports["query_port"], user="root", database="a")
        with conn, conn.cursor() as cur:
            cur.execute(
                "INSERT INTO t VALUES "
                + ", ".join(
                    f"({i}, 'n{i}', {i}.25, '2024-05-06 07:08:09.{i % 1000:03d}', {i * 7})" for i in range(50)
                )
                + ", (50, NULL, NULL, NULL, NULL)"
            )
        yield ports


def adbc(ports, user="root", password=""):
    return flightsql.connect(
        f"grpc://127.0.0.1:{ports['fe_flight_port']}",
        db_kwargs={"username": user, "password": password},
        autocommit=True,
    )


def test_adbc_reads_what_read_doris_reads(doris):
    with adbc(doris) as conn, conn.cursor() as cur:
        cur.execute("SELECT `id`, `name`, `amount`, `ts`, `big` FROM `a`.`t` ORDER BY `id`")
        table = cur.fetch_arrow_table()
    assert table.num_rows == 51
    assert str(table.schema.field("amount").type) == "decimal128(10, 2)"
    # DATETIME as Doris's BE writes it over Flight (docs/value-inventory.md): the instant of
    # the wall clock in the session's time zone, zoned.
    assert str(table.schema.field("ts").type) == "timestamp[ms, tz=Asia/Shanghai]"
    assert str(table.schema.field("big").type) == "string"
    ours = read_doris(
        host="127.0.0.1",
        mysql_port=doris["query_port"],
        http_port=doris["fe_http_port"],
        flight_port=doris["fe_flight_port"],
        database="a",
        table="t",
        transport="flight",
    ).sort("id")
    theirs = table.to_pydict()
    # The wall clock Doris holds: ADBC's zoned value seen in its zone.
    theirs["ts"] = [None if v is None else v.replace(tzinfo=None) for v in theirs["ts"]]
    assert ours.to_pydict() == theirs


def test_adbc_sees_doris_errors(doris):
    with pytest.raises(flightsql.Error, match="(?i)denied|unauthenticated"):
        with adbc(doris, password="wrong") as conn, conn.cursor() as cur:
            cur.execute("SELECT 1")
    with adbc(doris) as conn, conn.cursor() as cur:
        with pytest.raises(flightsql.Error, match="does not exist|Unknown table"):
            cur.execute("SELECT `id` FROM `a`.`missing`")
            cur.fetch_arrow_table()
    with adbc(doris, "adbc", "adbc-pw") as conn, conn.cursor() as cur:
        with pytest.raises(flightsql.Error, match="command denied"):
            cur.execute("SELECT `id` FROM `a`.`t`")
            cur.fetch_arrow_table()


def test_adbc_fe_local_statements(doris):
    with adbc(doris) as conn, conn.cursor() as cur:
        cur.execute("SHOW DATABASES")
        assert "a" in cur.fetch_arrow_table().column("Database").to_pylist()
        cur.execute("SET time_zone = 'UTC'")
        assert cur.fetch_arrow_table().column("StatusResult").to_pylist() == [0]


def test_adbc_tablet_hints_split_the_table(doris):
    import json
    import urllib.request

    body = json.dumps({"sql": "SELECT `id` FROM `a`.`t`"}).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{doris['fe_http_port']}/api/a/t/_query_plan",
        data=body,
        headers={"Authorization": "Basic cm9vdDo=", "Content-Type": "application/json"},
        method="POST",
    )
    plan = json.loads(urllib.request.urlopen(request).read())
    tablets = sorted(int(t) for t in plan["data"]["partitions"])
    assert len(tablets) == 3
    ids = []
    with adbc(doris) as conn, conn.cursor() as cur:
        for tablet in tablets:
            cur.execute(f"SELECT `id` FROM `a`.`t` TABLET({tablet})")
            ids.extend(cur.fetch_arrow_table().column("id").to_pylist())
    assert sorted(ids) == list(range(51))


def test_adbc_binds_parameters_of_a_prepared_query(doris):
    # The driver prepares the statement, sends the parameter row with DoPut, then asks for
    # the FlightInfo of the prepared statement: the path Doris 4.0 serves.
    sql = "SELECT `id`, `name` FROM `a`.`t` WHERE `id` >= ? AND `name` <> ? AND `amount` < ? ORDER BY `id`"
    with adbc(doris) as conn, conn.cursor() as cur:
        cur.execute(sql, parameters=(40, "n45", 48.0))
        table = cur.fetch_arrow_table()
        assert table.column("id").to_pylist() == [40, 41, 42, 43, 44, 46, 47]
        # The same statement again with other values: the bound row is replaced.
        cur.execute(sql, parameters=(3, "n4", 6.0))
        assert cur.fetch_arrow_table().column("id").to_pylist() == [3, 5]
        # A NULL parameter is SQL NULL: `<=>` matches the row whose name is NULL.
        cur.execute("SELECT `id` FROM `a`.`t` WHERE `name` <=> ?", parameters=(None,))
        assert cur.fetch_arrow_table().column("id").to_pylist() == [50]
        # A string that looks like SQL stays a value.
        cur.execute("SELECT `id` FROM `a`.`t` WHERE `name` = ?", parameters=("n1' OR '1'='1",))
        assert cur.fetch_arrow_table().num_rows == 0


def test_adbc_prepared_query_errors_are_doris_errors(doris):
    with adbc(doris) as conn, conn.cursor() as cur:
        with pytest.raises(flightsql.Error, match="parameter"):
            cur.execute("SELECT `id` FROM `a`.`t` WHERE `id` = ? AND `id` = ?", parameters=(1,))
            cur.fetch_arrow_table()
    with adbc(doris, "adbc", "adbc-pw") as conn, conn.cursor() as cur:
        with pytest.raises(flightsql.Error, match="command denied"):
            cur.execute("SELECT `id` FROM `a`.`t` WHERE `id` = ?", parameters=(1,))
            cur.fetch_arrow_table()
