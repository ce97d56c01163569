"""Reads on Daft's Ray runner (a local Ray cluster started by the test), writes refused there.

Daft fixes its runner once per process, so the Ray part runs in a child interpreter.
"""

import json
import subprocess
import sys
import textwrap

import pymysql
import pytest
from conftest import run_emulator

SCRIPT = textwrap.dedent(
    """
    import json, sys
    import daft, ray
    from daft_doris import ConfigurationError, DorisConnection, DorisTable, read_doris, write_doris

    ports = json.loads(sys.argv[1])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    daft.set_runner_ray()
    frame = read_doris(host="127.0.0.1", mysql_port=ports["query_port"], http_port=ports["fe_http_port"],
                       database="r", table="t", transport="mysql", split="auto", target_tasks=4)
    data = frame.to_pydict()
    refused = None
    try:
        write_doris(daft.from_pydict({"id": [1], "v": [1]}),
                    connection=DorisConnection(host="127.0.0.1", http_port=ports["fe_http_port"],
                                               mysql_port=ports["query_port"]),
                    table=DorisTable("r", "t"))
    except ConfigurationError as e:
        refused = str(e)
    runner = daft.get_or_infer_runner_type()
    print(json.dumps({"ids": sorted(data["id"]), "runner": runner, "refused": refused}))
    """
)


@pytest.fixture(scope="module")
def doris():
    init = (
        "CREATE DATABASE r;\n"
        "CREATE TABLE r.t (`id` INT NOT NULL, `v` INT NULL) DUPLICATE KEY(`id`)"
        " DISTRIBUTED BY HASH(`id`) BUCKETS 8;\n"
    )
    with run_emulator(init) as ports:
        conn = pymysql.connect(host="127.0.0.1", port=ports["query_port"], user="root", database="r")
        with conn, conn.cursor() as cur:
            cur.execute("INSERT INTO t VALUES " + ", ".join(f"({i}, {i * 2})" for i in range(200)))
        yield ports


def test_split_read_runs_on_ray_workers_and_writes_are_refused(doris):
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(doris)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["runner"] == "ray"
    assert result["ids"] == list(range(200))
    assert result["refused"] and "native runner" in result["refused"]
