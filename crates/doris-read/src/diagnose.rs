//! Checks, from the client's own network, every link a read or a write will use, and says
//! which setting fixes each failure: the FE's HTTP port, the BE addresses Stream Load
//! redirects to, the MySQL port and credentials, privileges on a table, the Flight SQL
//! port and the `DoGet` locations the FE hands out.
//!
//! ```no_run
//! # async fn demo() {
//! use doris_read::diagnose::{Targets, diagnose};
//! use doris_read::MySqlEndpoint;
//! let targets = Targets::new(MySqlEndpoint::new("fe.example", 9030, "reader", "…"));
//! for check in diagnose(&targets).await {
//!     println!("{check}");
//! }
//! # }
//! ```
//!
//! Each check is independent: a failed one does not stop the next (a wrong MySQL port still
//! lets the HTTP checks run). Nothing is written: the LOAD privilege is probed with an
//! `INSERT … SELECT … WHERE 1 = 0`, which Doris checks and plans but which loads no row,
//! and Flight plans are never fetched. No check text holds a password or a server's body.

use std::fmt;
use std::time::Duration;

use doris_connection::HostPort;
use doris_plan::PlanEndpoint;

use crate::error::ReadError;
#[cfg(feature = "flight")]
use crate::flight::{self, FlightSqlEndpoint};
use doris_mysql::MySqlEndpoint;
use doris_mysql::Session;

/// What to check.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Targets {
    /// The FE's MySQL port (always checked).
    pub mysql: MySqlEndpoint,
    /// The FE's HTTP port (`/api/backends`, Stream Load, `_query_plan`); `None` skips the
    /// HTTP and BE checks.
    pub fe_http: Option<PlanEndpoint>,
    /// The FE's Flight SQL port; `None` skips the Flight checks (the `flight` feature).
    #[cfg(feature = "flight")]
    pub flight: Option<FlightSqlEndpoint>,
    /// A table whose SELECT and LOAD privileges are checked (`database`, `table`).
    pub table: Option<(String, String)>,
    /// How long a TCP connect to a BE may take.
    pub reach_timeout: Duration,
}

impl Targets {
    /// MySQL only; add the other targets by field.
    pub fn new(mysql: MySqlEndpoint) -> Self {
        Self {
            mysql,
            fe_http: None,
            #[cfg(feature = "flight")]
            flight: None,
            table: None,
            reach_timeout: Duration::from_secs(3),
        }
    }
}

/// How a check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// It works.
    Ok,
    /// It does not; [`Check::fix`] says what to change.
    Failed,
    /// Not run, because a check it depends on failed.
    Skipped,
}

impl Outcome {
    /// `ok`, `FAILED`, `skipped`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Failed => "FAILED",
            Outcome::Skipped => "skipped",
        }
    }
}

/// The result of one check.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Check {
    /// Which link: `fe_http`, `be_http`, `mysql`, `select`, `load`, `flight`,
    /// `flight_location`.
    pub check: &'static str,
    /// What was checked: `host:port`, a location or `db.table`.
    pub target: String,
    /// How it ended.
    pub outcome: Outcome,
    /// What was found (the error class and its text, or what answered).
    pub detail: String,
    /// The setting that fixes a failure.
    pub fix: Option<String>,
}

impl Check {
    fn ok(check: &'static str, target: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            check,
            target: target.into(),
            outcome: Outcome::Ok,
            detail: detail.into(),
            fix: None,
        }
    }

    fn failed(
        check: &'static str,
        target: impl Into<String>,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self {
            check,
            target: target.into(),
            outcome: Outcome::Failed,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }

    fn skipped(check: &'static str, target: impl Into<String>, why: &str) -> Self {
        Self {
            check,
            target: target.into(),
            outcome: Outcome::Skipped,
            detail: why.to_owned(),
            fix: None,
        }
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:<8} {:<16} {}: {}",
            self.outcome.as_str(),
            self.check,
            self.target,
            self.detail
        )?;
        if let Some(fix) = &self.fix {
            write!(f, " → {fix}")?;
        }
        Ok(())
    }
}

