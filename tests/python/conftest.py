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

pytest.register_assert_rewrite("secret_sweep")
from secret_sweep import KNOWN_SECRET  # noqa: E402

# Every test runs under the secret sweep (see secret_sweep.py); the modules that start their
# emulator with `root_password=ROOT_PASSWORD` use the sweep's known secret for root.
pytest_plugins = ["secret_sweep"]
ROOT_PASSWORD = KNOWN_SECRET


@contextlib.contextmanager
def run_emulator(init_sql: str, extra_args=(), ports=None, root_password=None):
    """Starts an emulator with `init_sql` run first; yields its ports (and `host`, and the
    process id as `pid`). `extra_args` are more flags; `ports` (a dict of an earlier run) reuses
    that run's FE HTTP, BE HTTP and query ports; `root_password` sets root's password."""
    binary = os.environ.get("DORIS_EMULATOR_BIN")
    assert binary and os.path.exists(binary), "DORIS_EMULATOR_BIN must name the doris-emulator binary"
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as init:
        init.write(init_sql)
    ports = ports or {}
    process = subprocess.Popen(
        [
            binary,
            *("--fe-http-port", str(ports.get("fe_http_port", 0))),
            *("--be-http-port", str(ports.get("be_http_port", 0))),
            *("--query-port", str(ports.get("query_port", 0))),
            *("--init-sql", init.name),
            *(("--root-password", root_password) if root_password else ()),
            *extra_args,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        bound = json.loads(process.stdout.readline())
        bound["host"] = "127.0.0.1"
        bound["pid"] = process.pid
        yield bound
    finally:
        if process.poll() is None:
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


def key_label(key, prefix="daft_doris"):
    """The label an atomic write takes for ``key``, written here from the rule in
    docs/consistency.md (not from the code): letters and digits of the key stand, every
    other byte becomes ``_`` and two upper-case hex digits."""
    out = "".join(chr(b) if chr(b).isascii() and chr(b).isalnum() else f"_{b:02X}" for b in key.encode())
    return f"{prefix}_{out}"


def label_shown(run_sql, database, label):
    """Whether Doris knows ``label`` (``SHOW TRANSACTION``): an unknown label is an error,
    ``transaction with label … does not exist``, which is False here."""
    try:
        return bool(run_sql(f"SHOW TRANSACTION FROM {database} WHERE LABEL = '{label}'"))
    except Exception as e:  # noqa: BLE001 - the driver's error class varies
        if "does not exist" in str(e):
            return False
        raise
