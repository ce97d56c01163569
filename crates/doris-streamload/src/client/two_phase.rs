//! Two-phase commit: committing and aborting pre-committed loads. Both are idempotent, so
//! a lost request is retried on the shared schedule; what each request came to is decided
//! by `decide::after_two_phase`, under the same rules as a load's attempts.

use std::time::Instant;

use http::{HeaderMap, HeaderName, HeaderValue, header};

use crate::config::Route;
use crate::error::StreamLoadError;
use crate::label::Label;
use crate::response::TwoPhaseReply;
use crate::retry::Schedule;

use super::StreamLoadClient;
use super::body::read_body_capped;
use super::route::redirect_status;
use crate::decide::{self, Progress, TwoPhaseAttempt, TwoPhaseNext};
use crate::report::{TwoPhaseOutcome, TxnRef};

/// The INFO line of a two-phase decision (WARN when it failed), passed through.
fn decided(
    txn: &TxnRef,
    operation: &'static str,
    outcome: Result<TwoPhaseOutcome, StreamLoadError>,
) -> Result<TwoPhaseOutcome, StreamLoadError> {
    match &outcome {
        Ok(done) => tracing::info!(txn = %txn.describe(), operation, outcome = ?done, "two-phase"),
        Err(e) => tracing::warn!(txn = %txn.describe(), operation, error = %e, "two-phase failed"),
    }
    outcome
}

impl StreamLoadClient {
    /// Commits a pre-committed load. Committing one already committed is `AlreadyDone`.
    pub async fn commit(&self, db: &str, txn: &TxnRef) -> Result<TwoPhaseOutcome, StreamLoadError> {
        decided(txn, "commit", self.two_phase(db, txn, "commit").await)
    }

    /// Aborts a pre-committed load. Aborting one already aborted is `AlreadyDone`.
    pub async fn abort(&self, db: &str, txn: &TxnRef) -> Result<TwoPhaseOutcome, StreamLoadError> {
        decided(txn, "abort", self.two_phase(db, txn, "abort").await)
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
        let target = txn.describe();
        let mut schedule = Schedule::without_deadline(&self.config.retry);
        let mut progress = Progress::default();
        loop {
            progress.attempts = schedule.start_attempt();
            let attempt = self.two_phase_once(db, &headers).await;
            match decide::after_two_phase(attempt, operation, &target, &mut progress) {
                TwoPhaseNext::Finished(outcome) => return Ok(outcome),
                TwoPhaseNext::Fail(error) => return Err(error),
                TwoPhaseNext::Retry(detail) => match schedule.next_delay(Instant::now()) {
                    Some(delay) => tokio::time::sleep(delay).await,
                    None => {
                        let attempts = progress.attempts;
                        return Err(decide::exhausted(progress, target, attempts, detail));
                    }
                },
            }
        }
    }

    /// One 2PC request: FE, then the redirect target.
    async fn two_phase_once(&self, db: &str, headers: &HeaderMap) -> TwoPhaseAttempt {
        let mut url = match &self.config.route {
            Route::Backends(list) => Self::api_url(&list[0], &[db, "_stream_load_2pc"]),
            Route::ViaFe { .. } => Self::api_url(&self.config.fe, &[db, "_stream_load_2pc"]),
        };
        for _hop in 0..2 {
            let response = match self
                .http
                .put(url.clone())
                .headers(headers.clone())
                .body(Vec::new())
                .send()
                .await
            {
                Ok(response) => response,
                Err(e) => {
                    return TwoPhaseAttempt::Lost {
                        // A connection never made carried nothing; any later failure
                        // may come after Doris applied the operation.
                        reached: !e.is_connect(),
                        detail: format!("2PC request failed: {}", e.without_url()),
                    };
                }
            };
            if redirect_status(response.status()) {
                let Some(location) = response
                    .headers()
                    .get(header::LOCATION)
                    .and_then(|l| l.to_str().ok())
                    .map(str::to_owned)
                else {
                    return TwoPhaseAttempt::Refused(StreamLoadError::Malformed(
                        "2PC redirect without Location".into(),
                    ));
                };
                match self.allowed_target(&location).await {
                    Ok(next) => url = next,
                    Err(error) => return TwoPhaseAttempt::Refused(error),
                }
                continue;
            }
            let status = response.status();
            let body = match read_body_capped(
                response,
                crate::response::MAX_ANSWER_BYTES,
                "the 2PC answer",
            )
            .await
            {
                Ok(body) => body,
                Err(StreamLoadError::Malformed(detail)) if detail.contains("cut off") => {
                    return TwoPhaseAttempt::Lost {
                        detail,
                        reached: true,
                    };
                }
                Err(error) => return TwoPhaseAttempt::Refused(error),
            };
            if status.is_server_error() {
                return TwoPhaseAttempt::Lost {
                    detail: format!("2PC answered HTTP {status}"),
                    reached: true,
                };
            }
            return match TwoPhaseReply::parse(&body) {
                Ok(reply) => TwoPhaseAttempt::Replied(reply),
                Err(error) => TwoPhaseAttempt::Refused(error),
            };
        }
        TwoPhaseAttempt::Refused(StreamLoadError::Malformed(
            "the 2PC request was redirected twice".into(),
        ))
    }
}
