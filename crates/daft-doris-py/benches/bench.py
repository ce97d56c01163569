"""End-to-end benchmarks of daft_doris against the reference connector and the peers.

`cargo xtask bench` runs this script; every figure is measured side by side in one run,
each measurement in its own child process (its peak RSS is the child's VmHWM), runs
of the compared implementations alternating. Each figure is the median of the runs, with
min and max. Absolute times on shared machines are noise: the ratios are the result.

    python bench.py orchestrate --emulator-bin B --ref-python P [--quick] [--extra F.json]...
    python bench.py scaling --emulator-bin B [--quick]

`scaling` measures split reads against single-task reads on an emulator that simulates N
BEs, each paced to a fixed bandwidth (docs/scaling.md).

Children: `python bench.py measure '<json case>'` prints `{"seconds": s, "rows": n}`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bench_tables import (
    COLUMNS_DDL,
    FLIGHT_GOAL,
    FLIGHT_SHAPES,
    flight_tables_sql,
    make_table,
)

ROOT = Path(__file__).resolve().parents[3]
MARIADB_URL = "mysql://root@127.0.0.1:3306/test"


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


# --- measurements (run in a child process) -------------------------------------------------


class Clock:
    """Wall time and this process's CPU time (user + system, every thread) from creation."""

    def __init__(self) -> None:
        self._wall = time.perf_counter()
        self._cpu = time.process_time()

    def stop(self) -> dict:
        return {"seconds": time.perf_counter() - self._wall, "cpu_s": time.process_time() - self._cpu}


def warm_daft_runner() -> None:
    """Creates Daft's runner before the clock starts. Creating it imports Ray when Ray is
    installed (0.2–0.5 s here, to detect a Ray cluster): our environment has Ray, the
    reference's has not, so without this our timings carried an import the reference never
    paid. Imports stay outside the timed part for every implementation."""
    try:
        from daft.runners import get_or_create_runner
    except ImportError:
        return
    get_or_create_runner()


def measure(case: dict) -> dict:
    kind = case["kind"]
    if kind in ("read", "write", "scan"):
        warm_daft_runner()
    if kind == "read":
        from daft_doris import read_doris

        kwargs = dict(
            host="127.0.0.1",
            database="bench",
            table=case["table"],
            transport=case["transport"],
            mysql_port=case["ports"]["query_port"],
            http_port=case["ports"]["fe_http_port"],
            flight_port=case["ports"]["fe_flight_port"],
        )
        if case.get("split"):
            kwargs.update(split=case["split"], target_tasks=case.get("target_tasks", 8))
        if case.get("scan_parallel"):
            import daft

            # How many scan tasks Daft's native runner runs at once (its default follows the
            # core count: 2 here, which would cap a split read at two BEs).
            daft.set_execution_config(scantask_max_parallel=case["scan_parallel"])
        started = Clock()
        frame = read_doris(**kwargs)
        if case.get("stream"):
            # Memory workloads consume batches as they come (a pipeline), so the peak
            # measures the reader, not a materialised table.
            rows = sum(batch.num_rows for batch in frame.to_arrow_iter())
        else:
            rows = frame.to_arrow().num_rows
        return {**started.stop(), "rows": rows}
    if kind == "write":
        import daft
        from daft_doris import DorisConnection, DorisTable, write_doris

        if case.get("parquet_dir"):
            # A streaming source: the peak measures the writer, not a materialised input.
            frame = parquet_source(case["parquet_dir"])
        else:
            frame = daft.from_arrow(make_table(case["rows"]))
        ports = case["ports"]
        connection = DorisConnection(
            host="127.0.0.1",
            http_port=ports["fe_http_port"],
            mysql_port=ports["query_port"],
            redirect_hosts=("127.0.0.1",),
            redirect_ports=(ports["be_http_port"],),
        )
        extra = {}
        if case.get("atomic"):
            import uuid

            # A new key per run: the same key would make every later run a no-op.
            extra["idempotence_key"] = f"bench-{uuid.uuid4().hex}"
        started = Clock()
        summary = write_doris(frame, connection=connection, table=DorisTable("bench", case["table"]), **extra)
        return {**started.stop(), "rows": summary.to_pydict()["loaded_rows"][0]}
    if kind == "scan":
        # The write workload's source alone: the floor under a writer's peak.
        started = Clock()
        rows = sum(batch.num_rows for batch in parquet_source(case["parquet_dir"]).to_arrow_iter())
        return {**started.stop(), "rows": rows}
    if kind == "mariadb":
        sql = f"SELECT * FROM test.{case['table']}"
        # Imports stay outside the timed part for both implementations.
        if case["impl"] == "connectorx":
            import connectorx
        else:
            import pyarrow as pa
            from daft_doris import _native

            # The table's schema, as read_doris would have it from DESCRIBE.
            schema = pa.schema([f.with_nullable(f.name != "id") for f in make_table(1).schema])
        started = Clock()
        if case["impl"] == "connectorx":
            table = connectorx.read_sql(MARIADB_URL, sql, return_type="arrow", protocol="text")
            rows = table.num_rows
        else:
            reader = _native.BatchReader(
                "mysql",
                _native.Connection(host="127.0.0.1", mysql_port=3306, user="root"),
                "",
                [sql],
                schema,
                65_536,
                64 * 1024 * 1024,
            )
            rows = 0
            while (batch := reader.next_batch()) is not None:
                rows += batch.num_rows
        return {**started.stop(), "rows": rows}
    raise SystemExit(f"unknown case {kind}")


