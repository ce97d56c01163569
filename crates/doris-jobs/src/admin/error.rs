//! What can go wrong running streaming jobs over the FE's MySQL port.

use arrow_schema::ArrowError;
use doris_mysql::MySqlError;
use doris_sql::{ErrorKind, SqlError};

/// An error of [`admin`](crate::admin): the MySQL link's, kept whole, or one of the jobs'
/// own. No text holds an S3 credential: statements are never quoted, rows are masked when
/// parsed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JobError {
    /// The link to the FE or a statement on it failed: Doris's refusal of a job statement
    /// (a job that is not PAUSED, a name in use, a property it refuses) is
    /// [`MySqlError::Query`].
    #[error(transparent)]
    MySql(#[from] MySqlError),
    /// A statement could not be built from the arguments (a name, a property); nothing
    /// was sent.
    #[error("invalid job statement: {0}")]
    Statement(#[source] SqlError),
    /// A `jobs()` or `tasks()` row could not be understood.
    #[error("malformed job row: {0}")]
    Row(#[source] SqlError),
    /// The rows could not be built as Arrow (a bug here, not in the rows).
    #[error("the job rows could not be built as Arrow: {0}")]
    Arrow(#[source] ArrowError),
    /// No streaming job has that name.
    #[error("not found: streaming job {0} does not exist")]
    NotFound(String),
    /// The job is PAUSED (by `PAUSE JOB` or a failed task) before loading the file a
    /// caller waits for ([`wait_for_file`](crate::admin::wait_for_file)).
    #[error("streaming job {job} is PAUSED: {reason}")]
    Paused {
        /// The job's name.
        job: String,
        /// Doris's `ErrorMsg` (cut to 500 bytes), or that it was paused.
        reason: String,
    },
    /// The job did not load the awaited file in time.
    #[error("timed out: {0}")]
    Timeout(String),
}

impl JobError {
    /// The error's [`ErrorKind`]: the link's own kind, a paused job
    /// [`Rejected`](ErrorKind::Rejected), a row or batch that cannot be built
    /// [`Incompatible`](ErrorKind::Incompatible).
    pub fn kind(&self) -> ErrorKind {
        match self {
            JobError::MySql(e) => e.kind(),
            JobError::Statement(e) => e.kind(),
            JobError::Row(_) | JobError::Arrow(_) => ErrorKind::Incompatible,
            JobError::NotFound(_) => ErrorKind::NotFound,
            JobError::Paused { .. } => ErrorKind::Rejected,
            JobError::Timeout(_) => ErrorKind::Timeout,
        }
    }

    /// Whether Doris refused the job statement itself (answered it with an error), as
    /// opposed to a link, privilege or argument failure.
    pub fn is_refusal(&self) -> bool {
        matches!(self, JobError::MySql(MySqlError::Query { .. }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_job_error_has_the_kind_a_caller_reacts_to_and_keeps_its_cause() {
        let refused = JobError::from(MySqlError::Query {
            code: 1105,
            message: "Only PAUSED job can be altered".into(),
        });
        assert!(refused.is_refusal());
        assert_eq!(refused.kind(), ErrorKind::Rejected);
        let denied = JobError::from(MySqlError::Permission("no".into()));
        assert!(!denied.is_refusal());
        assert_eq!(denied.kind(), ErrorKind::Permission);
        let paused = JobError::Paused {
            job: "ingest".into(),
            reason: "task failed".into(),
        };
        assert_eq!(paused.kind(), ErrorKind::Rejected);
        assert_eq!(
            paused.to_string(),
            "streaming job ingest is PAUSED: task failed"
        );
        assert_eq!(JobError::NotFound("x".into()).kind(), ErrorKind::NotFound);
        let row = JobError::Row(SqlError::MetadataParse("bad".into()));
        assert!(std::error::Error::source(&row).is_some());
    }
}
