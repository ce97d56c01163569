//! The MySQL link's errors, one variant per class a caller reacts to differently.
//!
//! No `Display` contains a password. Server messages are kept (they name tables, columns
//! and users), except that a syntax error's echo of the statement (`near '…'`, Doris's
//! `== SQL ==` block, quoted tokens) is cut, so that no literal of a statement leaks into
//! logs ([`scrub`]).

/// Everything that can go wrong on a MySQL-protocol link to Doris.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MySqlError {
    /// Invalid settings; nothing was sent.
    #[error("invalid MySQL connection settings: {0}")]
    Config(String),
    /// The server refused the credentials, or the guard refused to reveal them.
    #[error("Doris refused the credentials: {0}")]
    Auth(String),
    /// The user lacks a privilege.
    #[error("permission denied: {0}")]
    Permission(String),
    /// The database or table does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// The server rejected the statement.
    #[error("query failed (error {code}): {message}")]
    Query {
        /// MySQL error number.
        code: u16,
        /// The server's text, statement echo removed.
        message: String,
    },
    /// An answer larger than a session takes (rows over [`MAX_SESSION_ROWS`](crate::MAX_SESSION_ROWS)).
    #[error("answer too large: {0}")]
    TooLarge(String),
    /// The connection failed or was cut (the statement may have taken effect).
    #[error("transport error: {0}")]
    Transport(String),
    /// An operation took longer than its timeout.
    #[error("timed out: {0}")]
    Timeout(String),
}

impl MySqlError {
    /// The error's [`ErrorKind`](doris_sql::ErrorKind): a refused statement is
    /// [`Rejected`](doris_sql::ErrorKind::Rejected), an answer over a cap
    /// [`Incompatible`](doris_sql::ErrorKind::Incompatible).
    pub fn kind(&self) -> doris_sql::ErrorKind {
        use doris_sql::ErrorKind;
        match self {
            MySqlError::Config(_) => ErrorKind::Configuration,
            MySqlError::Auth(_) => ErrorKind::Authentication,
            MySqlError::Permission(_) => ErrorKind::Permission,
            MySqlError::NotFound(_) => ErrorKind::NotFound,
            MySqlError::Query { .. } => ErrorKind::Rejected,
            MySqlError::TooLarge(_) => ErrorKind::Incompatible,
            MySqlError::Transport(_) => ErrorKind::Transport,
            MySqlError::Timeout(_) => ErrorKind::Timeout,
        }
    }

    /// Whether the server answered the statement with this error (an ERR packet), as
    /// opposed to no answer (the statement may have taken effect).
    pub fn is_answer(&self) -> bool {
        matches!(
            self,
            MySqlError::Query { .. }
                | MySqlError::Permission(_)
                | MySqlError::NotFound(_)
                | MySqlError::Auth(_)
        )
    }
}

/// Cuts the statement echo of a server message: MySQL's `near '…'`, Doris's `== SQL ==`
/// block (the statement with a caret under the error), and, in a syntax error, every
/// quoted fragment (`mismatched input '…'`, sqlparser's `found: '…'`), which may be a
/// bound value.
pub fn scrub(message: &str) -> String {
    let mut out = match message.find(" near '") {
        Some(at) => format!("{} near (statement text omitted)", &message[..at]),
        None => message.to_owned(),
    };
    if let Some(at) = out.find("== SQL ==") {
        out.truncate(at);
        out = format!("{} (statement text omitted)", out.trim_end());
    }
    let lower = out.to_ascii_lowercase();
    let syntax = [
        "syntax",
        "mismatched input",
        "extraneous input",
        "no viable alternative",
        "found: ",
        "expected",
    ]
    .iter()
    .any(|w| lower.contains(w));
    if syntax { blank_quoted(&out) } else { out }
}

/// A server text that answers a statement carrying bound values (a planning statement's
/// filter): [`scrub`], then every single-quoted fragment blanked whatever the error's kind.
pub fn scrub_statement_text(message: &str) -> String {
    blank_quoted(&scrub(message))
}

/// Replaces every single-quoted fragment (`''` inside one is a quote) by `'…'`.
fn blank_quoted(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut chars = message.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\'' {
            out.push(c);
            continue;
        }
        let mut closed = false;
        while let Some(n) = chars.next() {
            if n == '\'' {
                if chars.peek() == Some(&'\'') {
                    chars.next();
                    continue;
                }
                closed = true;
                break;
            }
        }
        out.push_str(if closed { "'…'" } else { "'…" });
    }
    out
}

