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
