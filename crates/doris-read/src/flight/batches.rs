//! Batches as the reader hands them on: conformed to the planned schema, gathered from
//! the server's small batches and cut to the row and byte bounds.

use arrow::array::RecordBatch;
use arrow_schema::SchemaRef;

use crate::error::ReadError;
use crate::mysql::stream::BatchLimits;

/// Makes a batch match the planned schema: same column names, each value as Doris holds
/// it ([`super::values`]).
pub(super) fn conform(batch: RecordBatch, schema: &SchemaRef) -> Result<RecordBatch, ReadError> {
    let got = batch.schema();
    if got.fields().len() != schema.fields().len()
        || got
            .fields()
            .iter()
            .zip(schema.fields())
            .any(|(a, b)| !a.name().eq_ignore_ascii_case(b.name()))
    {
        return Err(ReadError::Metadata(
            "the Flight result's columns differ from the planned columns".into(),
        ));
    }
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (column, field) in batch.columns().iter().zip(schema.fields()) {
        let conformed =
            super::values::conform_column(column, field.data_type()).map_err(|reason| {
                ReadError::Decode {
                    column: field.name().clone(),
                    arrow_type: field.data_type().to_string(),
                    reason,
                }
            })?;
        columns.push(conformed);
    }
    RecordBatch::try_new(schema.clone(), columns).map_err(|e| ReadError::Decode {
        column: String::new(),
        arrow_type: String::new(),
        reason: e.to_string(),
    })
}

/// The bytes a batch's values take. A batch decoded from a Flight message shares that
/// message's one allocation among all its columns, so the allocations' sizes
/// (`get_array_memory_size`) would count the message once per buffer; this counts each
/// column's own slice.
pub(super) fn data_bytes(batch: &RecordBatch) -> usize {
    batch
        .columns()
        .iter()
        .map(|c| {
            c.to_data()
                .get_slice_memory_size()
                .unwrap_or_else(|_| c.get_array_memory_size())
        })
        .sum()
}

/// Cuts a batch into pieces within the row and byte bounds (a single larger row stays whole).
pub(super) fn cut(batch: RecordBatch, limits: BatchLimits) -> Vec<RecordBatch> {
    let rows = batch.num_rows();
    if rows == 0 {
        return Vec::new();
    }
    let bytes = data_bytes(&batch).max(1);
    let by_bytes = ((limits.bytes as u128 * rows as u128) / bytes as u128) as usize;
    let step = limits.rows.min(by_bytes).max(1);
    if step >= rows {
        return vec![batch];
    }
    (0..rows)
        .step_by(step)
        .map(|at| batch.slice(at, step.min(rows - at)))
        .collect()
}

/// Gathers small batches until they reach the row or byte bound.
pub(super) struct Coalescer {
    schema: SchemaRef,
    limits: BatchLimits,
    batches: Vec<RecordBatch>,
    rows: usize,
    bytes: usize,
    pub(super) done: bool,
}

impl Coalescer {
    pub(super) fn new(schema: SchemaRef, limits: BatchLimits) -> Self {
        Self {
            schema,
            limits,
            batches: Vec::new(),
            rows: 0,
            bytes: 0,
            done: false,
        }
    }

    /// Adds a batch; returns a gathered batch once a bound is reached.
    pub(super) fn push(&mut self, batch: RecordBatch) -> Result<Vec<RecordBatch>, ReadError> {
        self.rows += batch.num_rows();
        self.bytes += data_bytes(&batch);
        self.batches.push(batch);
        if self.rows >= self.limits.rows || self.bytes >= self.limits.bytes {
            return self.take();
        }
        Ok(Vec::new())
    }

    /// The rest, at the end of the stream.
    pub(super) fn flush(&mut self) -> Result<Vec<RecordBatch>, ReadError> {
        self.done = true;
        self.take()
    }

    fn take(&mut self) -> Result<Vec<RecordBatch>, ReadError> {
        let batches = std::mem::take(&mut self.batches);
        self.rows = 0;
        self.bytes = 0;
        match batches.len() {
            0 => Ok(Vec::new()),
            1 => Ok(batches),
            _ => arrow::compute::concat_batches(&self.schema, &batches)
                .map(|b| vec![b])
                .map_err(|e| ReadError::Transport(format!("cannot gather batches: {e}"))),
        }
    }
}
