"""A full benchmark run rewrites docs/benchmarks.md and docs/scaling.md: what a person
wrote below the marker line must survive it."""

import sys
from pathlib import Path

BENCHES = Path(__file__).resolve().parents[2] / "crates/daft-doris-py/benches"


def test_a_report_rewrite_keeps_the_hand_written_part(tmp_path):
    sys.path.insert(0, str(BENCHES))
    try:
        from bench_harness import HAND_WRITTEN, write_keeping_hand_written
    finally:
        sys.path.remove(str(BENCHES))
    report = tmp_path / "report.md"
    write_keeping_hand_written(report, "# Figures\n\n| a | 1 |\n")
    assert report.read_text() == "# Figures\n\n| a | 1 |\n"
    report.write_text(report.read_text() + f"\n{HAND_WRITTEN}\n\n## Why\n\nBecause.\n")
    write_keeping_hand_written(report, "# Figures\n\n| a | 2 |\n")
    text = report.read_text()
    assert "| a | 2 |" in text and "| a | 1 |" not in text
    assert text.endswith(f"{HAND_WRITTEN}\n\n## Why\n\nBecause.\n")
    # Both reports of the repository carry the marker, so the next full run keeps their notes.
    docs = Path(__file__).resolve().parents[2] / "docs"
    for name in ("benchmarks.md", "scaling.md"):
        assert HAND_WRITTEN in (docs / name).read_text(), name


def test_the_fault_matrix_keeps_the_soak_figures(tmp_path):
    """`cargo xtask faults` rewrites docs/reliability.md's matrix; the soak's figures below
    the marker must survive it."""
    import fault_matrix

    report = tmp_path / "reliability.md"
    report.write_text(f"# old matrix\n\n{fault_matrix.HAND_WRITTEN}\n\n## Soak\n\n0 lost.\n")
    fault_matrix.write_keeping_hand_written(str(report), "# new matrix\n")
    assert report.read_text() == f"# new matrix\n\n{fault_matrix.HAND_WRITTEN}\n\n## Soak\n\n0 lost.\n"
    docs = Path(__file__).resolve().parents[2] / "docs"
    assert fault_matrix.HAND_WRITTEN in (docs / "reliability.md").read_text()
