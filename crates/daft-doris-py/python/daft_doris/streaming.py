"""Doris 4.0 streaming jobs: exactly-once incremental loads from object storage.

A streaming job (``CREATE JOB … ON STREAMING DO INSERT INTO t SELECT * FROM S3(…)``) lists
the files its URI glob matches in lexicographic order and loads the ones after its offset,
a batch per task; each task's offset commits in the same transaction as its data, so
every file is loaded exactly once, across failures and FE restarts.

This module manages such jobs from Python and feeds them from Daft:

- ``StreamingJob.create(...)`` / ``StreamingJob(connection, name)``, then ``pause()``,
  ``resume()``, ``alter(...)`` (Doris allows it only while PAUSED), ``drop()``, ``info()``;
- ``jobs(connection)`` / ``tasks(connection)``: the ``jobs("type"="insert")`` and
  ``tasks("type"="insert")`` table functions as Daft DataFrames, values typed;
- ``StreamingJob.stage(df, ...)`` writes a DataFrame as files whose names sort after the
  job's current offset (it refuses names that would sort at or below it: Doris would never
  load them), and ``StreamingJob.wait_for(staged)`` waits until the job's offset has passed
  the last staged file and reports the rows the job loaded meanwhile.
"""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import daft
import pyarrow as pa

from daft_doris import _native
from daft_doris.connection import DorisConnection, DorisTable
from daft_doris.errors import (
    ConfigurationError,
    DatabaseObjectNotFoundError,
    DorisStreamingJobError,
    StagingOrderError,
)


