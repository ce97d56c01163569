//! The BE's Stream Load handler, one step per function, in the order Doris takes them:
//!
//! 1. [`asked`]: the headers (auth present, length or chunked, group commit, load options);
//! 2. [`begin`]: password, `LOAD_PRIV`, the table, key-model rules, the label's transaction;
//! 3. faults armed before the body (`hold_running`, `reset_mid_body`);
//! 4. [`receive`]: reading the body (this is what makes hyper send `100 Continue`);
//! 5. [`transform`]: decode (csv/json/arrow/parquet, in `crate::load`), column mappings,
//!    `where`, `merge_type`/`delete`;
//! 6. [`stage`]: rows routed to tablets and the `max_filter_ratio` rule;
//! 7. [`commit`]: visible at once, pre-committed (2PC) or committed-but-late (publish
//!    timeout);
//! 8. [`answer`]: the JSON reply, or the fault armed for the answer.
//!
//! Steps 1 and 2 happen before `100 Continue`, so a refused load uploads no body.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Extension, Path, Request, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use hyper::body::Body as _;

use super::reply::{LoadResponse, load_reply, ms};
use crate::auth::{BasicAuth, Privilege, access_denied, missing_privilege, parse_basic};
use crate::catalog::Table;
use crate::error::EmulatorError;
use crate::faults::{Fault, Point};
use crate::http::{drop_connection, header_str, maybe_delay};
use crate::load::{Decoded, LoadOptions, decode, parse_options};
use crate::txn::Staged;
use crate::{ConnKill, Shared};

/// What the request's headers ask for, checked.
struct Asked {
    auth: BasicAuth,
    opts: LoadOptions,
    comment: String,
    /// The `two_phase_commit` header as sent (the failure reply echoes it).
    two_phase_header: bool,
    group_commit: bool,
}

impl Asked {
    /// The `Fail` reply for this request.
    fn fail(&self, message: String) -> Response {
        load_reply(&LoadResponse::failed(
            &self.opts.label,
            &self.comment,
            self.two_phase_header,
            message,
        ))
    }
}

/// `PUT /api/{db}/{table}/_stream_load` on the BE.
pub(super) async fn be_stream_load(
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
    let asked = match asked(&parts.headers, &shared.config.profile) {
        Ok(a) => a,
        Err(refusal) => return refusal,
    };
    let begun = Instant::now();
    let (table, txn_id) = match begin(&shared, peer, &db, &table_name, &asked) {
        Ok(t) => t,
        Err(refusal) => return refusal,
    };
    let begin_ms = ms(begun);
    let label = asked.opts.label.clone();
    let fault = shared.faults.take(Point::BeLoad);
    if let Some(f @ Fault::HoldRunning { ms }) = &fault {
        shared.faults.record(f, Some(&label), Some(txn_id), false);
        tokio::time::sleep(Duration::from_millis(*ms)).await;
    }
    if let Some(f @ Fault::ResetMidBody) = &fault {
        // Read the first piece of the body (the client is mid-upload), then reset.
        let mut body = Body::new(body);
        let _ = std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await;
        shared.txns.abort(txn_id, "connection reset");
        shared.faults.record(f, Some(&label), Some(txn_id), false);
        return drop_connection(&kill).await;
    }

    let received = Instant::now();
    let bytes = match receive(&shared, body).await {
        Ok(b) => b,
        Err(message) => {
            shared.txns.abort(txn_id, "body read failed");
            return asked.fail(message);
        }
    };
    let group_commit = asked.group_commit;
    let mut response = LoadResponse {
        txn_id,
        label: label.clone(),
        comment: asked.comment.clone(),
        two_phase_commit: (!group_commit).then(|| asked.opts.two_phase_commit.to_string()),
        group_commit: group_commit.then_some(true),
        status: "Success".into(),
        message: "OK".into(),
        load_bytes: bytes.len() as u64,
        begin_txn_time_ms: (!group_commit).then_some(begin_ms),
        commit_and_publish_time_ms: (!group_commit).then_some(0),
        receive_data_time_ms: ms(received),
        ..LoadResponse::default()
    };
    let mut decoded = match transform(&table, &asked.opts, bytes, &mut response).await {
        Ok(d) => d,
        Err(message) => {
            // A failure before anything is staged: abort the transaction and answer `Fail`.
            shared.txns.abort(txn_id, &message);
            response.status = "Fail".into();
            response.message = message;
            response.load_time_ms = ms(started);
            return load_reply(&response);
        }
    };
    let written = Instant::now();
    let outcome = stage(&shared, &table, &asked.opts, &mut decoded);
    response.number_filtered_rows = decoded.filtered_rows;
    if !decoded.error_log.is_empty() {
        response.error_url = Some(shared.store_error_log(decoded.error_log.join("\n")));
    }
    response.write_data_time_ms = ms(written);
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
            let committing = Instant::now();
            let late = match &fault {
                Some(f @ Fault::PublishTimeout { visible_after_ms })
                    if !asked.opts.two_phase_commit =>
                {
                    shared.faults.record(f, Some(&label), Some(txn_id), true);
                    Some(Duration::from_millis(*visible_after_ms))
                }
                _ => None,
            };
            let commit_to = Commit {
                shared: &shared,
                table: &table,
                txn_id,
                two_phase: asked.opts.two_phase_commit,
                visible_after: late,
            };
            commit_to.commit(staged, &mut response);
            response.commit_and_publish_time_ms = (!group_commit).then(|| ms(committing));
        }
    }
    response.load_time_ms = ms(started);
    answer(&shared, fault.as_ref(), &response, &kill).await
}