/// Awaits a sqlx future under `timeout`. sqlx decodes packets by slicing and panics on some
/// malformed ones; such a panic is the server's fault and becomes a [`MySqlError::Transport`]
/// here, never a panic in the caller (the connection is dropped with the future).
pub async fn bounded<T, E: From<MySqlError>>(
    timeout: std::time::Duration,
    what: &str,
    work: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, E> {
    use futures::FutureExt as _;
    match tokio::time::timeout(timeout, std::panic::AssertUnwindSafe(work).catch_unwind()).await {
        Err(_) => Err(MySqlError::Timeout(format!(
            "{what}: no answer within {} s",
            timeout.as_secs()
        ))
        .into()),
        Ok(Err(_)) => {
            Err(MySqlError::Transport(format!("{what}: the server sent a malformed packet")).into())
        }
        Ok(Ok(result)) => result,
    }
}

impl MySqlError {
    /// Classifies a sqlx error (the server's text [`scrub`]bed).
    pub fn from_sqlx(e: sqlx::Error) -> Self {
        match e {
            sqlx::Error::Database(db) => {
                let code = db
                    .try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>()
                    .map_or(0, |m| m.number());
                Self::answered(code, db.message())
            }
            sqlx::Error::Io(io) => Self::Transport(io.to_string()),
            sqlx::Error::Tls(t) => Self::Transport(format!("TLS: {t}")),
            sqlx::Error::PoolTimedOut => Self::Timeout("connection pool".into()),
            other => Self::Transport(other.to_string()),
        }
    }
}

impl MySqlError {
    /// Classifies the server's error answer `code` with `text`: an error that names an
    /// object (a missing table, a privilege, the credentials) keeps its quoted names; any
    /// other, which may quote a value of the statement (`Invalid number 'x' for column`),
    /// has every quoted fragment blanked.
    pub fn answered(code: u16, text: &str) -> Self {
        let message = scrub(text);
        let lower = message.to_ascii_lowercase();
        match code {
            1045 => Self::Auth(message),
            1044 | 1142 | 1143 | 1227 => Self::Permission(message),
            1049 | 1051 | 1146 => Self::NotFound(message),
            _ if lower.contains("command denied") || lower.contains("access denied") => {
                Self::Permission(message)
            }
            _ if lower.contains("does not exist")
                || lower.contains("unknown table")
                || lower.contains("unknown database") =>
            {
                Self::NotFound(message)
            }
            _ => Self::Query {
                code,
                message: blank_quoted(&message),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_statement_never_carries_a_quoted_value() {
        let e = MySqlError::answered(
            1105,
            "errCode = 2, detailMessage = Invalid number 'hunter2' for column `id`",
        );
        assert!(matches!(e, MySqlError::Query { code: 1105, .. }), "{e:?}");
        assert!(!e.to_string().contains("hunter2"), "{e}");
        assert!(e.to_string().contains("`id`"), "{e}");
        let missing = MySqlError::answered(1105, "Unknown table 'events'");
        assert!(matches!(missing, MySqlError::NotFound(_)));
        assert!(missing.to_string().contains("'events'"), "{missing}");
        let denied = MySqlError::answered(1142, "SELECT command denied to user 'bob'@'%'");
        assert!(denied.to_string().contains("'bob'"), "{denied}");
    }

    #[test]
    fn statement_echo_is_cut() {
        assert_eq!(
            scrub("You have an error in your SQL syntax; check the manual near 'secret' at line 1"),
            "You have an error in your SQL syntax; check the manual near (statement text omitted)"
        );
        assert_eq!(scrub("Unknown table 't'"), "Unknown table 't'");
    }

    #[test]
    fn dorises_statement_block_and_quoted_tokens_are_cut() {
        let doris = "errCode = 2, detailMessage = \nmismatched input 'hunter2' expecting {<EOF>, ';'}(line 1, pos 33)\n\n== SQL ==\nSELECT * FROM t WHERE pw = hunter2\n---------------------------------^^^\n";
        let scrubbed = scrub(doris);
        assert!(!scrubbed.contains("hunter2"), "{scrubbed}");
        assert!(scrubbed.contains("mismatched input '…'"), "{scrubbed}");
        assert!(scrubbed.ends_with("(statement text omitted)"), "{scrubbed}");
        let parser =
            "sql parser error: Expected: an expression, found: 's3cr3t' at Line: 1, Column: 30";
        assert!(!scrub(parser).contains("s3cr3t"), "{}", scrub(parser));
        let doubled = "syntax error at 'it''s secret' here";
        assert_eq!(scrub(doubled), "syntax error at '…' here");
    }
}
