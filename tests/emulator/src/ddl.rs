//! The statements the emulator runs from scripts (`--init-sql`, [`crate::Emulator::execute`]):
//!
//! `CREATE DATABASE [IF NOT EXISTS] d`, `DROP DATABASE [IF EXISTS] d`, `USE d`,
//! `CREATE TABLE [IF NOT EXISTS] [d.]t (…) …` in Doris syntax, `DROP TABLE [IF EXISTS] [d.]t`,
//! `CREATE TABLE [IF NOT EXISTS] [d.]t LIKE [d.]s`, `TRUNCATE TABLE [d.]t`, `CREATE USER 'u'[@'h'] IDENTIFIED BY 'p'`, and
//! `GRANT|REVOKE SELECT_PRIV[, LOAD_PRIV, ALTER_PRIV, CREATE_PRIV, DROP_PRIV | ALL] ON db.tbl|db.*|*.* TO|FROM 'u'@'h'`.
//! Privilege checks for these statements are the MySQL face's (scripts run as root).

use crate::Shared;
use crate::auth::Privilege;
use crate::error::EmulatorError;

/// Splits a script on `;` outside quotes and comments.
pub fn split_statements(script: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = script.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                current.push(c);
                if c == '\\' && q != '`' {
                    if let Some(n) = chars.next() {
                        current.push(n);
                    }
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' | '`' => {
                    quote = Some(c);
                    current.push(c);
                }
                '-' if chars.peek() == Some(&'-') => {
                    for n in chars.by_ref() {
                        if n == '\n' {
                            current.push('\n');
                            break;
                        }
                    }
                }
                ';' => out.push(std::mem::take(&mut current)),
                _ => current.push(c),
            },
        }
    }
    out.push(current);
    out.into_iter()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// `sql` without the comments before its first word (`-- …` and `# …` lines, `/* … */`
/// blocks), as Doris skips them anywhere a space may stand.
pub fn without_leading_comments(sql: &str) -> &str {
    let mut rest = sql.trim_start();
    loop {
        if rest.starts_with("--") || rest.starts_with('#') {
            rest = rest
                .split_once('\n')
                .map_or("", |(_, after)| after)
                .trim_start();
        } else if let Some(body) = rest.strip_prefix("/*") {
            if body.starts_with('+') {
                // An optimizer hint belongs to the statement.
                return rest;
            }
            rest = body
                .split_once("*/")
                .map_or("", |(_, after)| after)
                .trim_start();
        } else {
            return rest;
        }
    }
}

/// Reads a possibly backtick-quoted, possibly qualified name: `a`, `` `a` ``, `a.b`.
fn qualified_name(text: &str) -> (Option<String>, String) {
    let unquote = |s: &str| {
        let s = s.trim();
        s.strip_prefix('`')
            .and_then(|s| s.strip_suffix('`'))
            .map_or_else(|| s.to_owned(), |s| s.replace("``", "`"))
    };
    match text.trim().split_once('.') {
        Some((db, name))
            if !text.trim().starts_with('`')
                || text.trim().starts_with("`") && db.ends_with('`') =>
        {
            (Some(unquote(db)), unquote(name))
        }
        _ => (None, unquote(text)),
    }
}

/// Splits `name rest…` at the first whitespace outside backticks.
fn split_name(text: &str) -> (String, String) {
    let mut in_tick = false;
    for (at, c) in text.char_indices() {
        match c {
            '`' => in_tick = !in_tick,
            c if c.is_whitespace() && !in_tick => {
                return (text[..at].to_owned(), text[at..].trim().to_owned());
            }
            _ => {}
        }
    }
    (text.trim().to_owned(), String::new())
}

/// The partitions of `TRUNCATE TABLE t PARTITION[S] (p, …)` / `PARTITION p` (`None`: the
/// whole table).
fn truncated_partitions(clause: &str) -> Result<Option<Vec<String>>, EmulatorError> {
    let clause = clause.trim().trim_end_matches(';').trim();
    if clause.is_empty() {
        return Ok(None);
    }
    let upper = clause.to_ascii_uppercase();
    let rest = if upper.starts_with("PARTITIONS") {
        &clause["PARTITIONS".len()..]
    } else if upper.starts_with("PARTITION") {
        &clause["PARTITION".len()..]
    } else {
        return Err(EmulatorError::Analysis(format!(
            "Syntax error in TRUNCATE TABLE near {clause:?}"
        )));
    };
    let rest = rest.trim();
    let list = rest
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or(rest);
    let names: Vec<String> = list
        .split(',')
        .map(|n| n.trim().trim_matches('`').to_owned())
        .filter(|n| !n.is_empty())
        .collect();
    if names.is_empty() {
        return Err(EmulatorError::Analysis(
            "Syntax error in TRUNCATE TABLE: no partition named".into(),
        ));
    }
    Ok(Some(names))
}

fn words(stmt: &str) -> Vec<String> {
    stmt.split_whitespace()
        .map(str::to_ascii_uppercase)
        .collect()
}

/// Runs every statement of a script; `USE` changes the database for the following ones.
pub fn execute_script(
    shared: &Shared,
    current_db: Option<&str>,
    script: &str,
) -> Result<(), EmulatorError> {
    let mut db = current_db.map(str::to_owned);
    for stmt in split_statements(script) {
        execute(shared, &mut db, &stmt)?;
    }
    Ok(())
}

/// Runs one statement.
pub fn execute(shared: &Shared, db: &mut Option<String>, stmt: &str) -> Result<(), EmulatorError> {
    let stmt = without_leading_comments(stmt);
    let w = words(stmt);
    let tail = |n: usize| {
        stmt.split_whitespace()
            .skip(n)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let w: Vec<&str> = w.iter().map(String::as_str).collect();
    match w.as_slice() {
        ["CREATE", "DATABASE", "IF", "NOT", "EXISTS", ..] => {
            let name = qualified_name(&tail(5)).1;
            crate::names::check_database_name(&name)?;
            shared.catalog.create_database(&name, true)
        }
        ["CREATE", "DATABASE", ..] => {
            let name = qualified_name(&tail(2)).1;
            crate::names::check_database_name(&name)?;
            shared.catalog.create_database(&name, false)
        }
        ["DROP", "DATABASE", "IF", "EXISTS", ..] => shared
            .catalog
            .drop_database(&qualified_name(&tail(4)).1, true),
        ["DROP", "DATABASE", ..] => shared
            .catalog
            .drop_database(&qualified_name(&tail(2)).1, false),
        ["USE", ..] => {
            let name = qualified_name(&tail(1)).1;
            if !shared.catalog.has_database(&name)? {
                return Err(EmulatorError::UnknownDatabase(name));
            }
            *db = Some(name);
            Ok(())
        }
        ["CREATE", "TABLE", "IF", "NOT", "EXISTS", _, "LIKE", _] => {
            create_table_like(shared, db.as_deref(), stmt, 5, true)
        }
        ["CREATE", "TABLE", _, "LIKE", _] => {
            create_table_like(shared, db.as_deref(), stmt, 2, false)
        }
        ["CREATE", "TABLE", "IF", "NOT", "EXISTS", ..] => shared
            .catalog
            .create_table(db.as_deref(), stmt, true)
            .map(|_| ()),
        ["CREATE", "TABLE", ..] => shared
            .catalog
            .create_table(db.as_deref(), stmt, false)
            .map(|_| ()),
        ["DROP", "TABLE", ..] | ["TRUNCATE", "TABLE", ..] => {
            let if_exists = w.get(2) == Some(&"IF");
            let (target, clause) = split_name(&tail(if if_exists { 4 } else { 2 }));
            let (qualifier, name) = qualified_name(&target);
            let database = qualifier
                .or_else(|| db.clone())
                .ok_or(EmulatorError::NoDatabaseSelected)?;
            if w[0] == "DROP" {
                // `FORCE` skips Doris's recycle bin, which the emulator does not keep.
                if !(clause.is_empty() || clause.eq_ignore_ascii_case("FORCE")) {
                    return Err(EmulatorError::Analysis(format!(
                        "Syntax error in DROP TABLE near {clause:?}"
                    )));
                }
                shared.catalog.drop_table(&database, &name, if_exists)
            } else {
                let table = shared.catalog.table(&database, &name)?;
                match truncated_partitions(&clause)? {
                    None => table.truncate(),
                    Some(names) => table.truncate_partitions(&names),
                }
            }
        }
        ["CREATE", "USER", ..] => {
            let if_not_exists = w.get(2..5) == Some(&["IF", "NOT", "EXISTS"][..]);
            let spec = crate::users::parse_create_user(stmt)?;
            let (user, password) = (spec.user, spec.password);
            if shared.users.password(&user).is_some() {
                // Doris: ERR 1396 for an existing user, unless IF NOT EXISTS (then nothing
                // changes, the password included).
                return if if_not_exists {
                    Ok(())
                } else {
                    Err(EmulatorError::Analysis(format!(
                        "Operation CREATE USER failed for '{user}'@'%'"
                    )))
                };
            }
            shared.users.set(&user, &password);
            Ok(())
        }
        ["DROP", "USER", ..] => {
            let if_exists = w.get(2..4) == Some(&["IF", "EXISTS"][..]);
            let user = crate::users::parse_drop_user(stmt)?;
            if shared.users.remove(&user) || if_exists {
                Ok(())
            } else {
                Err(EmulatorError::Analysis(format!(
                    "Operation DROP USER failed for '{user}'@'%'"
                )))
            }
        }
        ["GRANT", ..] | ["REVOKE", ..] => grant_or_revoke(shared, stmt, w[0] == "GRANT"),
        _ => Err(EmulatorError::Analysis(format!(
            "the Doris emulator does not run this statement yet: {}",
            w.iter().take(3).copied().collect::<Vec<_>>().join(" ")
        ))),
    }
}

/// `CREATE TABLE [IF NOT EXISTS] [d.]new LIKE [d.]existing`: the same columns, keys, model,
/// partitions, buckets and properties, and no rows (as Doris copies the DDL, not the data).
/// `skip` is the number of words before the new table's name.
fn create_table_like(
    shared: &Shared,
    current_db: Option<&str>,
    stmt: &str,
    skip: usize,
    if_not_exists: bool,
) -> Result<(), EmulatorError> {
    let rest: Vec<&str> = stmt.split_whitespace().skip(skip).collect();
    let (target, source) = match rest.as_slice() {
        [target, _like, source] => (qualified_name(target), qualified_name(source)),
        _ => {
            return Err(EmulatorError::Analysis(
                "CREATE TABLE … LIKE needs two names".into(),
            ));
        }
    };
    let resolve = |(qualifier, name): (Option<String>, String)| {
        qualifier
            .or_else(|| current_db.map(str::to_owned))
            .map(|db| (db, name))
            .ok_or(EmulatorError::NoDatabaseSelected)
    };
    let (source_db, source_name) = resolve(source)?;
    let (target_db, target_name) = resolve(target)?;
    let existing = shared.catalog.table(&source_db, &source_name)?;
    let mut schema = existing.schema.clone();
    schema.name = target_name;
    schema.database = Some(target_db.clone());
    shared
        .catalog
        .create_table_from_schema(&target_db, schema, if_not_exists)
        .map(|_| ())
}

/// `GRANT privs ON target TO user` / `REVOKE privs ON target FROM user`.
fn grant_or_revoke(shared: &Shared, stmt: &str, grant: bool) -> Result<(), EmulatorError> {
    let bad = || {
        EmulatorError::Analysis(
            "expected GRANT|REVOKE <privileges> ON <db>.<table> TO|FROM '<user>'@'<host>'".into(),
        )
    };
    let upper = stmt.to_ascii_uppercase();
    let Some(on) = upper.find(" ON ") else {
        // `GRANT 'role' TO u`: roles are not emulated.
        return Err(EmulatorError::Analysis(format!(
            "the Doris emulator does not run {} of roles yet",
            if grant { "GRANT" } else { "REVOKE" }
        )));
    };
    let to = upper
        .find(if grant { " TO " } else { " FROM " })
        .filter(|at| *at > on)
        .ok_or_else(bad)?;
    let privileges_text = &stmt[stmt.find(char::is_whitespace).ok_or_else(bad)?..on];
    let target = stmt[on + 4..to].trim();
    let user_text = stmt[to + if grant { 4 } else { 6 }..].trim();
    if user_text.to_ascii_uppercase().starts_with("ROLE ") {
        return Err(EmulatorError::Analysis(format!(
            "the Doris emulator does not run {} on roles yet",
            if grant { "GRANT" } else { "REVOKE" }
        )));
    }
    let user = user_text
        .split('@')
        .next()
        .unwrap_or_default()
        .trim_matches(['\'', '"', '`'])
        .to_owned();
    let mut privileges = Vec::new();
    for word in privileges_text.split(',') {
        let word = word.trim().to_ascii_uppercase();
        if word == "ALL" || word == "ALL PRIVILEGES" {
            privileges.extend([
                Privilege::Select,
                Privilege::Load,
                Privilege::Alter,
                Privilege::Create,
                Privilege::Drop,
            ]);
        } else {
            privileges.push(Privilege::parse(&word).ok_or_else(|| {
                EmulatorError::Analysis(format!(
                    "the Doris emulator does not run grants of {word} yet"
                ))
            })?);
        }
    }
    let parts: Vec<String> = target
        .split('.')
        .map(|p| p.trim().trim_matches('`').to_owned())
        .collect();
    let (database, table) = match parts.as_slice() {
        [d, t] => (d.clone(), t.clone()),
        [_catalog, d, t] => (d.clone(), t.clone()),
        _ => return Err(bad()),
    };
    if shared.users.password(&user).is_none() {
        return Err(EmulatorError::Analysis(format!(
            "user '{user}'@'%' does not exist"
        )));
    }
    if grant {
        shared.users.grant(&user, &database, &table, &privileges);
    } else {
        shared.users.revoke(&user, &database, &table, &privileges);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_outside_quotes_and_comments() {
        assert_eq!(
            split_statements("a ';' b; -- c;\nd `;`;;  "),
            vec!["a ';' b".to_owned(), "d `;`".to_owned()]
        );
    }

    #[test]
    fn leading_comments_are_skipped_but_hints_kept() {
        assert_eq!(
            without_leading_comments("-- a\n# b\n /* c */ SELECT 1"),
            "SELECT 1"
        );
        assert_eq!(
            without_leading_comments("/*+ SET_VAR(x=1) */ SELECT 1"),
            "/*+ SET_VAR(x=1) */ SELECT 1"
        );
        assert_eq!(without_leading_comments("-- only a comment"), "");
    }

    #[test]
    fn create_user_if_not_exists_creates_once() {
        let shared = crate::Shared::new(crate::EmulatorConfig::default());
        let mut db = None;
        execute(
            &shared,
            &mut db,
            "CREATE USER IF NOT EXISTS 'u1'@'%' IDENTIFIED BY 'p1'",
        )
        .unwrap();
        assert_eq!(shared.users.password("u1").as_deref(), Some("p1"));
        execute(
            &shared,
            &mut db,
            "CREATE USER IF NOT EXISTS 'u1' IDENTIFIED BY 'other'",
        )
        .unwrap();
        assert_eq!(
            shared.users.password("u1").as_deref(),
            Some("p1"),
            "unchanged"
        );
        assert!(execute(&shared, &mut db, "CREATE USER 'u1' IDENTIFIED BY 'p'").is_err());
    }

    #[test]
    fn names() {
        assert_eq!(qualified_name("`d`.`t`"), (Some("d".into()), "t".into()));
        assert_eq!(qualified_name("t"), (None, "t".into()));
        assert_eq!(qualified_name("`a``b`"), (None, "a`b".into()));
    }
}
