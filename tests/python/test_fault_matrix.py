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


def test_the_report_in_the_docs_is_the_matrix_the_code_runs():
    """docs/reliability.md's generated table lists exactly the (operation, fault) cases the
    code runs, and its case count is theirs: a fault or an operation added to the code
    without `cargo xtask faults` fails here."""
    import os
    import re

    path = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "reliability.md")
    with open(path) as f:
        generated = f.read().split(fault_matrix.HAND_WRITTEN)[0]
    documented = re.findall(r"^\| (.+?) \| `([a-z_]+)` \|", generated, flags=re.M)
    cases = [(op, name) for op in fault_matrix.READS + fault_matrix.WRITES for name, _ in fault_matrix.FAULTS]
    assert documented, "docs/reliability.md holds no generated table"
    assert sorted(documented) == sorted(cases), "run `cargo xtask faults` to regenerate docs/reliability.md"
    assert f"\n{len(cases)} cases, " in generated, "the case count in docs/reliability.md is stale"
