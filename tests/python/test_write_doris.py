"""write_doris end to end against the emulator: operations, checks before the first
byte, typed errors and the sink. The exactly-once side (idempotence keys, atomic
writes, two-phase commit, clean-up) is test_write_atomic.py."""

import datetime
import decimal
import json
import pickle
import urllib.request
from collections.abc import Mapping

import daft
import pyarrow as pa
import pytest
from conftest import ROOT_PASSWORD, run_emulator
from daft_doris import (
    AuthenticationError,
    ConfigurationError,
    DorisConnection,
    DorisDataSink,
    DorisTable,
    DorisTableCompatibilityError,
    DorisWriteError,
    DorisWriteOptions,
    SecretRef,
    read_doris,
    write_doris,
)
from write_setup import INIT, conn, frame, ids_in, query, summary


@pytest.fixture(scope="module")
def doris():
    with run_emulator(INIT, root_password=ROOT_PASSWORD) as ports:
        yield ports


def test_load_writes_every_row_once_and_reads_back(doris):
    result = summary(
        write_doris(frame(1000), connection=conn(doris), table=DorisTable("w", "dup"), batch_rows=300)
    )
    assert result["status"] == "success"
    assert result["attempted_rows"] == 1000 and result["loaded_rows"] == 1000 and result["filtered_rows"] == 0
    assert result["batches"] >= 4 and result["uploaded_bytes"] > 0
    back = read_doris(
        host=doris["host"],
        mysql_port=doris["query_port"],
        password=ROOT_PASSWORD,
        database="w",
        table="dup",
        transport="mysql",
    ).to_arrow()
    assert back.num_rows == 1000
    # Every row exactly once (a duplicate plus a loss would keep the count).
    assert sorted(back.column("id").to_pylist()) == list(range(1000))
    assert sorted(back.column("name").to_pylist()) == sorted(f"n{i}" for i in range(1000))
    row = {r["id"]: r for r in back.to_pylist()}[7]
    assert row["name"] == "n7" and row["amount"] == decimal.Decimal("7.25")
    assert row["ts"] == datetime.datetime(2024, 1, 1, 0, 0, 7, 5)
    query(doris, "TRUNCATE TABLE dup")


def test_every_text_format_carries_awkward_strings_exactly(doris):
    # Backslashes, the text `\N`, quotes, separators and line breaks load as they are in
    # every format, CSV included (its escape bytes are doubled; Doris removes them).
    names = ["a\\b", "\\N", "tr\\", 'q"x', "c,d", "l\nm", "", None]
    table = DorisTable("w", "carried")
    for fmt in ("csv", "json", "arrow"):
        data = daft.from_pydict({"id": list(range(len(names))), "name": names})
        result = summary(write_doris(data, connection=conn(doris), table=table, format=fmt))
        assert result["loaded_rows"] == len(names), fmt
        back = dict(query(doris, "SELECT id, name FROM carried"))
        assert [back[i] for i in range(len(names))] == names, fmt
        query(doris, "TRUNCATE TABLE carried")


def test_load_properties_none_is_1_1s_default(doris):
    """1.1's default, ``load_properties=None`` passed explicitly, means no properties."""
    query(
        doris,
        "CREATE TABLE w.none_props (`id` INT NOT NULL, `name` VARCHAR(8) NULL) "
        "DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1",
    )
    rows = daft.from_pydict({"id": [1, 2], "name": ["a", "b"]})
    table = DorisTable("w", "none_props")
    done = summary(write_doris(rows, connection=conn(doris), table=table, load_properties=None))
    assert done["status"] == "success" and done["loaded_rows"] == 2
    assert query(doris, "SELECT count(*) FROM none_props")[0][0] == 2
    # 1.1's request_timeout_seconds bounds the client's wait; the Stream Load timeout is
    # an option of its own.
    done = summary(
        write_doris(
            rows, connection=conn(doris), table=table, request_timeout_seconds=30, load_timeout_seconds=900
        )
    )
    assert done["loaded_rows"] == 2


def test_upsert_partial_update_and_delete_on_a_unique_table(doris):
    table = DorisTable("w", "uniq")
    base = daft.from_pydict({"id": [1, 2, 3], "name": ["a", "b", "c"], "score": [10, 20, 30]})
    write_doris(base, connection=conn(doris), table=table, operation="upsert")
    write_doris(
        daft.from_pydict({"id": [2], "name": ["B"], "score": [21]}),
        connection=conn(doris),
        table=table,
        operation="upsert",
    )
    write_doris(
        daft.from_pydict({"id": [3], "score": [31]}),
        connection=conn(doris),
        table=table,
        operation="partial_update",
    )
    write_doris(daft.from_pydict({"id": [1]}), connection=conn(doris), table=table, operation="delete")
    assert query(doris, "SELECT id, name, score FROM uniq ORDER BY id") == ((2, "B", 21), (3, "c", 31))


