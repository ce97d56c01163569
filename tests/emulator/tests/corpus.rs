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
//! `STREAM LOAD table` is not SQL either: it is the suites' `streamLoad { … }` block, sent
//! with `curl --location-trusted` to the FE as root. Its header lines (`name: value`) follow,
//! then the body between a `<<<` line and a `>>>` line (each line ends with a newline).
//! `-> load` checks fields of Doris's JSON answer, as the suites' `check` closures do:
//!
//! ```text
//! STREAM LOAD t
//! column_separator: ,
//! <<<
//! 1,a
//! >>>
//! -> load Status=Success NumberLoadedRows=1 Message~"text it contains"
//! ```
//!
//! A load the emulator does not run is answered `Fail` with a message naming the emulator
//! (`the Doris emulator does not emulate the `partitions` header`): it counts as refused.
//!
//! A statement whose first line is `FLIGHT` runs over Arrow Flight SQL instead (the
//! `arrow_flight_sql` suites' `qt_` queries), as root, with arrow-flight's own Flight SQL
//! client: handshake, `GetFlightInfo`, then `DoGet` of every endpoint at its location.
//! Cells are rendered as those suites' `.out` files show them (NULL as `\N`, datetimes as
//! `YYYY-MM-DD HH:MM:SS[.ffffff]`). A Flight session has no default database, so table
//! names are qualified.
//!
//! Every case ends in one of three ways:
//! - **answered as Doris**: the emulator's answer is the expected one;
//! - **refused**: the emulator says it does not run the statement, with Doris's error
//!   shape (1105, `errCode = 2, detailMessage = …`) naming it; the rest of that file is
//!   then skipped, as a setup script stops at its first failure;
//! - **wrong**: any other answer. One wrong answer fails the test: the emulator may not
//!   know a statement, but it never answers one differently from Doris.
//!
//! Each file declares its floor in a header line `# floor: N`: the number of its cases the
//! emulator answers as Doris. Fewer fails the test, so an emulator that refused every
//! statement (or a case that starts being refused) cannot pass unnoticed.
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
    Rows {
        lines: Vec<String>,
        ordered: bool,
    },
    Contains(String),
    Error(String),
    /// Fields of a Stream Load answer: `(field, expected, exact)`; not exact: contains.
    Load(Vec<(String, String, bool)>),
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
            other if other.starts_with("load") => Expect::Load(load_checks(&other[4..])),
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

/// The checks of a `-> load` line: `Field=value` (equal) or `Field~value` (contains);
/// a value may be double-quoted to hold spaces.
fn load_checks(text: &str) -> Vec<(String, String, bool)> {
    let mut checks = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let at = rest
            .find(['=', '~'])
            .unwrap_or_else(|| panic!("a load check without = or ~: {rest:?}"));
        let field = rest[..at].trim().to_owned();
        let exact = rest.as_bytes()[at] == b'=';
        let after = &rest[at + 1..];
        let (value, tail) = match after.strip_prefix('"') {
            Some(quoted) => {
                let end = quoted.find('"').expect("a closing quote");
                (&quoted[..end], &quoted[end + 1..])
            }
            None => after.split_at(after.find(' ').unwrap_or(after.len())),
        };
        checks.push((field, value.to_owned(), exact));
        rest = tail.trim_start();
    }
    checks
}

/// Sends a `STREAM LOAD` case with curl; `Ok` holds Doris's JSON answer as one row.
fn stream_load(e: &Emulator, case: &str) -> Result<Vec<String>, (Option<u16>, String)> {
    let (first, rest) = case.split_once('\n').unwrap_or((case, ""));
    let table = first.trim_start_matches("STREAM LOAD").trim();
    let (db, table) = table.split_once('.').unwrap_or(("regression_test", table));
    let (headers, body) = rest
        .split_once("<<<\n")
        .expect("a STREAM LOAD case has a <<< line");
    let body = body
        .strip_suffix(">>>")
        .expect("a STREAM LOAD body ends with a >>> line");
    let headers: Vec<String> = headers
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (name, value) = l.split_once(':').expect("a header line is `name: value`");
            format!("{}:{}", name.trim(), value.trim())
        })
        .collect();
    let file = std::env::temp_dir().join(format!(
        "doris-corpus-{}-{}.body",
        std::process::id(),
        uuid_like()
    ));
    std::fs::write(&file, body).unwrap();
    let url = format!("http://{}/api/{db}/{table}/_stream_load", e.fe_http_addr());
    let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let out = common::curl_stream_load(&url, &file.to_string_lossy(), "root:", &header_refs);
    let _ = std::fs::remove_file(&file);
    if !out.status.success() {
        return Err((None, String::from_utf8_lossy(&out.stderr).into_owned()));
    }
    Ok(vec![String::from_utf8_lossy(&out.stdout).into_owned()])
}

