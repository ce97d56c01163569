"""Generated cases that try to break the atomic mode's promise (docs/consistency.md).

Each case draws a multiset of rows, a partitioning, batch sizes, retries and a fault (the
emulator's Stream Load faults, a lost answer to the publishing INSERT, a Publish Timeout
that makes staged rows visible late), writes with an idempotence key, then reruns the
same key with another partitioning. The table must then hold exactly the input multiset;
a new key must add exactly one more copy. A second group kills the writing process with
SIGKILL at a random moment and reruns the key from another process.

The counts are bounded (DAFT_DORIS_EXACTLY_ONCE_CASES, DAFT_DORIS_KILL_CASES) and printed.
"""

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections import Counter

import daft
import pyarrow as pa
import pymysql
import pytest
from conftest import run_emulator
from daft_doris import DaftOlapError, DorisConnection, DorisTable, write_doris

CASES = int(os.environ.get("DAFT_DORIS_EXACTLY_ONCE_CASES", "200"))
KILL_CASES = int(os.environ.get("DAFT_DORIS_KILL_CASES", "12"))
SEED = int(os.environ.get("DAFT_DORIS_SEED", "20261201"))

INIT = """
CREATE DATABASE x;
CREATE TABLE x.t (`id` INT NOT NULL, `v` VARCHAR(16) NULL) DUPLICATE KEY(`id`)
  DISTRIBUTED BY HASH(`id`) BUCKETS 3;
CREATE TABLE x.noise (`id` INT NOT NULL) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1;
"""

# Faults that hit the staging loads (BE) or the publishing INSERT (MySQL face).
FAULTS = [
    None,
    {"kind": "reset_mid_body"},
    {"kind": "drop_after_commit"},
    {"kind": "malformed_response"},
    {"kind": "truncated_response"},
    {"kind": "publish_timeout", "visible_after_ms": 300},
    {"kind": "drop_after_insert_commit"},
    {"kind": "be_unreachable"},
    {"kind": "drop_before_txn_commit"},
    {"kind": "drop_after_txn_commit"},
    {"kind": "hold_txn_commit", "ms": 300},
]


# Label memories: Doris forgets finished labels beyond label_num_threshold per database
# (and after label_keep_max_second). With 50 the key's label is usually still known at the
# rerun; with 3 (and one second) it is usually forgotten, and only the commit ledger keeps
# the rerun a no-op. The generated cases are split between the two.
MEMORIES = {
    "labels-50": ("--label-num-threshold", "50"),
    "labels-3": ("--label-num-threshold", "3", "--label-keep-max-second", "1"),
}


@pytest.fixture(scope="module", params=sorted(MEMORIES))
def doris(request):
    with run_emulator(INIT, extra_args=MEMORIES[request.param]) as ports:
        ports["memory"] = request.param
        yield ports


def conn(ports):
    return DorisConnection(
        host=ports["host"],
        http_port=ports["fe_http_port"],
        mysql_port=ports["query_port"],
        request_timeout_seconds=20.0,
    )


def sql(ports, statement):
    c = pymysql.connect(host="127.0.0.1", port=ports["query_port"], user="root", database="x")
    with c, c.cursor() as cur:
        cur.execute(statement)
        return cur.fetchall()


def faults(ports, method, body=None):
    url = f"http://127.0.0.1:{ports['fe_http_port']}/_emulator/faults"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read()


def table_rows(ports):
    return Counter(sql(ports, "SELECT id, v FROM t"))


def frame(rows, parts, rng):
    """`rows` as a DataFrame of `parts` micropartitions, chunked at random points."""
    rows = list(rows)
    rng.shuffle(rows)
    cuts = (
        sorted(rng.sample(range(1, len(rows)), min(parts - 1, max(len(rows) - 1, 0))))
        if len(rows) > 1
        else []
    )
    pieces = [rows[a:b] for a, b in zip([0, *cuts], [*cuts, len(rows)], strict=True)] or [[]]
    schema = pa.schema([("id", pa.int64()), ("v", pa.string())])
    frames = [
        daft.from_arrow(pa.table({"id": [r[0] for r in p], "v": [r[1] for r in p]}, schema=schema))
        for p in pieces
    ]
    out = frames[0]
    for f in frames[1:]:
        out = out.concat(f)
    return out


