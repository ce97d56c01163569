//! Writes: a writer that loads one Daft micropartition at a time through
//! `doris-streamload`, with the rules of a checked table (`crate::target`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use doris_sql::WriteOperation;
use doris_streamload::prepare::BatchRules;
use doris_streamload::{
    ClientConfig, Credentials, Format, Label, LabelScheme, LoadOptions, LoadStatus, Loader,
    LoaderConfig, MergeType, StreamLoadClient, TxnRef, UpdateMode,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3_arrow::PyRecordBatchReader;
use sha1::{Digest, Sha1};

use crate::connection::Connection;
use crate::errors::{ErrorClass, load_error, load_error_class, raise};
use crate::runtime::block_on;
use crate::target::WriteTarget;

/// A stable fingerprint of a micropartition's content (16 hex digits of the SHA-1 of its
/// Arrow IPC encoding): the same data gives the same labels on a rerun.
#[pyfunction]
pub(crate) fn fingerprint(py: Python<'_>, data: PyRecordBatchReader) -> PyResult<String> {
    let reader = data.into_reader()?;
    let schema = reader.schema();
    py.detach(move || {
        let mut hasher = HashWriter(Sha1::new());
        let mut writer = arrow::ipc::writer::StreamWriter::try_new(&mut hasher, &schema)
            .map_err(|e| raise(ErrorClass::DorisTableCompatibilityError, e.to_string()))?;
        for batch in reader {
            let batch = batch.map_err(|e| raise(ErrorClass::TransportError, e.to_string()))?;
            writer
                .write(&batch)
                .map_err(|e| raise(ErrorClass::DorisTableCompatibilityError, e.to_string()))?;
        }
        writer
            .finish()
            .map_err(|e| raise(ErrorClass::DorisTableCompatibilityError, e.to_string()))?;
        drop(writer);
        let digest = hasher.0.finalize();
        Ok(digest[..8].iter().map(|b| format!("{b:02x}")).collect())
    })
}

/// `std::io::Write` into a SHA-1.
struct HashWriter(Sha1);

impl std::io::Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The sink's settings that shape every load's Stream Load options.
pub(crate) struct LoadSettings<'a> {
    pub(crate) operation: &'a str,
    pub(crate) format: Option<&'a str>,
    pub(crate) max_filter_ratio: f64,
    pub(crate) strict_mode: bool,
    pub(crate) two_phase_commit: bool,
    pub(crate) load_properties: &'a BTreeMap<String, String>,
    pub(crate) request_timeout_seconds: Option<f64>,
}

/// Loads micropartitions into one table.
#[pyclass(module = "daft_doris._native")]
pub(crate) struct TableWriter {
    client: Arc<StreamLoadClient>,
    database: String,
    table: String,
    options: LoadOptions,
    rules: BatchRules,
    max_rows: usize,
    max_bytes: u64,
    label_prefix: String,
    staging_table: Option<String>,
}

/// A write's Stream Load options: the operation, format and the sink's settings, then
/// the user's load properties (`LoadOptions::set_property`), checked together
/// (`LoadOptions::validate`: combinations Doris refuses, headers the client manages).
pub(crate) fn load_options(request: &LoadSettings<'_>) -> PyResult<LoadOptions> {
    let operation: WriteOperation = request
        .operation
        .parse()
        .map_err(|e: String| raise(ErrorClass::ConfigurationError, e))?;
    let mut options = LoadOptions {
        max_filter_ratio: request.max_filter_ratio,
        strict_mode: request.strict_mode,
        two_phase_commit: request.two_phase_commit,
        ..LoadOptions::default()
    };
    options.format = match request.format {
        None | Some("arrow") => Format::Arrow,
        Some("parquet") => Format::Parquet,
        Some("json") => Format::Json,
        Some("csv") => Format::Csv(Default::default()),
        Some(other) => {
            return Err(raise(
                ErrorClass::ConfigurationError,
                format!("format must be arrow, parquet, json or csv, not {other:?}"),
            ));
        }
    };
    match operation {
        WriteOperation::PartialUpdate => {
            options.update_mode = UpdateMode::FixedColumns {
                legacy_header: false,
            };
        }
        WriteOperation::Delete => options.merge_type = MergeType::Delete,
        WriteOperation::Load | WriteOperation::Upsert => {}
    }
    for (key, value) in request.load_properties {
        options
            .set_property(key, value)
            .map_err(|e| load_error(&e))?;
    }
    if let Some(t) = request.request_timeout_seconds {
        options.timeout = Duration::try_from_secs_f64(t).ok();
    }
    options.validate().map_err(|e| load_error(&e))?;
    Ok(options)
}

