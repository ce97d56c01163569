//! Planning a read: a [`ReadRequest`] (the table and the options that shape the plan,
//! checked when the data source is made) and `plan_read`, which turns it and Daft's
//! pushdowns into one SELECT per task.

use std::collections::BTreeMap;

use doris_read::options::ReadOptions;
use doris_read::{Count, CountMode, TableReadOptions, plan_read_of_schema, plan_table_read};
use doris_sql::{Expr, Param, TrustedWhere};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use pyo3_arrow::PySchema;

use crate::args::{from_python, given, identifier};
use crate::connection::DorisConnection;
use crate::errors::read_error;
use crate::runtime::block_on;

/// `(pyarrow schema, [[SQL] per task], residual left, limit pushed, fallback warning)`.
type PlannedRead = (Py<PyAny>, Vec<Vec<String>>, bool, bool, Option<String>);

/// A read's request, checked when its data source is made: the table, the read's options
/// (`doris_read::options::ReadOptions`: how it plans and where its tasks connect) and the
/// trusted fragment bound to its `query_parameters`. A pickle carries the arguments as
/// given.
#[pyclass(frozen, module = "daft_doris._native")]
pub(crate) struct ReadRequest {
    database: String,
    table: String,
    options: ReadOptions,
    trusted_where: Option<TrustedWhere>,
    /// `(database, table, query_parameters)` and the options, as given.
    args: (Py<PyTuple>, Py<PyDict>),
}

#[pymethods]
impl ReadRequest {
    /// The option names (`doris_read::options::ReadOptions::NAMES`).
    #[classattr]
    #[allow(non_snake_case)]
    fn NAMES() -> Vec<&'static str> {
        ReadOptions::NAMES.to_vec()
    }

    /// Checks the table's names, every option and the parameters' binding; a bad one is a
    /// `ConfigurationError` naming it and the rule.
    #[new]
    #[pyo3(signature = (database, table, query_parameters=None, **options))]
    fn new(
        py: Python<'_>,
        database: Bound<'_, PyAny>,
        table: Bound<'_, PyAny>,
        query_parameters: Option<Bound<'_, PyAny>>,
        options: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let options = options.unwrap_or_else(|| PyDict::new(py));
        let args = (
            PyTuple::new(
                py,
                [
                    database.clone(),
                    table.clone(),
                    query_parameters
                        .clone()
                        .unwrap_or_else(|| py.None().into_bound(py)),
                ],
            )?
            .unbind(),
            options.copy()?.unbind(),
        );
        let read = crate::read_options::read_options(&options)?;
        let parameters: BTreeMap<String, Param> = match given(query_parameters) {
            None => BTreeMap::new(),
            Some(value) => from_python("query_parameters", &value)?,
        };
        let trusted_where = read.trusted_where(&parameters).map_err(read_error)?;
        Ok(Self {
            database: identifier("database", &database)?,
            table: identifier("table", &table)?,
            options: read,
            trusted_where,
            args,
        })
    }

    /// `"single"` or `"auto"`.
    #[getter]
    fn split(&self) -> &'static str {
        self.options.split.as_str()
    }

    /// `"mysql"` or `"flight"`.
    #[getter]
    fn transport(&self) -> &'static str {
        self.options.transport.as_str()
    }

    /// Most rows per batch.
    #[getter]
    fn batch_rows(&self) -> usize {
        self.options.limits.rows
    }

    /// Target bytes per batch.
    #[getter]
    fn batch_bytes(&self) -> usize {
        self.options.limits.bytes
    }

    /// Tablet groups one Daft task reads at once (`None`: groups ÷ cores).
    #[getter]
    fn queries_per_task(&self) -> Option<usize> {
        self.options.queries_per_task
    }

    /// The Arrow unit of DATETIME columns, by name.
    #[getter]
    fn timestamp_units(&self) -> &'static str {
        self.options.timestamp_units.name()
    }

    /// What columns with no Arrow form do (`"error"` or `"omit"`).
    #[getter]
    fn unreadable_columns(&self) -> &'static str {
        self.options.unreadable_columns.name()
    }

    /// Pickled as its arguments, unless they hold a secret as text
    /// (`ReadOptions::check_travels`).
    fn __getnewargs_ex__(&self, py: Python<'_>) -> PyResult<(Py<PyTuple>, Py<PyDict>)> {
        self.options.check_travels().map_err(read_error)?;
        Ok((self.args.0.clone_ref(py), self.args.1.clone_ref(py)))
    }

    fn __repr__(&self) -> String {
        format!(
            "ReadRequest(table={}.{}, transport={}, split={}, target_tasks={})",
            self.database,
            self.table,
            self.options.transport.as_str(),
            self.options.split.as_str(),
            self.options.task_counts.target
        )
    }
}

/// Plans a read of `request` with Daft's pushdowns: the columns (table order), the filter
/// (the IR `daft_doris._filters` builds), a limit, or a count of the column `count_alias`
/// (`count_mode`: `all`, the default, `valid` or `null`; `doris_read::CountMode`).
/// Returns `(pyarrow schema, [[SQL] per task], residual left, limit pushed, warning)`: the
/// statements grouped `queries_per_task` to a task ([`doris_read::ReadPlan::grouped`]; by
/// default one group per core).
///
/// `schema`: the columns to read, in order, as `describe_table` gave them; without it the
/// table is described again (one more MySQL session and `DESC`).
#[pyfunction]
#[pyo3(signature = (connection, request, columns=None, filter=None, limit=None, count_alias=None, count_mode=None, schema=None, queries_per_task=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn plan_read(
    py: Python<'_>,
    connection: PyRef<'_, DorisConnection>,
    request: PyRef<'_, ReadRequest>,
    columns: Option<Vec<String>>,
    filter: Option<Bound<'_, PyAny>>,
    limit: Option<u64>,
    count_alias: Option<String>,
    count_mode: Option<&str>,
    schema: Option<PySchema>,
    queries_per_task: Option<usize>,
) -> PyResult<PlannedRead> {
    let links = connection.resolve(py)?;
    let filter: Option<Expr> = match filter.filter(|f| !f.is_none()) {
        Some(f) => Some(from_python("filter", &f)?),
        None => None,
    };
    let split = request.options.split(links.fe_http()?);
    let options = TableReadOptions {
        columns,
        filter,
        limit,
        split,
        trusted_where: request.trusted_where.clone(),
        count: count_alias
            .map(|column| {
                let mode = count_mode.map_or(Ok(CountMode::All), str::parse)?;
                Ok::<_, doris_read::ReadError>(Count { column, mode })
            })
            .transpose()
            .map_err(read_error)?,
        // Used only when `schema` is not given; `describe_table` chose the units then.
        timestamp_units: doris_read::TimestampUnits::default(),
    };
    let (database, table) = (&request.database, &request.table);
    let plan = match schema {
        Some(schema) => block_on(py, || {
            plan_read_of_schema(database, table, schema.into_inner(), &options)
        }),
        None => {
            let endpoint = links.mysql();
            block_on(py, || plan_table_read(&endpoint, database, table, &options))
        }
    }
    .map_err(read_error)?;
    let schema = PySchema::new(plan.schema.clone()).into_pyarrow(py)?;
    Ok((
        schema.unbind(),
        plan.grouped(
            queries_per_task,
            std::thread::available_parallelism().map_or(1, usize::from),
        ),
        plan.residual.is_some(),
        plan.limit_pushed,
        plan.warning,
    ))
}
