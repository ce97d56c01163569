"""The parity table of docs/compatibility.md, generated: every public name, keyword and
default of the reference connector 1.1 (tests/python/reference_1_1.json) beside ours, read
from the code. The test fails when the two drift apart without a reason written here, and
when the document's table is not the one this code generates (set
``DAFT_DORIS_WRITE_PARITY=1`` to rewrite it)."""

import dataclasses
import inspect
import json
import os
import pathlib

import daft_doris
from daft_doris import _native
from daft_doris.read_options import DorisReadOptions
from daft_doris.write_options import DorisWriteKeywords

ROOT = pathlib.Path(__file__).resolve().parents[2]
REFERENCE = json.loads((pathlib.Path(__file__).parent / "reference_1_1.json").read_text())
DOC = ROOT / "docs" / "compatibility.md"
START, END = "<!-- parity:start -->", "<!-- parity:end -->"

UNSET = object()
REQUIRED = object()

# Each intended difference, with its reason (the key is `callable.keyword`).
REASONS = {
    "SecretRef.environment_variable": "one of three sources now: `SecretRef.env`, `.file`, `.inline`",
    "DorisWriteOptions.load_properties": "`None` and empty mean the same: no properties",
    "read_doris.host": "required unless `connection=` (a `DorisConnection`, as writes take) gives it",
}


def _ours_of_options(keys, required, defaults):
    return {k: (REQUIRED if k in required else defaults(k)) for k in keys}


def _signature(func, skip=("self",)):
    out = {}
    for name, p in inspect.signature(func).parameters.items():
        if name in skip or p.kind is inspect.Parameter.VAR_KEYWORD:
            continue
        out[name] = REQUIRED if p.default is inspect.Parameter.empty else p.default
    return out


def ours():
    defaults = _native.DEFAULTS
    read = _signature(daft_doris.read_doris)
    read.update(
        _ours_of_options(
            DorisReadOptions.__required_keys__ | DorisReadOptions.__optional_keys__,
            DorisReadOptions.__required_keys__,
            lambda k: defaults["read"].get(k, defaults["connection"].get(k, UNSET)),
        )
    )
    write = _signature(daft_doris.write_doris)
    keys = DorisWriteKeywords.__required_keys__ | DorisWriteKeywords.__optional_keys__
    write.update(_ours_of_options(keys, set(), lambda k: defaults["write"].get(k, UNSET)))
    options = daft_doris.DorisWriteOptions()
    out = {
        "read_doris": read,
        "write_doris": write,
        "DorisWriteOptions": {k: getattr(options, k) for k in keys},
        "DorisDataSink": _signature(daft_doris.DorisDataSink.__init__),
    }
    # The native connection's signature (its fields are declared in Rust).
    out["DorisConnection"] = _signature(daft_doris.DorisConnection)
    for cls in (daft_doris.DorisTable, daft_doris.SecretRef):
        out[cls.__name__] = {
            f.name: (
                f.default
                if f.default is not dataclasses.MISSING
                else f.default_factory()
                if f.default_factory is not dataclasses.MISSING
                else REQUIRED
            )
            for f in dataclasses.fields(cls)
        }
    return out


def _normal(value):
    if isinstance(value, dict) and value == {"required": True}:
        return REQUIRED
    if isinstance(value, tuple | list):
        return [_normal(v) for v in value]
    return value


def _shown(value):
    if value is REQUIRED:
        return "required"
    if value is UNSET:
        return "not set"
    return f"`{json.dumps(value) if not isinstance(value, str) else repr(value)}`"


def _same(theirs, mine):
    if mine is UNSET:
        return theirs in (None, False, "", [])
    if theirs is REQUIRED or mine is REQUIRED:
        return theirs is mine
    return type(theirs) in (int, float) and type(mine) in (int, float) and theirs == mine or theirs == mine


def parity():
    """The rows of the table and the differences that have no reason."""
    mine = ours()
    rows, unexplained = [], []
    exported = set(daft_doris.__all__)
    missing = [n for n in REFERENCE["exports"] if n not in exported]
    unexplained += [f"export {n}" for n in missing]
    for owner, keywords in REFERENCE.items():
        if owner in ("_about", "exports"):
            continue
        here = mine[owner]
        for keyword, value in keywords.items():
            theirs = _normal(value)
            key = f"{owner}.{keyword}"
            if keyword not in here:
                note = REASONS.get(key)
                unexplained += [] if note else [f"{key} is gone"]
                rows.append((owner, keyword, _shown(theirs), "—", note or "missing"))
                continue
            current = _normal(here[keyword])
            if _same(theirs, current):
                rows.append((owner, keyword, _shown(theirs), _shown(current), "same"))
            else:
                note = REASONS.get(key)
                unexplained += [] if note else [f"{key}: 1.1 {theirs!r}, here {current!r}"]
                rows.append((owner, keyword, _shown(theirs), _shown(current), note or "differs"))
        for keyword in sorted(set(here) - set(keywords)):
            rows.append((owner, keyword, "—", _shown(_normal(here[keyword])), "new here"))
    return rows, unexplained, sorted(exported - set(REFERENCE["exports"]))


def table():
    rows, _, new_exports = parity()
    lines = [
        START,
        "| callable | keyword | 1.1 | here | |",
        "|---|---|---|---|---|",
        *(f"| `{o}` | `{k}` | {a} | {b} | {n} |" for o, k, a, b, n in rows),
        "",
        "Exported by 1.1 and here: all of 1.1's "
        f"{len(REFERENCE['exports'])} names. New here: " + ", ".join(f"`{n}`" for n in new_exports) + ".",
        END,
    ]
    return "\n".join(lines)


def test_every_1_1_name_keyword_and_default_is_here_or_explained():
    _, unexplained, _ = parity()
    assert not unexplained, "differences from 1.1 without a reason in REASONS: " + "; ".join(unexplained)


def test_the_parity_table_in_the_docs_is_the_one_the_code_generates():
    text = DOC.read_text()
    start, end = text.index(START), text.index(END) + len(END)
    generated = table()
    if os.environ.get("DAFT_DORIS_WRITE_PARITY") == "1":
        DOC.write_text(text[:start] + generated + text[end:])
        text = DOC.read_text()
    assert text[start : start + len(generated)] == generated, (
        "docs/compatibility.md's parity table is stale: rerun with DAFT_DORIS_WRITE_PARITY=1\n" + generated
    )


def test_the_python_declarations_name_the_options_the_crates_read():
    """The option names live in the crates that read them (``_native.OPTION_NAMES``); the
    Python signatures and typed dicts declare the same names, so one renamed or added on
    either side fails here."""
    names = _native.OPTION_NAMES
    connection = set(inspect.signature(daft_doris.DorisConnection).parameters)
    assert connection == set(names["connection"])
    read = DorisReadOptions.__required_keys__ | DorisReadOptions.__optional_keys__
    assert set(names["read"]) <= read, set(names["read"]) - read
    assert set(names["read"]) == set(_native.ReadRequest.NAMES)
    written = daft_doris.DorisWriteOptions.__required_keys__ | daft_doris.DorisWriteOptions.__optional_keys__
    assert set(names["write"]) == written
    create = set(inspect.signature(daft_doris.streaming.StreamingJob.create).parameters)
    alter = set(inspect.signature(daft_doris.streaming.StreamingJob.alter).parameters)
    assert set(names["jobs"]) <= create & alter, set(names["jobs"]) - (create & alter)
