//! Streaming a query over the MySQL text protocol into record batches.
//!
//! One task owns the connection and the row stream and sends finished batches through a
//! channel of capacity one, so at most about two batches exist at a time. Dropping the
//! [`BatchStream`] ends the task, which drops the row stream and the connection without
//! reading the rest of the result (sqlx would drain it on reuse; closing the socket makes
//! the server stop sending).

use std::pin::Pin;
use std::task::{Context, Poll};

use arrow::record_batch::RecordBatch;
use arrow_schema::SchemaRef;
use futures::{FutureExt, TryStreamExt};
use sqlx::{Decode, MySql, Row, ValueRef};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::decode::RowDecoder;
use crate::error::ReadError;
use crate::feed::{self, Drain, Item};
use doris_mysql::MySqlEndpoint;

/// Bounds of one batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchLimits {
    /// Most rows per batch.
    pub rows: usize,
    /// Approximate most Arrow bytes per batch (a single larger row still forms a batch).
    pub bytes: usize,
}

impl BatchLimits {
    /// The most rows a batch may be given.
    pub const MAX_ROWS: usize = 1_000_000;
    /// The most bytes a batch may be given (1 GiB).
    pub const MAX_BYTES: usize = 1 << 30;

    /// Bounds of `rows` (1 to [`Self::MAX_ROWS`]) and `bytes` (1 to [`Self::MAX_BYTES`]);
    /// anything else is [`ReadError::Config`] naming the bound.
    ///
    /// ```
    /// use doris_read::BatchLimits;
    /// assert!(BatchLimits::new(65_536, 64 << 20).is_ok());
    /// assert!(BatchLimits::new(0, 1).is_err());
    /// assert!(BatchLimits::new(1, (1 << 30) + 1).is_err());
    /// ```
    pub fn new(rows: usize, bytes: usize) -> Result<Self, ReadError> {
        if !(1..=Self::MAX_ROWS).contains(&rows) {
            return Err(ReadError::Config(format!(
                "batch_rows must be an integer from 1 to {}",
                Self::MAX_ROWS
            )));
        }
        if !(1..=Self::MAX_BYTES).contains(&bytes) {
            return Err(ReadError::Config(format!(
                "batch_bytes must be an integer from 1 to {}",
                Self::MAX_BYTES
            )));
        }
        Ok(Self { rows, bytes })
    }
}

impl Default for BatchLimits {
    fn default() -> Self {
        Self {
            rows: 65_536,
            bytes: 64 * 1024 * 1024,
        }
    }
}

/// Record batches of one query, produced while they are consumed.
///
/// The stream ends (`None`) only after the producer said that every row was sent: a
/// producer that failed, panicked or was cancelled ends the stream with an error, so a read
/// is never short without one.
#[derive(Debug)]
pub struct BatchStream {
    schema: SchemaRef,
    drain: Drain,
    task: JoinHandle<()>,
    tally: Tally,
}

/// What a stream delivered, for its `tracing` line at the end (rows, bytes, seconds).
#[derive(Debug)]
struct Tally {
    source: Source,
    rows: u64,
    bytes: u64,
    started: std::time::Instant,
}

/// Where a stream's batches come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// One MySQL query.
    MySql,
    /// One Flight SQL query (every endpoint).
    #[cfg(feature = "flight")]
    Flight,
    /// A read task: its queries read at once ([`crate::merge()`]), however many.
    Merged,
}

impl Tally {
    fn observe(&mut self, item: &Option<Result<RecordBatch, ReadError>>) {
        match item {
            Some(Ok(batch)) => {
                self.rows += batch.num_rows() as u64;
                self.bytes += batch.get_array_memory_size() as u64;
            }
            Some(Err(e)) => {
                tracing::warn!(source = ?self.source, rows = self.rows, error = %e, "read failed");
            }
            None => {
                let seconds = self.started.elapsed().as_secs_f64();
                let (rows, bytes, source) = (self.rows, self.bytes, self.source);
                // One INFO line per read task; its queries' own lines are DEBUG.
                if source == Source::Merged {
                    tracing::info!(rows, bytes, seconds, "read");
                } else {
                    tracing::debug!(source = ?source, rows, bytes, seconds, "query read");
                }
            }
        }
    }
}

