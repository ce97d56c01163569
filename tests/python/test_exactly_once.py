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
from dataclasses import dataclass

import daft
import pyarrow as pa
import pymysql
import pytest
from conftest import key_label, label_shown, run_emulator
from daft_doris import DaftOlapError, DorisConnection, DorisTable, write_doris

CASES = int(os.environ.get("DAFT_DORIS_EXACTLY_ONCE_CASES", "200"))
KILL_CASES = int(os.environ.get("DAFT_DORIS_KILL_CASES", "12"))
SEED = int(os.environ.get("DAFT_DORIS_SEED", "20261201"))

INIT = """
CREATE DATABASE x;
CREATE TABLE x.t (`id` INT NOT NULL, `v` VARCHAR(16) NULL) DUPLICATE KEY(`id`)
  DISTRIBUTED BY HASH(`id`) BUCKETS 3;
CREATE TABLE x.noise (`id` INT NOT NULL) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1;
CREATE TABLE x.u (`id` INT NOT NULL, `v` VARCHAR(16) NULL, `w` INT NULL) UNIQUE KEY(`id`)
  DISTRIBUTED BY HASH(`id`) BUCKETS 2 PROPERTIES ("enable_unique_key_merge_on_write" = "true");
"""

# The operations a generated case draws, with the table each writes.
OPERATIONS = ["load", "load", "upsert", "partial_update", "overwrite"]

# The steps of the publishing transaction a lost answer can hit (the statement does not
# run), each told apart from the privilege probes before the loads (`… WHERE 1 = 0`): the
# timeout, BEGIN, the rows' INSERT, the ledger's INSERT in the transaction, and an
# overwrite's ledger record written alone after it.
PUBLISH_STEPS = [
    {"kind": "drop_statement", "prefix": "SET insert_timeout"},
    {"kind": "drop_statement", "prefix": "BEGIN WITH LABEL"},
    {"kind": "drop_statement", "prefix": "INSERT INTO `x`.`", "containing": "` IN ("},
    {"kind": "drop_statement", "prefix": "INSERT INTO `x`.`daft_doris_commits`", "containing": "COUNT(*)"},
]
OVERWRITE_RECORD = {
    "kind": "drop_statement",
    "prefix": "INSERT INTO `x`.`daft_doris_commits`",
    "containing": " VALUES (",
}
PUBLISH_STEPS.append(OVERWRITE_RECORD)

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


def compare(got, want):
    """(duplicated rows, lost rows) of `got` against the multiset `want`."""
    extra = got - want
    missing = want - got
    return sum(extra.values()), sum(missing.values())


def label_known(ports, key):
    return label_shown(lambda q: sql(ports, q), "x", key_label(key))


def keyed_frame(rows, columns, parts, rng):
    """`rows` (tuples over `columns`) as a DataFrame of `parts` micropartitions."""
    rows = list(rows)
    rng.shuffle(rows)
    types = {"id": pa.int64(), "v": pa.string(), "w": pa.int64()}
    schema = pa.schema([(c, types[c]) for c in columns])
    cuts = sorted(rng.sample(range(1, len(rows)), min(parts - 1, len(rows) - 1))) if len(rows) > 1 else []
    pieces = [rows[a:b] for a, b in zip([0, *cuts], [*cuts, len(rows)], strict=True)] or [[]]
    frames = [
        daft.from_arrow(pa.table({c: [r[i] for r in p] for i, c in enumerate(columns)}, schema=schema))
        for p in pieces
    ]
    out = frames[0]
    for f in frames[1:]:
        out = out.concat(f)
    return out


