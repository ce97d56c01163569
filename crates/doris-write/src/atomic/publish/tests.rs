//! The publish's decisions against a small model of Doris's transactions: every step of the
//! publishing transaction refused, answered-but-lost, or lost before it ran, and the rows
//! must land at most once, exactly once whenever the publish says it succeeded, with a
//! refusal inside the transaction followed by `ROLLBACK`, never `COMMIT`.
//!
//! The model keeps what the atomic write can observe: the key's label state (what `SHOW
//! TRANSACTION` answers, including Doris's error for a label it does not know), the
//! ledger's records, one open transaction per connection, and how many times the rows
//! committed. Faults are armed by a statement's first words, each firing once.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use doris_sql::session::{SqlFailure, SqlRows, SqlSession};
use doris_streamload::{Label, StreamLoadError};

use super::{Publish, Statements};
use crate::atomic::{AtomicPolicy, CommitRecord};

const LABEL: &str = "dd_key";
const LEDGER: &str = "daft_doris_commits";
const STAGED: u64 = 5;
const BEGIN: &str = "BEGIN WITH LABEL dd_key";
const ROWS: &str = "INSERT INTO `db`.`t` (`id`) SELECT `id` FROM `db`.`stage` WHERE `tag` IN (1)";
const RECORD: &str = "INSERT INTO `db`.`daft_doris_commits` SELECT 'dd_key', COUNT(*) FROM `db`.`stage` WHERE `tag` IN (1)";
const SINGLE: &str = "INSERT INTO `db`.`t` WITH LABEL dd_key (`id`) SELECT `id` FROM `db`.`stage` WHERE `tag` IN (1)";

/// What an armed fault does to the statement it hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// Doris answers with an error; nothing happens.
    Refuse,
    /// The connection breaks before the statement runs.
    LoseBefore,
    /// The statement runs, then the connection breaks before its answer.
    LoseAfter,
    /// `COMMIT` is answered OK but nothing commits (Doris's answer to a COMMIT no INSERT
    /// began; the transaction is gone).
    HollowCommit,
}

#[derive(Default)]
struct Transaction {
    rows: bool,
    record: bool,
}

/// A model of the FE as the publish sees it.
#[derive(Default)]
struct Model {
    /// The key's label as `SHOW TRANSACTION` shows it; `None`: unknown to Doris.
    label: Option<&'static str>,
    /// The ledger's records of the key.
    ledger: u32,
    /// How many times the rows committed.
    rows_committed: u32,
    /// The connection's open transaction.
    open: Option<Transaction>,
    /// The connection is broken until `reconnect`.
    broken: bool,
    /// Armed faults by statement prefix, each firing once, in order.
    faults: Vec<(&'static str, Fault)>,
    /// Every statement received, in order (the ones that broke the connection included).
    log: Vec<String>,
    /// Doris forgets the label as soon as it is final (only the ledger remembers).
    forgets: bool,
    /// How many label lookups still see the key's transaction running (`PREPARE`).
    running_polls: u32,
    /// A refusal every label lookup gets (a missing privilege, say).
    lookup_refused: Option<&'static str>,
    /// What an overwrite's check counts: (rows in the table, published rows missing).
    overwrite_counts: (u64, u64),
    /// How many reconnects fail before one succeeds.
    reconnect_failures: u32,
}

impl Model {
    fn arm(mut self, prefix: &'static str, fault: Fault) -> Self {
        self.faults.push((prefix, fault));
        self
    }

    fn take_fault(&mut self, sql: &str) -> Option<Fault> {
        let at = self.faults.iter().position(|(p, _)| sql.starts_with(p))?;
        Some(self.faults.remove(at).1)
    }

    fn commit_label(&mut self) {
        self.label = (!self.forgets).then_some("VISIBLE");
    }