def test_load_aggregates_on_an_aggregate_table(doris):
    table = DorisTable("w", "agg")
    for _ in range(2):
        write_doris(daft.from_pydict({"k": [1, 1], "total": [2, 3]}), connection=conn(doris), table=table)
    assert query(doris, "SELECT k, total FROM agg") == ((1, 10),)


@pytest.mark.parametrize(
    ("data", "operation", "message"),
    [
        ({"id": [990001], "name": ["x"]}, "load", "lacks amount, day, ts"),
        (
            {"id": [990001], "name": ["x"], "amount": [1.125], "day": [None], "ts": [None]},
            "load",
            "column amount",
        ),
        # 1.1's words for a type that does not fit, beside the detail.
        (
            {"id": [990001], "name": [True], "amount": [None], "day": [None], "ts": [None]},
            "load",
            "column name: Arrow Boolean cannot be safely converted to Doris VARCHAR",
        ),
        ({"id": [990001], "nope": [1]}, "partial_update", "nope is not in the table"),
        ({"name": ["x"], "score": [1]}, "upsert", "key column id"),
    ],
)
def test_schema_problems_are_found_before_the_first_upload(doris, data, operation, message):
    table = DorisTable("w", "uniq" if operation != "load" else "dup")
    before = query(doris, f"SELECT count(*) FROM {table.name}")[0][0]
    with pytest.raises(DorisTableCompatibilityError, match=message):
        write_doris(daft.from_pydict(data), connection=conn(doris), table=table, operation=operation)
    # Nothing at all reached the table (no row for the key, no other row either).
    assert query(doris, f"SELECT count(*) FROM {table.name} WHERE id = 990001")[0][0] == 0
    assert query(doris, f"SELECT count(*) FROM {table.name}")[0][0] == before


def test_nested_varchar_lengths_are_checked_before_the_first_upload(doris):
    """An ARRAY<VARCHAR(3)> element or a STRUCT field VARCHAR(4) that is too long stops the
    write before any byte (naming the column and the place, never the value); a TEXT field
    beside it is not limited; values that fit load and read back."""
    table = DorisTable("w", "nested")
    fine = {
        "id": [1, 2],
        "tags": [["abc", "de"], None],
        "person": [{"name": "anna", "note": "a note longer than four"}, None],
    }
    long_tag = {**fine, "tags": [["abc", "defg"], None]}
    long_name = {**fine, "person": [{"name": "annabel", "note": "x"}, None]}
    for data, place in ((long_tag, r"tags \(element\)"), (long_name, r"person \(field 0\)")):
        with pytest.raises(DorisTableCompatibilityError, match=place) as refused:
            write_doris(daft.from_pydict(data), connection=conn(doris), table=table)
        assert "defg" not in str(refused.value) and "annabel" not in str(refused.value)
        assert query(doris, "SELECT count(*) FROM nested")[0][0] == 0
    write_doris(daft.from_pydict(fine), connection=conn(doris), table=table)
    assert query(doris, "SELECT count(*) FROM nested")[0][0] == 2


def test_value_problems_stop_the_write_with_nothing_loaded(doris):
    table = DorisTable("w", "dup")
    too_long = frame(3).with_column("name", daft.lit("far too long for eight"))
    with pytest.raises(DorisTableCompatibilityError, match="longer than the column's 8 bytes"):
        write_doris(too_long, connection=conn(doris), table=table)
    overflow = frame(2).with_column("id", daft.lit(2**40))
    with pytest.raises(DorisTableCompatibilityError, match="does not fit"):
        write_doris(overflow, connection=conn(doris), table=table)
    nulls = daft.from_pydict(
        {"id": [1, None], "name": ["a", "b"], "amount": [None, None], "day": [None, None], "ts": [None, None]}
    ).with_column("amount", daft.col("amount").cast(daft.DataType.decimal128(10, 2)))
    with pytest.raises(DorisTableCompatibilityError, match="NOT NULL") as refused:
        write_doris(nulls, connection=conn(doris), table=table)
    assert refused.value.kind == "incompatible"
    assert query(doris, "SELECT count(*) FROM dup")[0][0] == 0


def test_credentials_errors_are_typed_and_redacted(doris, monkeypatch):
    with pytest.raises(AuthenticationError) as info:
        write_doris(
            frame(1),
            connection=conn(doris, username="writer", password="bad-pw-123"),
            table=DorisTable("w", "dup"),
        )
    assert "bad-pw-123" not in str(info.value)
    assert info.value.kind == "authentication"
    monkeypatch.setenv("WRITER_PW", "wr1ter-pw")
    ok = write_doris(
        frame(2),
        connection=conn(doris, username="writer", password=SecretRef.env("WRITER_PW")),
        table=DorisTable("w", "dup"),
    )
    assert summary(ok)["loaded_rows"] == 2
    query(doris, "TRUNCATE TABLE dup")