/// Runs every check the targets ask for, in the order of the module docs.
pub async fn diagnose(targets: &Targets) -> Vec<Check> {
    let mut checks = Vec::new();
    if let Some(http) = &targets.fe_http {
        check_http(http, targets.reach_timeout, &mut checks).await;
    }
    check_mysql(targets, &mut checks).await;
    #[cfg(feature = "flight")]
    if let Some(flight) = &targets.flight {
        check_flight(flight, targets, &mut checks).await;
    }
    checks
}

/// `host:port` of an FE URL.
fn url_target(url: &url::Url) -> String {
    format!(
        "{}:{}",
        url.host_str().unwrap_or_default(),
        url.port_or_known_default().unwrap_or_default()
    )
}

/// The fix for an error of a connection to `what` configured by `port_setting`.
fn fix_for(e: &ReadError, what: &str, port_setting: &str) -> String {
    match e {
        ReadError::Auth(_) => "check username and password (or the SecretRef)".into(),
        ReadError::Permission(_) => format!("grant the user the privilege {what} needs"),
        ReadError::Timeout(_) | ReadError::Transport(_)
            if e.to_string().contains("certificate") =>
        {
            "TLS: trust the server's CA (tls_ca_file) or fix the host name in the certificate"
                .into()
        }
        _ => format!(
            "check host and {port_setting}: {what} is not answering there from this network"
        ),
    }
}

async fn check_http(http: &PlanEndpoint, reach: Duration, checks: &mut Vec<Check>) {
    let fe = url_target(&http.fe);
    let backends = match doris_plan::fetch_backends(http).await {
        Ok(list) => {
            let shown: Vec<String> = list.iter().map(ToString::to_string).collect();
            checks.push(Check::ok(
                "fe_http",
                &fe,
                format!(
                    "/api/backends lists {} alive BE(s): {}",
                    list.len(),
                    shown.join(", ")
                ),
            ));
            list
        }
        Err(e) => {
            let fix = match &e {
                doris_plan::PlanError::Auth(_) => "check username and password".to_owned(),
                _ if e.to_string().contains("certificate") => {
                    "TLS: trust the FE's CA (tls_ca_file), or use http_secure=False if the FE \
                     serves plain HTTP"
                        .to_owned()
                }
                _ => "check host, http_port (the FE's http_port, default 8030) and http_secure"
                    .to_owned(),
            };
            checks.push(Check::failed("fe_http", &fe, e.to_string(), fix));
            checks.push(Check::skipped(
                "be_http",
                "",
                "the FE's HTTP port did not answer",
            ));
            return;
        }
    };
    for be in backends {
        checks.push(reach_be(&be, reach).await);
    }
}

/// Whether a BE the FE redirects Stream Loads to accepts a TCP connection from here.
async fn reach_be(be: &HostPort, timeout: Duration) -> Check {
    let target = be.to_string();
    let connect = tokio::net::TcpStream::connect((be.host.as_str(), be.port));
    match tokio::time::timeout(timeout, connect).await {
        Ok(Ok(_)) => Check::ok(
            "be_http",
            target,
            "accepts connections (Stream Load redirects go here)",
        ),
        Ok(Err(e)) => Check::failed(
            "be_http",
            target,
            format!("cannot connect: {e}"),
            "Stream Load redirects to this address and it is unreachable from here: give the BE \
             a public address (Doris public_host / redirect_policy=\"public\") or route loads to \
             BEs you can reach",
        ),
        Err(_) => Check::failed(
            "be_http",
            target,
            format!("no answer within {} s", timeout.as_secs()),
            "the address the FE reports for this BE is not reachable from here (a private \
             address?): give the BE a public address or route loads to BEs you can reach",
        ),
    }
}

