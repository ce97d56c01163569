"""Reads and atomic writes on Daft's Ray runner (a local Ray cluster started by the test);
the write modes whose guarantees do not hold under task retries are refused there.

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
    # An atomic write from four partitions, then the same write again (a rerun of a job whose
    # partitioning differs): one commit for the key.
    connection = DorisConnection(host="127.0.0.1", http_port=ports["fe_http_port"],
                                 mysql_port=ports["query_port"])
    rows = daft.from_pydict({"id": list(range(1000, 1300)), "v": list(range(300))})
    statuses = []
    for parts in (4, 3):
        summary = write_doris(rows.repartition(parts), connection=connection, table=DorisTable("w", "t"),
                              idempotence_key="ray-run-1", batch_rows=50).to_pydict()
        statuses.append(summary["status"][0])
    written = read_doris(host="127.0.0.1", mysql_port=ports["query_port"], http_port=ports["fe_http_port"],
                         database="w", table="t", transport="mysql").to_pydict()
    runner = daft.get_or_infer_runner_type()
    print(json.dumps({"ids": sorted(data["id"]), "runner": runner, "refused": refused,
                      "statuses": statuses, "written": sorted(written["id"])}))
    """
)


@pytest.fixture(scope="module")
def doris():
    init = (
        "CREATE DATABASE r;\n"
        "CREATE TABLE r.t (`id` INT NOT NULL, `v` INT NULL) DUPLICATE KEY(`id`)"
        " DISTRIBUTED BY HASH(`id`) BUCKETS 8;\n"
        "CREATE DATABASE w;\n"
        "CREATE TABLE w.t (`id` INT NOT NULL, `v` INT NULL) DUPLICATE KEY(`id`)"
        " DISTRIBUTED BY HASH(`id`) BUCKETS 4;\n"
    )
    with run_emulator(init) as ports:
        conn = pymysql.connect(host="127.0.0.1", port=ports["query_port"], user="root", database="r")
        with conn, conn.cursor() as cur:
            cur.execute("INSERT INTO t VALUES " + ", ".join(f"({i}, {i * 2})" for i in range(200)))
        yield ports


def test_split_reads_and_atomic_writes_run_on_ray_workers(doris):
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
    assert result["refused"] and "atomic=True" in result["refused"]
    assert result["statuses"] == ["success", "already_committed"]
    assert result["written"] == list(range(1000, 1300))