def test_rejected_rows_raise_a_write_error_with_no_rows_committed(doris):
    # Text into a BIGINT column: refused by the check, before any upload.
    data = daft.from_pydict({"k": [77], "total": ["not a number"]})
    with pytest.raises(DorisTableCompatibilityError):
        write_doris(data, connection=conn(doris), table=DorisTable("w", "agg"))
    assert query(doris, "SELECT count(*) FROM agg WHERE k = 77")[0][0] == 0
    # Rows Doris itself filters (no partition holds 5000, strict mode): a DorisWriteError
    # naming the label, and nothing of the load committed.
    data = daft.from_pydict({"id": [1, 5000], "name": ["a", "b"]})
    with pytest.raises(DorisWriteError, match="too many filtered rows") as refused:
        write_doris(data, connection=conn(doris), table=DorisTable("w", "part"))
    assert query(doris, "SELECT count(*) FROM part")[0][0] == 0
    # What Doris said is on the error as attributes; the error log (it shows the rejected
    # rows) is a field, never part of the message.
    error = refused.value
    assert error.label and error.label in str(error), error.label
    assert error.error_url and error.error_url.startswith("http"), error.error_url
    assert error.error_url not in str(error) and "error log" not in str(error)
    with urllib.request.urlopen(error.error_url, timeout=10) as log:
        assert b"no partition for this tuple" in log.read(), "the log gives the rejection's reason"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"label_prefix": "-bad"}, "label_prefix"),
        ({"label_prefix": "x" * 96}, "label_prefix"),
        ({"operation": "merge"}, "operation must be one of 'load', 'upsert', 'partial_update', 'delete'"),
        ({"operation": 3}, "operation must be one of"),
        ({"max_filter_ratio": 1.5}, "max_filter_ratio"),
        ({"load_properties": {"label": "x"}}, "managed"),
        ({"operation": "partial_update", "format": "parquet"}, "partial_update"),
        ({"idempotence_key": "a b"}, "idempotence_key"),
        # Managed by the Stream Load client (doris_streamload::MANAGED_HEADERS, one list).
        ({"load_properties": {"txn_id": "7"}}, "txn_id is managed"),
        ({"load_properties": {"Column_Separator": ","}}, "managed"),
        ({"load_properties": {"partial_update_new_key_behavior": "maybe"}}, "APPEND or ERROR"),
        ({"label_prefix": "a:b"}, "label_prefix"),
        ({"idempotence_key": "k" * 65}, "idempotence_key"),
        ({"label_prefix": "p" * 60, "idempotence_key": "k" * 30}, "80 characters"),
        # Types are checked as strictly as values (a bool is not a count, an int not a flag).
        ({"batch_rows": True}, "batch_rows must be an integer from 1 to 1000000"),
        ({"batch_rows": 0}, "batch_rows"),
        ({"batch_bytes": "64M"}, "batch_bytes"),
        ({"max_retries": 21}, "max_retries must be an integer from 0 to 20"),
        ({"strict_mode": 1}, "strict_mode must be a bool"),
        ({"two_phase_commit": "yes"}, "two_phase_commit must be a bool"),
        ({"max_filter_ratio": True}, "max_filter_ratio"),
        ({"request_timeout_seconds": 0}, "request_timeout_seconds must be more than 0"),
        ({"load_timeout_seconds": 0}, "load_timeout_seconds must be more than 0"),
        ({"label_prefix": 7}, "label_prefix"),
        ({"idempotence_key": 7}, "idempotence_key"),
        ({"load_properties": {"timeout": 5}}, "load_properties values must be strings"),
        (
            {"idempotence_key": "k", "two_phase_commit": True, "atomic": True},
            "two_phase_commit does not apply",
        ),
        ({"atomic": True, "operation": "delete"}, "atomic writes support"),
        ({"write_mode": "replace"}, "write_mode must be one of 'append', 'overwrite'"),
        ({"write_mode": "overwrite", "operation": "upsert"}, "overwrite"),
        ({"load_properties": "columns=id"}, "load_properties must be a mapping"),
        ({"load_properties": {"": "x"}}, "load_properties keys must be non-empty strings"),
        ({"commit_ledger": ""}, "commit_ledger"),
    ],
)
def test_bad_write_options_fail_before_any_network_io(kwargs, message):
    connection = DorisConnection(host="127.0.0.1", http_port=1, mysql_port=1)
    with pytest.raises(ConfigurationError, match=message):
        write_doris(frame(1), connection=connection, table=DorisTable("w", "dup"), **kwargs)
    # The sink takes the same options, as one DorisWriteOptions mapping, checked the same.
    with pytest.raises(ConfigurationError, match=message):
        DorisDataSink(connection, DorisTable("w", "dup"), DorisWriteOptions(**kwargs))


