"""write_doris end to end against the emulator: operations, checks, idempotence, errors."""

import datetime
import decimal
import json
import pickle
import re
import urllib.request

import daft
import pyarrow as pa
import pymysql
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
    cleanup_staging,
    read_doris,
    write_doris,
)

INIT = """
CREATE DATABASE w;
CREATE TABLE w.dup (`id` INT NOT NULL, `name` VARCHAR(8) NULL, `amount` DECIMAL(10, 2) NULL,
  `day` DATE NULL, `ts` DATETIME(6) NULL) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 2;
CREATE TABLE w.uniq (`id` BIGINT NOT NULL, `name` VARCHAR(16) NULL, `score` INT NULL)
  UNIQUE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 2
  PROPERTIES ("enable_unique_key_merge_on_write" = "true");
CREATE TABLE w.agg (`k` INT NOT NULL, `total` BIGINT SUM NULL) AGGREGATE KEY(`k`)
  DISTRIBUTED BY HASH(`k`) BUCKETS 1;
CREATE TABLE w.part (`id` INT NOT NULL, `name` VARCHAR(8) NULL) DUPLICATE KEY(`id`)
  PARTITION BY RANGE(`id`) (PARTITION p0 VALUES LESS THAN ("1000"))
  DISTRIBUTED BY HASH(`id`) BUCKETS 1;
CREATE TABLE w.typed (`id` INT NOT NULL, `j` JSON NULL, `ip` IPV6 NULL, `big` LARGEINT NULL)
  DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1;
CREATE TABLE w.nested (`id` INT NOT NULL, `tags` ARRAY<VARCHAR(3)> NULL,
  `person` STRUCT<name:VARCHAR(4), note:TEXT> NULL) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1;
CREATE TABLE w.carried (`id` INT NOT NULL, `name` VARCHAR(8) NULL) DUPLICATE KEY(`id`)
  DISTRIBUTED BY HASH(`id`) BUCKETS 1;
CREATE TABLE w.redirected (`id` INT NOT NULL, `name` VARCHAR(8) NULL, `amount` DECIMAL(10, 2) NULL,
  `day` DATE NULL, `ts` DATETIME(6) NULL) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1;
CREATE USER 'writer'@'%' IDENTIFIED BY 'wr1ter-pw';
GRANT SELECT_PRIV, LOAD_PRIV ON w.* TO 'writer'@'%';
"""


@pytest.fixture(scope="module")
def doris():
    with run_emulator(INIT, root_password=ROOT_PASSWORD) as ports:
        yield ports


def conn(ports, **kwargs):
    if "username" not in kwargs:
        kwargs.setdefault("password", ROOT_PASSWORD)
    return DorisConnection(
        host=ports["host"], http_port=ports["fe_http_port"], mysql_port=ports["query_port"], **kwargs
    )


def query(ports, sql):
    c = pymysql.connect(
        host="127.0.0.1", port=ports["query_port"], user="root", password=ROOT_PASSWORD, database="w"
    )
    with c, c.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


def frame(n, start=0):
    return daft.from_pydict(
        {
            "id": list(range(start, start + n)),
            "name": [f"n{i}" for i in range(start, start + n)],
            "amount": [decimal.Decimal(f"{i}.25") for i in range(start, start + n)],
            "day": [datetime.date(2024, 1, 1 + i % 28) for i in range(n)],
            "ts": [datetime.datetime(2024, 1, 1, 0, 0, i % 60, 5) for i in range(n)],
        }
    )


def summary(result):
    data = result.to_pydict()
    return {k: v[0] for k, v in data.items()}


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


