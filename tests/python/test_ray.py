"""Reads and atomic writes on Daft's Ray runner (a local Ray cluster started by the test);
the write modes whose guarantees do not hold under task retries are refused there.

Daft fixes its runner once per process, so the Ray part runs in a child interpreter.
"""

import contextlib
import json
import subprocess
import sys
import textwrap

import pymysql
import pytest
from conftest import run_emulator

SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    import daft, ray
    from daft_doris import (ConfigurationError, DorisConnection, DorisTable, SecretRef, read_doris,
                            write_doris)

    ports = json.loads(sys.argv[1])
    # The workers Ray starts inherit this environment: SecretRef.env resolves there.
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    daft.set_runner_ray()
    secret = os.environ["RAY_DORIS_PW"]

    def read_as_rayer(password):
        return read_doris(host="127.0.0.1", mysql_port=ports["query_port"], http_port=ports["fe_http_port"],
                          database="r", table="t", transport="mysql", split="auto", target_tasks=4,
                          username="rayer", password=password).to_pydict()

    # A password the user chose to send, or one each worker reads: the split read runs there.
    secret_reads = {name: len(read_as_rayer(password)["id"]) for name, password in (
        ("env", SecretRef.env("RAY_DORIS_PW")), ("file", SecretRef.file(sys.argv[2])),
        ("inline", SecretRef.inline(secret)))}
    # A plain string stays in the driver: refused before any task is made.
    plain = {}
    try:
        read_as_rayer(secret)
    except ConfigurationError as e:
        plain["read"] = str(e)
    try:
        write_doris(daft.from_pydict({"id": [1], "v": [1]}),
                    connection=DorisConnection(host="127.0.0.1", http_port=ports["fe_http_port"],
                                               mysql_port=ports["query_port"], username="rayer",
                                               password=secret),
                    table=DorisTable("w", "t"), idempotence_key="ray-plain")
    except ConfigurationError as e:
        plain["write"] = str(e)
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
                      "statuses": statuses, "written": sorted(written["id"]),
                      "secret_reads": secret_reads, "plain": plain}))
    """
)


# The password of the reads that go through SecretRef (env, file, inline) on Ray workers.
RAY_PASSWORD = "r4y-w0rker-secret"


@pytest.fixture(scope="module")
def doris():
    init = (
        "CREATE DATABASE r;\n"
        "CREATE TABLE r.t (`id` INT NOT NULL, `v` INT NULL) DUPLICATE KEY(`id`)"
        " DISTRIBUTED BY HASH(`id`) BUCKETS 8;\n"
        "CREATE DATABASE w;\n"
        "CREATE TABLE w.t (`id` INT NOT NULL, `v` INT NULL) DUPLICATE KEY(`id`)"
        " DISTRIBUTED BY HASH(`id`) BUCKETS 4;\n"
        f"CREATE USER 'rayer'@'%' IDENTIFIED BY '{RAY_PASSWORD}';\n"
        "GRANT SELECT_PRIV ON r.* TO 'rayer'@'%';\n"
        "GRANT SELECT_PRIV, LOAD_PRIV ON w.* TO 'rayer'@'%';\n"
    )
    with run_emulator(init) as ports:
        conn = pymysql.connect(host="127.0.0.1", port=ports["query_port"], user="root", database="r")
        with conn, conn.cursor() as cur:
            cur.execute("INSERT INTO t VALUES " + ", ".join(f"({i}, {i * 2})" for i in range(200)))
        yield ports


def test_split_reads_and_atomic_writes_run_on_ray_workers(doris, tmp_path):
    import os

    password_file = tmp_path / "password"
    password_file.write_text(RAY_PASSWORD + "\n")
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(doris), str(password_file)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "RAY_DORIS_PW": RAY_PASSWORD},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["runner"] == "ray"
    assert result["ids"] == list(range(200))
    assert result["refused"] and "atomic=True" in result["refused"]
    assert "require Daft's native runner" in result["refused"], "1.1's words kept"
    assert result["statuses"] == ["success", "already_committed"]
    assert result["written"] == list(range(1000, 1300))
    # SecretRef.env, .file and .inline reach the workers; a plain string is refused before
    # any task is made, naming the choices, and never shown.
    assert result["secret_reads"] == {"env": 200, "file": 200, "inline": 200}
    assert set(result["plain"]) == {"read", "write"}
    for message in result["plain"].values():
        assert "SecretRef.env" in message and "SecretRef.inline" in message and RAY_PASSWORD not in message


KILL_SCRIPT = textwrap.dedent(
    """
    import glob, json, os, signal, sys, threading, time, urllib.request
    import daft, ray
    from daft_doris import DorisConnection, DorisTable, read_doris, write_doris

    ports = json.loads(sys.argv[1])
    fe = f"http://127.0.0.1:{ports['fe_http_port']}"
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    daft.set_runner_ray()
    connection = DorisConnection(host="127.0.0.1", http_port=ports["fe_http_port"],
                                 mysql_port=ports["query_port"])
    rows = daft.from_pydict({"id": list(range(5000, 5400)), "v": list(range(400))})

    def faults(method, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"{fe}/_emulator/faults", data=data, method=method)
        urllib.request.urlopen(req, timeout=10).read()

    def staging_txns():
        txns = json.load(urllib.request.urlopen(f"{fe}/_emulator/txns/w", timeout=10))["txns"]
        return [t for t in txns if t["table"].startswith("daft_doris_stage_")]

    earlier = {t["txn_id"] for t in staging_txns()}

    def staging_loads(state):
        # This write's staging loads only (the module's other tests wrote to `w` too).
        return sum(1 for t in staging_txns() if t["txn_id"] not in earlier and t["state"] == state)

    killed = []
    def kill_the_writing_worker():
        # Once three staging loads have committed (the tasks are mid-write), SIGKILL the
        # Ray worker process running the sink: its committed loads are orphaned.
        deadline = time.time() + 120
        while time.time() < deadline and staging_loads("VISIBLE") < 3:
            time.sleep(0.02)
        for proc in glob.glob("/proc/[0-9]*"):
            try:
                cmd = open(proc + "/cmdline", "rb").read()
            except OSError:
                continue
            # The worker's process title is `ray::<stage>->DataSink` while it runs the sink.
            if cmd.startswith(b"ray::") and b"DataSink" in cmd:
                os.kill(int(proc[6:]), signal.SIGKILL)
                killed.append(int(proc[6:]))

    faults("POST", {"kind": "delay", "ms": 60, "times": 100000})
    killer = threading.Thread(target=kill_the_writing_worker, daemon=True)
    killer.start()
    try:
        first = write_doris(rows.repartition(4), connection=connection, table=DorisTable("w", "t"),
                            idempotence_key="ray-kill", batch_rows=10).to_pydict()["status"][0]
    except Exception as e:
        first = f"raised {type(e).__name__}"
    killer.join(timeout=5)
    staged = staging_loads("VISIBLE")
    faults("DELETE")
    again = write_doris(rows.repartition(3), connection=connection, table=DorisTable("w", "t"),
                        idempotence_key="ray-kill").to_pydict()["status"][0]
    written = read_doris(host="127.0.0.1", mysql_port=ports["query_port"], http_port=ports["fe_http_port"],
                         database="w", table="t", transport="mysql").to_pydict()
    print(json.dumps({"killed": killed, "first": first, "again": again, "staged_loads": staged,
                      "ids": sorted(i for i in written["id"] if i >= 5000)}))
    """
)


def test_an_atomic_write_whose_ray_worker_is_killed_ends_with_every_row_once(doris, capsys):
    out = subprocess.run(
        [sys.executable, "-c", KILL_SCRIPT, json.dumps(doris)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    with capsys.disabled():
        print(
            f"\n[ray] worker killed mid-write: first write {result['first']}, "
            f"{result['staged_loads']} staging loads committed for 40 loads of data, rerun {result['again']}"
        )
    assert result["killed"], "no Ray worker was running the sink"
    # The killed attempt's committed staging loads were orphaned (more than the 40 loads the
    # 400 rows need), yet the table holds every row exactly once.
    assert result["staged_loads"] > 40
    assert result["ids"] == list(range(5000, 5400))
    # Whether Ray retried the task (success) or the write failed, the key's rerun is a no-op
    # or completes it: never a second copy. A first write that succeeded leaves the rerun
    # nothing to do.
    if result["first"] == "success":
        assert result["again"] == "already_committed", result
    else:
        assert result["again"] in ("already_committed", "success"), result


DRIVER_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import daft, ray
    from daft_doris import DorisConnection, DorisTable, write_doris

    ports, key = json.loads(sys.argv[1]), sys.argv[2]
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    daft.set_runner_ray()
    rows = daft.from_pydict({"id": list(range(7000, 7400)), "v": list(range(400))})
    print("ready", flush=True)
    write_doris(rows.repartition(4), table=DorisTable("w", "t"), idempotence_key=key, batch_rows=10,
                connection=DorisConnection(host="127.0.0.1", http_port=ports["fe_http_port"],
                                           mysql_port=ports["query_port"])).collect()
    print("done", flush=True)
    """
)


