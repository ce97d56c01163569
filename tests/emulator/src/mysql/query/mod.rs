//! COM_QUERY: session statements, metadata statements and DDL; `SELECT … FROM` goes to
//! DataFusion (`select/`). Session variables (`SET`, `SELECT @@…`) are in `variables`, the
//! BE listing and its tags in `backend_statements`.

use std::sync::Arc;

use super::Session;
use super::show::{describe_rows, show_columns_rows, show_create_table};
use super::wire::{ColumnDef, PacketIo};
use crate::Shared;
use crate::auth::{Privilege, missing_privilege};
use crate::error::EmulatorError;

mod backend_statements;
mod sql_mode;
mod variables;

use backend_statements::{modify_backend, show_backends};
use variables::{select_variables, set, variable};

/// The error Doris gives for a non-constant `SET` value (sic).
pub const NON_CONSTANT_SET: &str =
    "errCode = 2, detailMessage = Set statement does't support non-constant expr.";

/// What a statement produced.
enum Outcome {
    Ok(u64),
    Rows(Vec<ColumnDef>, Vec<Vec<Option<String>>>),
    Err(u16, &'static [u8; 5], String),
}

fn analysis(message: impl std::fmt::Display) -> Outcome {
    Outcome::Err(
        1105,
        b"HY000",
        format!("errCode = 2, detailMessage = {message}"),
    )
}

fn from_error(e: &EmulatorError) -> Outcome {
    match e {
        EmulatorError::UnknownDatabase(_) => Outcome::Err(1049, b"42000", e.to_string()),
        EmulatorError::DatabaseExists(_) => Outcome::Err(1007, b"HY000", e.to_string()),
        EmulatorError::TableExists(_) => Outcome::Err(1050, b"42S01", e.to_string()),
        EmulatorError::NoDatabaseSelected => Outcome::Err(1046, b"3D000", e.to_string()),
        other => analysis(other),
    }
}

/// How a statement's rows travel: text rows (COM_QUERY) or binary rows (COM_STMT_EXECUTE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// The text protocol of COM_QUERY.
    Text,
    /// The binary protocol of COM_STMT_EXECUTE.
    Binary,
}

/// Runs one statement (COM_QUERY, or a bound COM_STMT_EXECUTE) and writes its answer.
pub async fn run(
    shared: &Arc<Shared>,
    session: &mut Session,
    sql: &str,
    protocol: Protocol,
    io: &mut PacketIo,
) -> std::io::Result<()> {
    #[cfg(feature = "sql")]
    if session.txn.is_some() {
        return super::transaction::run(shared, session, strip(sql), io).await;
    }
    #[cfg(feature = "sql")]
    if is_begin(sql) {
        return super::transaction::begin(session, strip(sql), io).await;
    }
    #[cfg(feature = "sql")]
    if strip(sql)
        .get(..7)
        .is_some_and(|w| w.eq_ignore_ascii_case("DELETE "))
    {
        return super::delete::run(shared, session, strip(sql), io).await;
    }
    if strip(sql)
        .get(..7)
        .is_some_and(|w| w.eq_ignore_ascii_case("INSERT "))
    {
        #[cfg(feature = "sql")]
        return super::insert::run(shared, session, strip(sql), io).await;
        #[cfg(not(feature = "sql"))]
        return io
            .error(
                1105,
                b"HY000",
                "errCode = 2, detailMessage = this emulator was built without the `sql` feature: no INSERT",
            )
            .await;
    }
    if runs_on_select_engine(sql) {
        #[cfg(feature = "sql")]
        return match super::select::plan(shared, session, strip(sql)).await {
            Ok(planned) => super::select::stream(shared, planned, protocol, io).await,
            Err(e) => io.error(e.code, e.state, &e.message).await,
        };
        #[cfg(not(feature = "sql"))]
        return io
            .error(
                1105,
                b"HY000",
                "errCode = 2, detailMessage = this emulator was built without the `sql` feature: no SELECT over tables or of expressions",
            )
            .await;
    }
    let outcome = execute(shared, session, sql);
    match outcome {
        Outcome::Ok(n) => io.ok(n).await,
        Outcome::Rows(columns, rows) if protocol == Protocol::Binary => {
            io.binary_result_set(&columns, &rows).await
        }
        Outcome::Rows(columns, rows) => io.result_set(&columns, &rows).await,
        Outcome::Err(code, state, message) => io.error(code, state, &message).await,
    }
}

