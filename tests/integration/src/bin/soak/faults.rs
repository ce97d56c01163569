//! The faults: one armed on the emulator every `FAULT_EVERY`, drawn from a seeded
//! generator.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use rand::{Rng as _, SeedableRng as _};

use crate::{Context, FAULT_EVERY};

/// The faults the soak arms (emulator fault JSON). `publish_timeout` is left out: it
/// makes committed rows visible late by design, which a reader cannot tell from a short
/// read (the fault matrix covers it).
pub(crate) const FAULTS: &[&str] = &[
    r#"{"kind": "drop_after_commit"}"#,
    r#"{"kind": "reset_mid_body"}"#,
    r#"{"kind": "malformed_response"}"#,
    r#"{"kind": "truncated_response"}"#,
    r#"{"kind": "cut_result_stream", "rows": 50}"#,
    r#"{"kind": "cut_flight_stream", "rows": 50}"#,
    r#"{"kind": "drop_before_txn_commit"}"#,
    r#"{"kind": "drop_after_txn_commit"}"#,
    r#"{"kind": "hold_txn_commit", "ms": 300}"#,
    r#"{"kind": "delay", "ms": 200}"#,
];

pub(crate) async fn fault_arming(ctx: Arc<Context>, seed: u64) -> u64 {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut armed = 0;
    while !ctx.stop.load(Ordering::SeqCst) {
        tokio::time::sleep(FAULT_EVERY).await;
        let fault = FAULTS[rng.random_range(0..FAULTS.len())];
        ctx.admin(reqwest::Method::POST, "/_emulator/faults", Some(fault))
            .await;
        armed += 1;
    }
    armed
}
