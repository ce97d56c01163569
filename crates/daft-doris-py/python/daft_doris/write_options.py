"""``DorisWriteOptions``: every option of ``write_doris`` and ``DorisDataSink``, declared
once (``DorisWriteKeywords``).

``write_doris`` takes these options as keywords (``**options: Unpack[DorisWriteKeywords]``)
and ``DorisDataSink`` as one mapping (``DorisWriteOptions(operation="upsert")`` makes one),
so a type checker and an IDE see each one's name and type. To a type checker
``DorisWriteOptions`` is that ``TypedDict``; at run time it is also what 1.1's options object
was: each option reads as an attribute (``options.batch_rows``; one left out reads as its
default) and ``DorisWriteOptions.from_mapping(mapping)`` builds one. An option left out takes the
Rust crates' default (``doris_streamload::write::WriteSpec::new``, shown in
``daft_doris._native.DEFAULTS["write"]``), applied where the crates apply it, so this
package holds none of them; the crates check every value and combination.
"""

# No `from __future__ import annotations` here, as in read_options.py.
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from daft_doris import _keywords


class DorisWriteKeywords(TypedDict, total=False):
    """The options of a Doris write; each has the default its description names."""

    operation: Literal["load", "upsert", "partial_update", "delete"]
    """What the rows do: ``load`` (default) appends or, on a unique-key table, replaces
    by key; ``upsert`` requires a unique-key table; ``partial_update`` writes only the
    DataFrame's columns of existing keys; ``delete`` removes the keys' rows."""
    format: Literal["arrow", "parquet", "json", "csv"] | None
    """The Stream Load body: ``None`` (default) sends Arrow."""
    batch_rows: int
    """The most rows in one load (default 65,536)."""
    batch_bytes: int
    """The encoded bytes one load aims at (default 64 MiB); a single larger row is a load
    of its own."""
    label_prefix: str
    """Every Stream Load label starts with it (default daft_doris)."""
    idempotence_key: str | None
    """The key that makes a rerun of the whole write a no-op (default None: labels are
    random). With it the write is atomic unless ``atomic=False``."""
    max_filter_ratio: float
    """Doris's ``max_filter_ratio``: the share of rows a load may filter out (default
    0.0)."""
    strict_mode: bool
    """Doris's ``strict_mode`` (default True)."""
    request_timeout_seconds: float | None
    """The client's wait for Doris's answer to each load (default None: the connection's),
    as in the reference connector 1.1: nothing of it is sent to Doris."""
    load_timeout_seconds: float | None
    """The Stream Load ``timeout``: how long Doris lets each load run (default None:
    Doris's own ``stream_load_default_timeout_second``)."""
    load_properties: Mapping[str, str] | None
    """Further Stream Load headers (``columns``, ``where``, ``sequence_col``, ...); the ones
    the write sets itself are refused."""
    two_phase_commit: bool
    """Pre-commit every load and commit them all at the end (default False)."""
    max_retries: int
    """Retries of one load, under its label (default 4)."""
    atomic: bool | None
    """One Doris transaction for the whole write (default None: atomic when an
    ``idempotence_key`` or an overwrite is given, except with ``two_phase_commit`` or
    ``operation="delete"``)."""
    write_mode: Literal["append", "overwrite"]
    """``append`` (default) adds rows; ``overwrite`` replaces every row of the table in
    the same one transaction (atomic, ``operation="load"`` only)."""
    commit_ledger: str | None
    """The table of the target's database an atomic write records its key in (default
    daft_doris_commits); ``None`` relies on Doris's label alone."""


def check_option_names(owner: str, options: Mapping[str, Any]) -> None:
    """Refuses, as Python refuses a bad keyword, an option that is not a
    ``DorisWriteOptions`` key."""
    _keywords.check_option_names(owner, options, DorisWriteKeywords)


if TYPE_CHECKING:
    DorisWriteOptions = DorisWriteKeywords
else:

    class DorisWriteOptions(dict):
        """The options of a Doris write as one object: a mapping of the options given
        (``DorisDataSink`` takes it, ``write_doris`` takes it ``**``-unpacked) whose every
        option also reads as an attribute, as 1.1's options object did; an option left out
        reads as its default (``daft_doris._native.DEFAULTS["write"]``, or ``None``). Names
        are checked when it is made, values where it is used."""

        __required_keys__ = DorisWriteKeywords.__required_keys__
        __optional_keys__ = DorisWriteKeywords.__optional_keys__
        __annotations__ = DorisWriteKeywords.__annotations__

        def __init__(self, **options: Any) -> None:
            check_option_names("DorisWriteOptions", options)
            super().__init__(options)

        @classmethod
        def from_mapping(cls, options: "Mapping[str, Any] | None" = None) -> "DorisWriteOptions":
            """1.1's constructor from a mapping of options (``None``: every default)."""
            if options is not None and not isinstance(options, Mapping):
                from daft_doris.errors import ConfigurationError

                raise ConfigurationError("DorisWriteOptions.from_mapping takes a mapping of options")
            return cls(**dict(options or {}))

        def __getattr__(self, name: str) -> Any:
            if name in DorisWriteKeywords.__optional_keys__:
                if name in self:
                    return self[name]
                from daft_doris import _native

                return _native.DEFAULTS["write"].get(name)
            raise AttributeError(f"DorisWriteOptions has no option {name!r}")

        def __repr__(self) -> str:
            given = ", ".join(f"{k}={v!r}" for k, v in self.items())
            return f"DorisWriteOptions({given})"