def compare(got, want):
    """(duplicated rows, lost rows) of `got` against the multiset `want`."""
    extra = got - want
    missing = want - got
    return sum(extra.values()), sum(missing.values())


def label_known(ports, key):
    return bool(sql(ports, f"SHOW TRANSACTION FROM x WHERE LABEL = 'daft_doris_{key}'"))


def test_generated_faults_and_reruns_leave_exactly_the_input(doris, capsys):
    rng = random.Random(f"{SEED}-{doris['memory']}")
    tally = Counter()
    reasons = Counter()
    cases = CASES // len(MEMORIES)
    for case in range(cases):
        sql(doris, "TRUNCATE TABLE t")
        n = rng.choice([0, 1, rng.randint(2, 40), rng.randint(40, 400)])
        rows = Counter((rng.randint(0, 30), rng.choice([None, "a", "b", "ü"])) for _ in range(n))
        want = Counter()
        for row, count in rows.items():
            want[row] = count
        key = f"gen-{SEED}-{doris['memory']}-{case}"
        fault = rng.choice(FAULTS)
        if fault is not None:
            faults(doris, "POST", {**fault, "times": rng.randint(1, 3)})
        options = {
            "batch_rows": rng.choice([3, 17, 100, 65_536]),
            "max_retries": rng.randint(0, 3),
        }
        committed = False
        try:
            write_doris(
                frame(want.elements(), rng.randint(1, 5), rng),
                connection=conn(doris),
                table=DorisTable("x", "t"),
                idempotence_key=key,
                **options,
            ).collect()
            tally["first_write_succeeded"] += 1
            committed = bool(want)
        except (DaftOlapError, RuntimeError) as error:
            # Without a fault a write must succeed; with one it may fail, loudly, typed.
            assert fault is not None, f"case {case}: {type(error).__name__}: {error}"
            tally["first_write_failed"] += 1
            reasons[f"{fault['kind']} -> {type(error).__name__}"] += 1
        faults(doris, "DELETE")
        if doris["memory"] == "labels-3":
            # A busy database: other loads commit before the rerun.
            for i in range(4):
                sql(doris, f"INSERT INTO noise VALUES ({i})")
        if committed and not label_known(doris, key):
            # Committed, and Doris no longer knows the label: only the ledger remembers.
            tally["label_forgotten_before_rerun"] += 1
        # The rerun: same key, another partitioning and batch size.
        write_doris(
            frame(want.elements(), rng.randint(1, 5), rng),
            connection=conn(doris),
            table=DorisTable("x", "t"),
            idempotence_key=key,
            batch_rows=rng.choice([5, 64, 65_536]),
        ).collect()
        duplicated, lost = compare(table_rows(doris), want)
        tally["duplicated"] += duplicated
        tally["lost"] += lost
        if case % 10 == 0 and want:
            # A new key is a new commit: exactly one more copy.
            write_doris(
                frame(want.elements(), 2, rng),
                connection=conn(doris),
                table=DorisTable("x", "t"),
                idempotence_key=f"{key}-again",
            ).collect()
            two = Counter({row: 2 * c for row, c in want.items()})
            duplicated, lost = compare(table_rows(doris), two)
            tally["duplicated"] += duplicated
            tally["lost"] += lost
            tally["second_copies"] += 1
    leftovers = [t for (t,) in sql(doris, "SHOW TABLES") if t.startswith("__dd_stage_")]
    with capsys.disabled():
        print(
            f"\n[exactly-once] {cases} generated cases (seed {SEED}, {doris['memory']}): "
            f"{tally['first_write_failed']} first writes failed, {tally['second_copies']} second copies, "
            f"{tally['label_forgotten_before_rerun']} committed keys rerun after Doris forgot their label, "
            f"{tally['duplicated']} duplicated rows, {tally['lost']} lost rows, "
            f"{len(leftovers)} staging tables left"
        )
        for reason, count in sorted(reasons.items()):
            print(f"[exactly-once]   first write failed: {reason}: {count}")
    assert tally["duplicated"] == 0 and tally["lost"] == 0, tally
    assert not leftovers
    if doris["memory"] == "labels-3":
        # The forgetting is real: most committed keys are rerun with their label gone.
        assert tally["label_forgotten_before_rerun"] >= cases // 4, tally


