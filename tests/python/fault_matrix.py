"""The fault and bad-input matrix: every emulator fault against every read and write
operation, each case classified by what the user sees and checked for rows lost or
duplicated.

Run by the test suite (tests/python/test_fault_matrix.py) and by `cargo xtask faults`, which
writes docs/reliability.md:

    python tests/python/fault_matrix.py --write docs/reliability.md

A case arms one fault (for a few requests), runs one operation, clears the faults, then
compares the table (or the rows read) with what the operation claimed:

- a read either returns exactly the table's rows or raises; "short" and "extra" are
  failures of the guarantee;
- an operation that raises must have reached its fault ("UNPROVOKED" otherwise);
- keyed (UNIQUE) tables start with every key of the case at an `old` value, so a write
  that was skipped or lost shows as an `old` value where a new one is expected;
- a write either succeeds with every row in the table once, or raises; rows it reported as
  written must be there (else "lost"), and no row may be there more often than it was
  given (else "duplicated"). Modes with a rerun promise (atomic, per-load labels) are then
  rerun with the same key, and must end with exactly the input.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time
import urllib.request
from collections import Counter
from contextlib import suppress

import daft
import pymysql

sys.path.insert(0, os.path.dirname(__file__))

from daft_doris import DorisConnection, DorisTable, read_doris, write_doris  # noqa: E402

INIT = """
CREATE DATABASE m;
CREATE TABLE m.src (`id` INT NOT NULL, `v` VARCHAR(16) NULL) DUPLICATE KEY(`id`)
  DISTRIBUTED BY HASH(`id`) BUCKETS 4;
CREATE TABLE m.dup (`id` INT NOT NULL, `v` VARCHAR(16) NULL) DUPLICATE KEY(`id`)
  DISTRIBUTED BY HASH(`id`) BUCKETS 2;
CREATE TABLE m.uniq (`id` INT NOT NULL, `v` VARCHAR(16) NULL) UNIQUE KEY(`id`)
  DISTRIBUTED BY HASH(`id`) BUCKETS 2 PROPERTIES ("enable_unique_key_merge_on_write" = "true");
CREATE TABLE m.ow (`id` INT NOT NULL, `v` VARCHAR(16) NULL) DUPLICATE KEY(`id`)
  DISTRIBUTED BY HASH(`id`) BUCKETS 2;
