//! The Stream Load client: one load with retries under the same label, two-phase commit,
//! the FE's backend list and error logs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow::record_batch::RecordBatch;
use arrow_schema::SchemaRef;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use tokio::sync::oneshot;
use url::Url;

use crate::config::{ClientConfig, HostPort, Route, host_port};
use crate::encode::{Encoded, Limits, encode, take_rows};
use crate::error::StreamLoadError;
use crate::label::Label;
use crate::options::LoadOptions;
use crate::response::{
    Answer, ExistingJobStatus, LoadResponse, TwoPhaseReply, classify, is_transient_failure,
    reconcile,
};
use crate::wire::{BodyPlan, Connector, WireError};

/// Largest `/api/backends` answer read (thousands of BEs fit in far less).
const MAX_BACKENDS_BYTES: usize = 4 << 20;

/// Most of an error log read (its first lines are all that is kept).
const MAX_ERROR_LOG_BYTES: usize = 1 << 20;

/// Reads a response body, refusing one larger than `cap` bytes; `what` names the endpoint
/// in the error.
async fn read_body_capped(
    mut response: reqwest::Response,
    cap: usize,
    what: &str,
) -> Result<Vec<u8>, StreamLoadError> {
    if response.content_length().is_some_and(|n| n > cap as u64) {
        return Err(StreamLoadError::Malformed(format!(
            "{what}: the answer is larger than the {cap}-byte cap"
        )));
    }
    let mut out = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| {
        StreamLoadError::Malformed(format!(
            "{what}: the answer was cut off: {}",
            e.without_url()
        ))
    })? {
        if out.len() + chunk.len() > cap {
            return Err(StreamLoadError::Malformed(format!(
                "{what}: the answer is larger than the {cap}-byte cap"
            )));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// The first `cap` bytes of a body (the rest is not read).
async fn read_body_head(
    mut response: reqwest::Response,
    cap: usize,
) -> Result<Vec<u8>, reqwest::Error> {
    let mut out = Vec::new();
    while out.len() < cap {
        let Some(chunk) = response.chunk().await? else {
            break;
        };
        let room = cap - out.len();
        out.extend_from_slice(&chunk[..chunk.len().min(room)]);
    }
    Ok(out)
}

/// How a load ended, when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadStatus {
    /// Committed and visible.
    Success,
    /// Committed; Doris makes it visible later (`Publish Timeout`).
    PublishTimeout,
    /// Pre-committed (two-phase commit): invisible until committed.
    Precommitted,
    /// An earlier attempt of this call, whose answer was lost, committed the rows: Doris
    /// answered `Label Already Exists` with `FINISHED`. The rows are in Doris once.
    CommittedByEarlierAttempt,
    /// The label was already committed before this call (a rerun of the same job over the
    /// same data): nothing was sent again.
    AlreadyLoaded,
}

impl LoadStatus {
    /// Whether the rows are (or will become) visible without a further step.
    pub fn is_committed(self) -> bool {
        !matches!(self, Self::Precommitted)
    }
}

/// The outcome of one load.
#[derive(Debug, Clone)]
pub struct LoadReport {
    /// The label (`None` for group commit, whose label Doris chooses).
    pub label: Option<String>,
    /// The transaction id (`-1` when unknown).
    pub txn_id: i64,
    /// How it ended.
    pub status: LoadStatus,
    /// Rows this load carried.
    pub rows: u64,
    /// Encoded bytes of the body (before compression).
    pub encoded_bytes: u64,
    /// Body bytes put on the wire, over every attempt.
    pub uploaded_bytes: u64,
    /// Attempts made.
    pub attempts: u32,
    /// Wall time from the first attempt to the answer.
    pub elapsed: Duration,
    /// Doris's answer (absent for the `Label Already Exists` outcomes).
    pub response: Option<LoadResponse>,
}

/// A transaction to commit or abort.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxnRef {
    /// By transaction id.
    Id(i64),
    /// By label.
    Label(Label),
}

impl TxnRef {
    /// `transaction [id]` or `label [label]`, as Doris's 2PC messages name them.
    pub fn describe(&self) -> String {
        match self {
            Self::Id(id) => format!("transaction [{id}]"),
            Self::Label(l) => format!("label [{l}]"),
        }
    }
}

/// The result of a commit or abort.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TwoPhaseOutcome {
    /// Done now.
    Done,
    /// It had already been done (a repeated call: commits and aborts are idempotent).
    AlreadyDone,
}

