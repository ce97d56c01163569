//! The conformance corpus: statements and answers taken from Apache Doris's own regression
//! suites (`regression-test/suites/…` and their `.out` results), written as cases in
//! `tests/emulator/corpus/*.txt` and run against the emulator over the MySQL protocol.
//!
//! Each file is a script run on a fresh emulator, in a database `regression_test` (as the
//! suites' default database). A case is a statement followed by what Doris answers:
//!
//! ```text
//! == what the case shows              (optional title)
//! INSERT INTO t VALUES (1, 'a')        (one statement, any number of lines)
//! -> ok                                (Doris runs it)
//! SELECT * FROM t ORDER BY k
//! -> rows                              (the rows, tab-separated, \N for NULL, in order;
//! 1<TAB>a                            `-> rows unordered` compares as multisets),
//!                                      (ended by a blank line)
//! DROP USER nobody
//! -> error does not exist              (Doris refuses it, with this text in the message)
//! SHOW CREATE TABLE t
//! -> contains "replication_num"        (some cell of the answer holds this text)
//! ```
//!
//! `LOGIN user password` is not SQL: it opens a connection as that user (the suites'
//! `connect(user=…)`), expecting `-> ok` or `-> error …`. A statement whose first line is
//! `@user password` runs on a new connection as that user (no default database).
//!
//! Every case ends in one of three ways:
//! - **answered as Doris**: the emulator's answer is the expected one;
//! - **refused**: the emulator says it does not run the statement, with Doris's error
//!   shape (1105, `errCode = 2, detailMessage = …`) naming it; the rest of that file is
//!   then skipped, as a setup script stops at its first failure;
//! - **wrong**: any other answer. One wrong answer fails the test: the emulator may not
//!   know a statement, but it never answers one differently from Doris.
//!
//! The test prints `accepted / answered as Doris / total` (docs/emulator.md keeps the
//! figure); `cargo xtask conformance` runs it alone.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

mod common;

use doris_emulator::{Emulator, EmulatorConfig};
use sqlx::Connection;
use sqlx::mysql::{MySqlConnection, MySqlDatabaseError};

/// What Doris answers to a case.
#[derive(Debug, Clone, PartialEq)]
enum Expect {
    Ok,
    Rows { lines: Vec<String>, ordered: bool },
    Contains(String),
    Error(String),
}

#[derive(Debug, Clone)]
struct Case {
    line: usize,
    title: String,
    sql: String,
    expect: Expect,
}

/// How a case ended on the emulator.
#[derive(Debug)]
enum Outcome {
    AsDoris,
    Refused,
    Skipped,
    Wrong(String),
}

fn parse(text: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    let mut title = String::new();
    let mut sql = String::new();
    let mut start = 0;
    while let Some((n, line)) = lines.next() {
        if sql.is_empty() && (line.starts_with('#') || line.trim().is_empty()) {
            continue;
        }
        if let Some(t) = line.strip_prefix("== ") {
            title = t.trim().to_owned();
            continue;
        }
        let Some(expect) = line.strip_prefix("-> ") else {
            if sql.is_empty() {
                start = n + 1;
            }
            sql.push_str(line);
            sql.push('\n');
            continue;
        };
        let expect = match expect.trim() {
            "ok" => Expect::Ok,
            rows @ ("rows" | "rows unordered") => {
                let mut out = Vec::new();
                while let Some((_, row)) = lines.next_if(|(_, l)| !l.is_empty()) {
                    out.push(row.to_owned());
                }
                Expect::Rows {
                    lines: out,
                    ordered: rows == "rows",
                }
            }
            other => match (other.strip_prefix("error"), other.strip_prefix("contains")) {
                (Some(text), _) => Expect::Error(text.trim().to_owned()),
                (_, Some(text)) => Expect::Contains(text.trim().to_owned()),
                _ => panic!("line {}: unknown expectation {other:?}", n + 1),
            },
        };
        cases.push(Case {
            line: start,
            title: std::mem::take(&mut title),
            sql: std::mem::take(&mut sql)
                .trim()
                .trim_end_matches(';')
                .to_owned(),
            expect,
        });
    }
    assert!(sql.trim().is_empty(), "a statement without an expectation");
    cases
}

