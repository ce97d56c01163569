//! Group commit: no label, and never a second body.

use crate::common::*;

#[tokio::test]
async fn group_commit_loads_without_a_label_and_refuses_one() {
    let env = Env::new(DUP).await;
    let options = LoadOptions {
        group_commit: Some(GroupCommit::Sync),
        ..LoadOptions::default()
    };
    let b = batch(0, 100);
    let r = env
        .client()
        .load("d", "t", &options, None, b.schema(), vec![b.clone()])
        .await
        .unwrap();
    assert!(r.response.as_ref().unwrap().group_commit);
    assert!(
        r.label.as_deref().unwrap().starts_with("group_commit_"),
        "{r:?}"
    );
    assert_eq!(env.row_count("t"), 100);
    let e = env
        .client()
        .load(
            "d",
            "t",
            &options,
            Some(Label::new("x").unwrap()),
            b.schema(),
            vec![b],
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&e, StreamLoadError::Config(m) if m.contains("no dedupe")),
        "{e}"
    );
}

#[tokio::test]
async fn group_commit_is_never_retried_after_its_body_was_sent() {
    // (fault, rows the table holds afterwards): committed then the answer lost, or reset
    // before anything committed. Either way the body went out once and is not sent again
    // (group commit has no label that could make a retry safe).
    for (fault, committed) in [(Fault::DropAfterCommit, 100), (Fault::ResetMidBody, 0)] {
        let env = Env::new(DUP).await;
        env.emulator.faults().arm(fault.clone(), 1);
        let options = LoadOptions {
            group_commit: Some(GroupCommit::Sync),
            ..LoadOptions::default()
        };
        let b = batch(0, 100);
        let e = env
            .client()
            .load("d", "t", &options, None, b.schema(), vec![b])
            .await
            .unwrap_err();
        assert!(e.may_have_loaded(), "{fault:?}: {e}");
        let be_loads = env
            .emulator
            .http_requests()
            .iter()
            .filter(|r| r.face == HttpFace::Be && r.method == "PUT")
            .count();
        assert_eq!(be_loads, 1, "{fault:?}: the body was sent again");
        assert_eq!(env.row_count("t"), committed, "{fault:?}");
    }
}