/// The column definitions a statement the FE answers itself would return, found by running
/// it on a copy of the session when it only reads (`SELECT` without tables, `SHOW`, `DESC`);
/// empty for everything else (SET, DDL), which COM_STMT_PREPARE must not run.
pub(crate) fn local_columns(shared: &Shared, session: &Session, sql: &str) -> Vec<ColumnDef> {
    let first = strip(sql)
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_ascii_uppercase();
    if !matches!(first.as_str(), "SELECT" | "SHOW" | "DESC" | "DESCRIBE") {
        return Vec::new();
    }
    match execute(shared, &mut session.clone(), sql) {
        Outcome::Rows(columns, _) => columns,
        _ => Vec::new(),
    }
}

/// `BEGIN …` or `START TRANSACTION`.
#[cfg(feature = "sql")]
fn is_begin(sql: &str) -> bool {
    let upper = strip(sql).to_ascii_uppercase();
    let mut words = upper.split_whitespace();
    match words.next() {
        Some("BEGIN") => true,
        Some("START") => words.next() == Some("TRANSACTION"),
        _ => false,
    }
}

/// Rows of a statement the FE answers itself: column names and text cells.
#[cfg(feature = "sql")]
pub(crate) type LocalRows = (Vec<String>, Vec<Vec<Option<String>>>);

/// Runs a statement the FE answers itself (SET, USE, SHOW, `SELECT @@…`, DDL) for the
/// Flight face: `None` for a statement without rows, the rows otherwise, or the error text.
#[cfg(feature = "sql")]
pub(crate) fn fe_local(
    shared: &Shared,
    session: &mut Session,
    sql: &str,
) -> Result<Option<LocalRows>, String> {
    match execute(shared, session, sql) {
        Outcome::Ok(_) => Ok(None),
        Outcome::Rows(columns, rows) => {
            Ok(Some((columns.into_iter().map(|c| c.name).collect(), rows)))
        }
        Outcome::Err(_, _, message) => Err(message),
    }
}

/// 1044, as Doris answers a database the user holds nothing on.
pub fn database_denied(session: &Session, db: &str) -> (u16, &'static [u8; 5], String) {
    (
        1044,
        b"42000",
        format!(
            "Access denied for user '{}'@'{}' to database '{db}'",
            session.user,
            session.peer.ip()
        ),
    )
}

fn table_denied(session: &Session, command: &str, db: &str, table: &str) -> Outcome {
    analysis(format!(
        "{command} command denied to user '{}'@'{}' for table '{db}.{table}'",
        session.user,
        session.peer.ip()
    ))
}

/// Whether a statement runs on the SELECT engine ("on the BEs"): a SELECT (or WITH …
/// SELECT) that reads tables, or a SELECT of expressions other than the session values the
/// FE answers itself (`@@variables`, `DATABASE()`, …: `variables::fe_answers`).
pub(crate) fn runs_on_select_engine(sql: &str) -> bool {
    if reads_tables(sql) {
        return true;
    }
    let stripped = strip(sql);
    let Some(first) = stripped.get(..7) else {
        return false;
    };
    if !first.eq_ignore_ascii_case("SELECT ") && !first.eq_ignore_ascii_case("SELECT\n") {
        return false;
    }
    let list = &stripped[7..];
    let list = match list.to_ascii_uppercase().rfind(" LIMIT ") {
        Some(at) => &list[..at],
        None => list,
    };
    !variables::fe_answers(list)
}

/// Whether a statement reads tables.
fn reads_tables(sql: &str) -> bool {
    let upper = strip(sql).to_ascii_uppercase();
    let normalized: String = upper
        .chars()
        .map(|c| if c.is_whitespace() { ' ' } else { c })
        .collect();
    (normalized.starts_with("SELECT") || normalized.starts_with("WITH"))
        && normalized.contains(" FROM ")
}

