//! What a load does after each attempt: the exactly-once rules, as pure functions.
//!
//! - A success is checked against the rows sent (`reconcile`), then reported.
//! - `Label Already Exists` is resolved by the label's state: FINISHED is our own earlier
//!   attempt (if a body may have landed) or an earlier run; PRECOMMITTED after our own body
//!   is our pre-commit; RUNNING/UNKNOWN is probed again while time is left, and ambiguous
//!   after; anything else is another load's label.
//! - A failure after body bytes were sent may have loaded the rows: it is retried under the
//!   same label (Doris dedupes), except for group commit (no label, so never retried), and
//!   reported as ambiguous when the retries run out.

use crate::error::StreamLoadError;
use crate::response::{Answer, ExistingJobStatus, LoadResponse, is_transient_failure, reconcile};

use super::report::LoadStatus;

/// What the load knows between attempts.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Progress {
    /// Body bytes of an earlier attempt may have reached Doris.
    pub(super) body_may_have_landed: bool,
    /// The load is pre-committed on success (two-phase commit).
    pub(super) two_phase: bool,
    /// The load is a group commit (no label, so no dedupe).
    pub(super) group_commit: bool,
    /// There is time left to probe a running label again.
    pub(super) may_probe: bool,
    /// Attempts made so far (reported in errors).
    pub(super) attempts: u32,
}

/// The next step of the load loop.
#[derive(Debug)]
pub(super) enum Next {
    /// Doris answered with a load result: report it.
    Answered {
        status: LoadStatus,
        response: LoadResponse,
    },
    /// Doris already holds this label's rows: report without sending anything more.
    AlreadyHeld {
        status: LoadStatus,
        txn_id: Option<i64>,
    },
    /// The label is still running: wait and ask again (not counted as an attempt).
    Probe,
    /// Try again under the same label, if the schedule allows; the detail says why.
    Retry(String),
    /// Doris refused the rows; the error log may say why.
    Rejected {
        message: String,
        error_url: Option<String>,
    },
    /// Stop with this error.
    Fail(StreamLoadError),
}

/// The step after Doris answered an attempt that carried `rows_sent` rows (`None`: the
/// answer came before any body, e.g. from the FE).
pub(super) fn after_answer(
    answer: Answer,
    rows_sent: Option<u64>,
    progress: Progress,
    label: &str,
) -> Next {
    match answer {
        Answer::Success(response) | Answer::PublishTimeout(response) => {
            if let Err(detail) = reconcile(&response, rows_sent) {
                return Next::Fail(StreamLoadError::CounterMismatch {
                    label: label.to_owned(),
                    detail,
                });
            }
            let status = if !response.status.eq_ignore_ascii_case("success") {
                LoadStatus::PublishTimeout
            } else if response.two_phase_commit {
                LoadStatus::Precommitted
            } else {
                LoadStatus::Success
            };
            Next::Answered { status, response }
        }
        Answer::LabelExists { existing, txn_id } => {
            after_label_exists(existing, txn_id, progress, label)
        }
        Answer::Auth(message) => Next::Fail(StreamLoadError::Auth { message }),
        Answer::Fail { message, .. } if is_transient_failure(&message) => Next::Retry(message),
        Answer::Fail { message, error_url } => Next::Rejected { message, error_url },
    }
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
        ExistingJobStatus::Precommitted if progress.body_may_have_landed && progress.two_phase => {
            Next::AlreadyHeld {
                status: LoadStatus::Precommitted,
                txn_id,
            }
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
pub(super) fn after_failure(
    sent: u64,
    detail: String,
    progress: &mut Progress,
    label: &str,
) -> Next {
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
pub(super) fn exhausted(
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
        let cases = [
            ("Success", false, LoadStatus::Success),
            ("Success", true, LoadStatus::Precommitted),
            ("Publish Timeout", false, LoadStatus::PublishTimeout),
        ];
        for (text, two_phase, expected) in cases {
            let answer = Answer::Success(response(text, 5, two_phase));
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
    fn a_precommitted_label_is_ours_only_after_our_own_two_phase_body() {
        let precommitted = || Answer::LabelExists {
            existing: ExistingJobStatus::Precommitted,
            txn_id: None,
        };
        let ours = Progress {
            body_may_have_landed: true,
            two_phase: true,
            ..Progress::default()
        };
        assert!(matches!(
            after_answer(precommitted(), None, ours, "l"),
            Next::AlreadyHeld {
                status: LoadStatus::Precommitted,
                ..
            }
        ));
        // Not our body, or not a two-phase load: someone else's label.
        for progress in [
            Progress {
                two_phase: true,
                ..Progress::default()
            },
            landed(true),
        ] {
            assert!(matches!(
                after_answer(precommitted(), None, progress, "l"),
                Next::Fail(StreamLoadError::LabelExists { .. })
            ));
        }
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
}
