"""One measurement, in its own process: `python bench_measure.py '<json case>'` prints
`{"seconds": s, "cpu_s": c, "rows": n, "peak_rss_mb": m}` as its last line.

The orchestrator (`bench.py`, through `bench_harness.run_child`) starts one such process per
run, with our Python or the reference's, so each figure's peak RSS is that process's alone.
Only the standard library and `bench_tables` are imported at the top: the reference's
environment runs this file too.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from bench_tables import make_table

MARIADB_URL = "mysql://root@127.0.0.1:3306/test"


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
        if case.get("user"):
            kwargs.update(username=case["user"], password=case["password"])
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
                _native.DorisConnection(host="127.0.0.1", mysql_port=3306, username="root"),
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


def peak_rss_mb() -> float:
    """This process's peak resident set (VmHWM; a fresh exec starts its own count, unlike
    `ru_maxrss`, which keeps the forking parent's high-water mark)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


if __name__ == "__main__":
    result = measure(json.loads(sys.argv[1]))
    result["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(result))
