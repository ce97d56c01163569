"""The emulator's MySQL face, checked with PyMySQL (a client nobody here wrote)."""

import base64
import datetime
import decimal
import json
import urllib.request

import pymysql
import pytest
from conftest import run_emulator


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
        assert cur.fetchone() == ("Doris version doris-4.1.0-emulator",)
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


def test_a_setup_script_written_for_doris_runs_unchanged(emulator):
    # Comments before statements, CREATE TABLE … LIKE, CREATE USER IF NOT EXISTS then GRANT
    # to that user, INSERT … WITH LABEL with a label used twice, SHOW TABLES LIKE.
    c = connect(emulator)
    with c, c.cursor() as cur:
        cur.execute("-- the setup of a real job\n/* tables */ CREATE DATABASE IF NOT EXISTS setup")
        cur.execute(
            "# a hash comment\nCREATE TABLE setup.src (`id` INT NOT NULL, `v` VARCHAR(8) NULL) "
            "DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 2"
        )
        cur.execute("CREATE TABLE setup.copy LIKE setup.src")
        cur.execute("SHOW CREATE TABLE setup.copy")
        ddl = cur.fetchone()[1]
        assert "`v` varchar(8) NULL" in ddl and "DUPLICATE KEY(`id`)" in ddl
        cur.execute("CREATE USER IF NOT EXISTS 'setup_user' IDENTIFIED BY 'setup-pw'")
        cur.execute("CREATE USER IF NOT EXISTS 'setup_user' IDENTIFIED BY 'other'")
        cur.execute("GRANT SELECT_PRIV ON setup.* TO 'setup_user'@'%'")
        with pytest.raises(pymysql.err.MySQLError, match="CREATE USER failed"):
            cur.execute("CREATE USER 'setup_user' IDENTIFIED BY 'x'")
        cur.execute("INSERT INTO setup.src WITH LABEL setup_load_1 (id, v) VALUES (1, 'a'), (2, 'b')")
        with pytest.raises(pymysql.err.MySQLError, match=r"Label \[setup_load_1\] has already been used"):
            cur.execute("INSERT INTO setup.src WITH LABEL setup_load_1 (id, v) VALUES (3, 'c')")
        cur.execute("SHOW TRANSACTION FROM setup WHERE LABEL = 'setup_load_1'")
        assert cur.fetchone()[3] == "VISIBLE"
        cur.execute("INSERT INTO setup.copy SELECT id, v FROM setup.src")
        cur.execute("SHOW TABLES FROM setup LIKE 'co%'")
        assert cur.fetchall() == (("copy",),)
    # The user made by IF NOT EXISTS kept its first password and has the grant.
    u = connect(emulator, user="setup_user", password="setup-pw", database="setup")
    with u, u.cursor() as cur:
        cur.execute("SELECT id, v FROM copy ORDER BY id")
        assert cur.fetchall() == ((1, "a"), (2, "b"))


def test_names_that_need_quoting_work_in_every_statement_and_backticks_are_refused(emulator):
    """Doris's name rules (FeNameFormat): before 4.0 a backtick in a table or a column name
    is refused; from 4.0 (apache/doris#53479) it is taken, as MySQL takes it. A table named
    with '-' and a column named `1st.v-x` (both need quoting) work in every statement, and
    daft_doris reads them."""
    with run_emulator("CREATE DATABASE bt;\n", extra_args=("--doris-version", "3.0.4")) as older:
        o = connect(older)
        with o, o.cursor() as cur:
            with pytest.raises(pymysql.err.OperationalError, match="Incorrect table name 't`x'"):
                cur.execute("CREATE TABLE bt.`t``x` (`id` INT NOT NULL) DISTRIBUTED BY HASH(`id`) BUCKETS 1")
            with pytest.raises(pymysql.err.OperationalError, match="Incorrect column name .*tick`col"):
                cur.execute(
                    "CREATE TABLE bt.`t-y` (`id` INT NOT NULL, `tick``col` VARCHAR(8) NULL) "
                    "DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1"
                )
    c = connect(emulator)
    with c, c.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS bt")
        cur.execute(
            "CREATE TABLE bt.`t``y` (`id` INT NOT NULL, `tick``col` VARCHAR(8) NULL) "
            "DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1"
        )
        cur.execute("SHOW TABLES FROM bt LIKE 't`y'")
        assert cur.fetchall() == (("t`y",),)
        cur.execute(
            "CREATE TABLE bt.`t-x` (`id` INT NOT NULL, `1st.v-x` VARCHAR(8) NULL) "
            "DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1"
        )
        cur.execute("INSERT INTO bt.`t-x` (`id`, `1st.v-x`) VALUES (1, 'a'), (2, 'b')")
        cur.execute("SELECT `id`, `1st.v-x` FROM bt.`t-x` WHERE `1st.v-x` = 'b'")
        assert cur.fetchall() == ((2, "b"),)
        cur.execute("DESC bt.`t-x`")
        assert [r[0] for r in cur.fetchall()] == ["id", "1st.v-x"]
    # And daft_doris reads such a table (its SELECT quotes them the same way).
    from daft_doris import read_doris

    back = read_doris(
        host="127.0.0.1",
        mysql_port=emulator["query_port"],
        http_port=emulator["fe_http_port"],
        database="bt",
        table="t-x",
        transport="mysql",
    ).to_pydict()
    assert sorted(back["1st.v-x"]) == ["a", "b"]