WRITER = textwrap.dedent(
    """
    import json, sys
    import daft
    from daft_doris import DorisConnection, DorisTable, write_doris

    ports, key, n = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    data = daft.from_pydict({"id": list(range(n)), "v": ["k"] * n}).repartition(3)
    print("ready", flush=True)
    write_doris(data, connection=DorisConnection(host="127.0.0.1", http_port=ports["fe_http_port"],
                                                 mysql_port=ports["query_port"]),
                table=DorisTable("x", "t"), idempotence_key=key, batch_rows=20).collect()
    print("done", flush=True)
    """
)


def test_a_writer_killed_at_a_random_moment_is_completed_exactly_once_by_a_rerun(doris, capsys):
    rng = random.Random(f"{SEED + 1}-{doris['memory']}")
    tally = Counter()
    kill_cases = KILL_CASES // len(MEMORIES)
    for case in range(kill_cases):
        sql(doris, "TRUNCATE TABLE t")
        n = rng.randint(50, 300)
        key = f"kill-{SEED}-{doris['memory']}-{case}"
        # Every Stream Load waits a little, so the kill lands during the loads or the publish.
        faults(doris, "POST", {"kind": "delay", "ms": 30, "times": 10_000})
        child = subprocess.Popen(
            [sys.executable, "-c", WRITER, json.dumps(doris), key, str(n)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert child.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 1.5))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        tally["killed"] += 1
        faults(doris, "DELETE")
        write_doris(
            daft.from_pydict({"id": list(range(n)), "v": ["k"] * n}),
            connection=conn(doris),
            table=DorisTable("x", "t"),
            idempotence_key=key,
        ).collect()
        duplicated, lost = compare(table_rows(doris), Counter((i, "k") for i in range(n)))
        tally["duplicated"] += duplicated
        tally["lost"] += lost
    with capsys.disabled():
        print(
            f"\n[exactly-once] {kill_cases} writers killed by SIGKILL, then rerun ({doris['memory']}): "
            f"{tally['duplicated']} duplicated rows, {tally['lost']} lost rows"
        )
    assert tally["duplicated"] == 0 and tally["lost"] == 0, tally


PHASE_WRITER = textwrap.dedent(
    """
    import json, sys
    import daft
    from daft_doris import DorisConnection, DorisTable, write_doris

    ports, key, n, mode = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
    data = daft.from_pydict({"id": list(range(n)), "v": ["k"] * n})
    print("ready", flush=True)
    write_doris(data, connection=DorisConnection(host="127.0.0.1", http_port=ports["fe_http_port"],
                                                 mysql_port=ports["query_port"]),
                table=DorisTable("x", "t"), idempotence_key=key, batch_rows=20,
                two_phase_commit=mode == "two_phase").collect()
    print("done", flush=True)
    """
)


def fired_kinds(ports):
    return [f["kind"] for f in json.loads(faults(ports, "GET"))["fired"]]


def txns(ports):
    url = f"http://127.0.0.1:{ports['fe_http_port']}/_emulator/txns/x"
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)["txns"]


def key_label_is(state):
    return lambda ts, fired, key: any(t["label"] == f"daft_doris_{key}" and t["state"] == state for t in ts)


