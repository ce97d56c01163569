"""The write on each Doris release the emulator plays (``--doris-version``): what a release
cannot run is refused with DorisReleaseError before anything is written, and a partial
update keeps the columns it does not name on every release."""

import daft
import pytest
from conftest import ROOT_PASSWORD, run_emulator
from daft_doris import DorisReleaseError, DorisTable, DorisWriteError, write_doris
from write_setup import INIT, conn, query, summary

SETUP = INIT.split("CREATE USER")[0]


@pytest.fixture(scope="module", params=["2.1.10", "3.0.3", "3.0.4", "4.0.6", "4.1.0"])
def release(request):
    with run_emulator(
        SETUP, extra_args=("--doris-version", request.param), root_password=ROOT_PASSWORD
    ) as ports:
        yield request.param, ports


def staging_tables(ports):
    return [t for (t,) in query(ports, "SHOW TABLES") if t.startswith("daft_doris_stage_")]


def test_the_atomic_write_runs_from_3_0_4_and_is_refused_before_anything_is_written_below(release):
    version, ports = release
    table = DorisTable("w", "carried")
    rows = daft.from_pydict({"id": [1, 2], "name": ["a", "b"]})
    before = query(ports, "SELECT count(*) FROM carried")[0][0]
    if version in ("2.1.10", "3.0.3"):
        with pytest.raises(
            DorisReleaseError, match=rf"Doris {version} cannot run the atomic write"
        ) as raised:
            write_doris(rows, connection=conn(ports), table=table, idempotence_key="2026-12-04")
        assert "atomic=False" in str(raised.value)
        assert query(ports, "SELECT count(*) FROM carried")[0][0] == before
        assert staging_tables(ports) == []
        assert "daft_doris_commits" not in [t for (t,) in query(ports, "SHOW TABLES")]
        # The per-load mode runs on every release.
        done = write_doris(
            rows, connection=conn(ports), table=table, idempotence_key="2026-12-04", atomic=False
        )
        assert summary(done)["loaded_rows"] == 2
    else:
        first = summary(write_doris(rows, connection=conn(ports), table=table, idempotence_key="2026-12-04"))
        again = summary(write_doris(rows, connection=conn(ports), table=table, idempotence_key="2026-12-04"))
        assert (first["status"], again["status"]) == ("success", "already_committed")
        assert staging_tables(ports) == []
    assert query(ports, "SELECT count(*) FROM carried")[0][0] == before + 2


def test_a_partial_update_keeps_the_columns_it_does_not_name(release):
    """``partial_columns: true``, which every release reads: where the client sent only
    ``unique_key_update_mode``, 2.1 and 3.0 loaded full rows and reset ``name``."""
    _, ports = release
    table = DorisTable("w", "uniq")
    base = daft.from_pydict({"id": [501, 502], "name": ["keep", "also"], "score": [1, 2]})
    write_doris(base, connection=conn(ports), table=table, operation="upsert", atomic=False)
    update = daft.from_pydict({"id": [501, 502], "score": [10, 20]})
    write_doris(update, connection=conn(ports), table=table, operation="partial_update", atomic=False)
    got = query(ports, "SELECT id, name, score FROM uniq WHERE id > 500 ORDER BY id")
    assert got == ((501, "keep", 10), (502, "also", 20))


def test_new_key_behavior_is_refused_where_the_release_ignores_it(release):
    version, ports = release
    table = DorisTable("w", "uniq")
    update = daft.from_pydict({"id": [601], "score": [1]})
    ask = {
        "operation": "partial_update",
        "atomic": False,
        "load_properties": {"partial_update_new_key_behavior": "ERROR"},
    }
    if version in ("4.0.6", "4.1.0"):
        with pytest.raises(DorisWriteError) as raised:
            write_doris(update, connection=conn(ports), table=table, **ask)
        assert not isinstance(raised.value, DorisReleaseError)
    else:
        with pytest.raises(DorisReleaseError, match="partial_update_new_key_behavior"):
            write_doris(update, connection=conn(ports), table=table, **ask)
    assert query(ports, "SELECT count(*) FROM uniq WHERE id = 601")[0][0] == 0