def test_a_write_option_name_is_checked_as_a_keyword():
    """The options are declared once (``DorisWriteOptions``): a name that is not one of them
    is a ``TypeError`` from ``write_doris`` and from the sink, before anything runs."""
    connection = DorisConnection(host="127.0.0.1", http_port=1, mysql_port=1)
    table = DorisTable("w", "dup")
    with pytest.raises(TypeError, match="write_doris\\(\\) got an unexpected keyword argument 'batch_row'"):
        write_doris(frame(1), connection=connection, table=table, batch_row=10)
    with pytest.raises(TypeError, match="'overwrite'"):
        DorisDataSink(connection, table, {"overwrite": True})  # type: ignore[typeddict-unknown-key]
    with pytest.raises(ConfigurationError, match="options must be a DorisWriteOptions mapping"):
        DorisDataSink(connection, table, [("batch_rows", 10)])  # type: ignore[arg-type]


def test_write_options_work_as_1_1s_options_object(doris):
    """1.1 code builds ``DorisWriteOptions`` (or ``DorisWriteOptions.from_mapping``), reads
    its options as attributes (one left out reads as its default) and hands it to the sink;
    it pickles (a Ray task carries it) and its names are checked when it is made."""
    import pickle

    options = DorisWriteOptions(operation="upsert", batch_rows=10)
    assert (options.operation, options.batch_rows) == ("upsert", 10)
    assert (options.batch_bytes, options.strict_mode, options.label_prefix) == (64 << 20, True, "daft_doris")
    assert options.format is None and options.idempotence_key is None
    assert DorisWriteOptions.from_mapping({"operation": "upsert", "batch_rows": 10}) == options
    empty = DorisWriteOptions.from_mapping(None)
    assert empty == {} and empty.max_retries == 4
    again = pickle.loads(pickle.dumps(options))
    assert again == options and again.batch_rows == 10 and type(again) is DorisWriteOptions
    with pytest.raises(TypeError, match="unexpected keyword argument 'batch_row'"):
        DorisWriteOptions.from_mapping({"batch_row": 1})
    with pytest.raises(ConfigurationError, match="takes a mapping"):
        DorisWriteOptions.from_mapping([("batch_rows", 1)])  # type: ignore[arg-type]
    with pytest.raises(AttributeError, match="no option 'batchrows'"):
        options.batchrows  # noqa: B018
    query(
        doris,
        "CREATE TABLE w.eleven (`id` INT NOT NULL, `name` VARCHAR(8) NULL) UNIQUE KEY(`id`) "
        'DISTRIBUTED BY HASH(`id`) BUCKETS 1 PROPERTIES ("enable_unique_key_merge_on_write" = "true")',
    )
    sink = DorisDataSink(conn(doris), DorisTable("w", "eleven"), options)
    written = daft.from_pydict({"id": [1, 2], "name": ["a", "b"]}).write_sink(sink).to_pydict()
    assert sum(written["loaded_rows"]) == 2
    assert sorted(query(doris, "SELECT id, name FROM eleven")) == [(1, "a"), (2, "b")]


def test_the_sink_snapshots_its_options(doris):
    """What the sink was given is what its tasks use: a later change to the caller's
    mappings reaches no load."""
    query(
        doris,
        "CREATE TABLE w.snapshot (`id` INT NOT NULL, `name` VARCHAR(8) NULL, `amount` DECIMAL(10, 2) "
        "NULL, `day` DATE NULL, `ts` DATETIME(6) NULL) DUPLICATE KEY(`id`) "
        "DISTRIBUTED BY HASH(`id`) BUCKETS 1",
    )
    given = DorisWriteOptions(load_properties={"where": "id < 3"})
    sink = DorisDataSink(conn(doris), DorisTable("w", "snapshot"), given)
    given["load_properties"]["where"] = "id < 100"  # type: ignore[index]
    given["batch_rows"] = 0
    frame(10).write_sink(sink)
    assert ids_in(doris, "snapshot") == [0, 1, 2]


def _cyclic_list() -> list:
    cyclic: list = []
    cyclic.append(cyclic)
    return cyclic