#[pymethods]
impl TableWriter {
    /// A writer into `database.table`: `target` is the checked table (`None` for a writer
    /// that only settles two-phase loads); the rest are the sink's options.
    #[new]
    #[pyo3(signature = (
        connection,
        password,
        *,
        database,
        table,
        operation,
        batch_rows,
        batch_bytes,
        label_prefix,
        max_filter_ratio,
        strict_mode,
        target=None,
        format=None,
        request_timeout_seconds=None,
        load_properties=BTreeMap::new(),
        two_phase_commit=false,
        max_retries=None,
        staging_table=None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        connection: PyRef<'_, Connection>,
        password: &str,
        database: String,
        table: String,
        operation: String,
        batch_rows: usize,
        batch_bytes: u64,
        label_prefix: String,
        max_filter_ratio: f64,
        strict_mode: bool,
        target: Option<PyRef<'_, WriteTarget>>,
        format: Option<String>,
        request_timeout_seconds: Option<f64>,
        load_properties: BTreeMap<String, String>,
        two_phase_commit: bool,
        max_retries: Option<u32>,
        staging_table: Option<String>,
    ) -> PyResult<Self> {
        let connection: &Connection = &connection;
        let rules = target.map(|t| t.rules.clone()).unwrap_or_default();
        let rules = BatchRules::new(rules).map_err(|e| load_error(&e))?;
        let mut config = ClientConfig::new(
            connection.http_url()?,
            Credentials::new(&connection.user, password),
        );
        config
            .allowlist
            .targets
            .extend(connection.redirect_targets.iter().cloned());
        config.redirect_policy = connection.redirect_policy;
        config.ca_bundle_pem = connection.ca_bundle();
        config.connect_timeout = connection.connect_timeout;
        if let Some(t) = request_timeout_seconds {
            config.request_timeout =
                Duration::try_from_secs_f64(t).unwrap_or(config.request_timeout);
        }
        if let Some(n) = max_retries {
            config.retry.max_attempts = n + 1;
        }
        let options = load_options(&LoadSettings {
            operation: &operation,
            format: format.as_deref(),
            max_filter_ratio,
            strict_mode,
            two_phase_commit,
            load_properties: &load_properties,
            request_timeout_seconds,
        })?;
        let client = StreamLoadClient::new(config).map_err(|e| load_error(&e))?;
        Ok(Self {
            client: Arc::new(client),
            database,
            table,
            options,
            rules,
            max_rows: batch_rows,
            max_bytes: batch_bytes,
            label_prefix,
            staging_table,
        })
    }

    /// Loads one micropartition; returns its summary as a dict.
    ///
    /// With `label_key` the labels are `prefix_key_partition_sequence` (deterministic:
    /// a rerun over the same data loads nothing twice); without, random per load.
    ///
    /// With `tag` (an atomic write) the rows go to the staging table, every one tagged
    /// `tag`; only the tags of attempts that succeed are published.
    #[pyo3(signature = (data, label_key=None, partition=0, tag=None))]
    fn write<'py>(
        &self,
        py: Python<'py>,
        data: PyRecordBatchReader,
        label_key: Option<String>,
        partition: u32,
        tag: Option<String>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let reader = data.into_reader()?;
        let labels = match label_key {
            Some(key) => LabelScheme::Deterministic {
                prefix: self.label_prefix.clone(),
                key,
                partition,
            },
            None => LabelScheme::Random {
                prefix: self.label_prefix.clone(),
            },
        };
        let config = LoaderConfig {
            max_rows: self.max_rows,
            max_bytes: self.max_bytes,
            labels,
            ..LoaderConfig::default()
        };
        let mut batches = Vec::new();
        for batch in reader {
            let batch = batch.map_err(|e| raise(ErrorClass::TransportError, e.to_string()))?;
            batches.push(self.rules.apply(batch).map_err(|e| load_error(&e))?);
        }
        let client = self.client.clone();
        let (db, mut table, mut options) = (
            self.database.clone(),
            self.table.clone(),
            self.options.clone(),
        );
        if let (Some(tag), Some(staging)) = (&tag, &self.staging_table) {
            let fields: Vec<String> = batches
                .first()
                .map(|b| {
                    b.schema()
                        .fields()
                        .iter()
                        .map(|f| f.name().clone())
                        .collect()
                })
                .unwrap_or_default();
            options = doris_streamload::atomic::staging_load_options(&options, &fields, tag)
                .map_err(|e| load_error(&e))?;
            table = staging.clone();
        }
        let outcome = block_on(py, move || async move {
            let loader = Loader::new(client, &db, &table, options, config)
                .map_err(|e| (load_error_class(&e), e.to_string()))?;
            // A failure waits for the loads in flight and aborts what this micropartition
            // pre-committed (two-phase mode) before it is raised.
            loader
                .load_all(batches)
                .await
                .map_err(|e| (load_error_class(&e.error), e.to_string()))
        });
        let summary = outcome.map_err(|(class, message)| raise(class, message))?;
        let out = PyDict::new(py);
        out.set_item("batches", summary.ledger.len())?;
        out.set_item("attempted_rows", summary.rows)?;
        out.set_item("loaded_rows", summary.loaded_rows)?;
        out.set_item("filtered_rows", summary.filtered_rows)?;
        out.set_item("unselected_rows", summary.unselected_rows)?;
        out.set_item("uploaded_bytes", summary.uploaded_bytes)?;
        let mut statuses: BTreeMap<&str, usize> = BTreeMap::new();
        let mut precommitted = Vec::new();
        for entry in &summary.ledger {
            let name = match entry.report.status {
                LoadStatus::Success => "success",
                LoadStatus::PublishTimeout => "publish_timeout",
                LoadStatus::Precommitted => {
                    precommitted.push((entry.report.txn_id, entry.report.label.clone()));
                    "precommitted"
                }
                LoadStatus::CommittedByEarlierAttempt => "committed_by_earlier_attempt",
                LoadStatus::AlreadyLoaded => "already_loaded",
            };
            *statuses.entry(name).or_default() += 1;
        }
        out.set_item("statuses", statuses)?;
        out.set_item("precommitted", precommitted)?;
        Ok(out)
    }

    /// Commits (or aborts) pre-committed loads, each named by `(txn_id, label)` (the label
    /// when Doris gave no id); idempotent. A commit that fails aborts every later load and
    /// raises `DorisPartialCommitError` naming what committed.
    fn settle(
        &self,
        py: Python<'_>,
        txns: Vec<(i64, Option<String>)>,
        commit: bool,
    ) -> PyResult<()> {
        let txns = txns
            .into_iter()
            .map(|(id, label)| match (id, label) {
                (id, _) if id >= 0 => Ok(TxnRef::Id(id)),
                (_, Some(label)) => Label::new(label).map(TxnRef::Label),
                (_, None) => Err(doris_streamload::StreamLoadError::Config(
                    "a pre-committed load without label or transaction id".into(),
                )),
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| load_error(&e))?;
        let client = self.client.clone();
        let db = self.database.clone();
        block_on(py, move || async move {
            if commit {
                client.commit_or_abort_all(&db, &txns).await
            } else {
                client.abort_every(&db, &txns).await
            }
        })
        .map(|_| ())
        .map_err(|e| load_error(&e))
    }
}
