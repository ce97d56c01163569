//! `jobs()` and `tasks()` rows as Arrow record batches, for callers that hand them to a
//! dataframe library: Doris's column names; ids and counts as `Int64`; `Properties` as a
//! `map<string, string>`; offsets as the key of the file they name; `LoadStatistic` as a
//! struct. `ExecuteSql` is already masked ([`crate::redact_statement`]) when the row is
//! parsed, so no credential reaches a batch.

use std::sync::Arc;

use arrow::array::{
    ArrayRef, Int64Array, MapBuilder, MapFieldNames, RecordBatch, StringArray, StringBuilder,
    StructArray,
};
use arrow_schema::{ArrowError, DataType, Field, Fields, Schema, SchemaRef};

use super::JobError;
use crate::sql::{JobRow, LoadStatistic, TaskRow};

/// The `LoadStatistic` struct's fields (Doris's JSON keys).
/// Arrow refused the arrays (a bug here, not in the rows): a metadata error with its cause.
fn built(e: ArrowError) -> JobError {
    JobError::Arrow(e)
}

fn statistic_fields() -> Fields {
    ["scannedRows", "loadBytes", "fileNumber", "fileSize"]
        .into_iter()
        .map(|name| Field::new(name, DataType::Int64, true))
        .collect()
}

fn map_field_names() -> MapFieldNames {
    // pyarrow's names for a map's entries, so that the schema equals `pa.map_(…)`.
    MapFieldNames {
        entry: "entries".into(),
        key: "key".into(),
        value: "value".into(),
    }
}

fn properties_type() -> DataType {
    let entries = Fields::from(vec![
        Field::new("key", DataType::Utf8, false),
        Field::new("value", DataType::Utf8, true),
    ]);
    DataType::Map(
        Arc::new(Field::new("entries", DataType::Struct(entries), false)),
        false,
    )
}

fn text(name: &str) -> Field {
    Field::new(name, DataType::Utf8, true)
}

fn integer(name: &str) -> Field {
    Field::new(name, DataType::Int64, true)
}

fn statistic(name: &str) -> Field {
    Field::new(name, DataType::Struct(statistic_fields()), true)
}

/// The columns of [`jobs_batch`].
pub fn jobs_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        integer("Id"),
        text("Name"),
        text("Definer"),
        text("ExecuteType"),
        text("RecurringStrategy"),
        text("Status"),
        text("ExecuteSql"),
        text("CreateTime"),
        integer("SucceedTaskCount"),
        integer("FailedTaskCount"),
        integer("CanceledTaskCount"),
        text("Comment"),
        Field::new("Properties", properties_type(), true),
        text("CurrentOffset"),
        text("EndOffset"),
        statistic("LoadStatistic"),
        text("ErrorMsg"),
        text("JobRuntimeMsg"),
    ]))
}

/// The columns of [`tasks_batch`].
pub fn tasks_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        integer("TaskId"),
        integer("JobID"),
        text("JobName"),
        text("Label"),
        text("Status"),
        text("ErrorMsg"),
        text("CreateTime"),
        text("StartTime"),
        text("FinishTime"),
        statistic("LoadStatistic"),
        text("User"),
        text("RunningOffset"),
    ]))
}

/// A count as `Int64`, or an error naming the column (Doris's counts are far below 2^63;
/// one above it means the row is not what it claims to be).
fn count(column: &str, value: u64) -> Result<i64, JobError> {
    i64::try_from(value).map_err(|_| {
        JobError::Row(doris_sql::SqlError::MetadataParse(format!(
            "{column} is larger than a 64-bit integer"
        )))
    })
}

fn counts<R>(rows: &[R], column: &str, get: impl Fn(&R) -> u64) -> Result<ArrayRef, JobError> {
    let values = rows
        .iter()
        .map(|r| count(column, get(r)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Arc::new(Int64Array::from(values)))
}

fn ids<R>(rows: &[R], get: impl Fn(&R) -> i64) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values(rows.iter().map(get)))
}

fn texts<'a, R: 'a>(rows: &'a [R], get: impl Fn(&'a R) -> &'a str) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(rows.iter().map(get)))
}

fn optional_texts<'a, R: 'a>(rows: &'a [R], get: impl Fn(&'a R) -> Option<&'a str>) -> ArrayRef {
    Arc::new(rows.iter().map(get).collect::<StringArray>())
}

