//! Staging tables (listing, dropping, the cleanup of crashed runs) and the errors of an
//! atomic write's statements.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::staging::{STAGING_PREFIX, StagingName};
use doris_sql::session::{SqlFailure, SqlSession};

use doris_streamload::StreamLoadError;

/// Staging tables of `database` with their names parsed.
pub(crate) async fn staging_tables<S: SqlSession>(
    session: &mut S,
    database: &str,
) -> Result<Vec<(String, StagingName)>, StreamLoadError> {
    let sql = format!(
        "SHOW TABLES FROM {} LIKE '{STAGING_PREFIX}%'",
        doris_sql::quote_ident("database", database).map_err(StreamLoadError::Statement)?
    );
    let rows = session
        .query(&sql)
        .await
        .map_err(|f| sql_error("list staging tables", f))?;
    Ok(rows
        .rows
        .iter()
        .filter_map(|r| r.first().cloned().flatten())
        .filter_map(|name| StagingName::parse(&name).map(|s| (name, s)))
        .collect())
}

/// Drops every staging table of the key of `label` (leftovers of crashed runs).
pub(crate) async fn drop_staging_of<S: SqlSession>(
    session: &mut S,
    database: &str,
    label: &str,
) -> Result<(), StreamLoadError> {
    for (name, staging) in staging_tables(session, database).await? {
        if staging.belongs_to(label) {
            drop_table(session, database, &name).await?;
        }
    }
    Ok(())
}

/// `DROP TABLE IF EXISTS db.name`.
pub(crate) fn drop_statement(database: &str, name: &str) -> Result<String, StreamLoadError> {
    Ok(format!(
        "DROP TABLE IF EXISTS {}.{}",
        doris_sql::quote_ident("database", database).map_err(StreamLoadError::Statement)?,
        doris_sql::quote_ident("table", name).map_err(StreamLoadError::Statement)?,
    ))
}

pub(crate) async fn drop_table<S: SqlSession>(
    session: &mut S,
    database: &str,
    name: &str,
) -> Result<(), StreamLoadError> {
    session
        .execute(&drop_statement(database, name)?)
        .await
        .map(|_| ())
        .map_err(|f| sql_error("drop a staging table", f))
}

/// Drops the staging tables of `database` made more than `older_than` ago (runs that
/// crashed and were never rerun). Returns the names dropped.
pub async fn cleanup<S: SqlSession>(
    session: &mut S,
    database: &str,
    older_than: Duration,
) -> Result<Vec<String>, StreamLoadError> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut dropped = Vec::new();
    for (name, staging) in staging_tables(session, database).await? {
        if now.saturating_sub(staging.created) >= older_than.as_secs() {
            drop_table(session, database, &name).await?;
            dropped.push(name);
        }
    }
    Ok(dropped)
}

/// A refused statement of the privilege checks: [`StreamLoadError::Privilege`] when Doris
/// says a privilege is missing, otherwise the step's SQL error.
pub(crate) fn privilege_error(
    needed: &'static str,
    step: &'static str,
    failure: SqlFailure,
) -> StreamLoadError {
    match failure {
        SqlFailure::Refused(message) if is_privilege_denial(&message) => {
            StreamLoadError::Privilege { needed, message }
        }
        other => sql_error(step, other),
    }
}

/// Doris's texts for a missing privilege (`Access denied; you need (at least one of) the
/// (LOAD) privilege(s)`, MySQL's `… command denied to user`).
pub(crate) fn is_privilege_denial(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    lower.contains("privilege(s) for this operation") || lower.contains("command denied")
}

/// A failed statement of step `step` as [`StreamLoadError::Sql`].
pub(crate) fn sql_error(step: &'static str, failure: SqlFailure) -> StreamLoadError {
    match failure {
        SqlFailure::Refused(message) => StreamLoadError::Sql { step, message },
        SqlFailure::Unanswered(message) => StreamLoadError::Sql {
            step,
            message: format!("no answer: {message}"),
        },
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn privilege_denials_are_told_apart_from_other_refusals() {
        let denied = privilege_error(
            "LOAD",
            "probe",
            SqlFailure::Refused(
                "errCode = 2, detailMessage = Access denied; you need (at least one of) the (LOAD) privilege(s) for this operation".into(),
            ),
        );
        assert!(matches!(
            denied,
            StreamLoadError::Privilege { needed: "LOAD", .. }
        ));
        let select = privilege_error(
            "SELECT",
            "probe",
            SqlFailure::Refused("SELECT command denied to user 'u'@'h' for table 'd.s'".into()),
        );
        assert!(matches!(select, StreamLoadError::Privilege { .. }));
        let other = privilege_error("LOAD", "probe", SqlFailure::Refused("Unknown table".into()));
        assert!(matches!(other, StreamLoadError::Sql { .. }));
        let lost = privilege_error("LOAD", "probe", SqlFailure::Unanswered("reset".into()));
        assert!(matches!(lost, StreamLoadError::Sql { .. }));
    }
}