fn strip(sql: &str) -> &str {
    crate::ddl::without_leading_comments(sql)
        .trim()
        .trim_end_matches(';')
        .trim()
}

/// Whether `name` matches the SQL `LIKE` pattern `pattern` (`%`, `_`, `\` escapes).
fn like(name: &str, pattern: &str) -> bool {
    fn go(n: &[char], p: &[char]) -> bool {
        match p.split_first() {
            None => n.is_empty(),
            Some(('%', rest)) => (0..=n.len()).any(|i| go(&n[i..], rest)),
            Some(('_', rest)) => !n.is_empty() && go(&n[1..], rest),
            Some(('\\', rest)) if !rest.is_empty() => {
                n.first() == rest.first() && go(&n[1..], &rest[1..])
            }
            Some((c, rest)) => {
                n.first().is_some_and(|x| x.eq_ignore_ascii_case(c)) && go(&n[1..], rest)
            }
        }
    }
    let n: Vec<char> = name.chars().collect();
    let p: Vec<char> = pattern.chars().collect();
    go(&n, &p)
}

/// Splits `text` on top-level commas (outside quotes and parentheses).
fn split_top_level(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let (mut depth, mut quote) = (0i32, None::<char>);
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        current.push(c);
        match (quote, c) {
            (Some(q), '\\') if q != '`' => {
                if let Some(n) = chars.next() {
                    current.push(n);
                }
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"' | '`') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => depth -= 1,
            (None, ',') if depth == 0 => {
                current.pop();
                parts.push(std::mem::take(&mut current));
            }
            _ => {}
        }
    }
    parts.push(current);
    parts.into_iter().map(|p| p.trim().to_owned()).collect()
}

fn unquote(value: &str) -> String {
    let v = value.trim();
    for q in ['\'', '"', '`'] {
        if let Some(inner) = v.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return inner.replace("\\'", "'").replace("''", "'");
        }
    }
    v.to_owned()
}

/// `[db.]tbl` with optional backticks.
fn table_name(session: &Session, text: &str) -> Result<(String, String), Outcome> {
    let text = text.trim();
    let parts: Vec<String> = split_dotted(text);
    match parts.as_slice() {
        [db, t] => Ok((db.clone(), t.clone())),
        [t] => session
            .database
            .clone()
            .map(|db| (db, t.clone()))
            .ok_or_else(|| from_error(&EmulatorError::NoDatabaseSelected)),
        _ => Err(analysis(format!("bad table name {text}"))),
    }
}

fn split_dotted(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut in_tick = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '`' if in_tick && chars.peek() == Some(&'`') => {
                chars.next();
                current.push('`');
            }
            '`' => in_tick = !in_tick,
            '.' if !in_tick => parts.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    parts.push(current);
    parts
}

