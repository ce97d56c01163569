//! The FE and BE HTTP faces.
//!
//! FE (`fe_router`): Stream Load auth, `Expect` check and 307 redirect (never reading the
//! body), the 2PC redirect, and `/api/backends`. BE (`be_router`): Stream Load with every
//! check before the body (so early failures are answered without `100 Continue`: hyper only
//! sends it when the handler starts reading), 2PC commit/abort, and the error log.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Extension, Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use hyper::body::Body as _;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde::Serialize;

use crate::auth::{Privilege, access_denied, missing_privilege, parse_basic};
use crate::error::EmulatorError;
use crate::faults::{Arm, Fault, Point};
use crate::load::{LoadOptions, decode, parse_options};
use crate::txn::TxnRef;
use crate::{ConnKill, Shared};

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
    headers.get(name).and_then(|v| v.to_str().ok())
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

/// FE auth: the user and password, or the `data` text of the 401 envelope.
fn fe_auth(
    shared: &Shared,
    headers: &HeaderMap,
    peer: SocketAddr,
) -> Result<(String, String), String> {
    let Some(auth) = parse_basic(header_str(headers, "authorization")) else {
        return Err("Need auth information.".into());
    };
    if !shared.users.check(&auth.user, &auth.password) {
        return Err(access_denied(
            &auth.user,
            &peer.ip().to_string(),
            !auth.password.is_empty(),
        ));
    }
    Ok((auth.user, auth.password))
}

/// The BE address a redirect points at, honouring `redirect-policy: public`.
fn redirect_target(shared: &Shared, headers: &HeaderMap) -> String {
    let public =
        header_str(headers, "redirect-policy").is_some_and(|p| p.eq_ignore_ascii_case("public"));
    if public && let Some(endpoint) = shared.public_endpoint() {
        return endpoint;
    }
    format!("{}:{}", shared.config.advertise_host, shared.be_http_port())
}

fn redirect(
    shared: &Shared,
    headers: &HeaderMap,
    user: &str,
    password: &str,
    path: &str,
    query: Option<&str>,
) -> Response {
    let target = match shared.faults.take(Point::FeRedirect) {
        Some(fault) => {
            shared.faults.record(&fault, None, None, false);
            match fault {
                Fault::Redirect { host, port } => format!("{host}:{port}"),
                _ => format!("{}:{}", shared.config.advertise_host, unused_port()),
            }
        }
        None => redirect_target(shared, headers),
    };
    let location = format!(
        "{}://{}:{}@{}{}?{}",
        shared.http_scheme(),
        utf8_percent_encode(user, SEGMENT),
        utf8_percent_encode(password, SEGMENT),
        target,
        path,
        query.unwrap_or_default()
    );
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::TEMPORARY_REDIRECT;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html;charset=utf-8"),
    );
    if let Ok(v) = HeaderValue::from_str(&location) {
        headers.insert(header::LOCATION, v);
    }
    response
}

/// A loopback port where nothing listens (bound, then released).
fn unused_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(1)
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

async fn fe_stream_load(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path((db, table)): Path<(String, String)>,
    request: Request,
) -> Response {
    maybe_delay(&shared).await;
    let headers = request.headers();
    if let Some(mode) = header_str(headers, "group_commit") {
        if !["sync_mode", "async_mode", "off_mode"].contains(&mode.to_ascii_lowercase().as_str()) {
            return rest_failed(
                "Header `group_commit` can only be `sync_mode`, `async_mode` or `off_mode`.",
            );
        }
        if !shared.catalog.has_database(&db).unwrap_or(false) {
            return rest_failed(&format!("database is invalid for dbName: {db}"));
        }
        if shared.catalog.table(&db, &table).is_err() {
            return rest_failed(&format!("table is invalid: {table}"));
        }
    }
    let (user, password) = match fe_auth(&shared, headers, peer) {
        Ok(c) => c,
        Err(data) => return unauthorized(data),
    };
    if header_str(headers, "expect").is_none() {
        return rest_failed("There is no 100-continue header");
    }
    let path = format!(
        "/api/{}/{}/_stream_load",
        encode_segment(&db),
        encode_segment(&table)
    );
    let response = redirect(
        &shared,
        headers,
        &user,
        &password,
        &path,
        request.uri().query(),
    );
    drain_unread_body(request.into_body(), shared.config.fe_redirect_drain_bytes);
    response
}

