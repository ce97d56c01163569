"""write_doris's exactly-once side against the emulator: per-load labels, the
idempotence key across partitionings and forgotten labels, atomic writes (upsert,
overwrite, partial update, privileges checked first), two-phase commit, interrupts and
settlement, and the clean-up of ledgers and staging tables."""

import base64
import json
import re
import urllib.request

import daft
import pymysql
import pytest
from conftest import ROOT_PASSWORD, key_label, label_shown, run_emulator
from daft_doris import (
    ConfigurationError,
    DorisConnection,
    DorisDataSink,
    DorisTable,
    DorisTableCompatibilityError,
    DorisWriteError,
    cleanup_staging,
    write_doris,
)
from write_setup import INIT, conn, frame, ids_in, query, summary


@pytest.fixture(scope="module")
def doris():
    with run_emulator(INIT, root_password=ROOT_PASSWORD) as ports:
        yield ports


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
    assert not [t for (t,) in query(doris, "SHOW TABLES") if t.startswith("daft_doris_stage_")]
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


def test_the_write_is_one_native_object_that_pickles_with_its_state(doris):
    """The sink's write is one native object (`_native.WriteRun` over
    `doris_write::WriteRun`), not string-keyed dicts: started, it pickles, as the sink does
    to Ray workers, with its state (the atomic run's key and staging table, or how the key
    committed before); a state that does not parse is refused."""
    import pickle

    from daft_doris import DorisWriteOptions, SecretRef, _native

    def started(key):
        # Sent with the tasks by choice: a plain-string password would not pickle.
        connection = conn(doris, password=SecretRef.inline(ROOT_PASSWORD))
        options = DorisWriteOptions(idempotence_key=key, atomic=True)
        sink = DorisDataSink(connection, DorisTable("w", "dup"), options)
        sink.start()
        return sink

    sink = started("pickled-1")
    key, stage = sink._run.state["atomic"]
    staged = [r[0] for r in query(doris, "SHOW TABLES LIKE 'daft_doris_stage%'")]
    assert (key, stage) == ("pickled-1", {"staging": staged[0]}) and len(staged) == 1
    worker = pickle.loads(pickle.dumps(sink))
    assert worker._run.state == sink._run.state and worker._run.mode == "atomic"
    assert not worker._run.committed_before
    sink.abort()
    assert not query(doris, "SHOW TABLES LIKE 'daft_doris_stage%'")

    write_doris(frame(3), connection=conn(doris), table=DorisTable("w", "dup"), idempotence_key="pickled-2")
    again = pickle.loads(pickle.dumps(started("pickled-2")))
    assert again._run.state["atomic"][1] == {"committed": "label"} and again._run.committed_before
    assert not query(doris, "SHOW TABLES LIKE 'daft_doris_stage%'")
    with pytest.raises(ConfigurationError, match="invalid write state: not the expected structure"):
        _native.WriteRun(conn(doris), "w", "dup", {}, {"atomic": ["k", "guess"]})
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
    assert not [t for (t,) in query(doris, "SHOW TABLES") if t.startswith("daft_doris_stage_")]
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
    assert not query(doris, "SHOW TABLES LIKE 'daft_doris_stage%'")
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
    assert not query(doris, "SHOW TABLES LIKE 'daft_doris_stage%'")
    query(doris, "TRUNCATE TABLE uniq")


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
    # At least one load was pre-committed (else nothing was tried), and every one aborted.
    assert ours and set(ours.values()) == {"ABORTED"}, ours
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
    assert not query(doris, "SHOW TABLES LIKE 'daft_doris_stage%'")
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
    named = re.findall(r"daft_doris_stage\w+", str(caught[0].message))
    assert [r[0] for r in query(doris, "SHOW TABLES LIKE 'daft_doris_stage%'")] == named and len(named) == 1
    assert cleanup_staging(conn(doris), "w", older_than_seconds=0) == named
    assert not query(doris, "SHOW TABLES LIKE 'daft_doris_stage%'")
    query(doris, "TRUNCATE TABLE dup")