fn execute(shared: &Shared, session: &mut Session, sql: &str) -> Outcome {
    let sql = strip(sql);
    let upper = sql.to_ascii_uppercase();
    let words: Vec<&str> = upper.split_whitespace().collect();
    let rest_after =
        |n: usize| -> String { sql.split_whitespace().skip(n).collect::<Vec<_>>().join(" ") };
    match words.as_slice() {
        [] => Outcome::Ok(0),
        ["SET", ..] => set(shared, session, &rest_after(1)),
        ["SELECT", ..] => {
            let list = rest_after(1);
            // `select @@version_comment limit 1`, as the mariadb client sends on connect.
            let list = match list.to_ascii_uppercase().rfind(" LIMIT ") {
                Some(at) => list[..at].to_owned(),
                None => list,
            };
            select_variables(session, &list)
        }
        ["USE", ..] => {
            let db = split_dotted(&rest_after(1)).pop().unwrap_or_default();
            if shared.catalog.has_database(&db).unwrap_or(false)
                && !shared.users.has_any(&session.user, &db, None)
            {
                let (code, state, message) = database_denied(session, &db);
                return Outcome::Err(code, state, message);
            }
            match shared.catalog.has_database(&db) {
                Ok(true) => {
                    session.database = Some(db);
                    Outcome::Ok(0)
                }
                _ => from_error(&EmulatorError::UnknownDatabase(db)),
            }
        }
        ["SHOW", "DATABASES", ..] | ["SHOW", "SCHEMAS", ..] => {
            let mut names = vec!["information_schema".to_owned()];
            names.extend(
                shared
                    .catalog
                    .database_names()
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|d| shared.users.has_any(&session.user, d, None)),
            );
            Outcome::Rows(
                vec![ColumnDef::text("Database")],
                names.into_iter().map(|n| vec![Some(n)]).collect(),
            )
        }
        ["SHOW", "TABLES", ..] | ["SHOW", "FULL", "TABLES", ..] => {
            let db = match upper.find(" FROM ").or_else(|| upper.find(" IN ")) {
                Some(at) => {
                    split_dotted(sql[at..].split_whitespace().nth(1).unwrap_or_default()).pop()
                }
                None => session.database.clone(),
            };
            let Some(db) = db else {
                return from_error(&EmulatorError::NoDatabaseSelected);
            };
            // `LIKE 'pattern'` filters the names (never ignored).
            let pattern = upper
                .find(" LIKE ")
                .map(|at| unquote(sql[at + 6..].trim().trim_end_matches(';')));
            // `SHOW FULL TABLES` adds each table's kind (the emulator has no views).
            let full = words.get(1) == Some(&"FULL");
            let mut columns = vec![ColumnDef::text(&format!("Tables_in_{db}"))];
            if full {
                columns.push(ColumnDef::text("Table_type"));
            }
            match shared.catalog.table_names(&db) {
                Ok(names) => Outcome::Rows(
                    columns,
                    names
                        .into_iter()
                        .filter(|t| shared.users.has_any(&session.user, &db, Some(t)))
                        .filter(|t| pattern.as_deref().is_none_or(|p| like(t, p)))
                        .map(|n| {
                            let mut row = vec![Some(n)];
                            if full {
                                row.push(Some("BASE TABLE".to_owned()));
                            }
                            row
                        })
                        .collect(),
                ),
                Err(e) => from_error(&e),
            }
        }
        ["SHOW", "CREATE", "TABLE", ..] => {
            let (db, name) = match table_name(session, &rest_after(3)) {
                Ok(n) => n,
                Err(o) => return o,
            };
            if !shared.users.has_any(&session.user, &db, Some(&name)) {
                return table_denied(session, "SHOW CREATE TABLE", &db, &name);
            }
            match shared.catalog.table(&db, &name) {
                Ok(t) => Outcome::Rows(
                    vec![ColumnDef::text("Table"), ColumnDef::text("Create Table")],
                    vec![vec![
                        Some(name),
                        Some(show_create_table(&t, shared.config.profile.type_spelling)),
                    ]],
                ),
                Err(e) => from_error(&e),
            }
        }
        ["DESC" | "DESCRIBE", ..] | ["SHOW", "COLUMNS", ..] => {
            let target = if words[0] == "SHOW" {
                upper
                    .find(" FROM ")
                    .map(|at| sql[at + 6..].trim().to_owned())
                    .unwrap_or_default()
            } else {
                rest_after(1)
            };
            let (db, name) = match table_name(session, &target) {
                Ok(n) => n,
                Err(o) => return o,
            };
            if !shared.users.has_any(&session.user, &db, Some(&name)) {
                return table_denied(session, "DESCRIBE", &db, &name);
            }
            match shared.catalog.table(&db, &name) {
                Ok(t) => Outcome::Rows(
                    ["Field", "Type", "Null", "Key", "Default", "Extra"]
                        .iter()
                        .map(|c| ColumnDef::text(c))
                        .collect(),
                    if words[0] == "SHOW" {
                        show_columns_rows(&t, shared.config.profile.type_spelling)
                    } else {
                        describe_rows(&t, shared.config.profile.type_spelling)
                    },
                ),
                Err(e) => from_error(&e),
            }
        }
        ["SHOW", "VARIABLES", ..] | ["SHOW", "SESSION", "VARIABLES", ..] => {
            let pattern = upper
                .find(" LIKE ")
                .map(|at| unquote(&sql[at + 6..]).to_ascii_lowercase());
            let rows = pattern
                .iter()
                .filter_map(|p| {
                    variable(session, &p.replace('%', "")).map(|v| vec![Some(p.clone()), Some(v)])
                })
                .collect();
            Outcome::Rows(
                vec![ColumnDef::text("Variable_name"), ColumnDef::text("Value")],
                rows,
            )
        }
        [_, "JOB", ..] if crate::jobs::parse::is_job_statement(sql) => {
            match crate::jobs::execute(shared, &session.user, session.database.as_deref(), strip(sql)) {
                Ok(()) => Outcome::Ok(0),
                Err(message) => analysis(message),
            }
        }
        ["SHOW", "TRANSACTION", ..] => show_transaction(shared, session, sql, &upper),
        ["SHOW", "BACKENDS", ..] => show_backends(shared),
        ["ALTER", "SYSTEM", "MODIFY", "BACKEND", ..] => modify_backend(shared, &rest_after(4)),
        // Outside an explicit transaction Doris answers COMMIT and ROLLBACK with OK (what
        // PyMySQL's `commit()` sends). Explicit transactions run on the MySQL face
        // (`super::transaction`, before this point); elsewhere (the Flight face, a build
        // without the `sql` feature) they are refused rather than accepted as a no-op that
        // would make a later ROLLBACK keep the rows.
        ["COMMIT" | "ROLLBACK", ..] => Outcome::Ok(0),
        ["BEGIN", ..] | ["START", "TRANSACTION", ..] => analysis(
            "explicit transactions (BEGIN … COMMIT) run on the MySQL protocol only",
        ),
        ["CREATE" | "DROP", "USER", ..] | ["GRANT", ..] | ["REVOKE", ..]
            if session.user != "root" =>
        {
            Outcome::Err(1227, b"42000", "Access denied; you need (at least one of) the (GRANT) privilege(s) for this operation".into())
        }
        [verb @ ("CREATE" | "DROP" | "TRUNCATE"), "DATABASE" | "TABLE" | "SCHEMA", ..] => {
            // Doris: CREATE_PRIV to create, DROP_PRIV to drop (checked before the object's
            // existence, so `DROP … IF EXISTS` of a missing table still needs it), LOAD_PRIV
            // to truncate.
            let needed = match *verb {
                "CREATE" => Privilege::Create,
                "DROP" => Privilege::Drop,
                _ => Privilege::Load,
            };
            if ddl_allowed(shared, session, sql, needed) {
                run_ddl(shared, session, sql)
            } else {
                Outcome::Err(1227, b"42000", missing_privilege(needed))
            }
        }
        _ => run_ddl(shared, session, sql),
    }
}

