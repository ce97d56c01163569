//! One endpoint's `DoGet`, streamed into the read's channel.

use std::sync::Arc;

use arrow_flight::FlightEndpoint;
use arrow_flight::decode::FlightRecordBatchStream;
use arrow_flight::error::FlightError;
use arrow_schema::SchemaRef;
use futures::TryStreamExt;

use super::batches::{Coalescer, conform, cut};
use super::{FlightSqlEndpoint, flight_error, status_error, with_bearer};
use crate::error::ReadError;
use crate::feed::Feed;
use crate::mysql::stream::BatchLimits;

/// How one endpoint's fetch ended.
pub(super) enum Fetched {
    /// Every batch of the endpoint was handed on: this many rows.
    All(u64),
    /// The reader went away first.
    Abandoned,
}

/// Streams one endpoint into the channel.
pub(super) async fn fetch(
    endpoint: Arc<FlightSqlEndpoint>,
    ep: FlightEndpoint,
    address: String,
    token: String,
    schema: SchemaRef,
    limits: BatchLimits,
    feed: Feed,
) -> Result<Fetched, ReadError> {
    let ticket = ep
        .ticket
        .ok_or_else(|| ReadError::Metadata("the FE sent an endpoint without a ticket".into()))?;
    let mut client = endpoint.connect(&address).await?;
    let response = client
        .do_get(with_bearer(ticket, &token)?)
        .await
        .map_err(status_error)?;
    let flight_data = response
        .into_inner()
        .map_err(|s| FlightError::Tonic(Box::new(s)));
    let mut batches = FlightRecordBatchStream::new_from_flight_data(flight_data);
    // Servers send small batches (a few thousand rows); each one handed on costs the
    // consumer a round trip (into Python and Daft), so they are gathered up to the bounds.
    let mut pending = Coalescer::new(schema.clone(), limits);
    let mut rows = 0u64;
    loop {
        let next = tokio::time::timeout(endpoint.read_timeout, batches.try_next())
            .await
            .map_err(|_| {
                ReadError::Timeout(format!(
                    "no batch arrived within {} s",
                    endpoint.read_timeout.as_secs()
                ))
            })?
            .map_err(flight_error)?;
        let ready = match next {
            Some(batch) => pending.push(conform(batch, &schema)?)?,
            None => pending.flush()?,
        };
        for piece in ready.into_iter().flat_map(|b| cut(b, limits)) {
            rows += piece.num_rows() as u64;
            if !feed.batch(piece).await {
                return Ok(Fetched::Abandoned);
            }
        }
        if pending.done {
            return Ok(Fetched::All(rows));
        }
    }
}
