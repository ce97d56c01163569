//! The wire log: the shape of every request the emulator receives, for the wire-inventory
//! check (`cargo xtask ci` compares the crates' shapes with docs/wire-inventory.md).
//!
//! Set `DORIS_EMULATOR_WIRE_LOG` to a folder (or [`EmulatorConfig::wire_log`]) and each
//! emulator appends one JSON line per shape it has not logged before to
//! `<folder>/<program>-<pid>.tsv`: client, face and shape, tab-separated. A shape keeps
//! what decides whether Doris accepts a request and drops what varies per call: SQL
//! keywords, operators and punctuation stay; identifiers, literals and labels become `?`,
//! `'?'`, `N`; repeated list items collapse into one (see [`sql_shape`]). No value, text or
//! secret reaches the file: a shape holds no literal.
//!
//! The client is who sent it, as far as the wire tells: the MySQL `_client_name`
//! connection attribute (PyMySQL, libmariadb), the HTTP and gRPC `User-Agent` product
//! (the crates send `doris-streamload/…`, `doris-plan/…`, `doris-read/…`), `unnamed`
//! when the client says nothing (sqlx, which the crates use, sends no attributes), and
//! `fixture` for a statement that starts with the comment `/* fixture */` (a test's own
//! set-up SQL).
//!
//! [`EmulatorConfig::wire_log`]: crate::EmulatorConfig::wire_log

use std::collections::HashSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The environment variable naming the folder the wire log goes to.
pub const WIRE_LOG_ENV: &str = "DORIS_EMULATOR_WIRE_LOG";

/// The comment that marks a test's own set-up statement (client `fixture`).
pub const FIXTURE_MARK: &str = "/* fixture */";

/// Appends request shapes, each once per process, to one file.
#[derive(Debug)]
pub struct WireLog {
    file: Mutex<std::fs::File>,
}

/// One logged line: client, face, shape.
type Logged = (String, &'static str, String);

/// The shapes this process logged (every emulator of a test binary shares its file).
static SEEN: Mutex<Option<HashSet<Logged>>> = Mutex::new(None);

impl WireLog {
    /// Opens `<dir>/<program>-<pid>.tsv` for appending (the folder is created).
    pub fn open(dir: &Path) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let program = std::env::current_exe()
            .ok()
            .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "unknown".into());
        let path: PathBuf = dir.join(format!("{program}-{}.tsv", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Self {
            file: Mutex::new(file),
        })
    }

    /// Logs `shape` received on `face` from `client`, unless already logged.
    pub fn record(&self, client: &str, face: &'static str, shape: String) {
        let key = (client.to_owned(), face, shape);
        let Ok(mut seen) = SEEN.lock() else {
            return;
        };
        let seen = seen.get_or_insert_with(HashSet::new);
        if seen.contains(&key) {
            return;
        }
        // A client name comes from the wire: no tab or line break of its own survives.
        let client: String = key
            .0
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        if let Ok(mut file) = self.file.lock() {
            // One write per line: appends from several emulators never interleave. A
            // shape holds no whitespace but single spaces (see `sql_shape`).
            let _ = file.write_all(format!("{client}\t{face}\t{}\n", key.2).as_bytes());
        }
        seen.insert(key);
    }

    /// Logs a SQL statement: its client is `fixture` when it carries [`FIXTURE_MARK`].
    pub fn record_sql(&self, client: &str, face: &'static str, sql: &str) {
        let client = if sql.trim_start().starts_with(FIXTURE_MARK) {
            "fixture"
        } else {
            client
        };
        self.record(client, face, sql_shape(sql));
    }
}

/// The client a `User-Agent` names: its first product's name (`doris-streamload/0.1` →
/// `doris-streamload`), `unnamed` without one.
pub fn client_of_user_agent(user_agent: Option<&str>) -> String {
    user_agent
        .and_then(|ua| ua.split_whitespace().next())
        .map(|product| product.split('/').next().unwrap_or(product))
        .filter(|name| !name.is_empty())
        .map_or_else(|| "unnamed".to_owned(), str::to_owned)
}

