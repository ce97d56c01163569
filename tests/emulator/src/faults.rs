//! Fault injection: a small, explicit registry of faults armed for the next N requests.
//!
//! Arm through the Rust handle ([`crate::Emulator::faults`]) or over HTTP on the FE port:
//!
//! ```text
//! POST   /_emulator/faults   {"kind": "drop_after_commit", "times": 1}
//! GET    /_emulator/faults   → {"armed": [...], "fired": [...]}
//! DELETE /_emulator/faults
//! GET    /_emulator/tables/{db}/{table}   → {"rows": n, "rows_per_tablet": [...]}
//! ```
//!
//! Every fault that fires is recorded with the label and transaction it hit and whether the
//! load was committed, so a test can check afterwards what Doris would hold.

use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// A fault and its parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fault {
    /// BE: commit the load, then close the connection without any response.
    DropAfterCommit,
    /// BE: read part of the body, then reset the connection (nothing is committed).
    ResetMidBody,
    /// BE: commit, answer `Publish Timeout`, make the data visible after a delay.
    PublishTimeout {
        /// Delay before the data becomes visible.
        visible_after_ms: u64,
    },
    /// BE: keep the transaction in PREPARE (label RUNNING) this long before loading.
    HoldRunning {
        /// How long.
        ms: u64,
    },
    /// BE: commit, then answer HTTP 200 with a body that is not JSON.
    MalformedResponse,
    /// BE: commit, then answer with the first half of the JSON body.
    TruncatedResponse,
    /// BE: commit (or pre-commit), then answer `Success` with a `NumberTotalRows` one
    /// higher than the rows received (a BE whose counters do not add up).
    MiscountedAnswer,
    /// FE: redirect to this host and port instead of the BE.
    Redirect {
        /// Target host.
        host: String,
        /// Target port.
        port: u16,
    },
    /// FE: redirect to the usual BE, but over plain `http://` whatever the FE's own scheme
    /// (an https FE that would downgrade the load).
    RedirectPlainHttp,
    /// FE: redirect to a port where nothing listens.
    BeUnreachable,
    /// MySQL face: close the connection after this many rows of the next result set.
    CutResultStream {
        /// Rows sent before the cut.
        rows: u64,
    },
    /// MySQL face: the next connection's greeting names `mysql_clear_password` (a server
    /// that would receive the password in clear text).
    ClearPasswordGreeting,
    /// MySQL face: the next connection, after the client's first answer, is switched to
    /// `caching_sha2_password` and asked for full authentication (as a MySQL 8 server
    /// whose cache holds no entry for the user, or a man in the middle fishing for the
    /// password): over TLS the client may send the password itself; a client that asks
    /// for the public key gets the emulator's (`mysql/keys/server_public.pem`) and sends
    /// the password encrypted to it. What the emulator learns is counted
    /// ([`crate::wire_stats::WireStats::mysql_passwords_revealed`]).
    Sha2FullAuth,
    /// MySQL face: the next `INSERT` commits, then the connection closes without an answer
    /// (as when the FE or the link dies after the commit).
    DropAfterInsertCommit,
    /// MySQL face: the next `COMMIT` of an explicit transaction is lost before it commits:
    /// the connection closes without an answer and the transaction rolls back with its
    /// session (its label is free again).
    DropBeforeTxnCommit,
    /// MySQL face: the next `COMMIT` of an explicit transaction commits, then the
    /// connection closes without an answer.
    DropAfterTxnCommit,
    /// MySQL face: the next `COMMIT` of an explicit transaction: the connection closes
    /// without an answer while the transaction stays PREPARE (its label RUNNING) this long,
    /// then commits (an FE that is slow to finish a commit whose client is gone).
    HoldTxnCommit {
        /// How long the label stays RUNNING.
        ms: u64,
    },
    /// MySQL face: the next `COMMIT` of an explicit transaction takes this long (the label
    /// RUNNING meanwhile), then commits and answers (a large publish).
    SlowTxnCommit {
        /// How long.
        ms: u64,
    },
    /// MySQL face: the next `INSERT OVERWRITE` commits its label but its partitions are not
    /// swapped in (Doris commits the label once the rows are in temporary partitions and
    /// replaces the partitions after; an FE failure between the two leaves the old rows).
    /// `answered`: the client gets Doris's error; otherwise the connection closes unanswered.
    OverwriteSwapFails {
        /// Whether an error answers the statement.
        answered: bool,
    },
    /// MySQL face: the next INSERT inside an explicit transaction stages its rows, then
    /// waits this long before answering (a writer killed meanwhile leaves the transaction
    /// to roll back with its session).
    StallTxnInsert {
        /// How long.
        ms: u64,
    },
    /// MySQL face: the next `COMMIT` of an explicit transaction commits, then waits this
    /// long before answering (the answer withheld: a client killed meanwhile never learns
    /// that it committed).
    StallAfterTxnCommit {
        /// How long.
        ms: u64,
    },
    /// MySQL face: after the last row of the next text result set, one more row packet that
    /// carries only its first cell (a hostile or broken server; clients must fail, not
    /// return the rows so far as the whole result).
    ShortMysqlRow,
    /// FE Flight `GetFlightInfo`: announce this `total_records` for the next query,
    /// whatever its result holds (a server whose streams end cleanly but short).
    AnnounceFlightRows {
        /// The announced count.
        rows: i64,
    },
    /// FE Flight `GetFlightInfo`: name this `host:port` as the location of every BE
    /// endpoint of the next query, or of the one at index `endpoint` (a hostile FE, a BE
    /// registered under an address the client must not send its token to, or — with a
    /// port where nothing listens — one BE of several unreachable).
    FlightLocation {
        /// Location host.
        host: String,
        /// Location port.
        port: u16,
        /// Only this endpoint (0-based, in the order of the `FlightInfo`); every one when
        /// absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        endpoint: Option<usize>,
    },
    /// BE Flight `DoGet`: after this many rows the result stream fails (`UNAVAILABLE`),
    /// as when the BE or the connection dies mid-result.
    CutFlightStream {
        /// Rows sent before the cut.
        rows: u64,
    },
    /// FE Flight `Handshake`: the answer's message carries this many payload bytes (the
    /// token stays in the `authorization` header), as a hostile FE flooding a client.
    OversizedHandshake {
        /// Payload bytes.
        bytes: usize,
    },
    /// FE `_query_plan`: answer HTTP 200 with this JSON instead of the plan (after auth).
    QueryPlanAnswer {
        /// The envelope to send, e.g. `{"msg":"success","code":0,"data":{"status":500,
        /// "exception":"…"},"count":0}`.
        answer: serde_json::Value,
    },
    /// FE and BE: wait this long before handling the request.
    Delay {
        /// How long.
        ms: u64,
    },
    /// BE: read the body and commit as usual, then wait this long before answering (a
    /// slow publish: the client has sent everything and waits).
    SlowAnswer {
        /// How long.
        ms: u64,
    },
    /// MySQL face: when the next statement that starts with `prefix` (letters in any case,
    /// leading spaces ignored) arrives, the connection closes unanswered and the statement
    /// does not run (inside an explicit transaction, the session's end rolls it back): a
    /// lost answer at any statement of a coordinator.
    DropStatement {
        /// The statement's first words, e.g. `BEGIN` or `SET insert_timeout`.
        prefix: String,
        /// Text the statement must also hold (as written), to tell apart statements that
        /// start alike: a publishing `INSERT … WHERE `tag` IN (…)` from the privilege probe
        /// `INSERT … WHERE 1 = 0` before it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        containing: Option<String>,
    },
}

