//! Reads: the table's schema, the read plan (one SELECT per task), and a batch reader
//! that streams one task's rows into pyarrow record batches.

use std::collections::BTreeMap;
use std::time::Duration;

use arrow_schema::Schema;
use doris_plan::{DiscoveryPolicy, PlanEndpoint};
use doris_read::{
    BatchLimits, BatchStream, Split, TableReadOptions, discover, flight, plan_read_of_schema,
    plan_table_read, query, start_merged,
};
use doris_sql::{Expr, Param, bind_trusted_where};
use pyo3::prelude::*;
use pyo3_arrow::{PyRecordBatch, PySchema};
use serde::Deserialize;

use crate::connection::Connection;
use crate::errors::{ErrorClass, raise, read_error};
use crate::runtime::block_on;

fn default_planning_timeout() -> f64 {
    10.0
}

/// A timeout in seconds as a duration (the Python layer has checked the range).
fn seconds(s: f64) -> Duration {
    Duration::try_from_secs_f64(s).unwrap_or(Duration::from_secs(300))
}

/// Parses a request's JSON, naming only the position of a problem.
pub(crate) fn parse_json<T: for<'de> Deserialize<'de>>(what: &str, json: &str) -> PyResult<T> {
    serde_json::from_str(json).map_err(|e| {
        raise(
            ErrorClass::ConfigurationError,
            format!(
                "invalid {what} (line {}, column {}, {:?} error)",
                e.line(),
                e.column(),
                e.classify()
            ),
        )
    })
}

/// `(name, Doris type, reason)` of a column with no Arrow form.
type UnreadableColumn = (String, String, String);

/// `(pyarrow schema, [SQL per task], residual left, limit pushed, fallback warning)`.
type PlannedRead = (Py<PyAny>, Vec<String>, bool, bool, Option<String>);

/// Reads the table's columns.
///
/// Returns the pyarrow schema of every column that has an Arrow form (table order) and,
/// for the others, `(name, doris type, reason)`: such a column fails a read only if the
/// read selects it.
#[pyfunction]
pub(crate) fn describe_table(
    py: Python<'_>,
    connection: PyRef<'_, Connection>,
    password: &str,
    database: &str,
    table: &str,
) -> PyResult<(Py<PyAny>, Vec<UnreadableColumn>)> {
    let connection: &Connection = &connection;
    let endpoint = connection.mysql(password, None);
    let layout = block_on(py, || discover(&endpoint, database, table)).map_err(read_error)?;
    let mut fields = Vec::new();
    let mut unsupported = Vec::new();
    for c in &layout.columns {
        match &c.arrow_type {
            Ok(t) => fields.push(arrow_schema::Field::new(&c.name, t.clone(), c.nullable)),
            Err(reason) => {
                unsupported.push((c.name.clone(), c.doris_type.to_sql(), reason.clone()))
            }
        }
    }
    let schema = PySchema::new(Schema::new(fields).into()).into_pyarrow(py)?;
    Ok((schema.unbind(), unsupported))
}

/// What to read (the JSON the Python data source sends from `get_tasks`).
#[derive(Debug, Deserialize)]
struct ReadRequest {
    database: String,
    table: String,
    columns: Option<Vec<String>>,
    filter: Option<Expr>,
    limit: Option<u64>,
    count_alias: Option<String>,
    #[serde(default = "default_split")]
    split: String,
    #[serde(default = "default_target_tasks")]
    target_tasks: usize,
    #[serde(default = "default_split")]
    discovery_policy: String,
    #[serde(default = "default_planning_timeout")]
    planning_timeout_seconds: f64,
    unsafe_where_sql: Option<String>,
    #[serde(default)]
    query_parameters: BTreeMap<String, Param>,
}

fn default_split() -> String {
    "single".into()
}
fn default_target_tasks() -> usize {
    8
}

