"""The Rust crates' `tracing` events reach Python's `logging` under the logger `daft_doris`
(crates/daft-doris-py/src/logging.rs): INFO, one line per load, per atomic publish and per
read task; DEBUG, every attempt and redirect. No line holds the password."""

import logging

import daft
from conftest import ROOT_PASSWORD, key_label, run_emulator
from daft_doris import DorisConnection, DorisTable, read_doris, write_doris

INIT = (
    "CREATE DATABASE logs;\n"
    "CREATE TABLE logs.t (`id` BIGINT NOT NULL, `v` VARCHAR(16) NULL) "
    "DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 2;\n"
)


def test_loads_publishes_and_reads_are_logged_without_the_password(caplog):
    with run_emulator(INIT, root_password=ROOT_PASSWORD) as ports:
        connection = DorisConnection(
            host="127.0.0.1",
            http_port=ports["fe_http_port"],
            mysql_port=ports["query_port"],
            password=ROOT_PASSWORD,
        )
        frame = daft.from_pydict({"id": [1, 2, 3], "v": ["a", "b", "c"]})
        with caplog.at_level(logging.DEBUG, logger="daft_doris"):
            write_doris(frame, connection=connection, table=DorisTable("logs", "t"))
            write_doris(
                frame, connection=connection, table=DorisTable("logs", "t"), idempotence_key="logged-key-1"
            )
            rows = read_doris(
                host="127.0.0.1",
                mysql_port=ports["query_port"],
                http_port=ports["fe_http_port"],
                password=ROOT_PASSWORD,
                database="logs",
                table="t",
                transport="mysql",
            ).to_pydict()
        assert sorted(rows["id"]) == [1, 1, 2, 2, 3, 3]
        records = [r for r in caplog.records if r.name == "daft_doris"]
        info = [r.getMessage() for r in records if r.levelno == logging.INFO]
        debug = [r.getMessage() for r in records if r.levelno == logging.DEBUG]
        # One INFO line per load: its label, status, rows and time.
        loads = [m for m in info if m.startswith("stream load ")]
        assert loads and all("label=" in m and "status=" in m and "seconds=" in m for m in loads), info
        # The exactly-once write's publish names the key's label and its rows.
        assert any(
            m.startswith("atomic publish") and key_label("logged-key-1") in m and "rows=Some(3)" in m
            for m in info
        ), info
        # A read task: its rows.
        assert any(m.startswith("read ") and "rows=6" in m for m in info), info
        assert any(m.startswith("stream load attempt") and "attempt=1" in m for m in debug), debug
        assert all(ROOT_PASSWORD not in r.getMessage() for r in records)


def test_nothing_is_formatted_when_the_logger_is_quiet(caplog):
    """At the default WARNING level no INFO or DEBUG record is made (the layer asks
    `isEnabledFor` before formatting)."""
    with run_emulator(INIT) as ports:
        connection = DorisConnection(
            host="127.0.0.1", http_port=ports["fe_http_port"], mysql_port=ports["query_port"]
        )
        with caplog.at_level(logging.WARNING, logger="daft_doris"):
            write_doris(
                daft.from_pydict({"id": [7], "v": ["q"]}),
                connection=connection,
                table=DorisTable("logs", "t"),
            )
        assert not [r for r in caplog.records if r.name == "daft_doris" and r.levelno < logging.WARNING]


# A process that exits while the binding's threads are still busy: split reads started and
# left open (their producers on the runtime's threads, one batch taken), loads that ran
# just before, the logger at DEBUG. At `atexit` the runtime ends and no thread of ours takes
# the GIL again (crates/daft-doris-py/src/runtime.rs).
EXIT_WHILE_BUSY = """
import asyncio, logging, sys, time
import pyarrow as pa
from daft.io.pushdowns import Pushdowns
from daft.recordbatch import MicroPartition
from daft_doris import DorisConnection, DorisDataSink, DorisDataSource, DorisTable

logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
host, http_port, query_port, password, pause = sys.argv[1:6]
connection = DorisConnection(
    host=host, http_port=int(http_port), mysql_port=int(query_port), password=password
)
data = pa.table({"id": pa.array(range(2000), pa.int64()), "v": ["x"] * 2000})
sink = DorisDataSink(connection, DorisTable("logs", "t"))
sink.bind_schema(data.schema)
sink.start()
list(sink.write(iter([MicroPartition.from_arrow(data)])))
source = DorisDataSource(
    host=host, mysql_port=int(query_port), http_port=int(http_port), password=password,
    database="logs", table="t", transport="mysql", split="auto", batch_rows=1,
)

async def start_reads():
    reads = [task.read() async for task in source.get_tasks(Pushdowns())]
    for read in reads:
        await read.__anext__()
    return reads

loop = asyncio.new_event_loop()
open_reads = loop.run_until_complete(start_reads())
time.sleep(float(pause))
sys.exit(0)
"""


def test_the_process_exits_cleanly_while_native_threads_still_log(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "exit_while_busy.py"
    script.write_text(EXIT_WHILE_BUSY)
    with run_emulator(INIT, root_password=ROOT_PASSWORD) as ports:
        # Exits at once and after the producers have filled their channels, several times.
        for pause in ("0", "0", "0.1", "0.5"):
            done = subprocess.run(
                [
                    sys.executable,
                    str(script),
                    "127.0.0.1",
                    str(ports["fe_http_port"]),
                    str(ports["query_port"]),
                    ROOT_PASSWORD,
                    pause,
                ],
                capture_output=True,
                text=True,
                timeout=120,
            )
            tail = done.stderr[-2000:]
            assert done.returncode == 0, f"pause {pause}: exit status {done.returncode}\n{tail}"
            assert "Fatal Python error" not in done.stderr and "panicked" not in done.stderr, tail
