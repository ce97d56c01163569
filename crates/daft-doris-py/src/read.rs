//! Reads: the table's schema and a batch reader that streams one task's rows into pyarrow
//! record batches (the plan is `crate::plan`).

use doris_read::{BatchLimits, BatchStream, Transport, TransportKind, discover_in};
use pyo3::prelude::*;
use pyo3_arrow::{PyRecordBatch, PySchema};

use crate::connection::DorisConnection;
use crate::errors::read_error;
use crate::runtime::block_on;

/// `(name, Doris type, reason)` of a column with no Arrow form.
type UnreadableColumn = (String, String, String);

/// Reads the table's columns.
///
/// Returns the pyarrow schema of every column that has an Arrow form (table order) and,
/// for the others, `(name, doris type, reason)`: such a column fails a read only if the
/// read selects it. DATETIME columns come in `timestamp_units` (by name; default
/// microseconds).
#[pyfunction]
#[pyo3(signature = (connection, database, table, timestamp_units=None))]
pub(crate) fn describe_table(
    py: Python<'_>,
    connection: PyRef<'_, DorisConnection>,
    database: &str,
    table: &str,
    timestamp_units: Option<&str>,
) -> PyResult<(Py<PyAny>, Vec<UnreadableColumn>)> {
    let links = connection.resolve(py)?;
    let units = match timestamp_units {
        Some(name) => doris_read::options::timestamp_units(name).map_err(read_error)?,
        None => doris_read::TimestampUnits::default(),
    };
    let endpoint = links.mysql();
    let layout =
        block_on(py, || discover_in(&endpoint, database, table, units)).map_err(read_error)?;
    let schema = PySchema::new(layout.readable_schema()).into_pyarrow(py)?;
    Ok((schema.unbind(), layout.unreadable()))
}

/// One task's result, read batch by batch over the transport the read names (`"mysql"`:
/// the MySQL text protocol; `"flight"`: Arrow Flight SQL, `DoGet` on every endpoint).
///
/// A task may hold several statements (tablet groups of one split read): they are started
/// together and read at once ([`doris_read::Transport::read`]), so a task keeps several BEs sending.
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
        connection: PyRef<'_, DorisConnection>,
        sql: Vec<String>,
        schema: PySchema,
        batch_rows: usize,
        batch_bytes: usize,
    ) -> PyResult<Self> {
        let links = connection.resolve(py)?;
        let limits = BatchLimits::new(batch_rows, batch_bytes).map_err(read_error)?;
        let schema = schema.into_inner();
        let transport = match transport.parse::<TransportKind>().map_err(read_error)? {
            TransportKind::MySql => Transport::MySql(links.mysql()),
            TransportKind::Flight => Transport::Flight(links.flight()?),
        };
        let stream = block_on(py, || transport.read(sql, schema, limits)).map_err(read_error)?;
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
