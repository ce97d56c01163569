//! What a load does after each attempt: the exactly-once rules, as pure functions.
//!
//! [`StreamLoadClient`](crate::StreamLoadClient) runs a load as a loop: send an attempt,
//! then ask this module what comes next. A service with its own HTTP stack can run the
//! same loop (this module needs no `client` feature): [`classify`] an answer's body, then
//! [`after_answer`]; when an attempt got no answer, [`after_failure`]; when the retries run
//! out, [`exhausted`]. Two-phase commits and aborts: [`TwoPhaseReply::parse`], then
//! [`after_two_phase`].
//!
//! - A success is checked against the rows sent (`reconcile`), then reported.
//! - `Label Already Exists` is resolved by the label's state: FINISHED is our own earlier
//!   attempt (if a body may have landed) or an earlier run; PRECOMMITTED, for a two-phase
//!   load, is adopted (our pre-commit, or an earlier run's: the label names the same rows),
//!   unless the load does not adopt and sent nothing under it, when it is another holder's
//!   (`LoadOptions::adopt_precommitted`; a keyed writer then takes its next label);
//!   RUNNING/UNKNOWN is probed again while time is left, and ambiguous after; anything
//!   else is another load's label.
//! - A failure after body bytes were sent may have loaded the rows: it is retried under the
//!   same label (Doris dedupes), except for group commit (no label, so never retried), and
//!   reported as ambiguous when the retries run out.
//! - Two-phase commit and abort follow the same rules: a request that may have reached
//!   Doris and got no answer is retried (both operations are idempotent) and ambiguous when
//!   the retries run out; one that never left is a transport error; an answer is final.

use crate::error::StreamLoadError;
pub use crate::response::{Answer, TwoPhaseReply, classify};
use crate::response::{ExistingJobStatus, LoadResponse, is_transient_failure, reconcile};

use crate::report::{LoadStatus, TwoPhaseOutcome};

/// What the load knows between attempts. Start from `Progress::default()` (nothing sent,
/// no 2PC, no group commit) and set what applies; [`after_failure`] and
/// [`after_two_phase`] update it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Progress {
    /// Body bytes of an earlier attempt may have reached Doris.
    pub body_may_have_landed: bool,
    /// The load is pre-committed on success (two-phase commit).
    pub two_phase: bool,
    /// The load is a group commit (no label, so no dedupe).
    pub group_commit: bool,
    /// There is time left to probe a running label again.
    pub may_probe: bool,
    /// Attempts made so far (reported in errors).
    pub attempts: u32,
    /// A label found pre-committed before this load sent anything is adopted (default:
    /// a rerun of a job killed before its commit) rather than refused as another
    /// holder's ([`crate::LoadOptions::adopt_precommitted`]).
    pub adopt_precommitted: bool,
}

impl Default for Progress {
    /// Nothing sent, no 2PC, no group commit, pre-committed labels adopted.
    fn default() -> Self {
        Self {
            body_may_have_landed: false,
            two_phase: false,
            group_commit: false,
            may_probe: false,
            attempts: 0,
            adopt_precommitted: true,
        }
    }
}

/// The next step of the load loop.
#[derive(Debug)]
#[non_exhaustive]
pub enum Next {
    /// Doris answered with a load result: report it.
    Answered {
        /// What the answer means (committed, publish timeout, pre-committed).
        status: LoadStatus,
        /// The answer, its counters reconciled with the rows sent.
        response: LoadResponse,
    },
    /// Doris already holds this label's rows: report without sending anything more.
    AlreadyHeld {
        /// Committed by an earlier attempt or run, or pre-committed (2PC).
        status: LoadStatus,
        /// The label's transaction, when Doris named it.
        txn_id: Option<i64>,
    },
    /// The label is still running: wait and ask again (not counted as an attempt).
    Probe,
    /// Try again under the same label, if the schedule allows; the detail says why.
    Retry(String),
    /// Doris refused the rows; the error log may say why.
    Rejected {
        /// Doris's `Message`.
        message: String,
        /// Doris's `ErrorURL`, when it sent one.
        error_url: Option<String>,
    },
    /// Stop with this error.
    Fail(StreamLoadError),
}

