"""Every example in the public docstrings of daft_doris runs, against the emulator, with the
outputs it shows (doctest). The examples see `connection` (a DorisConnection to the
emulator), `ports` (its ports), `bucket` (a pyarrow filesystem over the emulator's object
store, whose paths are `bucket/key`) and every public name of daft_doris."""

import doctest
import importlib
import tempfile
from pathlib import Path

import daft
import daft_doris
import pyarrow.fs as pafs
import pymysql
import pytest
from conftest import run_emulator
from daft_doris import DorisConnection

INIT = """
CREATE DATABASE demo;
CREATE TABLE demo.events (`id` BIGINT NOT NULL, `name` VARCHAR(16) NULL, `score` INT NULL)
  DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 2;
CREATE TABLE demo.sink (`id` BIGINT NOT NULL, `name` VARCHAR(16) NULL, `score` INT NULL)
  DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 2;
CREATE TABLE demo.stream (`id` BIGINT NOT NULL, `name` VARCHAR(16) NULL)
  DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 2;
"""

# The modules whose docstrings hold examples (each must hold at least one).
MODULES = (
    "daft_doris.connection",
    "daft_doris.read",
    "daft_doris.write",
    "daft_doris.catalog",
    "daft_doris.diagnostics",
    "daft_doris.secrets",
    "daft_doris.streaming",
)


@pytest.fixture(scope="module")
def doris():
    with tempfile.TemporaryDirectory() as store, run_emulator(INIT, ["--s3-root", store]) as ports:
        (Path(store) / "bkt" / "in").mkdir(parents=True)
        with pymysql.connect(host="127.0.0.1", port=ports["query_port"], user="root") as c, c.cursor() as cur:
            cur.execute("INSERT INTO demo.events VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30)")
        ports["s3_root"] = store
        yield ports


@pytest.mark.parametrize("name", MODULES)
def test_the_docstring_examples_run_and_show_what_they_say(doris, name, capsys):
    module = importlib.import_module(name)
    globs = {n: getattr(daft_doris, n) for n in daft_doris.__all__}
    globs.update(
        daft=daft,
        ports=doris,
        bucket=pafs.SubTreeFileSystem(doris["s3_root"], pafs.LocalFileSystem()),
        connection=DorisConnection(
            host=doris["host"], http_port=doris["fe_http_port"], mysql_port=doris["query_port"]
        ),
    )
    tests = [t for t in doctest.DocTestFinder().find(module, globs=globs) if t.examples]
    assert tests, f"{name} has no docstring example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in sorted(tests, key=lambda t: t.name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, capsys.readouterr().out


def test_the_native_stub_names_exactly_what_the_module_holds():
    """``_native.pyi`` (what IDEs and type checkers read) cannot drift from the binding: a
    function or class added or removed in Rust must be added or removed there too."""
    import ast
    import pathlib

    from daft_doris import _native

    stub = pathlib.Path(daft_doris.__file__).with_name("_native.pyi")
    tree = ast.parse(stub.read_text())
    declared = {
        node.name if not isinstance(node, ast.AnnAssign) else node.target.id
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AnnAssign))
    }
    present = {name for name in dir(_native) if not name.startswith("__")} | {"__version__"}
    assert declared == present, (sorted(declared - present), sorted(present - declared))
    assert stub.with_name("py.typed").exists()


def test_the_version_is_above_the_reference_and_has_one_source():
    """`pip install -U daft-doris` must upgrade the reference connector 1.1: the version is
    above it, and the module, the installed distribution and the crate agree."""
    import importlib.metadata
    import re
    from pathlib import Path

    from packaging.version import Version

    assert Version(daft_doris.__version__) > Version("1.1")
    assert importlib.metadata.version("daft-doris") == daft_doris.__version__
    manifest = (Path(__file__).resolve().parents[2] / "crates/daft-doris-py/Cargo.toml").read_text()
    assert re.search(r'^version = "([^"]+)"', manifest, re.M).group(1) == daft_doris.__version__


def _option_docs(module, name: str) -> dict[str, str]:
    """Each key of the options ``TypedDict`` ``name`` of ``module`` and the text of its
    description (the string after its annotation, as pdoc and IDEs read it)."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(module))
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name]
    docs = {}
    for node, after in zip(cls.body, cls.body[1:] + [None], strict=True):
        if isinstance(node, ast.AnnAssign):
            described = isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
            docs[node.target.id] = after.value.value if described else ""
    return docs


def _names_default(doc: str, value) -> bool:
    """Whether ``doc`` states ``value`` as the default (in one of the ways the descriptions
    write numbers: 65,536; 64 MiB; 10 s)."""
    forms = {str(value)}
    if isinstance(value, bool):
        forms = {str(value)}
    elif isinstance(value, int):
        forms |= {f"{value:,}"} | ({f"{value >> 20} MiB"} if value >= 1 << 20 else set())
    elif isinstance(value, float):
        forms |= {f"{value:g} s"}
    return "default" in doc and any(form in doc for form in forms)


def test_every_signature_default_is_the_crates_and_the_crates_accept_it():
    """The Python signatures hold no default of their own: each is the value the crates
    apply (``_native.DEFAULTS``), every entry is used by a signature or named by the read
    options' descriptions, the read entry points declare no option default at all (an
    option left out is the crates' to fill), and the crates' checks accept every default
    as given."""
    import inspect

    from daft_doris import (
        DorisConnection,
        DorisDataSink,
        DorisReadOptions,
        DorisWriteOptions,
        _native,
        read_doris,
        read_options,
        write_doris,
        write_options,
    )
    from daft_doris.read import DorisDataSource
    from daft_doris.streaming import StreamingJob

    used: set[tuple[str, str]] = set()

    def check(function, groups):
        for name, parameter in inspect.signature(function).parameters.items():
            for group in groups:
                if name in _native.DEFAULTS[group]:
                    assert parameter.default == _native.DEFAULTS[group][name], (function, name)
                    used.add((group, name))
                    break

    check(DorisConnection, ("connection",))
    check(StreamingJob.wait_for, ("jobs",))
    check(StreamingJob.stage, ("jobs",))
    for function in (read_doris, DorisDataSource.__init__, write_doris, DorisDataSink.__init__):
        defaults = {
            name
            for name, parameter in inspect.signature(function).parameters.items()
            if parameter.default is not inspect.Parameter.empty
        }
        assert defaults <= {"columns", "filter", "checkpoint", "options"}, (function, defaults)
    for declared, module, groups in (
        (DorisReadOptions, read_options, ("connection", "read")),
        (DorisWriteOptions, write_options, ("write",)),
    ):
        # The declaration (for DorisWriteOptions, the TypedDict it is to a type checker).
        docs = _option_docs(module, getattr(module, "DorisWriteKeywords", declared).__name__)
        assert set(docs) == declared.__required_keys__ | declared.__optional_keys__
        assert all(docs.values()), [name for name, doc in docs.items() if not doc]
        for group in groups:
            for name, value in _native.DEFAULTS[group].items():
                if name in docs:
                    assert _names_default(docs[name], value), (name, value, docs[name])
                    used.add((group, name))
    every = {(group, name) for group, values in _native.DEFAULTS.items() for name in values}
    assert every == used, every - used
    # The defaults pass the crates' own checks, given as they are or left out.
    _native.check_write_options(dict(_native.DEFAULTS["write"]))
    _native.check_write_options({})
    read = {k: v for k, v in _native.DEFAULTS["read"].items() if k in _native.ReadRequest.NAMES}
    _native.ReadRequest("db", "t", transport="mysql", **read)