def test_per_load_labels_make_a_rerun_of_the_same_partitioning_load_nothing_twice(doris):
    # atomic=False: the older mode, one deterministic label per load (see docs/consistency.md
    # for why it only holds for the same partitioning).
    data = frame(500)
    first = summary(
        write_doris(
            data,
            connection=conn(doris),
            table=DorisTable("w", "dup"),
            idempotence_key="run-42",
            batch_rows=200,
            atomic=False,
        )
    )
    assert first["loaded_rows"] == 500 and first["already_loaded_batches"] == 0
    again = summary(
        write_doris(
            data,
            connection=conn(doris),
            table=DorisTable("w", "dup"),
            idempotence_key="run-42",
            batch_rows=200,
            atomic=False,
        )
    )
    assert again["already_loaded_batches"] == again["batches"] == first["batches"]
    assert again["uploaded_bytes"] == 0
    assert query(doris, "SELECT count(*) FROM dup")[0][0] == 500
    # Other batch bounds cut other loads: their labels are other labels (the settings are
    # part of the fingerprint), so no row is taken for "already loaded" under a label that
    # held other rows. It is another write: every row a second time, none skipped.
    other = summary(
        write_doris(
            data,
            connection=conn(doris),
            table=DorisTable("w", "dup"),
            idempotence_key="run-42",
            batch_rows=100,
            atomic=False,
        )
    )
    assert other["already_loaded_batches"] == 0 and other["loaded_rows"] == 500
    assert ids_in(doris, "dup") == sorted(list(range(500)) * 2)
    # The same data twice in one DataFrame is two writes, not one deduplicated by label.
    twice = frame(10, start=1000).concat(frame(10, start=1000))
    summary(
        write_doris(
            twice,
            connection=conn(doris),
            table=DorisTable("w", "dup"),
            idempotence_key="run-43",
            atomic=False,
        )
    )
    assert query(doris, "SELECT count(*) FROM dup WHERE id >= 1000")[0][0] == 20
    query(doris, "TRUNCATE TABLE dup")


def ids_in(ports, table):
    return sorted(r[0] for r in query(ports, f"SELECT id FROM {table}"))


def test_a_rerun_with_the_key_after_a_partitioning_change_writes_nothing(doris):
    # The same 400 rows, first as one micropartition, then as two: one commit per key.
    data = frame(400)
    first = summary(
        write_doris(
            data,
            connection=conn(doris),
            table=DorisTable("w", "dup"),
            idempotence_key="k-part",
            batch_rows=64,
        )
    )
    assert first["status"] == "success" and first["loaded_rows"] == 400
    halves = frame(200).concat(frame(200, start=200))
    again = summary(
        write_doris(halves, connection=conn(doris), table=DorisTable("w", "dup"), idempotence_key="k-part")
    )
    assert again["status"] == "already_committed" and again["loaded_rows"] == 0
    assert again["uploaded_bytes"] == 0
    assert ids_in(doris, "dup") == list(range(400))
    # A new key is a new commit: a second copy.
    summary(
        write_doris(halves, connection=conn(doris), table=DorisTable("w", "dup"), idempotence_key="k-part-2")
    )
    assert ids_in(doris, "dup") == sorted(list(range(400)) * 2)
    # No staging table is left behind.
    assert not [t for (t,) in query(doris, "SHOW TABLES") if t.startswith("__dd_stage_")]
    query(doris, "TRUNCATE TABLE dup")


def test_a_checkpoint_idempotent_commit_selects_the_atomic_mode(doris, tmp_path):
    commit = daft.IdempotentCommit(store=daft.CheckpointStore(str(tmp_path)), idempotence_key="ck-1")
    for _ in range(2):
        write_doris(frame(30), connection=conn(doris), table=DorisTable("w", "dup"), checkpoint=commit)
    assert ids_in(doris, "dup") == list(range(30))
    with pytest.raises(ConfigurationError, match="different keys"):
        write_doris(
            frame(1),
            connection=conn(doris),
            table=DorisTable("w", "dup"),
            checkpoint=commit,
            idempotence_key="other",
        )
    query(doris, "TRUNCATE TABLE dup")


def test_a_failed_atomic_write_changes_nothing_and_its_rerun_writes_every_row_once(doris):
    # The second micropartition breaks the NOT NULL rule after the first was staged: the
    # target must not change; the rerun with fixed data and the same key writes all rows.
    good = frame(50)
    bad = frame(5, start=50).with_column("id", daft.lit(None).cast(daft.DataType.int64()))
    with pytest.raises(DorisTableCompatibilityError):
        write_doris(
            good.concat(bad), connection=conn(doris), table=DorisTable("w", "dup"), idempotence_key="k-fail"
        )
    assert query(doris, "SELECT count(*) FROM dup")[0][0] == 0
    write_doris(
        good.concat(frame(5, start=50)),
        connection=conn(doris),
        table=DorisTable("w", "dup"),
        idempotence_key="k-fail",
    )
    assert ids_in(doris, "dup") == list(range(55))
    assert not [t for (t,) in query(doris, "SHOW TABLES") if t.startswith("__dd_stage_")]
    query(doris, "TRUNCATE TABLE dup")


