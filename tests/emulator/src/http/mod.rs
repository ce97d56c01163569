//! The FE and BE HTTP faces.
//!
//! - [`fe`]: Stream Load auth, the `Expect` check and the 307 redirect (never reading the
//!   body), the 2PC redirect, `/api/backends`, `_query_plan` and `_schema`.
//! - `admin`: the emulator's own `/_emulator/...` routes on the FE face (faults, tables,
//!   transactions, wire counters), for tests and benches in other processes.
//! - [`be`]: Stream Load with every check before the body (so early failures are answered
//!   without `100 Continue`: hyper only sends it when the handler starts reading), 2PC
//!   commit/abort, and the error log.
//!
//! This module keeps what the faces share: Doris's JSON envelopes and connection faults.

use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde::Serialize;

use crate::ConnKill;
use crate::Shared;
use crate::faults::{Fault, Point};

mod admin;
pub mod be;
pub mod fe;

pub use be::{LoadResponse, be_router};
pub use fe::fe_router;

/// Characters kept as they are in a userinfo or path segment.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

fn json_response<T: Serialize>(value: &T) -> Response {
    let body = serde_json::to_string(value).unwrap_or_default();
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The FE's generic envelope (`{"msg":…,"code":…,"data":…,"count":0}`).
#[derive(Serialize)]
struct Envelope<T: Serialize> {
    msg: &'static str,
    code: i32,
    data: T,
    count: i32,
}

/// A `RestBaseResult` failure (`{"status":"FAILED","msg":…}`).
#[derive(Serialize)]
struct RestFailed<'a> {
    status: &'static str,
    msg: &'a str,
}

fn rest_failed(msg: &str) -> Response {
    json_response(&RestFailed {
        status: "FAILED",
        msg,
    })
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    // Doris's BE reads a header's bytes as they came: UTF-8 column names in `columns` work.
    headers
        .get(name)
        .and_then(|v| std::str::from_utf8(v.as_bytes()).ok())
}

/// The HTTP-200 envelope with `code: 401` that the FE answers auth failures with.
fn unauthorized(data: String) -> Response {
    json_response(&Envelope {
        msg: "Unauthorized",
        code: 401,
        data,
        count: 0,
    })
}

/// Applies an armed `delay` fault.
async fn maybe_delay(shared: &Shared) {
    if let Some(fault @ Fault::Delay { ms }) = shared.faults.take(Point::AnyRequest) {
        shared.faults.record(&fault, None, None, false);
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    }
}

/// Closes the connection and never answers (the handler's future is dropped with it).
async fn drop_connection(kill: &ConnKill) -> Response {
    kill.kill();
    std::future::pending::<Response>().await
}

fn encode_segment(s: &str) -> String {
    utf8_percent_encode(s, SEGMENT).to_string()
}

/// Path segments the wire log keeps as they are; any other (a database, a table) is `?`.
const KNOWN_SEGMENTS: [&str; 9] = [
    "api",
    "backends",
    "_stream_load",
    "_stream_load_2pc",
    "_query_plan",
    "_schema",
    "_load_error_log",
    "_emulator",
    "health",
];

/// Headers whose value the wire log keeps (a closed set of choices Doris decides on);
/// any other header is logged by name only.
const VALUED_HEADERS: [&str; 14] = [
    "expect",
    "format",
    "merge_type",
    "two_phase_commit",
    "strict_mode",
    "partial_columns",
    "unique_key_update_mode",
    "partial_update_new_key_behavior",
    "compress_type",
    "group_commit",
    "read_json_by_line",
    "strip_outer_array",
    "txn_operation",
    "memtable_on_sink_node",
];

/// Headers every HTTP client sends, left out of the wire log.
const TRANSPORT_HEADERS: [&str; 9] = [
    "host",
    "content-length",
    "content-type",
    "authorization",
    "transfer-encoding",
    "accept",
    "accept-encoding",
    "user-agent",
    "connection",
];

/// Logs the shape of one HTTP request: `METHOD /path` (names abstracted, query parameter
/// names kept), then one `METHOD /path header: name[=value]` line per header.
pub(crate) fn record_shapes(
    log: &crate::wire_log::WireLog,
    face: crate::wire_stats::HttpFace,
    request: &axum::extract::Request,
) {
    let face = match face {
        crate::wire_stats::HttpFace::Fe => "fe-http",
        crate::wire_stats::HttpFace::Be => "be-http",
    };
    let client = crate::wire_log::client_of_user_agent(
        request
            .headers()
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok()),
    );
    let path: Vec<&str> = request
        .uri()
        .path()
        .split('/')
        .map(|s| {
            if s.is_empty() || KNOWN_SEGMENTS.contains(&s) {
                s
            } else {
                "?"
            }
        })
        .collect();
    let mut line = format!("{} {}", request.method(), path.join("/"));
    if let Some(query) = request.uri().query() {
        let names: Vec<&str> = query
            .split('&')
            .map(|pair| pair.split('=').next().unwrap_or(pair))
            .collect();
        line.push_str(&format!("?{}", names.join("&")));
    }
    for (name, value) in request.headers() {
        let name = name.as_str();
        if TRANSPORT_HEADERS.contains(&name) {
            continue;
        }
        let shown = if VALUED_HEADERS.contains(&name) {
            format!(
                "{name}={}",
                value.to_str().unwrap_or("?").to_ascii_lowercase()
            )
        } else {
            name.to_owned()
        };
        log.record(&client, face, format!("{line} header: {shown}"));
    }
    log.record(&client, face, line);
}