/// One token of a statement's shape.
fn tokens(sql: &str) -> Vec<String> {
    let bytes = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'-' && bytes.get(i + 1) == Some(&b'-') || c == b'#' {
            // A line comment.
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && bytes.get(i + 1) == Some(&b'*') {
            let hint = bytes.get(i + 2) == Some(&b'+');
            let end = sql[i + 2..]
                .find("*/")
                .map_or(bytes.len(), |e| i + 2 + e + 2);
            if hint {
                out.push("/*+ … */".to_owned());
            }
            i = end;
        } else if c == b'`' {
            i = skip_quoted(bytes, i, b'`');
            out.push("`?`".to_owned());
        } else if c == b'\'' || c == b'"' {
            i = skip_quoted(bytes, i, c);
            out.push(if c == b'\'' { "'?'" } else { "\"?\"" }.to_owned());
        } else if c.is_ascii_digit() {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.') {
                i += 1;
            }
            out.push("N".to_owned());
        } else if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            let start = i;
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric()
                    || bytes[i] == b'_'
                    || bytes[i] == b'$'
                    || bytes[i] >= 0x80)
            {
                i += 1;
            }
            let word = &sql[start..i];
            // The crates write keywords, functions and types in upper case; anything else
            // unquoted is a name (a label, a job's column, a session variable).
            if word.bytes().any(|b| b.is_ascii_lowercase() || b >= 0x80) {
                out.push("?".to_owned());
            } else {
                out.push(word.to_owned());
            }
        } else {
            let rest = &sql[i..];
            let operator = ["<=>", "<=", ">=", "<>", "!=", "||", "&&", "@@"]
                .into_iter()
                .find(|op| rest.starts_with(op));
            let len =
                operator.map_or_else(|| rest.chars().next().map_or(1, char::len_utf8), str::len);
            out.push(rest[..len].to_owned());
            i += len;
        }
    }
    out
}

/// The index after the quoted text starting at `start` (doubled quotes and backslash
/// escapes inside).
fn skip_quoted(bytes: &[u8], start: usize, quote: u8) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        if bytes[i] == b'\\' && quote != b'`' {
            i += 2;
        } else if bytes[i] == quote {
            if bytes.get(i + 1) == Some(&quote) {
                i += 2;
            } else {
                return i + 1;
            }
        } else {
            i += 1;
        }
    }
    bytes.len()
}

/// Removes `, X` after an `X` of up to `max` tokens, until no list repeats.
fn collapse_lists(tokens: &mut Vec<String>, max: usize) {
    let mut changed = true;
    while changed {
        changed = false;
        let mut i = 0;
        while i < tokens.len() {
            let mut removed = false;
            for k in 1..=max {
                let (item, comma, next) = (i..i + k, i + k, i + k + 1..i + 2 * k + 1);
                if next.end > tokens.len() {
                    break;
                }
                if tokens[comma] == "," && tokens[item] == tokens[next.clone()] {
                    tokens.drain(comma..next.end);
                    removed = true;
                    changed = true;
                    break;
                }
            }
            if !removed {
                i += 1;
            }
        }
    }
}

/// Replaces the parenthesised group that opens at `open` with `( … )`.
fn abstract_group(tokens: &mut Vec<String>, open: usize) {
    let mut depth = 0usize;
    for j in open..tokens.len() {
        match tokens[j].as_str() {
            "(" => depth += 1,
            ")" => {
                depth -= 1;
                if depth == 0 {
                    tokens.splice(open..=j, ["(".to_owned(), "…".to_owned(), ")".to_owned()]);
                    return;
                }
            }
            _ => {}
        }
    }
}