def test_atomic_upsert_on_a_unique_table_and_unsupported_operations(doris):
    table = DorisTable("w", "uniq")
    rows = daft.from_pydict({"id": [1, 2, 3], "name": ["a", "b", "c"], "score": [1, 2, 3]})
    write_doris(rows, connection=conn(doris), table=table, operation="upsert", idempotence_key="u-1")
    changed = daft.from_pydict({"id": [2, 4], "name": ["B", "d"], "score": [20, 4]})
    write_doris(changed, connection=conn(doris), table=table, operation="upsert", idempotence_key="u-2")
    write_doris(changed, connection=conn(doris), table=table, operation="upsert", idempotence_key="u-2")
    got = sorted(query(doris, "SELECT id, name, score FROM uniq"))
    assert got == [(1, "a", 1), (2, "B", 20), (3, "c", 3), (4, "d", 4)]
    with pytest.raises(ConfigurationError, match="atomic writes support"):
        write_doris(changed, connection=conn(doris), table=table, operation="delete", atomic=True)
    query(doris, "TRUNCATE TABLE uniq")


def test_an_overwrite_replaces_the_table_in_one_labelled_transaction(doris):
    """write_mode="overwrite": staged, then one INSERT OVERWRITE … WITH LABEL; a rerun of
    the key is a no-op even after other writes (it does not overwrite them again); an empty
    overwrite empties the table; the mode needs operation="load" and the atomic mode."""
    table = DorisTable("w", "dup")
    write_doris(frame(30), connection=conn(doris), table=table)
    first = summary(
        write_doris(
            frame(5, 500), connection=conn(doris), table=table, write_mode="overwrite", idempotence_key="ow-1"
        )
    )
    assert first["status"] == "success" and first["loaded_rows"] == 5
    assert sorted(r[0] for r in query(doris, "SELECT id FROM dup")) == list(range(500, 505))
    write_doris(frame(2, 900), connection=conn(doris), table=table)
    again = frame(2, 500).concat(frame(3, 502))
    rerun = summary(
        write_doris(
            again, connection=conn(doris), table=table, write_mode="overwrite", idempotence_key="ow-1"
        )
    )
    assert rerun["status"] == "already_committed"
    assert sorted(r[0] for r in query(doris, "SELECT id FROM dup")) == [*range(500, 505), 900, 901]
    empty = frame(1).where(daft.col("id") < 0)
    write_doris(empty, connection=conn(doris), table=table, write_mode="overwrite")
    assert query(doris, "SELECT count(*) FROM dup")[0][0] == 0
    assert not query(doris, "SHOW TABLES LIKE '__dd_stage%'")
    with pytest.raises(ConfigurationError, match="overwrite"):
        write_doris(frame(1), connection=conn(doris), table=table, write_mode="overwrite", atomic=False)
    with pytest.raises(ConfigurationError, match="overwrite"):
        write_doris(
            frame(1),
            connection=conn(doris),
            table=DorisTable("w", "uniq"),
            write_mode="overwrite",
            operation="upsert",
        )
    refusal = "write_mode must be one of 'append', 'overwrite'"
    with pytest.raises(ConfigurationError, match=refusal) as refused:
        write_doris(frame(1), connection=conn(doris), table=table, write_mode="replace")
    assert "replace" not in str(refused.value)