def parquet_source(parquet_dir: str):
    """The Parquet files as a Daft DataFrame that streams: Daft's native scan runs several
    scan tasks at once by default (measured: 1.2 GB peak just iterating 10 M rows of these
    files), so one scan task at a time is configured for every writer alike."""
    import daft

    daft.set_execution_config(scantask_max_parallel=1)
    return daft.read_parquet(parquet_dir)


# --- orchestration --------------------------------------------------------------------------


def run_child(python: str, case: dict) -> dict:
    """One measurement; a child that crashes (the reference's Python 3.12 process was seen
    to segfault inside Daft's runtime) is run once more, and the retry is reported."""
    try:
        return run_child_once(python, case)
    except ChildFailed as failure:
        print(f"retrying after a failed child: {failure}", file=sys.stderr, flush=True)
        return run_child_once(python, case)


class ChildFailed(Exception):
    """A measurement process exited with an error."""


def run_child_once(python: str, case: dict) -> dict:
    # One BLAS thread: numpy's OpenBLAS threads otherwise spin after make_table and take a
    # core from whatever the child measures next (seen in a profile of workload 1b).
    env = {**os.environ, "DAFT_PROGRESS_BAR": "0", "OPENBLAS_NUM_THREADS": "1"}
    process = subprocess.Popen(
        [python, __file__, "measure", json.dumps(case)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    out = process.stdout.read()
    err = process.stderr.read()
    status = process.wait()
    if status != 0:
        raise ChildFailed(f"{case['kind']} with {python} exited {status}:\n{err.decode()[-3000:]}")
    return json.loads(out.decode().strip().splitlines()[-1])


def peak_rss_mb() -> float:
    """This process's peak resident set (VmHWM; a fresh exec starts its own count, unlike
    `ru_maxrss`, which keeps the forking parent's high-water mark)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def process_cpu_s(pid: int | None) -> float:
    """User + system CPU seconds process `pid` has used so far (0 without a pid)."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def mariadb_pid() -> int | None:
    """The local MariaDB server's process id, if it runs."""
    found = subprocess.run(["pgrep", "-o", "-x", "mariadbd"], capture_output=True, text=True)
    return int(found.stdout.split()[0]) if found.returncode == 0 and found.stdout.split() else None


# The process serving the measured reads and writes (the emulator), for its CPU time.
SERVER = {"pid": None}


def stats(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def compare(name, goal, pair, runs, expect_rows, setup=None, server_pid=None):
    """Alternates the two implementations `runs` times; returns the row of the results table.
    Besides wall time it records each child's CPU time and the server's (the emulator's, or
    `server_pid`'s) during the child, so a table row shows where the work went."""
    (a_name, a_python, a_case), (b_name, b_python, b_case) = pair
    server_pid = server_pid or SERVER["pid"]
    labels = (a_name, b_name)
    times, peaks, cpu, server_cpu = ({label: [] for label in labels} for _ in range(4))
    for _ in range(runs):
        for label, python, case in ((a_name, a_python, a_case), (b_name, b_python, b_case)):
            if setup:
                setup()
            server_before = process_cpu_s(server_pid)
            result = run_child(python, case)
            server_cpu[label].append(process_cpu_s(server_pid) - server_before)
            if result["rows"] != expect_rows:
                raise SystemExit(f"{name}: {label} returned {result['rows']} rows, expected {expect_rows}")
            times[label].append(result["seconds"])
            peaks[label].append(result["peak_rss_mb"])
            cpu[label].append(result["cpu_s"])
    ratio = statistics.median(times[b_name]) / statistics.median(times[a_name])
    row = {
        "workload": name,
        "ours": a_name,
        "peer": b_name,
        "ours_s": stats(times[a_name]),
        "peer_s": stats(times[b_name]),
        "ratio": ratio,
        "goal": goal,
        "ours_peak_rss_mb": max(peaks[a_name]),
        "peer_peak_rss_mb": max(peaks[b_name]),
        "ours_cpu_s": statistics.median(cpu[a_name]),
        "peer_cpu_s": statistics.median(cpu[b_name]),
        "ours_server_cpu_s": statistics.median(server_cpu[a_name]),
        "peer_server_cpu_s": statistics.median(server_cpu[b_name]),
    }
    print(json.dumps(row), flush=True)
    return row


def client_scan(port: int, table: str, runs: int) -> dict:
    """Seconds the C `mariadb` client takes to read `table` to /dev/null: a server's floor."""
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(
            ["mariadb", "-uroot", "-h127.0.0.1", f"-P{port}", "--quick", "-e", f"SELECT * FROM {table}"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        seconds.append(time.perf_counter() - started)
    return stats(seconds)


def mariadb(sql: str) -> None:
    subprocess.run(["mariadb", "-uroot", "-h127.0.0.1", "-P3306", "-Dtest", "-e", sql], check=True)


MEMORY_GOAL = "flat; <= 2 x batch_bytes + 150 MiB"
BATCH_BYTES_MIB = 64  # read_doris / write_doris default batch_bytes


def rows_memory(quick: bool) -> int:
    """Rows of the memory workloads."""
    return 100_000 if quick else 10_000_000


def memory_rows_report(peaks: dict, small: int, large: int) -> list[str]:
    """Table rows: each path's peak at two sizes (flat?), and the writer's share above its
    source (the Parquet scan alone) against the goal's bound."""
    bound = 2 * BATCH_BYTES_MIB + 150
    out = []
    paths = (("read", "read_doris, MySQL, batches as they come"), ("write", "write_doris from Parquet"))
    for path, label in paths:
        a, b = peaks[path][small], peaks[path][large]
        if path == "write":
            own_a, own_b = a - peaks["source"][small], b - peaks["source"][large]
            share = f"{own_a:.0f} / {own_b:.0f}"
            verdict = max(own_a, own_b) <= bound
        else:
            share = "—"
            verdict = max(a, b) <= bound
        verdict = "met" if verdict else "missed"
        out.append(f"| {label} | {a:.0f} | {b:.0f} | {b - a:+.0f} | {share} | {bound} | {verdict} |")
    src_a, src_b = peaks["source"][small], peaks["source"][large]
    growth = src_b - src_a
    label = "the Parquet source alone (no writer)"
    out.append(f"| {label} | {src_a:.0f} | {src_b:.0f} | {growth:+.0f} | — | — | — |")
    return out


memory_table: list[str] = []


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
    )
    init.close()
    emulator = subprocess.Popen(
        [args.emulator_bin]
        + [a for p in ("fe-http", "be-http", "query", "fe-flight", "be-flight") for a in (f"--{p}-port", "0")]
        + ["--init-sql", init.name],
        stdout=subprocess.PIPE,
        text=True,
    )
    SERVER["pid"] = emulator.pid
    results = []
    try:
        ports = json.loads(emulator.stdout.readline())
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
                ">= 0.7",
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
    write_report(results, extras, rows, runs, quick, load_s)


CORES = os.cpu_count() or 1


def split_bounds(results) -> list[str]:
    """For each split workload: the fastest a split read could be on this machine, where the
    reader and the emulator share the cores (all their CPU time spread evenly over them)."""
    lines = []
    for r in results:
        if not r["workload"].startswith("3"):
            continue
        work = r["ours_cpu_s"] + r["ours_server_cpu_s"]
        floor = work / CORES
        single = r["peer_s"]["median"]
        lines.append(
            f"- {r['workload']}: the split read used {work:.2f} s of CPU (reader + emulator), so on"
            f" {CORES} cores it cannot finish before {floor:.2f} s; with the single read at"
            f" {single:.2f} s the best ratio this machine allows is {single / floor:.2f}×"
            f" (measured {r['ratio']:.2f}×)."
        )
    return lines


def write_report(results, extras, rows, runs, quick, load_s) -> None:
    if quick:
        print("quick run: docs/benchmarks.md is written by full runs only")
        return
    lines = [
        "# Benchmarks",
        "",
        f"Measured by `cargo xtask bench` on {datetime.date.today()} on the project machine (2 cores).",
        "Every figure is the median of the runs (min–max in brackets); the compared implementations",
        "ran alternately in the same run, against the same emulator process (release build).",
        f"Rows per workload: {rows:,} (× 8 mixed columns unless named); {runs} runs;",
        "ratio = peer time / our time (higher is better for us).",
        "Memory rows are one run each (peak RSS of the process).",
        "",
        "| workload | ours | peer | ours (s) | peer (s) | ratio | goal | peak RSS ours / peer (MB) "
        "| CPU s, client + server: ours / peer |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        o, p = r["ours_s"], r["peer_s"]
        lines.append(
            f"| {r['workload']} | {r['ours']} | {r['peer']} "
            f"| {o['median']:.2f} ({o['min']:.2f}–{o['max']:.2f}) "
            f"| {p['median']:.2f} ({p['min']:.2f}–{p['max']:.2f}) | **{r['ratio']:.2f}×** | {r['goal']} "
            f"| {r['ours_peak_rss_mb']:.0f} / {r['peer_peak_rss_mb']:.0f} "
            f"| {r['ours_cpu_s']:.2f} + {r['ours_server_cpu_s']:.2f} / "
            f"{r['peer_cpu_s']:.2f} + {r['peer_server_cpu_s']:.2f} |"
        )
    lines += ["", *split_bounds(results)]
    if memory_table:
        small, large = f"{rows_memory(quick) // 5:,}", f"{rows_memory(quick):,}"
        lines += [
            "",
            "Memory (peak RSS in MB of one process, one run each; goal: flat in table size and",
            f"<= 2 x batch_bytes + 150 MiB = {2 * BATCH_BYTES_MIB + 150} MiB with the default"
            f" batch_bytes of {BATCH_BYTES_MIB} MiB; for a writer the bound applies to what it",
            "adds above its source, measured by iterating the same Parquet scan without writing):",
            "",
            f"| path | {small} rows | {large} rows | growth | writer above source | bound | goal |",
            "|---|---|---|---|---|---|---|",
            *memory_table,
        ]
    lines += ["", "Rust-only and emulator figures from the same run:", ""]
    for e in extras:
        lines.append(f"- `{json.dumps(e)}`")
    lines += [
        "",
        f"Loading the read table with `write_doris` took {load_s:.2f} s (not a compared figure).",
        "",
        "Reading the figures: the last column is the CPU time of the measured client process",
        "and of the server during the run (the emulator; MariaDB for 1b). The `mariadb` client",
        "reading the whole table to /dev/null (above) shows what a C client takes to parse every",
        "row; the emulator itself spends ~0.6 s of CPU per 1 M MySQL rows, so workload 1 is bound",
        "by the reader's decoding. Workload 1b is bound by MariaDB: its server spends more CPU",
        "per 1 M rows than our reader does, so the wall-time ratio moves with the server's pace",
        "from run to run; compare the client CPU (ours vs ConnectorX) for the readers' own cost.",
        "The split workloads share the machine's 2 cores between the emulator and the reader",
        "(the bounds under the table); over Flight each of the 8 tasks also pays its own",
        "handshake, GetFlightInfo, DoGet and Daft task, which a read of well under a second",
        "cannot amortise. The write workloads read Parquet through Daft with one scan task at a",
        "time (Daft's default runs several at once and buffered 1.2 GB for 10 M rows before any",
        "writer saw a row).",
        "",
        "![ratios](benchmarks.png)",
        "",
    ]
    (ROOT / "docs/benchmarks.md").write_text("\n".join(lines))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(9, 4))
        labels = [r["workload"].split(" (")[0][:40] for r in results if "memory" not in r["workload"]]
        ratios = [r["ratio"] for r in results if "memory" not in r["workload"]]
        ax.barh(labels, ratios, color="#4c72b0")
        ax.axvline(1.0, color="grey", linestyle="--")
        ax.set_xlabel("peer time / daft_doris time (higher is better)")
        ax.invert_yaxis()
        fig.tight_layout()
        fig.savefig(ROOT / "docs/benchmarks.png", dpi=110)
    except ImportError:
        print("matplotlib is not installed: no chart")


# --- scaling with the number of BEs (simulated) ---------------------------------------------

SCALING_GOAL = 0.75  # speed-up >= 0.75 x N against a single-task read


def start_emulator(binary: str, init_sql: str, *extra: str):
    """Starts the emulator on free ports; returns the process and its ports."""
    process = subprocess.Popen(
        [binary]
        + [a for p in ("fe-http", "be-http", "query", "fe-flight", "be-flight") for a in (f"--{p}-port", "0")]
        + ["--init-sql", init_sql, *extra],
        stdout=subprocess.PIPE,
        text=True,
    )
    return process, json.loads(process.stdout.readline())


def emulator_wire(ports: dict, method: str = "GET") -> dict | None:
    """The emulator's wire gauges (`GET /_emulator/wire`), or a reset of their peaks (`DELETE`)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(
        f"http://127.0.0.1:{ports['fe_http_port']}/_emulator/wire", method=method
    )
    with opener.open(request, timeout=10) as answer:
        body = answer.read()
    return json.loads(body) if body else None


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


def scaling(args) -> None:
    """For N simulated BEs, each paced to the same bandwidth, the time of a single-task read
    and of a split read (8 tasks by tablet), per transport. A single-task read is sunk by one
    BE, so it is bound by one BE's bandwidth whatever N is; the split read can use every BE.
    The ratio single / split is the speed-up N BEs give a split read when the client is not
    the bottleneck (goal: >= 0.75 x N)."""
    quick = args.quick
    rows = args.rows or (20_000 if quick else 400_000)
    bandwidth = args.bandwidth or ("4M" if quick else "16M")
    counts = tuple(args.backends or ((1, 2) if quick else (1, 2, 4)))
    runs = args.runs or (1 if quick else 3)
    one_off = bool(args.rows or args.bandwidth or args.backends or args.runs)
    init = tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False)
    init.write(
        f"CREATE DATABASE bench;\nCREATE TABLE bench.r ({COLUMNS_DDL}) DUPLICATE KEY(`id`) "
        "DISTRIBUTED BY HASH(`id`) BUCKETS 8;\n"
    )
    init.close()
    python = sys.executable
    results = []
    try:
        for n in counts:
            emulator, ports = start_emulator(
                args.emulator_bin, init.name, "--backends", str(n), "--be-bandwidth", bandwidth
            )
            SERVER["pid"] = emulator.pid
            try:
                import daft
                from daft_doris import DorisConnection, DorisTable, write_doris

                connection = DorisConnection(
                    host="127.0.0.1", http_port=ports["fe_http_port"], mysql_port=ports["query_port"]
                )
                write_doris(
                    daft.from_arrow(make_table(rows)), connection=connection, table=DorisTable("bench", "r")
                )
                # Daft's default settings: what a user gets.
                read = {"kind": "read", "ports": ports, "table": "r", "target_tasks": 8}
                for transport in ("mysql", "flight"):
                    emulator_wire(ports, "DELETE")
                    row = compare(
                        f"split read vs single-task read, {transport}, {n} BE(s)",
                        f">= {SCALING_GOAL * n:.2f}",
                        (
                            ("split auto", python, {**read, "transport": transport, "split": "auto"}),
                            ("single", python, {**read, "transport": transport}),
                        ),
                        runs,
                        rows,
                    )
                    # How many result streams the reads held at once (a single-task read holds
                    # one): what the client really ran in parallel.
                    gauge = "mysql_connections" if transport == "mysql" else "flight_streams"
                    row.update(
                        backends=n, transport=transport, peak_streams=emulator_wire(ports)[gauge]["peak"]
                    )
                    print(
                        f"    most {transport} result streams open at once: {row['peak_streams']}", flush=True
                    )
                    results.append(row)
            finally:
                emulator.terminate()
                emulator.wait(timeout=30)
    finally:
        os.unlink(init.name)
    if quick or one_off:
        print("quick or one-off run: docs/scaling.md is written by full runs only")
        return
    write_scaling_report(results, rows, runs, bandwidth)


def write_scaling_report(results, rows, runs, bandwidth) -> None:
    lines = [
        "# Scaling with BEs (simulated)",
        "",
        f"Measured by `cargo xtask bench --scaling` on {datetime.date.today()} on the project machine"
        f" ({CORES} cores), release builds.",
        "",
        "One machine cannot host several real BEs, so the emulator simulates them"
        " (`doris-emulator --backends N --be-bandwidth B`, `tests/emulator/src/backends.rs`):",
        "tablets are dealt over N BEs, `_query_plan` reports each tablet on its BE, every query's",
        "result is sunk by one BE (the least busy holding its tablets; Flight endpoints name",
        "that BE), and each BE sends results no faster than its bandwidth, shared by all its",
        "streams, as a real BE's disk and network bound it. A single-task read is therefore",
        'bound by one BE whatever N is; a split read (`split="auto"`, 8 tablet groups) can',
        "use all of them. Daft's native runner runs about one read task per core (2 here, also",
        "with `scantask_max_parallel` raised, and on the Ray runner's single node), so a Daft",
        "task reads several groups at once (`queries_per_task`, default groups ÷ cores: 4",
        "here) and all 8 queries are open together. Default Daft settings.",
        "",
        f"Table: {rows:,} rows × 8 mixed columns, 8 buckets; each BE paced to {bandwidth}iB/s;"
        f" {runs} runs each, alternating; speed-up = single-task time / split time.",
        "",
        "*streams* is the most result streams the emulator had open at once during the split"
        " reads (MySQL sessions or Flight `DoGet` streams, from `GET /_emulator/wire`): how many"
        " of the 8 tasks the client really ran in parallel.",
        "",
        "| transport | BEs | split (s) | single (s) | speed-up | goal (0.75 × N) | met | streams |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        o, p = r["ours_s"], r["peer_s"]
        goal = SCALING_GOAL * r["backends"]
        lines.append(
            f"| {r['transport']} | {r['backends']} | {o['median']:.2f} ({o['min']:.2f}–{o['max']:.2f}) "
            f"| {p['median']:.2f} ({p['min']:.2f}–{p['max']:.2f}) | **{r['ratio']:.2f}×** | {goal:.2f} "
            f"| {'yes' if r['ratio'] >= goal else 'no'} | {r['peak_streams']} |"
        )
    lines += ["", "![speed-up by BEs](scaling.png)", ""]
    (ROOT / "docs/scaling.md").write_text("\n".join(lines))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4))
        counts = sorted({r["backends"] for r in results})
        ax.plot(counts, counts, color="grey", linestyle="--", label="ideal (N)")
        ax.plot(
            counts, [SCALING_GOAL * n for n in counts], color="grey", linestyle=":", label="goal (0.75 N)"
        )
        for transport, colour in (("mysql", "#4c72b0"), ("flight", "#dd8452")):
            points = sorted((r["backends"], r["ratio"]) for r in results if r["transport"] == transport)
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", color=colour, label=transport)
        ax.set_xlabel("simulated BEs")
        ax.set_ylabel("split read speed-up vs single-task read")
        ax.set_xticks(counts)
        ax.legend()
        fig.tight_layout()
        fig.savefig(ROOT / "docs/scaling.png", dpi=110)
    except ImportError:
        print("matplotlib is not installed: no chart")


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure")
    m.add_argument("case")
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
    if args.command == "measure":
        result = measure(json.loads(args.case))
        result["peak_rss_mb"] = peak_rss_mb()
        print(json.dumps(result))
    elif args.command == "scaling":
        scaling(args)
    elif args.command == "flight":
        flight_shapes(args)
    else:
        orchestrate(args)


if __name__ == "__main__":
    main()
