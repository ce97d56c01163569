//! The BE face: Stream Load (`stream_load`), 2PC (`two_phase`) and the error log.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, put};

use crate::Shared;

mod reply;
mod stream_load;
mod two_phase;

pub use reply::LoadResponse;

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
        .route(
            "/api/{db}/{table}/_stream_load",
            put(stream_load::be_stream_load),
        )
        .route(
            "/api/{db}/_stream_load_2pc",
            put(two_phase::be_stream_load_2pc),
        )
        .route("/api/_load_error_log", get(be_error_log))
        .with_state(shared)
}
