"""Streaming jobs end to end against the emulator: files appear over time and each row lands
exactly once; a failed task pauses the job and keeps the offset; ALTER only while PAUSED;
the staging helper refuses names below the offset; a crash of the emulator mid-job neither
duplicates nor skips a file; jobs()/tasks() follow the job's progress."""

import contextlib
import os
import signal
import tempfile
import time
from pathlib import Path

import daft
import pyarrow.fs as pafs
import pymysql
import pytest
from conftest import run_emulator
from daft_doris import (
    ConfigurationError,
    DorisConnection,
    DorisStreamingJobError,
    DorisTable,
    S3Source,
    StagingOrderError,
    StreamingJob,
    TransportError,
    read_doris,
    streaming,
)

INIT = """
CREATE DATABASE s;
CREATE TABLE s.events (`id` BIGINT NOT NULL, `name` VARCHAR(16) NULL)
  DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 2;
"""
TABLE = DorisTable("s", "events")


@contextlib.contextmanager
def emulator_with_bucket(data_dir=None):
    with tempfile.TemporaryDirectory() as root:
        (Path(root) / "bkt" / "in").mkdir(parents=True)
        args = ["--s3-root", root] + (["--data-dir", str(data_dir)] if data_dir else [])
        with run_emulator(INIT, args) as ports:
            ports["s3_root"] = root
            yield ports


def connection(ports):
    return DorisConnection(host="127.0.0.1", http_port=ports["fe_http_port"], mysql_port=ports["query_port"])


def local_bucket(ports):
    return pafs.SubTreeFileSystem(ports["s3_root"], pafs.LocalFileSystem())


def ids_in_table(ports):
    df = read_doris(
        host="127.0.0.1", database="s", table="events", transport="mysql", mysql_port=ports["query_port"]
    )
    return sorted(df.to_pydict()["id"])


def write_csv(ports, key, ids):
    path = Path(ports["s3_root"]) / "bkt" / key
    path.write_text("".join(f"{i},n{i}\n" for i in ids))


