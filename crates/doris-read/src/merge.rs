//! Several result streams read at once, as one stream.
//!
//! A split read is one query per group of tablets. An engine that runs only a few read
//! tasks at a time (Daft's native runner runs as many as there are cores) would leave most
//! BEs idle; a task that holds several queries and reads them together keeps every BE
//! sending. [`merge`] yields the batches of all its streams in arrival order and ends only
//! when every one of them ended after its last row: the first error ends the merged
//! stream and drops (cancels) the others, so a merged read is as complete as its parts.

use futures::StreamExt;

use crate::error::ReadError;
use crate::feed;
use crate::mysql::stream::{BatchStream, Source};

/// Starts every query at once (`starts`: one future per query, each a transport's own
/// query) and merges their streams; the first query that fails to start fails the whole
/// read. [`Transport::read`](crate::Transport::read) is its caller.
pub(crate) async fn start_merged<F>(
    starts: impl IntoIterator<Item = F>,
) -> Result<BatchStream, ReadError>
where
    F: std::future::Future<Output = Result<BatchStream, ReadError>>,
{
    merge(futures::future::try_join_all(starts).await?)
}

/// One stream of the batches of `streams`, which must share one schema.
///
/// Memory: each part keeps its own small buffer (about two batches), so a merge of `n`
/// streams holds about `2 n` batches at most.
pub(crate) fn merge(mut streams: Vec<BatchStream>) -> Result<BatchStream, ReadError> {
    let Some(first) = streams.first() else {
        return Err(ReadError::Config(
            "a merged read needs at least one query".into(),
        ));
    };
    let schema = first.schema();
    if streams.iter().any(|s| s.schema() != schema) {
        return Err(ReadError::Metadata(
            "the queries of a merged read have different schemas".into(),
        ));
    }
    if streams.len() == 1 {
        return Ok(streams.remove(0).into_task());
    }
    let parts = streams.len();
    let (rx, task) = feed::spawn(parts, move |feed| async move {
        let mut all = futures::stream::select_all(streams);
        while let Some(item) = all.next().await {
            if !feed.batch(item?).await {
                // The reader went away: dropping `all` cancels every part.
                return Ok(());
            }
        }
        Ok(())
    });
    Ok(BatchStream::from_parts(Source::Merged, schema, rx, task))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;

    use arrow::array::Int32Array;
    use arrow::record_batch::RecordBatch;
    use arrow_schema::{DataType, Field, Schema, SchemaRef};

    use super::*;

    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![Field::new("a", DataType::Int32, false)]))
    }

    fn batch(values: Vec<i32>) -> RecordBatch {
        RecordBatch::try_new(schema(), vec![Arc::new(Int32Array::from(values))]).unwrap()
    }

    /// A stream that sends `batches`, then ends as `end` says (`None`: every row sent).
    fn part(batches: Vec<RecordBatch>, end: Option<ReadError>) -> BatchStream {
        let (rx, task) = feed::spawn(1, move |feed| async move {
            for b in batches {
                feed.batch(b).await;
            }
            end.map_or(Ok(()), Err)
        });
        BatchStream::from_parts(Source::Merged, schema(), rx, task)
    }

    fn values(batches: &[RecordBatch]) -> Vec<i32> {
        let mut out: Vec<i32> = batches
            .iter()
            .flat_map(|b| {
                b.column(0)
                    .as_any()
                    .downcast_ref::<Int32Array>()
                    .unwrap()
                    .values()
                    .to_vec()
            })
            .collect();
        out.sort_unstable();
        out
    }

    #[tokio::test]
    async fn every_row_of_every_part_arrives_once() {
        let merged = merge(vec![
            part(vec![batch(vec![1, 2]), batch(vec![3])], None),
            part(vec![], None),
            part(vec![batch(vec![4]), batch(vec![5, 6])], None),
        ])
        .unwrap();
        let got = merged.collect().await.unwrap();
        assert_eq!(values(&got), [1, 2, 3, 4, 5, 6]);
    }

    #[tokio::test]
    async fn the_parts_are_read_at_the_same_time_not_one_after_another() {
        // The first part sends nothing until the second part's batch has been read.
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let (rx, task) = feed::spawn(1, move |feed| async move {
            let _ = released.await;
            feed.batch(batch(vec![1])).await;
            Ok(())
        });
        let waiting = BatchStream::from_parts(Source::Merged, schema(), rx, task);
        let mut merged = merge(vec![waiting, part(vec![batch(vec![2])], None)]).unwrap();
        let first = tokio::time::timeout(std::time::Duration::from_secs(10), merged.next_batch())
            .await
            .expect("the second part is read while the first one waits")
            .unwrap()
            .unwrap();
        assert_eq!(values(&[first]), [2]);
        release.send(()).unwrap();
        assert_eq!(values(&merged.collect().await.unwrap()), [1]);
    }

    #[tokio::test]
    async fn a_failed_part_fails_the_merged_read_never_a_short_one() {
        let merged = merge(vec![
            part(vec![batch(vec![1])], None),
            part(
                vec![batch(vec![2])],
                Some(ReadError::Transport("cut".into())),
            ),
        ])
        .unwrap();
        let error = merged.collect().await.unwrap_err();
        assert!(matches!(error, ReadError::Transport(_)), "{error}");
    }

    #[tokio::test]
    async fn a_cancelled_part_is_an_error_not_an_end() {
        let (rx, task) = feed::spawn(1, |feed| async move {
            feed.batch(batch(vec![9])).await;
            std::future::pending::<()>().await;
            Ok(())
        });
        task.abort();
        let cancelled =
            BatchStream::from_parts(Source::Merged, schema(), rx, tokio::spawn(async {}));
        let merged = merge(vec![part(vec![batch(vec![1])], None), cancelled]).unwrap();
        assert!(merged.collect().await.is_err());
    }

    #[tokio::test]
    async fn parts_must_share_a_schema_and_exist() {
        assert!(matches!(merge(Vec::new()), Err(ReadError::Config(_))));
        let other = Arc::new(Schema::new(vec![Field::new("b", DataType::Int32, false)]));
        let (rx, task) = feed::spawn(1, |_feed| async move { Ok(()) });
        let odd = BatchStream::from_parts(Source::Merged, other, rx, task);
        assert!(matches!(
            merge(vec![part(Vec::new(), None), odd]),
            Err(ReadError::Metadata(_))
        ));
    }
}