async fn check_mysql(targets: &Targets, checks: &mut Vec<Check>) {
    let mysql = &targets.mysql;
    let target = format!("{}:{}", mysql.host, mysql.port);
    let mut session = match Session::open(mysql).await {
        Ok(s) => s,
        Err(e) => {
            let e = ReadError::from(e);
            let fix = fix_for(
                &e,
                "the FE's MySQL port",
                "mysql_port (query_port, default 9030)",
            );
            checks.push(Check::failed("mysql", &target, e.to_string(), fix));
            if let Some((db, t)) = &targets.table {
                for check in ["select", "load"] {
                    checks.push(Check::skipped(
                        check,
                        format!("{db}.{t}"),
                        "MySQL did not connect",
                    ));
                }
            }
            return;
        }
    };
    match session
        .query("SELECT @@version_comment")
        .await
        .map_err(ReadError::from)
    {
        Ok(rows) => {
            let version = rows
                .rows
                .first()
                .and_then(|r| r.first().cloned().flatten())
                .unwrap_or_default();
            checks.push(Check::ok(
                "mysql",
                &target,
                format!("connected ({version})"),
            ));
        }
        Err(e) => {
            let fix = fix_for(&e, "the FE's MySQL port", "mysql_port");
            checks.push(Check::failed("mysql", &target, e.to_string(), fix));
        }
    }
    if let Some((db, t)) = &targets.table {
        check_table(&mut session, db, t, checks).await;
    }
}

async fn check_table(session: &mut Session, db: &str, t: &str, checks: &mut Vec<Check>) {
    let target = format!("{db}.{t}");
    let quoted = match (
        doris_sql::quote_ident("database", db),
        doris_sql::quote_ident("table", t),
    ) {
        (Ok(d), Ok(t)) => format!("{d}.{t}"),
        (Err(e), _) | (_, Err(e)) => {
            checks.push(Check::failed(
                "select",
                &target,
                e.to_string(),
                "fix the name",
            ));
            return;
        }
    };
    let columns = match session
        .query(&format!("DESC {quoted}"))
        .await
        .map_err(ReadError::from)
    {
        Ok(rows) => rows
            .rows
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
            .collect::<Vec<_>>(),
        Err(e) => {
            let fix = match e {
                ReadError::NotFound(_) => "check the database and table names".to_owned(),
                ReadError::Permission(_) => format!("GRANT SELECT_PRIV ON {target} TO the user"),
                _ => "the table's metadata cannot be read".to_owned(),
            };
            checks.push(Check::failed("select", &target, e.to_string(), fix));
            checks.push(Check::skipped(
                "load",
                &target,
                "the table cannot be described",
            ));
            return;
        }
    };
    match session
        .query(&format!("SELECT * FROM {quoted} LIMIT 0"))
        .await
        .map_err(ReadError::from)
    {
        Ok(_) => checks.push(Check::ok("select", &target, "SELECT allowed")),
        Err(e) => checks.push(Check::failed(
            "select",
            &target,
            e.to_string(),
            format!("GRANT SELECT_PRIV ON {target} TO the user (reads need it)"),
        )),
    }
    let Some(first) = columns.first() else {
        checks.push(Check::skipped("load", &target, "the table has no column"));
        return;
    };
    let Ok(column) = doris_sql::quote_ident("column", first) else {
        checks.push(Check::skipped(
            "load",
            &target,
            "a column name cannot be quoted",
        ));
        return;
    };
    // Planned and privilege-checked by Doris, but the empty SELECT loads nothing.
    let probe =
        format!("INSERT INTO {quoted} ({column}) SELECT {column} FROM {quoted} WHERE 1 = 0");
    match session.execute(&probe).await.map_err(ReadError::from) {
        Ok(_) => checks.push(Check::ok("load", &target, "LOAD allowed (writes need it)")),
        Err(e) => {
            let fix = if matches!(e, ReadError::Permission(_)) || e.to_string().contains("denied") {
                format!("GRANT LOAD_PRIV ON {target} TO the user (writes need it)")
            } else {
                "writes to this table will fail: see the error".to_owned()
            };
            checks.push(Check::failed("load", &target, e.to_string(), fix));
        }
    }
}

