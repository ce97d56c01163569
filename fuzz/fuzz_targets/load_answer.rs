//! Any Stream Load answer (a server's bytes, hostile or not) is classified or refused as
//! malformed, and the step the exactly-once rules take after it follows from it: rows are
//! reported loaded only after `Success`/`Publish Timeout` whose counters add up to the rows
//! sent, held only for a label Doris says is finished (or pre-committed, for a 2PC load),
//! probed only while time is left; a failure or refused credentials never count as loaded.
//!
//! The first byte chooses the load's state (a body may have landed, 2PC, time to probe, a
//! known row count); the rest is the answer.
#![no_main]

use doris_streamload::decide::{Answer, Next, Progress, after_answer, classify};
use doris_streamload::{ExistingJobStatus, LoadStatus, StreamLoadError};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((flags, body)) = data.split_first() else {
        return;
    };
    let answer = match classify(body) {
        Ok(answer) => answer,
        Err(StreamLoadError::Malformed(_)) => return,
        Err(other) => panic!("an answer is classified or malformed, not {other:?}"),
    };
    let mut progress = Progress::default();
    progress.body_may_have_landed = flags & 1 != 0;
    progress.two_phase = flags & 2 != 0;
    progress.may_probe = flags & 4 != 0;
    progress.attempts = 1;
    // The rows sent: unknown (an FE answer before the body) or a count near the answer's.
    let rows_sent = match answer {
        Answer::Success(ref r) | Answer::PublishTimeout(ref r) if flags & 8 != 0 => {
            Some(r.number_total_rows.wrapping_add(u64::from(flags >> 6)))
        }
        _ => None,
    };
    match after_answer(answer.clone(), rows_sent, progress, "fuzz_label") {
        Next::Answered { status, response } => {
            let (Answer::Success(ref r) | Answer::PublishTimeout(ref r)) = answer else {
                panic!("{answer:?} reported as answered {status:?}");
            };
            assert_eq!(r, &response);
            let accounted = u128::from(response.number_loaded_rows)
                + u128::from(response.number_filtered_rows)
                + u128::from(response.number_unselected_rows);
            assert_eq!(accounted, u128::from(response.number_total_rows));
            if let Some(sent) = rows_sent {
                assert_eq!(sent, response.number_total_rows);
            }
            // A pre-commit is never taken for a commit: the status follows the class.
            let success = matches!(answer, Answer::Success(_));
            assert_eq!(
                status == LoadStatus::Precommitted,
                success && response.two_phase_commit,
                "{status:?} for {response:?}"
            );
            assert_eq!(status == LoadStatus::PublishTimeout, !success);
        }
        Next::AlreadyHeld { status, .. } => {
            let Answer::LabelExists { existing, .. } = answer else {
                panic!("{answer:?} held as {status:?}");
            };
            match status {
                LoadStatus::Precommitted => {
                    assert!(progress.two_phase);
                    assert_eq!(existing, ExistingJobStatus::Precommitted);
                }
                LoadStatus::CommittedByEarlierAttempt | LoadStatus::AlreadyLoaded => {
                    assert_eq!(existing, ExistingJobStatus::Finished);
                    assert_eq!(
                        status == LoadStatus::CommittedByEarlierAttempt,
                        progress.body_may_have_landed
                    );
                }
                other => panic!("a held label is never {other:?}"),
            }
        }
        Next::Probe => {
            assert!(progress.may_probe);
            assert!(matches!(
                answer,
                Answer::LabelExists {
                    existing: ExistingJobStatus::Running | ExistingJobStatus::Unknown,
                    ..
                }
            ));
        }
        Next::Retry(_) | Next::Rejected { .. } => {
            assert!(matches!(answer, Answer::Fail { .. }), "{answer:?}");
        }
        Next::Fail(error) => {
            // A label that may still commit is ambiguous (the rows may be there); a refused
            // one names its state; counters that do not add up are reported as such.
            if let Answer::LabelExists { existing, .. } = answer {
                let running = matches!(
                    existing,
                    ExistingJobStatus::Running | ExistingJobStatus::Unknown
                );
                assert_eq!(running, matches!(error, StreamLoadError::Ambiguous { .. }));
            }
            assert!(
                error.may_have_loaded()
                    || matches!(
                        error,
                        StreamLoadError::Auth { .. } | StreamLoadError::LabelExists { .. }
                    ),
                "{error:?}"
            );
        }
        other => panic!("unexpected step {other:?}"),
    }
});