/// Plans a read: `(pyarrow schema, [SQL per task], residual left, limit pushed, warning)`.
///
/// `schema`: the columns to read, in order, as `describe_table` gave them; without it the
/// table is described again (one more MySQL session and `DESC`).
#[pyfunction]
#[pyo3(signature = (connection, password, request, schema=None))]
pub(crate) fn plan_read(
    py: Python<'_>,
    connection: PyRef<'_, Connection>,
    password: &str,
    request: &str,
    schema: Option<PySchema>,
) -> PyResult<PlannedRead> {
    let connection: &Connection = &connection;
    let request: ReadRequest = parse_json("read request", request)?;
    let trusted_where = match &request.unsafe_where_sql {
        Some(fragment) => Some(
            bind_trusted_where(fragment, &request.query_parameters)
                .map_err(|e| raise(ErrorClass::ConfigurationError, e.to_string()))?,
        ),
        None if !request.query_parameters.is_empty() => {
            return Err(raise(
                ErrorClass::ConfigurationError,
                "query_parameters require unsafe_where_sql",
            ));
        }
        None => None,
    };
    let split = match request.split.as_str() {
        "single" => Split::Single,
        "auto" => {
            let mut fe = PlanEndpoint::new(connection.http_url()?, &connection.user, password);
            fe.timeout = seconds(request.planning_timeout_seconds);
            fe.ca_bundle_pem = connection.ca_bundle();
            Split::Auto {
                fe,
                target_tasks: request.target_tasks,
                policy: match request.discovery_policy.as_str() {
                    "error" => DiscoveryPolicy::Error,
                    _ => DiscoveryPolicy::Single,
                },
            }
        }
        other => {
            return Err(raise(
                ErrorClass::ConfigurationError,
                format!("split must be 'single' or 'auto', not {other:?}"),
            ));
        }
    };
    let options = TableReadOptions {
        columns: request.columns,
        filter: request.filter,
        limit: request.limit,
        split,
        trusted_where,
        count: request.count_alias,
    };
    let endpoint = connection.mysql(password, None);
    let plan = match schema {
        Some(schema) => block_on(py, || {
            plan_read_of_schema(
                &request.database,
                &request.table,
                schema.into_inner(),
                &options,
            )
        }),
        None => block_on(py, || {
            plan_table_read(&endpoint, &request.database, &request.table, &options)
        }),
    }
    .map_err(read_error)?;
    let schema = PySchema::new(plan.schema).into_pyarrow(py)?;
    Ok((
        schema.unbind(),
        plan.tasks,
        plan.residual.is_some(),
        plan.limit_pushed,
        plan.warning,
    ))
}

/// One task's result, read batch by batch over the transport the read names (`"mysql"`:
/// the MySQL text protocol; `"flight"`: Arrow Flight SQL, `DoGet` on every endpoint).
///
/// A task may hold several statements (tablet groups of one split read): they are started
/// together and read at once ([`doris_read::merge`]), so a task keeps several BEs sending.
/// The connections are opened by the constructor and closed when the reader is closed or
/// dropped, without reading the rest of the result.
#[pyclass(module = "daft_doris._native")]
pub(crate) struct BatchReader {
    stream: Option<BatchStream>,
}

#[pymethods]
impl BatchReader {
    /// Connects and starts every statement of `sql`; batches follow `schema` and the row
    /// and byte bounds.
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        transport: &str,
        connection: PyRef<'_, Connection>,
        password: &str,
        sql: Vec<String>,
        schema: PySchema,
        batch_rows: usize,
        batch_bytes: usize,
    ) -> PyResult<Self> {
        let connection: &Connection = &connection;
        let limits = BatchLimits {
            rows: batch_rows,
            bytes: batch_bytes,
        };
        let schema = schema.into_inner();
        if sql.is_empty() {
            return Err(raise(
                ErrorClass::ConfigurationError,
                "a read task needs at least one statement",
            ));
        }
        let stream = match transport {
            "mysql" => {
                let endpoint = connection.mysql(password, None);
                block_on(py, || {
                    start_merged(
                        sql.into_iter()
                            .map(|one| query(&endpoint, one, schema.clone(), limits)),
                    )
                })
            }
            "flight" => {
                let endpoint = connection.flight(password)?;
                block_on(py, || {
                    start_merged(
                        sql.into_iter()
                            .map(|one| flight::query(&endpoint, one, schema.clone(), limits)),
                    )
                })
            }
            _ => {
                return Err(raise(
                    ErrorClass::ConfigurationError,
                    "transport must be 'mysql' or 'flight'",
                ));
            }
        }
        .map_err(read_error)?;
        Ok(Self {
            stream: Some(stream),
        })
    }

    /// The next batch as a `pyarrow.RecordBatch`, or `None` at the end of the result.
    fn next_batch(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let Some(stream) = self.stream.as_mut() else {
            return Ok(None);
        };
        match block_on(py, || stream.next_batch()) {
            Some(Ok(batch)) => Ok(Some(PyRecordBatch::new(batch).into_pyarrow(py)?.unbind())),
            Some(Err(e)) => {
                self.stream = None;
                Err(read_error(e))
            }
            None => {
                self.stream = None;
                Ok(None)
            }
        }
    }

    /// Closes the connection now, without reading the rest of the result.
    fn close(&mut self) {
        self.stream = None;
    }
}
