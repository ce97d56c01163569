//! The channel between a transport's producer task and its [`BatchStream`](crate::BatchStream).
//!
//! A read must return every row or fail: it may never look complete when it is not. So the
//! end of a result is an explicit message here, not the channel closing. The producer runs
//! under [`spawn`], which sends [`Item::End`] only when the producer returned `Ok`, turns an
//! `Err` into [`Item::Failed`], and turns a panic (a malformed row that a library could not
//! decode, a bug) into a [`ReadError::Transport`]. A channel that closes without either —
//! the task was cancelled, the runtime shut down — is read as a failure by the stream.

use std::future::Future;
use std::panic::AssertUnwindSafe;

use arrow::record_batch::RecordBatch;
use futures::FutureExt;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::error::ReadError;

/// One message from a producer.
#[derive(Debug)]
pub(crate) enum Item {
    /// The next batch of the result.
    Batch(RecordBatch),
    /// The read failed; nothing follows.
    Failed(ReadError),
    /// Every row was sent.
    End,
}

/// The producer's end of the channel.
#[derive(Debug, Clone)]
pub(crate) struct Feed {
    tx: mpsc::Sender<Item>,
}

impl Feed {
    /// Sends a batch; `false` when the reader has gone away (stop producing).
    pub(crate) async fn batch(&self, batch: RecordBatch) -> bool {
        self.tx.send(Item::Batch(batch)).await.is_ok()
    }
}

/// Runs `producer` on the runtime with a channel of `capacity` batches.
///
/// The producer returns `Ok(())` once every row was sent through its [`Feed`] (or the
/// reader went away), `Err` for a failure.
pub(crate) fn spawn<F, Fut>(capacity: usize, producer: F) -> (mpsc::Receiver<Item>, JoinHandle<()>)
where
    F: FnOnce(Feed) -> Fut,
    Fut: Future<Output = Result<(), ReadError>> + Send + 'static,
{
    let (tx, rx) = mpsc::channel(capacity);
    let feed = Feed { tx: tx.clone() };
    let work = producer(feed);
    let task = tokio::spawn(async move {
        let last = match AssertUnwindSafe(work).catch_unwind().await {
            Ok(Ok(())) => Item::End,
            Ok(Err(e)) => Item::Failed(e),
            Err(panic) => Item::Failed(ReadError::Transport(panic_reason(panic.as_ref()))),
        };
        let _ = tx.send(last).await;
    });
    (rx, task)
}

/// What a panic is reported as. Only a literal message (`&'static str`, written in code) is
/// kept: a formatted one may carry a value of the result.
fn panic_reason(payload: &(dyn std::any::Any + Send)) -> String {
    match payload.downcast_ref::<&'static str>() {
        Some(literal) => format!("the reader failed on a malformed result: {literal}"),
        None => "the reader failed on a malformed result (its message is not shown)".into(),
    }
}

/// The reader's end: turns items into batches, and a channel that closed without an
/// [`Item::End`] into an error.
#[derive(Debug)]
pub(crate) struct Drain {
    rx: mpsc::Receiver<Item>,
    over: bool,
}

impl Drain {
    pub(crate) fn new(rx: mpsc::Receiver<Item>) -> Self {
        Self { rx, over: false }
    }

    /// Maps what the channel gave to the stream's next item.
    pub(crate) fn take(&mut self, item: Option<Item>) -> Option<Result<RecordBatch, ReadError>> {
        if self.over {
            return None;
        }
        match item {
            Some(Item::Batch(b)) => Some(Ok(b)),
            Some(Item::Failed(e)) => {
                self.over = true;
                Some(Err(e))
            }
            Some(Item::End) => {
                self.over = true;
                None
            }
            None => {
                self.over = true;
                Some(Err(ReadError::Transport(
                    "the reader stopped before the end of the result".into(),
                )))
            }
        }
    }

    /// The receiver, to await or poll.
    pub(crate) fn rx(&mut self) -> &mut mpsc::Receiver<Item> {
        &mut self.rx
    }

    /// Whether the stream has ended (with its last item or an error).
    pub(crate) fn is_over(&self) -> bool {
        self.over
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use arrow::array::Int32Array;
    use arrow_schema::{DataType, Field, Schema};
    use std::sync::Arc;

    fn one_batch() -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int32, false)]));
        RecordBatch::try_new(schema, vec![Arc::new(Int32Array::from(vec![1, 2]))]).unwrap()
    }

    async fn drain_all(rx: mpsc::Receiver<Item>) -> (usize, Option<ReadError>) {
        let mut drain = Drain::new(rx);
        let mut rows = 0;
        loop {
            let item = drain.rx().recv().await;
            match drain.take(item) {
                None => return (rows, None),
                Some(Ok(b)) => rows += b.num_rows(),
                Some(Err(e)) => return (rows, Some(e)),
            }
        }
    }

    #[tokio::test]
    async fn a_finished_producer_ends_the_stream() {
        let (rx, _task) = spawn(1, |feed| async move {
            feed.batch(one_batch()).await;
            Ok(())
        });
        let (rows, error) = drain_all(rx).await;
        assert_eq!(rows, 2);
        assert!(error.is_none());
    }

    #[tokio::test]
    async fn a_panic_after_some_rows_is_an_error_not_an_end() {
        let (rx, _task) = spawn(1, |feed| async move {
            feed.batch(one_batch()).await;
            let cells: Vec<u8> = Vec::new();
            let _ = cells[std::hint::black_box(3)];
            Ok(())
        });
        let (rows, error) = drain_all(rx).await;
        assert_eq!(rows, 2);
        let error = error.expect("a panic must fail the read");
        assert!(matches!(error, ReadError::Transport(_)), "{error}");
        assert!(error.to_string().contains("malformed result"), "{error}");
    }

    #[tokio::test]
    async fn a_formatted_panic_message_is_not_shown() {
        let (rx, _task) = spawn(1, |_feed| async move {
            let value = std::hint::black_box("s3cr3t-cell");
            panic!("bad cell {value}");
        });
        let (_, error) = drain_all(rx).await;
        let shown = error.unwrap().to_string();
        assert!(!shown.contains("s3cr3t-cell"), "{shown}");
    }

    #[tokio::test]
    async fn a_cancelled_producer_is_an_error_not_an_end() {
        let (rx, task) = spawn(1, |feed| async move {
            feed.batch(one_batch()).await;
            std::future::pending::<()>().await;
            Ok(())
        });
        let mut drain = Drain::new(rx);
        let first = drain.rx().recv().await;
        assert!(matches!(drain.take(first), Some(Ok(_))));
        task.abort();
        let closed = drain.rx().recv().await;
        assert!(matches!(
            drain.take(closed),
            Some(Err(ReadError::Transport(_)))
        ));
        assert!(drain.is_over());
        assert!(drain.take(None).is_none(), "nothing after the error");
    }
}
