//! Any answer to a two-phase commit or abort (a server's bytes, hostile or not) is refused
//! as malformed or decided: done only on `Success`, already done only when Doris's message
//! says so for that operation, credentials refused on a 401 envelope, a typed failure
//! otherwise; an answer is final (never retried) and leaves the load's state as it was.
//!
//! The first byte chooses the operation (commit or abort); the rest is the answer.
#![no_main]

use doris_streamload::decide::{
    Progress, TwoPhaseAttempt, TwoPhaseNext, TwoPhaseReply, after_two_phase,
};
use doris_streamload::{StreamLoadError, TwoPhaseOutcome};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((flags, body)) = data.split_first() else {
        return;
    };
    let operation = if flags & 1 == 0 { "commit" } else { "abort" };
    let reply = match TwoPhaseReply::parse(body) {
        Ok(reply) => reply,
        Err(StreamLoadError::Malformed(_)) => return,
        Err(other) => panic!("a 2PC answer is parsed or malformed, not {other:?}"),
    };
    let mut progress = Progress::default();
    progress.two_phase = true;
    progress.attempts = 1;
    let next = after_two_phase(
        TwoPhaseAttempt::Replied(reply.clone()),
        operation,
        "transaction [7]",
        &mut progress,
    );
    assert!(
        !progress.body_may_have_landed,
        "an answer changed the state"
    );
    let already = {
        let msg = reply.msg.to_ascii_lowercase();
        if operation == "commit" {
            msg.contains("is already visible") || msg.contains("is already committed")
        } else {
            msg.contains("is already aborted")
        }
    };
    match next {
        TwoPhaseNext::Finished(TwoPhaseOutcome::Done) => {
            assert_ne!(reply.code, Some(401));
            assert!(reply.status.eq_ignore_ascii_case("success"), "{reply:?}");
        }
        TwoPhaseNext::Finished(TwoPhaseOutcome::AlreadyDone) => {
            assert_ne!(reply.code, Some(401));
            assert!(already, "{reply:?}");
        }
        TwoPhaseNext::Fail(StreamLoadError::Auth { .. }) => assert_eq!(reply.code, Some(401)),
        TwoPhaseNext::Fail(StreamLoadError::TwoPhase {
            operation: named,
            status,
            ..
        }) => {
            assert_eq!(named, operation);
            assert_eq!(status, reply.status);
            assert!(!reply.status.eq_ignore_ascii_case("success") && !already);
        }
        other => panic!("an answer is final: {other:?} for {reply:?}"),
    }
});