/// Step 1: the headers, checked before anything else (answered without `100 Continue`).
#[allow(clippy::result_large_err)]
fn asked(headers: &HeaderMap, profile: &crate::DorisProfile) -> Result<Asked, Response> {
    let label_header = header_str(headers, "label").unwrap_or_default().to_owned();
    let comment = header_str(headers, "comment")
        .unwrap_or_default()
        .to_owned();
    let two_phase_header =
        header_str(headers, "two_phase_commit").is_some_and(|v| v.eq_ignore_ascii_case("true"));
    let fail = |msg: &str| {
        load_reply(&LoadResponse::failed(
            &label_header,
            &comment,
            two_phase_header,
            msg.to_owned(),
        ))
    };
    let Some(auth) = parse_basic(header_str(headers, "authorization")) else {
        return Err(fail("[NOT_AUTHORIZED]no valid Basic authorization"));
    };
    let chunked =
        header_str(headers, "transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    match (headers.contains_key(header::CONTENT_LENGTH), chunked) {
        (false, false) => {
            return Err(fail(
                "[INVALID_ARGUMENT]content_length is empty and transfer-encoding!=chunked, please set content_length or transfer-encoding=chunked",
            ));
        }
        (true, true) => {
            return Err(fail(
                "[INVALID_ARGUMENT]please do not set both content_length and transfer-encoding",
            ));
        }
        _ => {}
    }
    let group_commit = match header_str(headers, "group_commit").map(str::to_ascii_lowercase) {
        None => false,
        Some(m) if m == "off_mode" => false,
        Some(m) if m == "sync_mode" || m == "async_mode" => true,
        Some(_) => {
            return Err(fail(
                "[INVALID_ARGUMENT]group_commit can only be [async_mode, sync_mode, off_mode]",
            ));
        }
    };
    if group_commit && !label_header.is_empty() {
        return Err(fail(
            "[INVALID_ARGUMENT]label and group_commit can't be set at the same time",
        ));
    }
    let mut opts = parse_options(headers).map_err(|message| fail(&message))?;
    if !profile.flexible_partial_update() {
        // Before flexible partial update (3.1) the BE reads `partial_columns` only:
        // `unique_key_update_mode` and `partial_update_new_key_behavior` are ignored.
        opts = opts
            .before_flexible_partial_update(headers)
            .map_err(|message| fail(&message))?;
    }
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
    Ok(Asked {
        auth,
        opts,
        comment,
        two_phase_header,
        group_commit,
    })
}

