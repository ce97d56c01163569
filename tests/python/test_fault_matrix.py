"""The fault matrix (tests/python/fault_matrix.py) in CI: no case loses or duplicates a row,
no read is short, no atomic write is half-visible, no two-phase write leaves a pre-committed
transaction."""

import fault_matrix
import pytest
from conftest import run_emulator


@pytest.fixture(scope="module")
def doris():
    with run_emulator(fault_matrix.INIT) as ports:
        yield ports


def test_no_fault_loses_duplicates_or_half_writes_a_row(doris, capsys):
    rows = fault_matrix.run_matrix(doris)
    bad = fault_matrix.broken(rows)
    fired = sum(1 for r in rows if r["fired"])
    with capsys.disabled():
        print(f"\n[faults] {len(rows)} cases ({fired} reached their fault), {len(bad)} broken")
    assert len(rows) == len(fault_matrix.FAULTS) * (len(fault_matrix.READS) + len(fault_matrix.WRITES))
    assert not bad, fault_matrix.render(bad)
    # The matrix is not vacuous: every fault fires in at least one operation.
    for name, fault in fault_matrix.FAULTS:
        if fault is not None:
            assert any(r["fired"] for r in rows if r["fault"] == name), name