def test_insert_partial_update_session_variable_changes_only_named_columns(emulator):
    """`SET enable_unique_key_partial_update = true` makes an INSERT into a merge-on-write
    UNIQUE table change only the columns it names; a new key gets NULL elsewhere; the
    variable reads back; a bad value is refused with MySQL's 1231."""
    with connect(emulator, database="demo") as c, c.cursor() as cur:
        cur.execute(
            "CREATE TABLE pu (`id` INT NOT NULL, `a` VARCHAR(8) NULL, `b` INT NULL) UNIQUE KEY(`id`) "
            'DISTRIBUTED BY HASH(`id`) BUCKETS 1 PROPERTIES ("enable_unique_key_merge_on_write" = "true")'
        )
        cur.execute("INSERT INTO pu VALUES (1, 'x', 10), (2, 'y', 20)")
        cur.execute("SET enable_unique_key_partial_update = true")
        cur.execute("SELECT @@enable_unique_key_partial_update")
        assert cur.fetchone()[0] == "true"
        cur.execute("INSERT INTO pu (`id`, `b`) VALUES (2, 21), (3, 31)")
        cur.execute("SELECT id, a, b FROM pu ORDER BY id")
        assert cur.fetchall() == ((1, "x", 10), (2, "y", 21), (3, None, 31))
        cur.execute("SET enable_unique_key_partial_update = false")
        cur.execute("INSERT INTO pu (`id`, `b`) VALUES (1, 11)")
        cur.execute("SELECT id, a, b FROM pu WHERE id = 1")
        assert cur.fetchone() == (1, None, 11)
        with pytest.raises(pymysql.err.OperationalError) as refused:
            cur.execute("SET enable_unique_key_partial_update = maybe")
        assert refused.value.args[0] == 1231
        cur.execute("DROP TABLE pu")


def test_explicit_transactions_commit_or_roll_back_every_insert_together(emulator):
    """PyMySQL's begin(), commit() and rollback() against the emulator's explicit
    transactions: rows are visible only after COMMIT, ROLLBACK keeps none of them, a query
    inside the transaction is refused with Doris's text (and does not end it); COMMIT and
    ROLLBACK outside a transaction answer OK."""
    with connect(emulator, database="demo") as c, connect(emulator, database="demo") as other:
        with c.cursor() as cur:
            cur.execute(
                "CREATE TABLE txn_t (`id` INT NOT NULL) DUPLICATE KEY(`id`) "
                "DISTRIBUTED BY HASH(`id`) BUCKETS 1"
            )
            cur.execute("COMMIT")
            cur.execute("ROLLBACK")

        def visible():
            with other.cursor() as cur:
                cur.execute("SELECT COUNT(*) FROM txn_t")
                return cur.fetchone()[0]

        c.begin()
        with c.cursor() as cur:
            assert cur.execute("INSERT INTO txn_t VALUES (1), (2)") == 2
            with pytest.raises(pymysql.err.OperationalError) as refused:
                cur.execute("SELECT * FROM txn_t")
            assert refused.value.args[0] == 1105
            assert "only insert, update, delete, commit, rollback" in refused.value.args[1]
            cur.execute("INSERT INTO txn_t VALUES (3)")
        assert visible() == 0
        c.rollback()
        assert visible() == 0
        c.begin()
        with c.cursor() as cur:
            cur.execute("INSERT INTO txn_t VALUES (4), (5)")
        c.commit()
        assert visible() == 2


def test_insert_overwrite_replaces_every_row_under_its_label(emulator):
    """INSERT OVERWRITE TABLE … WITH LABEL replaces the table's rows in one transaction; the
    label is then used (a second statement with it is refused with Doris's text)."""
    with connect(emulator, database="demo") as c, c.cursor() as cur:
        cur.execute(
            "CREATE TABLE ow (`id` INT NOT NULL, `v` INT NULL) DUPLICATE KEY(`id`) "
            "DISTRIBUTED BY HASH(`id`) BUCKETS 2"
        )
        cur.execute("INSERT INTO ow VALUES (1, 1), (2, 2), (3, 3)")
        cur.execute(
            "INSERT OVERWRITE TABLE ow WITH LABEL ow_1 (`id`, `v`) SELECT id + 10, v FROM ow WHERE id > 1"
        )
        cur.execute("SELECT id, v FROM ow ORDER BY id")
        assert cur.fetchall() == ((12, 2), (13, 3))
        with pytest.raises(pymysql.err.OperationalError, match="has already been used"):
            cur.execute("INSERT OVERWRITE TABLE ow WITH LABEL ow_1 SELECT 1 AS id, 2 AS v")
        cur.execute("INSERT OVERWRITE TABLE ow SELECT id, v FROM ow WHERE id > 100")
        cur.execute("SELECT count(*) FROM ow")
        assert cur.fetchone()[0] == 0
        cur.execute("DROP TABLE ow")