/// The step after Doris answered an attempt that carried `rows_sent` rows (`None`: the
/// answer came before any body, e.g. from the FE).
pub fn after_answer(
    answer: Answer,
    rows_sent: Option<u64>,
    progress: Progress,
    label: &str,
) -> Next {
    match answer {
        // The status follows the classified answer, not a second reading of its text (a
        // `Status` of " Success " is a success: under 2PC, a pre-commit).
        Answer::Success(response) => answered(response, rows_sent, label, false, progress),
        Answer::PublishTimeout(response) => answered(response, rows_sent, label, true, progress),
        Answer::LabelExists { existing, txn_id } => {
            after_label_exists(existing, txn_id, progress, label)
        }
        Answer::Auth(message) => Next::Fail(StreamLoadError::Auth { message }),
        Answer::Fail { message, .. } if is_transient_failure(&message) => Next::Retry(message),
        Answer::Fail { message, error_url } => Next::Rejected { message, error_url },
    }
}

/// A committed (or pre-committed) answer, reported once it names the label sent and its
/// counters add up. An answer for another label (a BE that replaced or dropped it, as a
/// table whose `group_commit_mode` is on may) says nothing of the rows sent under ours: the
/// outcome is ambiguous, never taken as loaded, so no dedupe or two-phase step relies on it.
fn answered(
    response: LoadResponse,
    rows_sent: Option<u64>,
    label: &str,
    publish_timeout: bool,
    progress: Progress,
) -> Next {
    if !label.is_empty() && response.label != label {
        return Next::Fail(StreamLoadError::Ambiguous {
            label: label.to_owned(),
            attempts: progress.attempts,
            detail: format!(
                "Doris answered for label {:?}, not the label sent: the rows may have been \
                 loaded under that label (a table whose group_commit_mode is on does this), \
                 where a rerun under ours cannot find them; check the table before writing \
                 them again",
                shown_label(&response.label)
            ),
        });
    }
    if let Err(detail) = reconcile(&response, rows_sent) {
        return Next::Fail(StreamLoadError::CounterMismatch {
            label: label.to_owned(),
            detail,
        });
    }
    let status = if publish_timeout {
        LoadStatus::PublishTimeout
    } else if response.two_phase_commit {
        LoadStatus::Precommitted
    } else {
        LoadStatus::Success
    };
    Next::Answered { status, response }
}

/// A label from an answer fit for an error: at most 128 printable ASCII characters.
fn shown_label(label: &str) -> String {
    label
        .chars()
        .filter(|c| c.is_ascii_graphic())
        .take(128)
        .collect()
}

fn after_label_exists(
    existing: ExistingJobStatus,
    txn_id: Option<i64>,
    progress: Progress,
    label: &str,
) -> Next {
    match existing {
        ExistingJobStatus::Finished => Next::AlreadyHeld {
            status: if progress.body_may_have_landed {
                LoadStatus::CommittedByEarlierAttempt
            } else {
                LoadStatus::AlreadyLoaded
            },
            txn_id,
        },
        // Pre-committed under this label by our own body of an earlier attempt of this
        // load, or (when adopted) by an earlier run of the same job killed before its
        // commit (a deterministic label names the same rows): adopted, and committed or
        // aborted with the run's loads.
        ExistingJobStatus::Precommitted
            if progress.two_phase
                && (progress.body_may_have_landed || progress.adopt_precommitted) =>
        {
            Next::AlreadyHeld {
                status: LoadStatus::Precommitted,
                txn_id,
            }
        }
        // Pre-committed before this load sent anything, by a writer that does not adopt:
        // another holder's (an identical partition of the same write in another process, a
        // task attempt the engine dropped). Adopting it would commit that holder's rows in
        // place of ours (or twice): `LabelExists`, and a keyed writer moves on to its next
        // label (`doris_write::TaskWriter`).
        ExistingJobStatus::Precommitted if progress.two_phase => {
            Next::Fail(StreamLoadError::LabelExists {
                label: label.to_owned(),
                existing,
                txn_id,
            })
        }
        // Still loading: probe again (headers only; the BE answers before asking for the
        // body). Probes are bounded by time.
        ExistingJobStatus::Running | ExistingJobStatus::Unknown if progress.may_probe => {
            Next::Probe
        }
        // The label's transaction may still commit: nobody can say the rows are absent,
        // so this is not "someone else's label".
        ExistingJobStatus::Running | ExistingJobStatus::Unknown => {
            Next::Fail(StreamLoadError::Ambiguous {
                label: label.to_owned(),
                attempts: progress.attempts,
                detail: format!(
                    "the label was still {existing:?} in Doris when the retry time ran out; \
                     it may still commit"
                ),
            })
        }
        existing => Next::Fail(StreamLoadError::LabelExists {
            label: label.to_owned(),
            existing,
            txn_id,
        }),
    }
}

