//! Helpers shared by the emulator's conformance tests.

use std::process::{Command, Output};

/// A Stream Load exactly as the Doris documentation shows it:
/// `curl --location-trusted -u user -H "Expect:100-continue" [-H header]... -T file url`.
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
