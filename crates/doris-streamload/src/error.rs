//! One error type with a variant per outcome class.
//!
//! `Display` never contains a password, an `Authorization` value, a request body or a row
//! of data: messages carry Doris's own `Message` text (which names the problem, not the
//! data), labels, transaction ids and URLs without userinfo. Rows rejected by Doris are
//! kept apart, in [`StreamLoadError::Rejected::error_log_head`], which `Display` omits.

use serde::Serialize;

use crate::response::ExistingJobStatus;

/// What an error says about the load it concerns, field by field, for a caller that hands
/// them on without matching every variant (an exception's attributes, a log record's
/// fields). `None` where the error has no such field; never a row, a body or a secret.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ErrorFields {
    /// The load's label (of a rejected, ambiguous, unsent or existing load).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The transaction holding an existing label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub txn_id: Option<i64>,
    /// An existing label's status (`RUNNING`, `PRECOMMITTED`, `FINISHED`, `UNKNOWN`) or a
    /// failed two-phase step's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The BE's log of the rejected rows (it shows row data to whoever can reach the BE).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_url: Option<String>,
    /// The attempts made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u32>,
    /// The column of a rejected value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    /// A partial settlement's committed, aborted and left transactions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub committed: Option<Vec<String>>,
    /// See `committed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aborted: Option<Vec<String>>,
    /// See `committed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left: Option<Vec<String>>,
}