class _SelfMapping(Mapping):
    """A mapping whose one value is itself."""

    def __getitem__(self, key):
        return self

    def __iter__(self):
        return iter(["again"])

    def __len__(self):
        return 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"host": "http://fe"}, "bare host name"),
        ({"host": "fe:8030"}, "must not contain a port"),
        ({"host": ""}, "host must be a non-empty string"),
        ({"username": ""}, "username must be a non-empty string"),
        ({"http_port": 0}, "http_port must be an integer from 1 to 65535"),
        # An integer beyond 64 bits is named by the same rule, not by its type.
        ({"mysql_port": 2**70}, "mysql_port must be an integer from 1 to 65535"),
        ({"mysql_port": "9030"}, "mysql_port"),
        ({"http_secure": 1}, "http_secure must be a bool"),
        ({"verify_tls": False}, "TLS is always verified"),
        ({"request_timeout_seconds": -1}, "request_timeout_seconds must be more than 0"),
        ({"request_timeout_seconds": "5"}, "request_timeout_seconds must be a number"),
        ({"redirect_hosts": ("be/1",)}, "bare host name"),
        ({"redirect_hosts": "be1"}, "redirect_hosts must be a list or tuple"),
        ({"redirect_ports": (70000,)}, "redirect_ports must be an integer from 1 to 65535"),
        ({"trust_reported_backends": "yes"}, "trust_reported_backends must be a bool"),
        ({"redirect_policy": "nearest"}, "redirect_policy must be one of 'direct', 'random-be'"),
        ({"redirect_policy": 1}, "redirect_policy must be one of"),
        ({"mysql_ssl_mode": "strict"}, "ssl_mode must be one of"),
        # A list is read item by item: each item is named by the list's rule.
        ({"redirect_ports": (8040, 2**70)}, "redirect_ports must be an integer from 1 to 65535"),
        ({"redirect_hosts": ["be1", object()]}, "redirect_hosts must be a bool, number, string"),
        # A cyclic list or mapping ends at the nesting limit, not in a stack overflow.
        ({"redirect_hosts": _cyclic_list()}, "redirect_hosts is nested too deeply"),
        ({"mysql_options": {"ssl": _SelfMapping()}}, "mysql_options ssl again again .* too deeply"),
    ],
)
def test_bad_connection_settings_fail_when_the_connection_is_made(kwargs, message):
    with pytest.raises(ConfigurationError, match=message):
        DorisConnection(**{"host": "fe", **kwargs})


def test_the_connection_is_one_native_object_that_pickles_as_its_fields():
    """``DorisConnection`` is the native connection itself, its fields declared once in
    Rust: its signature states the crates' defaults, every field reads back as checked,
    a pickle (Ray ships one in every task) carries the fields and compares equal, a
    keyword it does not have is a TypeError, and a read lays only read options over it."""
    import inspect

    fe = DorisConnection(
        host="fe",
        username="loader",
        password=SecretRef.env("W_CONN_PW"),
        redirect_hosts=["be1"],
        redirect_ports=[8040],
        mysql_ssl_mode="required",
        request_timeout_seconds=45,
    )
    again = pickle.loads(pickle.dumps(fe))
    assert again == fe and hash(again) == hash(fe) and again is not fe
    assert (again.host, again.username, again.redirect_hosts, again.redirect_ports) == (
        "fe",
        "loader",
        ("be1",),
        (8040,),
    )
    assert (again.mysql_ssl_mode, again.request_timeout_seconds, again.password) == (
        "required",
        45.0,
        SecretRef.env("W_CONN_PW"),
    )
    # A writer's one timeout: connecting waits at most 30 s of it.
    assert (again.connect_timeout_seconds, again.query_timeout_seconds) == (30.0, 45.0)
    assert fe != DorisConnection(host="fe", username="loader") and fe != "fe"
    defaults = DorisConnection(host="fe")
    signature = inspect.signature(DorisConnection).parameters
    for name, parameter in signature.items():
        if name != "host":
            assert getattr(defaults, name) == parameter.default or (
                name.startswith("redirect_") and getattr(defaults, name) == tuple(parameter.default)
            ), name
    with pytest.raises(TypeError, match="port"):
        DorisConnection(host="fe", port=9030)
    with pytest.raises(ConfigurationError, match='"http_port" is not a read option'):
        fe._for_read(given=True, transport="mysql", http_port=1)
    with pytest.raises(AttributeError, match="no attribute 'hostname'"):
        fe.hostname  # noqa: B018


