"""The reference connector's read module path: ``from daft_doris.doris import read_doris``."""

from daft_doris.read import DorisDataSource, read_doris

__all__ = ["DorisDataSource", "read_doris"]