/// Runs a DDL statement (see `crate::ddl`) in the session's database.
fn run_ddl(shared: &Shared, session: &mut Session, sql: &str) -> Outcome {
    let mut db = session.database.clone();
    match crate::ddl::execute(shared, &mut db, sql) {
        Ok(()) => {
            session.database = db;
            crate::persist::save(shared);
            Outcome::Ok(0)
        }
        Err(e) => from_error(&e),
    }
}

/// Whether the session holds `needed` on the database the DDL names (root holds everything).
fn ddl_allowed(shared: &Shared, session: &Session, sql: &str, needed: Privilege) -> bool {
    if session.user == "root" {
        return true;
    }
    // The database named in the statement (`db.t` or the database itself), else the current one.
    let words: Vec<&str> = sql.split_whitespace().collect();
    let name = words
        .iter()
        .skip(2)
        .find(|w| !["IF", "NOT", "EXISTS"].contains(&w.to_ascii_uppercase().as_str()))
        .map(|w| w.split('(').next().unwrap_or_default());
    let is_database = words
        .get(1)
        .is_some_and(|w| w.eq_ignore_ascii_case("DATABASE") || w.eq_ignore_ascii_case("SCHEMA"));
    let db = match name.map(split_dotted) {
        Some(parts) if is_database => parts.last().cloned(),
        Some(parts) if parts.len() >= 2 => parts.get(parts.len() - 2).cloned(),
        _ => session.database.clone(),
    };
    db.is_some_and(|db| shared.users.has_in_database(&session.user, &db, needed))
}