def test_a_settlement_stopped_part_way_lists_each_load_and_chains_its_cause(doris, monkeypatch):
    """A two-phase commit whose first transaction cannot be committed (another client
    aborted it between the tasks' pre-commits and the commit): the rest are aborted, and
    DorisPartialCommitError lists them as attributes with the failure that stopped it as
    __cause__."""
    from daft_doris import DorisPartialCommitError

    finalize = DorisDataSink.finalize

    def with_the_first_transaction_aborted_elsewhere(self, write_results):
        (first, *_) = write_results[0].result["precommitted"]
        # Straight to the BE (the FE would redirect a PUT there).
        request = urllib.request.Request(
            f"http://127.0.0.1:{doris['be_http_port']}/api/w/_stream_load_2pc",
            method="PUT",
            headers={
                "txn_id": str(first["Id"]),
                "txn_operation": "abort",
                "Authorization": "Basic " + base64.b64encode(f"root:{ROOT_PASSWORD}".encode()).decode(),
            },
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert json.load(answer)["status"] == "Success"
        return finalize(self, write_results)

    monkeypatch.setattr(DorisDataSink, "finalize", with_the_first_transaction_aborted_elsewhere)
    with pytest.raises(DorisPartialCommitError) as info:
        write_doris(
            frame(6),
            connection=conn(doris),
            table=DorisTable("w", "dup"),
            two_phase_commit=True,
            batch_rows=3,
        )
    error = info.value
    assert error.committed == [] and len(error.aborted) >= 1, (error.committed, error.aborted, error.left)
    assert all(entry.startswith(("transaction [", "label [")) for entry in error.aborted + error.left)
    cause = error.__cause__
    assert isinstance(cause, DorisWriteError) and cause.status, repr(cause)
    assert str(cause) not in str(error), "the cause is chained, not repeated in the message"
    assert query(doris, "SELECT count(*) FROM dup")[0][0] == 0
    assert "PRECOMMITTED" not in txn_states(doris, "dup").values()


def test_an_atomic_write_checks_every_privilege_before_the_first_byte(doris):
    """SELECT on the ledger, LOAD on the database (SHOW TRANSACTION, Doris 3.1+), DROP and
    CREATE in the database and SELECT in the database are each checked before anything is
    loaded; a missing one raises DorisWritePermissionError
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
        assert not query(doris, "SHOW TABLES LIKE 'daft_doris_stage%'")

    # Any privilege on the table lets the writer read its metadata (SHOW CREATE TABLE).
    query(doris, "GRANT ALTER_PRIV ON w.dup TO 'stager'@'%'")
    attempt("SELECT on the commit ledger")
    query(doris, "GRANT SELECT_PRIV ON w.daft_doris_commits TO 'stager'@'%'")
    # The key's label is looked up with SHOW TRANSACTION: LOAD on the database from 3.1.
    attempt(r"LOAD on the database \(SHOW TRANSACTION\)")
    query(doris, "GRANT LOAD_PRIV ON w.* TO 'stager'@'%'")
    attempt(r"\(DROP\) privilege")
    query(doris, "GRANT DROP_PRIV ON w.* TO 'stager'@'%'")
    attempt(r"\(CREATE\) privilege")
    query(doris, "GRANT CREATE_PRIV ON w.* TO 'stager'@'%'")
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
            return label_shown(sql, "w", label)

        def forget():
            for i in range(10):
                sql(f"INSERT INTO carried VALUES ({i}, 'noise')")

        for ledger, second_copy in (("daft_doris_commits", False), (None, True)):
            sql("TRUNCATE TABLE dup")
            key = f"job-42-{'ledger' if ledger else 'label'}"
            first = summary(
                write_doris(
                    frame(100), connection=connection, table=table, idempotence_key=key, commit_ledger=ledger
                )
            )
            assert first["status"] == "success" and first["loaded_rows"] == 100
            forget()
            assert not label_known(key_label(key)), "Doris forgot the key's label"
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
        records = sql("SELECT key_label, target_table, row_count FROM daft_doris_commits")
        assert records == ((key_label("job-42-ledger"), "dup", 100),), records


def test_cleanup_commit_ledger_deletes_only_records_older_than_the_age(doris):
    """Old records go, recent ones stay (their keys still rerun as no-ops)."""
    from daft_doris import cleanup_commit_ledger

    table = DorisTable("w", "carried")
    rows = frame(2, 7700).select("id", "name")
    write_doris(rows, connection=conn(doris), table=table, idempotence_key="kept-key")
    query(
        doris,
        "INSERT INTO daft_doris_commits VALUES ('daft_doris_ancient', 'carried', 5, '2020-01-01 00:00:00')",
    )
    assert cleanup_commit_ledger(conn(doris), "w", older_than_seconds=86_400) == 1
    labels = {r[0] for r in query(doris, "SELECT key_label FROM daft_doris_commits")}
    assert "daft_doris_ancient" not in labels and key_label("kept-key") in labels
    again = summary(write_doris(rows, connection=conn(doris), table=table, idempotence_key="kept-key"))
    assert again["status"] == "already_committed"
    assert cleanup_commit_ledger(conn(doris), "w", older_than_seconds=86_400) == 0


def test_cleanup_staging_drops_only_staging_tables_older_than_the_age(doris):
    import time

    from daft_doris import cleanup_staging

    now = int(time.time())
    old = f"daft_doris_stage_{0x1234:016x}_{now - 2 * 86_400:x}_{7:08x}"
    fresh = f"daft_doris_stage_{0x1234:016x}_{now:x}_{8:08x}"
    # Looks like a staging name but is not one of ours: never touched.
    foreign = "daft_doris_stage_not_ours"
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
