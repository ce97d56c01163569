//! The Doris behaviours the workspace's crates rely on, as one suite that runs against the
//! project's Doris emulator by default and against a real Doris when the environment names
//! one.
//!
//! Every test takes a [`Target`] from [`Target::start`]: with `DORIS_TEST_HOST` unset it is
//! an emulator started in process; with it set, the Doris at that host:
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `DORIS_TEST_HOST` | the FE's host: set it to aim the suite at a real Doris | (emulator) |
//! | `DORIS_TEST_HTTP_PORT` | the FE's HTTP port | 8030 |
//! | `DORIS_TEST_QUERY_PORT` | the FE's MySQL port | 9030 |
//! | `DORIS_TEST_FLIGHT_PORT` | the FE's Arrow Flight SQL port (`arrow_flight_sql_port`) | none: the Flight checks say they were skipped |
//! | `DORIS_TEST_USER` | a user that may create and drop databases | `root` |
//! | `DORIS_TEST_PASSWORD` | its password | empty |
//!
//! Each test works in a database of its own ([`Target::scratch`], named
//! `conformance_<random>`, dropped at the end), so the suite can run against a shared Doris.
//! The tests use only the crates' public APIs and, where a behaviour sits below them (the
//! FE's redirect, the `Expect` check), plain HTTP over a socket.

use std::net::SocketAddr;
use std::time::Duration;

use doris_emulator::{Emulator, EmulatorConfig};
use doris_plan::PlanEndpoint;
use doris_read::{FlightSqlEndpoint, MySqlEndpoint};
use doris_streamload::{ClientConfig, Credentials};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Where the suite runs: an emulator in process or a real Doris.
pub struct Target {
    host: String,
    http_port: u16,
    query_port: u16,
    flight_port: Option<u16>,
    user: String,
    password: String,
    /// Keeps the emulator running while the target lives (`None`: a real Doris).
    emulator: Option<Emulator>,
}

fn env_port(name: &str, default: u16) -> u16 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a port number")),
        Err(_) => default,
    }
}

impl Target {
    /// The Doris `DORIS_TEST_HOST` names, or a new emulator.
    pub async fn start() -> Self {
        if let Ok(host) = std::env::var("DORIS_TEST_HOST") {
            return Self {
                host,
                http_port: env_port("DORIS_TEST_HTTP_PORT", 8030),
                query_port: env_port("DORIS_TEST_QUERY_PORT", 9030),
                flight_port: std::env::var("DORIS_TEST_FLIGHT_PORT")
                    .ok()
                    .map(|_| env_port("DORIS_TEST_FLIGHT_PORT", 0)),
                user: std::env::var("DORIS_TEST_USER").unwrap_or_else(|_| "root".into()),
                password: std::env::var("DORIS_TEST_PASSWORD").unwrap_or_default(),
                emulator: None,
            };
        }
        let emulator = Emulator::start(EmulatorConfig::default())
            .await
            .expect("the emulator starts");
        let flight_port = emulator.flight_addrs().map(|(fe, _)| fe.port());
        Self {
            host: "127.0.0.1".into(),
            http_port: emulator.fe_http_addr().port(),
            query_port: emulator.query_addr().port(),
            flight_port,
            user: "root".into(),
            password: String::new(),
            emulator: Some(emulator),
        }
    }

    /// Whether this is the project's emulator (not a real Doris).
    pub fn is_emulator(&self) -> bool {
        self.emulator.is_some()
    }

    /// The FE's HTTP address.
    pub fn fe_http(&self) -> String {
        format!("{}:{}", self.host, self.http_port)
    }