#[cfg(feature = "flight")]
async fn check_flight(flight: &FlightSqlEndpoint, targets: &Targets, checks: &mut Vec<Check>) {
    let fe = format!("{}:{}", flight.host, flight.port);
    let sql = match &targets.table {
        Some((db, t)) => match (
            doris_sql::quote_ident("database", db),
            doris_sql::quote_ident("table", t),
        ) {
            (Ok(d), Ok(t)) => format!("SELECT * FROM {d}.{t} LIMIT 1"),
            _ => "SELECT 1".to_owned(),
        },
        None => "SELECT 1".to_owned(),
    };
    let planned = match flight::planned_locations(flight, &sql).await {
        Ok(p) => p,
        Err(ReadError::LocationRefused { .. } | ReadError::NotFound(_)) => Vec::new(),
        Err(e) => {
            let fix = fix_for(
                &e,
                "the FE's Arrow Flight SQL port",
                "flight_port (arrow_flight_sql_port, often 8070) and flight_secure",
            );
            checks.push(Check::failed("flight", fe, e.to_string(), fix));
            return;
        }
    };
    checks.push(Check::ok(
        "flight",
        &fe,
        format!(
            "handshake and plan answered ({} endpoint(s))",
            planned.len()
        ),
    ));
    for (named, admitted) in planned {
        let shown = named.clone().unwrap_or_else(|| format!("{fe} (the FE)"));
        let address = match admitted {
            Ok(address) => address,
            Err(e) => {
                let location = named
                    .as_deref()
                    .and_then(|n| n.split_once("://").map(|(_, rest)| rest.to_owned()))
                    .unwrap_or_default();
                checks.push(Check::failed(
                    "flight_location",
                    shown,
                    e.to_string(),
                    format!(
                        "allow it (flight_allowed_locations=[\"{location}\"]) if it is a BE, or \
                         map it to an address you trust (flight_endpoint_rewrite={{\"{location}\": \"host:port\"}})"
                    ),
                ));
                continue;
            }
        };
        let Some(at) = HostPort::parse(&address) else {
            checks.push(Check::failed(
                "flight_location",
                shown,
                format!("{address} is not host:port"),
                "map it with flight_endpoint_rewrite",
            ));
            continue;
        };
        let mut check = reach_be(&at, targets.reach_timeout).await;
        check.check = "flight_location";
        check.target = if named.is_some() && address != shown {
            format!("{shown} → {address}")
        } else {
            shown
        };
        match check.outcome {
            Outcome::Ok => check.detail = "accepts connections (DoGet goes here)".into(),
            _ => {
                check.fix = Some(format!(
                    "DoGet cannot reach this location from here: map it to a reachable address \
                     with flight_endpoint_rewrite={{\"{address}\": \"host:port\"}}"
                ));
            }
        }
        checks.push(check);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_prints_as_one_line_with_its_fix() {
        let c = Check::failed("mysql", "fe:9030", "refused", "check mysql_port");
        assert_eq!(
            c.to_string(),
            "FAILED   mysql            fe:9030: refused → check mysql_port"
        );
        let ok = Check::ok("select", "d.t", "SELECT allowed");
        assert!(!ok.to_string().contains('→'));
    }

    #[tokio::test]
    async fn an_unreachable_be_fails_with_the_fix_named() {
        // A port bound and never listening: a connection is refused, and no other process
        // can take the port while the test holds it.
        let closed = tokio::net::TcpSocket::new_v4().unwrap();
        closed.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let port = closed.local_addr().unwrap().port();
        let check = reach_be(&HostPort::new("127.0.0.1", port), Duration::from_secs(2)).await;
        assert_eq!(check.outcome, Outcome::Failed);
        assert!(
            check.fix.unwrap_or_default().contains("public"),
            "{}",
            check.detail
        );
    }
}