/// An error the emulator gives for a statement it does not run, in Doris's shape.
fn is_refusal(code: Option<u16>, message: &str) -> bool {
    code == Some(1105)
        && message.starts_with("errCode = 2, detailMessage = ")
        && (message.contains("does not run") || message.contains("not supported"))
}

async fn connect(
    e: &Emulator,
    user: &str,
    password: &str,
    database: Option<&str>,
) -> Result<MySqlConnection, sqlx::Error> {
    let mut options = common::doris_options(e.query_addr().port(), user, password);
    if let Some(db) = database {
        options = options.database(db);
    }
    MySqlConnection::connect_with(&options).await
}

/// `user` and `password` of a `LOGIN u p` line or an `@u p` prefix (quotes optional).
fn credentials(text: &str) -> (String, String) {
    let mut parts = text.split_whitespace();
    let mut next = || {
        parts
            .next()
            .unwrap_or_default()
            .trim_matches('\'')
            .to_owned()
    };
    let user = next();
    (user, next())
}

fn error_text(err: &sqlx::Error) -> (Option<u16>, String) {
    match err {
        sqlx::Error::Database(db) => (
            db.try_downcast_ref::<MySqlDatabaseError>()
                .map(MySqlDatabaseError::number),
            db.message().to_owned(),
        ),
        other => (None, other.to_string()),
    }
}

/// Runs one case; `Err` is the emulator's error (code, message).
async fn run(
    e: &Emulator,
    conn: &mut MySqlConnection,
    sql: &str,
) -> Result<Vec<String>, (Option<u16>, String)> {
    if let Some(rest) = sql.strip_prefix("LOGIN ") {
        let (user, password) = credentials(rest);
        return match connect(e, &user, &password, None).await {
            Ok(c) => {
                let _ = c.close().await;
                Ok(Vec::new())
            }
            Err(err) => Err(error_text(&err)),
        };
    }
    let rows = match sql.strip_prefix('@') {
        Some(rest) => {
            let (first, statement) = rest.split_once('\n').unwrap_or((rest, ""));
            let (user, password) = credentials(first);
            let mut other = connect(e, &user, &password, None)
                .await
                .map_err(|err| error_text(&err))?;
            let rows = sqlx::raw_sql(statement).fetch_all(&mut other).await;
            let _ = other.close().await;
            rows
        }
        None => sqlx::raw_sql(sql).fetch_all(&mut *conn).await,
    }
    .map_err(|err| error_text(&err))?;
    Ok(common::text_rows(&rows, "\\N"))
}

fn judge(expect: &Expect, got: Result<Vec<String>, (Option<u16>, String)>) -> Outcome {
    match (expect, got) {
        (_, Err((code, message))) if is_refusal(code, &message) => Outcome::Refused,
        (Expect::Ok, Ok(_)) => Outcome::AsDoris,
        (Expect::Rows { lines, ordered }, Ok(mut got)) => {
            let mut want = lines.clone();
            if !ordered {
                want.sort();
                got.sort();
            }
            if got == want {
                Outcome::AsDoris
            } else {
                Outcome::Wrong(format!("rows {got:?}, Doris answers {want:?}"))
            }
        }
        (Expect::Contains(text), Ok(got)) => {
            if got.iter().any(|row| row.contains(text.as_str())) {
                Outcome::AsDoris
            } else {
                Outcome::Wrong(format!("no cell holds {text:?}: {got:?}"))
            }
        }
        (Expect::Error(text), Err((_, message))) if message.contains(text.as_str()) => {
            Outcome::AsDoris
        }
        (Expect::Error(text), Err((code, message))) => Outcome::Wrong(format!(
            "error {code:?} {message:?}, Doris's error says {text:?}"
        )),
        (Expect::Error(text), Ok(_)) => {
            Outcome::Wrong(format!("accepted; Doris refuses it ({text:?})"))
        }
        (_, Err((code, message))) => Outcome::Wrong(format!("error {code:?} {message:?}")),
    }
}

