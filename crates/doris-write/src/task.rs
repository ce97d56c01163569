//! One task's share of a write: its batches loaded through Stream Load as the
//! [`WriteSpec`] says, into the target table or an atomic run's staging table, and the
//! [`TaskReport`] the write's outcome is folded from. What an engine's write task (Daft's
//! `DataSink.write`) runs on a worker.

use std::sync::Arc;
use std::time::Duration;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use doris_streamload::prepare::{BatchRules, ColumnRule};
use doris_streamload::{
    ClientConfig, LabelScheme, LoadOptions, Loader, LoaderConfig, LoaderError, StreamLoadClient,
    StreamLoadError,
};

use crate::{PartitionLabels, TaskReport, WriteSpec};

/// Why a task's loads failed.
#[derive(Debug, thiserror::Error)]
pub enum TaskFailure {
    /// Before any load: a batch broke a column's rule, or the loader refused its settings.
    #[error(transparent)]
    Refused(#[from] StreamLoadError),
    /// Part-way: the first failure, with what had loaded before it (never lost) and the
    /// pre-committed loads aborted or left.
    #[error(transparent)]
    Loads(#[from] LoaderError),
}

/// Loads a task's batches into one table (`db.table`, or an atomic run's staging table).
#[derive(Debug)]
pub struct TaskWriter {
    client: Arc<StreamLoadClient>,
    database: String,
    table: String,
    spec: WriteSpec,
    options: LoadOptions,
    rules: BatchRules,
    /// The atomic run's staging table and this attempt's tag (the publish takes only the
    /// rows of the attempts the engine kept).
    staging: Option<(String, String)>,
}

impl TaskWriter {
    /// A writer of `spec`'s loads into `database.table` through the FE of `config` (the
    /// spec's timeout, or `default_timeout`, is the client's answer timeout), applying the
    /// table check's column `rules` to every batch; with `staging_table`, into an atomic
    /// run's staging table under a fresh attempt tag ([`crate::atomic::attempt_tag`]).
    pub fn new(
        mut config: ClientConfig,
        default_timeout: Duration,
        database: impl Into<String>,
        table: impl Into<String>,
        mut spec: WriteSpec,
        rules: Vec<ColumnRule>,
        staging_table: Option<String>,
    ) -> Result<Self, StreamLoadError> {
        spec.configure_client(&mut config, default_timeout);
        Ok(Self {
            options: spec.load_options()?,
            rules: BatchRules::new(rules)?,
            client: Arc::new(StreamLoadClient::new(config)?),
            database: database.into(),
            table: table.into(),
            staging: staging_table.map(|t| (t, crate::atomic::attempt_tag())),
            spec,
        })
    }

    /// Loads `batches` (of `schema`), each checked and converted by the column rules
    /// first, in loads of at most the spec's rows and bytes, labelled by `labels` (a keyed
    /// write's deterministic labels, [`PartitionLabels::of`]) or randomly under the spec's
    /// prefix; returns the task's report.
    pub async fn write(
        &self,
        schema: &SchemaRef,
        batches: Vec<RecordBatch>,
        labels: Option<&PartitionLabels>,
    ) -> Result<TaskReport, TaskFailure> {
        let batches = batches
            .into_iter()
            .map(|batch| self.rules.apply(batch))
            .collect::<Result<Vec<_>, _>>()?;
        let labels = match labels {
            Some(labels) => labels.scheme(schema, &batches)?,
            None => LabelScheme::Random {
                prefix: self.spec.label_prefix.clone(),
            },
        };
        let config = LoaderConfig {
            max_rows: self.spec.batch_rows,
            max_bytes: self.spec.batch_bytes,
            labels,
            ..LoaderConfig::default()
        };
        let columns: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
        let (table, options) = match &self.staging {
            Some((staging, tag)) => (
                staging,
                crate::atomic::staging_load_options(&self.options, &columns, tag)?,
            ),
            None => (&self.table, self.options.clone()),
        };
        let loader = Loader::new(self.client.clone(), &self.database, table, options, config)?;
        let summary = loader.load_all(batches).await?;
        let mut report = TaskReport::of_loads(&summary)?;
        report.tag = self.staging.as_ref().map(|(_, tag)| tag.clone());
        report.columns = columns;
        Ok(report)
    }
}
