"""daft_doris: Apache Doris reads and writes for Daft, on a Rust core.

``read_doris`` reads one table over the MySQL protocol or Arrow Flight SQL, with
projection, filter, limit and count pushdown and optional tablet-parallel tasks;
``write_doris`` loads a DataFrame through HTTP Stream Load with the table checked first,
labels that can be deterministic, and typed outcomes. ``daft_doris.streaming`` manages
Doris 4.0 streaming jobs (exactly-once incremental loads from object storage) and stages
DataFrames as files for them. ``DorisCatalog`` attaches Doris to a Daft session, so
``daft.sql`` and ``read_table`` reach its tables.
"""

from daft_doris._native import __version__
from daft_doris.catalog import DorisCatalog, DorisCatalogTable
from daft_doris.connection import DorisConnection, DorisTable
from daft_doris.diagnostics import diagnose
from daft_doris.errors import (
    AuthenticationError,
    CompatibilityError,
    ConfigurationError,
    DaftOlapError,
    DatabaseObjectNotFoundError,
    DatabasePermissionError,
    DependencyError,
    DiscoveryError,
    DorisAmbiguousWriteError,
    DorisLabelExistsError,
    DorisMetadataError,
    DorisPartialCommitError,
    DorisReleaseError,
    DorisStreamingJobError,
    DorisTableCompatibilityError,
    DorisTimeoutError,
    DorisWriteAuthenticationError,
    DorisWriteError,
    DorisWritePermissionError,
    SchemaError,
    StagingOrderError,
    TransportError,
    UnreadableColumnsWarning,
    UnsupportedPredicateError,
)
from daft_doris.read import DorisDataSource, read_doris
from daft_doris.read_options import DorisReadOptions
from daft_doris.secrets import SecretRef
from daft_doris.streaming import S3Source, StreamingJob
from daft_doris.write import (
    DorisDataSink,
    cleanup_commit_ledger,
    cleanup_staging,
    write_doris,
)
from daft_doris.write_options import DorisWriteOptions

__all__ = [
    "AuthenticationError",
    "CompatibilityError",
    "ConfigurationError",
    "DaftOlapError",
    "DatabaseObjectNotFoundError",
    "DatabasePermissionError",
    "DependencyError",
    "DiscoveryError",
    "DorisAmbiguousWriteError",
    "DorisCatalog",
    "DorisCatalogTable",
    "DorisConnection",
    "DorisDataSink",
    "DorisDataSource",
    "DorisReadOptions",
    "DorisLabelExistsError",
    "DorisPartialCommitError",
    "DorisReleaseError",
    "DorisMetadataError",
    "DorisStreamingJobError",
    "DorisTable",
    "DorisTableCompatibilityError",
    "DorisTimeoutError",
    "DorisWriteAuthenticationError",
    "DorisWritePermissionError",
    "DorisWriteError",
    "DorisWriteOptions",
    "S3Source",
    "SchemaError",
    "SecretRef",
    "StagingOrderError",
    "StreamingJob",
    "TransportError",
    "UnreadableColumnsWarning",
    "UnsupportedPredicateError",
    "__version__",
    "read_doris",
    "cleanup_commit_ledger",
    "cleanup_staging",
    "diagnose",
    "write_doris",
]
