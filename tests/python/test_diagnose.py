"""daft_doris.diagnose and `python -m daft_doris diagnose` against the emulator: every link
checked, and a wrong setting, a missing privilege or a hostile Flight location reported
with the setting that fixes it."""

import json
import os
import subprocess
import sys
import urllib.request

import pytest
from conftest import run_emulator
from daft_doris import DorisConnection, DorisTable, diagnose

INIT = """
CREATE DATABASE d;
CREATE TABLE d.t (`id` INT NOT NULL, `v` VARCHAR(8) NULL) DUPLICATE KEY(`id`)
  DISTRIBUTED BY HASH(`id`) BUCKETS 2;
CREATE USER 'reader'@'%' IDENTIFIED BY 'rd-Secret-41';
GRANT SELECT_PRIV ON d.* TO 'reader'@'%';
"""


@pytest.fixture(scope="module")
def doris():
    with run_emulator(INIT) as ports:
        yield ports


def conn(ports, **kwargs):
    return DorisConnection(
        host=ports["host"], http_port=ports["fe_http_port"], mysql_port=ports["query_port"], **kwargs
    )


def rows(report):
    data = report.to_pydict()
    return [dict(zip(data, values, strict=True)) for values in zip(*data.values(), strict=True)]


def by_check(report):
    out = {}
    for row in rows(report):
        out.setdefault(row["check"], []).append(row)
    return out


def test_every_link_is_checked_and_answers(doris, capsys):
    report = diagnose(conn(doris), DorisTable("d", "t"), flight=True, flight_port=doris["fe_flight_port"])
    checks = by_check(report)
    assert set(checks) == {"fe_http", "be_http", "mysql", "select", "load", "flight", "flight_location"}
    assert all(r["outcome"] == "ok" for r in rows(report)), rows(report)
    assert checks["be_http"][0]["target"] == f"127.0.0.1:{doris['be_http_port']}"
    printed = capsys.readouterr().out
    assert f"{len(rows(report))} checks, 0 failed" in printed


def test_a_wrong_password_fails_the_links_and_names_the_fix_without_the_password(doris):
    report = diagnose(conn(doris, username="reader", password="Wrong-Pw-9917"), show=False)
    checks = by_check(report)
    assert checks["mysql"][0]["outcome"] == "FAILED"
    assert "password" in checks["mysql"][0]["fix"]
    # (The emulator's /api/backends, like Doris's documented one, needs no credentials.)
    assert "Wrong-Pw-9917" not in json.dumps(rows(report))


def test_a_missing_load_privilege_and_a_wrong_port_are_reported(doris):
    checks = by_check(diagnose(conn(doris, username="reader", password="rd-Secret-41"), DorisTable("d", "t")))
    assert checks["select"][0]["outcome"] == "ok"
    assert checks["load"][0]["outcome"] == "FAILED"
    assert "GRANT LOAD_PRIV ON d.t" in checks["load"][0]["fix"]
    closed = doris["be_http_port"] + 17 if doris["be_http_port"] < 60000 else 1
    checks = by_check(
        diagnose(DorisConnection(host="127.0.0.1", mysql_port=closed, http_port=closed), show=False)
    )
    assert checks["mysql"][0]["outcome"] == "FAILED" and "mysql_port" in checks["mysql"][0]["fix"]
    assert checks["fe_http"][0]["outcome"] == "FAILED" and "http_port" in checks["fe_http"][0]["fix"]
    assert checks["be_http"][0]["outcome"] == "skipped"


def test_a_flight_location_outside_the_allowlist_names_the_settings(doris):
    request = urllib.request.Request(
        f"http://127.0.0.1:{doris['fe_http_port']}/_emulator/faults",
        data=json.dumps({"kind": "flight_location", "host": "127.0.0.9", "port": 8050, "times": 1}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    urllib.request.urlopen(request).read()
    checks = by_check(
        diagnose(
            conn(doris), DorisTable("d", "t"), flight=True, flight_port=doris["fe_flight_port"], show=False
        )
    )
    assert checks["flight"][0]["outcome"] == "ok"
    refused = [r for r in checks["flight_location"] if r["outcome"] == "FAILED"]
    assert refused and "127.0.0.9:8050" in refused[0]["target"]
    assert "flight_allowed_locations" in refused[0]["fix"] and "flight_endpoint_rewrite" in refused[0]["fix"]


def test_the_command_line_reports_and_exits_non_zero_on_a_failure(doris):
    base = [sys.executable, "-m", "daft_doris", "diagnose", "--host", "127.0.0.1"]
    ports = ["--http-port", str(doris["fe_http_port"]), "--mysql-port", str(doris["query_port"])]
    ok = subprocess.run([*base, *ports, "--table", "d.t"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "0 failed" in ok.stdout
    env = {**os.environ, "DORIS_PASSWORD": "Wrong-Pw-9917"}
    bad = subprocess.run(
        [*base, *ports, "--user", "reader"], capture_output=True, text=True, timeout=120, env=env
    )
    assert bad.returncode == 1
    assert "FAILED" in bad.stdout and "→" in bad.stdout and "Wrong-Pw-9917" not in bad.stdout + bad.stderr


def test_the_command_lines_defaults_are_the_crates():
    from daft_doris import _native
    from daft_doris.diagnostics import _command_line

    args = _command_line().parse_args(["--host", "fe.example"])
    defaults = _native.DEFAULTS["connection"]
    assert (args.user, args.http_port, args.mysql_port, args.flight_port) == (
        defaults["username"],
        defaults["http_port"],
        defaults["mysql_port"],
        _native.DEFAULTS["read"]["flight_port"],
    )