fn corpus_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    files
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_corpus_from_doris_regression_suites_is_answered_as_doris_or_refused() {
    let (mut total, mut accepted, mut as_doris) = (0usize, 0usize, 0usize);
    let mut wrong = Vec::new();
    let mut report = Vec::new();
    for file in corpus_files() {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let cases = parse(&std::fs::read_to_string(&file).unwrap());
        assert!(!cases.is_empty(), "{name} has no case");
        let e = Emulator::start(EmulatorConfig::default()).await.unwrap();
        e.execute(None, "CREATE DATABASE regression_test").unwrap();
        let mut conn = connect(&e, "root", "", Some("regression_test"))
            .await
            .unwrap();
        let mut stopped = false;
        let (mut file_ok, mut file_refused) = (0, 0);
        for case in &cases {
            total += 1;
            let outcome = if stopped {
                Outcome::Skipped
            } else {
                judge(&case.expect, run(&e, &mut conn, &case.sql).await)
            };
            match &outcome {
                Outcome::AsDoris => {
                    accepted += 1;
                    as_doris += 1;
                    file_ok += 1;
                }
                Outcome::Refused => {
                    stopped = true;
                    file_refused += 1;
                    report.push(format!(
                        "  refused: {name}:{} {}",
                        case.line,
                        case.sql.lines().next().unwrap_or_default()
                    ));
                }
                Outcome::Skipped => {}
                Outcome::Wrong(detail) => {
                    accepted += 1;
                    wrong.push(format!(
                        "{name}:{} {}\n    {}\n    {detail}",
                        case.line,
                        case.title,
                        case.sql.lines().next().unwrap_or_default()
                    ));
                }
            }
        }
        report.push(format!(
            "{name}: {file_ok}/{} answered as Doris{}",
            cases.len(),
            if file_refused > 0 {
                " (stopped at a refused statement)"
            } else {
                ""
            }
        ));
        let _ = conn.close().await;
    }
    println!(
        "[corpus] {accepted} accepted / {as_doris} answered as Doris / {total} total\n{}",
        report.join("\n")
    );
    assert!(
        wrong.is_empty(),
        "answered differently from Doris:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_case_format_reads_rows_errors_and_titles() {
    let cases = parse(
        "# header\n== first\nSELECT 1\n-> rows\n1\n\nDROP USER x;\n-> error does not exist\n\
         SELECT\n  2\n-> rows unordered\n2\n3\n",
    );
    assert_eq!(cases.len(), 3);
    assert_eq!(cases[0].title, "first");
    assert_eq!(
        cases[0].expect,
        Expect::Rows {
            lines: vec!["1".into()],
            ordered: true
        }
    );
    assert_eq!(cases[1].sql, "DROP USER x");
    assert_eq!(cases[1].expect, Expect::Error("does not exist".into()));
    assert_eq!(cases[2].sql, "SELECT\n  2");
    assert_eq!(cases[2].line, 9);
    assert!(matches!(
        judge(&cases[2].expect, Ok(vec!["3".into(), "2".into()])),
        Outcome::AsDoris
    ));
    assert!(matches!(
        judge(&cases[0].expect, Ok(vec!["2".into()])),
        Outcome::Wrong(_)
    ));
    assert!(matches!(
        judge(
            &Expect::Ok,
            Err((
                Some(1105),
                "errCode = 2, detailMessage = the Doris emulator does not run this statement yet: ALTER USER".into()
            ))
        ),
        Outcome::Refused
    ));
    // A refusal without Doris's shape is a wrong answer, not a refusal.
    assert!(matches!(
        judge(&Expect::Ok, Err((Some(1064), "does not run".into()))),
        Outcome::Wrong(_)
    ));
}
