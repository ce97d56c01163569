"""The README's Python example runs as shown against the emulator (with the emulator's
ports in place of Doris's defaults), and its rerun writes nothing."""

import contextlib
import io
import re
from pathlib import Path

from conftest import run_emulator

README = Path(__file__).resolve().parents[2] / "README.md"
INIT = """
CREATE DATABASE demo;
CREATE TABLE demo.events (`id` BIGINT NOT NULL, `name` VARCHAR(8) NULL)
  DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 2;
"""


def test_the_readme_python_example_runs_and_its_rerun_writes_nothing():
    (example,) = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    with run_emulator(INIT) as ports:
        code = example.replace("http_port=8030", f"http_port={ports['fe_http_port']}").replace(
            "mysql_port=9030", f"mysql_port={ports['query_port']}"
        )
        assert code.count(str(ports["query_port"])) == 1, "the connection points at the emulator"
        outputs = []
        for _ in range(2):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code, str(README), "exec"), {})
            outputs.append(out.getvalue())
    first, again = outputs
    assert "{'status': ['success'], 'loaded_rows': [3]}" in first, first
    assert "{'status': ['already_committed'], 'loaded_rows': [0]}" in again, again
    for out in outputs:
        assert "{'id': [2, 3], 'name': ['b', 'c']}" in out, out