/// After the 307, reads and discards a body the client sends without waiting for
/// `100 Continue` (as Jetty does for the real FE), up to `limit` bytes; past that the
/// connection is dropped (Doris 4.0.6 loses the connection for bodies of ~72 MiB). The
/// reading starts once the 307 is on its way, so a client that waits for `100` never gets
/// one and sends no body to the FE.
fn drain_unread_body(body: Body, limit: u64) {
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let mut stream = body.into_data_stream();
        let mut seen = 0u64;
        while let Some(Ok(chunk)) = futures::StreamExt::next(&mut stream).await {
            seen += chunk.len() as u64;
            if seen > limit {
                return;
            }
        }
    });
}

async fn fe_stream_load_2pc(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path(db): Path<String>,
    request: Request,
) -> Response {
    let headers = request.headers();
    let (user, password) = match fe_auth(&shared, headers, peer) {
        Ok(c) => c,
        Err(data) => return unauthorized(data),
    };
    if header_str(headers, "txn_id").is_none() && header_str(headers, "label").is_none() {
        return rest_failed("No transaction id or label selected.");
    }
    if header_str(headers, "txn_operation").is_none() {
        return rest_failed("No transaction operation('commit' or 'abort') selected.");
    }
    let path = format!("/api/{}/_stream_load_2pc", encode_segment(&db));
    redirect(
        &shared,
        headers,
        &user,
        &password,
        &path,
        request.uri().query(),
    )
}

async fn fe_stream_load_2pc_with_table(
    state: State<Arc<Shared>>,
    peer: ConnectInfo<SocketAddr>,
    Path((db, _table)): Path<(String, String)>,
    request: Request,
) -> Response {
    fe_stream_load_2pc(state, peer, Path(db), request).await
}

async fn fe_backends(State(shared): State<Arc<Shared>>) -> Response {
    #[derive(Serialize)]
    struct Backend {
        ip: String,
        http_port: u16,
        is_alive: bool,
    }
    #[derive(Serialize)]
    struct Backends {
        backends: Vec<Backend>,
    }
    json_response(&Envelope {
        msg: "success",
        code: 0,
        data: Backends {
            backends: vec![Backend {
                ip: shared.config.advertise_host.clone(),
                http_port: shared.be_http_port(),
                is_alive: true,
            }],
        },
        count: 0,
    })
}

/// The FE router.
pub fn fe_router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/api/{db}/{table}/_stream_load", put(fe_stream_load))
        .route("/api/{db}/_stream_load_2pc", put(fe_stream_load_2pc))
        .route(
            "/api/{db}/{table}/_stream_load_2pc",
            put(fe_stream_load_2pc_with_table),
        )
        .route("/api/backends", get(fe_backends))
        .route(
            "/api/{db}/{table}/_query_plan",
            post(fe_query_plan).get(fe_query_plan),
        )
        .route("/api/{db}/{table}/_schema", get(fe_schema))
        .route(
            "/_emulator/faults",
            post(arm_fault).get(fault_report).delete(clear_faults),
        )
        .route("/_emulator/tables/{db}/{table}", get(table_report))
        .route("/_emulator/txns/{db}", get(txn_report))
        .route("/_emulator/wire", get(wire_report).delete(reset_wire_peaks))
        .with_state(shared)
}

/// FE auth plus SELECT_PRIV on the table: the 401 envelope that refuses the request, if any.
fn fe_select_refusal(
    shared: &Shared,
    headers: &HeaderMap,
    peer: SocketAddr,
    db: &str,
    table: &str,
) -> Option<Response> {
    match fe_auth(shared, headers, peer) {
        Err(data) => Some(unauthorized(data)),
        Ok((user, _)) if !shared.users.has(&user, db, table, Privilege::Select) => {
            Some(unauthorized(missing_privilege(Privilege::Select)))
        }
        Ok(_) => None,
    }
}

