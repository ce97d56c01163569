"""``DorisWriteOptions``: every option of ``write_doris`` and ``DorisDataSink``, declared
once.

``write_doris`` takes these options as keywords (``**options: Unpack[DorisWriteOptions]``)
and ``DorisDataSink`` as one mapping (``DorisWriteOptions(operation="upsert")`` makes one),
so a type checker and an IDE see each one's name and type. An option left out takes the
Rust crates' default (``doris_streamload::write::WriteSpec::new``, shown in
``daft_doris._native.DEFAULTS["write"]``), applied where the crates apply it, so this
package holds none of them; the crates check every value and combination.
"""

# No `from __future__ import annotations` here, as in read_options.py.
from collections.abc import Mapping
from typing import Any, Literal, TypedDict

from daft_doris import _keywords


class DorisWriteOptions(TypedDict, total=False):
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
    """Each load's Stream Load ``timeout`` and the client's wait for Doris's answer
    (default None: the connection's)."""
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
    _keywords.check_option_names(owner, options, DorisWriteOptions)