/// The rows of one load, and how the load is cut from them.
pub(crate) struct Source {
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
    limits: Option<Limits>,
    cut: Mutex<Option<u64>>,
    on_cut: Mutex<Option<oneshot::Sender<u64>>>,
}

impl Source {
    pub(crate) fn new(
        schema: SchemaRef,
        batches: Vec<RecordBatch>,
        limits: Option<Limits>,
        on_cut: Option<oneshot::Sender<u64>>,
    ) -> Self {
        Self {
            schema,
            batches,
            limits,
            cut: Mutex::new(None),
            on_cut: Mutex::new(on_cut),
        }
    }

    fn cut(&self) -> Option<u64> {
        self.cut.lock().ok().and_then(|c| *c)
    }

    fn set_cut(&self, rows: u64) {
        if let Ok(mut c) = self.cut.lock() {
            *c = Some(rows);
        }
        if let Some(tx) = self.on_cut.lock().ok().and_then(|mut t| t.take()) {
            let _ = tx.send(rows);
        }
    }

    /// The rows this load is made of: all of them, or as the limits cut them.
    fn plan(&self) -> (Vec<RecordBatch>, Option<Limits>) {
        match self.cut() {
            Some(rows) => (take_rows(&self.batches, rows), None),
            None => (self.batches.clone(), self.limits),
        }
    }

    /// Fixes the cut without sending anything (when Doris already holds the load).
    fn settle_cut(&self, options: &LoadOptions) -> Result<u64, StreamLoadError> {
        if let Some(rows) = self.cut() {
            return Ok(rows);
        }
        let (batches, limits) = self.plan();
        let (enc, _) = encode(
            &self.schema,
            &batches,
            &options.format,
            options.compression,
            limits,
            std::io::sink(),
        )?;
        self.set_cut(enc.rows);
        Ok(enc.rows)
    }

    fn fields(&self) -> Vec<String> {
        self.schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }
}

/// What a failed attempt allows.
enum AttemptError {
    /// Retry under the same label; `sent` body bytes may have reached Doris.
    Retryable { sent: u64, detail: String },
    /// Do not retry.
    Final(StreamLoadError),
}

/// One attempt's answer.
struct Attempted {
    answer: Answer,
    encoded: Option<Encoded>,
    sent: u64,
}

/// A Stream Load client. Cheap to share behind an `Arc`; every method takes `&self`.
pub struct StreamLoadClient {
    config: ClientConfig,
    connector: Connector,
    http: reqwest::Client,
    reported: Mutex<Option<Vec<HostPort>>>,
    remembered: Mutex<Option<Url>>,
    next_backend: AtomicUsize,
}

impl std::fmt::Debug for StreamLoadClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamLoadClient")
            .field("fe", &self.config.fe.as_str())
            .field("credentials", &self.config.credentials)
            .field("route", &self.config.route)
            .finish_non_exhaustive()
    }
}

fn redirect_status(status: StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
}

/// `Location` without userinfo (the FE puts the raw password there).
fn strip_userinfo(mut url: Url) -> Url {
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url
}