impl BatchStream {
    /// A stream fed by `task` through `rx` (the task is aborted when the stream is dropped).
    pub(crate) fn from_parts(
        source: Source,
        schema: SchemaRef,
        rx: mpsc::Receiver<Item>,
        task: JoinHandle<()>,
    ) -> Self {
        Self {
            schema,
            drain: Drain::new(rx),
            task,
            tally: Tally {
                source,
                rows: 0,
                bytes: 0,
                started: std::time::Instant::now(),
            },
        }
    }

    /// The stream of a whole read task (its end is logged at INFO, a query's at DEBUG).
    pub(crate) fn into_task(mut self) -> Self {
        self.tally.source = Source::Merged;
        self
    }

    /// The batches' schema.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The next batch; `None` at the end of the result (and after an error).
    pub async fn next_batch(&mut self) -> Option<Result<RecordBatch, ReadError>> {
        if self.drain.is_over() {
            return None;
        }
        let item = self.drain.rx().recv().await;
        let out = self.drain.take(item);
        self.tally.observe(&out);
        out
    }

    /// Every remaining batch.
    pub async fn collect(mut self) -> Result<Vec<RecordBatch>, ReadError> {
        let mut out = Vec::new();
        while let Some(b) = self.next_batch().await {
            out.push(b?);
        }
        Ok(out)
    }
}

impl futures::Stream for BatchStream {
    type Item = Result<RecordBatch, ReadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.drain.is_over() {
            return Poll::Ready(None);
        }
        match self.drain.rx().poll_recv(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(item) => {
                let out = self.drain.take(item);
                self.tally.observe(&out);
                Poll::Ready(out)
            }
        }
    }
}

impl Drop for BatchStream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Runs `sql` (COM_QUERY, text rows) and streams its rows as batches of `schema`.
/// Connection errors are returned here; query errors arrive as the first item.
pub(crate) async fn query(
    endpoint: &MySqlEndpoint,
    sql: String,
    schema: SchemaRef,
    limits: BatchLimits,
) -> Result<BatchStream, ReadError> {
    if limits.rows == 0 || limits.bytes == 0 {
        return Err(ReadError::Config(
            "batch rows and bytes must be at least 1".into(),
        ));
    }
    let mut decoder = RowDecoder::new(schema.clone())?;
    let (mut conn, cut) = endpoint.connect_watched().await?;
    let read_timeout = endpoint.read_timeout;
    let (rx, task) = feed::spawn(1, move |feed| async move {
        let mut rows = sqlx::raw_sql(&sql).fetch(&mut conn);
        let width = decoder.schema().fields().len();
        loop {
            // Most rows are already in sqlx's buffer: take them without arming a timer (a
            // timer per row cost ~10% of a scan); only a row that is not there yet waits
            // under the read timeout. Dropping the unfinished `try_next` loses nothing: the
            // stream keeps its own state.
            let next = match rows.try_next().now_or_never() {
                Some(r) => r.map_err(|e| ReadError::from(cut.explain(e)))?,
                None => tokio::time::timeout(read_timeout, rows.try_next())
                    .await
                    .map_err(|_| {
                        ReadError::Timeout(format!(
                            "no row arrived within {} s",
                            read_timeout.as_secs()
                        ))
                    })?
                    .map_err(|e| ReadError::from(cut.explain(e)))?,
            };
            let Some(row) = next else { break };
            if row.len() != width {
                return Err(ReadError::Metadata(format!(
                    "the result has {} columns where {width} were planned",
                    row.len()
                )));
            }
            for i in 0..width {
                let raw = row.try_get_raw(i).map_err(ReadError::from_sqlx)?;
                let cell = if raw.is_null() {
                    None
                } else {
                    Some(
                        <&[u8] as Decode<MySql>>::decode(raw)
                            .map_err(|e| ReadError::Transport(e.to_string()))?,
                    )
                };
                decoder.push(i, cell)?;
            }
            decoder.end_row();
            if (decoder.rows() >= limits.rows || decoder.bytes() >= limits.bytes)
                && !feed.batch(decoder.finish()?).await
            {
                // The reader went away: drop the rows and the connection unread.
                return Ok(());
            }
        }
        if !decoder.is_empty() {
            feed.batch(decoder.finish()?).await;
        }
        Ok(())
    });
    Ok(BatchStream::from_parts(Source::MySql, schema, rx, task))
}