@dataclass(frozen=True)
class S3Source:
    """What a job reads: ``SELECT * FROM S3(uri, format, properties…)``.

    ``properties`` holds the other S3 table-function properties (``s3.endpoint``,
    ``s3.region``, ``s3.access_key``, ``s3.secret_key``, ``column_separator``, …); values
    of credential keys never appear in ``repr``.
    """

    uri: str
    format: Literal["csv", "csv_with_names", "json", "parquet"] = "parquet"
    properties: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    _bucket: str = field(default="", init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        pairs, bucket = _native.check_s3_source(self.uri, self.format, self.properties)
        object.__setattr__(self, "properties", tuple(pairs))
        object.__setattr__(self, "_bucket", bucket)

    def __repr__(self) -> str:
        shown = dict(_native.redact_properties(self.properties))
        return f"S3Source(uri={self.uri!r}, format={self.format!r}, properties={shown!r})"

    @property
    def bucket(self) -> str:
        """The bucket the uri names."""
        return self._bucket


@dataclass(frozen=True)
class JobInfo:
    """One streaming job's state, from ``jobs("type"="insert")``."""

    id: int
    name: str
    status: str
    current_offset: str | None
    end_offset: str | None
    succeeded_tasks: int
    failed_tasks: int
    canceled_tasks: int
    scanned_rows: int
    load_bytes: int
    file_number: int
    error_msg: str
    properties: dict[str, str]
    execute_sql: str = field(repr=False)


@dataclass(frozen=True)
class StagedFiles:
    """Files written by ``StreamingJob.stage``: their keys (in order) and rows."""

    job: str
    keys: tuple[str, ...]
    rows: int
    scanned_rows_before: int = 0
    files_before: int = 0


@dataclass(frozen=True)
class LoadProgress:
    """What ``StreamingJob.wait_for`` saw: the job's offset and rows it loaded meanwhile."""

    offset: str
    rows_loaded: int
    files_loaded: int


def _insert(table: DorisTable, source: S3Source, columns: list[str] | tuple[str, ...] | None) -> Any:
    return _native.S3Insert(table.database, table.name, source.uri, source.format, columns, source.properties)


class StreamingJob:
    """A handle on a streaming job (nothing is sent until a method is called).

    >>> source = S3Source("s3://bkt/in/*.parquet", "parquet")
    >>> job = StreamingJob.create(connection, "doc_ingest", DorisTable("demo", "stream"), source,
    ...                           max_interval_seconds=1)
    >>> frame = daft.from_pydict({"id": [1, 2, 3], "name": ["x", "y", "z"]})
    >>> staged = job.stage(frame, "s3://bkt/in/", filesystem=bucket, prefix="doc-")
    >>> job.wait_for(staged, timeout_seconds=60).rows_loaded
    3
    >>> job.info().status
    'RUNNING'
    >>> job.drop()
    """

    def __init__(self, connection: DorisConnection, name: str) -> None:
        if not isinstance(connection, DorisConnection):
            raise ConfigurationError("connection must be a DorisConnection")
        self.connection = connection
        self.name = _native.check_job_name(name)

    def __repr__(self) -> str:
        return f"StreamingJob(name={self.name!r}, host={self.connection.host!r})"

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return fn(self.connection, *args, **kwargs)

    @classmethod
    def create(
        cls,
        connection: DorisConnection,
        name: str,
        table: DorisTable,
        source: S3Source,
        *,
        columns: list[str] | tuple[str, ...] | None = None,
        max_batch_files: int | None = None,
        max_batch_bytes: int | None = None,
        max_interval_seconds: int | None = None,
        offset: str | None = None,
        session: Mapping[str, object] | None = None,
        comment: str | None = None,
    ) -> StreamingJob:
        """``CREATE JOB name … ON STREAMING DO INSERT INTO table SELECT * FROM S3(source)``.

        ``offset`` is the key of a file to start after; ``session`` sets session variables
        for every task's INSERT (e.g. ``{"insert_max_filter_ratio": 0.1,
        "enable_insert_strict": False}``).
        """
        job = cls(connection, name)
        if not isinstance(table, DorisTable) or not isinstance(source, S3Source):
            raise ConfigurationError("table must be a DorisTable and source an S3Source")
        job._call(
            _native.job_create,
            name,
            _insert(table, source, columns),
            max_batch_files=max_batch_files,
            max_batch_bytes=max_batch_bytes,
            max_interval_seconds=max_interval_seconds,
            session=session,
            offset=offset,
            comment=comment,
        )
        return job

    def alter(
        self,
        *,
        table: DorisTable | None = None,
        source: S3Source | None = None,
        columns: list[str] | tuple[str, ...] | None = None,
        max_batch_files: int | None = None,
        max_batch_bytes: int | None = None,
        max_interval_seconds: int | None = None,
        offset: str | None = None,
        session: Mapping[str, object] | None = None,
    ) -> None:
        """``ALTER JOB``: new properties and/or a new INSERT (``table`` with ``source``).

        Doris accepts it only while the job is PAUSED; the offset is kept unless given.
        """
        if (table is None) != (source is None):
            raise ConfigurationError("a new INSERT needs both table and source")
        self._call(
            _native.job_alter,
            self.name,
            insert=None if table is None else _insert(table, source, columns),  # type: ignore[arg-type]
            max_batch_files=max_batch_files,
            max_batch_bytes=max_batch_bytes,
            max_interval_seconds=max_interval_seconds,
            session=session,
            offset=offset,
        )

    def pause(self) -> None:
        """``PAUSE JOB``: the running task is canceled; the offset stays."""
        self._call(_native.job_control, "pause", self.name, False)

    def resume(self) -> None:
        """``RESUME JOB``: tasks go on from the committed offset."""
        self._call(_native.job_control, "resume", self.name, False)

    def drop(self, *, if_exists: bool = False) -> None:
        """``DROP JOB [IF EXISTS]``."""
        self._call(_native.job_control, "drop", self.name, bool(if_exists))

    def info(self) -> JobInfo:
        """The job's row of ``jobs("type"="insert")``."""
        rows = self._call(_native.job_list, self.name).to_pylist()
        if not rows:
            raise DatabaseObjectNotFoundError(f"streaming job {self.name} does not exist")
        return _job_info(rows[0])

    def stage(
        self,
        df: daft.DataFrame,
        destination: str,
        *,
        filesystem: Any = None,
        file_format: Literal["parquet", "csv", "json"] = _native.DEFAULTS["jobs"]["file_format"],
        prefix: str = _native.DEFAULTS["jobs"]["prefix"],
        rows_per_file: int = _native.DEFAULTS["jobs"]["rows_per_file"],
    ) -> StagedFiles:
        """Writes ``df`` as files under ``destination`` (``s3://bucket/dir/``) whose names
        sort after the job's current offset, and returns their keys.

        Names are ``<prefix><UTC timestamp>-<n>.<ext>``, so successive stagings sort in
        time order. A name that would sort at or below the offset is refused with
        ``StagingOrderError`` before anything is written. ``filesystem`` is a
        ``pyarrow.fs.FileSystem`` whose paths are ``bucket/key`` (default: from the uri).
        The job must read the same ``file_format`` (CSV files are written without a header;
        JSON as one object per line, which needs ``read_json_by_line = true``).
        """
        plan = _native.StagePlan(
            destination=destination, prefix=prefix, file_format=file_format, rows_per_file=rows_per_file
        )
        before = self.info()
        plan.check_after(before.current_offset)
        fs = filesystem if filesystem is not None else _filesystem_for(destination)
        bucket, key, rows_per_file = plan.bucket, plan.key, plan.rows_per_file
        keys: list[str] = []
        rows = 0
        pending: list[pa.RecordBatch] = []
        pending_rows = 0
        for batch in df.to_arrow_iter():
            pending.append(batch)
            pending_rows += batch.num_rows
            while pending_rows >= rows_per_file:
                table = pa.Table.from_batches(pending)
                head, tail = table.slice(0, rows_per_file), table.slice(rows_per_file)
                _write_object(fs, bucket, key(len(keys)), head, plan.file_format)
                keys.append(key(len(keys)))
                rows += head.num_rows
                pending = tail.to_batches()
                pending_rows = tail.num_rows
        if pending_rows > 0:
            table = pa.Table.from_batches(pending)
            _write_object(fs, bucket, key(len(keys)), table, plan.file_format)
            keys.append(key(len(keys)))
            rows += table.num_rows
        return StagedFiles(
            job=self.name,
            keys=tuple(keys),
            rows=rows,
            scanned_rows_before=before.scanned_rows,
            files_before=before.file_number,
        )

    def wait_for(
        self,
        staged: StagedFiles,
        *,
        timeout_seconds: float = _native.DEFAULTS["jobs"]["timeout_seconds"],
        poll_seconds: float = _native.DEFAULTS["jobs"]["poll_seconds"],
    ) -> LoadProgress:
        """Waits until the job's offset has reached the last staged file.

        Returns the offset and the rows the job loaded since staging began (files other
        writers staged meanwhile count too). Raises ``DorisStreamingJobError`` if the job
        is or becomes PAUSED (with its ``ErrorMsg``) and ``DorisTimeoutError`` after
        ``timeout_seconds``; Ctrl-C interrupts the wait.
        """
        if not isinstance(staged, StagedFiles) or staged.job != self.name:
            raise ConfigurationError("staged must come from this job's stage()")
        batch = self._call(
            _native.job_wait,
            self.name,
            staged.keys[-1] if staged.keys else None,
            timeout_seconds=timeout_seconds,
            poll_seconds=poll_seconds,
        )
        info = _job_info(batch.to_pylist()[0])
        return LoadProgress(
            offset=info.current_offset or "",
            rows_loaded=info.scanned_rows - staged.scanned_rows_before,
            files_loaded=info.file_number - staged.files_before,
        )


def _filesystem_for(destination: str) -> Any:
    import pyarrow.fs

    fs, _ = pyarrow.fs.FileSystem.from_uri(destination)
    return fs


def _encode(table: pa.Table, file_format: str) -> bytes:
    sink = io.BytesIO()
    if file_format == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, sink)
    elif file_format == "csv":
        import pyarrow.csv as pacsv

        pacsv.write_csv(table, sink, pacsv.WriteOptions(include_header=False, quoting_style="needed"))
    else:
        for row in table.to_pylist():
            sink.write(json.dumps(row, default=str).encode())
            sink.write(b"\n")
    return sink.getvalue()