impl Fault {
    fn name(&self) -> &'static str {
        match self {
            Fault::DropAfterCommit => "drop_after_commit",
            Fault::ResetMidBody => "reset_mid_body",
            Fault::PublishTimeout { .. } => "publish_timeout",
            Fault::HoldRunning { .. } => "hold_running",
            Fault::MalformedResponse => "malformed_response",
            Fault::TruncatedResponse => "truncated_response",
            Fault::MiscountedAnswer => "miscounted_answer",
            Fault::Redirect { .. } => "redirect",
            Fault::RedirectPlainHttp => "redirect_plain_http",
            Fault::BeUnreachable => "be_unreachable",
            Fault::Delay { .. } => "delay",
            Fault::SlowAnswer { .. } => "slow_answer",
            Fault::CutResultStream { .. } => "cut_result_stream",
            Fault::CutFlightStream { .. } => "cut_flight_stream",
            Fault::OversizedHandshake { .. } => "oversized_handshake",
            Fault::ShortMysqlRow => "short_mysql_row",
            Fault::DropAfterInsertCommit => "drop_after_insert_commit",
            Fault::DropBeforeTxnCommit => "drop_before_txn_commit",
            Fault::DropAfterTxnCommit => "drop_after_txn_commit",
            Fault::HoldTxnCommit { .. } => "hold_txn_commit",
            Fault::SlowTxnCommit { .. } => "slow_txn_commit",
            Fault::StallAfterTxnCommit { .. } => "stall_after_txn_commit",
            Fault::StallTxnInsert { .. } => "stall_txn_insert",
            Fault::OverwriteSwapFails { .. } => "overwrite_swap_fails",
            Fault::ClearPasswordGreeting => "clear_password_greeting",
            Fault::Sha2FullAuth => "sha2_full_auth",
            Fault::AnnounceFlightRows { .. } => "announce_flight_rows",
            Fault::FlightLocation { .. } => "flight_location",
            Fault::QueryPlanAnswer { .. } => "query_plan_answer",
            Fault::DropStatement { .. } => "drop_statement",
        }
    }

    /// Where the fault acts.
    fn point(&self) -> Point {
        match self {
            Fault::Redirect { .. } | Fault::RedirectPlainHttp | Fault::BeUnreachable => {
                Point::FeRedirect
            }
            Fault::Delay { .. } => Point::AnyRequest,
            Fault::CutResultStream { .. } | Fault::ShortMysqlRow => Point::MysqlResult,
            Fault::AnnounceFlightRows { .. } | Fault::FlightLocation { .. } => Point::FlightInfo,
            Fault::DropAfterInsertCommit => Point::MysqlInsert,
            Fault::StallTxnInsert { .. } => Point::MysqlTxnInsert,
            Fault::OverwriteSwapFails { .. } => Point::MysqlOverwrite,
            Fault::DropBeforeTxnCommit
            | Fault::DropAfterTxnCommit
            | Fault::HoldTxnCommit { .. }
            | Fault::SlowTxnCommit { .. }
            | Fault::StallAfterTxnCommit { .. } => Point::MysqlCommit,
            Fault::ClearPasswordGreeting => Point::MysqlGreeting,
            Fault::Sha2FullAuth => Point::MysqlAuth,
            Fault::CutFlightStream { .. } => Point::FlightResult,
            Fault::OversizedHandshake { .. } => Point::FlightHandshake,
            Fault::QueryPlanAnswer { .. } => Point::QueryPlan,
            Fault::DropStatement { .. } => Point::MysqlStatement,
            _ => Point::BeLoad,
        }
    }
}

