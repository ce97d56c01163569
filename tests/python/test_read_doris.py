"""read_doris end to end against the emulator: types, pushdowns, splits, errors, pickling."""

import asyncio
import datetime
import decimal
import json
import pickle
import urllib.request

import daft
import daft_doris
import pyarrow as pa
import pymysql
import pytest
from conftest import ROOT_PASSWORD, run_emulator
from daft_doris import (
    AuthenticationError,
    ConfigurationError,
    DatabaseObjectNotFoundError,
    DorisConnection,
    SecretRef,
    read_doris,
)

INIT = """
CREATE DATABASE py;
CREATE TABLE py.types (
  `id` INT NOT NULL, `b` BOOLEAN NULL, `t8` TINYINT NULL, `s16` SMALLINT NULL, `i64` BIGINT NULL,
  `big` LARGEINT NULL, `f32` FLOAT NULL, `f64` DOUBLE NULL, `d` DECIMAL(12, 3) NULL,
  `day` DATE NULL, `ts` DATETIME(6) NULL, `ts0` DATETIME NULL, `c` CHAR(4) NULL,
  `v` VARCHAR(20) NULL, `s` STRING NULL, `j` JSON NULL
) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 3;
CREATE TABLE py.events (
  `id` BIGINT NOT NULL, `kind` VARCHAR(16) NULL, `score` INT NULL, `dt` DATE NOT NULL
) DUPLICATE KEY(`id`)
PARTITION BY RANGE(`dt`) (PARTITION p1 VALUES [("2024-01-01"), ("2024-02-01")),
                          PARTITION p2 VALUES [("2024-02-01"), ("2024-03-01")))
DISTRIBUTED BY HASH(`id`) BUCKETS 4;
CREATE TABLE py.empty (`id` INT NOT NULL, `v` VARCHAR(8) NULL) DUPLICATE KEY(`id`)
DISTRIBUTED BY HASH(`id`) BUCKETS 2;
CREATE USER 'reader'@'%' IDENTIFIED BY 's3cret-pw';
GRANT SELECT_PRIV ON py.* TO 'reader'@'%';
CREATE USER 'loader'@'%' IDENTIFIED BY 'l0ader-pw';
GRANT LOAD_PRIV ON py.* TO 'loader'@'%';
"""


@pytest.fixture(scope="module")
def doris():
    with run_emulator(INIT, root_password=ROOT_PASSWORD) as ports:
        conn = pymysql.connect(
            host="127.0.0.1", port=ports["query_port"], user="root", password=ROOT_PASSWORD, database="py"
        )
        with conn, conn.cursor() as cur:
            cur.execute(
                "INSERT INTO types VALUES "
                "(1, true, -8, 300, 9000000000, 4611686018427387904, 1.5, 2.25,"
                " 123456789.123, '2024-02-29', '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05',"
                " 'ab', 'héllo', 'long text', '{\"k\": [1, 2]}'),"
                "(2" + ", NULL" * 15 + ")"
            )
            rows = []
            for i in range(1, 401):
                month = 1 if i % 2 else 2
                kind = ["click", "view", "buy", "it's"][i % 4]
                score = "NULL" if i % 10 == 0 else str(i % 100)
                rows.append(
                    f"({i}, '{kind.replace(chr(39), chr(92) + chr(39))}', {score}, "
                    f"'2024-0{month}-{i % 28 + 1:02d}')"
                )
            cur.execute("INSERT INTO events VALUES " + ", ".join(rows))
        yield ports


def read(ports, table, **kwargs):
    kwargs.setdefault("transport", "mysql")
    if "username" not in kwargs:
        kwargs.setdefault("password", ROOT_PASSWORD)
    return read_doris(
        host=ports["host"],
        mysql_port=ports["query_port"],
        http_port=ports["fe_http_port"],
        flight_port=ports["fe_flight_port"],
        database="py",
        table=table,
        **kwargs,
    )


def rows(frame, key="id"):
    data = frame.to_pydict()
    names = list(data)
    out = [tuple(data[n][i] for n in names) for i in range(len(data[names[0]]) if names else 0)]
    index = names.index(key) if key in names else 0
    return sorted(out, key=lambda r: (r[index] is None, r[index]))