/// Everything that can go wrong with a Stream Load, one variant per outcome class.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StreamLoadError {
    /// The configuration or the options are invalid; nothing was sent.
    #[error("invalid Stream Load configuration: {0}")]
    Config(String),

    /// A statement or name could not be built from the caller's arguments (`doris-sql`
    /// refused it); nothing was sent.
    #[error("invalid Stream Load configuration: {0}")]
    Statement(#[source] doris_sql::SqlError),

    /// The data does not fit the table (its columns, types, nullability, key model or
    /// operation, `doris_sql::check_write_target`); nothing was sent.
    #[error(transparent)]
    Incompatible(#[from] doris_sql::WriteTargetError),

    /// Doris refused the credentials (the FE's `code: 401` envelope, or the BE's
    /// `Access denied` / `no valid Basic authorization`).
    #[error("Doris refused the Stream Load credentials: {message}")]
    Auth {
        /// Doris's text, e.g. `Access denied for user 'u@127.0.0.1' (using password: YES)`.
        message: String,
    },

    /// Doris answered `Fail` (or the FE answered `status: FAILED`): nothing of this load is
    /// visible and the label is free again.
    /// (The error log's URL is a field, not part of the message: the log shows rejected
    /// rows to whoever can reach the BE, so it is handed on only to who asks for it.)
    #[error("Stream Load {label} failed: {message}")]
    Rejected {
        /// The label of the load.
        label: String,
        /// Doris's `Message` (or the FE's `msg`).
        message: String,
        /// `ErrorURL`, when Doris wrote an error log.
        error_url: Option<String>,
        /// The first lines of the error log, when the client was asked to fetch them.
        /// They may contain row data and are therefore not part of `Display`.
        error_log_head: Vec<String>,
    },

    /// The label is held by a transaction this client cannot resolve by itself: a
    /// pre-committed 2PC transaction this call did not pre-commit. (A label still running
    /// after every probe is [`StreamLoadError::Ambiguous`]: it may yet commit.)
    #[error("label {label} already exists in Doris with status {existing:?}{}", txn_id.map(|t| format!(" (txn {t})")).unwrap_or_default())]
    LabelExists {
        /// The label.
        label: String,
        /// `ExistingJobStatus`.
        existing: ExistingJobStatus,
        /// The transaction holding the label, parsed from the message.
        txn_id: Option<i64>,
    },

    /// The body may have reached Doris, but no final answer arrived and the retries under
    /// the same label did not settle it. The rows may or may not be loaded; retrying with
    /// the same label later is safe within Doris's label retention. For a two-phase commit
    /// or abort, `label` names the transaction (`transaction [id]` or `label [l]`): the
    /// request may have been applied, and repeating it later is safe (both are idempotent).
    #[error("Stream Load {label} outcome is unknown after {attempts} attempt(s): {detail}")]
    Ambiguous {
        /// The label to retry with.
        label: String,
        /// Attempts made.
        attempts: u32,
        /// What happened last.
        detail: String,
    },

    /// The request failed before any body byte was sent, and retries were exhausted.
    #[error("Stream Load {label} could not be sent after {attempts} attempt(s): {detail}")]
    Transport {
        /// The label.
        label: String,
        /// Attempts made.
        attempts: u32,
        /// What happened last.
        detail: String,
    },

    /// The FE redirected somewhere the allowlist does not permit; no body byte was sent.
    #[error("refused to follow the Stream Load redirect to {target}: {reason}")]
    RedirectRefused {
        /// The target, without userinfo.
        target: String,
        /// Why it was refused.
        reason: String,
    },

    /// Doris's answer could not be understood (and no body had been sent, or the load was
    /// not retryable).
    #[error("malformed answer from Doris: {0}")]
    Malformed(String),

    /// Doris committed the load but its counters do not add up; the rows are in Doris.
    #[error("Stream Load {label} committed, but its counters do not reconcile: {detail}")]
    CounterMismatch {
        /// The label.
        label: String,
        /// The mismatch.
        detail: String,
    },

    /// A value breaks a rule of its Doris column (NOT NULL, a narrower type, a length, a
    /// text form); nothing of the batch was sent. The value itself is not shown.
    #[error("column {column}: {reason}")]
    ValueRejected {
        /// The data column.
        column: String,
        /// The rule it breaks.
        reason: String,
    },

    /// The data could not be encoded in the chosen format.
    #[error("cannot encode the load body: {0}")]
    Encode(String),

    /// Settling several pre-committed loads stopped part-way: `committed` are visible,
    /// `aborted` were rolled back, `left` are still pre-committed (Doris aborts them at
    /// its pre-commit timeout). Each entry is `transaction [id]` or `label [l]`.
    #[error(
        "two-phase settlement stopped: committed [{}], aborted [{}], left pre-committed [{}]",
        committed.join(", "), aborted.join(", "), left.join(", ")
    )]
    PartialCommit {
        /// Committed (visible) before the failure.
        committed: Vec<String>,
        /// Aborted after the failure.
        aborted: Vec<String>,
        /// Neither: their commit or abort failed.
        left: Vec<String>,
        /// The first failure.
        #[source]
        source: Box<StreamLoadError>,
    },

    /// The user lacks a privilege an atomic write needs (checked before the first byte:
    /// `DROP` and `CREATE` in the database for the staging table, `LOAD` on the target and
    /// `SELECT` on the staging table for the publishing INSERT). Nothing was loaded.
    #[error("atomic write needs {needed}: {message}")]
    Privilege {
        /// The privileges the failed check needed, as Doris names them.
        needed: &'static str,
        /// Doris's message.
        message: String,
    },

    /// A statement of an atomic write failed on the MySQL protocol (the message is the
    /// server's, statement text omitted).
    #[error("atomic write: could not {step}: {message}")]
    Sql {
        /// What the statement was for.
        step: &'static str,
        /// The session's message.
        message: String,
    },

    /// An atomic overwrite's label committed but the table does not hold its rows: Doris
    /// commits an `INSERT OVERWRITE`'s label once the rows are in temporary partitions and
    /// swaps the partitions after, and the swap did not happen (the FE failed between the
    /// two). The ledger holds no record of the key: a rerun with the same key checks the
    /// table against its rows, records the key when the table holds them and fails so
    /// otherwise (`doris_write::atomic::AtomicWrite::begin_write`); the key's label is used,
    /// so overwriting again takes a new key.
    #[error(
        "the overwrite under label {label} committed its label, but the table does not hold its rows ({detail}): rerun it with a new idempotence key"
    )]
    OverwriteNotApplied {
        /// The key's label.
        label: String,
        /// What the table holds.
        detail: String,
    },

    /// The server's Doris release cannot run what was asked; nothing was created, loaded
    /// or committed. `detail` says why and what to use instead.
    #[error("Doris {release} cannot run {feature}: {detail}")]
    UnsupportedRelease {
        /// The release (`3.0.2`), or `(unknown release)`.
        release: String,
        /// What was asked.
        feature: &'static str,
        /// Why not, and what to use instead.
        detail: String,
    },

    /// A two-phase-commit operation failed.
    #[error("two-phase {operation} of {target} failed: {status}: {message}")]
    TwoPhase {
        /// `commit` or `abort`.
        operation: &'static str,
        /// `transaction [id]` or `label [l]`.
        target: String,
        /// Doris's lower-case `status`.
        status: String,
        /// Doris's `msg`.
        message: String,
    },
}

