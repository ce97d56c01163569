//! Flight SQL prepared statements with bound parameters, as Doris 4.0's FE serves them to
//! ADBC and JDBC Flight SQL drivers.
//!
//! `CreatePreparedStatement` keeps the SQL (its `?` markers counted) under a handle owned by
//! the calling user and answers the result schema; `DoPut` of `CommandPreparedStatementQuery`
//! binds one parameter row (an Arrow batch, one column per `?`, in order); `GetFlightInfo`
//! of the same command runs the statement with the values written in as SQL literals (the
//! MySQL face's COM_STMT_EXECUTE binds the same way); `ClosePreparedStatement` forgets it.

use std::collections::HashMap;
use std::sync::Mutex;

use arrow::array::{Array, ArrayRef};
use arrow::datatypes::{DataType, SchemaRef};
use arrow::record_batch::RecordBatch;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use arrow_flight::{IpcMessage, SchemaAsIpc};
use prost::bytes::Bytes;
use sqlparser::tokenizer::Token;
use tonic::Status;

use crate::mysql::prepared::{bind, null};

/// One prepared statement.
#[derive(Debug)]
struct Prepared {
    user: String,
    tokens: Vec<Token>,
    params: usize,
    bound: Option<Vec<Token>>,
}

/// The prepared statements of the FE Flight face, by handle.
#[derive(Debug, Default)]
pub(super) struct PreparedQueries {
    by_handle: Mutex<HashMap<Vec<u8>, Prepared>>,
}

fn poisoned() -> Status {
    Status::internal("state poisoned")
}

fn unknown() -> Status {
    Status::not_found("unknown or closed prepared statement")
}

impl PreparedQueries {
    /// Keeps `sql` for `user`; returns its handle and the SQL with every parameter NULL
    /// (to plan the result schema).
    pub(super) fn create(&self, user: &str, sql: &str) -> Result<(Vec<u8>, String), Status> {
        let tokens = crate::tokens::tokenize(sql)
            .map_err(|e| Status::invalid_argument(format!("errCode = 2, detailMessage = {e}")))?;
        let params = tokens
            .iter()
            .filter(|t| matches!(t, Token::Placeholder(p) if p == "?"))
            .count();
        let probe = bind(&tokens, &vec![null(); params]);
        let handle = uuid::Uuid::new_v4().simple().to_string().into_bytes();
        self.by_handle.lock().map_err(|_| poisoned())?.insert(
            handle.clone(),
            Prepared {
                user: user.to_owned(),
                tokens,
                params,
                bound: None,
            },
        );
        Ok((handle, probe))
    }

    /// Binds the parameter row in `batches` (one row; one column per `?`).
    pub(super) fn bind(
        &self,
        handle: &[u8],
        user: &str,
        batches: &[RecordBatch],
    ) -> Result<(), Status> {
        let mut all = self.by_handle.lock().map_err(|_| poisoned())?;
        let statement = all
            .get_mut(handle)
            .filter(|p| p.user == user)
            .ok_or_else(unknown)?;
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        let Some(batch) = batches.iter().find(|b| b.num_rows() > 0) else {
            return Err(Status::invalid_argument("no parameter row was sent"));
        };
        if rows != 1 {
            return Err(Status::invalid_argument(format!(
                "a prepared query takes one parameter row, {rows} were sent"
            )));
        }
        if batch.num_columns() != statement.params {
            return Err(Status::invalid_argument(format!(
                "the statement has {} parameter(s), {} were bound",
                statement.params,
                batch.num_columns()
            )));
        }
        let values = batch
            .columns()
            .iter()
            .map(literal)
            .collect::<Result<Vec<_>, _>>()?;
        statement.bound = Some(values);
        Ok(())
    }

    /// The statement's SQL with its bound values (or the SQL as written, without `?`).
    pub(super) fn bound_sql(&self, handle: &[u8], user: &str) -> Result<String, Status> {
        let all = self.by_handle.lock().map_err(|_| poisoned())?;
        let statement = all
            .get(handle)
            .filter(|p| p.user == user)
            .ok_or_else(unknown)?;
        match (&statement.bound, statement.params) {
            (_, 0) => Ok(bind(&statement.tokens, &[])),
            (Some(values), _) => Ok(bind(&statement.tokens, values)),
            (None, n) => Err(Status::invalid_argument(format!(
                "the statement has {n} parameter(s) and none were bound"
            ))),
        }
    }

    /// Forgets the statement (a handle of another user, or unknown, is left alone).
    pub(super) fn close(&self, handle: &[u8], user: &str) {
        if let Ok(mut all) = self.by_handle.lock()
            && all.get(handle).is_some_and(|p| p.user == user)
        {
            all.remove(handle);
        }
    }
}