/// Doris's refusal of a statement that needs the global ADMIN privilege, which only `root`
/// holds here; `None` when the session may run it.
fn admin_only(session: &Session) -> Option<Outcome> {
    (session.user != "root").then(|| {
        Outcome::Err(
            1227,
            b"42000",
            "Access denied; you need (at least one of) the (ADMIN) privilege(s) for this operation"
                .into(),
        )
    })
}

fn show_transaction(shared: &Shared, session: &Session, sql: &str, upper: &str) -> Outcome {
    let db = match upper.find(" FROM ") {
        Some(at) => split_dotted(sql[at + 6..].split_whitespace().next().unwrap_or_default()).pop(),
        None => session.database.clone(),
    };
    // `ShowTransactionCommand.validate`: the privilege first (global ADMIN on 2.1 and 3.0,
    // LOAD on the database from 3.1), then the database.
    if shared.config.profile.show_transaction_needs_admin() {
        if let Some(refused) = admin_only(session) {
            return refused;
        }
    } else if let Some(db) = &db
        && !shared
            .users
            .has_in_database(&session.user, db, crate::auth::Privilege::Load)
    {
        return Outcome::Err(
            1227,
            b"42000",
            crate::auth::missing_privilege(crate::auth::Privilege::Load),
        );
    }
    let Some(db) = db else {
        return from_error(&EmulatorError::NoDatabaseSelected);
    };
    let Some(at) = upper.find(" WHERE ") else {
        return analysis("SHOW TRANSACTION needs WHERE ID = … or WHERE LABEL = …");
    };
    let condition = &sql[at + 7..];
    let Some((key, value)) = condition.split_once('=') else {
        return analysis("SHOW TRANSACTION needs WHERE ID = … or WHERE LABEL = …");
    };
    let by = match key.trim().to_ascii_uppercase().as_str() {
        "ID" => match unquote(value).parse::<i64>() {
            Ok(id) => crate::txn::TxnRef::Id(id),
            Err(_) => return analysis("transaction id must be a number"),
        },
        "LABEL" => crate::txn::TxnRef::Label(unquote(value)),
        _ => return analysis("SHOW TRANSACTION needs WHERE ID = … or WHERE LABEL = …"),
    };
    let columns: Vec<ColumnDef> = [
        "TransactionId",
        "Label",
        "Coordinator",
        "TransactionStatus",
        "LoadJobSourceType",
        "PrepareTime",
        "CommitTime",
        "FinishTime",
        "Reason",
        "ErrorReplicasCount",
        "ListenerId",
        "TimeoutMs",
    ]
    .iter()
    .map(|c| ColumnDef::text(c))
    .collect();
    // A label Doris does not know (never used, or forgotten) is an error, never an empty
    // result (`ShowTransactionCommand.handleShowTransaction`).
    if let crate::txn::TxnRef::Label(label) = &by
        && shared.txns.resolve(&db, &by).is_none()
    {
        return analysis(format!("transaction with label {label} does not exist"));
    }
    let rows = shared
        .txns
        .resolve(&db, &by)
        .and_then(|id| shared.txns.describe(id).map(|d| (id, d)))
        .map(|(id, (label, state, prepared, reason))| {
            let millis = prepared
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis())
                .unwrap_or(0);
            vec![
                Some(id.to_string()),
                Some(label),
                Some("BE: 127.0.0.1".into()),
                Some(state.as_str().into()),
                Some("BACKEND_STREAMING".into()),
                Some(millis.to_string()),
                None,
                None,
                Some(reason),
                Some("0".into()),
                Some("-1".into()),
                Some("259200000".into()),
            ]
        })
        .into_iter()
        .collect();
    Outcome::Rows(columns, rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotted_names() {
        assert_eq!(split_dotted("`a.b`.`c``d`"), vec!["a.b", "c`d"]);
        assert_eq!(split_dotted("db.t"), vec!["db", "t"]);
    }
}