/// Where a fault can act.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// The FE's Stream Load redirect.
    FeRedirect,
    /// The BE's Stream Load.
    BeLoad,
    /// Any FE or BE HTTP request.
    AnyRequest,
    /// A result set on the MySQL face.
    MysqlResult,
    /// The FE's `_query_plan`.
    QueryPlan,
    /// A result stream of the BE Flight face.
    FlightResult,
    /// The FE Flight face's `GetFlightInfo` answer.
    FlightInfo,
    /// The FE Flight face's `Handshake` answer.
    FlightHandshake,
    /// An `INSERT` on the MySQL face.
    MysqlInsert,
    /// The `COMMIT` of an explicit transaction on the MySQL face.
    MysqlCommit,
    /// An `INSERT` inside an explicit transaction on the MySQL face.
    MysqlTxnInsert,
    /// An `INSERT OVERWRITE` on the MySQL face, between its label's commit and the swap.
    MysqlOverwrite,
    /// The greeting of a MySQL connection.
    MysqlGreeting,
    /// The authentication of a MySQL connection, after the client's first answer.
    MysqlAuth,
    /// Any statement (COM_QUERY) on the MySQL face.
    MysqlStatement,
}

/// A request to arm a fault (the JSON of `POST /_emulator/faults`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Arm {
    /// The fault.
    #[serde(flatten)]
    pub fault: Fault,
    /// How many requests it hits (default 1).
    #[serde(default = "one")]
    pub times: u32,
}

fn one() -> u32 {
    1
}