    /// Runs `sql`'s effect; the answer when it had one of its own.
    fn run(&mut self, sql: &str) -> Result<u64, SqlFailure> {
        if sql.starts_with("SET ") {
            return Ok(0);
        }
        if sql.starts_with("BEGIN WITH LABEL") {
            if self.label == Some("VISIBLE") {
                return Err(SqlFailure::Refused(format!(
                    "errCode = 2, detailMessage = Label [{LABEL}] has already been used"
                )));
            }
            self.open = Some(Transaction::default());
            return Ok(0);
        }
        if sql.starts_with("INSERT INTO `db`.`daft_doris_commits`") {
            match &mut self.open {
                Some(t) => t.record = true,
                None => self.ledger += 1,
            }
            return Ok(1);
        }
        if sql.starts_with("INSERT INTO `db`.`t` WITH LABEL") {
            if self.label == Some("VISIBLE") {
                return Err(SqlFailure::Refused(format!(
                    "errCode = 2, detailMessage = Label [{LABEL}] has already been used"
                )));
            }
            self.rows_committed += 1;
            self.commit_label();
            return Ok(STAGED);
        }
        if sql.starts_with("INSERT INTO `db`.`t`") {
            let Some(t) = &mut self.open else {
                return Err(SqlFailure::Refused("no transaction".into()));
            };
            t.rows = true;
            return Ok(STAGED);
        }
        if sql == "COMMIT" {
            if let Some(t) = self.open.take() {
                self.rows_committed += u32::from(t.rows);
                self.ledger += u32::from(t.record);
                self.commit_label();
            }
            return Ok(0);
        }
        if sql == "ROLLBACK" {
            self.open = None;
            return Ok(0);
        }
        panic!("the model does not know {sql}");
    }

    /// The rows of a query.
    fn rows(&mut self, sql: &str) -> Result<SqlRows, SqlFailure> {
        if sql.starts_with("SHOW TRANSACTION") {
            if let Some(message) = self.lookup_refused {
                return Err(SqlFailure::Refused(message.into()));
            }
            if self.running_polls > 0 {
                self.running_polls -= 1;
                return Ok(SqlRows {
                    columns: vec!["Label".into(), "TransactionStatus".into()],
                    rows: vec![vec![Some(LABEL.into()), Some("PREPARE".into())]],
                });
            }
            return match self.label {
                None => Err(SqlFailure::Refused(format!(
                    "errCode = 2, detailMessage = transaction with label {LABEL} does not exist"
                ))),
                Some(state) => Ok(SqlRows {
                    columns: vec!["Label".into(), "TransactionStatus".into()],
                    rows: vec![vec![Some(LABEL.into()), Some(state.into())]],
                }),
            };
        }
        if sql.starts_with("SHOW CREATE TABLE") {
            return Ok(SqlRows {
                columns: vec!["Table".into(), "Create Table".into()],
                rows: vec![vec![
                    Some("t".into()),
                    Some(
                        "CREATE TABLE `t` (`id` INT NULL, `m` MAP<INT,INT> NULL) DUPLICATE \
                         KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1"
                            .into(),
                    ),
                ]],
            });
        }
        if sql.starts_with("SELECT (SELECT COUNT(*)") {
            let (held, missing) = self.overwrite_counts;
            return Ok(SqlRows {
                columns: vec!["target_rows".into(), "missing_rows".into()],
                rows: vec![vec![Some(held.to_string()), Some(missing.to_string())]],
            });
        }
        if sql.starts_with("SELECT `row_count`") {
            return Ok(SqlRows {
                columns: vec!["row_count".into(), "committed_at".into()],
                rows: (0..self.ledger)
                    .map(|_| vec![Some(STAGED.to_string()), Some("2026-12-06 00:00:00".into())])
                    .collect(),
            });
        }
        panic!("the model does not know {sql}");
    }

    fn answer<T>(
        &mut self,
        sql: &str,
        run: impl FnOnce(&mut Self) -> Result<T, SqlFailure>,
        ok: T,
    ) -> Result<T, SqlFailure> {
        self.log.push(sql.to_owned());
        if self.broken {
            return Err(SqlFailure::Unanswered("the connection is closed".into()));
        }
        let lost = || SqlFailure::Unanswered("connection reset".into());
        match self.take_fault(sql) {
            None => run(self),
            Some(Fault::Refuse) => Err(SqlFailure::Refused("refused by the model".into())),
            Some(Fault::LoseBefore) => {
                self.broken = true;
                Err(lost())
            }
            Some(Fault::LoseAfter) => {
                let _ = run(self);
                self.broken = true;
                Err(lost())
            }
            Some(Fault::HollowCommit) => {
                self.open = None;
                Ok(ok)
            }
        }
    }
}

impl SqlSession for Model {
    async fn execute(&mut self, sql: &str) -> Result<u64, SqlFailure> {
        self.answer(sql, |m| m.run(sql), 0)
    }