impl StreamLoadError {
    /// The error's fields ([`ErrorFields`]).
    ///
    /// ```
    /// use doris_streamload::StreamLoadError;
    /// let e = StreamLoadError::Ambiguous { label: "l1".into(), attempts: 3, detail: "lost".into() };
    /// let fields = e.fields();
    /// assert_eq!((fields.label.as_deref(), fields.attempts), (Some("l1"), Some(3)));
    /// ```
    pub fn fields(&self) -> ErrorFields {
        let label = |label: &String| Some(label.clone());
        match self {
            Self::Rejected {
                label: l,
                error_url,
                ..
            } => ErrorFields {
                label: label(l),
                error_url: error_url.clone(),
                ..ErrorFields::default()
            },
            Self::LabelExists {
                label: l,
                existing,
                txn_id,
            } => ErrorFields {
                label: label(l),
                status: Some(format!("{existing:?}").to_uppercase()),
                txn_id: *txn_id,
                ..ErrorFields::default()
            },
            Self::Ambiguous {
                label: l, attempts, ..
            }
            | Self::Transport {
                label: l, attempts, ..
            } => ErrorFields {
                label: label(l),
                attempts: Some(*attempts),
                ..ErrorFields::default()
            },
            Self::CounterMismatch { label: l, .. } | Self::OverwriteNotApplied { label: l, .. } => {
                ErrorFields {
                    label: label(l),
                    ..ErrorFields::default()
                }
            }
            Self::ValueRejected { column, .. } => ErrorFields {
                column: Some(column.clone()),
                ..ErrorFields::default()
            },
            Self::TwoPhase { status, .. } => ErrorFields {
                status: Some(status.clone()),
                ..ErrorFields::default()
            },
            Self::PartialCommit {
                committed,
                aborted,
                left,
                ..
            } => ErrorFields {
                committed: Some(committed.clone()),
                aborted: Some(aborted.clone()),
                left: Some(left.clone()),
                ..ErrorFields::default()
            },
            _ => ErrorFields::default(),
        }
    }

    /// The error's [`ErrorKind`](doris_sql::ErrorKind). Outcomes that may have loaded
    /// ([`may_have_loaded`](Self::may_have_loaded)) are
    /// [`Ambiguous`](doris_sql::ErrorKind::Ambiguous) unless Doris said what happened: an
    /// existing label, a refused load, an overwrite that did not apply and a refused 2PC
    /// step are [`Rejected`](doris_sql::ErrorKind::Rejected); a value or body a column
    /// cannot take and a release that lacks the behaviour are
    /// [`Incompatible`](doris_sql::ErrorKind::Incompatible); a redirect the allowlist
    /// refuses is [`Configuration`](doris_sql::ErrorKind::Configuration); a failed link, a
    /// broken answer and a failed step of the atomic write's SQL are
    /// [`Transport`](doris_sql::ErrorKind::Transport).
    pub fn kind(&self) -> doris_sql::ErrorKind {
        use doris_sql::ErrorKind;
        match self {
            Self::Config(_) | Self::RedirectRefused { .. } => ErrorKind::Configuration,
            Self::Statement(e) => e.kind(),
            Self::Auth { .. } => ErrorKind::Authentication,
            Self::Privilege { .. } => ErrorKind::Permission,
            Self::Rejected { .. }
            | Self::LabelExists { .. }
            | Self::OverwriteNotApplied { .. }
            | Self::TwoPhase { .. } => ErrorKind::Rejected,
            Self::Ambiguous { .. } | Self::CounterMismatch { .. } | Self::PartialCommit { .. } => {
                ErrorKind::Ambiguous
            }
            Self::Transport { .. } | Self::Malformed(_) | Self::Sql { .. } => ErrorKind::Transport,
            Self::Incompatible(_)
            | Self::ValueRejected { .. }
            | Self::Encode(_)
            | Self::UnsupportedRelease { .. } => ErrorKind::Incompatible,
        }
    }

