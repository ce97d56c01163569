//! Helpers shared by the emulator's conformance tests.

use std::process::{Command, Output};

/// A Stream Load exactly as the Doris documentation shows it:
/// `curl --location-trusted -u user -H "Expect:100-continue" [-H header]... -T file url`.
#[allow(dead_code)] // not every test binary that includes this module runs curl
pub fn curl_stream_load(url: &str, file: &str, user: &str, headers: &[&str]) -> Output {
    let mut cmd = Command::new("curl");
    cmd.args([
        "-sS",
        "--location-trusted",
        "-u",
        user,
        "-H",
        "Expect:100-continue",
        "-T",
        file,
    ]);
    for h in headers {
        cmd.args(["-H", h]);
    }
    cmd.arg(url).output().expect("curl runs")
}

/// sqlx options for the emulator's MySQL face at `port` as `user` (no password when it is
/// empty: sqlx would send a scramble of ""), without sqlx's connect statement (below).
#[allow(dead_code)] // not every test binary that includes this module connects with sqlx
pub fn doris_options(port: u16, user: &str, password: &str) -> sqlx::mysql::MySqlConnectOptions {
    let options = sqlx::mysql::MySqlConnectOptions::new()
        .host("127.0.0.1")
        .port(port)
        .username(user)
        .pipes_as_concat(false)
        .no_engine_substitution(false)
        .timezone(None)
        .set_names(false);
    if password.is_empty() {
        options
    } else {
        options.password(password)
    }
}

/// Each row's cells as text, tab-separated, NULL written as `null`.
#[allow(dead_code)] // not every test binary that includes this module reads rows
pub fn text_rows(rows: &[sqlx::mysql::MySqlRow], null: &str) -> Vec<String> {
    use sqlx::Row as _;
    rows.iter()
        .map(|row| {
            (0..row.len())
                .map(|i| {
                    row.try_get_unchecked::<Option<String>, _>(i)
                        .ok()
                        .flatten()
                        .unwrap_or_else(|| null.to_owned())
                })
                .collect::<Vec<_>>()
                .join("\t")
        })
        .collect()
}

/// sqlx connect options that work on Doris: sqlx's default connect statement sets
/// `sql_mode` with a subquery, which Doris refuses, so none of it is sent.
#[allow(dead_code)] // not every test binary that includes this module connects with sqlx
pub fn doris_safe_sqlx(url: &str) -> sqlx::mysql::MySqlConnectOptions {
    use std::str::FromStr as _;
    sqlx::mysql::MySqlConnectOptions::from_str(url)
        .expect("a valid MySQL URL")
        .pipes_as_concat(false)
        .no_engine_substitution(false)
        .timezone(None)
        .set_names(false)
}