def test_an_atomic_partial_update_changes_only_its_columns_once_per_key(doris):
    """operation="partial_update" in the atomic mode: staged as a plain load of the given
    columns, published by one labelled INSERT with enable_unique_key_partial_update, so only
    those columns change (a new key is inserted with the others NULL); a rerun of the key after
    a partitioning change loads nothing."""
    table = DorisTable("w", "uniq")
    base = daft.from_pydict({"id": [1, 2, 3], "name": ["a", "b", "c"], "score": [10, 20, 30]})
    write_doris(base, connection=conn(doris), table=table, operation="upsert")
    change = daft.from_pydict({"id": [2, 3, 5], "score": [21, 31, 51]})
    first = summary(
        write_doris(
            change, connection=conn(doris), table=table, operation="partial_update", idempotence_key="p-1"
        )
    )
    assert first["status"] == "success" and first["loaded_rows"] == 3
    expected = [(1, "a", 10), (2, "b", 21), (3, "c", 31), (5, None, 51)]
    assert sorted(query(doris, "SELECT id, name, score FROM uniq")) == expected
    # The same key after a change of partitioning (and of the values): nothing is applied.
    again = daft.from_pydict({"id": [2], "score": [99]}).concat(
        daft.from_pydict({"id": [3, 5], "score": [98, 97]})
    )
    rerun = summary(
        write_doris(
            again, connection=conn(doris), table=table, operation="partial_update", idempotence_key="p-1"
        )
    )
    assert rerun["status"] == "already_committed"
    assert sorted(query(doris, "SELECT id, name, score FROM uniq")) == expected
    assert not query(doris, "SHOW TABLES LIKE '__dd_stage%'")
    query(doris, "TRUNCATE TABLE uniq")


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
    with pytest.raises(DorisTableCompatibilityError, match="NOT NULL"):
        write_doris(nulls, connection=conn(doris), table=table)
    assert query(doris, "SELECT count(*) FROM dup")[0][0] == 0


def test_two_phase_commit_makes_rows_visible_at_the_end(doris):
    result = summary(
        write_doris(
            frame(50),
            connection=conn(doris),
            table=DorisTable("w", "dup"),
            two_phase_commit=True,
            batch_rows=20,
        )
    )
    assert result["status"] == "success" and result["loaded_rows"] == 50
    assert query(doris, "SELECT count(*) FROM dup")[0][0] == 50
    query(doris, "TRUNCATE TABLE dup")


def test_two_phase_commit_aborts_every_load_when_the_write_fails(doris):
    # The first micropartition pre-commits; the second fails its value check: the first's
    # load must be aborted (not merely invisible: PRECOMMITTED would commit on a retry).
    good = frame(5)
    bad = frame(5, start=100).with_column("name", daft.lit("far too long for eight"))
    with pytest.raises(DorisTableCompatibilityError):
        write_doris(
            good.concat(bad),
            connection=conn(doris),
            table=DorisTable("w", "dup"),
            two_phase_commit=True,
            label_prefix="tpc-abort",
        )
    assert query(doris, "SELECT count(*) FROM dup")[0][0] == 0
    ours = {
        label: state for label, state in txn_states(doris, "dup").items() if label.startswith("tpc-abort")
    }
    assert set(ours.values()) <= {"ABORTED"}, ours
    assert "PRECOMMITTED" not in txn_states(doris, "dup").values()
    # Nothing stays pre-committed: a new write of the same rows is the only data.
    write_doris(good, connection=conn(doris), table=DorisTable("w", "dup"), two_phase_commit=True)
    assert query(doris, "SELECT count(*) FROM dup")[0][0] == 5
    query(doris, "TRUNCATE TABLE dup")


def txn_states(ports, table):
    """The emulator's transactions of `w.<table>`: label -> state."""
    url = f"http://127.0.0.1:{ports['fe_http_port']}/_emulator/txns/w"
    with urllib.request.urlopen(url, timeout=10) as response:
        txns = json.load(response)["txns"]
    return {t["label"]: t["state"] for t in txns if t["table"] == table}


def test_a_failing_load_aborts_the_loads_it_follows_in_the_same_micropartition(doris):
    # One micropartition, loads of two rows: [0, 1] and [2, 3] pre-commit, then [5000, 4]
    # is refused by Doris (no partition holds 5000, strict mode). The two pre-committed
    # loads must be aborted, not left PRECOMMITTED for an hour.
    ids = [0, 1, 2, 3, 5000, 4]
    data = daft.from_pydict({"id": ids, "name": [f"n{i}" for i in ids]})
    with pytest.raises(DorisWriteError, match="2 pre-committed load"):
        write_doris(
            data,
            connection=conn(doris),
            table=DorisTable("w", "part"),
            two_phase_commit=True,
            batch_rows=2,
            label_prefix="abort3",
        )
    states = txn_states(doris, "part")
    ours = {label: state for label, state in states.items() if label.startswith("abort3")}
    # The two pre-committed loads, and the refused one if Doris had begun its transaction.
    assert set(ours.values()) == {"ABORTED"} and len(ours) >= 2, ours
    assert "PRECOMMITTED" not in states.values()
    assert query(doris, "SELECT count(*) FROM part")[0][0] == 0