async fn fe_query_plan(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path((db, table)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(refusal) = fe_select_refusal(&shared, &headers, peer, &db, &table) {
        return refusal;
    }
    if let Some(f @ Fault::QueryPlanAnswer { .. }) = shared.faults.take(Point::QueryPlan) {
        shared.faults.record(&f, None, None, false);
        if let Fault::QueryPlanAnswer { answer } = f {
            return json_response(&answer);
        }
    }
    json_response(&crate::query_plan::query_plan(&shared, &db, &table, &body))
}

async fn fe_schema(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Path((db, table)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    if let Some(refusal) = fe_select_refusal(&shared, &headers, peer, &db, &table) {
        return refusal;
    }
    json_response(&crate::query_plan::schema(&shared, &db, &table))
}

async fn arm_fault(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    match serde_json::from_slice::<Arm>(&body) {
        Ok(arm) => {
            shared.faults.arm(arm.fault, arm.times);
            json_response(&shared.faults.report())
        }
        Err(e) => (StatusCode::BAD_REQUEST, format!("bad fault: {e}")).into_response(),
    }
}

async fn fault_report(State(shared): State<Arc<Shared>>) -> Response {
    json_response(&shared.faults.report())
}

async fn clear_faults(State(shared): State<Arc<Shared>>) -> Response {
    shared.faults.clear();
    json_response(&shared.faults.report())
}

async fn table_report(
    State(shared): State<Arc<Shared>>,
    Path((db, table)): Path<(String, String)>,
) -> Response {
    match shared
        .catalog
        .table(&db, &table)
        .and_then(|t| t.rows_per_tablet())
    {
        Ok(per_tablet) => json_response(&serde_json::json!({
            "rows": per_tablet.iter().sum::<usize>(),
            "rows_per_tablet": per_tablet,
        })),
        Err(e) => (StatusCode::NOT_FOUND, e.to_string()).into_response(),
    }
}

/// `GET /_emulator/wire`: what crossed the faces so far, with the gauges' peaks (a bench or
/// a test in another process reads how many sessions or streams a read held at once).
async fn wire_report(State(shared): State<Arc<Shared>>) -> Response {
    json_response(&shared.wire.report())
}

/// `DELETE /_emulator/wire`: the gauges start new peaks.
async fn reset_wire_peaks(State(shared): State<Arc<Shared>>) -> Response {
    shared.wire.reset_peaks();
    StatusCode::NO_CONTENT.into_response()
}

/// `GET /_emulator/txns/{db}`: every transaction of the database the emulator remembers.
async fn txn_report(State(shared): State<Arc<Shared>>, Path(db): Path<String>) -> Response {
    let txns: Vec<serde_json::Value> = shared
        .txns
        .list(&db)
        .into_iter()
        .map(|(id, table, label, state)| {
            serde_json::json!({"txn_id": id, "table": table, "label": label, "state": state.as_str()})
        })
        .collect();
    json_response(&serde_json::json!({ "txns": txns }))
}

/// The Stream Load response, field for field in Doris's order.
#[derive(Debug, Serialize, Default)]
#[serde(rename_all = "PascalCase")]
pub struct LoadResponse {
    /// `TxnId` (-1 when none was allocated).
    pub txn_id: i64,
    /// `Label`
    pub label: String,
    /// `Comment`
    pub comment: String,
    /// `TwoPhaseCommit` (a string; absent for group commit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub two_phase_commit: Option<String>,
    /// `GroupCommit` (a bool, only for group commit, instead of `TwoPhaseCommit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_commit: Option<bool>,
    /// `Status`
    pub status: String,
    /// `ExistingJobStatus` (only for Label Already Exists).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub existing_job_status: Option<String>,
    /// `Message`
    pub message: String,
    /// `NumberTotalRows`
    pub number_total_rows: u64,
    /// `NumberLoadedRows`
    pub number_loaded_rows: u64,
    /// `NumberFilteredRows`
    pub number_filtered_rows: u64,
    /// `NumberUnselectedRows`
    pub number_unselected_rows: u64,
    /// `LoadBytes`
    pub load_bytes: u64,
    /// `LoadTimeMs`
    pub load_time_ms: u64,
    /// `BeginTxnTimeMs` (omitted for group commit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub begin_txn_time_ms: Option<u64>,
    /// `StreamLoadPutTimeMs`
    pub stream_load_put_time_ms: u64,
    /// `ReadDataTimeMs`
    pub read_data_time_ms: u64,
    /// `WriteDataTimeMs`
    pub write_data_time_ms: u64,
    /// `ReceiveDataTimeMs`
    pub receive_data_time_ms: u64,
    /// `CommitAndPublishTimeMs` (omitted for group commit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit_and_publish_time_ms: Option<u64>,
    /// `ErrorURL` (only when an error log exists).
    #[serde(rename = "ErrorURL", skip_serializing_if = "Option::is_none")]
    pub error_url: Option<String>,
}

impl LoadResponse {
    /// Serialises as the BE does: 4-space pretty print and a trailing newline.
    pub fn to_body(&self) -> String {
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
        let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
        let _ = self.serialize(&mut ser);
        let mut text = String::from_utf8(out).unwrap_or_default();
        text.push('\n');
        text
    }

    fn failed(label: &str, comment: &str, two_phase: bool, message: String) -> Self {
        Self {
            txn_id: -1,
            label: label.to_owned(),
            comment: comment.to_owned(),
            two_phase_commit: Some(two_phase.to_string()),
            status: "Fail".into(),
            message,
            begin_txn_time_ms: Some(0),
            commit_and_publish_time_ms: Some(0),
            ..Self::default()
        }
    }
}

fn load_reply(response: &LoadResponse) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
        response.to_body(),
    )
        .into_response()
}