impl StreamLoadClient {
    /// Builds a client; checks the configuration and the CA bundle, sends nothing.
    pub fn new(config: ClientConfig) -> Result<Self, StreamLoadError> {
        config.validate()?;
        let tls = crate::wire::tls_config(config.ca_bundle_pem.as_deref())
            .map_err(StreamLoadError::Config)?;
        let http = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(config.connect_timeout)
            .timeout(config.request_timeout)
            .tls_backend_preconfigured(tls.clone())
            .build()
            .map_err(|e| StreamLoadError::Config(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self {
            connector: Connector {
                tls: Arc::new(tls),
                connect_timeout: config.connect_timeout,
            },
            http,
            config,
            reported: Mutex::new(None),
            remembered: Mutex::new(None),
            next_backend: AtomicUsize::new(0),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    fn api_url(base: &Url, segments: &[&str]) -> Url {
        let mut url = base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.clear();
            path.push("api");
            for s in segments {
                path.push(s);
            }
        }
        url
    }

    /// The alive BEs the FE reports (`GET /api/backends?is_alive=true`).
    pub async fn backends(&self) -> Result<Vec<HostPort>, StreamLoadError> {
        let mut url = Self::api_url(&self.config.fe, &["backends"]);
        url.set_query(Some("is_alive=true"));
        let response = self
            .http
            .get(url)
            .header(
                header::AUTHORIZATION,
                self.config.credentials.basic_header(),
            )
            .send()
            .await
            .map_err(|e| StreamLoadError::Transport {
                label: String::new(),
                attempts: 1,
                detail: format!("GET /api/backends failed: {}", e.without_url()),
            })?;
        let body = read_body_capped(response, MAX_BACKENDS_BYTES, "/api/backends").await?;
        doris_sql::parse_backends(&body).map_err(|e| match e {
            doris_sql::BackendsAnswerError::Unauthorized(message) => {
                StreamLoadError::Auth { message }
            }
            other => StreamLoadError::Malformed(other.to_string()),
        })
    }

    /// Checks a redirect target against the allowlist; returns it without userinfo.
    async fn allowed_target(&self, location: &str) -> Result<Url, StreamLoadError> {
        let parsed = Url::parse(location)
            .or_else(|_| self.config.fe.join(location))
            .map_err(|_| StreamLoadError::RedirectRefused {
                target: "(unparsable Location)".into(),
                reason: "the Location header is not a URL".into(),
            })?;
        let target = strip_userinfo(parsed);
        let refuse = |reason: &str| StreamLoadError::RedirectRefused {
            target: target.to_string(),
            reason: reason.to_owned(),
        };
        if !matches!(target.scheme(), "http" | "https") {
            return Err(refuse("only http and https targets are followed"));
        }
        if self.config.fe.scheme() == "https" && target.scheme() == "http" {
            return Err(refuse(
                "the FE was reached over https; no downgrade to http",
            ));
        }
        let (host, port) = host_port(&target).ok_or_else(|| refuse("no host or port"))?;
        let (fe_host, _) = host_port(&self.config.fe).unwrap_or_default();
        let allowlist = &self.config.allowlist;
        for refresh in [false, true] {
            let reported = if allowlist.reported_backends {
                self.reported_backends(refresh).await?
            } else {
                Vec::new()
            };
            if allowlist.allows(&host, port, &fe_host, &reported) {
                return Ok(target);
            }
            if !allowlist.reported_backends {
                break;
            }
        }
        Err(refuse(
            "not an allowed target (neither configured nor a BE the FE reports)",
        ))
    }

    async fn reported_backends(&self, refresh: bool) -> Result<Vec<HostPort>, StreamLoadError> {
        if !refresh && let Some(list) = self.reported.lock().ok().and_then(|r| r.clone()) {
            return Ok(list);
        }
        let list = self.backends().await?;
        if let Ok(mut r) = self.reported.lock() {
            *r = Some(list.clone());
        }
        Ok(list)
    }

    fn base_headers(&self) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            header::AUTHORIZATION,
            self.config.credentials.basic_header(),
        );
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/octet-stream"),
        );
        h
    }