"""


# A loopback port bound and never listening: a connection is refused, and no other process
# can take the port while this module holds the socket.
_CLOSED = socket.socket()
_CLOSED.bind(("127.0.0.1", 0))
CLOSED_PORT = _CLOSED.getsockname()[1]
SOURCE_ROWS = 300
WRITE_ROWS = 120

FAULTS: list[tuple[str, dict | None]] = [
    ("none", None),
    ("drop_after_commit", {"kind": "drop_after_commit"}),
    ("reset_mid_body", {"kind": "reset_mid_body"}),
    ("publish_timeout", {"kind": "publish_timeout", "visible_after_ms": 300}),
    ("hold_running", {"kind": "hold_running", "ms": 400}),
    ("malformed_response", {"kind": "malformed_response"}),
    ("truncated_response", {"kind": "truncated_response"}),
    ("be_unreachable", {"kind": "be_unreachable"}),
    ("redirect_elsewhere", {"kind": "redirect", "host": "192.0.2.1", "port": 8040}),
    ("delay", {"kind": "delay", "ms": 200}),
    ("slow_answer", {"kind": "slow_answer", "ms": 200}),
    ("cut_result_stream", {"kind": "cut_result_stream", "rows": 50}),
    ("short_mysql_row", {"kind": "short_mysql_row"}),
    ("cut_flight_stream", {"kind": "cut_flight_stream", "rows": 50}),
    ("announce_flight_rows", {"kind": "announce_flight_rows", "rows": SOURCE_ROWS + 1}),
    # One BE endpoint of the plan at a BE address where nothing listens (its host is a
    # reported BE's, so the allowlist admits it): the read must fail, not return the others.
    (
        "flight_endpoint_unreachable",
        {"kind": "flight_location", "host": "127.0.0.1", "port": CLOSED_PORT, "endpoint": 0},
    ),
    (
        "query_plan_error",
        {
            "kind": "query_plan_answer",
            "answer": {"msg": "success", "code": 0, "data": {"status": 500, "exception": "planner died"}},
        },
    ),
    ("drop_after_insert_commit", {"kind": "drop_after_insert_commit"}),
    ("drop_before_txn_commit", {"kind": "drop_before_txn_commit"}),
    ("drop_after_txn_commit", {"kind": "drop_after_txn_commit"}),
    ("hold_txn_commit", {"kind": "hold_txn_commit", "ms": 400}),
]

READS = ["read mysql", "read flight", "read split (mysql)", "read split (flight)"]
WRITES = [
    "write load",
    "write per-load labels",
    "write upsert",
    "write partial_update",
    "write two-phase",
    "write atomic",
    "write atomic overwrite",
]


def rerun_promised(operation: str) -> bool:
    """Whether a rerun of a failed `operation` with its key must end with exactly the input
    (the atomic mode, and per-load labels for the same data and partitioning)."""
    return "atomic" in operation or "per-load" in operation


def target_of(operation: str) -> str:
    """The table a write operation writes."""
    if "overwrite" in operation:
        return "ow"
    return "uniq" if ("upsert" in operation or "partial" in operation) else "dup"


class Harness:
    def __init__(self, ports: dict) -> None:
        self.ports = ports

    def sql(self, statement: str):
        c = pymysql.connect(host="127.0.0.1", port=self.ports["query_port"], user="root", database="m")
        with c, c.cursor() as cur:
            cur.execute(statement)
            return cur.fetchall()

    def faults(self, method: str, body: dict | None = None) -> dict:
        url = f"http://127.0.0.1:{self.ports['fe_http_port']}/_emulator/faults"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method)
        with urllib.request.urlopen(request, timeout=10) as response:
            text = response.read()
        return json.loads(text) if text else {}

    def fired(self, fault: dict | None) -> bool:
        """Whether the armed fault fired (read before the faults are cleared)."""
        if fault is None:
            return False
        return fault["kind"] in [f["kind"] for f in self.faults("GET").get("fired", [])]

    def connection(self) -> DorisConnection:
        return DorisConnection(
            host="127.0.0.1",
            http_port=self.ports["fe_http_port"],
            mysql_port=self.ports["query_port"],
            request_timeout_seconds=10.0,
        )

    def seed(self) -> None:
        self.sql("TRUNCATE TABLE src")
        values = ", ".join(f"({i}, 'v{i}')" for i in range(SOURCE_ROWS))
        self.sql(f"INSERT INTO src VALUES {values}")

    def read(self, operation: str) -> Counter:
        kwargs = dict(
            host="127.0.0.1",
            mysql_port=self.ports["query_port"],
            http_port=self.ports["fe_http_port"],
            flight_port=self.ports["fe_flight_port"],
            database="m",
            table="src",
            transport="flight" if "flight" in operation else "mysql",
        )
        if "split" in operation:
            kwargs.update(split="auto", target_tasks=4)
        data = read_doris(**kwargs).to_pydict()
        return Counter(zip(data["id"], data["v"], strict=True))

    def write(self, operation: str, case: int, key: str | None):
        table = target_of(operation)
        ids = list(range(case * 1000, case * 1000 + WRITE_ROWS))
        data = {"id": ids, "v": [f"w{i}" for i in ids]}
        kwargs: dict = {"batch_rows": 40, "max_retries": 2}
        if "upsert" in operation:
            kwargs["operation"] = "upsert"
        if "partial" in operation:
            kwargs["operation"] = "partial_update"
        if "two-phase" in operation:
            kwargs["two_phase_commit"] = True
        if "overwrite" in operation:
            kwargs["write_mode"] = "overwrite"
        if key is not None:
            kwargs["idempotence_key"] = key
        if "per-load" in operation:
            # Deterministic labels per load, each load its own transaction.
            kwargs["atomic"] = False
        summary = write_doris(
            daft.from_pydict(data), connection=self.connection(), table=DorisTable("m", table), **kwargs
        ).to_pydict()
        return table, Counter(zip(ids, data["v"], strict=True)), summary

    def seed_keys(self, table: str, case: int) -> None:
        """Keyed tables start with every key of the case at the value `old`: a write that
        is skipped or lost shows as `old`, not as an absent row a UNIQUE table would hide."""
        if table == "uniq":
            ids = range(case * 1000, case * 1000 + WRITE_ROWS)
            self.sql("INSERT INTO uniq VALUES " + ", ".join(f"({i}, 'old')" for i in ids))

    def table(self, name: str, low: int, high: int) -> Counter:
        return Counter(self.sql(f"SELECT id, v FROM {name} WHERE id >= {low} AND id < {high}"))


def classify_error(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}"
    for name in (
        "DorisAmbiguousWriteError",
        "DorisPartialCommitError",
        "DorisWriteError",
        "TransportError",
        "DiscoveryError",
        "DorisTimeoutError",
        "SchemaError",
    ):
        if name in text:
            return name
    return type(error).__name__


def run_matrix(ports: dict) -> list[dict]:
    h = Harness(ports)
    h.seed()
    expected_source = h.table("src", 0, SOURCE_ROWS)
    out = []
    case = 0
    for operation in READS + WRITES:
        for fault_name, fault in FAULTS:
            case += 1
            h.faults("DELETE")
            if operation in WRITES:
                h.seed_keys(target_of(operation), case)
            if fault is not None:
                h.faults("POST", {**fault, "times": 3})
            row = {"operation": operation, "fault": fault_name, "lost": 0, "duplicated": 0}
            try:
                if operation in READS:
                    got = h.read(operation)
                    missing = sum((expected_source - got).values())
                    extra = sum((got - expected_source).values())
                    row["outcome"] = "complete" if not missing and not extra else "SHORT or EXTRA"
                    row["lost"], row["duplicated"] = missing, extra
                    row["fired"] = h.fired(fault)
                else:
                    key = f"mx-{case}" if rerun_promised(operation) else None
                    table, want, summary = h.write(operation, case, key)
                    row["fired"] = h.fired(fault)
                    h.faults("DELETE")
                    status = summary["status"][0]
                    got = h.table(table, case * 1000, case * 1000 + WRITE_ROWS)
                    # Publish Timeout: committed, visible a little later (Doris's promise).
                    for _ in range(40):
                        if status not in ("publish_timeout", "mixed") or got == want:
                            break
                        time.sleep(0.05)
                        got = h.table(table, case * 1000, case * 1000 + WRITE_ROWS)
                    row["outcome"] = f"written ({status})"
                    # Keyed: every key must hold its new value (an `old` one was lost).
                    row["lost"] = sum((want - got).values())
                    row["duplicated"] = sum((got - want).values()) if table != "uniq" else 0
            except Exception as error:  # every way a failure reaches the user
                row["outcome"] = f"raised {classify_error(error)}"
                row["fired"] = h.fired(fault)
                if not row["fired"]:
                    # Nothing went wrong, yet the operation failed.
                    row["outcome"] += ", UNPROVOKED"
                h.faults("DELETE")
                if operation in WRITES:
                    table = target_of(operation)
                    ids = range(case * 1000, case * 1000 + WRITE_ROWS)
                    want = Counter((i, f"w{i}") for i in ids)
                    got = h.table(table, case * 1000, case * 1000 + WRITE_ROWS)
                    if table == "uniq":
                        # Each key holds its old or its new value; none may be gone.
                        row["lost"] = len(set(ids) - {i for i, _ in got})
                        got = got & want
                    else:
                        row["duplicated"] = sum((got - want).values())
                    if "atomic" in operation or "two-phase" in operation:
                        # All-or-nothing per write (atomic) or per load (two-phase, never a
                        # pre-committed leftover): a failed write leaves nothing half-visible
                        # for atomic; two-phase may keep loads committed before a failure.
                        if "atomic" in operation and got:
                            row["outcome"] += ", PARTIAL"
                    if rerun_promised(operation):
                        # The promise: a rerun with the same key (the same data, the same
                        # partitioning for per-load labels) completes it exactly once.
                        with suppress(Exception):
                            h.write(operation, case, f"mx-{case}")
                        got = h.table(table, case * 1000, case * 1000 + WRITE_ROWS)
                        row["outcome"] += "; rerun with the key"
                        row["lost"] = sum((want - got).values())
                        row["duplicated"] = sum((got - want).values()) if table != "uniq" else 0
                precommitted = [
                    t for t in txns(ports) if t["state"] == "PRECOMMITTED" and t["table"] in ("dup", "uniq")
                ]
                if precommitted:
                    row["outcome"] += f", {len(precommitted)} PRECOMMITTED left"
            h.faults("DELETE")
            out.append(row)
    return out


def txns(ports: dict) -> list[dict]:
    url = f"http://127.0.0.1:{ports['fe_http_port']}/_emulator/txns/m"
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)["txns"]


def broken(rows: list[dict]) -> list[dict]:
    """The cases that break a guarantee."""
    return [
        r
        for r in rows
        if r["lost"]
        or r["duplicated"]
        or "SHORT" in r["outcome"]
        or "PARTIAL" in r["outcome"]
        or "UNPROVOKED" in r["outcome"]
        or "left" in r["outcome"]
    ]


def render(rows: list[dict]) -> str:
    lines = [
        "# Reliability: every fault against every operation",
        "",
        "Generated by `cargo xtask faults` (`tests/python/fault_matrix.py`; CI runs the same matrix",
        "in `tests/python/test_fault_matrix.py` and fails on any row lost or duplicated, and when",
        "this table is not the matrix the code runs). Each case",
        "arms one emulator fault (`docs/emulator.md`) for the next three requests at its point,",
        "runs one operation, clears the faults and compares: a read with the table, a write with",
        "its input. An atomic write or a per-load-labels write (`atomic=False`) that fails is",
        "rerun with the same key (the same data and partitioning) and must then hold exactly",
        "its input; a failed default or two-phase write (no rerun promise) must hold no row",
        "twice, and a keyed table no key lost. *fired* says whether the operation reached the",
        "fault's point.",
        "",
        "Rerun one operation: `python tests/python/fault_matrix.py --only 'write atomic'`.",
        "",
        "| operation | fault | fired | outcome | rows lost | rows duplicated |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['operation']} | `{r['fault']}` | {'yes' if r['fired'] else 'no'} | {r['outcome']} "
            f"| {r['lost']} | {r['duplicated']} |"
        )
    bad = broken(rows)
    lines += ["", f"{len(rows)} cases, {len(bad)} that lose, duplicate or leave rows half-written.", ""]
    return "\n".join(lines)


# The report's hand-written part (the soak's figures) starts at this line; a run of the
# matrix rewrites only what comes before it.
HAND_WRITTEN = "<!-- Below: written by hand; `cargo xtask faults` keeps it. -->"


def write_keeping_hand_written(path: str, generated: str) -> None:
    """Writes `generated` to `path`, then the hand-written part of the file already there."""
    kept = ""
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
        if HAND_WRITTEN in old:
            kept = old[old.index(HAND_WRITTEN) :]
    text = generated.rstrip("\n") + "\n"
    if kept:
        text += "\n" + kept
    with open(path, "w") as f:
        f.write(text)


def main() -> None:
    from conftest import run_emulator

    parser = argparse.ArgumentParser()
    parser.add_argument("--write", help="write the report here (markdown)")
    parser.add_argument("--only", help="one operation, e.g. 'write atomic'")
    args = parser.parse_args()
    global READS, WRITES
    if args.only:
        READS = [o for o in READS if o == args.only]
        WRITES = [o for o in WRITES if o == args.only]
    with run_emulator(INIT) as ports:
        rows = run_matrix(ports)
    text = render(rows)
    if args.write:
        write_keeping_hand_written(args.write, text)
    print(text)
    sys.exit(1 if broken(rows) else 0)


if __name__ == "__main__":
    main()