/// A fault that fired.
#[derive(Debug, Clone, Serialize)]
pub struct Fired {
    /// The fault's kind.
    pub kind: &'static str,
    /// The label of the load it hit, if any.
    pub label: Option<String>,
    /// The transaction it hit, if any.
    pub txn_id: Option<i64>,
    /// Whether the load's data was committed.
    pub committed: bool,
    /// Where it fired, for a fault armed at one step of several (a `drop_statement`'s
    /// prefix): a generated case records which step of a coordinator it hit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
}

/// Armed faults and the record of those that fired.
#[derive(Debug, Default)]
pub struct FaultRegistry {
    armed: Mutex<Vec<Arm>>,
    fired: Mutex<Vec<Fired>>,
}

impl FaultRegistry {
    /// Arms `fault` for the next `times` requests that reach its point.
    pub fn arm(&self, fault: Fault, times: u32) {
        if let Ok(mut a) = self.armed.lock() {
            a.push(Arm { fault, times });
        }
    }

    /// Disarms everything and forgets what fired.
    pub fn clear(&self) {
        if let Ok(mut a) = self.armed.lock() {
            a.clear();
        }
        if let Ok(mut f) = self.fired.lock() {
            f.clear();
        }
    }

    /// Takes one use of the first armed fault acting at `point`.
    pub fn take(&self, point: Point) -> Option<Fault> {
        let mut armed = self.armed.lock().ok()?;
        let at = armed
            .iter()
            .position(|a| a.fault.point() == point && a.times > 0)?;
        armed[at].times -= 1;
        let fault = armed[at].fault.clone();
        if armed[at].times == 0 {
            armed.remove(at);
        }
        Some(fault)
    }

    /// Takes one use of the first armed fault acting at `point` that `matches` accepts.
    pub fn take_where(&self, point: Point, matches: impl Fn(&Fault) -> bool) -> Option<Fault> {
        let mut armed = self.armed.lock().ok()?;
        let at = armed
            .iter()
            .position(|a| a.fault.point() == point && a.times > 0 && matches(&a.fault))?;
        armed[at].times -= 1;
        let fault = armed[at].fault.clone();
        if armed[at].times == 0 {
            armed.remove(at);
        }
        Some(fault)
    }

    /// Records that `fault` fired.
    pub fn record(&self, fault: &Fault, label: Option<&str>, txn_id: Option<i64>, committed: bool) {
        if let Ok(mut f) = self.fired.lock() {
            f.push(Fired {
                kind: fault.name(),
                label: label.map(str::to_owned),
                txn_id,
                committed,
                step: match fault {
                    Fault::DropStatement { prefix, containing } => Some(match containing {
                        Some(text) => format!("{prefix} … {text}"),
                        None => prefix.clone(),
                    }),
                    _ => None,
                },
            });
        }
    }

    /// What is armed and what fired, as JSON.
    pub fn report(&self) -> serde_json::Value {
        let armed = self.armed.lock().map(|a| a.clone()).unwrap_or_default();
        let fired = self.fired.lock().map(|f| f.clone()).unwrap_or_default();
        serde_json::json!({ "armed": armed, "fired": fired })
    }

    /// The faults that fired so far.
    pub fn fired(&self) -> Vec<Fired> {
        self.fired.lock().map(|f| f.clone()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_fire_the_armed_number_of_times_at_their_point() {
        let r = FaultRegistry::default();
        r.arm(Fault::DropAfterCommit, 2);
        r.arm(Fault::BeUnreachable, 1);
        assert_eq!(r.take(Point::FeRedirect), Some(Fault::BeUnreachable));
        assert_eq!(r.take(Point::FeRedirect), None);
        assert_eq!(r.take(Point::BeLoad), Some(Fault::DropAfterCommit));
        assert_eq!(r.take(Point::BeLoad), Some(Fault::DropAfterCommit));
        assert_eq!(r.take(Point::BeLoad), None);
        let arm: Arm =
            serde_json::from_str(r#"{"kind": "publish_timeout", "visible_after_ms": 5}"#).unwrap();
        assert_eq!(arm.times, 1);
        assert_eq!(
            arm.fault,
            Fault::PublishTimeout {
                visible_after_ms: 5
            }
        );
    }
}