    /// Finds the BE for the next attempt: a configured one, the remembered one, or the
    /// FE's redirect (asked with the headers only, never the body).
    async fn backend_for(
        &self,
        db: &str,
        table: &str,
        headers: &HeaderMap,
    ) -> Result<Result<(Url, bool), Answer>, AttemptError> {
        let path = |base: &Url| Self::api_url(base, &[db, table, "_stream_load"]);
        match &self.config.route {
            Route::Backends(list) => {
                let i = self.next_backend.fetch_add(1, Ordering::Relaxed) % list.len();
                return Ok(Ok((path(&list[i]), false)));
            }
            Route::ViaFe {
                remember_backend: true,
            } => {
                if let Some(be) = self.remembered.lock().ok().and_then(|r| r.clone()) {
                    return Ok(Ok((path(&be), true)));
                }
            }
            Route::ViaFe { .. } => {}
        }
        let mut fe_headers = headers.clone();
        if let Some(policy) = self.config.redirect_policy {
            fe_headers.insert(
                HeaderName::from_static("redirect-policy"),
                HeaderValue::from_static(policy.header_value()),
            );
        }
        let fe_url = path(&self.config.fe);
        let probe = self
            .connector
            .put::<()>(
                &fe_url,
                fe_headers,
                BodyPlan::Withhold,
                self.config.request_timeout,
                None,
            )
            .await;
        let (exchange, produced) = match probe {
            Ok(r) => r,
            Err(WireError { detail, .. }) => {
                return Err(AttemptError::Retryable {
                    sent: 0,
                    detail: format!("FE: {detail}"),
                });
            }
        };
        if let Some(Err(detail)) = produced {
            return Err(AttemptError::Final(StreamLoadError::Config(format!(
                "{} did not redirect: {detail}; point the client at a Doris FE or configure BEs",
                self.config.fe
            ))));
        }
        if redirect_status(exchange.status) {
            let location = exchange
                .headers
                .get(header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .ok_or_else(|| {
                    AttemptError::Final(StreamLoadError::Malformed(
                        "the FE's redirect has no Location".into(),
                    ))
                })?;
            let target = self
                .allowed_target(location)
                .await
                .map_err(AttemptError::Final)?;
            if matches!(
                self.config.route,
                Route::ViaFe {
                    remember_backend: true
                }
            ) {
                let mut base = target.clone();
                base.set_path("/");
                base.set_query(None);
                if let Ok(mut r) = self.remembered.lock() {
                    *r = Some(base);
                }
            }
            return Ok(Ok((target, false)));
        }
        if exchange.status == StatusCode::OK {
            return classify(&exchange.body)
                .map(Err)
                .map_err(|e| AttemptError::Retryable {
                    sent: 0,
                    detail: format!("FE: {e}"),
                });
        }
        let detail = format!("the FE answered HTTP {}", exchange.status);
        if exchange.status.is_server_error() {
            Err(AttemptError::Retryable { sent: 0, detail })
        } else {
            Err(AttemptError::Final(StreamLoadError::Malformed(detail)))
        }
    }

    async fn attempt(
        &self,
        db: &str,
        table: &str,
        headers: &HeaderMap,
        options: &LoadOptions,
        source: &Arc<Source>,
    ) -> Result<Attempted, AttemptError> {
        let (target, remembered) = match self.backend_for(db, table, headers).await? {
            Ok(t) => t,
            Err(answer) => {
                return Ok(Attempted {
                    answer,
                    encoded: None,
                    sent: 0,
                });
            }
        };
        let producer_source = source.clone();
        let (format, compression) = (options.format.clone(), options.compression);
        let produce: crate::wire::Producer<Encoded> = Box::new(move |sink| {
            let src = producer_source;
            let (batches, limits) = src.plan();
            let (enc, sink) = encode(&src.schema, &batches, &format, compression, limits, sink)
                .map_err(|e| e.to_string())?;
            sink.finish().map_err(|e| e.to_string())?;
            if limits.is_some() {
                src.set_cut(enc.rows);
            }
            Ok(enc)
        });
        let result = self
            .connector
            .put(
                &target,
                headers.clone(),
                BodyPlan::Stream(produce),
                self.config.request_timeout,
                None,
            )
            .await;
        let (exchange, produced) = match result {
            Ok(r) => r,
            Err(WireError {
                body_bytes_sent,
                detail,
            }) => {
                if remembered
                    && body_bytes_sent == 0
                    && let Ok(mut r) = self.remembered.lock()
                {
                    *r = None;
                }
                if detail.starts_with("body encoding failed") {
                    return Err(AttemptError::Final(StreamLoadError::Encode(detail)));
                }
                return Err(AttemptError::Retryable {
                    sent: body_bytes_sent,
                    detail: format!("BE: {detail}"),
                });
            }
        };
        let encoded = match produced {
            Some(Ok(e)) => Some(e),
            Some(Err(e)) => return Err(AttemptError::Final(StreamLoadError::Encode(e))),
            None => None,
        };
        let sent = exchange.body_bytes_sent;
        if exchange.status != StatusCode::OK {
            let detail = format!("the BE answered HTTP {}", exchange.status);
            return if sent == 0 && !exchange.status.is_server_error() {
                Err(AttemptError::Final(StreamLoadError::Malformed(detail)))
            } else {
                Err(AttemptError::Retryable { sent, detail })
            };
        }
        match classify(&exchange.body) {
            Ok(answer) => Ok(Attempted {
                answer,
                encoded,
                sent,
            }),
            Err(e) => Err(AttemptError::Retryable {
                sent,
                detail: e.to_string(),
            }),
        }
    }

    /// Loads `batches` (all rows) under `label` (a random one when `None`, none for group
    /// commit), retrying under the same label as [`crate::RetryPolicy`] bounds.
    pub async fn load(
        &self,
        db: &str,
        table: &str,
        options: &LoadOptions,
        label: Option<Label>,
        schema: SchemaRef,
        batches: Vec<RecordBatch>,
    ) -> Result<LoadReport, StreamLoadError> {
        let source = Arc::new(Source::new(schema, batches, None, None));
        self.load_source(db, table, options, label, source).await
    }

    pub(crate) async fn load_source(
        &self,
        db: &str,
        table: &str,
        options: &LoadOptions,
        label: Option<Label>,
        source: Arc<Source>,
    ) -> Result<LoadReport, StreamLoadError> {
        let label = match (options.group_commit, label) {
            (Some(_), Some(_)) => {
                return Err(StreamLoadError::Config(
                    "group commit refuses a label (Doris: label and group_commit can't be set at the same time), so it gives no dedupe".into(),
                ));
            }
            (Some(_), None) => None,
            (None, Some(l)) => Some(l),
            (None, None) => Some(Label::random("doris_streamload")?),
        };
        let label_text = label.as_ref().map(|l| l.to_string()).unwrap_or_default();
        let mut headers = options.headers(label.as_ref().map(Label::as_str), &source.fields())?;
        headers.extend(self.base_headers());
        let retry = &self.config.retry;
        let started = Instant::now();
        let deadline = started + retry.max_total;
        let mut backoff = retry.initial_backoff;
        let mut attempts = 0u32;
        let mut uploaded = 0u64;
        let mut body_may_have_landed = false;
        let report = |status,
                      response: Option<LoadResponse>,
                      rows,
                      enc: Option<Encoded>,
                      attempts,
                      uploaded| LoadReport {
            label: response
                .as_ref()
                .filter(|_| label.is_none())
                .map(|r| r.label.clone())
                .or_else(|| label.as_ref().map(|l| l.to_string())),
            txn_id: response.as_ref().map_or(-1, |r| r.txn_id),
            status,
            rows,
            encoded_bytes: enc.map_or(0, |e| e.encoded_bytes),
            uploaded_bytes: uploaded,
            attempts,
            elapsed: started.elapsed(),
            response,
        };
        loop {
            attempts += 1;
            let outcome = self.attempt(db, table, &headers, options, &source).await;
            let retry_detail = match outcome {
                Ok(Attempted {
                    answer,
                    encoded,
                    sent,
                }) => {
                    uploaded += sent;
                    let rows = encoded.map(|e| e.rows);
                    match answer {
                        Answer::Success(r) | Answer::PublishTimeout(r) => {
                            let status = if !r.status.eq_ignore_ascii_case("success") {
                                LoadStatus::PublishTimeout
                            } else if r.two_phase_commit {
                                LoadStatus::Precommitted
                            } else {
                                LoadStatus::Success
                            };
                            reconcile(&r, rows).map_err(|detail| {
                                StreamLoadError::CounterMismatch {
                                    label: label_text.clone(),
                                    detail,
                                }
                            })?;
                            let rows = rows.unwrap_or(r.number_total_rows);
                            return Ok(report(status, Some(r), rows, encoded, attempts, uploaded));
                        }
                        Answer::LabelExists { existing, txn_id } => match existing {
                            ExistingJobStatus::Finished => {
                                let rows = source.settle_cut(options)?;
                                let status = if body_may_have_landed {
                                    LoadStatus::CommittedByEarlierAttempt
                                } else {
                                    LoadStatus::AlreadyLoaded
                                };
                                let mut out = report(status, None, rows, None, attempts, uploaded);
                                out.txn_id = txn_id.unwrap_or(-1);
                                return Ok(out);
                            }
                            ExistingJobStatus::Precommitted
                                if body_may_have_landed && options.two_phase_commit =>
                            {
                                let rows = source.settle_cut(options)?;
                                let mut out = report(
                                    LoadStatus::Precommitted,
                                    None,
                                    rows,
                                    None,
                                    attempts,
                                    uploaded,
                                );
                                out.txn_id = txn_id.unwrap_or(-1);
                                return Ok(out);
                            }
                            ExistingJobStatus::Running | ExistingJobStatus::Unknown
                                if Instant::now() + retry.running_probe_interval < deadline =>
                            {
                                // Still loading: probe again (headers only; the BE answers
                                // before asking for the body). Probes are bounded by time.
                                tokio::time::sleep(retry.running_probe_interval).await;
                                attempts -= 1;
                                continue;
                            }
                            ExistingJobStatus::Running | ExistingJobStatus::Unknown => {
                                // The label's transaction may still commit: nobody can say
                                // the rows are absent, so this is not "someone else's label".
                                return Err(StreamLoadError::Ambiguous {
                                    label: label_text,
                                    attempts,
                                    detail: format!(
                                        "the label was still {existing:?} in Doris when the \
                                         retry time ran out; it may still commit"
                                    ),
                                });
                            }
                            existing => {
                                return Err(StreamLoadError::LabelExists {
                                    label: label_text,
                                    existing,
                                    txn_id,
                                });
                            }
                        },
                        Answer::Auth(message) => return Err(StreamLoadError::Auth { message }),
                        Answer::Fail { message, .. } if is_transient_failure(&message) => message,
                        Answer::Fail { message, error_url } => {
                            let error_log_head = self.error_log_head(error_url.as_deref()).await;
                            return Err(StreamLoadError::Rejected {
                                label: label_text,
                                message,
                                error_url,
                                error_log_head,
                            });
                        }
                    }
                }
                Err(AttemptError::Final(e)) => return Err(e),
                Err(AttemptError::Retryable { sent, detail }) => {
                    uploaded += sent;
                    if sent > 0 {
                        body_may_have_landed = true;
                        if options.group_commit.is_some() {
                            // No label: a retry could load the rows twice.
                            return Err(StreamLoadError::Ambiguous {
                                label: label_text,
                                attempts,
                                detail: format!("{detail} (group commit: not retried)"),
                            });
                        }
                    }
                    detail
                }
            };
            if attempts >= retry.max_attempts || Instant::now() + backoff >= deadline {
                return Err(if body_may_have_landed {
                    StreamLoadError::Ambiguous {
                        label: label_text,
                        attempts,
                        detail: retry_detail,
                    }
                } else {
                    StreamLoadError::Transport {
                        label: label_text,
                        attempts,
                        detail: retry_detail,
                    }
                });
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(retry.max_backoff);
        }
    }

    /// The first lines of an error log, when configured and the URL is an allowed BE.
    async fn error_log_head(&self, url: Option<&str>) -> Vec<String> {
        let (Some(url), lines) = (url, self.config.error_log_lines) else {
            return Vec::new();
        };
        if lines == 0 {
            return Vec::new();
        }
        let Ok(target) = self.allowed_target(url).await else {
            return Vec::new();
        };
        let Ok(response) = self
            .http
            .get(target)
            .header(
                header::AUTHORIZATION,
                self.config.credentials.basic_header(),
            )
            .send()
            .await
        else {
            return Vec::new();
        };
        // Only the head is kept; a log larger than the cap is read no further.
        let Ok(body) = read_body_head(response, MAX_ERROR_LOG_BYTES).await else {
            return Vec::new();
        };
        String::from_utf8_lossy(&body)
            .lines()
            .take(lines)
            .map(str::to_owned)
            .collect()
    }

    /// Commits a pre-committed load. Committing one already committed is `AlreadyDone`.
    pub async fn commit(&self, db: &str, txn: &TxnRef) -> Result<TwoPhaseOutcome, StreamLoadError> {
        self.two_phase(db, txn, "commit").await
    }

    /// Aborts a pre-committed load. Aborting one already aborted is `AlreadyDone`.
    pub async fn abort(&self, db: &str, txn: &TxnRef) -> Result<TwoPhaseOutcome, StreamLoadError> {
        self.two_phase(db, txn, "abort").await
    }

    /// Aborts every listed label that is still pre-committed (e.g. the labels of a failed
    /// job, from its ledger or its deterministic label scheme); labels Doris does not know
    /// are skipped. Returns the labels that were aborted now.
    pub async fn abort_precommitted(
        &self,
        db: &str,
        labels: impl IntoIterator<Item = Label>,
    ) -> Result<Vec<Label>, StreamLoadError> {
        let mut aborted = Vec::new();
        for label in labels {
            match self.abort(db, &TxnRef::Label(label.clone())).await {
                Ok(TwoPhaseOutcome::Done) => aborted.push(label),
                Ok(TwoPhaseOutcome::AlreadyDone) => {}
                Err(StreamLoadError::TwoPhase { message, .. })
                    if message.contains("not found") || message.contains("is already") => {}
                Err(e) => return Err(e),
            }
        }
        Ok(aborted)
    }

    async fn two_phase(
        &self,
        db: &str,
        txn: &TxnRef,
        operation: &'static str,
    ) -> Result<TwoPhaseOutcome, StreamLoadError> {
        let mut headers = self.base_headers();
        headers.insert(
            HeaderName::from_static("txn_operation"),
            HeaderValue::from_static(operation),
        );
        match txn {
            TxnRef::Id(id) => {
                headers.insert(HeaderName::from_static("txn_id"), HeaderValue::from(*id))
            }
            TxnRef::Label(l) => headers.insert(
                HeaderName::from_static("label"),
                HeaderValue::from_str(l.as_str())
                    .map_err(|_| StreamLoadError::Config("bad label".into()))?,
            ),
        };
        headers.insert(header::EXPECT, HeaderValue::from_static("100-continue"));
        let retry = &self.config.retry;
        let mut backoff = retry.initial_backoff;
        let mut attempts = 0;
        loop {
            attempts += 1;
            match self.two_phase_once(db, &headers).await {
                Ok(reply) => return Self::two_phase_result(reply, txn, operation),
                Err(Ok(final_error)) => return Err(final_error),
                Err(Err(detail)) if attempts >= retry.max_attempts => {
                    return Err(StreamLoadError::Transport {
                        label: txn.describe(),
                        attempts,
                        detail,
                    });
                }
                Err(Err(_)) => {
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(retry.max_backoff);
                }
            }
        }
    }

    /// One 2PC request: FE, then the redirect target. `Err(Ok)` is final, `Err(Err)` may
    /// be retried (2PC operations are idempotent).
    async fn two_phase_once(
        &self,
        db: &str,
        headers: &HeaderMap,
    ) -> Result<TwoPhaseReply, Result<StreamLoadError, String>> {
        let mut url = match &self.config.route {
            Route::Backends(list) => Self::api_url(&list[0], &[db, "_stream_load_2pc"]),
            Route::ViaFe { .. } => Self::api_url(&self.config.fe, &[db, "_stream_load_2pc"]),
        };
        for _hop in 0..2 {
            let response = self
                .http
                .put(url.clone())
                .headers(headers.clone())
                .body(Vec::new())
                .send()
                .await
                .map_err(|e| {
                    Err(format!(
                        "{operation} request failed: {}",
                        e.without_url(),
                        operation = "2PC"
                    ))
                })?;
            if redirect_status(response.status()) {
                let location = response
                    .headers()
                    .get(header::LOCATION)
                    .and_then(|l| l.to_str().ok())
                    .ok_or_else(|| {
                        Ok(StreamLoadError::Malformed(
                            "2PC redirect without Location".into(),
                        ))
                    })?
                    .to_owned();
                url = self.allowed_target(&location).await.map_err(Ok)?;
                continue;
            }
            let status = response.status();
            let body = read_body_capped(
                response,
                crate::response::MAX_ANSWER_BYTES,
                "the 2PC answer",
            )
            .await
            .map_err(|e| match e {
                StreamLoadError::Malformed(m) if m.contains("cut off") => Err(m),
                other => Ok(other),
            })?;
            if status.is_server_error() {
                return Err(Err(format!("2PC answered HTTP {status}")));
            }
            return serde_json::from_slice(&body).map_err(|_| {
                Ok(StreamLoadError::Malformed(
                    "the 2PC answer is not JSON".into(),
                ))
            });
        }
        Err(Ok(StreamLoadError::Malformed(
            "the 2PC request was redirected twice".into(),
        )))
    }

    fn two_phase_result(
        reply: TwoPhaseReply,
        txn: &TxnRef,
        operation: &'static str,
    ) -> Result<TwoPhaseOutcome, StreamLoadError> {
        if reply.code == Some(401) {
            return Err(StreamLoadError::Auth {
                message: reply
                    .data
                    .as_ref()
                    .and_then(|d| d.as_str())
                    .unwrap_or("Unauthorized")
                    .to_owned(),
            });
        }
        let msg_lower = reply.msg.to_ascii_lowercase();
        if reply.status.eq_ignore_ascii_case("success") {
            return Ok(TwoPhaseOutcome::Done);
        }
        let already = match operation {
            "commit" => {
                msg_lower.contains("is already visible")
                    || msg_lower.contains("is already committed")
            }
            _ => msg_lower.contains("is already aborted"),
        };
        if already {
            return Ok(TwoPhaseOutcome::AlreadyDone);
        }
        Err(StreamLoadError::TwoPhase {
            operation,
            target: txn.describe(),
            status: reply.status,
            message: reply.msg,
        })
    }
}