/// The shape of a SQL statement: identifiers `` `?` ``, string literals `'?'`, numbers
/// `N`, unquoted lower-case names `?`, comments dropped (hints kept as `/*+ … */`),
/// repeated list items collapsed into one; and what the crates fill in from user input
/// abstracted into `…`: a top-level `SELECT`'s `WHERE` predicate (doris-sql's rendering
/// of the user's filter), a `CREATE TABLE`'s column definitions and `PROPERTIES`.
pub fn sql_shape(sql: &str) -> String {
    let mut tokens = tokens(sql);
    while tokens.last().is_some_and(|t| t == ";") {
        tokens.pop();
    }
    // A read's predicate: from a top-level WHERE to a top-level LIMIT or the end.
    if tokens.first().is_some_and(|t| t == "SELECT") {
        let mut depth = 0i32;
        let mut at = None;
        for (j, t) in tokens.iter().enumerate() {
            match t.as_str() {
                "(" => depth += 1,
                ")" => depth -= 1,
                "WHERE" if depth == 0 && at.is_none() => at = Some(j),
                "LIMIT" if depth == 0 => {
                    if let Some(w) = at.take() {
                        tokens.splice(w + 1..j, ["…".to_owned()]);
                    }
                    break;
                }
                _ => {}
            }
        }
        if let Some(w) = at {
            tokens.truncate(w + 1);
            tokens.push("…".to_owned());
        }
    }
    if tokens.first().is_some_and(|t| t == "CREATE") && tokens.iter().take(3).any(|t| t == "TABLE")
    {
        if let Some(open) = tokens.iter().position(|t| t == "(") {
            abstract_group(&mut tokens, open);
        }
        if let Some(p) = tokens.iter().position(|t| t == "PROPERTIES")
            && tokens.get(p + 1).is_some_and(|t| t == "(")
        {
            abstract_group(&mut tokens, p + 1);
        }
    }
    collapse_lists(&mut tokens, 16);
    let mut shape = String::new();
    for t in &tokens {
        let glue = matches!(t.as_str(), "," | ")" | ".")
            || shape.ends_with('(')
            || shape.ends_with('.')
            || shape.ends_with("@@")
            || shape.is_empty()
            || (t == "(" && shape.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '?'));
        if !glue {
            shape.push(' ');
        }
        shape.push_str(t);
    }
    shape
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_literals_and_labels_are_abstracted() {
        assert_eq!(
            sql_shape("SHOW TRANSACTION FROM `d` WHERE LABEL = 'daft_doris_x'"),
            "SHOW TRANSACTION FROM `?` WHERE LABEL = '?'"
        );
        assert_eq!(
            sql_shape("BEGIN WITH LABEL daft_doris_k_2D1"),
            "BEGIN WITH LABEL ?"
        );
        assert_eq!(sql_shape("SET insert_timeout = 3600"), "SET ? = N");
        assert_eq!(sql_shape("SELECT @@version_comment"), "SELECT @@?");
    }

    #[test]
    fn lists_collapse_into_one_item() {
        assert_eq!(
            sql_shape(
                "INSERT INTO `d`.`t` (`a`, `b`, `c`) SELECT `a`, `b`, `c` FROM `d`.`s` WHERE `__dd_load` IN (1, 2, 3)"
            ),
            "INSERT INTO `?`.`?` (`?`) SELECT `?` FROM `?`.`?` WHERE `?` IN(N)"
        );
        assert_eq!(
            sql_shape("INSERT INTO t VALUES ('a', 1), ('b', 2)"),
            sql_shape("INSERT INTO t VALUES ('x', 9)")
        );
    }

    #[test]
    fn a_reads_predicate_and_a_tables_columns_are_abstracted() {
        assert_eq!(
            sql_shape("SELECT `a` FROM `d`.`t` WHERE (`a` > 1 AND `b` LIKE 'x%') LIMIT 5"),
            "SELECT `?` FROM `?`.`?` WHERE … LIMIT N"
        );
        assert_eq!(
            sql_shape("SELECT COUNT(*) FROM `d`.`t` TABLET(1, 2) WHERE `a` IS NULL"),
            "SELECT COUNT(*) FROM `?`.`?` TABLET(N) WHERE …"
        );
        assert_eq!(
            sql_shape(
                "CREATE TABLE `d`.`t` (`k` INT NOT NULL, `v` DECIMAL(10, 2)) DUPLICATE KEY(`k`) \
                 DISTRIBUTED BY HASH(`k`) BUCKETS 1 PROPERTIES (\"replication_num\" = \"1\")"
            ),
            "CREATE TABLE `?`.`?` (…) DUPLICATE KEY(`?`) DISTRIBUTED BY HASH(`?`) BUCKETS N PROPERTIES(…)"
        );
    }

    #[test]
    fn comments_go_and_hints_stay() {
        assert_eq!(sql_shape("/* fixture */ SELECT 1;"), "SELECT N");
        assert_eq!(
            sql_shape("SELECT /*+ SET_VAR(a=1) */ 1"),
            "SELECT /*+ … */ N"
        );
    }

    #[test]
    fn user_agents_name_their_client() {
        assert_eq!(client_of_user_agent(Some("doris-plan/0.1.0")), "doris-plan");
        assert_eq!(
            client_of_user_agent(Some("doris-read/0.1.0 tonic/0.14")),
            "doris-read"
        );
        assert_eq!(client_of_user_agent(None), "unnamed");
    }
}
