//! Deterministic per-load labels for a keyed write that is not atomic.
//!
//! A partition's loads are labelled `<prefix>_<key>_<fingerprint>_<occurrence>_<sequence>`.
//! The fingerprint hashes the partition's rows (their Arrow IPC encoding) *together with*
//! every setting that decides how they are cut into loads and what each load does
//! (operation, format, batch bounds, load properties): the same partition rerun with the
//! same settings finds its labels already loaded and loads nothing twice, while a rerun
//! with other settings gets other labels instead of finding some other load's rows under
//! them (which would count as "already loaded" and silently skip rows). Identical
//! partitions of one write are told apart by the occurrence number.

use std::collections::HashMap;
use std::sync::Mutex;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use sha1::{Digest, Sha1};

use crate::WriteSpec;
use doris_streamload::LabelScheme;
use doris_streamload::StreamLoadError;

/// Hex digits of a fingerprint.
const FINGERPRINT_DIGITS: usize = 16;

/// 16 hex digits of the SHA-1 of `shape` and the Arrow IPC stream of `batches`: stable for
/// the same rows in the same order under the same settings.
pub fn content_fingerprint(
    shape: &str,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<String, StreamLoadError> {
    let mut hasher = HashWriter(Sha1::new());
    hasher.0.update(shape.as_bytes());
    hasher.0.update([0u8]);
    let mut writer = arrow::ipc::writer::StreamWriter::try_new(&mut hasher, schema)?;
    for batch in batches {
        writer.write(batch)?;
    }
    writer.finish()?;
    drop(writer);
    let digest = hasher.0.finalize();
    Ok(digest[..FINGERPRINT_DIGITS / 2]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
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

/// The label schemes of one write's partitions: one per partition, from its fingerprint
/// and the number of identical partitions labelled before it. Shared by the write's tasks
/// (the occurrence count is behind a lock).
#[derive(Debug)]
pub struct PartitionLabels {
    prefix: String,
    key: String,
    shape: String,
    occurrences: Mutex<HashMap<String, u32>>,
}

impl PartitionLabels {
    /// The labels of `spec`'s write: a keyed write that is not atomic (per-load labels,
    /// two-phase or not); `None` for the others.
    pub fn of(spec: &WriteSpec) -> Option<Self> {
        if spec.mode() == crate::WriteMode::Atomic {
            return None;
        }
        Some(Self {
            prefix: spec.label_prefix.clone(),
            key: spec.idempotence_key.clone()?,
            shape: spec.load_shape(),
            occurrences: Mutex::new(HashMap::new()),
        })
    }

    /// The scheme of the next partition whose rows are `batches`.
    pub fn scheme(
        &self,
        schema: &SchemaRef,
        batches: &[RecordBatch],
    ) -> Result<LabelScheme, StreamLoadError> {
        let fingerprint = content_fingerprint(&self.shape, schema, batches)?;
        let occurrence = {
            let mut seen = self
                .occurrences
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let next = seen.entry(fingerprint.clone()).or_insert(0);
            let occurrence = *next;
            *next += 1;
            occurrence
        };
        Ok(LabelScheme::Deterministic {
            prefix: self.prefix.clone(),
            key: format!("{}_{fingerprint}", self.key),
            partition: occurrence,
        })
    }

    /// The scheme with the longest labels a write of `prefix` and `key` can make.
    pub(crate) fn longest_scheme(prefix: &str, key: &str) -> LabelScheme {
        LabelScheme::Deterministic {
            prefix: prefix.to_owned(),
            key: format!("{key}_{}", "f".repeat(FINGERPRINT_DIGITS)),
            partition: u32::MAX,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Arc;

    use arrow::array::Int64Array;
    use arrow::datatypes::{DataType, Field, Schema};
    use doris_sql::WriteOperation;

    use super::*;

    fn batch(values: &[i64]) -> (SchemaRef, Vec<RecordBatch>) {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int64Array::from(values.to_vec()))],
        )
        .unwrap();
        (schema, vec![batch])
    }

    fn keyed(batch_rows: usize) -> WriteSpec {
        WriteSpec {
            idempotence_key: Some("job".into()),
            atomic: Some(false),
            batch_rows,
            ..WriteSpec::new(WriteOperation::Load)
        }
    }

    fn label(scheme: &LabelScheme) -> String {
        scheme.label(0).unwrap().to_string()
    }

    #[test]
    fn a_rerun_with_the_same_settings_repeats_its_labels_and_other_settings_do_not() {
        let (schema, rows) = batch(&[1, 2, 3]);
        let first = PartitionLabels::of(&keyed(100)).unwrap();
        let again = PartitionLabels::of(&keyed(100)).unwrap();
        let a = label(&first.scheme(&schema, &rows).unwrap());
        assert_eq!(a, label(&again.scheme(&schema, &rows).unwrap()));
        assert!(a.starts_with("daft_doris_job_"), "{a}");
        // Other batch bounds cut other loads: other labels.
        let other = PartitionLabels::of(&keyed(2)).unwrap();
        assert_ne!(a, label(&other.scheme(&schema, &rows).unwrap()));
        // Other rows: another fingerprint.
        let (_, changed) = batch(&[1, 2, 4]);
        assert_ne!(a, label(&again.scheme(&schema, &changed).unwrap()));
    }

    #[test]
    fn identical_partitions_of_one_write_are_told_apart() {
        let (schema, rows) = batch(&[7]);
        let labels = PartitionLabels::of(&keyed(10)).unwrap();
        let one = labels.scheme(&schema, &rows).unwrap();
        let two = labels.scheme(&schema, &rows).unwrap();
        assert_ne!(label(&one), label(&two));
        assert!(PartitionLabels::of(&WriteSpec::new(WriteOperation::Load)).is_none());
    }
}