/// The step after an attempt failed without an answer, `sent` body bytes having left.
/// Updates `progress` (a body may now have landed).
pub fn after_failure(sent: u64, detail: String, progress: &mut Progress, label: &str) -> Next {
    if sent > 0 {
        progress.body_may_have_landed = true;
        if progress.group_commit {
            // No label: a retry could load the rows twice.
            return Next::Fail(StreamLoadError::Ambiguous {
                label: label.to_owned(),
                attempts: progress.attempts,
                detail: format!("{detail} (group commit: not retried)"),
            });
        }
    }
    Next::Retry(detail)
}

/// The error when retries run out: ambiguous if a body may have landed (the rows may be
/// in Doris), a transport error otherwise (they are not).
pub fn exhausted(
    progress: Progress,
    label: String,
    attempts: u32,
    detail: String,
) -> StreamLoadError {
    if progress.body_may_have_landed {
        StreamLoadError::Ambiguous {
            label,
            attempts,
            detail,
        }
    } else {
        StreamLoadError::Transport {
            label,
            attempts,
            detail,
        }
    }
}

/// What one two-phase request (commit or abort, FE then redirect target) came to.
#[derive(Debug)]
#[non_exhaustive]
pub enum TwoPhaseAttempt {
    /// Doris answered.
    Replied(TwoPhaseReply),
    /// No usable answer. `reached`: the request may have reached Doris (it was sent, or
    /// an answer had begun), so the operation may have been applied.
    Lost {
        /// What happened.
        detail: String,
        /// Whether the request may have reached Doris.
        reached: bool,
    },
    /// A final error: a refused redirect, an answer over its cap or not JSON.
    Refused(StreamLoadError),
}

/// The next step after one two-phase request.
#[derive(Debug)]
#[non_exhaustive]
pub enum TwoPhaseNext {
    /// Doris answered: the operation is done (now or earlier).
    Finished(TwoPhaseOutcome),
    /// Ask again (the operation is idempotent), if the schedule allows.
    Retry(String),
    /// Stop with this error.
    Fail(StreamLoadError),
}

/// The step after a two-phase `operation` (`"commit"` or `"abort"`) on `target` (as
/// `TxnRef::describe` names it). Updates `progress` like [`after_failure`] does, so that
/// [`exhausted`] tells an operation that may have been applied from one that never left.
pub fn after_two_phase(
    attempt: TwoPhaseAttempt,
    operation: &'static str,
    target: &str,
    progress: &mut Progress,
) -> TwoPhaseNext {
    match attempt {
        TwoPhaseAttempt::Replied(reply) => match two_phase_answer(reply, operation, target) {
            Ok(outcome) => TwoPhaseNext::Finished(outcome),
            Err(error) => TwoPhaseNext::Fail(error),
        },
        TwoPhaseAttempt::Refused(error) => TwoPhaseNext::Fail(error),
        TwoPhaseAttempt::Lost { detail, reached } => {
            match after_failure(u64::from(reached), detail, progress, target) {
                Next::Retry(detail) => TwoPhaseNext::Retry(detail),
                Next::Fail(error) => TwoPhaseNext::Fail(error),
                other => TwoPhaseNext::Fail(StreamLoadError::Malformed(format!(
                    "unexpected step after a lost 2PC request: {other:?}"
                ))),
            }
        }
    }
}

