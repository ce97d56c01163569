//! The verdict after the run: every session closed, every committed unit whole and once,
//! every uncertain unit whole or absent, no read short, every mode and reader at work,
//! faults fired, resources flat; and the report that says so.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use doris_read::{MySqlEndpoint, Transport};

use crate::reads::{per_unit, read_ids};
use crate::resources::{FLAT, Sample, peak, sample};
use crate::writes::Mode;
use crate::{Args, Context, DB, UNIT_ROWS};

/// Reruns every committed atomic unit's key (at most 100, spread over the run): each must
/// be already committed. Returns (keys rerun, of them recognised by the ledger because
/// Doris forgot the label); a key written again or failing is a failure.
async fn rerun_atomic_keys(ctx: &Context, failures: &mut Vec<String>) -> (usize, usize) {
    let units: Vec<i64> = ctx
        .tally
        .committed
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, mode)| *mode == Mode::Atomic)
        .map(|(unit, _)| *unit)
        .collect();
    let step = units.len().div_ceil(100).max(1);
    let target = crate::atomic_example::Target {
        fe_http: &ctx.fe_url,
        mysql: ("127.0.0.1", ctx.settings.mysql_port),
        user: "root",
        database: crate::DB,
        table: crate::TABLE,
    };
    let (mut rerun, mut forgotten) = (0, 0);
    for unit in units.iter().step_by(step) {
        let batch = crate::atomic_example::sample(unit * UNIT_ROWS, UNIT_ROWS);
        match crate::atomic_example::run(&target, &format!("u{unit}"), vec![batch]).await {
            Ok(crate::atomic_example::Outcome::AlreadyCommitted { by }) => {
                rerun += 1;
                if matches!(by, doris_write::atomic::CommittedBy::Ledger { .. }) {
                    forgotten += 1;
                }
            }
            Ok(crate::atomic_example::Outcome::Committed) => {
                failures.push(format!("atomic unit {unit}: its rerun wrote it again"));
            }
            Err(e) => failures.push(format!("atomic unit {unit}: its rerun failed: {e}")),
        }
    }
    if rerun > 0 && forgotten == 0 {
        failures.push("no atomic rerun crossed a label Doris had forgotten".into());
    }
    (rerun, forgotten)
}

