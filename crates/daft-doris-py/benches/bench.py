"""End-to-end benchmarks of daft_doris against the reference connector and the peers.

`cargo xtask bench` runs this script; every figure is measured side by side in one run,
each measurement in its own child process (its peak RSS is the child's VmHWM), runs
of the compared implementations alternating. Each figure is the median of the runs, with
min and max. Absolute times on shared machines are noise: the ratios are the result.

    python bench.py orchestrate --emulator-bin B --ref-python P [--quick] [--extra F.json]...
    python bench.py scaling --emulator-bin B [--quick]

`scaling` measures split reads against single-task reads on an emulator that simulates N
BEs, each paced to a fixed bandwidth (docs/scaling.md).

The parts: `bench_measure.py` (one measurement, run in its own process), `bench_harness.py`
(runs and compares measurements), `bench_report.py` (docs/benchmarks.md), `bench_scaling.py`
(docs/scaling.md) and `bench_tables.py` (the tables and their rows).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from bench_harness import SERVER, client_scan, compare, mariadb, mariadb_pid, run_child, start_emulator
from bench_report import MEMORY_GOAL, memory_rows_report, rows_memory, write_report
from bench_scaling import scaling
from bench_tables import (
    COLUMNS_DDL,
    FLIGHT_GOAL,
    FLIGHT_SHAPES,
    flight_tables_sql,
    make_table,
)


def load_flight_shapes(connection, rows: int, quick: bool = False) -> None:
    """Loads every Flight shape's table but `r` (loaded by the caller); quick runs make at
    most 10 loads per table (each load is a Daft write)."""
    import daft
    from daft_doris import DorisTable, write_doris

    for _, _, table, _, maker, loads in FLIGHT_SHAPES:
        if table == "r":
            continue
        step = -(-rows // (min(loads, 10) if quick else loads))
        for start in range(0, rows, step):
            frame = daft.from_arrow(maker(min(step, rows - start), start))
            write_doris(frame, connection=connection, table=DorisTable("bench", table))


def compare_flight_shapes(ports: dict, ours: str, ref: str, runs: int, rows: int) -> list[dict]:
    """Workloads 2–2d: our Flight read against the reference's (ADBC), shape by shape."""
    out = []
    for number, description, table, _, _, _ in FLIGHT_SHAPES:
        read = {"kind": "read", "ports": ports, "table": table, "transport": "flight"}
        out.append(
            compare(
                f"{number}. read_doris(...).to_arrow(), Flight SQL, {description}",
                FLIGHT_GOAL,
                (("daft_doris", ours, read), ("reference 1.1 (ADBC)", ref, read)),
                runs,
                rows,
            )
        )
    return out


# The bench's user with a password (a throwaway one, on a throwaway emulator).
GUARDED_USER = "guarded"
GUARDED_PASSWORD = "bench-Guard-7"