/// Step 2: begin the transaction (the FE checks the password here, as Doris does over
/// thrift), after the privilege, the table and its key model allow the load.
#[allow(clippy::result_large_err)]
fn begin(
    shared: &Shared,
    peer: SocketAddr,
    db: &str,
    table_name: &str,
    asked: &Asked,
) -> Result<(Arc<Table>, i64), Response> {
    let (auth, opts) = (&asked.auth, &asked.opts);
    let analysis = |detail: String| {
        asked.fail(format!(
            "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = {detail}"
        ))
    };
    if !shared.users.check(&auth.user, &auth.password) {
        let ip = peer.ip().to_string();
        return Err(analysis(access_denied(
            &auth.user,
            &ip,
            !auth.password.is_empty(),
        )));
    }
    if !shared
        .users
        .has(&auth.user, db, table_name, Privilege::Load)
    {
        return Err(analysis(missing_privilege(Privilege::Load)));
    }
    let table = match shared.catalog.table(db, table_name) {
        Ok(t) => t,
        Err(EmulatorError::UnknownDatabase(_)) => {
            return Err(analysis(format!("unknown databases, dbName={db}")));
        }
        Err(_) => {
            return Err(asked.fail(format!(
                "[ANALYSIS_ERROR]TStatus: errCode = 7, detailMessage = unknown table, tableName={table_name}"
            )));
        }
    };
    if opts.partial
        && !(table.schema.key_model == Some(doris_sql::KeyModel::Unique)
            && table.schema.merge_on_write)
    {
        return Err(asked.fail("[INVALID_ARGUMENT]Partial update is only allowed on unique table with merge-on-write enabled.".into()));
    }
    if (opts.delete || opts.merge_delete.is_some())
        && table.schema.key_model != Some(doris_sql::KeyModel::Unique)
    {
        return Err(analysis(
            "load by MERGE or DELETE is only supported in unique tables.".into(),
        ));
    }
    match shared.txns.begin(db, table_name, &opts.label) {
        Ok(id) => Ok((table, id)),
        Err(exists) => {
            let mut r = LoadResponse::failed(
                &opts.label,
                &asked.comment,
                asked.two_phase_header,
                if shared.config.profile.legacy_label_exists_text {
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
            Err(load_reply(&r))
        }
    }
}

/// Step 4: the whole body, up to the configured cap.
async fn receive(shared: &Shared, body: axum::body::Body) -> Result<Bytes, String> {
    axum::body::to_bytes(Body::new(body), shared.config.max_body_bytes)
        .await
        .map_err(|e| format!("[INTERNAL_ERROR]cancelled: failed to receive the body: {e}"))
}

/// Step 5: the body's rows in the table's schema, after mappings, `where` and merge marks;
/// fills the read time, total and unselected rows of `response`.
async fn transform(
    table: &Table,
    opts: &LoadOptions,
    bytes: Bytes,
    response: &mut LoadResponse,
) -> Result<Decoded, String> {
    let read = Instant::now();
    #[allow(unused_mut)]
    let mut decoded = decode(table, opts, bytes)?;
    #[cfg(feature = "sql")]
    if !opts.mappings.is_empty() {
        decoded = crate::load::apply_mappings(table, opts, decoded).await?;
    }
    response.read_data_time_ms = ms(read);
    response.number_total_rows = decoded.total_rows;
    #[cfg(feature = "sql")]
    if let Some(predicate) = &opts.where_predicate {
        let (kept, unselected) =
            crate::load::apply_where(std::mem::take(&mut decoded.batches), predicate).await?;
        decoded.batches = kept;
        response.number_unselected_rows = unselected;
    }
    #[cfg(feature = "sql")]
    if let Some(condition) = &opts.merge_delete {
        decoded.batches =
            crate::load::apply_merge(std::mem::take(&mut decoded.batches), condition).await?;
    }
    Ok(decoded)
}

/// Step 6: the rows routed to tablets; rows no partition takes are rejected, and too many
/// rejected rows fail the load.
fn stage(
    shared: &Shared,
    table: &Table,
    opts: &LoadOptions,
    decoded: &mut Decoded,
) -> Result<Staged, String> {
    let (staged, unrouted) = shared
        .stage(table, std::mem::take(&mut decoded.batches))
        .map_err(|e| format!("[INTERNAL_ERROR]{e}"))?;
    for _ in 0..unrouted {
        decoded.reject("Reason: no partition for this tuple.".into());
    }
    let too_many = decoded.total_rows > 0
        && (decoded.filtered_rows as f64) > opts.max_filter_ratio * decoded.total_rows as f64;
    if too_many {
        return Err("[DATA_QUALITY_ERROR]too many filtered rows".to_owned());
    }
    Ok(staged)
}

/// Step 7: where the staged rows of a transaction go.
struct Commit<'a> {
    shared: &'a Arc<Shared>,
    table: &'a Arc<Table>,
    txn_id: i64,
    two_phase: bool,
    /// Committed now, visible only after this long (a `publish_timeout` fault).
    visible_after: Option<Duration>,
}

impl Commit<'_> {
    fn commit(self, staged: Staged, response: &mut LoadResponse) {
        let Self {
            shared,
            table,
            txn_id,
            ..
        } = self;
        if let Some(delay) = self.visible_after {
            shared.txns.mark_committed(txn_id);
            response.status = "Publish Timeout".into();
            response.message =
                "[PUBLISH_TIMEOUT]transaction commit successfully, BUT data will be visible later"
                    .into();
            let (shared, table) = (shared.clone(), table.clone());
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                if table.apply(staged).is_ok() {
                    shared.txns.make_visible(txn_id);
                    crate::persist::save(&shared);
                }
            });
        } else if self.two_phase {
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
            crate::persist::save(shared);
        }
    }
}

/// Step 8: the reply, or what a fault armed for the answer makes of it.
async fn answer(
    shared: &Shared,
    fault: Option<&Fault>,
    response: &LoadResponse,
    kill: &ConnKill,
) -> Response {
    let committed = response.status != "Fail";
    let record = |f: &Fault| {
        shared
            .faults
            .record(f, Some(&response.label), Some(response.txn_id), committed);
    };
    match fault {
        Some(f @ Fault::SlowAnswer { ms }) => {
            record(f);
            tokio::time::sleep(Duration::from_millis(*ms)).await;
            load_reply(response)
        }
        Some(f @ Fault::DropAfterCommit) => {
            record(f);
            drop_connection(kill).await
        }
        Some(f @ Fault::MalformedResponse) => {
            record(f);
            let html = "<html><body>502 Bad Gateway</body></html>";
            ([(header::CONTENT_TYPE, "text/html")], html).into_response()
        }
        Some(f @ Fault::MiscountedAnswer) if committed => {
            record(f);
            let mut miscounted = response.clone();
            miscounted.number_total_rows += 1;
            load_reply(&miscounted)
        }
        Some(f @ Fault::TruncatedResponse) => {
            record(f);
            let body = response.to_body();
            let half = body[..body.len() / 2].to_owned();
            (
                [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
                half,
            )
                .into_response()
        }
        _ => load_reply(response),
    }
}