@pytest.mark.parametrize("transport", ["mysql", "flight"])
def test_every_scalar_type_round_trips(doris, transport):
    frame = read(doris, "types", transport=transport)
    table = frame.to_arrow()
    schema = table.schema
    assert schema.field("b").type == pa.bool_()
    assert schema.field("t8").type == pa.int8()
    assert schema.field("d").type == pa.decimal128(12, 3)
    assert schema.field("day").type == pa.date32()
    assert schema.field("ts").type == pa.timestamp("us")
    # Every DATETIME precision as microseconds, as 1.1 reads them.
    assert schema.field("ts0").type == pa.timestamp("us")
    got = {r["id"]: r for r in table.to_pylist()}
    one = got[1]
    assert one["b"] is True and one["t8"] == -8 and one["s16"] == 300 and one["i64"] == 9000000000
    assert one["big"] == "4611686018427387904"
    assert one["f32"] == 1.5 and one["f64"] == 2.25
    assert one["d"] == decimal.Decimal("123456789.123")
    assert one["day"] == datetime.date(2024, 2, 29)
    assert one["ts"] == datetime.datetime(2024, 1, 2, 3, 4, 5, 123456)
    assert one["ts0"] == datetime.datetime(2024, 1, 2, 3, 4, 5)
    assert one["v"] == "héllo" and one["s"] == "long text"
    assert one["j"].replace(" ", "") == '{"k":[1,2]}'
    assert all(v is None for k, v in got[2].items() if k != "id")


def test_both_transports_return_the_same_table(doris):
    by_mysql = read(doris, "types", transport="mysql").sort("id").to_arrow()
    by_flight = read(doris, "types", transport="flight", batch_rows=1).sort("id").to_arrow()
    assert by_mysql.equals(by_flight)
    split = read(doris, "events", transport="flight", split="auto", target_tasks=3)
    assert rows(split) == rows(read(doris, "events"))
    filtered = read(doris, "events", transport="flight", filter=daft.col("kind") == "it's", columns=["id"])
    assert filtered.count_rows() == 100
    assert len(filtered.to_pydict()["id"]) == 100


def mysql_sessions_opened(ports) -> int:
    """MySQL sessions the emulator has accepted so far (its `GET /_emulator/wire` gauges)."""
    return wire(ports)["mysql_connections"]["total"]


def wire(ports, method="GET"):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(
        f"http://{ports['host']}:{ports['fe_http_port']}/_emulator/wire", method=method
    )
    with opener.open(request, timeout=10) as answer:
        body = answer.read()
    return json.loads(body) if body else None


