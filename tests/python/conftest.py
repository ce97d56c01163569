"""Shared fixtures: Doris emulator processes.

The emulator binary comes from the Rust build (`cargo test --workspace` builds it);
`DORIS_EMULATOR_BIN` names it, `cargo xtask ci` sets it.
"""

import contextlib
import json
import os
import subprocess
import tempfile

import pytest


@contextlib.contextmanager
def run_emulator(init_sql: str):
    """Starts an emulator with `init_sql` run first; yields its ports (and `host`)."""
    binary = os.environ.get("DORIS_EMULATOR_BIN")
    assert binary and os.path.exists(binary), "DORIS_EMULATOR_BIN must name the doris-emulator binary"
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as init:
        init.write(init_sql)
    process = subprocess.Popen(
        [binary, "--fe-http-port", "0", "--be-http-port", "0", "--query-port", "0", "--init-sql", init.name],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        ports = json.loads(process.stdout.readline())
        ports["host"] = "127.0.0.1"
        yield ports
    finally:
        process.terminate()
        process.wait(timeout=10)
        os.unlink(init.name)


@pytest.fixture(scope="module")
def emulator():
    with run_emulator(
        "CREATE DATABASE demo;\n"
        "CREATE TABLE demo.orders (`id` BIGINT NOT NULL, `amount` DECIMAL(20, 6) NULL,"
        " `ts` DATETIME(3) NULL) UNIQUE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 2"
        ' PROPERTIES ("enable_unique_key_merge_on_write" = "true");\n'
        "CREATE USER 'alice'@'%' IDENTIFIED BY 'pw';\n"
    ) as ports:
        yield ports