def emulator_get(ports, path):
    import urllib.request

    url = f"http://127.0.0.1:{ports['fe_http_port']}{path}"
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def emulator_faults(ports, method, body=None):
    import urllib.request

    data = None if body is None else json.dumps(body).encode()
    url = f"http://127.0.0.1:{ports['fe_http_port']}/_emulator/faults"
    urllib.request.urlopen(urllib.request.Request(url, data=data, method=method), timeout=10).read()


def staging_loads_of(ports, earlier):
    txns = emulator_get(ports, "/_emulator/txns/w")["txns"]
    return [t for t in txns if t["table"].startswith("daft_doris_stage_") and t["txn_id"] not in earlier]


def test_an_atomic_write_whose_ray_driver_is_killed_is_completed_once_by_a_rerun(doris, capsys):
    """The driver process (Daft's Ray runner) is SIGKILLed once the write's staging loads
    are committing; the rerun of the key, from another process on the native runner,
    leaves every row exactly once."""
    import os
    import signal
    import time

    import daft
    from daft_doris import DorisConnection, DorisTable, write_doris

    earlier = {t["txn_id"] for t in staging_loads_of(doris, set())}
    emulator_faults(doris, "POST", {"kind": "delay", "ms": 60, "times": 100_000})
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER_SCRIPT, json.dumps(doris), "ray-driver-kill"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        assert driver.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 180
        while sum(t["state"] == "VISIBLE" for t in staging_loads_of(doris, earlier)) < 3:
            assert driver.poll() is None, "the driver ended before its loads were staged"
            assert time.monotonic() < deadline, "the write never staged three loads"
            time.sleep(0.02)
        staged_at_kill = sum(t["state"] == "VISIBLE" for t in staging_loads_of(doris, earlier))
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait(timeout=30)
    finally:
        # The Ray processes the driver started die with its session.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(driver.pid, signal.SIGKILL)
        emulator_faults(doris, "DELETE")
    summary = write_doris(
        daft.from_pydict({"id": list(range(7000, 7400)), "v": list(range(400))}),
        connection=DorisConnection(
            host="127.0.0.1", http_port=doris["fe_http_port"], mysql_port=doris["query_port"]
        ),
        table=DorisTable("w", "t"),
        idempotence_key="ray-driver-kill",
    ).to_pydict()
    conn = pymysql.connect(host="127.0.0.1", port=doris["query_port"], user="root", database="w")
    with conn, conn.cursor() as cur:
        cur.execute("SELECT id FROM t WHERE id >= 7000 AND id < 7400")
        ids = sorted(r[0] for r in cur.fetchall())
    with capsys.disabled():
        print(
            f"\n[ray] driver killed with {staged_at_kill} staging loads committed: "
            f"rerun {summary['status'][0]}, {len(ids)} rows for 400"
        )
    assert summary["status"][0] == "success", "the killed driver never published"
    assert ids == list(range(7000, 7400))