@pytest.mark.parametrize("mode", ["two_phase", "atomic"])
def test_an_interrupt_before_the_commit_leaves_nothing_behind(doris, monkeypatch, mode):
    """A KeyboardInterrupt (any BaseException, not only the connector's errors) once every
    load is done and before the commit: a two-phase write's pre-committed loads are
    aborted, an atomic write's staging table is dropped, the table is unchanged; the same
    write rerun then commits its rows once."""

    def interrupted(self, results):
        raise KeyboardInterrupt

    if mode == "two_phase":
        settings = {"two_phase_commit": True, "label_prefix": "ctrl-c"}
    else:
        settings = {"idempotence_key": "ctrl-c"}
    monkeypatch.setattr(DorisDataSink, "finalize", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_doris(frame(20), connection=conn(doris), table=DorisTable("w", "dup"), batch_rows=5, **settings)
    assert query(doris, "SELECT count(*) FROM dup")[0][0] == 0
    states = txn_states(doris, "dup")
    assert "PRECOMMITTED" not in states.values(), states
    if mode == "two_phase":
        ours = {label: state for label, state in states.items() if label.startswith("ctrl-c")}
        assert len(ours) >= 4 and set(ours.values()) == {"ABORTED"}, ours
    assert not query(doris, "SHOW TABLES LIKE '__dd_stage%'")
    monkeypatch.undo()
    done = summary(
        write_doris(frame(20), connection=conn(doris), table=DorisTable("w", "dup"), batch_rows=5, **settings)
    )
    assert done["status"] == "success" and done["loaded_rows"] == 20, done
    assert sorted(r[0] for r in query(doris, "SELECT id FROM dup")) == list(range(20))
    query(doris, "TRUNCATE TABLE dup")


def test_a_staging_table_left_after_the_commit_is_named_in_a_warning(doris, monkeypatch):
    """The publish committed but the staging table could not be dropped (here the DROP
    privilege is revoked mid-write): the write succeeds, a warning names the table, and
    cleanup_staging removes it."""
    query(doris, "CREATE USER 'dropper'@'%' IDENTIFIED BY 'dr0pper-pw'")
    query(doris, "GRANT SELECT_PRIV, LOAD_PRIV, CREATE_PRIV, DROP_PRIV ON w.* TO 'dropper'@'%'")
    finalize = DorisDataSink.finalize

    def revoke_then_finalize(self, results):
        query(doris, "REVOKE DROP_PRIV ON w.* FROM 'dropper'@'%'")
        return finalize(self, results)

    monkeypatch.setattr(DorisDataSink, "finalize", revoke_then_finalize)
    dropper = conn(doris, username="dropper", password="dr0pper-pw")
    with pytest.warns(UserWarning, match="could not be dropped") as caught:
        done = summary(
            write_doris(
                frame(7), connection=dropper, table=DorisTable("w", "dup"), idempotence_key="undroppable"
            )
        )
    assert done["status"] == "success" and done["loaded_rows"] == 7, done
    assert query(doris, "SELECT count(*) FROM dup")[0][0] == 7
    named = re.findall(r"__dd_stage\w+", str(caught[0].message))
    assert [r[0] for r in query(doris, "SHOW TABLES LIKE '__dd_stage%'")] == named and len(named) == 1
    assert cleanup_staging(conn(doris), "w", older_than_seconds=0) == named
    assert not query(doris, "SHOW TABLES LIKE '__dd_stage%'")
    query(doris, "TRUNCATE TABLE dup")


def test_a_settlement_stopped_part_way_lists_each_load_and_chains_its_cause(doris, monkeypatch):
    """A two-phase commit whose first transaction cannot be committed (here an unknown id
    put first): the rest are aborted, and DorisPartialCommitError lists them as attributes
    with the failure that stopped it as __cause__."""
    from daft_doris import DorisPartialCommitError

    settle = DorisDataSink.settle

    def with_an_unknown_transaction_first(self, commit):
        self._precommitted.insert(0, (987_654_321, None))
        return settle(self, commit)

    monkeypatch.setattr(DorisDataSink, "settle", with_an_unknown_transaction_first)
    with pytest.raises(DorisPartialCommitError) as info:
        write_doris(
            frame(6),
            connection=conn(doris),
            table=DorisTable("w", "dup"),
            two_phase_commit=True,
            batch_rows=3,
        )
    error = info.value
    assert error.committed == [] and len(error.aborted) >= 2, (error.committed, error.aborted, error.left)
    assert all(entry.startswith(("transaction [", "label [")) for entry in error.aborted + error.left)
    cause = error.__cause__
    assert isinstance(cause, DorisWriteError) and cause.status, repr(cause)
    assert str(cause) not in str(error), "the cause is chained, not repeated in the message"
    assert query(doris, "SELECT count(*) FROM dup")[0][0] == 0
    assert "PRECOMMITTED" not in txn_states(doris, "dup").values()


def test_credentials_errors_are_typed_and_redacted(doris, monkeypatch):
    with pytest.raises(AuthenticationError) as info:
        write_doris(
            frame(1),
            connection=conn(doris, username="writer", password="bad-pw-123"),
            table=DorisTable("w", "dup"),
        )
    assert "bad-pw-123" not in str(info.value)
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
        ({"label_prefix": 7}, "label_prefix"),
        ({"idempotence_key": 7}, "idempotence_key"),
        ({"load_properties": {"timeout": 5}}, "load_properties values must be strings"),
        (
            {"idempotence_key": "k", "two_phase_commit": True, "atomic": True},
            "two_phase_commit does not apply",
        ),
        ({"atomic": True, "operation": "delete"}, "atomic writes support"),
    ],
)
def test_bad_write_options_fail_before_any_network_io(kwargs, message):
    connection = DorisConnection(host="127.0.0.1", http_port=1, mysql_port=1)
    with pytest.raises(ConfigurationError, match=message):
        write_doris(frame(1), connection=connection, table=DorisTable("w", "dup"), **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"host": "http://fe"}, "bare host name"),
        ({"host": "fe:8030"}, "must not contain a port"),
        ({"host": ""}, "host must be a non-empty string"),
        ({"username": ""}, "username must be a non-empty string"),
        ({"http_port": 0}, "http_port must be an integer from 1 to 65535"),
        ({"mysql_port": "9030"}, "mysql_port"),
        ({"http_secure": 1}, "http_secure must be a bool"),
        ({"verify_tls": False}, "TLS is always verified"),
        ({"request_timeout_seconds": -1}, "request_timeout_seconds must be more than 0"),
        ({"request_timeout_seconds": "5"}, "request_timeout_seconds must be a number"),
        ({"redirect_hosts": ("be/1",)}, "bare host name"),
        ({"redirect_hosts": "be1"}, "redirect_hosts must be a list or tuple"),
        ({"redirect_ports": (70000,)}, "redirect_ports must be an integer from 1 to 65535"),
        ({"redirect_policy": "nearest"}, "redirect_policy must be one of 'direct', 'random-be'"),
        ({"redirect_policy": 1}, "redirect_policy must be one of"),
        ({"mysql_ssl_mode": "strict"}, "ssl_mode must be one of"),
    ],
)
def test_bad_connection_settings_fail_when_the_connection_is_made(kwargs, message):
    with pytest.raises(ConfigurationError, match=message):
        DorisConnection(**{"host": "fe", **kwargs})


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


