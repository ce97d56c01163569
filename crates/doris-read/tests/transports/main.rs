//! doris-read's transports against the Doris emulator, as one test binary (each module
//! would otherwise link the emulator, DataFusion included, into a binary of its own):
//! the MySQL and Flight SQL transports, the MySQL link's authentication, mutual TLS, split
//! reads.
//! (`statement_logging.rs` stays apart: it installs a process-wide log subscriber.)

mod flight_transport;
mod mtls;
mod mysql_auth;
mod mysql_caps;
mod mysql_transport;
mod split;

use arrow_schema::SchemaRef;
use doris_read::{
    BatchLimits, BatchStream, FlightSqlEndpoint, MySqlEndpoint, ReadError, Transport,
};

/// One statement over MySQL, through the crate's one read entry point.
async fn query(
    endpoint: &MySqlEndpoint,
    sql: String,
    schema: SchemaRef,
    limits: BatchLimits,
) -> Result<BatchStream, ReadError> {
    Transport::MySql(endpoint.clone())
        .read([sql], schema, limits)
        .await
}

/// One statement over Flight SQL, through the crate's one read entry point.
async fn flight_query(
    endpoint: &FlightSqlEndpoint,
    sql: String,
    schema: SchemaRef,
    limits: BatchLimits,
) -> Result<BatchStream, ReadError> {
    Transport::Flight(endpoint.clone())
        .read([sql], schema, limits)
        .await
}