fn statistics<'a, R: 'a>(
    rows: &'a [R],
    get: impl Fn(&'a R) -> &'a LoadStatistic,
) -> Result<ArrayRef, JobError> {
    let stats: Vec<&LoadStatistic> = rows.iter().map(get).collect();
    let columns = vec![
        counts(&stats, "LoadStatistic.scannedRows", |s| s.scanned_rows)?,
        counts(&stats, "LoadStatistic.loadBytes", |s| s.load_bytes)?,
        counts(&stats, "LoadStatistic.fileNumber", |s| s.file_number)?,
        counts(&stats, "LoadStatistic.fileSize", |s| s.file_size)?,
    ];
    Ok(Arc::new(
        StructArray::try_new(statistic_fields(), columns, None).map_err(built)?,
    ))
}

fn properties(rows: &[JobRow]) -> Result<ArrayRef, JobError> {
    let mut map = MapBuilder::new(
        Some(map_field_names()),
        StringBuilder::new(),
        StringBuilder::new(),
    );
    for row in rows {
        for (key, value) in &row.properties {
            map.keys().append_value(key);
            map.values().append_value(value);
        }
        map.append(true).map_err(built)?;
    }
    let array = map.finish();
    // The builder marks the values nullable and the entries as built; cast to the declared
    // type so the batch's schema is exactly `jobs_schema()`.
    arrow::compute::cast(&array, &properties_type()).map_err(built)
}

/// `jobs()` rows as one batch with [`jobs_schema`].
pub fn jobs_batch(rows: &[JobRow]) -> Result<RecordBatch, JobError> {
    let columns = vec![
        ids(rows, |r| r.id),
        texts(rows, |r| &r.name),
        texts(rows, |r| &r.definer),
        texts(rows, |r| &r.execute_type),
        texts(rows, |r| &r.recurring_strategy),
        texts(rows, |r| r.status.as_str()),
        texts(rows, |r| &r.execute_sql),
        texts(rows, |r| &r.create_time),
        counts(rows, "SucceedTaskCount", |r| r.succeed_task_count)?,
        counts(rows, "FailedTaskCount", |r| r.failed_task_count)?,
        counts(rows, "CanceledTaskCount", |r| r.canceled_task_count)?,
        texts(rows, |r| &r.comment),
        properties(rows)?,
        optional_texts(rows, |r| {
            r.current_offset.as_ref().map(|o| o.end_file.as_str())
        }),
        optional_texts(rows, |r| r.end_offset.as_ref().map(|o| o.end_file.as_str())),
        statistics(rows, |r| &r.load_statistic)?,
        texts(rows, |r| &r.error_msg),
        texts(rows, |r| &r.job_runtime_msg),
    ];
    RecordBatch::try_new(jobs_schema(), columns).map_err(built)
}

/// `tasks()` rows as one batch with [`tasks_schema`].
pub fn tasks_batch(rows: &[TaskRow]) -> Result<RecordBatch, JobError> {
    let columns = vec![
        ids(rows, |r| r.task_id),
        ids(rows, |r| r.job_id),
        texts(rows, |r| &r.job_name),
        texts(rows, |r| &r.label),
        texts(rows, |r| &r.status),
        texts(rows, |r| &r.error_msg),
        texts(rows, |r| &r.create_time),
        texts(rows, |r| &r.start_time),
        texts(rows, |r| &r.finish_time),
        statistics(rows, |r| &r.load_statistic)?,
        texts(rows, |r| &r.user),
        texts(rows, |r| &r.running_offset),
    ];
    RecordBatch::try_new(tasks_schema(), columns).map_err(built)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::{JobStatus, S3Offset};
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::Int64Type;

    fn job(id: i64, props: &[(&str, &str)], offset: Option<&str>) -> JobRow {
        JobRow {
            id,
            name: format!("job{id}"),
            definer: "root".into(),
            execute_type: "STREAMING".into(),
            recurring_strategy: "\\N".into(),
            status: JobStatus::Running,
            execute_sql: "INSERT INTO t SELECT * FROM S3('s3.secret_key' = '*XXX')".into(),
            create_time: "2026-01-01 00:00:00".into(),
            succeed_task_count: 3,
            failed_task_count: 0,
            canceled_task_count: 1,
            comment: String::new(),
            properties: props
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            current_offset: offset.map(|f| S3Offset { end_file: f.into() }),
            end_offset: None,
            load_statistic: LoadStatistic {
                scanned_rows: 10,
                load_bytes: 200,
                file_number: 2,
                file_size: 300,
            },
            error_msg: String::new(),
            job_runtime_msg: String::new(),
        }
    }

    #[test]
    fn a_jobs_batch_keeps_every_row_and_value_in_its_column() {
        let rows = [
            job(
                7,
                &[("max_interval", "10"), ("s3.max_batch_files", "5")],
                Some("in/b.csv"),
            ),
            job(8, &[], None),
        ];
        let batch = jobs_batch(&rows).unwrap();
        assert_eq!(batch.schema(), jobs_schema());
        assert_eq!(batch.num_rows(), 2);
        let ids = batch
            .column_by_name("Id")
            .unwrap()
            .as_primitive::<Int64Type>();
        assert_eq!(ids.values(), &[7, 8]);
        let offsets = batch
            .column_by_name("CurrentOffset")
            .unwrap()
            .as_string::<i32>();
        assert_eq!(offsets.value(0), "in/b.csv");
        assert!(offsets.is_null(1));
        let props = batch.column_by_name("Properties").unwrap().as_map();
        assert_eq!(props.value_length(0), 2);
        assert_eq!(props.value_length(1), 0);
        let keys = props.keys().as_string::<i32>();
        assert_eq!(keys.value(1), "s3.max_batch_files");
        assert_eq!(props.values().as_string::<i32>().value(1), "5");
        let stats = batch.column_by_name("LoadStatistic").unwrap().as_struct();
        let scanned = stats.column_by_name("scannedRows").unwrap();
        assert_eq!(scanned.as_primitive::<Int64Type>().value(1), 10);
        let canceled = batch.column_by_name("CanceledTaskCount").unwrap();
        assert_eq!(canceled.as_primitive::<Int64Type>().value(0), 1);
    }

    #[test]
    fn a_count_beyond_int64_is_an_error_naming_the_column() {
        let mut row = job(1, &[], None);
        row.load_statistic.load_bytes = u64::MAX;
        let err = jobs_batch(&[row]).unwrap_err().to_string();
        assert!(err.contains("LoadStatistic.loadBytes"), "{err}");
    }

    #[test]
    fn no_rows_make_an_empty_batch_with_the_schema() {
        assert_eq!(jobs_batch(&[]).unwrap().num_rows(), 0);
        let tasks = tasks_batch(&[]).unwrap();
        assert_eq!((tasks.num_rows(), tasks.schema()), (0, tasks_schema()));
    }
}