/// The run's report (JSON); its `failures` list is empty when every check held.
/// `faults` is (armed, fired).
pub(crate) async fn report(
    ctx: &Context,
    args: &Args,
    emulator_pid: u32,
    started: Instant,
    samples: &[Sample],
    (armed, fired): (u64, usize),
) -> serde_json::Value {
    // Quiet: every session the workers opened must close.
    let mut last = sample(ctx, emulator_pid, started).await;
    for _ in 0..40 {
        let open = |k: &str| {
            last.values
                .iter()
                .find(|(n, _)| *n == k)
                .map_or(0.0, |(_, v)| *v)
        };
        if open("mysql_sessions") == 0.0 && open("flight_streams") == 0.0 && open("be_loads") == 0.0
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
        last = sample(ctx, emulator_pid, started).await;
    }
    let mut failures: Vec<String> = Vec::new();
    for name in ["mysql_sessions", "flight_streams", "be_loads"] {
        let open = last
            .values
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0.0, |(_, v)| *v);
        if open > 0.0 {
            failures.push(format!("{name}: {open} still open after the run"));
        }
    }

    // No transaction left pre-committed, except those a failed write reported it could
    // not abort (Doris would abort them at its pre-commit timeout).
    let left = ctx.tally.left_precommitted.lock().unwrap().clone();
    let txns = ctx
        .admin(reqwest::Method::GET, &format!("/_emulator/txns/{DB}"), None)
        .await;
    let precommitted: Vec<(String, i64)> = txns["txns"]
        .as_array()
        .map(|all| {
            all.iter()
                .filter(|t| t["state"] == "PRECOMMITTED")
                .map(|t| {
                    (
                        t["label"].as_str().unwrap_or_default().to_owned(),
                        t["txn_id"].as_i64().unwrap_or(-1),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let unreported = precommitted
        .iter()
        .filter(|(label, id)| {
            !left
                .iter()
                .any(|l| l.contains(&format!("[{label}]")) || l.contains(&format!("[{id}]")))
        })
        .count();
    if unreported > 0 {
        failures.push(format!(
            "{unreported} transactions left PRECOMMITTED that no failed write reported"
        ));
    }

    // Every committed atomic key rerun once, faults off: each must be recognised and
    // write nothing, also after Doris forgot its label (the emulator keeps 20).
    let reruns = rerun_atomic_keys(ctx, &mut failures).await;

    // The table, whole, without faults.
    let mysql = Transport::MySql(MySqlEndpoint::from_settings(&ctx.settings));
    let mut table = Err(String::new());
    for _ in 0..5 {
        table = read_ids(ctx, &mysql, false, 0).await;
        if table.is_ok() {
            break;
        }
    }
    let ids = table.unwrap_or_else(|e| panic!("the final read failed: {e}"));
    let (units, doubled_rows) = per_unit(&ids);
    let committed = ctx.tally.committed.lock().unwrap().clone();
    let uncertain = ctx.tally.uncertain.lock().unwrap().clone();
    let mut lost_rows = 0;
    for (unit, mode) in &committed {
        let held = units.get(unit).copied().unwrap_or(0);
        if held != UNIT_ROWS {
            lost_rows += UNIT_ROWS - held;
            failures.push(format!(
                "{} unit {unit}: {held} of {UNIT_ROWS} rows",
                mode.name()
            ));
        }
    }
    for (unit, mode) in &uncertain {
        let held = units.get(unit).copied().unwrap_or(0);
        if held != 0 && held != UNIT_ROWS {
            failures.push(format!(
                "{} unit {unit} (uncertain): {held} of {UNIT_ROWS} rows, neither whole nor absent",
                mode.name()
            ));
        }
    }
    let attempted = ctx.next_unit.load(Ordering::SeqCst) as i64;
    let stray = units.keys().filter(|u| **u >= attempted).count();
    if stray > 0 {
        failures.push(format!("{stray} units present that no writer wrote"));
    }
    if doubled_rows > 0 {
        failures.push(format!("{doubled_rows} ids held twice"));
    }
    let short = ctx.tally.short_reads.lock().unwrap().clone();
    failures.extend(short.iter().take(5).cloned());
    let doubled_reads = ctx.tally.doubled_reads.load(Ordering::SeqCst);
    if doubled_reads > 0 {
        failures.push(format!("{doubled_reads} reads saw an id twice"));
    }
    let by_mode = |m: Mode| committed.iter().filter(|(_, mode)| *mode == m).count();
    for mode in [Mode::Default, Mode::TwoPhase, Mode::Atomic] {
        if by_mode(mode) == 0 {
            failures.push(format!("no {} write committed", mode.name()));
        }
    }
    let reads_ok = ctx.tally.reads_ok.load(Ordering::SeqCst);
    if reads_ok == 0 {
        failures.push("no read succeeded".into());
    }
    if fired == 0 {
        failures.push("no fault fired".into());
    }
    let mut resources = serde_json::Map::new();
    for (metric, slack, factor) in FLAT {
        let early = peak(samples, metric, 0.25, 0.5);
        let late = peak(samples, metric, 0.75, 1.01);
        if late > early * factor + slack {
            failures.push(format!(
                "{metric} grew: peak {early} in the second quarter, {late} in the last"
            ));
        }
        resources.insert(
            (*metric).into(),
            serde_json::json!({"second_quarter_peak": early, "last_quarter_peak": late}),
        );
    }
    resources.insert(
        "emulator_rss_mib".into(),
        serde_json::json!({
            "second_quarter_peak": peak(samples, "emulator_rss_mib", 0.25, 0.5),
            "last_quarter_peak": peak(samples, "emulator_rss_mib", 0.75, 1.01),
            "note": "holds the table, which grows with every unit written"
        }),
    );
    serde_json::json!({
        "minutes": args.minutes,
        "seed": args.seed,
        "units": {
            "attempted": attempted,
            "committed": {
                "default": by_mode(Mode::Default),
                "two_phase": by_mode(Mode::TwoPhase),
                "atomic": by_mode(Mode::Atomic),
            },
            "uncertain": uncertain.len(),
            "rows_in_table": ids.len(),
        },
        "write_errors_retried_or_uncertain": *ctx.tally.write_errors.lock().unwrap(),
        "reads": {
            "ok": reads_ok,
            "failed_loudly": ctx.tally.reads_failed.load(Ordering::SeqCst),
            "short": short.len(),
            "with_an_id_twice": doubled_reads,
        },
        "faults": {"armed": armed, "fired": fired},
        "precommitted": {"left": precommitted.len(), "reported_left": left.len()},
        "atomic_reruns": {"keys": reruns.0, "after_doris_forgot_the_label": reruns.1},
        "rows": {"lost": lost_rows, "duplicated": doubled_rows},
        "resources": resources,
        "failures": failures,
    })
}