def test_sink_pickles_and_redacts_its_password():
    sink = DorisDataSink(
        DorisConnection(host="fe", password="pl41n-secret"),
        DorisTable("w", "dup"),
        DorisWriteOptions(operation="partial_update"),
    )
    assert "pl41n-secret" not in repr(sink)
    copy = pickle.loads(pickle.dumps(sink))
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
    same WriteTarget (columns and value rules) and applies its rules before any upload."""
    from daft.recordbatch import MicroPartition

    sink = DorisDataSink(conn(doris), DorisTable("w", "carried"))
    data = pa.table({"id": pa.array([1, 2], pa.int32()), "name": pa.array(["ok", "x" * 9])})
    sink.bind_schema(data.schema)
    sink.start()
    worker = pickle.loads(pickle.dumps(sink))
    assert worker._target.columns == ["id", "name"]
    assert worker._target.__reduce__()[1] == sink._target.__reduce__()[1]
    assert worker._target.__reduce__()[1][1], "the value rules travelled"
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
    with pytest.raises(Exception, match="nope is not in the table"):
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


def test_an_atomic_write_checks_every_privilege_before_the_first_byte(doris):
    """DROP and CREATE in the database, LOAD on the target and SELECT in the database are
    each checked before anything is loaded; a missing one raises DorisWritePermissionError
    naming it, the table is unchanged and no staging table is left."""
    from daft_doris import DorisWritePermissionError

    query(doris, "CREATE USER 'stager'@'%' IDENTIFIED BY 'st4ger-pw'")
    stager = conn(doris, username="stager", password="st4ger-pw")
    # The commit ledger exists (root made it); the key is looked up there first.
    write_doris(
        frame(1, 8000).select("id", "name"),
        connection=conn(doris),
        table=DorisTable("w", "carried"),
        atomic=True,
    )
    before = query(doris, "SELECT count(*) FROM dup")[0][0]

    def attempt(needed):
        with pytest.raises(DorisWritePermissionError, match=needed) as raised:
            write_doris(frame(5, 9000), connection=stager, table=DorisTable("w", "dup"), atomic=True)
        assert "st4ger-pw" not in str(raised.value)
        assert query(doris, "SELECT count(*) FROM dup")[0][0] == before
        assert not query(doris, "SHOW TABLES LIKE '__dd_stage%'")

    # Any privilege on the table lets the writer read its metadata (SHOW CREATE TABLE).
    query(doris, "GRANT ALTER_PRIV ON w.dup TO 'stager'@'%'")
    attempt("SELECT on the commit ledger")
    query(doris, "GRANT SELECT_PRIV ON w.__daft_doris_commits TO 'stager'@'%'")
    attempt(r"\(DROP\) privilege")
    query(doris, "GRANT DROP_PRIV ON w.* TO 'stager'@'%'")
    attempt(r"\(CREATE\) privilege")
    query(doris, "GRANT CREATE_PRIV ON w.* TO 'stager'@'%'")
    attempt(r"\(LOAD\) privilege")
    query(doris, "GRANT LOAD_PRIV ON w.* TO 'stager'@'%'")
    attempt(r"SELECT command denied|\(SELECT\) privilege")
    query(doris, "GRANT SELECT_PRIV ON w.* TO 'stager'@'%'")
    done = write_doris(frame(5, 9000), connection=stager, table=DorisTable("w", "dup"), atomic=True)
    assert summary(done)["loaded_rows"] == 5
    assert query(doris, "SELECT count(*) FROM dup")[0][0] == before + 5


def test_a_rerun_after_doris_forgot_the_label_writes_nothing():
    """Doris forgets finished labels beyond label_num_threshold (and after
    label_keep_max_second): the key's record in the commit ledger, written in the same
    transaction as the rows, keeps the rerun a no-op; without the ledger the rerun writes
    the rows again, which is the window the label alone gives."""
    init = INIT.split("CREATE USER")[0]
    with run_emulator(init, extra_args=("--label-num-threshold", "3")) as ports:
        connection = DorisConnection(
            host=ports["host"], http_port=ports["fe_http_port"], mysql_port=ports["query_port"]
        )
        table = DorisTable("w", "dup")

        def sql(statement):
            c = pymysql.connect(host="127.0.0.1", port=ports["query_port"], user="root", database="w")
            with c, c.cursor() as cur:
                cur.execute(statement)
                return cur.fetchall()

        def label_known(label):
            return bool(sql(f"SHOW TRANSACTION FROM w WHERE LABEL = '{label}'"))

        def forget():
            for i in range(10):
                sql(f"INSERT INTO carried VALUES ({i}, 'noise')")

        for ledger, second_copy in (("__daft_doris_commits", False), (None, True)):
            sql("TRUNCATE TABLE dup")
            key = f"job-42-{'ledger' if ledger else 'label'}"
            first = summary(
                write_doris(
                    frame(100), connection=connection, table=table, idempotence_key=key, commit_ledger=ledger
                )
            )
            assert first["status"] == "success" and first["loaded_rows"] == 100
            forget()
            assert not label_known(f"daft_doris_{key}"), "Doris forgot the key's label"
            again = summary(
                write_doris(
                    frame(100), connection=connection, table=table, idempotence_key=key, commit_ledger=ledger
                )
            )
            if second_copy:
                assert again["status"] == "success", again
                assert sorted(r[0] for r in sql("SELECT id FROM dup")) == sorted(list(range(100)) * 2)
            else:
                assert again["status"] == "already_committed" and again["uploaded_bytes"] == 0
                assert sorted(r[0] for r in sql("SELECT id FROM dup")) == list(range(100))
        records = sql("SELECT key_label, target_table, row_count FROM __daft_doris_commits")
        assert records == (("daft_doris_job-42-ledger", "dup", 100),), records


def test_cleanup_commit_ledger_deletes_only_records_older_than_the_age(doris):
    """Old records go, recent ones stay (their keys still rerun as no-ops)."""
    from daft_doris import cleanup_commit_ledger

    table = DorisTable("w", "carried")
    rows = frame(2, 7700).select("id", "name")
    write_doris(rows, connection=conn(doris), table=table, idempotence_key="kept-key")
    query(
        doris,
        "INSERT INTO __daft_doris_commits VALUES ('daft_doris_ancient', 'carried', 5, '2020-01-01 00:00:00')",
    )
    assert cleanup_commit_ledger(conn(doris), "w", older_than_seconds=86_400) == 1
    labels = {r[0] for r in query(doris, "SELECT key_label FROM __daft_doris_commits")}
    assert "daft_doris_ancient" not in labels and "daft_doris_kept-key" in labels
    again = summary(write_doris(rows, connection=conn(doris), table=table, idempotence_key="kept-key"))
    assert again["status"] == "already_committed"
    assert cleanup_commit_ledger(conn(doris), "w", older_than_seconds=86_400) == 0


def test_cleanup_staging_drops_only_staging_tables_older_than_the_age(doris):
    import time

    from daft_doris import cleanup_staging

    now = int(time.time())
    old = f"__dd_stage_{0x1234:016x}_{now - 2 * 86_400:x}_{7:08x}"
    fresh = f"__dd_stage_{0x1234:016x}_{now:x}_{8:08x}"
    # Looks like a staging name but is not one of ours: never touched.
    foreign = "__dd_stage_not_ours"
    for name in (old, fresh, foreign):
        query(
            doris,
            f"CREATE TABLE `{name}` (`id` INT NOT NULL) DUPLICATE KEY(`id`) "
            "DISTRIBUTED BY HASH(`id`) BUCKETS 1",
        )

    def tables():
        return {t for (t,) in query(doris, "SHOW TABLES")}

    assert cleanup_staging(conn(doris), "w", older_than_seconds=86_400) == [old]
    assert fresh in tables() and foreign in tables() and old not in tables()
    assert cleanup_staging(conn(doris), "w", older_than_seconds=0) == [fresh]
    assert foreign in tables() and "dup" in tables()
    query(doris, f"DROP TABLE `{foreign}`")


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


def test_a_delete_rerun_with_its_key_in_another_partitioning_leaves_the_same_table(doris):
    # Deletes are not staged (no atomic mode): with a key they use per-load labels, and a
    # delete by key is idempotent in effect, so a rerun after any partitioning change or a
    # failure part-way leaves the same table (docs/consistency.md, "What holds for delete").
    table = DorisTable("w", "uniq")
    query(doris, "TRUNCATE TABLE uniq")
    rows = daft.from_pydict({"id": list(range(100, 140)), "name": ["x"] * 40, "score": list(range(40))})
    write_doris(rows, connection=conn(doris), table=table, operation="upsert")
    keys = daft.from_pydict({"id": list(range(100, 120))})
    first = summary(
        write_doris(keys, connection=conn(doris), table=table, operation="delete", idempotence_key="del-1")
    )
    assert first["status"] == "success"
    halves = daft.from_pydict({"id": list(range(100, 110))}).concat(
        daft.from_pydict({"id": list(range(110, 120))})
    )
    write_doris(halves, connection=conn(doris), table=table, operation="delete", idempotence_key="del-1")
    assert ids_in(doris, "uniq") == list(range(120, 140))
    with pytest.raises(ConfigurationError, match="delete"):
        write_doris(keys, connection=conn(doris), table=table, operation="delete", atomic=True)
    query(doris, "TRUNCATE TABLE uniq")