/// A name no other body file of this process uses.
fn uuid_like() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Runs `sql` over the emulator's Flight SQL faces; the rows as text.
async fn flight_rows(e: &Emulator, sql: &str) -> Result<Vec<String>, String> {
    use arrow_flight::sql::client::FlightSqlServiceClient;
    use futures::TryStreamExt;

    async fn client(
        uri: String,
    ) -> Result<FlightSqlServiceClient<tonic::transport::Channel>, String> {
        let channel = tonic::transport::Endpoint::from_shared(uri)
            .map_err(|err| err.to_string())?
            .connect()
            .await
            .map_err(|err| err.to_string())?;
        Ok(FlightSqlServiceClient::new(channel))
    }
    let (fe, _) = e.flight_addrs().expect("the emulator serves Flight SQL");
    let mut fe = client(format!("http://{fe}")).await?;
    fe.handshake("root", "")
        .await
        .map_err(|err| err.to_string())?;
    let info = fe
        .execute(sql.to_owned(), None)
        .await
        .map_err(|err| err.to_string())?;
    let mut rows = Vec::new();
    for endpoint in info.endpoint {
        let ticket = endpoint.ticket.ok_or("an endpoint without a ticket")?;
        let mut be = match endpoint.location.first() {
            Some(location) => client(location.uri.replace("grpc+tcp://", "http://")).await?,
            None => fe.clone(),
        };
        let batches: Vec<arrow::record_batch::RecordBatch> = be
            .do_get(ticket)
            .await
            .map_err(|err| err.to_string())?
            .try_collect()
            .await
            .map_err(|err| err.to_string())?;
        for batch in &batches {
            rows.extend(text_of_batch(batch)?);
        }
    }
    Ok(rows)
}

/// A batch's rows, tab-separated, as the suites' `.out` files show Flight results.
fn text_of_batch(batch: &arrow::record_batch::RecordBatch) -> Result<Vec<String>, String> {
    use arrow::util::display::{ArrayFormatter, FormatOptions};
    let options = FormatOptions::default()
        .with_null("\\N")
        .with_timestamp_format(Some("%Y-%m-%d %H:%M:%S%.f"))
        // A zoned DATETIME (the BE writes the instant in the session's zone) is shown as its
        // wall clock in that zone, as the suites' Flight clients show it.
        .with_timestamp_tz_format(Some("%Y-%m-%d %H:%M:%S%.f"));
    let formatters = batch
        .columns()
        .iter()
        .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| err.to_string())?;
    Ok((0..batch.num_rows())
        .map(|row| {
            formatters
                .iter()
                .map(|f| f.value(row).to_string())
                .collect::<Vec<_>>()
                .join("\t")
        })
        .collect())
}