def orchestrate(args) -> None:
    quick = args.quick
    rows = 50_000 if quick else 1_000_000
    memory_rows = rows_memory(quick)
    runs = 2 if quick else 5
    ours, ref = sys.executable, args.ref_python
    init = tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False)
    init.write(
        "CREATE DATABASE bench;\n"
        + "".join(
            f"CREATE TABLE bench.{t} ({COLUMNS_DDL}) DUPLICATE KEY(`id`) "
            "DISTRIBUTED BY HASH(`id`) BUCKETS 8;\n"
            for t in ("r", "big", "small", "w")
        )
        + flight_tables_sql()
        # A user with a password: its MySQL reads go through the authentication guard.
        + f"CREATE USER '{GUARDED_USER}'@'%' IDENTIFIED BY '{GUARDED_PASSWORD}';\n"
        + f"GRANT SELECT_PRIV ON bench.* TO '{GUARDED_USER}'@'%';\n"
    )
    init.close()
    emulator, ports = start_emulator(args.emulator_bin, init.name)
    SERVER["pid"] = emulator.pid
    results = []
    memory_table: list[str] = []
    try:
        # Load the read tables with our writer (timed separately below).
        import daft
        from daft_doris import DorisConnection, DorisTable, write_doris

        connection = DorisConnection(
            host="127.0.0.1", http_port=ports["fe_http_port"], mysql_port=ports["query_port"]
        )
        started = time.perf_counter()
        write_doris(daft.from_arrow(make_table(rows)), connection=connection, table=DorisTable("bench", "r"))
        load_s = time.perf_counter() - started
        load_flight_shapes(connection, rows, quick)
        for table, n_rows in (("big", memory_rows), ("small", memory_rows // 5)):
            for start in range(0, n_rows, 1_000_000):
                n = min(1_000_000, n_rows - start)
                frame = daft.from_arrow(make_table(n, start))
                write_doris(frame, connection=connection, table=DorisTable("bench", table))
        read = {"kind": "read", "ports": ports, "table": "r"}
        # The emulator's own MySQL scan rate (the mariadb client, C, reading to /dev/null):
        # a reader cannot beat it, so it bounds every MySQL ratio against the reference.
        scan = {
            "workload": "emulator MySQL scan (mariadb client to /dev/null)",
            "rows": rows,
            "seconds": client_scan(ports["query_port"], "bench.r", runs),
        }
        scan["rows_per_s_median"] = rows / scan["seconds"]["median"]
        print(json.dumps(scan), flush=True)
        args.extra_rows = [scan]
        results.append(
            compare(
                "1. read_doris(...).to_arrow(), MySQL transport",
                ">= 10",
                (
                    ("daft_doris", ours, {**read, "transport": "mysql"}),
                    ("reference 1.1", ref, {**read, "transport": "mysql"}),
                ),
                runs,
                rows,
            )
        )
        # The MySQL link's authentication guard (docs/security.md): every link goes through
        # its loopback relay (which also caps the server's packets); a read with a password
        # authenticates through its rules, one without has nothing to guard. The ratio is
        # what guarding the password costs a read (the relay itself is in both).
        results.append(
            compare(
                "1c. MySQL read with a password (guarded, no TLS) vs without",
                ">= 0.9",
                (
                    (
                        "guarded",
                        ours,
                        {**read, "transport": "mysql", "user": GUARDED_USER, "password": GUARDED_PASSWORD},
                    ),
                    ("no password", ours, {**read, "transport": "mysql"}),
                ),
                runs,
                rows,
            )
        )
        mariadb(
            "DROP TABLE IF EXISTS test.bench8; CREATE TABLE test.bench8 (id BIGINT NOT NULL PRIMARY KEY, "
            "i32 INT NULL, amount DECIMAL(18,4) NULL, day DATE NULL, ts DATETIME(6) NULL, "
            "short VARCHAR(16) NULL, "
            "`long` TEXT NULL, f DOUBLE NULL); "
            "INSERT INTO test.bench8 SELECT seq, IF(seq % 10 = 0, NULL, CAST(seq % 1000 AS SIGNED) - 500), "
            "seq * 1.2345, "
            "DATE_ADD('2024-01-01', INTERVAL seq % 365 DAY), "
            "TIMESTAMPADD(MICROSECOND, seq * 1000003, '2024-01-01 00:00:00'), CONCAT('s', seq % 100), "
            "CONCAT('a fairly long text value that repeats for every row #', seq), seq / 3 "
            f"FROM seq_0_to_{rows - 1}"
        )
        # MariaDB's own floor for the same result (its C client to /dev/null).
        floor_row = {
            "workload": "MariaDB scan (mariadb client to /dev/null)",
            "rows": rows,
            "seconds": client_scan(3306, "test.bench8", runs),
        }
        print(json.dumps(floor_row), flush=True)
        args.extra_rows.append(floor_row)
        results.append(
            compare(
                "1b. Rust MySQL reader on MariaDB (text protocol)",
                ">= 1.2",
                (
                    ("daft_doris BatchReader", ours, {"kind": "mariadb", "impl": "ours", "table": "bench8"}),
                    ("ConnectorX 0.4.6", ours, {"kind": "mariadb", "impl": "connectorx", "table": "bench8"}),
                ),
                runs,
                rows,
                server_pid=mariadb_pid(),
            )
        )
        results.extend(compare_flight_shapes(ports, ours, ref, runs, rows))
        for number, transport, label in (("3", "mysql", "MySQL"), ("3b", "flight", "Flight SQL")):
            results.append(
                compare(
                    f"{number}. split='auto' (8 tablets) vs single, {label}",
                    ">= 1.6",
                    (
                        ("split auto", ours, {**read, "transport": transport, "split": "auto"}),
                        ("single", ours, {**read, "transport": transport}),
                    ),
                    runs,
                    rows,
                )
            )

        def truncate():
            import pymysql

            conn = pymysql.connect(host="127.0.0.1", port=ports["query_port"], user="root", database="bench")
            with conn, conn.cursor() as cur:
                cur.execute("TRUNCATE TABLE w")

        write = {"kind": "write", "ports": ports, "table": "w", "rows": rows}
        results.append(
            compare(
                "4. write_doris of a DataFrame (load, DUPLICATE)",
                ">= 8",
                (("daft_doris", ours, write), ("reference 1.1", ref, write)),
                runs,
                rows,
                setup=truncate,
            )
        )
        # The atomic mode (staging loads, then one INSERT … WITH LABEL … SELECT), against the
        # default write and against the reference.
        atomic = {**write, "atomic": True}
        results.append(
            compare(
                "4b. atomic write_doris (idempotence key) vs default write_doris",
                ">= 0.8",
                (("atomic", ours, atomic), ("default", ours, write)),
                runs,
                rows,
                setup=truncate,
            )
        )
        results.append(
            compare(
                "4c. atomic write_doris vs reference 1.1",
                ">= 8",
                (("daft_doris atomic", ours, atomic), ("reference 1.1", ref, write)),
                runs,
                rows,
                setup=truncate,
            )
        )
        big = {"kind": "read", "ports": ports, "table": "big", "transport": "mysql", "stream": True}
        memory = compare(
            f"5. memory: read {memory_rows:,} rows, batches consumed as they come (peak RSS)",
            MEMORY_GOAL,
            (("daft_doris", ours, big), ("reference 1.1", ref, big)),
            1,
            memory_rows,
        )
        results.append(memory)
        import pyarrow.parquet as pq

        small_rows = memory_rows // 5
        dirs = {}
        for n_rows in (small_rows, memory_rows):
            dirs[n_rows] = tempfile.mkdtemp(prefix="daft-doris-bench-")
            for i, start in enumerate(range(0, n_rows, 1_000_000)):
                n = min(1_000_000, n_rows - start)
                pq.write_table(make_table(n, start), f"{dirs[n_rows]}/part-{i:04d}.parquet")

        def write_case(n_rows):
            return dict(kind="write", ports=ports, table="w", rows=n_rows, parquet_dir=dirs[n_rows])

        write_memory = compare(
            f"5. memory: write {memory_rows:,} rows read from Parquet files (peak RSS)",
            MEMORY_GOAL,
            (("daft_doris", ours, write_case(memory_rows)), ("reference 1.1", ref, write_case(memory_rows))),
            1,
            memory_rows,
            setup=truncate,
        )
        results.append(write_memory)
        # Flatness and the writer's own share: the same measurements at a fifth of the size,
        # and the source alone (iterating the Parquet scan without writing).
        peaks = {"read": {}, "write": {}, "source": {}}
        peaks["read"][memory_rows] = memory["ours_peak_rss_mb"]
        peaks["write"][memory_rows] = write_memory["ours_peak_rss_mb"]
        peaks["read"][small_rows] = run_child(ours, {**big, "table": "small"})["peak_rss_mb"]
        truncate()
        peaks["write"][small_rows] = run_child(ours, write_case(small_rows))["peak_rss_mb"]
        for n_rows in (small_rows, memory_rows):
            source = run_child(ours, {"kind": "scan", "parquet_dir": dirs[n_rows]})
            peaks["source"][n_rows] = source["peak_rss_mb"]
        memory_table.extend(memory_rows_report(peaks, small_rows, memory_rows))
        import shutil

        for d in dirs.values():
            shutil.rmtree(d, ignore_errors=True)
    finally:
        emulator.terminate()
        emulator.wait(timeout=30)
        os.unlink(init.name)
    extras = [json.loads(Path(p).read_text()) for p in args.extra] + getattr(args, "extra_rows", [])
    write_report(results, extras, rows, runs, quick, load_s, memory_table)


def flight_shapes(args) -> None:
    """Workloads 2–2d alone (no report written): `python bench.py flight --emulator-bin B
    --ref-python P [--rows N] [--runs R]`, to iterate on the Flight reader."""
    rows, runs = args.rows or 1_000_000, args.runs or 3
    init = tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False)
    init.write(
        f"CREATE DATABASE bench;\nCREATE TABLE bench.r ({COLUMNS_DDL}) DUPLICATE KEY(`id`) "
        "DISTRIBUTED BY HASH(`id`) BUCKETS 8;\n" + flight_tables_sql()
    )
    init.close()
    emulator, ports = start_emulator(args.emulator_bin, init.name)
    SERVER["pid"] = emulator.pid
    try:
        import daft
        from daft_doris import DorisConnection, DorisTable, write_doris

        connection = DorisConnection(
            host="127.0.0.1", http_port=ports["fe_http_port"], mysql_port=ports["query_port"]
        )
        write_doris(daft.from_arrow(make_table(rows)), connection=connection, table=DorisTable("bench", "r"))
        load_flight_shapes(connection, rows)
        compare_flight_shapes(ports, sys.executable, args.ref_python, runs, rows)
    finally:
        emulator.terminate()
        emulator.wait(timeout=30)
        os.unlink(init.name)


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    o = sub.add_parser("orchestrate")
    o.add_argument("--emulator-bin", required=True)
    o.add_argument("--ref-python", required=True)
    o.add_argument("--quick", action="store_true")
    o.add_argument("--extra", action="append", default=[])
    fl = sub.add_parser("flight")
    fl.add_argument("--emulator-bin", required=True)
    fl.add_argument("--ref-python", required=True)
    fl.add_argument("--rows", type=int)
    fl.add_argument("--runs", type=int)
    sc = sub.add_parser("scaling")
    sc.add_argument("--emulator-bin", required=True)
    sc.add_argument("--quick", action="store_true")
    # A one-off point (no report written), e.g. on debug builds:
    # --rows 100000 --bandwidth 2M --backends 4 --runs 1
    sc.add_argument("--rows", type=int)
    sc.add_argument("--bandwidth")
    sc.add_argument("--backends", type=int, action="append")
    sc.add_argument("--runs", type=int)
    args = parser.parse_args()
    if args.command == "scaling":
        scaling(args)
    elif args.command == "flight":
        flight_shapes(args)
    else:
        orchestrate(args)


if __name__ == "__main__":
    main()
