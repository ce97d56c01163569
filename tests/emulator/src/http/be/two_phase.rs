//! The BE's 2PC endpoint: commit or abort a pre-committed transaction by id or label.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use serde::Serialize;

use crate::Shared;
use crate::auth::{Privilege, access_denied, missing_privilege, parse_basic};
use crate::http::{header_str, json_response};
use crate::txn::TxnRef;

/// The 2PC reply (`{"status": …, "msg": …}`, lower-case keys).
#[derive(Serialize)]
struct TwoPhaseReply {
    status: String,
    msg: String,
}

pub(super) async fn be_stream_load_2pc(
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
