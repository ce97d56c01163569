"""The secret sweep (secret_sweep.py) finds a known secret wherever it can leak: these
tests plant one and check the sweep names the place, then remove it so the test passes."""

import logging
import warnings

import secret_sweep
from daft_doris import DorisConnection, TransportError
from secret_sweep import KNOWN_SECRET


def test_the_sweep_finds_a_secret_in_an_exception_chain_a_log_record_and_a_warning():
    try:
        try:
            raise ValueError(f"inner {KNOWN_SECRET}")
        except ValueError as inner:
            raise TransportError("outer, clean") from inner
    except TransportError:
        pass
    assert any("exception TransportError" in p for p in secret_sweep._leaks(""))
    secret_sweep._exceptions.clear()

    # A record as the root logger's recorder receives it (emitted directly, so pytest's own
    # log capture does not keep a copy of the planted secret).
    record = logging.LogRecord(
        "daft_doris.test", logging.DEBUG, __file__, 1, "connecting with %s", (KNOWN_SECRET,), None
    )
    secret_sweep._Recorder().emit(record)
    assert any(p.startswith("log record") for p in secret_sweep._leaks(""))
    secret_sweep._records.clear()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        secret_sweep._warnings.append(f"careful: {KNOWN_SECRET}")
    assert any(p.startswith("warning") for p in secret_sweep._leaks(""))
    secret_sweep._warnings.clear()

    assert secret_sweep._leaks(f"captured {KNOWN_SECRET}") == [
        "the test report (failure text or captured output)"
    ]
    assert secret_sweep._leaks("") == []


def test_passwords_the_package_resolves_become_known_secrets():
    connection = DorisConnection(host="127.0.0.1", password="fresh-pw-81422")
    assert connection.password_value() == "fresh-pw-81422"
    assert "fresh-pw-81422" in secret_sweep._secrets
    assert "fresh-pw-81422" not in repr(connection)