    async fn query(&mut self, sql: &str) -> Result<SqlRows, SqlFailure> {
        self.answer(sql, |m| m.rows(sql), SqlRows::default())
    }

    async fn reconnect(&mut self) -> Result<(), SqlFailure> {
        self.log.push("(reconnect)".into());
        if self.reconnect_failures > 0 {
            self.reconnect_failures -= 1;
            return Err(SqlFailure::Unanswered("connection refused".into()));
        }
        // A new connection: the old one's transaction ends with its session.
        self.broken = false;
        self.open = None;
        Ok(())
    }

    fn set_timeout(&mut self, timeout: Duration) -> Duration {
        timeout
    }
}

fn policy() -> AtomicPolicy {
    AtomicPolicy {
        settle_timeout: Duration::from_millis(50),
        poll_interval: Duration::from_millis(1),
        publish_attempts: 3,
        publish_timeout: Duration::from_millis(300),
    }
}

/// Runs a publish of the rows (in a transaction with the ledger record, or as one labelled
/// statement) on `session`.
fn publish<S: SqlSession>(
    session: &mut S,
    transaction: bool,
    partial_update: bool,
) -> Result<(Option<u64>, bool), StreamLoadError> {
    let label = Label::new(LABEL).unwrap();
    let record = CommitRecord::Ledger(LEDGER.into());
    let policy = policy();
    let statements = if transaction {
        Statements::Transaction {
            begin: BEGIN.into(),
            rows: ROWS.into(),
            record: RECORD.into(),
        }
    } else {
        Statements::Single(SINGLE.into())
    };
    let run = Publish {
        database: "db",
        table: "t",
        label: &label,
        record: &record,
        policy: &policy,
        partial_update,
        statements,
        staged_rows: STAGED,
        committed_at: "2026-12-06 00:00:00".into(),
        overwrite_check: None,
    };
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(run.run(session))
}

/// The statements of the publishing transaction, by their first words, and the label
/// lookup that confirms its COMMIT.
const STEPS: [&str; 6] = [
    "SET insert_timeout",
    "BEGIN WITH LABEL",
    "INSERT INTO `db`.`t`",
    "INSERT INTO `db`.`daft_doris_commits`",
    "COMMIT",
    "SHOW TRANSACTION",
];

#[test]
fn a_lost_answer_at_any_step_commits_the_rows_exactly_once() {
    for forgets in [false, true] {
        for step in STEPS {
            for fault in [Fault::LoseBefore, Fault::LoseAfter] {
                let case = format!("{fault:?} at {step}, label forgotten: {forgets}");
                let mut model = Model {
                    forgets,
                    ..Model::default()
                }
                .arm(step, fault);
                let (rows, by_this_run) = publish(&mut model, true, false).expect(&case);
                assert!(by_this_run, "{case}");
                assert_eq!(model.rows_committed, 1, "{case}: the rows, once");
                assert_eq!(model.ledger, 1, "{case}: one ledger record");
                // The INSERT's own count when the commit was seen, none when it was told.
                let told =
                    (fault == Fault::LoseAfter && step == "COMMIT") || step == "SHOW TRANSACTION";
                assert_eq!(rows, (!told).then_some(STAGED), "{case}");
                assert_eq!(model.faults.len(), 0, "{case}: the fault fired");
            }
        }
    }
}

#[test]
fn a_refusal_inside_the_transaction_is_rolled_back_and_never_committed() {
    for step in [
        "INSERT INTO `db`.`t`",
        "INSERT INTO `db`.`daft_doris_commits`",
    ] {
        let mut model = Model::default().arm(step, Fault::Refuse);
        let error = publish(&mut model, true, false).unwrap_err();
        assert!(
            matches!(&error, StreamLoadError::Rejected { label, message, .. }
                if label == LABEL && message.contains("refused by the model")),
            "{step}: {error:?}"
        );
        let refused = model.log.iter().position(|s| s.starts_with(step)).unwrap();
        assert_eq!(
            model.log[refused + 1],
            "ROLLBACK",
            "{step}: {:?}",
            model.log
        );
        assert!(
            !model.log.iter().any(|s| s == "COMMIT"),
            "{step}: {:?}",
            model.log
        );
        assert_eq!((model.rows_committed, model.ledger), (0, 0), "{step}");
        assert!(model.open.is_none(), "{step}: the transaction ended");
    }
}

#[test]
fn a_refusal_outside_the_inserts_fails_typed_and_commits_nothing() {
    for step in ["SET insert_timeout", "BEGIN WITH LABEL", "COMMIT"] {
        let mut model = Model::default().arm(step, Fault::Refuse);
        let error = publish(&mut model, true, false).unwrap_err();
        assert!(
            matches!(error, StreamLoadError::Rejected { .. }),
            "{step}: {error:?}"
        );
        assert_eq!(model.rows_committed, 0, "{step}");
    }
}

#[test]
fn a_commit_answered_ok_that_committed_nothing_is_a_failure() {
    let mut model = Model::default().arm("COMMIT", Fault::HollowCommit);
    let error = publish(&mut model, true, false).unwrap_err();
    assert!(
        matches!(&error, StreamLoadError::Rejected { message, .. }
            if message.contains("did not commit")),
        "{error:?}"
    );
    assert_eq!((model.rows_committed, model.ledger), (0, 0));
}

#[test]
fn a_key_committed_before_is_not_published_again() {
    for transaction in [true, false] {
        let mut model = Model {
            label: Some("VISIBLE"),
            ledger: 1,
            ..Model::default()
        };
        let (rows, by_this_run) = publish(&mut model, transaction, false).unwrap();
        assert!(!by_this_run, "transaction: {transaction}");
        assert_eq!(rows, None);
        assert_eq!((model.rows_committed, model.ledger), (0, 1));
    }
}

#[test]
fn answers_lost_on_every_attempt_end_ambiguous_after_the_policys_attempts() {
    let mut model = Model::default();
    for _ in 0..3 {
        model = model.arm("BEGIN WITH LABEL", Fault::LoseBefore);
    }
    let error = publish(&mut model, true, false).unwrap_err();
    assert!(
        matches!(&error, StreamLoadError::Ambiguous { label, attempts: 3, .. } if label == LABEL),
        "{error:?}"
    );
    let begins = model.log.iter().filter(|s| s.starts_with("BEGIN")).count();
    assert_eq!(begins, 3, "{:?}", model.log);
    assert_eq!(model.rows_committed, 0);
}

#[test]
fn a_label_held_by_an_uncommitted_run_is_tried_again() {
    // "already used" while the key is not committed: another run held the label and let go.
    let mut used = UsedOnce(Model::default(), true);
    let (rows, by_this_run) = publish(&mut used, true, false).unwrap();
    assert!(by_this_run);
    assert_eq!(rows, Some(STAGED));
    assert_eq!((used.0.rows_committed, used.0.ledger), (1, 1));
    let begins = used.0.log.iter().filter(|s| s.starts_with("BEGIN")).count();
    assert_eq!(begins, 2, "{:?}", used.0.log);
}

/// A model whose first `BEGIN` is refused as "already used" (a run that held the label
/// and did not commit).
struct UsedOnce(Model, bool);

impl SqlSession for UsedOnce {
    async fn execute(&mut self, sql: &str) -> Result<u64, SqlFailure> {
        if self.1 && sql.starts_with("BEGIN") {
            self.1 = false;
            self.0.log.push(sql.to_owned());
            return Err(SqlFailure::Refused(format!(
                "Label [{LABEL}] has already been used"
            )));
        }
        self.0.execute(sql).await
    }