/// Judges a Stream Load answer against the case's checks.
fn judge_load(checks: &[(String, String, bool)], answer: &str) -> Outcome {
    let json: serde_json::Value = match serde_json::from_str(answer) {
        Ok(v) => v,
        Err(_) => return Outcome::Wrong(format!("the answer is not JSON: {answer:?}")),
    };
    let field = |name: &str| match &json[name] {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    };
    if field("Status") == "Fail" && field("Message").contains("emulator") {
        return Outcome::Refused;
    }
    for (name, want, exact) in checks {
        let got = field(name);
        let ok = if *exact {
            got.eq_ignore_ascii_case(want)
        } else {
            got.contains(want.as_str())
        };
        if !ok {
            return Outcome::Wrong(format!(
                "{name} is {got:?}, Doris answers {}{want:?}: {answer}",
                if *exact { "" } else { "with " }
            ));
        }
    }
    Outcome::AsDoris
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
    if sql.starts_with("STREAM LOAD ") {
        return stream_load(e, sql);
    }
    if let Some(statement) = sql.strip_prefix("FLIGHT\n") {
        return flight_rows(e, statement).await.map_err(|m| (None, m));
    }
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
        (Expect::Load(checks), Ok(answer)) => judge_load(checks, &answer.concat()),
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

/// The `# floor: N` a corpus file declares.
fn floor(text: &str) -> Option<usize> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# floor:"))
        .find_map(|n| n.trim().parse().ok())
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
    let mut below_floor = Vec::new();
    let mut report = Vec::new();
    for file in corpus_files() {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&file).unwrap();
        let cases = parse(&text);
        assert!(!cases.is_empty(), "{name} has no case");
        let floor = floor(&text).unwrap_or_else(|| panic!("{name} declares no `# floor: N`"));
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
        if file_ok < floor {
            below_floor.push(format!(
                "{name}: {file_ok} answered as Doris, below its floor of {floor}"
            ));
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
    let figure = format!(
        "[corpus] {accepted} accepted / {as_doris} answered as Doris / {total} total\n{}",
        report.join("\n")
    );
    println!("{figure}");
    // `cargo xtask ci` prints the figure after the test run from here (the test's own output
    // is captured), so the corpus runs once.
    let _ = std::fs::write(
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("corpus-figure.txt"),
        &figure,
    );
    assert!(
        wrong.is_empty(),
        "answered differently from Doris:\n{}",
        wrong.join("\n")
    );
    assert!(
        below_floor.is_empty(),
        "fewer cases answered than the files' floors:\n{}",
        below_floor.join("\n")
    );
}

#[test]
fn the_case_format_reads_rows_errors_and_titles() {
    let cases = parse(
        "# header\n== first\nSELECT 1\n-> rows\n1\n\nDROP USER x;\n-> error does not exist\n\
         SELECT\n  2\n-> rows unordered\n2\n3\n",
    );
    assert_eq!(cases.len(), 3);
    assert_eq!(
        floor("# from a suite\n# floor: 12\nSELECT 1\n-> ok\n"),
        Some(12)
    );
    assert_eq!(floor("SELECT 1\n-> ok\n"), None);
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

#[test]
fn stream_load_cases_carry_headers_a_body_and_field_checks() {
    let cases = parse(
        "STREAM LOAD t\ncolumn_separator: ,\n<<<\n1,a\n\n2,b\n>>>\n-> load Status=Success Message~\"too many\" NumberTotalRows=2\n",
    );
    assert_eq!(cases.len(), 1);
    assert_eq!(
        cases[0].sql,
        "STREAM LOAD t\ncolumn_separator: ,\n<<<\n1,a\n\n2,b\n>>>"
    );
    let Expect::Load(checks) = &cases[0].expect else {
        panic!("{:?}", cases[0].expect)
    };
    assert_eq!(
        checks,
        &[
            ("Status".to_owned(), "Success".to_owned(), true),
            ("Message".to_owned(), "too many".to_owned(), false),
            ("NumberTotalRows".to_owned(), "2".to_owned(), true),
        ]
    );
    let answer = r#"{"Status":"Success","Message":"OK: too many","NumberTotalRows":2}"#;
    assert!(matches!(judge_load(checks, answer), Outcome::AsDoris));
    let short = r#"{"Status":"Success","Message":"too many","NumberTotalRows":1}"#;
    assert!(matches!(judge_load(checks, short), Outcome::Wrong(_)));
    let refused = r#"{"Status":"Fail","Message":"[NOT_IMPLEMENTED_ERROR]the Doris emulator does not emulate the `partitions` header"}"#;
    assert!(matches!(judge_load(checks, refused), Outcome::Refused));
}