def _arm(doris, fault):
    """Arms an emulator fault for the next request at its point."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{doris['fe_http_port']}/_emulator/faults",
        data=json.dumps(fault).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    urllib.request.urlopen(request).read()


def _root_connection(doris):
    """A connection for root, to call the native planner directly."""
    from daft_doris import DorisConnection

    return DorisConnection(
        host=doris["host"],
        mysql_port=doris["query_port"],
        http_port=doris["fe_http_port"],
        username="root",
        password=ROOT_PASSWORD,
    )


@pytest.mark.parametrize("transport", ["mysql", "flight"])
def test_a_task_reads_its_tablet_groups_at_once_and_every_row_once(doris, transport):
    from daft.io.pushdowns import Pushdowns
    from daft_doris.read import DorisDataSource

    source = DorisDataSource(
        host=doris["host"],
        mysql_port=doris["query_port"],
        http_port=doris["fe_http_port"],
        flight_port=doris["fe_flight_port"],
        password=ROOT_PASSWORD,
        database="py",
        table="events",
        transport=transport,
        split="auto",
        target_tasks=4,
        queries_per_task=4,
        batch_rows=7,
    )

    async def plan_and_read():
        tasks = [t async for t in source.get_tasks(Pushdowns())]
        wire(doris, "DELETE")
        ids = []
        for task in tasks:
            async for batch in task.read():
                ids.extend(batch.to_pydict()["id"])
        return tasks, ids

    tasks, ids = asyncio.run(plan_and_read())
    # 8 tablets in 4 groups, all in one task: read together, every row exactly once.
    assert [len(t.statements) for t in tasks] == [4]
    assert sorted(ids) == list(range(1, 401))
    if transport == "mysql":
        # Each query holds its session until its last row is read: all four were open at
        # once. (A Flight stream of 50 rows ends as soon as it is sent, so its overlap is
        # not observable here; both transports share the merge.)
        assert wire(doris)["mysql_connections"]["peak"] >= 4, "the four queries were open at the same time"


@pytest.mark.parametrize("split", ["single", "auto"])
def test_a_flight_read_describes_its_table_once_and_plans_without_mysql(doris, split):
    before = mysql_sessions_opened(doris)
    frame = read(
        doris, "events", transport="flight", split=split, columns=["id", "kind"], filter=daft.col("score") > 5
    )
    # read_doris describes the table: one session (and, with a password on a link whose
    # certificate is not verified, the short greeting probe that refuses
    # mysql_clear_password before it).
    described = mysql_sessions_opened(doris) - before
    assert described in (1, 2)
    table = frame.to_arrow()
    expected = sum(1 for i in range(1, 401) if i % 10 and i % 100 > 5)
    assert table.num_rows == expected and table.column_names == ["id", "kind"]
    assert mysql_sessions_opened(doris) == before + described, (
        "planning and reading over Flight open no session"
    )


def test_projection_filter_limit_and_count_match_an_unpushed_read(doris):
    everything = read(doris, "events").to_arrow().to_pylist()
    expected = sorted(
        (r["id"], r["score"])
        for r in everything
        if r["score"] is not None and r["score"] >= 50 and r["kind"] != "view"
    )
    pushed = read(
        doris,
        "events",
        columns=("id", "score"),
        filter=(daft.col("score") >= 50) & (daft.col("kind") != "view"),
    )
    assert sorted(tuple(r) for r in zip(*pushed.to_pydict().values(), strict=True)) == expected
    # A conjunct Doris cannot evaluate (a cast) stays in Daft; the result is the same.
    mixed = read(doris, "events").where(
        (daft.col("score") >= 50) & (daft.col("kind").cast(daft.DataType.string()) != "view")
    )
    assert sorted((r["id"], r["score"]) for r in mixed.to_arrow().to_pylist()) == expected
    # The limit is never pushed below a residual filter: every returned row passes it.
    limited = (
        read(doris, "events")
        .where(daft.col("kind").cast(daft.DataType.string()) == "buy")
        .limit(7)
        .to_pydict()
    )
    assert len(limited["id"]) == 7 and set(limited["kind"]) == {"buy"}
    assert read(doris, "events").count_rows() == 400
    assert read(doris, "events").limit(5).count_rows() == 5
    strings = read(doris, "events", filter=daft.col("kind") == "it's").to_pydict()
    assert set(strings["kind"]) == {"it's"} and len(strings["kind"]) == 100
    inlist = read(doris, "events", filter=daft.col("kind").is_in(["buy", "click"])).count_rows()
    assert inlist == 200


def test_counts_are_pushed_to_doris_with_their_null_rule(doris, monkeypatch):
    import daft_doris.read as read_module

    pushed = []
    plan = read_module._native.plan_read

    def spy(*args, **kwargs):
        pushed.append((kwargs.get("count_alias"), kwargs.get("count_mode")))
        return plan(*args, **kwargs)

    monkeypatch.setattr(read_module._native, "plan_read", spy)
    assert read(doris, "events").count_rows() == 400
    assert pushed[-1][0] is not None, "count_rows() is a Doris count"
    # 40 of the 400 scores are NULL: count(score) counts the other 360, pushed or not.
    valid = read(doris, "events").agg(daft.col("score").count()).to_pydict()
    assert list(valid.values()) == [[360]]
    nulls = read(doris, "events").agg(daft.col("score").count("null")).to_pydict()
    assert list(nulls.values()) == [[40]]
    for alias, mode in pushed[1:]:
        if alias is not None:
            assert alias == "score" and mode in ("valid", "null"), "a pushed count(col) keeps its NULL rule"
    # A count is one statement on either transport, even where the read would split; a
    # limit over it gives the limited count.
    for transport in ("mysql", "flight"):
        for split in ("single", "auto"):
            frame = read(doris, "events", transport=transport, split=split)
            before = len(pushed)
            assert frame.count_rows() == 400
            assert pushed[before:] and all(alias is not None for alias, _ in pushed[before:])
            assert frame.limit(5).count_rows() == 5
            assert frame.limit(1000).count_rows() == 400
    # Where a count is pushed with a limit, the plan caps it in its one statement, which
    # Doris (here the emulator) runs: at most `limit` rows are counted.
    from daft_doris import _native

    connection = _root_connection(doris)
    request = _native.ReadRequest("py", "events", transport="mysql", split="auto")
    for limit, expected in ((5, 5), (1000, 400), (0, 0)):
        _schema, groups, _, _, _ = _native.plan_read(connection, request, count_alias="n", limit=limit)
        assert len(groups) == 1 and len(groups[0]) == 1, groups
        (statement,) = groups[0]
        assert f"least(count(*), {limit})" in statement
        c = pymysql.connect(
            host="127.0.0.1", port=doris["query_port"], user="root", password=ROOT_PASSWORD, database="py"
        )
        with c, c.cursor() as cur:
            cur.execute(statement)
            assert cur.fetchall() == ((expected,),)


def test_split_auto_returns_exactly_the_rows_of_a_single_read(doris):
    single = rows(read(doris, "events"))
    split = read(doris, "events", split="auto", target_tasks=3)
    assert rows(split) == single
    filtered = read(doris, "events", split="auto", filter=daft.col("dt") >= datetime.date(2024, 2, 1))
    assert rows(filtered) == [r for r in single if r[3] >= datetime.date(2024, 2, 1)]
    assert len(read(doris, "events", split="auto").limit(3).to_pydict()["id"]) == 3
    assert read(doris, "empty", split="auto").to_pydict() == {"id": [], "v": []}


def test_a_result_cut_mid_stream_fails_the_read_never_short(doris):
    from daft.exceptions import DaftCoreException

    frame = read(doris, "events", batch_rows=16)
    _arm(doris, {"kind": "cut_result_stream", "rows": 50})
    # Daft's executor reports a task's error as DaftCoreException; the text keeps the class.
    with pytest.raises(DaftCoreException, match="TransportError"):
        frame.to_pydict()


@pytest.mark.parametrize("split", ["single", "auto"])
def test_a_flight_doget_that_fails_before_its_first_row_fails_the_read(doris, split):
    """A DoGet whose stream fails before any row (single or one of a split read's
    endpoints): the read raises TransportError; it never returns the rows of the other
    endpoints as if complete."""
    from daft.exceptions import DaftCoreException

    frame = read(doris, "events", transport="flight", split=split, batch_rows=16)
    _arm(doris, {"kind": "cut_flight_stream", "rows": 0})
    # 1.1's words, beside the detail.
    with pytest.raises(DaftCoreException, match="TransportError.*Doris Flight query failed"):
        frame.to_pydict()
    # Without the fault the same read is whole.
    assert len(rows(read(doris, "events", transport="flight", split=split))) == 400


def test_small_batches_and_early_stop(doris):
    frame = read(doris, "events", batch_rows=7)
    assert len(rows(frame)) == 400
    assert len(read(doris, "events", batch_rows=3).limit(2).to_pydict()["id"]) == 2


def test_trusted_where_binds_parameters_and_resists_injection(doris):
    frame = read(
        doris,
        "events",
        unsafe_where_sql="kind = :kind AND score < :top",
        query_parameters={"kind": "buy", "top": 20},
    )
    got = frame.to_pydict()
    assert got["kind"] and set(got["kind"]) == {"buy"} and max(got["score"]) < 20
    attack = read(doris, "events", unsafe_where_sql="kind = :kind", query_parameters={"kind": "x' OR '1'='1"})
    assert attack.count_rows() == 0
    with pytest.raises(ConfigurationError, match="kind"):
        read(doris, "events", unsafe_where_sql="kind = :kind", query_parameters={"other": 1}).collect()


def test_query_parameters_bind_null_time_and_uuid(doris):
    import uuid

    from daft_doris.read import _literal_param

    # Every 10th event has a NULL score: `= NULL` matches nothing (SQL's rule), `<=>` them.
    assert (
        read(doris, "events", unsafe_where_sql="score = :s", query_parameters={"s": None}).count_rows() == 0
    )
    nulls = read(doris, "events", unsafe_where_sql="score <=> :s", query_parameters={"s": None}).to_pydict()
    assert sorted(nulls["id"]) == list(range(10, 401, 10))
    # A UUID binds its canonical text; a time binds a TIME literal.
    key = uuid.UUID("12345678-1234-5678-1234-567812345678")
    buys = read(
        doris,
        "events",
        unsafe_where_sql="kind = 'buy' AND :u = '12345678-1234-5678-1234-567812345678'",
        query_parameters={"u": key},
    )
    assert buys.count_rows() == 100
    noon = read(
        doris,
        "events",
        unsafe_where_sql="kind = 'buy' AND :t < CAST('12:30:00' AS TIME)",
        query_parameters={"t": datetime.time(12, 0)},
    )
    assert noon.count_rows() == 100
    # Fractions keep their digits (the emulator's engine has no TIME(6) to run them).
    assert _literal_param(datetime.time(1, 2, 3, 500_000)) == {"type": "time", "value": "01:02:03.500000"}
    with pytest.raises(ConfigurationError, match="holding NULL"):
        read(doris, "events", unsafe_where_sql="score IN (:s)", query_parameters={"s": [1, None]})
    with pytest.raises(ConfigurationError, match="time-zone"):
        read(
            doris,
            "events",
            unsafe_where_sql="kind = :t",
            query_parameters={"t": datetime.time(1, tzinfo=datetime.UTC)},
        )


def test_a_read_takes_the_connection_writes_take_and_refuses_its_fields_twice(doris):
    connection = DorisConnection(
        host=doris["host"],
        mysql_port=doris["query_port"],
        http_port=doris["fe_http_port"],
        password=ROOT_PASSWORD,
        mysql_ssl_mode="disabled",
    )
    for transport in ("mysql", "flight"):
        by_connection = read_doris(
            connection=connection,
            flight_port=doris["fe_flight_port"],
            database="py",
            table="events",
            transport=transport,
            split="auto",
        )
        assert sorted(by_connection.to_pydict()["id"]) == sorted(read(doris, "events").to_pydict()["id"])
    with pytest.raises(ConfigurationError, match="host, password given beside connection="):
        read_doris(
            connection=connection, host="x", password="p", database="py", table="events", transport="mysql"
        )
    with pytest.raises(TypeError, match="'host' \\(or 'connection'\\)"):
        read_doris(database="py", table="events", transport="mysql")
    with pytest.raises(ConfigurationError, match="connection must be a DorisConnection"):
        read_doris(connection={"host": "x"}, database="py", table="events", transport="mysql")
    # The connection's MySQL TLS mode is the read's floor: mysql_options may raise it only.
    strict = DorisConnection(
        host=doris["host"], mysql_port=doris["query_port"], mysql_ssl_mode="required", password=ROOT_PASSWORD
    )
    with pytest.raises(ConfigurationError, match="cannot lower the connection's TLS mode"):
        read_doris(
            connection=strict,
            database="py",
            table="events",
            transport="mysql",
            mysql_options={"ssl_disabled": True},
        )


def test_errors_are_typed_and_carry_no_secret(doris, monkeypatch):
    with pytest.raises(AuthenticationError) as info:
        read(doris, "events", username="reader", password="wrong-s3cret")
    assert "wrong-s3cret" not in str(info.value)
    assert info.value.kind == "authentication"
    with pytest.raises(DatabaseObjectNotFoundError) as missing:
        read(doris, "missing")
    assert missing.value.kind == "not_found"
    # Flight credentials are checked when the task runs (the schema comes over MySQL).
    monkeypatch.setenv("FLIGHT_PW", "s3cret-pw")
    frame = read(doris, "events", transport="flight", username="reader", password=SecretRef.env("FLIGHT_PW"))
    assert frame.count_rows() == 400
    monkeypatch.setenv("DORIS_PW", "s3cret-pw")
    ok = read(doris, "events", username="reader", password=SecretRef.env("DORIS_PW"), columns=["id"])
    assert ok.count_rows() == 400
    monkeypatch.delenv("DORIS_PW")
    with pytest.raises(ConfigurationError, match="DORIS_PW"):
        read(doris, "events", username="reader", password=SecretRef.env("DORIS_PW"))


@pytest.mark.parametrize("transport", ["mysql", "flight"])
def test_an_empty_plan_runs_one_limit_0_query_for_the_schema(doris, transport):
    """A WHERE Doris folds to false plans no tablet at all: the read neither fails nor
    reads everything; it runs one LIMIT 0 query, and the empty frame keeps its types."""
    from daft_doris import _native

    connection = _root_connection(doris)
    request = _native.ReadRequest("py", "events", transport="mysql", split="auto", unsafe_where_sql="1 = 0")
    _schema, groups, _, _, warning = _native.plan_read(connection, request, columns=["id"])
    assert warning is None and groups == [["SELECT `id` FROM `py`.`events` WHERE (1 = 0) LIMIT 0"]], groups
    frame = read(doris, "events", transport=transport, split="auto", unsafe_where_sql="1 = 0")
    out = frame.to_arrow()
    assert out.num_rows == 0
    assert out.schema.names == ["id", "kind", "score", "dt"]
    assert out.schema.field("dt").type == pa.date32() and out.schema.field("id").type == pa.int64()


def test_a_user_without_select_is_told_apart_from_bad_credentials(doris):
    """Valid credentials without SELECT on the table: Doris's _query_plan answers a
    permission error, not the 401 of a wrong password; the read raises
    DatabasePermissionError (and never falls back to an unsplit read)."""
    from daft_doris import DatabasePermissionError

    for policy in ("error", "single"):
        frame = read(
            doris, "events", username="loader", password="l0ader-pw", split="auto", discovery_policy=policy
        )
        with pytest.raises(DatabasePermissionError, match="SELECT") as refused:
            frame.collect()
        assert not isinstance(refused.value, AuthenticationError)
    with pytest.raises(AuthenticationError):
        read(doris, "events", username="loader", password="wrong-l0ader", split="auto").collect()


def test_an_option_left_out_takes_the_crates_default(doris):
    from daft_doris import _native

    source = daft_doris.DorisDataSource(
        host=doris["host"],
        mysql_port=doris["query_port"],
        password=ROOT_PASSWORD,
        database="py",
        table="events",
        transport="mysql",
    )
    read = _native.DEFAULTS["read"]
    assert (source._batch_rows, source._batch_bytes) == (read["batch_rows"], read["batch_bytes"])
    assert source._split == read["split"] and source._queries_per_task is None
    native = source._connection
    assert native.connect_timeout_seconds == read["connect_timeout_seconds"]
    assert native.query_timeout_seconds == read["query_timeout_seconds"]
    assert source.read().count_rows() > 0


def test_1_1s_pymysql_timeouts_and_autocommit_are_honoured(doris):
    """``mysql_options`` as 1.1 code passes them to PyMySQL: ``connect_timeout`` and
    ``read_timeout``/``write_timeout`` become the link's timeouts, ``autocommit=True`` is
    how a read runs; the read works."""
    frame = read(
        doris,
        "events",
        mysql_options={"connect_timeout": 7, "read_timeout": 30, "write_timeout": 30, "autocommit": True},
    )
    assert len(frame.to_pydict()["id"]) > 0


def test_a_plain_password_or_key_text_never_travels_in_a_pickle(doris, tmp_path):
    """A source and its tasks pickle (as Ray ships them) with a password read from a file on
    each worker, and the read runs after unpickling; a plain-string password refuses to be
    pickled, naming what to use (a client key given as PEM text: test_mtls.py)."""
    source = daft_doris.DorisDataSource(
        host=doris["host"],
        mysql_port=doris["query_port"],
        database="py",
        table="events",
        transport="mysql",
        password=ROOT_PASSWORD,
    )
    with pytest.raises(ConfigurationError, match="SecretRef.inline") as refused:
        pickle.dumps(source)
    assert ROOT_PASSWORD not in str(refused.value)
    secret_file = tmp_path / "pw"
    secret_file.write_text(ROOT_PASSWORD)
    from_file = daft_doris.DorisDataSource(
        host=doris["host"],
        mysql_port=doris["query_port"],
        database="py",
        table="events",
        transport="mysql",
        password=SecretRef.file(str(secret_file)),
    )
    blob = pickle.dumps(from_file)
    assert ROOT_PASSWORD.encode() not in blob
    assert pickle.loads(blob).read().count_rows() == 400
    with pytest.raises(ConfigurationError, match="cannot be read"):
        SecretRef.file(str(tmp_path / "missing")).resolve()
    with pytest.raises(ConfigurationError, match="one of an environment variable, a file or a value"):
        SecretRef()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: SecretRef.env("1X"), "secret environment variable has an invalid name"),
        (lambda: SecretRef.env(7), "secret environment variable has an invalid name"),
        (lambda: SecretRef.file(""), "a secret file is given by its path"),
        (lambda: SecretRef.inline(b"x"), "an inline secret is a string"),
    ],
)
def test_a_secret_source_that_breaks_its_rule_is_refused_when_made(make, message):
    with pytest.raises(ConfigurationError, match=message):
        make()


def test_a_secret_file_loses_one_trailing_line_break_and_is_capped(tmp_path):
    """The file's rules are doris_connection::SecretRef's: one trailing LF or CRLF dropped,
    at most 64 KiB of UTF-8; an unset variable is named, its value never shown."""
    crlf = tmp_path / "crlf"
    crlf.write_bytes(b"pw-from-file\r\n\r\n")
    assert SecretRef.file(crlf).resolve() == "pw-from-file\r\n"
    big = tmp_path / "big"
    big.write_bytes(b"a" * (64 * 1024 + 1))
    with pytest.raises(ConfigurationError, match="cannot be read as UTF-8 text of at most 64 KiB"):
        SecretRef.file(big).resolve()
    with pytest.raises(ConfigurationError, match="'DAFT_DORIS_TEST_UNSET' is not set"):
        SecretRef.env("DAFT_DORIS_TEST_UNSET").resolve()


@pytest.mark.parametrize("transport", ["mysql", "flight"])
def test_datetime_reads_as_microseconds_unless_asked_by_precision(doris, transport):
    """1.1 reads every DATETIME precision as ``timestamp[us]`` (so tables and files shared
    with 1.1-era data keep their types); ``timestamp_units="by_precision"`` gives each
    column the narrowest exact unit; the values are the same either way."""
    default = read(doris, "types", transport=transport, columns=["id", "ts", "ts0"]).to_arrow()
    assert [default.schema.field(n).type for n in ("ts", "ts0")] == [pa.timestamp("us")] * 2
    exact = read(
        doris, "types", transport=transport, columns=["id", "ts", "ts0"], timestamp_units="by_precision"
    ).to_arrow()
    assert [exact.schema.field(n).type for n in ("ts", "ts0")] == [pa.timestamp("us"), pa.timestamp("s")]
    assert sorted(default.to_pylist(), key=lambda r: r["id"]) == sorted(
        exact.to_pylist(), key=lambda r: r["id"]
    )
    with pytest.raises(ConfigurationError, match="timestamp_units must be one of microseconds, by_precision"):
        read(doris, "types", timestamp_units="ms")


def test_a_row_over_max_allowed_packet_fails_the_read_naming_the_cap(doris):
    """``mysql_options["max_allowed_packet"]`` caps the packets (rows) the server may send,
    as MySQL's client reads it: a row over it fails the read with a TransportError naming
    the cap, never a short result; under it the row reads whole."""
    from daft.exceptions import DaftCoreException

    conn = pymysql.connect(
        host="127.0.0.1", port=doris["query_port"], user="root", password=ROOT_PASSWORD, database="py"
    )
    with conn, conn.cursor() as cur:
        cur.execute(
            "CREATE TABLE IF NOT EXISTS wide (id INT NOT NULL, s STRING NULL) DUPLICATE KEY(id) "
            "DISTRIBUTED BY HASH(id) BUCKETS 1"
        )
        cur.execute("TRUNCATE TABLE wide")
        cur.execute("INSERT INTO wide VALUES (1, 'short'), (2, %s)", ("x" * 5000,))
    frame = read(doris, "wide", mysql_options={"max_allowed_packet": 2048})
    with pytest.raises(DaftCoreException, match=r"TransportError.*cap of 2048 \(max_allowed_packet\)"):
        frame.to_pydict()
    whole = read(doris, "wide", mysql_options={"max_allowed_packet": 8192}).to_pydict()
    assert sorted(len(s) for s in whole["s"]) == [5, 5000]
    with pytest.raises(ConfigurationError, match="max_allowed_packet must be a number of bytes from 1024"):
        read(doris, "wide", mysql_options={"max_allowed_packet": 10})


def test_unreadable_columns_fail_the_read_as_in_1_1_unless_omitted(doris, monkeypatch):
    """A table with columns that have no Arrow form: the read raises SchemaError naming them
    (the reference connector 1.1's behaviour, the default); with
    ``unreadable_columns="omit"`` they are left out with a warning, and selecting one
    raises."""
    import daft_doris.read as read_module

    def describe(connection, database, table, timestamp_units=None):
        schema = pa.schema([("id", pa.int32(), False)])
        return schema, [("bits", "bitmap", "BITMAP has no Arrow form")]

    monkeypatch.setattr(read_module._native, "describe_table", describe)
    with pytest.raises(daft_doris.SchemaError, match=r"bits.*bitmap.*unreadable_columns=\"omit\""):
        read(doris, "events")
    with pytest.raises(daft_doris.SchemaError, match="bits"):
        with pytest.warns(daft_doris.UnreadableColumnsWarning, match=r"left out .*bits \(bitmap\)"):
            read(doris, "events", columns=["bits"], unreadable_columns="omit")
    with pytest.warns(daft_doris.UnreadableColumnsWarning):
        assert read(doris, "events", columns=["id"], unreadable_columns="omit") is not None
    with pytest.raises(daft_doris.ConfigurationError, match="unreadable_columns must be one of error, omit"):
        read(doris, "events", unreadable_columns="drop")


def test_tasks_pickle_without_secrets_and_run_after_unpickling(doris, monkeypatch):
    monkeypatch.setenv("DORIS_PW", "s3cret-pw")
    source = daft_doris.DorisDataSource(
        host=doris["host"],
        mysql_port=doris["query_port"],
        http_port=doris["fe_http_port"],
        database="py",
        table="events",
        transport="mysql",
        username="reader",
        password=SecretRef.env("DORIS_PW"),
        split="auto",
    )
    from daft.io.pushdowns import Pushdowns

    async def collect():
        return [t async for t in source.get_tasks(Pushdowns(columns=["id"]))]

    import asyncio

    tasks = asyncio.run(collect())
    assert len(tasks) > 1
    blob = pickle.dumps(tasks)
    assert b"s3cret-pw" not in blob
    assert "s3cret" not in repr(tasks[0]) and "TABLET" not in repr(tasks[0])

    async def run(task):
        return [b async for b in task.read()]

    total = 0
    for task in pickle.loads(blob):
        for batch in asyncio.run(run(task)):
            total += len(batch)
    assert total == 400


def test_flight_locations_outside_the_allowlist_receive_nothing(doris):
    """A location the FE names that is neither the FE, a rewrite, a host the FE reports at
    /api/backends nor an explicit target fails the read before any DoGet: a listener there
    sees no connection (the bearer token never leaves for it)."""
    import socket

    from daft.exceptions import DaftCoreException

    with socket.socket() as trap:
        trap.bind(("127.0.0.2", 0))
        trap.listen(8)
        trap.settimeout(0.5)
        port = trap.getsockname()[1]
        _arm(doris, {"kind": "flight_location", "host": "127.0.0.2", "port": port})
        with pytest.raises((ConfigurationError, DaftCoreException), match="not allowed"):
            read(doris, "events", transport="flight").to_pydict()
        with pytest.raises(socket.timeout):
            trap.accept()
    be = doris["be_flight_port"]
    # The same BE under a host name the FE does not report: allowed explicitly, or rewritten.
    for options in (
        {"flight_allowed_locations": [f"localhost:{be}"]},
        {"flight_endpoint_rewrite": {f"localhost:{be}": f"127.0.0.1:{be}"}},
    ):
        _arm(doris, {"kind": "flight_location", "host": "localhost", "port": be})
        assert len(read(doris, "events", transport="flight", **options).to_pydict()["id"]) == 400
    _arm(doris, {"kind": "flight_location", "host": "localhost", "port": be})
    with pytest.raises((ConfigurationError, DaftCoreException), match="not allowed"):
        read(doris, "events", transport="flight").to_pydict()
    with pytest.raises(ConfigurationError, match="flight_allowed_locations"):
        read(doris, "events", transport="flight", flight_allowed_locations=["no-port"])


def test_a_pinned_server_key_lets_a_read_through_full_authentication(doris):
    """A server that asks for the password itself (``caching_sha2_password`` full
    authentication: the emulator's ``sha2_full_auth`` fault, on a plain link) gets it only
    encrypted to a key the user pinned (PyMySQL's ``server_public_key``, as bytes or text);
    without one the read fails before the password leaves (docs/security.md)."""
    import pathlib

    key = (
        pathlib.Path(__file__).resolve().parents[2] / "tests/emulator/src/mysql/keys/server_public.pem"
    ).read_bytes()
    base = f"http://127.0.0.1:{doris['fe_http_port']}/_emulator"

    def arm():
        request = urllib.request.Request(
            f"{base}/faults",
            data=json.dumps({"kind": "sha2_full_auth", "times": 1}).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        urllib.request.urlopen(request).read()

    def revealed():
        with urllib.request.urlopen(f"{base}/wire") as answer:
            return json.loads(answer.read())["mysql_passwords_revealed"]

    expected = len(rows(read(doris, "events")))
    before = revealed()
    arm()
    with pytest.raises(AuthenticationError, match="full authentication") as refused:
        read(doris, "events").collect()
    assert ROOT_PASSWORD not in str(refused.value)
    assert revealed() == before, "the password never left"
    for pinned in (key, key.decode()):
        arm()
        frame = read(doris, "events", mysql_options={"server_public_key": pinned})
        assert len(rows(frame)) == expected
    assert revealed() == before + 2, "the server read it, encrypted to the pinned key"