def test_the_connections_redirect_targets_are_followed_and_no_others(doris):
    """The FE redirects to `localhost`, which /api/backends does not report (it names
    127.0.0.1): refused before any body byte unless the connection names it."""

    def redirect_to_localhost():
        request = urllib.request.Request(
            f"http://127.0.0.1:{doris['fe_http_port']}/_emulator/faults",
            data=json.dumps(
                {"kind": "redirect", "host": "localhost", "port": doris["be_http_port"], "times": 1}
            ).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        urllib.request.urlopen(request).read()

    redirect_to_localhost()
    with pytest.raises(DorisWriteError, match="redirect"):
        write_doris(frame(3), connection=conn(doris), table=DorisTable("w", "redirected"))
    assert query(doris, "SELECT count(*) FROM redirected")[0][0] == 0
    redirect_to_localhost()
    allowed = conn(doris, redirect_hosts=["localhost"], redirect_ports=[doris["be_http_port"]])
    assert allowed.redirect_hosts == ("localhost",)
    result = write_doris(frame(3), connection=allowed, table=DorisTable("w", "redirected"))
    assert summary(result)["loaded_rows"] == 3
    assert query(doris, "SELECT count(*) FROM redirected")[0][0] == 3


def test_listed_redirect_targets_keep_the_reference_rule(doris):
    """As in 1.1, a connection that lists redirect targets allows the FE's host and
    ``redirect_hosts`` on ``redirect_ports`` only: the BE the FE redirects to
    (127.0.0.1, which /api/backends reports) is refused unless its port is listed, and the
    FE's own list is trusted beside the lists only when asked; nothing listed, it is
    trusted unless refused."""
    be = doris["be_http_port"]
    table = DorisTable("w", "redirected")
    before = query(doris, "SELECT count(*) FROM redirected")[0][0]

    def written(connection):
        return summary(write_doris(frame(2), connection=connection, table=table))["loaded_rows"]

    # 1.1: the FE's host is implicitly listed, on the listed ports.
    assert written(conn(doris, redirect_ports=[be])) == 2
    # Listed elsewhere: refused before any row, as 1.1 refused it.
    listed_elsewhere = {"redirect_hosts": ["be.example"], "redirect_ports": [be + 1]}
    with pytest.raises(DorisWriteError, match="not among the configured redirect targets"):
        write_doris(frame(2), connection=conn(doris, **listed_elsewhere), table=table)
    # Asked for, the BEs the FE reports are trusted beside the lists.
    trusting = conn(doris, trust_reported_backends=True, **listed_elsewhere)
    assert written(trusting) == 2
    # Nothing listed: the FE's list, unless refused.
    assert written(conn(doris)) == 2
    with pytest.raises(DorisWriteError, match="redirect"):
        write_doris(frame(2), connection=conn(doris, trust_reported_backends=False), table=table)
    assert query(doris, "SELECT count(*) FROM redirected")[0][0] == before + 6


def test_sink_pickles_and_redacts_its_password(tmp_path):
    """A sink pickles (as Ray ships it to every worker) with a password each worker reads
    (SecretRef.env, SecretRef.file) or one the user chose to send (SecretRef.inline); a
    plain-string password refuses to be pickled, naming the choices; no form shows it."""

    def sink(password):
        return DorisDataSink(
            DorisConnection(host="fe", password=password),
            DorisTable("w", "dup"),
            DorisWriteOptions(operation="partial_update"),
        )

    plain = sink("pl41n-secret")
    assert "pl41n-secret" not in repr(plain)
    with pytest.raises(
        ConfigurationError, match=r"SecretRef.env\(NAME\) or SecretRef.file\(PATH\)"
    ) as refused:
        pickle.dumps(plain)
    assert "pl41n-secret" not in str(refused.value)
    with pytest.raises(ConfigurationError, match="plain string"):
        pickle.dumps(plain._connection)
    # No password at all travels as it is.
    assert pickle.loads(pickle.dumps(sink(""))).name() == "Apache Doris Stream Load"
    secret_file = tmp_path / "pw"
    secret_file.write_text("pl41n-secret\n")
    for password, travels in (
        (SecretRef.env("W_SINK_PW"), False),
        (SecretRef.file(str(secret_file)), False),
        (SecretRef.inline("pl41n-secret"), True),
    ):
        blob = pickle.dumps(sink(password))
        assert (b"pl41n-secret" in blob) is travels, password
        assert "pl41n-secret" not in repr(password) and "pl41n-secret" not in repr(sink(password))
        again = pickle.loads(blob)
        if not isinstance(password, SecretRef) or password.environment_variable is None:
            assert again._connection.password.resolve() == "pl41n-secret"
    copy = pickle.loads(pickle.dumps(sink(SecretRef.inline("pl41n-secret"))))
    assert copy.name() == "Apache Doris Stream Load"
    assert copy.schema().to_pyarrow_schema().names == [
        "status",
        "batches",
        "attempted_rows",
        "loaded_rows",
        "filtered_rows",
        "uploaded_bytes",
        "already_loaded_batches",
    ]
    assert pa.types.is_int64(copy.schema().to_pyarrow_schema().field("batches").type)


def test_a_started_sink_carries_its_checked_table_to_the_workers(doris):
    """The driver checks the table once (start); the pickled sink a worker gets holds the
    same table check (columns and value rules) and applies its rules before any upload."""
    from daft.recordbatch import MicroPartition

    # Sent with the tasks by choice: a plain-string password would not pickle.
    sink = DorisDataSink(conn(doris, password=SecretRef.inline(ROOT_PASSWORD)), DorisTable("w", "carried"))
    data = pa.table({"id": pa.array([1, 2], pa.int32()), "name": pa.array(["ok", "x" * 9])})
    sink.bind_schema(data.schema)
    sink.start()
    worker = pickle.loads(pickle.dumps(sink))
    target = worker._run.state["target"]
    assert target["columns"] == ["id", "name"] and target == sink._run.state["target"]
    assert target["rules"], "the value rules travelled"
    with pytest.raises(DorisTableCompatibilityError, match="longer than the column's 8 bytes"):
        list(worker.write(iter([MicroPartition.from_arrow(data)])))
    assert query(doris, "SELECT count(*) FROM carried")[0][0] == 0
    fine = MicroPartition.from_arrow(data.slice(0, 1))
    (result,) = list(worker.write(iter([fine])))
    assert result.rows_written == 1
    assert query(doris, "SELECT id, name FROM carried") == ((1, "ok"),)


def test_the_reference_connectors_names_work():
    from daft_doris.doris import DorisDataSource as ReferenceSource
    from daft_doris.doris import read_doris as reference_read

    assert reference_read is read_doris and ReferenceSource.__name__ == "DorisDataSource"
    assert DorisTable("sales", "order`s").qualified == "`sales`.`order``s`"


def test_the_sink_works_with_write_sink_directly(doris):
    # Daft's own way: no bind_schema; each task checks its first micropartition first.
    frame(20).write_sink(DorisDataSink(conn(doris), DorisTable("w", "dup")))
    atomic = DorisDataSink(
        conn(doris), DorisTable("w", "dup"), DorisWriteOptions(idempotence_key="sink-1", atomic=True)
    )
    frame(10, start=100).write_sink(atomic)
    frame(10, start=100).write_sink(
        DorisDataSink(
            conn(doris), DorisTable("w", "dup"), DorisWriteOptions(idempotence_key="sink-1", atomic=True)
        )
    )
    assert ids_in(doris, "dup") == [*range(20), *range(100, 110)]
    bad = daft.from_pydict({"id": [1], "nope": [2]})
    # Raised in the sink's write(): Daft wraps it in a RuntimeError that names the class.
    with pytest.raises(RuntimeError, match="DorisTableCompatibilityError.*nope is not in the table"):
        bad.write_sink(DorisDataSink(conn(doris), DorisTable("w", "dup")))
    assert ids_in(doris, "dup") == [*range(20), *range(100, 110)]
    query(doris, "TRUNCATE TABLE dup")


@pytest.mark.parametrize(
    ("column", "bad", "message"),
    [
        ("j", "{'not': json}", "not valid JSON"),
        ("ip", "10.0.0.256", "not an IPv4 or IPv6 address"),
        ("big", "170141183460469231731687303715884105728", "not a LARGEINT"),
    ],
)
def test_text_values_doris_would_null_or_filter_are_refused_before_upload(doris, column, bad, message):
    good = {"id": [1, 2], "j": ['{"a": 1}', None], "ip": ["::1", "10.0.0.1"], "big": ["-5", None]}
    write_doris(daft.from_pydict(good), connection=conn(doris), table=DorisTable("w", "typed"))
    rows = {**good, "id": [3, 4], column: [good[column][0], bad]}
    with pytest.raises(DorisTableCompatibilityError, match=message) as info:
        write_doris(daft.from_pydict(rows), connection=conn(doris), table=DorisTable("w", "typed"))
    assert bad not in str(info.value)
    assert sorted(r[0] for r in query(doris, "SELECT id FROM typed")) == [1, 2]
    query(doris, "TRUNCATE TABLE typed")


def test_floats_write_into_a_decimal_column_only_when_every_value_is_exact(doris):
    table = DorisTable("w", "dup")
    exact = frame(3).with_column("amount", daft.lit(0.5) + daft.col("id").cast(daft.DataType.float64()) / 4)
    write_doris(exact, connection=conn(doris), table=table)
    got = dict(query(doris, "SELECT id, amount FROM dup WHERE id < 3"))
    assert got == {0: decimal.Decimal("0.50"), 1: decimal.Decimal("0.75"), 2: decimal.Decimal("1.00")}
    # 1/8 needs three decimals: DECIMAL(10, 2) would round it, so nothing is written.
    rounded = frame(3, start=10).with_column("amount", daft.col("id").cast(daft.DataType.float64()) / 8)
    with pytest.raises(DorisTableCompatibilityError, match="no exact form") as info:
        write_doris(rounded, connection=conn(doris), table=table)
    assert "0.125" not in str(info.value) and "1.25" not in str(info.value)
    assert query(doris, "SELECT count(*) FROM dup WHERE id >= 10 AND id < 13")[0][0] == 0
    query(doris, "TRUNCATE TABLE dup")


def test_arrow_by_default_writes_what_1_1s_formats_write(doris):
    """``format=None`` sends Arrow where 1.1 sent Parquet (load, upsert) and line-delimited
    JSON (partial_update): the same frame, nulls and edge values included, leaves exactly
    the same rows, typed the same, either way (docs/compatibility.md)."""
    import datetime
    import decimal

    rows = {
        "id": [1, 2, 3, 4],
        "name": ["a", "", None, "ünï"],
        "amount": [decimal.Decimal("-99999999.99"), decimal.Decimal("0.01"), None, decimal.Decimal("12.30")],
        "day": [datetime.date(1970, 1, 1), datetime.date(2024, 2, 29), None, datetime.date(9999, 12, 31)],
        "ts": [
            datetime.datetime(2024, 2, 29, 23, 59, 59, 999999),
            datetime.datetime(1970, 1, 1),
            None,
            datetime.datetime(2026, 12, 6, 12, 0, 0, 1),
        ],
    }
    columns = (
        "`id` INT NOT NULL, `name` VARCHAR(8) NULL, `amount` DECIMAL(10, 2) NULL, "
        "`day` DATE NULL, `ts` DATETIME(6) NULL"
    )
    for table in ("fmt_arrow", "fmt_parquet"):
        query(
            doris, f"CREATE TABLE {table} ({columns}) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1"
        )
    write_doris(daft.from_pydict(rows), connection=conn(doris), table=DorisTable("w", "fmt_arrow"))
    write_doris(
        daft.from_pydict(rows), connection=conn(doris), table=DorisTable("w", "fmt_parquet"), format="parquet"
    )
    arrow = query(doris, "SELECT * FROM fmt_arrow ORDER BY id")
    assert arrow == query(doris, "SELECT * FROM fmt_parquet ORDER BY id")
    assert len(arrow) == 4 and arrow[2][1:] == (None, None, None, None)
    # partial_update: 1.1 sent JSON.
    for fmt, table in ((None, "pu_arrow"), ("json", "pu_json")):
        query(
            doris,
            f"CREATE TABLE {table} (`id` BIGINT NOT NULL, `name` VARCHAR(16) NULL, `score` INT NULL) "
            "UNIQUE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1 "
            'PROPERTIES ("enable_unique_key_merge_on_write" = "true")',
        )
        base = daft.from_pydict({"id": [1, 2], "name": ["keep", "also"], "score": [1, 2]})
        write_doris(base, connection=conn(doris), table=DorisTable("w", table))
        update = daft.from_pydict({"id": [1, 2], "score": [None, -7]})
        kwargs = {"format": fmt} if fmt else {}
        write_doris(
            update, connection=conn(doris), table=DorisTable("w", table), operation="partial_update", **kwargs
        )
    assert query(doris, "SELECT * FROM pu_arrow ORDER BY id") == query(
        doris, "SELECT * FROM pu_json ORDER BY id"
    )
    assert query(doris, "SELECT * FROM pu_arrow ORDER BY id") == ((1, "keep", None), (2, "also", -7))


@pytest.mark.parametrize("fmt", [None, "json", "parquet", "csv"])
def test_nested_values_go_into_a_json_column_as_their_json(doris, fmt):
    """A struct, list or map written into a JSON column arrives as its JSON (1.1 wrote nested
    values into JSON columns too): whatever the body's format, the value read back parses to
    the value written; a NaN inside is refused before any byte is sent."""
    name = f"nested_json_{fmt or 'arrow'}"
    query(
        doris,
        f"CREATE TABLE w.{name} (`id` INT NOT NULL, `s` JSON NULL, `l` JSON NULL, `m` JSON NULL) "
        "DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1",
    )
    person = pa.struct([("name", pa.string()), ("n", pa.int64()), ("x", pa.float64())])
    data = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int32()),
            "s": pa.array(
                [{"name": 'a "q", b', "n": 7, "x": 1.5}, None, {"name": "é", "n": None, "x": -0.25}], person
            ),
            "l": pa.array([[1, None, 3], [], None], pa.list_(pa.int64())),
            "m": pa.array([[("k", 5), ("z", None)], None, []], pa.map_(pa.string(), pa.int64())),
        }
    )
    written = write_doris(
        daft.from_arrow(data), connection=conn(doris), table=DorisTable("w", name), format=fmt
    )
    assert summary(written)["loaded_rows"] == 3
    got = {row[0]: row[1:] for row in query(doris, f"SELECT id, s, l, m FROM {name}")}

    def parsed(value):
        return None if value is None else json.loads(value)

    assert [parsed(v) for v in got[1]] == [
        {"name": 'a "q", b', "n": 7, "x": 1.5},
        [1, None, 3],
        {"k": 5, "z": None},
    ]
    assert [parsed(v) for v in got[2]] == [None, [], None]
    assert [parsed(v) for v in got[3]] == [{"name": "é", "n": None, "x": -0.25}, None, {}]
    nan = pa.table(
        {
            "id": pa.array([9], pa.int32()),
            "s": pa.array([None], person),
            "l": pa.array([[float("nan")]], pa.list_(pa.float64())),
            "m": pa.array([None], pa.map_(pa.string(), pa.int64())),
        }
    )
    with pytest.raises(DorisTableCompatibilityError, match="NaN or infinite"):
        write_doris(daft.from_arrow(nan), connection=conn(doris), table=DorisTable("w", name), format=fmt)
    assert query(doris, f"SELECT count(*) FROM {name}")[0][0] == 3
