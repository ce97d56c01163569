"""`bench.py scaling`: split reads against single-task reads on an emulator that simulates N
BEs, each paced to one bandwidth (docs/scaling.md, docs/scaling.png)."""

from __future__ import annotations

import datetime
import os
import sys
import tempfile

from bench_harness import (
    CORES,
    ROOT,
    SERVER,
    compare,
    emulator_wire,
    start_emulator,
    write_keeping_hand_written,
)
from bench_tables import COLUMNS_DDL, make_table

SCALING_GOAL = 0.75  # speed-up >= 0.75 x N against a single-task read


def scaling(args) -> None:
    """For N simulated BEs, each paced to the same bandwidth, the time of a single-task read
    and of a split read (8 tasks by tablet), per transport. A single-task read is sunk by one
    BE, so it is bound by one BE's bandwidth whatever N is; the split read can use every BE.
    The ratio single / split is the speed-up N BEs give a split read when the client is not
    the bottleneck (goal: >= 0.75 x N)."""
    quick = args.quick
    rows = args.rows or (20_000 if quick else 400_000)
    # Per BE: low enough that 4 BEs together send less than the 2-core client can take in
    # (the question is how reads scale when the BEs, not the client, are the bound). At
    # 16 MiB/s the Flight split read over 4 BEs was client-bound (1.00 s against the 0.73 s
    # the BEs allowed, 2026-12-02), so the full run paces each BE to 8 MiB/s.
    bandwidth = args.bandwidth or ("4M" if quick else "8M")
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
        f"Table: {rows:,} rows × 8 mixed columns, 8 buckets; each BE paced to {bandwidth}iB/s"
        " (low enough that N BEs together send less than this 2-core client can take in: the"
        " question is how reads scale when the BEs are the bound);"
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
    write_keeping_hand_written(ROOT / "docs/scaling.md", "\n".join(lines))
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
