//! The writers: one per mode, each writing numbered units until the run stops.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use doris_streamload::{LabelScheme, LoadOptions, Loader, LoaderConfig, StreamLoadError};

use crate::{Context, DB, TABLE, UNIT_ROWS, WRITE_PAUSE, atomic_example};

/// How a unit's write ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Committed,
    /// The write failed in a way that may have loaded it: whole or absent, never partial
    /// or twice.
    Uncertain,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Mode {
    Default,
    TwoPhase,
    Atomic,
}

impl Mode {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::TwoPhase => "two_phase",
            Self::Atomic => "atomic",
        }
    }
}

pub(crate) async fn write_unit(ctx: &Context, mode: Mode, unit: i64) -> Outcome {
    let batch = || atomic_example::sample(unit * UNIT_ROWS, UNIT_ROWS);
    match mode {
        Mode::Default => {
            // Deterministic labels: a rerun of the unit is refused by Doris, not doubled.
            for _ in 0..3 {
                let loader = Loader::new(
                    ctx.client.clone(),
                    DB,
                    TABLE,
                    LoadOptions::default(),
                    LoaderConfig {
                        labels: LabelScheme::Deterministic {
                            prefix: "soak".into(),
                            key: format!("u{unit}"),
                            partition: 0,
                        },
                        ..LoaderConfig::default()
                    },
                )
                .unwrap();
                match loader.load_all([batch()]).await {
                    Ok(_) => return Outcome::Committed,
                    Err(_) => ctx.error("default"),
                }
            }
            Outcome::Uncertain
        }
        Mode::TwoPhase => {
            let loader = Loader::new(
                ctx.client.clone(),
                DB,
                TABLE,
                LoadOptions {
                    two_phase_commit: true,
                    ..LoadOptions::default()
                },
                LoaderConfig {
                    labels: LabelScheme::Random {
                        prefix: "soak2pc".into(),
                    },
                    ..LoaderConfig::default()
                },
            )
            .unwrap();
            let summary = match loader.load_all([batch()]).await {
                Ok(summary) => summary,
                Err(e) => {
                    ctx.error("two_phase load");
                    ctx.tally
                        .left_precommitted
                        .lock()
                        .unwrap()
                        .extend(e.left_precommitted);
                    return Outcome::Uncertain;
                }
            };
            match ctx.client.commit_all(DB, &summary).await {
                Ok(_) => Outcome::Committed,
                Err(e) => {
                    ctx.error("two_phase commit");
                    if let StreamLoadError::PartialCommit { left, .. } = e {
                        ctx.tally.left_precommitted.lock().unwrap().extend(left);
                    }
                    Outcome::Uncertain
                }
            }
        }
        Mode::Atomic => {
            let fe = ctx.fe_url.clone();
            let target = atomic_example::Target {
                fe_http: &fe,
                mysql: ("127.0.0.1", ctx.settings.mysql_port),
                user: "root",
                database: DB,
                table: TABLE,
            };
            // The same key again after a failure: it commits once, whatever the first
            // attempt did.
            for _ in 0..3 {
                match atomic_example::run(&target, &format!("u{unit}"), vec![batch()]).await {
                    Ok(_) => return Outcome::Committed,
                    Err(_) => ctx.error("atomic"),
                }
            }
            Outcome::Uncertain
        }
    }
}

pub(crate) async fn writer(ctx: Arc<Context>, mode: Mode) {
    while !ctx.stop.load(Ordering::SeqCst) {
        let unit = ctx.next_unit.fetch_add(1, Ordering::SeqCst) as i64;
        let outcome = write_unit(&ctx, mode, unit).await;
        let list = match outcome {
            Outcome::Committed => &ctx.tally.committed,
            Outcome::Uncertain => &ctx.tally.uncertain,
        };
        list.lock().unwrap().push((unit, mode));
        tokio::time::sleep(WRITE_PAUSE).await;
    }
}