fn ms(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

async fn be_stream_load(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Extension(kill): Extension<ConnKill>,
    Path((db, table_name)): Path<(String, String)>,
    request: Request,
) -> Response {
    let _receiving = shared.wire.be_loads.enter();
    maybe_delay(&shared).await;
    let started = Instant::now();
    let (parts, body) = request.into_parts();
    let headers = &parts.headers;
    let label_header = header_str(headers, "label").unwrap_or_default().to_owned();
    let comment = header_str(headers, "comment")
        .unwrap_or_default()
        .to_owned();
    let two_phase =
        header_str(headers, "two_phase_commit").is_some_and(|v| v.eq_ignore_ascii_case("true"));
    let fail = |msg: String| {
        load_reply(&LoadResponse::failed(
            &label_header,
            &comment,
            two_phase,
            msg,
        ))
    };

    // Everything below until the body is read happens before `100 Continue`.
    let Some(auth) = parse_basic(header_str(headers, "authorization")) else {
        return fail("[NOT_AUTHORIZED]no valid Basic authorization".into());
    };
    let chunked =
        header_str(headers, "transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    match (headers.contains_key(header::CONTENT_LENGTH), chunked) {
        (false, false) => {
            return fail("[INVALID_ARGUMENT]content_length is empty and transfer-encoding!=chunked, please set content_length or transfer-encoding=chunked".into());
        }
        (true, true) => {
            return fail(
                "[INVALID_ARGUMENT]please do not set both content_length and transfer-encoding"
                    .into(),
            );
        }
        _ => {}
    }
    let group_commit = match header_str(headers, "group_commit").map(str::to_ascii_lowercase) {
        None => false,
        Some(m) if m == "off_mode" => false,
        Some(m) if m == "sync_mode" || m == "async_mode" => true,
        Some(_) => {
            return fail(
                "[INVALID_ARGUMENT]group_commit can only be [async_mode, sync_mode, off_mode]"
                    .into(),
            );
        }
    };
    if group_commit && !label_header.is_empty() {
        return fail(
            "[INVALID_ARGUMENT]label and group_commit can't be set at the same time".into(),
        );
    }
    let mut opts: LoadOptions = match parse_options(headers) {
        Ok(o) => o,
        Err(message) => return fail(message),
    };
    // Group commit is silently off for 2PC and partial updates (as in Doris).
    let group_commit = group_commit && !opts.two_phase_commit && !opts.partial;
    if group_commit {
        // Every group-commit load here forms its own internal batch, committed at once
        // (sync and async modes alike); the label is the batch's internal one.
        opts.label = format!(
            "group_commit_{}_{}",
            &uuid::Uuid::new_v4().simple().to_string()[..16],
            &uuid::Uuid::new_v4().simple().to_string()[..16]
        );
    }
    let fail =
        |msg: String| load_reply(&LoadResponse::failed(&opts.label, &comment, two_phase, msg));
    // Begin transaction (the FE checks the password here, as Doris does over thrift).
    let begin = Instant::now();
    if !shared.users.check(&auth.user, &auth.password) {
        return fail(format!(
            "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = {}",
            access_denied(
                &auth.user,
                &peer.ip().to_string(),
                !auth.password.is_empty()
            )
        ));
    }
    if !shared
        .users
        .has(&auth.user, &db, &table_name, Privilege::Load)
    {
        return fail(format!(
            "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = {}",
            missing_privilege(Privilege::Load)
        ));
    }
    let table = match shared.catalog.table(&db, &table_name) {
        Ok(t) => t,
        Err(EmulatorError::UnknownDatabase(_)) => {
            return fail(format!(
                "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = unknown databases, dbName={db}"
            ));
        }
        Err(_) => {
            return fail(format!(
                "[ANALYSIS_ERROR]TStatus: errCode = 7, detailMessage = unknown table, tableName={table_name}"
            ));
        }
    };
    if opts.partial
        && !(table.schema.key_model == Some(doris_sql::KeyModel::Unique)
            && table.schema.merge_on_write)
    {
        return fail("[INVALID_ARGUMENT]Partial update is only allowed on unique table with merge-on-write enabled.".into());
    }
    if (opts.delete || opts.merge_delete.is_some())
        && table.schema.key_model != Some(doris_sql::KeyModel::Unique)
    {
        return fail("[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = load by MERGE or DELETE is only supported in unique tables.".into());
    }
    let txn_id = match shared.txns.begin(&db, &table_name, &opts.label) {
        Ok(id) => id,
        Err(exists) => {
            let mut r = LoadResponse::failed(
                &opts.label,
                &comment,
                two_phase,
                if shared.config.legacy_label_exists_text {
                    format!(
                        "[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label [{}] has already been used.",
                        opts.label
                    )
                } else {
                    format!(
                        "[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label [{}] has already been used, relate to txn [{}]",
                        opts.label, exists.existing_txn_id
                    )
                },
            );
            r.status = "Label Already Exists".into();
            r.existing_job_status = Some(exists.existing_job_status.to_owned());
            return load_reply(&r);
        }
    };
    let begin_ms = ms(begin);
    let fault = shared.faults.take(Point::BeLoad);
    if let Some(f @ Fault::HoldRunning { ms }) = &fault {
        shared
            .faults
            .record(f, Some(&opts.label), Some(txn_id), false);
        tokio::time::sleep(std::time::Duration::from_millis(*ms)).await;
    }
    if let Some(f @ Fault::ResetMidBody) = &fault {
        // Read the first piece of the body (the client is mid-upload), then reset.
        let mut body = Body::new(body);
        let _ = std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await;
        shared.txns.abort(txn_id, "connection reset");
        shared
            .faults
            .record(f, Some(&opts.label), Some(txn_id), false);
        return drop_connection(&kill).await;
    }

    // Reading the body makes hyper send `100 Continue`.
    let receive = Instant::now();
    let bytes: Bytes =
        match axum::body::to_bytes(Body::new(body), shared.config.max_body_bytes).await {
            Ok(b) => b,
            Err(e) => {
                shared.txns.abort(txn_id, "body read failed");
                return fail(format!(
                    "[INTERNAL_ERROR]cancelled: failed to receive the body: {e}"
                ));
            }
        };
    let receive_ms = ms(receive);
    let mut response = LoadResponse {
        txn_id,
        label: opts.label.clone(),
        comment: comment.clone(),
        two_phase_commit: (!group_commit).then(|| opts.two_phase_commit.to_string()),
        group_commit: group_commit.then_some(true),
        status: "Success".into(),
        message: "OK".into(),
        load_bytes: bytes.len() as u64,
        begin_txn_time_ms: (!group_commit).then_some(begin_ms),
        commit_and_publish_time_ms: (!group_commit).then_some(0),
        receive_data_time_ms: receive_ms,
        ..LoadResponse::default()
    };
    let read = Instant::now();
    // A failure before anything is staged: abort the transaction and answer `Fail`.
    let failed = |mut response: LoadResponse, message: String| {
        shared.txns.abort(txn_id, &message);
        response.status = "Fail".into();
        response.message = message;
        response.load_time_ms = ms(started);
        load_reply(&response)
    };
    let mut decoded = match decode(&table, &opts, bytes) {
        Ok(d) => d,
        Err(message) => return failed(response, message),
    };
    #[cfg(feature = "sql")]
    if !opts.mappings.is_empty() {
        decoded = match crate::load::apply_mappings(&table, &opts, decoded).await {
            Ok(d) => d,
            Err(message) => return failed(response, message),
        };
    }
    response.read_data_time_ms = ms(read);
    response.number_total_rows = decoded.total_rows;
    let write = Instant::now();
    #[cfg(feature = "sql")]
    if let Some(predicate) = &opts.where_predicate {
        match crate::load::apply_where(std::mem::take(&mut decoded.batches), predicate).await {
            Ok((kept, unselected)) => {
                decoded.batches = kept;
                response.number_unselected_rows = unselected;
            }
            Err(message) => return failed(response, message),
        }
    }
    #[cfg(feature = "sql")]
    if let Some(condition) = &opts.merge_delete {
        match crate::load::apply_merge(std::mem::take(&mut decoded.batches), condition).await {
            Ok(marked) => decoded.batches = marked,
            Err(message) => return failed(response, message),
        }
    }
    let staged = shared.stage(&table, std::mem::take(&mut decoded.batches));
    let outcome = match staged {
        Err(e) => Err(format!("[INTERNAL_ERROR]{e}")),
        Ok((staged, unrouted)) => {
            for _ in 0..unrouted {
                decoded.reject("Reason: no partition for this tuple.".into());
            }
            let too_many = decoded.total_rows > 0
                && (decoded.filtered_rows as f64)
                    > opts.max_filter_ratio * decoded.total_rows as f64;
            if too_many {
                Err("[DATA_QUALITY_ERROR]too many filtered rows".to_owned())
            } else {
                Ok(staged)
            }
        }
    };
    response.number_filtered_rows = decoded.filtered_rows;
    if !decoded.error_log.is_empty() {
        response.error_url = Some(shared.store_error_log(decoded.error_log.join("\n")));
    }
    response.write_data_time_ms = ms(write);
    match outcome {
        Err(message) => {
            shared.txns.abort(txn_id, &message);
            response.status = "Fail".into();
            response.message = message;
            response.number_loaded_rows = 0;
        }
        Ok(staged) => {
            response.number_loaded_rows =
                decoded.total_rows - decoded.filtered_rows - response.number_unselected_rows;
            let commit = Instant::now();
            let publish_delay = match &fault {
                Some(Fault::PublishTimeout { visible_after_ms }) if !opts.two_phase_commit => {
                    Some(*visible_after_ms)
                }
                _ => None,
            };
            if let (Some(delay), Some(f)) = (publish_delay, &fault) {
                // Committed; visible only after the delay.
                shared.txns.mark_committed(txn_id);
                shared
                    .faults
                    .record(f, Some(&opts.label), Some(txn_id), true);
                response.status = "Publish Timeout".into();
                response.message = "[PUBLISH_TIMEOUT]transaction commit successfully, BUT data will be visible later".into();
                let (shared, table) = (shared.clone(), table.clone());
                tokio::spawn(async move {
                    tokio::time::sleep(std::time::Duration::from_millis(delay)).await;
                    if table.apply(staged).is_ok() {
                        shared.txns.make_visible(txn_id);
                        crate::persist::save(&shared);
                    }
                });
            } else if opts.two_phase_commit {
                shared.txns.precommit(txn_id, staged);
            } else if let Err(e) = table.apply(staged) {
                shared.txns.abort(txn_id, &e.to_string());
                response.status = "Fail".into();
                response.message = match e {
                    EmulatorError::DataQuality(m) => format!("[DATA_QUALITY_ERROR]{m}"),
                    other => format!("[INTERNAL_ERROR]{other}"),
                };
                response.number_loaded_rows = 0;
            } else {
                shared.txns.make_visible(txn_id);
                crate::persist::save(&shared);
            }
            response.commit_and_publish_time_ms = (!group_commit).then(|| ms(commit));
        }
    }
    response.load_time_ms = ms(started);
    let committed = response.status != "Fail";
    match &fault {
        Some(f @ Fault::SlowAnswer { ms }) => {
            shared
                .faults
                .record(f, Some(&opts.label), Some(txn_id), committed);
            tokio::time::sleep(std::time::Duration::from_millis(*ms)).await;
            load_reply(&response)
        }
        Some(f @ Fault::DropAfterCommit) => {
            shared
                .faults
                .record(f, Some(&opts.label), Some(txn_id), committed);
            drop_connection(&kill).await
        }
        Some(f @ Fault::MalformedResponse) => {
            shared
                .faults
                .record(f, Some(&opts.label), Some(txn_id), committed);
            let html = "<html><body>502 Bad Gateway</body></html>";
            ([(header::CONTENT_TYPE, "text/html")], html).into_response()
        }
        Some(f @ Fault::TruncatedResponse) => {
            shared
                .faults
                .record(f, Some(&opts.label), Some(txn_id), committed);
            let body = response.to_body();
            let half = body[..body.len() / 2].to_owned();
            (
                [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
                half,
            )
                .into_response()
        }
        _ => load_reply(&response),
    }
}

/// The 2PC reply (`{"status": …, "msg": …}`, lower-case keys).
#[derive(Serialize)]
struct TwoPhaseReply {
    status: String,
    msg: String,
}

async fn be_stream_load_2pc(
    State(shared): State<Arc<Shared>>,
    Path(db): Path<String>,
    headers: HeaderMap,
) -> Response {
    let reply = |status: &str, msg: String| {
        json_response(&TwoPhaseReply {
            status: status.to_owned(),
            msg,
        })
    };
    let Some(auth) = parse_basic(header_str(&headers, "authorization")) else {
        return reply("NOT_AUTHORIZED", "no valid Basic authorization".into());
    };
    if !shared.users.check(&auth.user, &auth.password) {
        return reply(
            "ANALYSIS_ERROR",
            format!(
                "errCode = 2, detailMessage = {}",
                access_denied(&auth.user, "127.0.0.1", true)
            ),
        );
    }
    if !shared
        .users
        .has_in_database(&auth.user, &db, Privilege::Load)
    {
        return reply(
            "ANALYSIS_ERROR",
            format!(
                "errCode = 2, detailMessage = {}",
                missing_privilege(Privilege::Load)
            ),
        );
    }
    let operation = header_str(&headers, "txn_operation")
        .unwrap_or_default()
        .to_ascii_lowercase();
    if operation != "commit" && operation != "abort" {
        return reply(
            "INVALID_ARGUMENT",
            "transaction operation should be 'commit' or 'abort'".into(),
        );
    }
    let (by, subject) = match (
        header_str(&headers, "txn_id"),
        header_str(&headers, "label"),
    ) {
        (Some(id), _) => match id.trim().parse::<i64>() {
            Ok(id) => (TxnRef::Id(id), format!("transaction [{id}]")),
            Err(_) => return reply("INVALID_ARGUMENT", "txn_id must be a number".into()),
        },
        (None, Some(label)) => (TxnRef::Label(label.to_owned()), format!("label [{label}]")),
        (None, None) => {
            return reply(
                "INVALID_ARGUMENT",
                "No transaction id or label selected.".into(),
            );
        }
    };
    let Some(id) = shared.txns.resolve(&db, &by) else {
        let id_text = match &by {
            TxnRef::Id(id) => id.to_string(),
            TxnRef::Label(l) => l.clone(),
        };
        return reply(
            "ANALYSIS_ERROR",
            format!("errCode = 2, detailMessage = transaction [{id_text}] not found"),
        );
    };
    let result = if operation == "commit" {
        shared
            .txns
            .take_for_commit(id)
            .and_then(|(db, table, staged)| {
                let table = shared
                    .catalog
                    .table(&db, &table)
                    .map_err(|e| e.to_string())?;
                table.apply(staged).map_err(|e| e.to_string())?;
                shared.txns.make_visible(id);
                crate::persist::save(&shared);
                Ok(())
            })
    } else {
        shared.txns.abort_2pc(id)
    };
    match result {
        Ok(()) => reply("Success", format!("{subject} {operation} successfully.")),
        Err(msg) => reply(
            "ANALYSIS_ERROR",
            format!("errCode = 2, detailMessage = {msg}"),
        ),
    }
}

#[derive(serde::Deserialize)]
struct ErrorLogQuery {
    file: String,
}

async fn be_error_log(
    State(shared): State<Arc<Shared>>,
    Query(q): Query<ErrorLogQuery>,
) -> Response {
    match shared.error_log(&q.file) {
        Some(text) => ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response(),
        None => (StatusCode::NOT_FOUND, "Not Found").into_response(),
    }
}

/// The BE router.
pub fn be_router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/api/{db}/{table}/_stream_load", put(be_stream_load))
        .route("/api/{db}/_stream_load_2pc", put(be_stream_load_2pc))
        .route("/api/_load_error_log", get(be_error_log))
        .with_state(shared)
}
