//! The FE face: it authenticates, checks and redirects Stream Load and 2PC to a BE
//! without reading the body, lists the backends and answers `_query_plan` and `_schema`.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use axum::routing::{get, post, put};
use percent_encoding::utf8_percent_encode;
use serde::Serialize;

use super::{
    Envelope, SEGMENT, encode_segment, header_str, json_response, maybe_delay, rest_failed,
    unauthorized,
};
use crate::Shared;
use crate::auth::{Privilege, access_denied, missing_privilege, parse_basic};
use crate::faults::{Fault, Point};

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
    let mut scheme = shared.http_scheme();
    let target = match shared.faults.take(Point::FeRedirect) {
        Some(fault) => {
            shared.faults.record(&fault, None, None, false);
            match fault {
                Fault::Redirect { host, port } => format!("{host}:{port}"),
                Fault::RedirectPlainHttp => {
                    scheme = "http";
                    redirect_target(shared, headers)
                }
                _ => format!("{}:{}", shared.config.advertise_host, unused_port()),
            }
        }
        None => redirect_target(shared, headers),
    };
    let location = format!(
        "{}://{}:{}@{}{}?{}",
        scheme,
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

/// A loopback port where nothing listens: bound once and held, never listening, so a
/// connection is refused and no other process can take the port while the emulator runs.
fn unused_port() -> u16 {
    static CLOSED: std::sync::OnceLock<Option<tokio::net::TcpSocket>> = std::sync::OnceLock::new();
    CLOSED
        .get_or_init(|| {
            let socket = tokio::net::TcpSocket::new_v4().ok()?;
            socket.bind("127.0.0.1:0".parse().ok()?).ok()?;
            Some(socket)
        })
        .as_ref()
        .and_then(|s| s.local_addr().ok())
        .map_or(1, |a| a.port())
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

/// The FE router (with the emulator's admin routes).
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
        .merge(super::admin::routes())
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
    let user = match fe_auth(&shared, &headers, peer) {
        Ok((user, _)) => user,
        Err(data) => return unauthorized(data),
    };
    if let Some(f @ Fault::QueryPlanAnswer { .. }) = shared.faults.take(Point::QueryPlan) {
        shared.faults.record(&f, None, None, false);
        if let Fault::QueryPlanAnswer { answer } = f {
            return json_response(&answer);
        }
    }
    json_response(&crate::query_plan::query_plan(
        &shared, &user, &db, &table, &body,
    ))
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