/// Row 0 of a parameter column as a SQL literal token.
fn literal(column: &ArrayRef) -> Result<Token, Status> {
    // A NullArray (what a client sends for `None`) has no validity buffer: ask its type.
    if column.data_type() == &DataType::Null || column.is_null(0) {
        return Ok(null());
    }
    let options = FormatOptions::default();
    let text = ArrayFormatter::try_new(column.as_ref(), &options)
        .map_err(|e| Status::invalid_argument(format!("cannot read a parameter: {e}")))?
        .value(0)
        .to_string();
    match column.data_type() {
        DataType::Boolean => Ok(Token::Number(
            if text == "true" { "1" } else { "0" }.into(),
            false,
        )),
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64
        | DataType::Decimal128(_, _)
        | DataType::Decimal256(_, _) => Ok(Token::Number(text, false)),
        DataType::Float16 | DataType::Float32 | DataType::Float64 => {
            if text.parse::<f64>().is_ok_and(f64::is_finite) {
                Ok(Token::Number(text, false))
            } else {
                Err(Status::invalid_argument(
                    "a floating-point parameter is not a finite number",
                ))
            }
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            Ok(Token::SingleQuotedString(text))
        }
        // Arrow writes `2024-01-02T03:04:05`; Doris reads `2024-01-02 03:04:05`.
        DataType::Date32
        | DataType::Date64
        | DataType::Timestamp(_, None)
        | DataType::Time32(_)
        | DataType::Time64(_) => Ok(Token::SingleQuotedString(text.replacen('T', " ", 1))),
        other => Err(Status::invalid_argument(format!(
            "a parameter of type {other} cannot be bound"
        ))),
    }
}

/// `schema` as the IPC bytes of a Flight SQL `dataset_schema`.
pub(super) fn schema_bytes(schema: &SchemaRef) -> Result<Bytes, Status> {
    let options = arrow::ipc::writer::IpcWriteOptions::default();
    let IpcMessage(bytes) = SchemaAsIpc::new(schema, &options)
        .try_into()
        .map_err(|e: arrow::error::ArrowError| Status::internal(e.to_string()))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::sync::Arc;

    use arrow::array::{BooleanArray, Float64Array, Int64Array, StringArray};
    use arrow::datatypes::{Field, Schema};

    use super::*;

    fn row(columns: Vec<ArrayRef>) -> RecordBatch {
        let fields: Vec<Field> = columns
            .iter()
            .enumerate()
            .map(|(i, c)| Field::new(format!("p{i}"), c.data_type().clone(), true))
            .collect();
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
    }

    #[test]
    fn bound_values_replace_the_markers_as_literals_in_order() {
        let p = PreparedQueries::default();
        let (handle, probe) = p
            .create(
                "root",
                "SELECT `id` FROM t WHERE `id` = ? AND `name` = ? OR ?",
            )
            .unwrap();
        assert_eq!(
            probe,
            "SELECT `id` FROM t WHERE `id` = NULL AND `name` = NULL OR NULL"
        );
        // Unbound: refused, never run with NULLs.
        assert!(p.bound_sql(&handle, "root").is_err());
        let values = row(vec![
            Arc::new(Int64Array::from(vec![7])),
            Arc::new(StringArray::from(vec!["it's"])),
            Arc::new(BooleanArray::from(vec![true])),
        ]);
        p.bind(&handle, "root", &[values]).unwrap();
        assert_eq!(
            p.bound_sql(&handle, "root").unwrap(),
            "SELECT `id` FROM t WHERE `id` = 7 AND `name` = 'it\\'s' OR 1"
        );
    }

    #[test]
    fn wrong_counts_other_users_and_closed_handles_are_refused() {
        let p = PreparedQueries::default();
        let (handle, _) = p.create("root", "SELECT ? + ?").unwrap();
        let one = row(vec![Arc::new(Int64Array::from(vec![1]))]);
        assert!(p.bind(&handle, "root", &[one]).is_err());
        let two_rows = row(vec![
            Arc::new(Int64Array::from(vec![1, 2])),
            Arc::new(Int64Array::from(vec![3, 4])),
        ]);
        assert!(p.bind(&handle, "root", &[two_rows]).is_err());
        let nan = row(vec![
            Arc::new(Float64Array::from(vec![f64::NAN])),
            Arc::new(arrow::array::NullArray::new(1)),
        ]);
        assert!(p.bind(&handle, "root", &[nan]).is_err());
        let ok = row(vec![
            Arc::new(Float64Array::from(vec![1.5])),
            Arc::new(arrow::array::NullArray::new(1)),
        ]);
        assert!(p.bind(&handle, "other", std::slice::from_ref(&ok)).is_err());
        p.bind(&handle, "root", &[ok]).unwrap();
        assert_eq!(p.bound_sql(&handle, "root").unwrap(), "SELECT 1.5 + NULL");
        p.close(&handle, "other");
        assert!(p.bound_sql(&handle, "root").is_ok());
        p.close(&handle, "root");
        assert!(p.bound_sql(&handle, "root").is_err());
    }
}