def draw_case(rng, op):
    """(table, columns of the input, the prior rows the table holds, the input rows, the
    rows the table must hold after the write) for operation `op`."""
    values = [None, "a", "b", "ü"]
    if op in ("load", "overwrite"):
        n = rng.choice([0, 1, rng.randint(2, 40), rng.randint(40, 400)])
        given = [(rng.randint(0, 30), rng.choice(values)) for _ in range(n)]
        prior = [(1000 + i, "old") for i in range(rng.choice([0, 3]))]
        after = Counter(given) if op == "overwrite" else Counter(prior) + Counter(given)
        return "t", ["id", "v"], prior, given, after
    # Keyed tables: unique ids per write (Doris keeps an unspecified one of repeated keys).
    prior = [(i, "old", i) for i in range(0, 20, 2)]
    ids = rng.sample(range(0, 40), rng.randint(0, 25))
    state = {r[0]: r for r in prior}
    if op == "upsert":
        given = [(i, rng.choice(values), rng.randint(0, 9)) for i in ids]
        state.update({r[0]: r for r in given})
        return "u", ["id", "v", "w"], prior, given, Counter(state.values())
    given = [(i, rng.choice(values)) for i in ids]
    for i, v in given:
        state[i] = (i, v, state[i][2] if i in state else None)
    return "u", ["id", "v"], prior, given, Counter(state.values())


def table_state(ports, table):
    cols = "id, v" if table == "t" else "id, v, w"
    return Counter(sql(ports, f"SELECT {cols} FROM {table}"))


def seed(ports, table, prior):
    sql(ports, f"TRUNCATE TABLE {table}")
    if prior:
        values = ", ".join("(" + ", ".join("NULL" if c is None else repr(c) for c in r) + ")" for r in prior)
        sql(ports, f"INSERT INTO {table} VALUES {values}")


@dataclass
class GeneratedCase:
    """One generated write: its number, key, table, input columns and rows, options."""

    number: int
    key: str
    table: str
    columns: list
    given: list
    options: dict


def fired_step(fired):
    """A fired fault's name, with the statement it hit for a `drop_statement` (as the
    emulator records it: the prefix, then `… containing`)."""
    return f"{fired['kind']} at {fired['step']}" if fired.get("step") else fired["kind"]


def armed_step(fault):
    """The name `fired_step` gives `fault` once it fires."""
    step = fault["prefix"] + (f" … {fault['containing']}" if "containing" in fault else "")
    return fired_step({**fault, "step": step})


def write_generated(ports, rng, reasons, case, fault, fired=None, **options):
    """One write of `case`'s input under its key (another partitioning each time), with
    `fault` armed; whether it succeeded. The faults that fired are counted in `fired`."""
    if fault is not None:
        faults(ports, "POST", {**fault, "times": rng.randint(1, 3)})
    try:
        write_doris(
            keyed_frame(case.given, case.columns, rng.randint(1, 5), rng),
            connection=conn(ports),
            table=DorisTable("x", case.table),
            idempotence_key=case.key,
            **case.options,
            **options,
        ).collect()
        return True
    except (DaftOlapError, RuntimeError) as error:
        # Without a fault a write must succeed; with one it may fail, loudly, typed.
        assert fault is not None, f"case {case.number}: {type(error).__name__}: {error}"
        reasons[f"{fault['kind']} -> {type(error).__name__}"] += 1
        return False
    finally:
        if fired is not None:
            fired.update(fired_step(f) for f in json.loads(faults(ports, "GET"))["fired"])
        faults(ports, "DELETE")


