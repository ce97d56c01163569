"""What every benchmark shares: child measurements run alternately and compared, the CPU
time of the server and the clients, and the emulator process.

`compare` is the unit of every report: it runs two implementations `runs` times each,
alternating, each run in its own process (`bench_measure.py`), checks each run's row
count, and returns one row of medians, ranges, peak RSS and CPU time.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
MEASURE = Path(__file__).resolve().with_name("bench_measure.py")
CORES = os.cpu_count() or 1


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
        [python, str(MEASURE), json.dumps(case)],
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


# A report's hand-written part starts at this line; a full run rewrites what comes before.
HAND_WRITTEN = "<!-- Below: written by hand; a full benchmark run keeps it. -->"


def write_keeping_hand_written(path, generated: str) -> None:
    """Writes `generated` to `path`, followed by the hand-written part of the file already
    there (from `HAND_WRITTEN` on), which a full run must not lose."""
    kept = ""
    if path.exists():
        old = path.read_text()
        if HAND_WRITTEN in old:
            kept = old[old.index(HAND_WRITTEN) :]
    text = generated.rstrip("\n") + "\n"
    if kept:
        text += "\n" + kept
    path.write_text(text)
