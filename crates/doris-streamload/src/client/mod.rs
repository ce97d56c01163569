//! The Stream Load client: one load with retries under the same label, two-phase commit,
//! the FE's backend list and error logs.
//!
//! - [`route`]: the FE's redirect, configured or remembered BEs, the allowlist;
//! - [`attempt`]: one attempt (the body streamed once, to the BE);
//! - [`two_phase`]: commit and abort; [`error_log`]: a rejected load's log head;
//! - [`body`]: capped reads of every answer; [`source`]: the rows and their cut.
//!
//! What to do after each attempt (the exactly-once rules, pure) is [`crate::decide`]; the
//! public outcome types are in `crate::report`.
//!
//! Retries follow the crate's one schedule ([`crate::retry`]).

mod attempt;
mod body;
mod error_log;
mod route;
mod source;
mod two_phase;

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use arrow::record_batch::RecordBatch;
use arrow_schema::SchemaRef;
use http::{HeaderMap, HeaderValue, header};
use url::Url;

use crate::config::{ClientConfig, HostPort};
use crate::encode::Encoded;
use crate::error::StreamLoadError;
use crate::label::Label;
use crate::options::LoadOptions;
use crate::response::LoadResponse;
use crate::retry::Schedule;
use crate::wire::Connector;

use crate::decide::{self, Next, Progress};
use crate::report::LoadReport;
use attempt::{AttemptError, Attempted};
pub(crate) use source::Source;

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

impl StreamLoadClient {
    /// Builds a client; checks the configuration and the CA bundle, sends nothing.
    pub fn new(config: ClientConfig) -> Result<Self, StreamLoadError> {
        config.validate()?;
        let tls = crate::wire::tls_config(
            config.ca_bundle_pem.as_deref(),
            config.client_identity.as_ref(),
        )
        .map_err(StreamLoadError::Config)?;
        let http = reqwest::Client::builder()
            .user_agent(crate::wire::USER_AGENT)
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(config.connect_timeout)
            .timeout(config.answer_timeout)
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

    /// A GET of `url` with the client's Basic credentials (`/api/backends`, error logs).
    pub(super) fn authorized_get(&self, url: Url) -> reqwest::RequestBuilder {
        self.http.get(url).header(
            header::AUTHORIZATION,
            crate::config::basic_header(&self.config.credentials),
        )
    }

    pub(super) fn api_url(base: &Url, segments: &[&str]) -> Url {
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

    pub(super) fn base_headers(&self) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            header::AUTHORIZATION,
            crate::config::basic_header(&self.config.credentials),
        );
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/octet-stream"),
        );
        h
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
        let mut schedule = Schedule::for_load(retry, started);
        let mut uploaded = 0u64;
        let mut progress = Progress {
            two_phase: options.two_phase_commit,
            group_commit: options.group_commit.is_some(),
            adopt_precommitted: options.adopt_precommitted,
            ..Progress::default()
        };
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
        // The BE that answered the last attempt: the only host an error log is read from.
        let mut answered_by: Option<url::Url> = None;
        loop {
            progress.attempts = schedule.start_attempt();
            progress.may_probe = schedule.fits(Instant::now(), retry.running_probe_interval);
            tracing::debug!(
                label = %label_text,
                attempt = progress.attempts,
                "stream load attempt"
            );
            let (next, encoded) = match self.attempt(db, table, &headers, options, &source).await {
                Ok(Attempted {
                    answer,
                    encoded,
                    sent,
                    backend,
                }) => {
                    uploaded += sent;
                    answered_by = backend;
                    let rows = encoded.map(|e| e.rows);
                    (
                        decide::after_answer(answer, rows, progress, &label_text),
                        encoded,
                    )
                }
                Err(AttemptError::Final(e)) => return Err(e),
                Err(AttemptError::Retryable { sent, detail }) => {
                    uploaded += sent;
                    (
                        decide::after_failure(sent, detail, &mut progress, &label_text),
                        None,
                    )
                }
            };
            let attempts = progress.attempts;
            let detail = match next {
                Next::Answered { status, response } => {
                    let rows = encoded.map_or(response.number_total_rows, |e| e.rows);
                    let out = report(status, Some(response), rows, encoded, attempts, uploaded);
                    loaded(&out);
                    return Ok(out);
                }
                Next::AlreadyHeld { status, txn_id } => {
                    let rows = source.settle_cut(options)?;
                    let mut out = report(status, None, rows, None, attempts, uploaded);
                    out.txn_id = txn_id.unwrap_or(-1);
                    loaded(&out);
                    return Ok(out);
                }
                Next::Probe => {
                    tracing::debug!(
                        label = %label_text,
                        "stream load: the label is RUNNING, probing again"
                    );
                    tokio::time::sleep(retry.running_probe_interval).await;
                    schedule.forget_attempt();
                    continue;
                }
                Next::Rejected { message, error_url } => {
                    let error_log_head = self
                        .error_log_head(error_url.as_deref(), answered_by.as_ref())
                        .await;
                    let e = StreamLoadError::Rejected {
                        label: label_text,
                        message,
                        error_url,
                        error_log_head,
                    };
                    failed(&e, attempts);
                    return Err(e);
                }
                Next::Fail(e) => {
                    failed(&e, attempts);
                    return Err(e);
                }
                Next::Retry(detail) => detail,
            };
            match schedule.next_delay(Instant::now()) {
                Some(delay) => {
                    tracing::debug!(
                        label = %label_text,
                        attempt = attempts,
                        reason = %detail,
                        delay_ms = delay.as_millis() as u64,
                        "stream load retry"
                    );
                    tokio::time::sleep(delay).await;
                }
                None => {
                    let e = decide::exhausted(progress, label_text, attempts, detail);
                    failed(&e, attempts);
                    return Err(e);
                }
            }
        }
    }
}

/// The INFO line of a load that ended with an answer.
fn loaded(report: &LoadReport) {
    tracing::info!(
        label = %report.label.as_deref().unwrap_or(""),
        txn_id = report.txn_id,
        status = ?report.status,
        rows = report.rows,
        uploaded_bytes = report.uploaded_bytes,
        attempts = report.attempts,
        seconds = report.elapsed.as_secs_f64(),
        "stream load"
    );
}

/// The WARN line of a load that failed (the error's text: no body, no password).
fn failed(error: &StreamLoadError, attempts: u32) {
    tracing::warn!(attempts, error = %error, "stream load failed");
}
