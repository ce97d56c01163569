"""The exception classes and the crates' error vocabulary (`doris_sql::ErrorKind`).

Every class the binding raises exists in `daft_doris.errors`, and every class carries a
`kind` from the crates' vocabulary, so `error.kind` means the same whichever class was
raised and whichever crate the error came from (the raising tests in test_read_doris.py and
test_write_doris.py check the kinds of errors that really happened).
"""

import inspect

import pytest
from daft_doris import _native, errors


def test_every_error_the_binding_raises_has_a_class_and_a_kind():
    assert _native.ERROR_KINDS == [
        "configuration",
        "authentication",
        "permission",
        "not_found",
        "incompatible",
        "transport",
        "timeout",
        "rejected",
        "ambiguous",
    ]
    assert len(_native.ERROR_CLASSES) >= 19
    for name in _native.ERROR_CLASSES:
        cls = getattr(errors, name)
        assert issubclass(cls, errors.DaftOlapError), name
        assert cls.kind in _native.ERROR_KINDS, name


def test_every_public_exception_class_has_a_kind_of_the_vocabulary():
    classes = [
        c
        for _, c in inspect.getmembers(errors, inspect.isclass)
        if issubclass(c, errors.DaftOlapError) and c is not errors.DaftOlapError
    ]
    assert len(classes) >= 20
    for cls in classes:
        assert cls.kind in _native.ERROR_KINDS, cls.__name__
        assert cls.__name__ in errors.__all__, cls.__name__


@pytest.mark.parametrize(
    ("cls", "kind"),
    [
        (errors.DorisAmbiguousWriteError, "ambiguous"),
        (errors.DorisTimeoutError, "timeout"),
        (errors.DorisWritePermissionError, "permission"),
        (errors.StagingOrderError, "configuration"),
    ],
)
def test_a_subclass_says_its_own_kind_over_its_parents(cls, kind):
    # Several classes have two parents of different kinds: the class's own wins.
    assert cls.kind == kind
    assert cls("x").kind == kind