/// What Doris's answer to a two-phase request means: done, already done (a repeated
/// commit of a visible transaction, a repeated abort), or an error naming the target.
fn two_phase_answer(
    reply: TwoPhaseReply,
    operation: &'static str,
    target: &str,
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
    if reply.status.eq_ignore_ascii_case("success") {
        return Ok(TwoPhaseOutcome::Done);
    }
    let msg_lower = reply.msg.to_ascii_lowercase();
    let already = match operation {
        "commit" => {
            msg_lower.contains("is already visible") || msg_lower.contains("is already committed")
        }
        _ => msg_lower.contains("is already aborted"),
    };
    if already {
        return Ok(TwoPhaseOutcome::AlreadyDone);
    }
    Err(StreamLoadError::TwoPhase {
        operation,
        target: target.to_owned(),
        status: reply.status,
        message: reply.msg,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(status: &str, rows: u64, two_phase: bool) -> LoadResponse {
        let body = serde_json::json!({
            "TxnId": 7, "Label": "l", "Status": status, "Message": "OK",
            "NumberTotalRows": rows, "NumberLoadedRows": rows, "NumberFilteredRows": 0,
            "NumberUnselectedRows": 0, "TwoPhaseCommit": if two_phase { "true" } else { "false" },
        });
        serde_json::from_value(body).unwrap_or_else(|e| panic!("{e}"))
    }

    fn landed(yes: bool) -> Progress {
        Progress {
            body_may_have_landed: yes,
            ..Progress::default()
        }
    }

    #[test]
    fn successes_are_reported_by_kind_once_the_counters_match() {
        // Classified from the answer's text, then decided from the class alone: a padded
        // or upper-case `Status` under 2PC is still a pre-commit, never a commit.
        let cases = [
            ("Success", false, LoadStatus::Success),
            ("Success", true, LoadStatus::Precommitted),
            (" SUCCESS ", true, LoadStatus::Precommitted),
            ("Publish Timeout", false, LoadStatus::PublishTimeout),
            ("PUBLISH_TIMEOUT", false, LoadStatus::PublishTimeout),
        ];
        for (text, two_phase, expected) in cases {
            let body = serde_json::to_vec(&serde_json::json!({
                "TxnId": 7, "Label": "l", "Status": text, "Message": "OK",
                "NumberTotalRows": 5, "NumberLoadedRows": 5,
                "TwoPhaseCommit": if two_phase { "true" } else { "false" },
            }))
            .unwrap_or_else(|e| panic!("{e}"));
            let answer = classify(&body).unwrap_or_else(|e| panic!("{text}: {e}"));
            match after_answer(answer, Some(5), Progress::default(), "l") {
                Next::Answered { status, .. } => assert_eq!(status, expected, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
        // Doris counted other rows than were sent: never reported as a success.
        let answer = Answer::Success(response("Success", 4, false));
        assert!(matches!(
            after_answer(answer, Some(5), Progress::default(), "l"),
            Next::Fail(StreamLoadError::CounterMismatch { .. })
        ));
    }

    /// An answer for a label other than the one sent (a BE that replaced or dropped it) is
    /// ambiguous, never a load done under ours; a load sent without a label (group commit)
    /// takes the label Doris made.
    #[test]
    fn an_answer_for_another_label_is_never_taken_as_loaded() {
        for answer in [
            Answer::Success(response("Success", 5, false)),
            Answer::Success(response("Success", 5, true)),
            Answer::PublishTimeout(response("Publish Timeout", 5, false)),
        ] {
            match after_answer(answer, Some(5), Progress::default(), "sent_label") {
                Next::Fail(StreamLoadError::Ambiguous { label, detail, .. }) => {
                    assert_eq!(label, "sent_label");
                    assert!(detail.contains("\"l\""), "{detail}");
                }
                other => panic!("{other:?}"),
            }
        }
        let unlabelled = Answer::Success(response("Success", 5, false));
        assert!(matches!(
            after_answer(unlabelled, Some(5), Progress::default(), ""),
            Next::Answered { .. }
        ));
    }

    #[test]
    fn a_finished_label_is_our_earlier_attempt_only_if_a_body_may_have_landed() {
        let finished = || Answer::LabelExists {
            existing: ExistingJobStatus::Finished,
            txn_id: Some(9),
        };
        for (was_sent, expected) in [
            (true, LoadStatus::CommittedByEarlierAttempt),
            (false, LoadStatus::AlreadyLoaded),
        ] {
            match after_answer(finished(), None, landed(was_sent), "l") {
                Next::AlreadyHeld { status, txn_id } => {
                    assert_eq!((status, txn_id), (expected, Some(9)));
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_precommitted_label_is_adopted_by_a_two_phase_load_only() {
        let precommitted = || Answer::LabelExists {
            existing: ExistingJobStatus::Precommitted,
            txn_id: Some(4),
        };
        // Our own earlier attempt's body: adopted.
        let ours = Progress {
            body_may_have_landed: true,
            two_phase: true,
            ..Progress::default()
        };
        assert!(matches!(
            after_answer(precommitted(), None, ours, "l"),
            Next::AlreadyHeld {
                status: LoadStatus::Precommitted,
                txn_id: Some(4)
            }
        ));
        // Held before this load sent anything: adopted by default (an earlier run of the
        // job), refused by a writer that does not adopt (a sibling, a dropped attempt).
        let rerun = Progress {
            two_phase: true,
            ..Progress::default()
        };
        assert!(matches!(
            after_answer(precommitted(), None, rerun, "l"),
            Next::AlreadyHeld {
                status: LoadStatus::Precommitted,
                ..
            }
        ));
        let first = Progress {
            two_phase: true,
            adopt_precommitted: false,
            ..Progress::default()
        };
        assert!(matches!(
            after_answer(precommitted(), None, first, "l"),
            Next::Fail(StreamLoadError::LabelExists {
                existing: ExistingJobStatus::Precommitted,
                txn_id: Some(4),
                ..
            })
        ));
        // A load that is not two-phase cannot commit it: someone else's label.
        assert!(matches!(
            after_answer(precommitted(), None, landed(true), "l"),
            Next::Fail(StreamLoadError::LabelExists { .. })
        ));
    }

    #[test]
    fn a_running_label_is_probed_while_time_is_left_and_ambiguous_after() {
        for existing in [ExistingJobStatus::Running, ExistingJobStatus::Unknown] {
            let answer = || Answer::LabelExists {
                existing,
                txn_id: None,
            };
            let time_left = Progress {
                may_probe: true,
                ..Progress::default()
            };
            assert!(matches!(
                after_answer(answer(), None, time_left, "l"),
                Next::Probe
            ));
            // Never "someone else's label" and never a success: it may still commit.
            assert!(matches!(
                after_answer(answer(), None, Progress::default(), "l"),
                Next::Fail(StreamLoadError::Ambiguous { .. })
            ));
        }
    }

    #[test]
    fn failures_are_retried_rejected_or_refused_by_kind() {
        let auth = Answer::Auth("Access denied".into());
        assert!(matches!(
            after_answer(auth, None, Progress::default(), "l"),
            Next::Fail(StreamLoadError::Auth { .. })
        ));
        let rejected = Answer::Fail {
            message: "too many filtered rows".into(),
            error_url: Some("http://be/log".into()),
        };
        assert!(matches!(
            after_answer(rejected, Some(1), Progress::default(), "l"),
            Next::Rejected {
                error_url: Some(_),
                ..
            }
        ));
    }

    #[test]
    fn a_failure_after_body_bytes_marks_the_load_ambiguous_and_group_commit_is_never_retried() {
        let mut progress = Progress::default();
        assert!(matches!(
            after_failure(0, "refused".into(), &mut progress, "l"),
            Next::Retry(_)
        ));
        assert!(!progress.body_may_have_landed);
        assert!(matches!(
            exhausted(progress, "l".into(), 5, "x".into()),
            StreamLoadError::Transport { attempts: 5, .. }
        ));
        assert!(matches!(
            after_failure(10, "reset".into(), &mut progress, "l"),
            Next::Retry(_)
        ));
        assert!(progress.body_may_have_landed);
        assert!(matches!(
            exhausted(progress, "l".into(), 5, "x".into()),
            StreamLoadError::Ambiguous { attempts: 5, .. }
        ));
        let mut group = Progress {
            group_commit: true,
            attempts: 2,
            ..Progress::default()
        };
        assert!(matches!(
            after_failure(0, "refused".into(), &mut group, ""),
            Next::Retry(_)
        ));
        assert!(matches!(
            after_failure(1, "reset".into(), &mut group, ""),
            Next::Fail(StreamLoadError::Ambiguous { attempts: 2, .. })
        ));
    }

    proptest::proptest! {
        /// Any 2PC answer that parses is decided (done, already done, a typed error),
        /// never a panic, and never `Done` unless it is an object that says `Success`
        /// (256 cases; it found that `["Success"]` passed for a commit).
        #[test]
        fn any_two_phase_answer_is_decided(value in crate::response::tests::answer_like()) {
            let body = serde_json::to_vec(&value).unwrap_or_default();
            if let Ok(reply) = TwoPhaseReply::parse(&body) {
                for operation in ["commit", "abort"] {
                    let next = two_phase(TwoPhaseAttempt::Replied(reply.clone()), operation);
                    if matches!(next, TwoPhaseNext::Finished(TwoPhaseOutcome::Done)) {
                        let status = value.get("status").and_then(serde_json::Value::as_str);
                        proptest::prop_assert!(
                            status.is_some_and(|s| s.eq_ignore_ascii_case("success")),
                            "{value}"
                        );
                    }
                }
            }
        }
    }

    fn reply(status: &str, msg: &str) -> TwoPhaseReply {
        serde_json::from_value(serde_json::json!({ "status": status, "msg": msg }))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn two_phase(attempt: TwoPhaseAttempt, operation: &'static str) -> TwoPhaseNext {
        after_two_phase(
            attempt,
            operation,
            "transaction [5]",
            &mut Progress::default(),
        )
    }

    #[test]
    fn a_two_phase_answer_must_be_a_json_object() {
        assert!(TwoPhaseReply::parse(br#"{"status": "Success", "msg": "ok"}"#).is_ok());
        for body in [
            &br#"["Success"]"#[..],
            b"\"Success\"",
            b"<html>",
            br#"{"status": 7}"#,
        ] {
            let e = TwoPhaseReply::parse(body).unwrap_err();
            assert!(matches!(e, StreamLoadError::Malformed(_)), "{e}");
        }
    }

    #[test]
    fn a_repeated_commit_or_abort_is_already_done_not_an_error() {
        let done = |status, msg, operation| match two_phase(
            TwoPhaseAttempt::Replied(reply(status, msg)),
            operation,
        ) {
            TwoPhaseNext::Finished(outcome) => outcome,
            other => panic!("{msg}: {other:?}"),
        };
        assert_eq!(
            done("Success", "transaction commit successfully.", "commit"),
            TwoPhaseOutcome::Done
        );
        for msg in [
            "transaction [5] is already visible, not pre-committed.",
            "transaction [5] is already committed, not pre-committed.",
        ] {
            assert_eq!(done("Fail", msg, "commit"), TwoPhaseOutcome::AlreadyDone);
        }
        assert_eq!(
            done("Fail", "transaction [5] is already aborted", "abort"),
            TwoPhaseOutcome::AlreadyDone
        );
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
            match two_phase(TwoPhaseAttempt::Replied(reply("Fail", msg)), operation) {
                TwoPhaseNext::Fail(StreamLoadError::TwoPhase {
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
        match two_phase(TwoPhaseAttempt::Replied(r), "commit") {
            TwoPhaseNext::Fail(StreamLoadError::Auth { message }) => {
                assert_eq!(message, "Access denied");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_lost_two_phase_request_is_retried_and_ambiguous_only_if_it_may_have_reached_doris() {
        let lost = |reached| TwoPhaseAttempt::Lost {
            detail: "connection closed".into(),
            reached,
        };
        let mut progress = Progress::default();
        assert!(matches!(
            after_two_phase(lost(false), "commit", "transaction [5]", &mut progress),
            TwoPhaseNext::Retry(_)
        ));
        // Never sent: the commit did not happen, so running out of retries says so.
        assert!(matches!(
            exhausted(progress, "transaction [5]".into(), 3, "x".into()),
            StreamLoadError::Transport { attempts: 3, .. }
        ));
        assert!(matches!(
            after_two_phase(lost(true), "commit", "transaction [5]", &mut progress),
            TwoPhaseNext::Retry(_)
        ));
        // Sent once: a later refused connection does not make it "never applied".
        assert!(matches!(
            after_two_phase(lost(false), "commit", "transaction [5]", &mut progress),
            TwoPhaseNext::Retry(_)
        ));
        match exhausted(progress, "transaction [5]".into(), 3, "x".into()) {
            StreamLoadError::Ambiguous {
                label, attempts, ..
            } => {
                assert_eq!((label.as_str(), attempts), ("transaction [5]", 3));
            }
            other => panic!("{other:?}"),
        }
        let refused = TwoPhaseAttempt::Refused(StreamLoadError::Malformed("not JSON".into()));
        assert!(matches!(
            two_phase(refused, "abort"),
            TwoPhaseNext::Fail(StreamLoadError::Malformed(_))
        ));
    }
}
