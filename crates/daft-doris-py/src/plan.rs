//! Planning a read: a [`ReadRequest`] (the table and the options that shape the plan,
//! checked when the data source is made) and `plan_read`, which turns it and Daft's
//! pushdowns into one SELECT per task.

use std::collections::BTreeMap;
use std::time::Duration;

use doris_plan::DiscoveryPolicy;
use doris_read::{
    Count, CountMode, Split, SplitKind, TableReadOptions, TaskCounts, plan_read_of_schema,
    plan_table_read,
};
use doris_sql::{Expr, Param, TrustedWhere, bind_trusted_where};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use pyo3_arrow::PySchema;

use crate::args::{self, from_python, given, identifier, int_in, seconds};
use crate::connection::{Connection, DorisConnection};
use crate::errors::{ErrorClass, raise, read_error};
use crate::runtime::block_on;

/// `(pyarrow schema, [[SQL] per task], residual left, limit pushed, fallback warning)`.
type PlannedRead = (Py<PyAny>, Vec<Vec<String>>, bool, bool, Option<String>);

/// What a read plans against: the table, the split (`"single"`, or `"auto"`: one task per
/// tablet group from the FE's `_query_plan`), the discovery policy when planning fails
/// (`"single"` falls back to one task, `"error"` fails), the tasks wanted, the planning
/// timeout and a trusted WHERE fragment with its bound parameters. Every argument may be
/// `None` for its default; each is checked here, and the fragment is bound now, so a bad
/// one fails when the data source is made, not when Daft plans.
#[pyclass(frozen, module = "daft_doris._native")]
pub(crate) struct ReadRequest {
    database: String,
    table: String,
    auto_split: bool,
    policy: DiscoveryPolicy,
    target_tasks: usize,
    planning_timeout: Duration,
    trusted_where: Option<TrustedWhere>,
    /// The arguments as given, so the request pickles as its constructor call.
    args: Py<PyTuple>,
}

#[pymethods]
impl ReadRequest {
    #[new]
    #[pyo3(signature = (
        database,
        table,
        split=None,
        discovery_policy=None,
        target_tasks=None,
        max_tasks=None,
        planning_timeout_seconds=None,
        unsafe_where_sql=None,
        query_parameters=None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        database: Bound<'_, PyAny>,
        table: Bound<'_, PyAny>,
        split: Option<Bound<'_, PyAny>>,
        discovery_policy: Option<Bound<'_, PyAny>>,
        target_tasks: Option<Bound<'_, PyAny>>,
        max_tasks: Option<Bound<'_, PyAny>>,
        planning_timeout_seconds: Option<Bound<'_, PyAny>>,
        unsafe_where_sql: Option<Bound<'_, PyAny>>,
        query_parameters: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let args = PyTuple::new(
            py,
            [
                Some(database.clone()),
                Some(table.clone()),
                split.clone(),
                discovery_policy.clone(),
                target_tasks.clone(),
                max_tasks.clone(),
                planning_timeout_seconds.clone(),
                unsafe_where_sql.clone(),
                query_parameters.clone(),
            ]
            .map(|a| a.unwrap_or_else(|| py.None().into_bound(py))),
        )?
        .unbind();
        let database = identifier("database", &database)?;
        let table = identifier("table", &table)?;
        // The names, their defaults and the refusal are the crates' (`SplitKind`,
        // `DiscoveryPolicy`).
        let split = given(split)
            .map(|v| args::named::<SplitKind>(&v).map_err(read_error))
            .transpose()?
            .unwrap_or_default();
        let policy = given(discovery_policy)
            .map(|v| {
                args::named::<DiscoveryPolicy>(&v)
                    .map_err(|e| raise(ErrorClass::ConfigurationError, e.to_string()))
            })
            .transpose()?
            .unwrap_or_default();
        // Defaults, limits and the rule between the two are doris-read's (`TaskCounts`).
        let count = |name: &str, value: Option<Bound<'_, PyAny>>| {
            given(value)
                .map(|v| int_in(name, &v, 1, TaskCounts::MOST as i64).map(|n| n as usize))
                .transpose()
        };
        let counts = TaskCounts::new(
            count("target_tasks", target_tasks)?,
            count("max_tasks", max_tasks)?,
        )
        .map_err(read_error)?;
        let planning_timeout = given(planning_timeout_seconds)
            .map(|t| seconds("planning_timeout_seconds", &t))
            .transpose()?
            .unwrap_or(TaskCounts::DEFAULT_PLANNING_TIMEOUT);
        let fragment = match unsafe_where_sql.filter(|v| !v.is_none()) {
            None => None,
            Some(value) => Some(
                value
                    .extract::<String>()
                    .ok()
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty())
                    .ok_or_else(|| {
                        raise(
                            ErrorClass::ConfigurationError,
                            "unsafe_where_sql must be a non-blank string or None",
                        )
                    })?,
            ),
        };
        let parameters: BTreeMap<String, Param> = match query_parameters.filter(|v| !v.is_none()) {
            None => BTreeMap::new(),
            Some(value) => from_python("query_parameters", &value)?,
        };
        let trusted_where = match fragment {
            Some(fragment) => Some(
                bind_trusted_where(&fragment, &parameters)
                    .map_err(|e| raise(ErrorClass::ConfigurationError, e.to_string()))?,
            ),
            None if !parameters.is_empty() => {
                return Err(raise(
                    ErrorClass::ConfigurationError,
                    "query_parameters require unsafe_where_sql",
                ));
            }
            None => None,
        };
        Ok(Self {
            database,
            table,
            auto_split: split == SplitKind::Auto,
            policy,
            target_tasks: counts.target,
            planning_timeout,
            trusted_where,
            args,
        })
    }

    /// The split, as the crate settled it (`"single"` or `"auto"`).
    #[getter]
    fn split(&self) -> &'static str {
        if self.auto_split {
            SplitKind::Auto.as_str()
        } else {
            SplitKind::Single.as_str()
        }
    }

    /// Pickles as the constructor call with the arguments as given.
    fn __reduce__(slf: &Bound<'_, Self>) -> (Py<PyAny>, Py<PyTuple>) {
        let py = slf.py();
        (
            slf.get_type().into_any().unbind(),
            slf.get().args.clone_ref(py),
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "ReadRequest(table={}.{}, split={}, target_tasks={})",
            self.database,
            self.table,
            if self.auto_split { "auto" } else { "single" },
            self.target_tasks
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
    let password = &connection.password_value(py)?;
    let connection: &Connection = &connection;
    let filter: Option<Expr> = match filter.filter(|f| !f.is_none()) {
        Some(f) => Some(from_python("filter", &f)?),
        None => None,
    };
    let split = if request.auto_split {
        let mut fe = connection.fe_http(password)?;
        fe.timeout = request.planning_timeout;
        Split::Auto {
            fe,
            target_tasks: request.target_tasks,
            policy: request.policy,
        }
    } else {
        Split::Single
    };
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
            let endpoint = connection.mysql(password, None);
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
