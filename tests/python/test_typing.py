"""The public API as a type checker sees it: a consumer's code passes ``mypy --strict``
against the installed package (its ``py.typed``, the annotations of ``read_doris``,
``write_doris`` and the option classes, ``_native.pyi``), and a call with an argument of
the wrong type or an unknown option fails it, so the check can fail."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CONSUMER = textwrap.dedent(
    """
    import daft
    from daft_doris import (
        DorisConnection,
        DorisTable,
        DorisWriteOptions,
        SecretRef,
        read_doris,
        write_doris,
    )
    from daft_doris.errors import DorisWriteError


    def copy(source: str, target: str) -> int:
        frame: daft.DataFrame = read_doris(
            host="fe.example",
            database="sales",
            table=source,
            transport="flight",
            columns=["id", "amount"],
            password=SecretRef.env("DORIS_PASSWORD"),
        )
        connection = DorisConnection(host="fe.example", password=SecretRef.env("DORIS_PASSWORD"))
        options = DorisWriteOptions(
            operation="upsert", idempotence_key="nightly-2026-12-05", batch_rows=10_000
        )
        try:
            written: daft.DataFrame = write_doris(
                frame,
                connection=connection,
                table=DorisTable("sales", target),
                **options,
            )
        except DorisWriteError as e:
            print(e)
            return 1
        print(written.count_rows())
        return 0
    """
)

# Each breaks the API's types: a port as text, a transport Doris does not have, options
# the functions do not take, a required read option left out, a write option's value of
# the wrong kind (the options are `DorisReadOptions` and `DorisWriteOptions` keywords: the
# checker sees each one's name, type and requiredness).
BROKEN = [
    'read_doris(host="fe", database="d", table="t", transport="flight", mysql_port="9030")',
    'read_doris(host="fe", database="d", table="t", transport="odbc")',
    'read_doris(host="fe", database="d", table="t", transport="mysql", batch_row=10)',
    'read_doris(host="fe", database="d", table="t")',
    'DorisConnection(host="fe", pasword="x")',
    "write_doris(FRAME, connection=CONNECTION, table=TABLE, batch_row=10)",
    'write_doris(FRAME, connection=CONNECTION, table=TABLE, write_mode="replace")',
    'write_doris(FRAME, connection=CONNECTION, table=TABLE, load_properties=[("k", "v")])',
    'DorisWriteOptions(operation="merge")',
]

# What the broken calls above are made with (well-typed themselves).
BROKEN_HEADER = textwrap.dedent(
    """
    import daft
    from daft_doris import DorisConnection, DorisTable, DorisWriteOptions, read_doris, write_doris

    FRAME = daft.from_pydict({"id": [1]})
    CONNECTION = DorisConnection(host="fe")
    TABLE = DorisTable("d", "t")
    """
)


def _mypy(tmp_path: Path, name: str, code: str) -> subprocess.CompletedProcess[str]:
    source = tmp_path / f"{name}.py"
    source.write_text(code)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-error-summary",
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )


@pytest.fixture(scope="module")
def typing_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder (and mypy cache) for the module: daft is analysed once."""
    return tmp_path_factory.mktemp("typing")


def test_a_consumer_of_the_public_api_passes_mypy_strict(typing_dir: Path) -> None:
    run = _mypy(typing_dir, "consumer", CONSUMER)
    assert run.returncode == 0, run.stdout + run.stderr


def test_what_the_broken_calls_are_made_with_passes_mypy_strict(typing_dir: Path) -> None:
    """So each broken call below fails for its own error, not for its header's."""
    run = _mypy(typing_dir, "broken_header", BROKEN_HEADER)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("call", BROKEN)
def test_a_call_against_the_api_types_fails_mypy_strict(typing_dir: Path, call: str) -> None:
    code = BROKEN_HEADER + "\n" + call + "\n"
    run = _mypy(typing_dir, f"broken_{BROKEN.index(call)}", code)
    assert run.returncode != 0, f"mypy accepted {call}"
    assert "error:" in run.stdout, run.stdout + run.stderr
