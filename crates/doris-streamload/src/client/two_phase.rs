//! Two-phase commit: committing and aborting pre-committed loads (idempotent, so retried
//! on the shared schedule).

use http::{HeaderMap, HeaderName, HeaderValue, header};

use crate::config::Route;
use crate::error::StreamLoadError;
use crate::label::Label;
use crate::response::TwoPhaseReply;
use crate::retry::Schedule;

use super::StreamLoadClient;
use super::body::read_body_capped;
use super::report::{TwoPhaseOutcome, TxnRef};
use super::route::redirect_status;

impl StreamLoadClient {
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
        let mut schedule = Schedule::without_deadline(&self.config.retry);
        loop {
            let attempts = schedule.start_attempt();
            match self.two_phase_once(db, &headers).await {
                Ok(reply) => return Self::two_phase_result(reply, txn, operation),
                Err(Ok(final_error)) => return Err(final_error),
                Err(Err(detail)) => match schedule.next_delay(std::time::Instant::now()) {
                    Some(delay) => tokio::time::sleep(delay).await,
                    None => {
                        return Err(StreamLoadError::Transport {
                            label: txn.describe(),
                            attempts,
                            detail,
                        });
                    }
                },
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

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(status: &str, msg: &str) -> TwoPhaseReply {
        serde_json::from_value(serde_json::json!({ "status": status, "msg": msg }))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn outcome(
        r: TwoPhaseReply,
        operation: &'static str,
    ) -> Result<TwoPhaseOutcome, StreamLoadError> {
        StreamLoadClient::two_phase_result(r, &TxnRef::Id(5), operation)
    }

    #[test]
    fn a_repeated_commit_or_abort_is_already_done_not_an_error() {
        assert!(matches!(
            outcome(
                reply("Success", "transaction commit successfully."),
                "commit"
            ),
            Ok(TwoPhaseOutcome::Done)
        ));
        for msg in [
            "transaction [5] is already visible, not pre-committed.",
            "transaction [5] is already committed, not pre-committed.",
        ] {
            assert!(
                matches!(
                    outcome(reply("Fail", msg), "commit"),
                    Ok(TwoPhaseOutcome::AlreadyDone)
                ),
                "{msg}"
            );
        }
        assert!(matches!(
            outcome(reply("Fail", "transaction [5] is already aborted"), "abort"),
            Ok(TwoPhaseOutcome::AlreadyDone)
        ));
    }

    #[test]
    fn the_opposite_state_is_an_error_naming_the_transaction() {
        // Committing an aborted transaction, or aborting a visible one, did not happen.
        for (operation, msg) in [
            ("commit", "transaction [5] is already aborted"),
            (
                "abort",
                "transaction [5] is already visible, not pre-committed.",
            ),
        ] {
            match outcome(reply("Fail", msg), operation) {
                Err(StreamLoadError::TwoPhase {
                    operation: op,
                    target,
                    ..
                }) => assert_eq!((op, target.as_str()), (operation, "transaction [5]")),
                other => panic!("{operation}: {other:?}"),
            }
        }
    }

    #[test]
    fn an_fe_envelope_with_code_401_is_an_auth_error() {
        let r: TwoPhaseReply = serde_json::from_value(
            serde_json::json!({ "code": 401, "msg": "Unauthorized", "data": "Access denied" }),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        match outcome(r, "commit") {
            Err(StreamLoadError::Auth { message }) => assert_eq!(message, "Access denied"),
            other => panic!("{other:?}"),
        }
    }
}