def test_generated_faults_and_reruns_leave_exactly_the_input(doris, capsys):
    rng = random.Random(f"{SEED}-{doris['memory']}")
    tally = Counter()
    reasons = Counter()
    fired = Counter()
    cases = CASES // len(MEMORIES)
    for case in range(cases):
        # Every fourth case loses an answer at one step of the publish, in turn, on an
        # operation and input that reach it; the others draw their fault at random.
        step = PUBLISH_STEPS[(case // 4) % len(PUBLISH_STEPS)] if case % 4 == 0 else None
        if step is None:
            op = rng.choice(OPERATIONS)
        elif step is OVERWRITE_RECORD:
            op = "overwrite"
        else:
            op = rng.choice(["load", "upsert", "partial_update"])
        table, columns, prior, given, want = draw_case(rng, op)
        while step is not None and op != "overwrite" and not given:
            table, columns, prior, given, want = draw_case(rng, op)
        seed(doris, table, prior)
        tally[f"op:{op}"] += 1
        key = f"gen-{SEED}-{doris['memory']}-{case}"
        case_ = GeneratedCase(
            number=case,
            key=key,
            table=table,
            columns=columns,
            given=given,
            options={
                "operation": "load" if op == "overwrite" else op,
                "write_mode": "overwrite" if op == "overwrite" else "append",
            },
        )

        def write(fault, case_=case_, **options):
            return write_generated(doris, rng, reasons, case_, fault, fired, **options)

        first = write(
            step or rng.choice(FAULTS),
            batch_rows=rng.choice([3, 17, 100, 65_536]),
            max_retries=rng.randint(0, 3),
        )
        tally["first_write_failed" if not first else "first_write_succeeded"] += 1
        if doris["memory"] == "labels-3":
            # A busy database: other loads commit before the rerun.
            for i in range(4):
                sql(doris, f"INSERT INTO noise VALUES ({i})")
        if first and (given or op == "overwrite") and not label_known(doris, key):
            # Committed, and Doris no longer knows the label: only the ledger remembers.
            tally["label_forgotten_before_rerun"] += 1
        # The rerun: same key, another partitioning and batch size, faulted too; until one
        # succeeds (a faulted rerun may fail, loudly).
        rerun_fault = rng.choice(FAULTS) if rng.random() < 0.3 else None
        tally["reruns_faulted"] += rerun_fault is not None
        while not write(rerun_fault, batch_rows=rng.choice([5, 64, 65_536])):
            tally["reruns_failed"] += 1
            rerun_fault = None
        duplicated, lost = compare(table_state(doris, table), want)
        tally["duplicated"] += duplicated
        tally["lost"] += lost
        if case % 10 == 0 and given and op == "load":
            # A new key is a new commit: exactly one more copy.
            write_doris(
                keyed_frame(given, columns, 2, rng),
                connection=conn(doris),
                table=DorisTable("x", table),
                idempotence_key=f"{key}-again",
            ).collect()
            duplicated, lost = compare(table_state(doris, table), want + Counter(given))
            tally["duplicated"] += duplicated
            tally["lost"] += lost
            tally["second_copies"] += 1
    leftovers = [t for (t,) in sql(doris, "SHOW TABLES") if t.startswith("daft_doris_stage_")]
    with capsys.disabled():
        ops = ", ".join(f"{k[3:]} {v}" for k, v in sorted(tally.items()) if k.startswith("op:"))
        print(
            f"\n[exactly-once] {cases} generated cases (seed {SEED}, {doris['memory']}; {ops}): "
            f"{tally['first_write_failed']} first writes failed, {tally['reruns_faulted']} reruns faulted "
            f"({tally['reruns_failed']} failed and ran again), {tally['second_copies']} second copies, "
            f"{tally['label_forgotten_before_rerun']} committed keys rerun after Doris forgot their label, "
            f"{tally['duplicated']} duplicated rows, {tally['lost']} lost rows, "
            f"{len(leftovers)} staging tables left"
        )
        for reason, count in sorted(reasons.items()):
            print(f"[exactly-once]   a write failed: {reason}: {count}")
        for step, count in sorted(fired.items()):
            print(f"[exactly-once]   fired: {step}: {count}")
    assert tally["duplicated"] == 0 and tally["lost"] == 0, tally
    # The generator reaches every step of the publishing transaction it can fault.
    unreached = [armed_step(s) for s in PUBLISH_STEPS if not fired[armed_step(s)]]
    assert not unreached, f"no generated case fired a lost answer at {unreached}: {dict(fired)}"
    assert not leftovers
    if doris["memory"] == "labels-3":
        # The forgetting is real: many committed keys are rerun with their label gone.
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
        landed = kill_landed(txns(doris), key)
        tally[f"landed: {landed}"] += 1
        status = write_doris(
            daft.from_pydict({"id": list(range(n)), "v": ["k"] * n}),
            connection=conn(doris),
            table=DorisTable("x", "t"),
            idempotence_key=key,
        ).to_pydict()["status"]
        # Where the kill landed decides the rerun: a committed publish is not redone, an
        # unfinished one is (a publish caught between BEGIN and its answer may go either way).
        allowed = {
            "before any staging load": {"success"},
            "during the staging loads": {"success"},
            "inside the publishing transaction": {"success", "already_committed"},
            "after the publish committed": {"already_committed"},
        }[landed]
        assert set(status) <= allowed and status, (landed, status)
        duplicated, lost = compare(table_rows(doris), Counter((i, "k") for i in range(n)))
        tally["duplicated"] += duplicated
        tally["lost"] += lost
    with capsys.disabled():
        where = ", ".join(f"{k[8:]} {v}" for k, v in sorted(tally.items()) if k.startswith("landed: "))
        print(
            f"\n[exactly-once] {kill_cases} writers killed by SIGKILL (seed {SEED + 1}; landed {where}), "
            f"then rerun ({doris['memory']}): {tally['duplicated']} duplicated rows, "
            f"{tally['lost']} lost rows"
        )
    assert tally["duplicated"] == 0 and tally["lost"] == 0, tally


def staging_prefix(key):
    """The name prefix of `key`'s staging tables: FNV-1a (64 bits) of its label, as
    docs/consistency.md states the staging name."""
    h = 0xCBF29CE484222325
    for b in key_label(key).encode():
        h = ((h ^ b) * 0x100000001B3) % 2**64
    return f"daft_doris_stage_{h:016x}_"


def kill_landed(ts, key):
    """Where a killed writer of `key` stopped, from the emulator's transactions."""
    states = {t["state"] for t in ts if t["label"] == key_label(key)}
    if states & {"COMMITTED", "VISIBLE"}:
        return "after the publish committed"
    if "PREPARE" in states:
        return "inside the publishing transaction"
    if any(t["table"].startswith(staging_prefix(key)) for t in ts):
        return "during the staging loads"
    return "before any staging load"


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
    return lambda ts, fired, key: any(t["label"] == key_label(key) and t["state"] == state for t in ts)


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
            sum(t["table"].startswith("daft_doris_stage_") and t["state"] == "VISIBLE" for t in ts) >= 2
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
        staging = [t for (t,) in sql(doris, "SHOW TABLES") if t.startswith("daft_doris_stage_")]
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


def test_two_writers_of_one_key_at_once_publish_it_at_most_once(doris, capsys):
    """Two processes write the same key at the same moment (an orchestrator that started a
    job twice): at most one publishes, neither duplicates a row, a rerun completes it."""
    rng = random.Random(f"{SEED + 2}-{doris['memory']}")
    outcomes = Counter()
    for case in range(3):
        sql(doris, "TRUNCATE TABLE t")
        n = rng.randint(50, 200)
        key = f"twice-{SEED}-{doris['memory']}-{case}"
        faults(doris, "POST", {"kind": "delay", "ms": 15, "times": 10_000})
        children = [
            subprocess.Popen(
                [sys.executable, "-c", PHASE_WRITER, json.dumps(doris), key, str(n), "atomic"],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            for _ in range(2)
        ]
        finished = []
        for child in children:
            out, _ = child.communicate(timeout=120)
            finished.append("done" in out)
        faults(doris, "DELETE")
        outcomes[f"{sum(finished)} of 2 finished"] += 1
        # docs/consistency.md: of two writers of one key at once, one finishes.
        assert any(finished), (case, finished)
        duplicated, _ = compare(table_rows(doris), Counter((i, "k") for i in range(n)))
        assert duplicated == 0, (case, finished)
        write_doris(
            daft.from_pydict({"id": list(range(n)), "v": ["k"] * n}),
            connection=conn(doris),
            table=DorisTable("x", "t"),
            idempotence_key=key,
        ).collect()
        duplicated, lost = compare(table_rows(doris), Counter((i, "k") for i in range(n)))
        assert (duplicated, lost) == (0, 0), (case, finished)
    with capsys.disabled():
        print(f"\n[exactly-once] two writers of one key at once ({doris['memory']}): {dict(outcomes)}")