    async fn query(&mut self, sql: &str) -> Result<SqlRows, SqlFailure> {
        self.0.query(sql).await
    }

    async fn reconnect(&mut self) -> Result<(), SqlFailure> {
        self.0.reconnect().await
    }

    fn set_timeout(&mut self, timeout: Duration) -> Duration {
        self.0.set_timeout(timeout)
    }
}

#[test]
fn a_single_statement_whose_answer_was_lost_is_recorded_once() {
    for fault in [Fault::LoseBefore, Fault::LoseAfter] {
        let mut model = Model::default().arm("INSERT INTO `db`.`t` WITH LABEL", fault);
        let (_, by_this_run) = publish(&mut model, false, false).unwrap();
        assert!(by_this_run, "{fault:?}");
        assert_eq!((model.rows_committed, model.ledger), (1, 1), "{fault:?}");
    }
    // The ledger record written alone loses its answer too: written again, harmlessly.
    let mut model = Model::default().arm("INSERT INTO `db`.`daft_doris_commits`", Fault::LoseAfter);
    publish(&mut model, false, false).unwrap();
    assert_eq!(model.rows_committed, 1);
    assert!(model.ledger >= 1);
}

#[test]
fn the_timeout_is_set_in_whole_seconds_and_partial_update_is_cleared_on_every_path() {
    let mut model = Model::default();
    publish(&mut model, true, true).unwrap();
    assert_eq!(model.log[0], "SET insert_timeout = 1", "{:?}", model.log);
    assert_eq!(model.log[1], super::PARTIAL_UPDATE_ON);
    assert_eq!(
        model.log.last().map(String::as_str),
        Some(super::PARTIAL_UPDATE_OFF)
    );
    // Refused: cleared on the same connection; lost: the new connection starts cleared.
    let mut model = Model::default().arm("INSERT INTO `db`.`t`", Fault::Refuse);
    publish(&mut model, true, true).unwrap_err();
    let rolled_back = model.log.iter().position(|s| s == "ROLLBACK").unwrap();
    assert_eq!(
        model.log[rolled_back + 1],
        super::PARTIAL_UPDATE_OFF,
        "{:?}",
        model.log
    );
    let mut model = Model::default().arm("INSERT INTO `db`.`t`", Fault::LoseBefore);
    publish(&mut model, true, true).unwrap();
    let lost = model
        .log
        .iter()
        .position(|s| s.starts_with("INSERT INTO `db`.`t`"))
        .unwrap();
    assert_ne!(
        model.log[lost + 1],
        super::PARTIAL_UPDATE_OFF,
        "{:?}",
        model.log
    );
}

#[test]
fn rows_committed_without_their_ledger_record_are_ambiguous_never_success() {
    // An overwrite (one labelled statement) committed; its ledger record, written alone,
    // is refused: the key is not recorded, so a rerun must settle it.
    let mut model = Model::default().arm("INSERT INTO `db`.`daft_doris_commits`", Fault::Refuse);
    let error = publish(&mut model, false, false).unwrap_err();
    assert!(
        matches!(&error, StreamLoadError::Ambiguous { label, detail, .. }
            if label == LABEL && detail.contains("rerun with the same key")),
        "{error:?}"
    );
    assert_eq!((model.rows_committed, model.ledger), (1, 0));
}

/// Runs one of `record.rs`'s lookups against `model`.
fn lookup<T>(
    model: &mut Model,
    run: impl AsyncFnOnce(&mut Model, &Label, &AtomicPolicy) -> T,
) -> T {
    let label = Label::new(LABEL).unwrap();
    let policy = policy();
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(run(model, &label, &policy))
}

#[test]
fn a_running_label_is_waited_for_until_it_settles() {
    use crate::atomic::record::{LabelState, settled_state};
    for (end, state) in [
        (Some("VISIBLE"), LabelState::Committed),
        (Some("COMMITTED"), LabelState::Committed),
        (Some("ABORTED"), LabelState::Free),
        (None, LabelState::Free),
    ] {
        let mut model = Model {
            label: end,
            running_polls: 3,
            ..Model::default()
        };
        let settled = lookup(&mut model, async |m, label, policy| {
            settled_state(m, "db", label, policy).await
        })
        .unwrap();
        assert_eq!(settled, state);
        let polls = model
            .log
            .iter()
            .filter(|s| s.starts_with("SHOW TRANSACTION"))
            .count();
        assert_eq!(polls, 4, "three running answers, then the settled one");
    }
}

#[test]
fn a_pre_committed_label_is_running_not_free() {
    use crate::atomic::record::{LabelState, label_state};
    for (shown, state) in [
        ("PRECOMMITTED", LabelState::Running),
        ("PREPARE", LabelState::Running),
        ("precommitted", LabelState::Running),
        ("ABORTED", LabelState::Free),
    ] {
        let mut model = Model {
            label: Some(shown),
            ..Model::default()
        };
        let got = lookup(&mut model, async |m, label, _| {
            label_state(m, "db", label).await
        });
        assert_eq!(got.unwrap(), state, "{shown}");
    }
}

#[test]
fn a_label_still_running_after_the_settle_timeout_is_ambiguous() {
    let mut model = Model {
        running_polls: u32::MAX,
        ..Model::default()
    };
    let outcome = lookup(&mut model, async |m, label, policy| {
        crate::atomic::record::settled_state(m, "db", label, policy).await
    });
    assert!(
        matches!(&outcome, Err(StreamLoadError::Ambiguous { label, .. }) if label == LABEL),
        "{outcome:?}"
    );
    // Polled at the policy's interval until its timeout, not once and not forever.
    let polls = model.log.len();
    assert!((2..=60).contains(&polls), "{polls} polls");
}

#[test]
fn a_denied_label_lookup_names_the_privilege_and_other_refusals_are_errors() {
    use crate::atomic::record::label_state;
    let mut model = Model {
        lookup_refused: Some(
            "errCode = 2, detailMessage = Access denied; you need (at least one of) the \
             ADMIN privilege(s) for this operation",
        ),
        ..Model::default()
    };
    let denied = lookup(&mut model, async |m, label, _| {
        label_state(m, "db", label).await
    });
    assert!(
        matches!(denied, Err(StreamLoadError::Privilege { .. })),
        "{denied:?}"
    );
    // A refusal that is neither "does not exist" nor a privilege is no answer about the key.
    for message in [
        "errCode = 2, detailMessage = Unknown database 'db'",
        "errCode = 2, detailMessage = transaction with label dd_key is being replayed",
        "errCode = 2, detailMessage = table t does not exist",
    ] {
        let mut model = Model {
            lookup_refused: Some(message),
            ..Model::default()
        };
        let other = lookup(&mut model, async |m, label, _| {
            label_state(m, "db", label).await
        });
        assert!(
            matches!(other, Err(StreamLoadError::Sql { .. })),
            "{message}: {other:?}"
        );
    }
}

#[test]
fn the_ledger_tells_a_forgotten_key_and_its_largest_count() {
    use crate::atomic::record::{CommittedBy, committed};
    let record = CommitRecord::Ledger(LEDGER.into());
    // Doris forgot the label; the ledger holds the key twice (a repaired record).
    let mut model = Model {
        ledger: 2,
        ..Model::default()
    };
    let by = lookup(&mut model, async |m, label, policy| {
        committed(m, "db", label, &record, policy).await
    })
    .unwrap();
    assert_eq!(by, Some(CommittedBy::Ledger { rows: Some(STAGED) }));
    // Without a ledger, a forgotten label is "not committed here".
    let by = lookup(&mut Model::default(), async |m, label, policy| {
        committed(m, "db", label, &CommitRecord::LabelOnly, policy).await
    })
    .unwrap();
    assert_eq!(by, None);
}

/// An overwrite (one labelled statement) whose answer was lost after it committed, so the
/// label tells the outcome and the table is checked; the table holds `counts`.
fn overwrite_told_by_its_label(
    counts: (u64, u64),
) -> (Model, Result<(Option<u64>, bool), StreamLoadError>) {
    let mut model = Model {
        overwrite_counts: counts,
        ..Model::default()
    }
    .arm("INSERT INTO `db`.`t` WITH LABEL", Fault::LoseAfter);
    let label = Label::new(LABEL).unwrap();
    let record = CommitRecord::Ledger(LEDGER.into());
    let policy = policy();
    let run = Publish {
        database: "db",
        table: "t",
        label: &label,
        record: &record,
        policy: &policy,
        partial_update: false,
        statements: Statements::Single(SINGLE.into()),
        staged_rows: STAGED,
        committed_at: "2026-12-06 00:00:00".into(),
        overwrite_check: Some(super::OverwriteCheck {
            columns: vec!["id".into(), "m".into()],
            staging: crate::staging::StagingName::new(LABEL, 1, 1),
            tags: vec!["1".into()],
        }),
    };
    let outcome = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(run.run(&mut model));
    (model, outcome)
}

#[test]
fn an_overwrite_told_by_its_label_is_done_only_when_the_table_holds_its_rows() {
    let (model, outcome) = overwrite_told_by_its_label((STAGED, 0));
    assert_eq!(outcome.unwrap(), (None, true));
    assert_eq!(model.ledger, 1, "recorded after the check");
    // Compared null-safely on the columns Doris can compare: not the MAP.
    let check = model
        .log
        .iter()
        .find(|s| s.starts_with("SELECT (SELECT COUNT(*)"))
        .unwrap();
    assert!(check.contains("`__t`.`id` <=> `__s`.`id`"), "{check}");
    assert!(!check.contains("`m` <=>"), "{check}");
    // Rows missing, or more rows than published: the partitions were not swapped.
    for counts in [(STAGED, 2), (STAGED + 1, 0), (0, STAGED)] {
        let (model, outcome) = overwrite_told_by_its_label(counts);
        assert!(
            matches!(&outcome, Err(StreamLoadError::OverwriteNotApplied { label, .. }) if label == LABEL),
            "{counts:?}: {outcome:?}"
        );
        assert_eq!(
            model.ledger, 0,
            "{counts:?}: no record of an overwrite that did not apply"
        );
    }
}

#[test]
fn reconnects_back_off_and_give_up_naming_the_step() {
    let policy = AtomicPolicy {
        poll_interval: Duration::from_millis(30),
        ..policy()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    // Three refused, the fourth taken: waits of 30, 60 and 90 ms between them.
    let mut model = Model {
        reconnect_failures: 3,
        ..Model::default()
    };
    let started = std::time::Instant::now();
    runtime
        .block_on(super::reconnect(&mut model, &policy))
        .unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(180),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(model.log.len(), 4);
    // Five refused: the FE is gone.
    let mut model = Model {
        reconnect_failures: 5,
        ..Model::default()
    };
    let error = runtime
        .block_on(super::reconnect(&mut model, &policy))
        .unwrap_err();
    assert!(
        matches!(&error, StreamLoadError::Sql { step, .. } if step.contains("reconnect")),
        "{error:?}"
    );
}

#[test]
fn a_running_label_is_given_up_before_the_settle_timeout_passes() {
    let policy = AtomicPolicy {
        settle_timeout: Duration::from_millis(300),
        poll_interval: Duration::from_millis(100),
        ..policy()
    };
    let mut model = Model {
        running_polls: u32::MAX,
        ..Model::default()
    };
    let label = Label::new(LABEL).unwrap();
    let started = std::time::Instant::now();
    let outcome = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(crate::atomic::record::settled_state(
            &mut model, "db", &label, &policy,
        ));
    let waited = started.elapsed();
    assert!(
        matches!(outcome, Err(StreamLoadError::Ambiguous { .. })),
        "{outcome:?}"
    );
    // It stops once one more wait would pass the timeout: within it, never a wait beyond.
    assert!(
        waited >= Duration::from_millis(200) && waited < Duration::from_millis(350),
        "{waited:?}"
    );
}

#[test]
fn the_ledger_time_is_now_in_utc_as_doris_datetime_text() {
    let text = crate::atomic::record::now_utc();
    let at = chrono::NaiveDateTime::parse_from_str(&text, "%Y-%m-%d %H:%M:%S").unwrap();
    let now = chrono::Utc::now().naive_utc();
    assert!((now - at).num_seconds().abs() <= 5, "{text}");
}