def wait_until(predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("condition not reached in time")


def csv_job(conn, name="ingest", **kwargs):
    source = S3Source(
        "s3://bkt/in/*.csv",
        "csv",
        {"column_separator": ",", "s3.access_key": "AK", "s3.secret_key": "very-secret"},
    )
    return StreamingJob.create(conn, name, TABLE, source, max_batch_files=1, max_interval_seconds=1, **kwargs)


def test_files_appearing_over_time_land_exactly_once_and_the_tvfs_follow():
    with emulator_with_bucket() as ports:
        conn = connection(ports)
        write_csv(ports, "in/f-001.csv", range(0, 5))
        write_csv(ports, "in/f-002.csv", range(5, 10))
        job = csv_job(conn, comment="nightly")
        wait_until(lambda: job.info().current_offset == "in/f-002.csv")
        write_csv(ports, "in/f-003.csv", range(10, 12))
        wait_until(lambda: job.info().current_offset == "in/f-003.csv")
        assert ids_in_table(ports) == list(range(12))
        info = job.info()
        assert (info.status, info.succeeded_tasks, info.failed_tasks) == ("RUNNING", 3, 0)
        assert (info.scanned_rows, info.file_number) == (12, 3)
        assert info.end_offset == "in/f-003.csv"
        assert info.properties["s3.max_batch_files"] == "1"
        assert "very-secret" not in repr(job) and "very-secret" not in repr(
            S3Source("s3://b/k", "csv", {"s3.secret_key": "very-secret"})
        )
        # jobs() and tasks() as DataFrames with typed values.
        row = streaming.jobs(conn, "ingest").to_pylist()[0]
        assert row["SucceedTaskCount"] == 3 and row["LoadStatistic"]["scannedRows"] == 12
        assert row["CurrentOffset"] == "in/f-003.csv" and row["Comment"] == "nightly"
        task_rows = streaming.tasks(conn, "ingest").to_pylist()
        assert [t["Status"] for t in task_rows].count("SUCCESS") == 3
        assert [t["Status"] for t in task_rows].count("RUNNING") == 1
        assert sum(t["LoadStatistic"]["scannedRows"] for t in task_rows) == 12
        assert all(t["JobID"] == info.id for t in task_rows)
        # Neither holds a credential anywhere: not in ExecuteSql, Properties or messages.
        assert "very-secret" not in repr(row) and "very-secret" not in repr(task_rows)
        assert "AK'" not in row["ExecuteSql"] and "'*XXX'" in row["ExecuteSql"]
        assert "very-secret" not in repr(info)
        # The same rows through the MySQL face, as a Doris client sees them: strings.
        with pymysql.connect(host="127.0.0.1", port=ports["query_port"], user="root") as raw:
            with raw.cursor() as cur:
                cur.execute('SELECT Name, SucceedTaskCount, CurrentOffset FROM jobs("type"="insert")')
                assert cur.fetchall() == (("ingest", "3", '{"endFile":"in/f-003.csv"}'),)
        job.pause()
        assert streaming.tasks(conn, "ingest").count_rows() == 0
        job.resume()
        wait_until(lambda: streaming.tasks(conn, "ingest").count_rows() == 1)
        job.drop()
        assert streaming.jobs(conn).count_rows() == 0


def test_a_failed_task_pauses_the_job_keeps_the_offset_and_is_retried_after_resume():
    with emulator_with_bucket() as ports:
        conn = connection(ports)
        write_csv(ports, "in/a.csv", [1, 2])
        (Path(ports["s3_root"]) / "bkt" / "in" / "b.csv").write_text("3,ok\nnot-a-number,bad\n")
        write_csv(ports, "in/c.csv", [5])
        job = csv_job(conn)
        info = wait_until(lambda: (i := job.info()).status == "PAUSED" and i)
        assert info.current_offset == "in/a.csv"
        assert info.failed_tasks == 1 and "filtered data in strict mode" in info.error_msg
        assert ids_in_table(ports) == [1, 2]
        assert streaming.tasks(conn, "ingest").count_rows() == 0
        with pytest.raises(DorisStreamingJobError, match="PAUSED"):
            job.wait_for(streaming.StagedFiles("ingest", ("in/c.csv",), 1, 0), timeout_seconds=5)
        write_csv(ports, "in/b.csv", [3, 4])  # the file is fixed under the same name
        job.resume()
        wait_until(lambda: job.info().current_offset == "in/c.csv")
        assert ids_in_table(ports) == [1, 2, 3, 4, 5]
        assert job.info().error_msg == ""


def test_a_job_created_with_an_offset_starts_after_that_file():
    with emulator_with_bucket() as ports:
        conn = connection(ports)
        write_csv(ports, "in/f-001.csv", [1, 2])
        write_csv(ports, "in/f-002.csv", [3])
        write_csv(ports, "in/f-003.csv", [4, 5])
        job = csv_job(conn, offset="in/f-002.csv")
        wait_until(lambda: job.info().current_offset == "in/f-003.csv")
        # Only the file after the offset is loaded: f-001 and f-002 are skipped, whole.
        assert ids_in_table(ports) == [4, 5]
        assert job.info().properties["offset"] == '{"fileName":"in/f-002.csv"}'
        with pytest.raises(ConfigurationError, match="offset"):
            csv_job(conn, name="empty_offset", offset="")


def test_alter_is_refused_while_running_and_applies_while_paused():
    with emulator_with_bucket() as ports:
        conn = connection(ports)
        job = csv_job(conn)
        wait_until(lambda: job.info().status == "RUNNING")
        with pytest.raises(DorisStreamingJobError, match="Only PAUSED job can be altered") as refused:
            job.alter(max_batch_files=5)
        assert "very-secret" not in str(refused.value)
        job.pause()
        job.alter(max_batch_files=5, session={"enable_insert_strict": False})
        info = job.info()
        assert info.status == "PAUSED"
        assert info.properties["s3.max_batch_files"] == "5"
        assert info.properties["session.enable_insert_strict"] == "false"
        with pytest.raises(ConfigurationError):
            job.alter()
        with pytest.raises(DorisStreamingJobError, match="job name exist"):
            csv_job(conn)


def test_staging_writes_sortable_files_waits_for_them_and_refuses_names_below_the_offset():
    with emulator_with_bucket() as ports:
        conn = connection(ports)
        source = S3Source("s3://bkt/in/*.parquet", "parquet")
        job = StreamingJob.create(conn, "parq", TABLE, source, max_interval_seconds=1)
        fs = local_bucket(ports)
        df = daft.from_pydict({"id": list(range(100)), "name": [f"r{i}" for i in range(100)]})
        staged = job.stage(df, "s3://bkt/in/", filesystem=fs, prefix="batch-", rows_per_file=40)
        assert staged.rows == 100 and len(staged.keys) == 3
        assert list(staged.keys) == sorted(staged.keys)
        progress = job.wait_for(staged, timeout_seconds=30)
        assert progress.offset == staged.keys[-1]
        assert progress.rows_loaded == 100 and progress.files_loaded == 3
        assert ids_in_table(ports) == list(range(100))
        # "a-" sorts below "batch-…": Doris would never load such files.
        with pytest.raises(StagingOrderError, match="sort at or below"):
            job.stage(df, "s3://bkt/in/", filesystem=fs, prefix="a-")
        assert not any(p.base_name.startswith("a-") for p in fs.get_file_info(pafs.FileSelector("bkt/in")))
        more = job.stage(
            daft.from_pydict({"id": [100], "name": ["x"]}), "s3://bkt/in/", filesystem=fs, prefix="batch-"
        )
        assert job.wait_for(more, timeout_seconds=30).rows_loaded == 1
        assert len(ids_in_table(ports)) == 101


def test_a_crash_mid_job_neither_duplicates_nor_skips_a_file():
    with tempfile.TemporaryDirectory() as data_dir, tempfile.TemporaryDirectory() as root:
        (Path(root) / "bkt" / "in").mkdir(parents=True)
        args = ["--s3-root", root, "--data-dir", data_dir]
        ports = {"s3_root": root}
        for n in range(200):
            write_csv(ports, f"in/f-{n:03d}.csv", range(n * 10, n * 10 + 10))
        with run_emulator(INIT, args) as first:
            ports.update(first)
            conn = connection(first)
            job = csv_job(conn)
            wait_until(lambda: job.info().succeeded_tasks >= 3)
            os.kill(first["pid"], signal.SIGKILL)  # no shutdown, mid-job
        with run_emulator(INIT, args, ports=ports) as second:
            ports.update(second)
            conn = connection(second)
            job = StreamingJob(conn, "ingest")
            restarted_at = job.info().current_offset
            assert restarted_at is not None and restarted_at < "in/f-199.csv"
            wait_until(lambda: job.info().current_offset == "in/f-199.csv", timeout=60)
            assert ids_in_table(second) == list(range(2000))
            assert job.info().scanned_rows == 2000


def test_errors_are_typed_before_anything_is_sent():
    with pytest.raises(ConfigurationError, match="s3://"):
        S3Source("/local/path/*.csv", "csv")
    with pytest.raises(ConfigurationError):
        S3Source("s3://bkt/in/*.csv", "orc")
    conn = DorisConnection(host="127.0.0.1", mysql_port=1, http_port=1)
    with pytest.raises(TransportError):
        StreamingJob(conn, "j").info()


# Nothing listens on port 1: a call that got past its checks would raise TransportError.
DEAD = DorisConnection(host="127.0.0.1", mysql_port=1, http_port=1)
GOOD_SOURCE = S3Source("s3://bkt/in/*.csv", "csv")
FRAME = daft.from_pydict({"id": [1]})
STAGED = streaming.StagedFiles(job="j", keys=("in/k.csv",), rows=1)

BAD_CALLS = [
    (lambda: S3Source("s3://bucket-only", "csv"), "a bucket and a key pattern"),
    (lambda: S3Source("s3://b/k", 5), "format must be one of"),
    (lambda: S3Source("s3://b/k", "csv", {"URI": "s3://x/y"}), "own field"),
    (lambda: S3Source("s3://b/k", "csv", {"s3.region": None}), "must be a string, number or bool"),
    (lambda: S3Source("s3://b/k", "csv", ["region"]), "must be"),
    (lambda: StreamingJob(DEAD, ""), "job name"),
    (lambda: StreamingJob(DEAD, 5), "job name"),
    (
        lambda: StreamingJob.create(DEAD, "j", TABLE, GOOD_SOURCE, max_batch_files=0),
        "s3.max_batch_files must be",
    ),
    (
        lambda: StreamingJob.create(DEAD, "j", TABLE, GOOD_SOURCE, max_batch_bytes=True),
        "s3.max_batch_bytes must be",
    ),
    (
        lambda: StreamingJob.create(DEAD, "j", TABLE, GOOD_SOURCE, max_interval_seconds=2**63),
        "max_interval must be",
    ),
    (
        lambda: StreamingJob.create(DEAD, "j", TABLE, GOOD_SOURCE, session={"a; DROP": 1}),
        "session variable name",
    ),
    (lambda: StreamingJob.create(DEAD, "j", TABLE, GOOD_SOURCE, session={"x": object()}), "session x"),
    (lambda: StreamingJob.create(DEAD, "j", TABLE, GOOD_SOURCE, offset=5), "offset must be"),
    (lambda: StreamingJob.create(DEAD, "j", TABLE, GOOD_SOURCE, columns="id"), "not a single string"),
    (lambda: StreamingJob.create(DEAD, "j", TABLE, GOOD_SOURCE, columns=[]), "at least one"),
    (lambda: StreamingJob.create(DEAD, "j", TABLE, GOOD_SOURCE, columns=["id", "id"]), "repeat"),
    (lambda: StreamingJob(DEAD, "j").alter(), "needs properties or a new INSERT"),
    (lambda: StreamingJob(DEAD, "j").alter(table=TABLE), "both table and source"),
    (lambda: StreamingJob(DEAD, "j").stage(FRAME, "s3://bkt/in/", prefix="a/b"), "without '/'"),
    (lambda: StreamingJob(DEAD, "j").stage(FRAME, "s3://bkt/in/", file_format="orc"), "file_format must be"),
    (lambda: StreamingJob(DEAD, "j").stage(FRAME, "s3://bkt/in/", rows_per_file=0), "rows_per_file must be"),
    (lambda: StreamingJob(DEAD, "j").stage(FRAME, "/tmp/in/"), "s3://bucket/folder/"),
    (lambda: StreamingJob(DEAD, "j").stage(FRAME, "s3:///in/"), "no bucket"),
    (lambda: StreamingJob(DEAD, "j").wait_for(STAGED, timeout_seconds=0), "timeout_seconds must be"),
    (lambda: StreamingJob(DEAD, "j").wait_for(STAGED, poll_seconds="1"), "poll_seconds must be"),
    (lambda: StreamingJob(DEAD, "other").wait_for(STAGED), "this job's stage"),
    (lambda: streaming.jobs(DEAD, ""), "job name"),
]


@pytest.mark.parametrize("call, problem", BAD_CALLS, ids=[p for _, p in BAD_CALLS])
def test_bad_streaming_arguments_are_configuration_errors_before_any_io(call, problem):
    with pytest.raises(ConfigurationError, match=problem) as refused:
        call()
    assert not isinstance(refused.value, TransportError)


def test_staged_files_appear_whole_on_a_local_store():
    # A recording filesystem over a temporary folder: every byte is written under the
    # bucket's .daft_doris_staging/ folder, and the job-visible key only ever appears by a
    # rename, so a listing never sees a half-written file.
    import pyarrow as pa
    from daft_doris.streaming import _write_object

    class Recording(pafs.FileSystemHandler):
        def __init__(self, inner):
            self.inner, self.writes, self.moves = inner, [], []

        def get_type_name(self):
            return "recording"

        def normalize_path(self, path):
            return path

        def get_file_info(self, paths):
            return self.inner.get_file_info(paths)

        def get_file_info_selector(self, selector):
            return self.inner.get_file_info(selector)

        def create_dir(self, path, recursive):
            self.inner.create_dir(path, recursive=recursive)

        def delete_dir(self, path):
            self.inner.delete_dir(path)

        def delete_dir_contents(self, path, missing_dir_ok=False):
            self.inner.delete_dir_contents(path, missing_dir_ok=missing_dir_ok)

        def delete_root_dir_contents(self):
            self.inner.delete_dir_contents("", accept_root_dir=True)

        def delete_file(self, path):
            self.inner.delete_file(path)

        def move(self, src, dest):
            self.moves.append((src, dest))
            self.inner.move(src, dest)

        def copy_file(self, src, dest):
            self.inner.copy_file(src, dest)

        def open_input_stream(self, path):
            return self.inner.open_input_stream(path)

        def open_input_file(self, path):
            return self.inner.open_input_file(path)

        def open_output_stream(self, path, metadata):
            self.writes.append(path)
            return self.inner.open_output_stream(path)

        def open_append_stream(self, path, metadata):
            self.writes.append(path)
            return self.inner.open_append_stream(path)

    with tempfile.TemporaryDirectory() as root:
        handler = Recording(pafs.SubTreeFileSystem(root, pafs.LocalFileSystem()))
        fs = pafs.PyFileSystem(handler)
        table = pa.table({"id": list(range(1000)), "name": [f"n{i}" for i in range(1000)]})
        _write_object(fs, "bkt", "in/part-1.csv", table, "csv")
        assert handler.writes and all(p.startswith("bkt/.daft_doris_staging/") for p in handler.writes)
        assert [dest for _, dest in handler.moves] == ["bkt/in/part-1.csv"]
        text = (Path(root) / "bkt" / "in" / "part-1.csv").read_text()
        assert text.count("\n") == 1000 and text.endswith('999,"n999"\n')
