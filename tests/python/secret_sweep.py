"""The secret sweep: a pytest plugin that watches the whole suite for a leaked password.

Every password the package resolves to connect (``daft_doris.secrets.resolve_secret``,
which the native connection calls) of at least six characters becomes a known secret,
and so does ``KNOWN_SECRET``, the emulator's root password in the modules that use it
(``conftest.ROOT_PASSWORD``). After each test, the
sweep looks for any known secret in:

- every ``daft_doris`` exception created during the test: ``str``, ``repr``, ``args``, the
  ``__cause__``/``__context__`` chain and the formatted traceback (less the source lines of
  the test files, whose literals are the tests' own);
- every log record of any logger (the ``daft_doris`` loggers at DEBUG);
- every warning recorded;
- the ``repr`` of every live connection, endpoint, sink, source and secret reference;
- the test's own report (failure text, captured output).

A hit fails the test with the place it was found (never the secret itself). Switch it off
with ``-p no:secret_sweep`` to debug.
"""

from __future__ import annotations

import gc
import logging
import os
import traceback

import pytest

KNOWN_SECRET = "Kn0wn-s3cret-7f1d9"

_secrets: set[str] = {KNOWN_SECRET}
_exceptions: list[BaseException] = []
_records: list[str] = []
_warnings: list[str] = []


class _Recorder(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        try:
            _records.append(record.getMessage())
        except Exception:  # a record whose arguments do not format is still checked raw
            _records.append(f"{record.msg!r} {record.args!r}")


def _install() -> None:
    from daft_doris import errors, secrets

    original_resolve = secrets.resolve_secret

    def resolve_secret(value):
        resolved = original_resolve(value)
        if len(resolved) >= 6:
            _secrets.add(resolved)
        return resolved

    secrets.resolve_secret = resolve_secret

    original_init = errors.DaftOlapError.__init__

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        _exceptions.append(self)

    errors.DaftOlapError.__init__ = init
    logging.getLogger().addHandler(_Recorder(level=logging.DEBUG))
    logging.getLogger("daft_doris").setLevel(logging.DEBUG)


_TESTS_DIR = os.path.dirname(os.path.abspath(__file__))


def _traceback_text(exc: BaseException) -> str:
    """The formatted traceback as a log would show it, without the source lines of the
    test files themselves (a test's own literals are not a leak)."""
    lines = []
    for frame in traceback.extract_tb(exc.__traceback__):
        lines.append(f"{frame.filename}:{frame.lineno} in {frame.name}")
        if not os.path.abspath(frame.filename).startswith(_TESTS_DIR):
            lines.append(frame.line or "")
    lines += traceback.format_exception_only(exc)
    return "\n".join(lines)


def _exception_texts(exc: BaseException):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield "str", str(exc)
        yield "repr", repr(exc)
        yield "args", repr(exc.args)
        yield "traceback", _traceback_text(exc)
        exc = exc.__cause__ or exc.__context__


def _holders():
    from daft_doris.read import DorisDataSource
    from daft_doris.secrets import SecretRef
    from daft_doris.write import DorisConnection, DorisDataSink

    kinds = (DorisConnection, DorisDataSink, DorisDataSource, SecretRef)
    return [o for o in gc.get_objects() if isinstance(o, kinds)]


def _leaks(report_text: str) -> list[str]:
    places = []
    for exc in list(_exceptions):
        for where, text in _exception_texts(exc):
            if any(s in text for s in _secrets):
                places.append(f"exception {type(exc).__name__} ({where})")
    places += [f"log record {i}" for i, r in enumerate(_records) if any(s in r for s in _secrets)]
    places += [f"warning {i}" for i, w in enumerate(_warnings) if any(s in w for s in _secrets)]
    for holder in _holders():
        try:
            text = repr(holder)
        except Exception:
            continue
        if any(s in text for s in _secrets):
            places.append(f"repr of {type(holder).__name__}")
    if any(s in report_text for s in _secrets):
        places.append("the test report (failure text or captured output)")
    return sorted(set(places))


def pytest_configure(config):
    _install()


def pytest_warning_recorded(warning_message, when, nodeid, location):
    _warnings.append(str(warning_message.message))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when != "teardown":
        if report.failed:
            item.stash.setdefault(_report_key, []).append(report.longreprtext)
        item.stash.setdefault(_report_key, []).extend(s for _, s in report.sections)
        return report
    places = _leaks("\n".join(item.stash.get(_report_key, [])))
    _exceptions.clear()
    _records.clear()
    _warnings.clear()
    if places and report.passed:
        report.outcome = "failed"
        report.longrepr = "secret sweep: a known secret appeared in " + ", ".join(places)
    return report


_report_key = pytest.StashKey[list]()