CLUSTER_SCRIPT = textwrap.dedent(
    """
    import json, sys, threading, time, urllib.request
    import daft, ray
    from ray.cluster_utils import Cluster
    from daft_doris import DorisConnection, DorisTable, read_doris, write_doris

    ports = json.loads(sys.argv[1])
    fe = f"http://127.0.0.1:{ports['fe_http_port']}"
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    workers = [cluster.add_node(num_cpus=1) for _ in range(2)]
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    daft.set_runner_ray(address=cluster.address)

    def staging_loads():
        txns = json.load(urllib.request.urlopen(f"{fe}/_emulator/txns/w", timeout=10))["txns"]
        return [t for t in txns if t["table"].startswith("daft_doris_stage_") and t["state"] == "VISIBLE"]

    earlier = len(staging_loads())
    removed = []
    def remove_a_node():
        deadline = time.time() + 180
        while time.time() < deadline and len(staging_loads()) - earlier < 3:
            time.sleep(0.02)
        cluster.remove_node(workers[0], allow_graceful=False)
        removed.append(len(staging_loads()) - earlier)

    connection = DorisConnection(host="127.0.0.1", http_port=ports["fe_http_port"],
                                 mysql_port=ports["query_port"])
    rows = daft.from_pydict({"id": list(range(9000, 9400)), "v": list(range(400))})
    remover = threading.Thread(target=remove_a_node, daemon=True)
    remover.start()
    try:
        first = write_doris(rows.repartition(6), connection=connection, table=DorisTable("w", "t"),
                            idempotence_key="ray-node-lost", batch_rows=10).to_pydict()["status"][0]
    except Exception as e:
        first = f"raised {type(e).__name__}"
    remover.join(timeout=60)
    again = write_doris(rows.repartition(2), connection=connection, table=DorisTable("w", "t"),
                        idempotence_key="ray-node-lost").to_pydict()["status"][0]
    written = read_doris(host="127.0.0.1", mysql_port=ports["query_port"], http_port=ports["fe_http_port"],
                         database="w", table="t", transport="mysql").to_pydict()
    print("RESULT " + json.dumps({"removed_after": removed, "first": first, "again": again,
                                  "ids": sorted(i for i in written["id"] if 9000 <= i < 9400)}),
          flush=True)
    ray.shutdown()
    cluster.shutdown()
    """
)