def _write_object(fs: Any, bucket: str, key: str, table: pa.Table, file_format: str) -> None:
    """Writes one object so that it appears whole: object stores publish a PUT at once; a
    local folder gets a temporary file renamed into place."""
    body = _encode(table, file_format)
    path = f"{bucket}/{key}"
    parent = path.rsplit("/", 1)[0]
    fs.create_dir(parent, recursive=True)
    if fs.type_name in ("s3", "gcs"):
        with fs.open_output_stream(path) as out:
            out.write(body)
        return
    staging = f"{bucket}/.daft_doris_staging"
    fs.create_dir(staging, recursive=True)
    tmp = f"{staging}/{uuid.uuid4().hex}"
    with fs.open_output_stream(tmp) as out:
        out.write(body)
    fs.move(tmp, path)


def _job_info(row: Mapping[str, Any]) -> JobInfo:
    stats = row["LoadStatistic"]
    return JobInfo(
        id=int(row["Id"]),
        name=row["Name"],
        status=row["Status"],
        current_offset=row["CurrentOffset"],
        end_offset=row["EndOffset"],
        succeeded_tasks=row["SucceedTaskCount"],
        failed_tasks=row["FailedTaskCount"],
        canceled_tasks=row["CanceledTaskCount"],
        scanned_rows=stats["scannedRows"],
        load_bytes=stats["loadBytes"],
        file_number=stats["fileNumber"],
        error_msg=row["ErrorMsg"],
        properties=dict(row["Properties"]),
        execute_sql=row["ExecuteSql"],
    )


JOBS_SCHEMA = _native.jobs_schema()
"""Columns of ``jobs()``: Doris's names; counts as integers, ``Properties`` as a map,
offsets as the key of the last file loaded (``CurrentOffset``) or seen (``EndOffset``),
``LoadStatistic`` as a struct."""

TASKS_SCHEMA = _native.tasks_schema()
"""Columns of ``tasks()``: Doris's names, ids as integers, ``LoadStatistic`` as a struct."""


def _frame(connection: DorisConnection, fetch: Any, name: str | None) -> daft.DataFrame:
    if name is not None:
        name = _native.check_job_name(name)
    batch = fetch(connection, name)
    return daft.from_arrow(pa.Table.from_batches([batch]))


def jobs(connection: DorisConnection, name: str | None = None) -> daft.DataFrame:
    """``SELECT * FROM jobs("type"="insert") WHERE ExecuteType = 'STREAMING'`` as a
    DataFrame (``JOBS_SCHEMA``), optionally for one job."""
    return _frame(connection, _native.job_list, name)


def tasks(connection: DorisConnection, job: str | None = None) -> daft.DataFrame:
    """``SELECT * FROM tasks("type"="insert")`` as a DataFrame (``TASKS_SCHEMA``): per job
    the running task and recent finished ones (none while the job is PAUSED)."""
    return _frame(connection, _native.task_list, job)


__all__ = [
    "JOBS_SCHEMA",
    "TASKS_SCHEMA",
    "DorisStreamingJobError",
    "JobInfo",
    "LoadProgress",
    "S3Source",
    "StagedFiles",
    "StagingOrderError",
    "StreamingJob",
    "jobs",
    "tasks",
]
