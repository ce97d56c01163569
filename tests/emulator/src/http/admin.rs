//! The emulator's own routes on the FE face (`/_emulator/...`): arm and list faults,
//! count a table's rows per tablet, list a database's transactions, read the wire counters.
//! Doris has none of them; tests and benches in other processes use them.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use super::json_response;
use crate::Shared;
use crate::faults::Arm;

/// The admin routes, merged into the FE router.
pub(super) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route(
            "/_emulator/faults",
            post(arm_fault).get(fault_report).delete(clear_faults),
        )
        .route("/_emulator/tables/{db}/{table}", get(table_report))
        .route("/_emulator/txns/{db}", get(txn_report))
        .route("/_emulator/wire", get(wire_report).delete(reset_wire_peaks))
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
    #[allow(unused_mut)]
    let mut report = shared.wire.report();
    // Flight sessions (bearer tokens) held, and results waiting for their `DoGet`: a
    // client that leaked them would grow these.
    #[cfg(feature = "sql")]
    {
        report["flight_sessions"] = shared.flight.sessions().into();
        report["flight_pending_results"] = shared.flight.pending_results().into();
    }
    json_response(&report)
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