def fired_and(kind, state):
    """The COMMIT fault `kind` fired and the key's label is in `state`."""
    return lambda ts, fired, key: kind in fired and key_label_is(state)(ts, fired, key)


# Where a writer is killed: (the rerun's status, the write mode, a fault that slows or holds
# the writer there, the condition on the emulator's transactions and fired faults that says
# the point is reached). Never a random sleep; the test fails if a point was not reached.
KILL_POINTS = {
    "staging loads visible": (
        "success",
        "atomic",
        {"kind": "delay", "ms": 40, "times": 10_000},
        lambda ts, fired, key: (
            sum(t["table"].startswith("__dd_stage_") and t["state"] == "VISIBLE" for t in ts) >= 2
        ),
    ),
    "publish transaction begun, before COMMIT": (
        "success",
        "atomic",
        {"kind": "stall_txn_insert", "ms": 1500},
        fired_and("stall_txn_insert", "PREPARE"),
    ),
    "COMMIT received, not yet committed": (
        "already_committed",
        "atomic",
        {"kind": "slow_txn_commit", "ms": 1500},
        fired_and("slow_txn_commit", "PREPARE"),
    ),
    "publish committed, answer withheld": (
        "already_committed",
        "atomic",
        {"kind": "stall_after_txn_commit", "ms": 5000},
        fired_and("stall_after_txn_commit", "VISIBLE"),
    ),
    "two-phase loads pre-committed": (
        "success",
        "two_phase",
        {"kind": "delay", "ms": 40, "times": 10_000},
        lambda ts, fired, key: sum(t["table"] == "t" and t["state"] == "PRECOMMITTED" for t in ts) >= 2,
    ),
}


def test_writers_killed_at_chosen_points_are_completed_exactly_once_by_a_rerun(doris, capsys):
    n = 200
    report = []
    for point, (rerun_status, mode, fault, reached) in KILL_POINTS.items():
        sql(doris, "TRUNCATE TABLE t")
        key = f"point-{doris['memory']}-{len(report)}-{SEED}"
        faults(doris, "DELETE")
        faults(doris, "POST", fault)
        child = subprocess.Popen(
            [sys.executable, "-c", PHASE_WRITER, json.dumps(doris), key, str(n), mode],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert child.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 60
        while not reached(txns(doris), fired_kinds(doris), key):
            assert child.poll() is None, f"{point}: the writer ended before the point was reached"
            assert time.monotonic() < deadline, f"{point}: not reached"
            time.sleep(0.005)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        faults(doris, "DELETE")
        summary = write_doris(
            daft.from_pydict({"id": list(range(n)), "v": ["k"] * n}),
            connection=conn(doris),
            table=DorisTable("x", "t"),
            idempotence_key=key,
            batch_rows=20,
            two_phase_commit=mode == "two_phase",
        ).to_pydict()
        duplicated, lost = compare(table_rows(doris), Counter((i, "k") for i in range(n)))
        left = [t for t in txns(doris) if t["state"] in ("PRECOMMITTED", "PREPARE")]
        staging = [t for (t,) in sql(doris, "SHOW TABLES") if t.startswith("__dd_stage_")]
        report.append((point, summary["status"][0], duplicated, lost, len(left), len(staging)))
        assert (duplicated, lost, left, staging) == (0, 0, [], []), (point, summary, left, staging)
        # The rerun's status proves where the kill landed: before the COMMIT nothing
        # committed (the rerun writes), after it the key is committed (the rerun writes nothing).
        assert summary["status"][0] == rerun_status, (point, summary)
    with capsys.disabled():
        for point, status, duplicated, lost, left, staging in report:
            print(
                f"\n[exactly-once] killed at '{point}' ({doris['memory']}): rerun {status}, "
                f"{duplicated} duplicated, {lost} lost, {left} transactions left open, "
                f"{staging} staging tables left",
                end="",
            )
        print()