def test_an_atomic_write_on_a_three_node_ray_cluster_survives_losing_a_node(doris, capsys):
    """A local Ray cluster of three nodes (ray.cluster_utils.Cluster); a worker node is
    removed without grace once the write's staging loads are committing. Ray reruns the
    lost tasks (or the write fails loudly); either way the key's rerun ends with every row
    exactly once."""
    emulator_faults(doris, "POST", {"kind": "delay", "ms": 40, "times": 100_000})
    try:
        out = subprocess.run(
            [sys.executable, "-c", CLUSTER_SCRIPT, json.dumps(doris)],
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        emulator_faults(doris, "DELETE")
    assert out.returncode == 0, out.stderr[-3000:]
    # Ray's shutdown may print after the result: take the marked line.
    result = json.loads(next(line[7:] for line in out.stdout.splitlines() if line.startswith("RESULT ")))
    with capsys.disabled():
        print(
            f"\n[ray] a node of 3 removed after {result['removed_after']} staging loads: "
            f"first write {result['first']}, rerun {result['again']}"
        )
    assert result["removed_after"], "the node was never removed"
    assert result["ids"] == list(range(9000, 9400))
    if result["first"] == "success":
        assert result["again"] == "already_committed", result
    else:
        assert result["again"] in ("already_committed", "success"), result