    /// The user the suite runs as.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The `Authorization` header value for the suite's user.
    pub fn basic_auth(&self) -> String {
        use base64::Engine as _;
        let pair = format!("{}:{}", self.user, self.password);
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        )
    }

    /// The MySQL endpoint (doris-read).
    pub fn mysql(&self) -> MySqlEndpoint {
        MySqlEndpoint::new(&self.host, self.query_port, &self.user, &self.password)
    }

    /// The `_query_plan` endpoint (doris-plan).
    pub fn plan(&self) -> PlanEndpoint {
        let url = format!("http://{}", self.fe_http())
            .parse()
            .expect("a valid FE URL");
        PlanEndpoint::new(url, &self.user, &self.password)
    }

    /// The Flight SQL endpoint (doris-read), when the target serves Flight; its DoGet
    /// locations are checked against the BEs the FE reports.
    pub fn flight(&self) -> Option<FlightSqlEndpoint> {
        let port = self.flight_port?;
        let mut flight = FlightSqlEndpoint::new(&self.host, port, &self.user, &self.password);
        flight.fe_http = Some(self.plan());
        Some(flight)
    }

    /// A Stream Load client configuration (doris-streamload) with short backoffs.
    pub fn stream_load(&self) -> ClientConfig {
        let url = format!("http://{}", self.fe_http())
            .parse()
            .expect("a valid FE URL");
        let mut config = ClientConfig::new(url, Credentials::new(&self.user, &self.password));
        config.retry.initial_backoff = Duration::from_millis(50);
        config
    }

    /// Runs `sql` (one or more statements) over MySQL, marked as the test's own set-up
    /// (`/* fixture */`: the wire-inventory check leaves it out, Doris ignores it).
    pub async fn execute(&self, sql: &str) {
        let mut conn = self.mysql().connect().await.expect("a MySQL connection");
        let sql = format!("/* fixture */ {sql}");
        sqlx::raw_sql(&sql)
            .execute(&mut conn)
            .await
            .unwrap_or_else(|e| panic!("the statement failed: {e}"));
    }

    /// The first column of the first row of `sql`, as text.
    pub async fn scalar(&self, sql: &str) -> Option<String> {
        use sqlx::Row as _;
        let mut conn = self.mysql().connect().await.expect("a MySQL connection");
        let sql = format!("/* fixture */ {sql}");
        let rows = sqlx::raw_sql(&sql)
            .fetch_all(&mut conn)
            .await
            .unwrap_or_else(|e| panic!("the query failed: {e}"));
        let raw = rows
            .first()?
            .try_get_unchecked::<Option<Vec<u8>>, _>(0)
            .ok()??;
        Some(String::from_utf8_lossy(&raw).into_owned())
    }

    /// The Doris release the target runs (`SELECT @@version_comment`); `None` when it
    /// names none. The suite asserts each release's own outcome where releases differ.
    pub async fn release(&self) -> Option<doris_sql::release::DorisRelease> {
        let comment = self.scalar(doris_sql::release::RELEASE_QUERY).await?;
        doris_sql::release::DorisRelease::from_version_comment(&comment)
    }

    /// Whether the target runs `INSERT … SELECT` inside an explicit transaction (Doris
    /// 3.0 and later; 2.1 runs `INSERT … VALUES` only). An unknown release counts as the
    /// newest.
    pub async fn transactions_take_insert_select(&self) -> bool {
        self.release()
            .await
            .is_none_or(|r| r >= doris_sql::release::DorisRelease::new(3, 0, 0))
    }

    /// A new database of the test's own, created now.
    pub async fn scratch(&self) -> Scratch {
        let name = format!(
            "conformance_{}",
            &uuid::Uuid::new_v4().simple().to_string()[..12]
        );
        self.execute(&format!("CREATE DATABASE `{name}`")).await;
        Scratch { name }
    }

    /// Drops `scratch` (`DROP DATABASE … FORCE`: no recycle bin on a real Doris).
    pub async fn drop_scratch(&self, scratch: Scratch) {
        self.execute(&format!("DROP DATABASE IF EXISTS `{}` FORCE", scratch.name))
            .await;
    }
}

/// A database one test owns.
pub struct Scratch {
    /// Its name.
    pub name: String,
}

/// The properties every table the suite creates carries (one replica: a test cluster may
/// have a single BE).
pub const TABLE_PROPERTIES: &str = "PROPERTIES (\"replication_num\" = \"1\")";

/// An HTTP answer read off a socket.
#[derive(Debug)]
pub struct RawAnswer {
    /// Status code.
    pub status: u16,
    /// Header lines as `(lower-case name, value)`.
    pub headers: Vec<(String, String)>,
    /// Body text.
    pub body: String,
}

impl RawAnswer {
    /// The value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Sends `PUT path` with `headers` and no body to `address` over a plain socket (no client
/// library in between: no redirect followed, no `Expect` added) and reads the answer to
/// the end of the connection.
pub async fn raw_put(address: &str, path: &str, headers: &[(&str, String)]) -> RawAnswer {
    let addr: SocketAddr = tokio::net::lookup_host(address)
        .await
        .expect("the address resolves")
        .next()
        .expect("one address");
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("the FE accepts a connection");
    let mut request = format!("PUT {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).await.expect("sent");
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => answer.extend_from_slice(&buf[..n]),
            }
            // Stop once a complete Content-Length body has arrived (a server may keep the
            // connection open despite `Connection: close`).
            if let Some(done) = complete(&answer)
                && done
            {
                break;
            }
        }
    })
    .await
    .expect("the answer arrives within 10 s");
    parse_answer(&answer)
}

/// `Some(true)` when `bytes` holds a head and the whole body its Content-Length declares.
fn complete(bytes: &[u8]) -> Option<bool> {
    let text = String::from_utf8_lossy(bytes);
    let (head, body) = text.split_once("\r\n\r\n")?;
    let length = head.lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.trim()
            .eq_ignore_ascii_case("content-length")
            .then(|| v.trim().parse::<usize>().ok())?
    })?;
    Some(body.len() >= length)
}

fn parse_answer(bytes: &[u8]) -> RawAnswer {
    let text = String::from_utf8_lossy(bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .expect("an HTTP status line");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    RawAnswer {
        status,
        headers,
        body: body.to_owned(),
    }
}
