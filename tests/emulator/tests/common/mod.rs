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
