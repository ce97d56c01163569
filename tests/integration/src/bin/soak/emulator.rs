//! The emulator process the soak runs against: started with the soak's table, its ports
//! read from its first line, killed when dropped.

use std::io::BufRead as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use crate::{DB, TABLE};

pub(crate) struct Ports {
    pub(crate) fe_http: u16,
    pub(crate) query: u16,
    pub(crate) flight: u16,
}

pub(crate) struct Emulator {
    pub(crate) child: Child,
    pub(crate) ports: Ports,
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn start_emulator(bin: &PathBuf, dir: &std::path::Path) -> Emulator {
    let init = dir.join("init.sql");
    std::fs::write(
        &init,
        format!(
            "CREATE DATABASE {DB}; CREATE TABLE {DB}.{TABLE} (`id` BIGINT NOT NULL, \
             `name` VARCHAR(32) NULL) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 4;"
        ),
    )
    .unwrap();
    let mut child = Command::new(bin)
        .args([
            "--fe-http-port",
            "0",
            "--be-http-port",
            "0",
            "--query-port",
            "0",
            "--fe-flight-port",
            "0",
            "--be-flight-port",
            "0",
            // Doris forgets a finished label beyond this many newer transactions: the
            // verdict's reruns of atomic keys then cross forgotten labels (the ledger
            // must remember them).
            "--label-num-threshold",
            "20",
            "--init-sql",
        ])
        .arg(&init)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let ports: serde_json::Value = serde_json::from_str(&line).unwrap();
    let port = |k: &str| ports[k].as_u64().unwrap() as u16;
    Emulator {
        ports: Ports {
            fe_http: port("fe_http_port"),
            query: port("query_port"),
            flight: port("fe_flight_port"),
        },
        child,
    }
}