    /// Whether the rows of the failed load may nevertheless be in Doris.
    pub fn may_have_loaded(&self) -> bool {
        matches!(
            self,
            Self::Ambiguous { .. }
                | Self::CounterMismatch { .. }
                | Self::LabelExists { .. }
                | Self::PartialCommit { .. }
        )
    }
}

#[cfg(feature = "client")]
impl From<arrow::error::ArrowError> for StreamLoadError {
    fn from(e: arrow::error::ArrowError) -> Self {
        Self::Encode(e.to_string())
    }
}

#[cfg(feature = "client")]
impl From<parquet::errors::ParquetError> for StreamLoadError {
    fn from(e: parquet::errors::ParquetError) -> Self {
        Self::Encode(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doris_sql::ErrorKind;

    #[test]
    fn an_errors_fields_are_what_its_variant_carries_and_nothing_else() {
        let exists = StreamLoadError::LabelExists {
            label: "l".into(),
            existing: ExistingJobStatus::Precommitted,
            txn_id: Some(7),
        };
        assert_eq!(
            exists.fields(),
            ErrorFields {
                label: Some("l".into()),
                status: Some("PRECOMMITTED".into()),
                txn_id: Some(7),
                ..ErrorFields::default()
            }
        );
        let partial = StreamLoadError::PartialCommit {
            committed: vec!["a".into()],
            aborted: vec![],
            left: vec!["b".into()],
            source: Box::new(exists),
        };
        let fields = partial.fields();
        assert_eq!(fields.label, None, "the cause's label is the cause's");
        assert_eq!(
            (fields.committed, fields.aborted, fields.left),
            (Some(vec!["a".into()]), Some(vec![]), Some(vec!["b".into()]))
        );
        // Unset fields are left out of the serialized form (the exception's class default
        // stays).
        let json = serde_json::to_value(StreamLoadError::Encode("x".into()).fields()).unwrap();
        assert_eq!(json, serde_json::json!({}));
    }

    #[test]
    fn a_load_that_may_have_loaded_is_ambiguous_unless_doris_said_what_happened() {
        let ambiguous = StreamLoadError::Ambiguous {
            label: "l".into(),
            attempts: 3,
            detail: "lost".into(),
        };
        let exists = StreamLoadError::LabelExists {
            label: "l".into(),
            existing: ExistingJobStatus::Finished,
            txn_id: None,
        };
        assert!(ambiguous.may_have_loaded() && exists.may_have_loaded());
        assert_eq!(ambiguous.kind(), ErrorKind::Ambiguous);
        // Doris refused this request; the label's earlier load is what may be there.
        assert_eq!(exists.kind(), ErrorKind::Rejected);
        let partial = StreamLoadError::PartialCommit {
            committed: vec!["a".into()],
            aborted: vec![],
            left: vec!["b".into()],
            source: Box::new(ambiguous),
        };
        assert_eq!(partial.kind(), ErrorKind::Ambiguous);
        let refused = StreamLoadError::Rejected {
            label: "l".into(),
            message: "too many filtered rows".into(),
            error_url: None,
            error_log_head: vec![],
        };
        assert!(!refused.may_have_loaded());
        assert_eq!(refused.kind(), ErrorKind::Rejected);
    }

    #[test]
    fn input_errors_are_configuration_and_data_that_does_not_fit_is_incompatible() {
        let statement = StreamLoadError::Statement(doris_sql::SqlError::InvalidQuery("x".into()));
        assert_eq!(statement.kind(), ErrorKind::Configuration);
        let redirect = StreamLoadError::RedirectRefused {
            target: "10.0.0.9:8040".into(),
            reason: "not listed".into(),
        };
        assert_eq!(redirect.kind(), ErrorKind::Configuration);
        let value = StreamLoadError::ValueRejected {
            column: "c".into(),
            reason: "too long".into(),
        };
        assert_eq!(value.kind(), ErrorKind::Incompatible);
        let release = StreamLoadError::UnsupportedRelease {
            release: "2.1.10".into(),
            feature: "the atomic write",
            detail: "use 3.0.4 or later".into(),
        };
        assert_eq!(release.kind(), ErrorKind::Incompatible);
        let privilege = StreamLoadError::Privilege {
            needed: "LOAD",
            message: "denied".into(),
        };
        assert_eq!(privilege.kind(), ErrorKind::Permission);
    }
}
