"""Where an atomic write's time goes, against the default write (docs/benchmarks.md).

An atomic write checks its key and creates a staging table (`begin`), stages its rows
through Stream Load (as the default write loads them), then publishes them in one Doris
transaction: `BEGIN WITH LABEL`, `INSERT INTO target SELECT … FROM staging WHERE tag IN
(…)`, the commit ledger's `INSERT … SELECT … COUNT(*)`, `COMMIT`, and drops the staging
table (`publish`). This script times, on one emulator process and the same rows, the
default write and the atomic write, and inside the atomic write its `begin` and `publish`
calls (the rest is the staging loads and the table check, as in the default write).

    python crates/daft-doris-py/benches/publish_breakdown.py \\
        --emulator-bin <release doris-emulator> --rows 1000000 --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))

from bench_harness import start_emulator  # noqa: E402
from bench_tables import COLUMNS_DDL, make_table  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--emulator-bin", required=True)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    import daft
    import pymysql
    from daft_doris import DorisConnection, DorisTable, write_doris

    init = "CREATE DATABASE bench;\n" + "".join(
        f"CREATE TABLE bench.{t} ({COLUMNS_DDL}) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 8;\n"
        for t in ("w",)
    )
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as script:
        script.write(init)
    process, ports = start_emulator(args.emulator_bin, script.name)
    try:
        connection = DorisConnection(
            host="127.0.0.1", http_port=ports["fe_http_port"], mysql_port=ports["query_port"]
        )
        frame = daft.from_arrow(make_table(args.rows))
        target = DorisTable("bench", "w")

        def sql(statement: str):
            c = pymysql.connect(host="127.0.0.1", port=ports["query_port"], user="root", database="bench")
            with c, c.cursor() as cur:
                cur.execute(statement)
                return cur.fetchall()

        def timed(run) -> float:
            sql("TRUNCATE TABLE w")
            started = time.perf_counter()
            run()
            return time.perf_counter() - started

        # The atomic write's two SQL phases, timed where the sink runs them: start (the
        # table check and the begin) and finalize (the publish).
        from daft_doris.write import DorisDataSink

        phases: dict[str, float] = {}

        def timing(name, call):
            def timed(*a, **k):
                started = time.perf_counter()
                try:
                    return call(*a, **k)
                finally:
                    phases[name] = phases.get(name, 0.0) + time.perf_counter() - started

            return timed

        DorisDataSink.start = timing("begin", DorisDataSink.start)
        DorisDataSink.finalize = timing("publish", DorisDataSink.finalize)
        figures: dict[str, list[float]] = {
            k: [] for k in ("default", "atomic", "begin", "publish", "staging")
        }
        for i in range(args.runs):
            figures["default"].append(timed(lambda: write_doris(frame, connection=connection, table=target)))
            phases.clear()
            atomic = timed(
                lambda i=i: write_doris(
                    frame,
                    connection=connection,
                    table=target,
                    idempotence_key=f"breakdown-{time.time_ns()}-{i}",
                )
            )
            figures["atomic"].append(atomic)
            figures["begin"].append(phases["begin"])
            figures["publish"].append(phases["publish"])
            figures["staging"].append(atomic - phases["begin"] - phases["publish"])
        medians = {k: round(statistics.median(v), 3) for k, v in figures.items()}
        print(
            json.dumps(
                {
                    "workload": "atomic write breakdown (DUPLICATE, 8 columns)",
                    "rows": args.rows,
                    "runs": args.runs,
                    "median_s": medians,
                    "atomic_over_default": round(medians["default"] / medians["atomic"], 2),
                    "publish_share_of_atomic": round(medians["publish"] / medians["atomic"], 2),
                }
            )
        )
    finally:
        process.terminate()
        process.wait(timeout=30)
        os.unlink(script.name)


if __name__ == "__main__":
    main()
