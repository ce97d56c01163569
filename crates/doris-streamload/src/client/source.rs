//! The rows of one load and where they are cut.

use std::sync::Mutex;

use arrow::record_batch::RecordBatch;
use arrow_schema::SchemaRef;
use tokio::sync::oneshot;

use crate::encode::{Limits, encode, take_rows};
use crate::error::StreamLoadError;
use crate::options::LoadOptions;

/// The rows of one load, and how the load is cut from them.
pub(crate) struct Source {
    pub(super) schema: SchemaRef,
    batches: Vec<RecordBatch>,
    limits: Option<Limits>,
    cut: Mutex<Option<u64>>,
    on_cut: Mutex<Option<oneshot::Sender<u64>>>,
}

impl Source {
    pub(crate) fn new(
        schema: SchemaRef,
        batches: Vec<RecordBatch>,
        limits: Option<Limits>,
        on_cut: Option<oneshot::Sender<u64>>,
    ) -> Self {
        Self {
            schema,
            batches,
            limits,
            cut: Mutex::new(None),
            on_cut: Mutex::new(on_cut),
        }
    }

    pub(super) fn cut(&self) -> Option<u64> {
        self.cut.lock().ok().and_then(|c| *c)
    }

    pub(super) fn set_cut(&self, rows: u64) {
        if let Ok(mut c) = self.cut.lock() {
            *c = Some(rows);
        }
        if let Some(tx) = self.on_cut.lock().ok().and_then(|mut t| t.take()) {
            let _ = tx.send(rows);
        }
    }

    /// The rows this load is made of: all of them, or as the limits cut them.
    pub(super) fn plan(&self) -> (Vec<RecordBatch>, Option<Limits>) {
        match self.cut() {
            Some(rows) => (take_rows(&self.batches, rows), None),
            None => (self.batches.clone(), self.limits),
        }
    }

    /// Fixes the cut without sending anything (when Doris already holds the load).
    pub(super) fn settle_cut(&self, options: &LoadOptions) -> Result<u64, StreamLoadError> {
        if let Some(rows) = self.cut() {
            return Ok(rows);
        }
        let (batches, limits) = self.plan();
        let (enc, _) = encode(
            &self.schema,
            &batches,
            &options.format,
            options.compression,
            limits,
            std::io::sink(),
        )?;
        self.set_cut(enc.rows);
        Ok(enc.rows)
    }

    pub(super) fn fields(&self) -> Vec<String> {
        self.schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::Int64Array;
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    fn batches(rows: i64) -> (SchemaRef, Vec<RecordBatch>) {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int64Array::from_iter_values(0..rows))],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        (schema, vec![batch])
    }

    #[test]
    fn without_limits_a_load_is_every_row_and_settling_keeps_them_all() {
        let (schema, data) = batches(10);
        let source = Source::new(schema, data, None, None);
        let (planned, limits) = source.plan();
        assert_eq!(planned.iter().map(RecordBatch::num_rows).sum::<usize>(), 10);
        assert!(limits.is_none());
        assert_eq!(source.settle_cut(&LoadOptions::default()).ok(), Some(10));
        assert_eq!(source.fields(), ["id"]);
    }

    #[test]
    fn the_first_cut_is_kept_and_told_once_so_a_retry_sends_the_same_rows() {
        let (schema, data) = batches(10);
        let (tx, mut rx) = oneshot::channel();
        let limits = Limits {
            max_rows: 4,
            max_bytes: u64::MAX,
        };
        let source = Source::new(schema, data, Some(limits), Some(tx));
        // Settling encodes without sending and fixes the cut the limits make.
        assert_eq!(source.settle_cut(&LoadOptions::default()).ok(), Some(4));
        assert_eq!(rx.try_recv().ok(), Some(4));
        // From now on every plan is exactly those rows, with no limits left to re-cut.
        let (planned, limits) = source.plan();
        assert_eq!(planned.iter().map(RecordBatch::num_rows).sum::<usize>(), 4);
        assert!(limits.is_none());
        // A later cut is recorded, but the listener heard the first one only.
        source.set_cut(3);
        assert_eq!(source.cut(), Some(3));
    }
}
