//! The table check before the first upload: `check_write_target` describes the table and
//! checks the data's schema against it (`doris_sql::check_write_target`), giving a
//! [`WriteTarget`]: the columns written and the per-column rules (`doris_streamload::prepare::ColumnRule`) every writer applies to its batches.

use std::sync::Arc;

use arrow_schema::Schema;
use doris_streamload::prepare::ColumnRule;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use pyo3_arrow::PySchema;

use crate::args::{from_python, to_python};
use crate::connection::DorisConnection;
use crate::errors::{ErrorClass, load_error, raise, write_metadata_error};
use crate::runtime::block_on;

/// A checked write target. It pickles (a write checks its table once, on the driver, and
/// its tasks carry the result to the workers) as its constructor call.
#[pyclass(frozen, module = "daft_doris._native")]
pub(crate) struct WriteTarget {
    /// The columns the load writes, in the data's order.
    #[pyo3(get)]
    columns: Vec<String>,
    pub(crate) rules: Vec<ColumnRule>,
}

#[pymethods]
impl WriteTarget {
    /// Rebuilds a target from its parts (what `__reduce__` gives).
    #[new]
    fn new(columns: Vec<String>, rules: Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self {
            columns,
            rules: from_python("column rules", &rules)?,
        })
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Py<PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let t = slf.get();
        let args = (t.columns.clone(), to_python(py, &t.rules)?).into_pyobject(py)?;
        Ok((slf.get_type().into_any().unbind(), args))
    }

    fn __repr__(&self) -> String {
        format!("WriteTarget(columns={:?})", self.columns)
    }
}

/// Checks the data's schema against the table, for the operation of the write's `options`
/// (`DorisWriteOptions`), and the write against the server's Doris release, before anything
/// is uploaded.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_write_target(
    py: Python<'_>,
    connection: PyRef<'_, DorisConnection>,
    database: &str,
    table: &str,
    schema: PySchema,
    options: Bound<'_, PyDict>,
) -> PyResult<WriteTarget> {
    let links = connection.resolve(py)?;
    let spec = crate::write_options::write_spec(&options)?;
    let operation = spec.operation;
    let endpoint = links.mysql();
    let (table_schema, release) = block_on(py, || {
        doris_read::fetch_table_schema_and_release(&endpoint, database, table)
    })
    .map_err(write_metadata_error)?;
    // What the server's release cannot run is refused here, before any table is created
    // or any byte is loaded.
    spec.check_release(release).map_err(|e| load_error(&e))?;
    let data: Arc<Schema> = schema.into_inner();
    let target = doris_sql::check_write_target(&table_schema, &data, operation)
        .map_err(|e| raise(ErrorClass::DorisTableCompatibilityError, e.to_string()))?;
    Ok(WriteTarget {
        columns: target.columns,
        rules: target
            .column_writes
            .iter()
            .map(ColumnRule::from_write)
            .collect(),
    })
}
