//! # doris-emulator
//!
//! An Apache Doris emulator for tests without Docker, behaving like Doris on the wire as
//! `docs/emulator.md` describes it (Doris 4.0 where versions differ). Start it
//! in-process on ephemeral ports:
//!
//! ```no_run
//! # async fn demo() -> Result<(), doris_emulator::EmulatorError> {
//! let emulator = doris_emulator::Emulator::start(doris_emulator::EmulatorConfig::default()).await?;
//! emulator.execute(None, "CREATE DATABASE demo; CREATE TABLE demo.t (k INT) DUPLICATE KEY(k) \
//!                         DISTRIBUTED BY HASH(k) BUCKETS 2")?;
//! println!("Stream Load to http://{}/api/demo/t/_stream_load", emulator.fe_http_addr());
//! # Ok(()) }
//! ```
//!
//! or as the `doris-emulator` binary. What is emulated so far, and what is not, is listed in
//! `docs/emulator.md`.

pub mod auth;
pub mod backends;
pub mod catalog;
pub mod create_table;
pub mod ddl;
pub mod error;
pub mod faults;
#[cfg(feature = "sql")]
pub mod flight;
pub mod http;
pub mod jobs;
pub mod load;
pub mod mysql;
pub mod names;
pub mod persist;
pub mod profile;
pub mod query_plan;
pub mod storage;
pub mod tls;
pub mod tokens;
pub mod txn;
pub mod users;
pub mod wire_log;
pub mod wire_stats;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};

use arrow::record_batch::RecordBatch;
use tokio::net::TcpListener;
use tokio::sync::watch;

pub use catalog::{Catalog, Table};
pub use error::EmulatorError;
pub use profile::DorisProfile;
pub use txn::{Retention, TxnRegistry, TxnState};

/// How to start an emulator. Port 0 picks a free port.
#[derive(Debug, Clone)]
pub struct EmulatorConfig {
    /// Address to bind.
    pub host: String,
    /// The host clients are sent to (redirects, `/api/backends`).
    pub advertise_host: String,
    /// FE HTTP port (Doris default 8030).
    pub fe_http_port: u16,
    /// BE HTTP port (Doris default 8040).
    pub be_http_port: u16,
    /// FE MySQL query port (Doris default 9030).
    pub query_port: u16,
    /// FE Arrow Flight SQL port (Doris default 8070; needs the `sql` feature).
    pub fe_flight_port: u16,
    /// BE Arrow Flight port (Doris deployments use 8050; needs the `sql` feature).
    pub be_flight_port: u16,
    /// Most Flight sessions (bearer tokens) at once (`arrow_flight_token_cache_size`);
    /// one more handshake fails with `Reach limit of connections`.
    pub flight_session_cap: usize,
    /// Password of `root` (empty by default, as in Doris).
    pub root_password: String,
    /// Label and pre-commit retention.
    pub retention: Retention,
    /// `streaming_load_max_mb`, in bytes.
    pub max_body_bytes: usize,
    /// How much of a body sent to the FE without waiting for `100 Continue` is read and
    /// discarded after the 307 before the connection is dropped (default 64 MiB: Doris
    /// 4.0.6 redirected such bodies up to that size and lost the connection at ~72 MiB).
    pub fe_redirect_drain_bytes: u64,
    /// The folder standing in for object storage: `s3://bucket/key` is
    /// `<s3_root>/bucket/key` (streaming jobs' S3 table function). `None`: no object store.
    pub s3_root: Option<std::path::PathBuf>,
    /// Where the emulator keeps its state across restarts (catalog, data, streaming jobs);
    /// `None`: everything lives in memory only. See [`persist`].
    pub data_dir: Option<std::path::PathBuf>,
    /// The behaviours that differ between Doris releases (default: the current ones).
    pub profile: DorisProfile,
    /// Serve the FE and BE HTTP faces over TLS, and offer TLS on the MySQL face (SSLRequest,
    /// as Doris with `enable_ssl`), with this certificate and key (PEM); the FE's redirects
    /// and the error-log URLs then say `https`. `None`: plain HTTP and MySQL.
    pub tls: Option<(String, String)>,
    /// With `tls`: ask every TLS client for a certificate signed by this CA (PEM) and refuse
    /// one without (mutual TLS). `None`: no client certificate asked for.
    pub tls_client_ca: Option<String>,
    /// How many BEs to simulate (at least one): tablets are dealt over them, each gets its
    /// own BE Flight port and `_query_plan` routing. See [`backends`].
    pub backends: usize,
    /// Bytes per second each simulated BE may send in query results (its disk and network
    /// bound, for scaling benchmarks); `None`: as fast as the machine goes.
    pub be_bandwidth: Option<u64>,
    /// The folder the [`wire_log`] goes to; `None`: no wire log. The default is the
    /// folder `DORIS_EMULATOR_WIRE_LOG` names, so a test run records every emulator it
    /// starts, in-process or not.
    pub wire_log: Option<std::path::PathBuf>,
    /// The global `time_zone` every session starts in (`--time-zone`; Doris's usual default,
    /// `Asia/Shanghai`): the MySQL face's zoned functions and the zone Flight results write
    /// DATETIME values in (`flight::wire`).
    pub time_zone: String,
}

impl Default for EmulatorConfig {
    fn default() -> Self {
        Self {
            host: "127.0.0.1".into(),
            advertise_host: "127.0.0.1".into(),
            fe_http_port: 0,
            be_http_port: 0,
            query_port: 0,
            fe_flight_port: 0,
            be_flight_port: 0,
            flight_session_cap: 2000,
            root_password: String::new(),
            retention: Retention::default(),
            max_body_bytes: 10 * 1024 * 1024 * 1024,
            fe_redirect_drain_bytes: 64 * 1024 * 1024,
            s3_root: None,
            data_dir: None,
            profile: DorisProfile::default(),
            tls: None,
            tls_client_ca: None,
            backends: 1,
            be_bandwidth: None,
            wire_log: std::env::var_os(wire_log::WIRE_LOG_ENV)
                .filter(|v| !v.is_empty())
                .map(std::path::PathBuf::from),
            time_zone: "Asia/Shanghai".into(),
        }
    }
}

/// State shared by every face.
#[derive(Debug)]
pub struct Shared {
    /// The configuration started with.
    pub config: EmulatorConfig,
    /// Databases and tables.
    pub catalog: Catalog,
    /// Users.
    pub users: auth::Users,
    /// Load transactions and labels.
    pub txns: TxnRegistry,
    /// Armed faults and the record of those that fired.
    pub faults: faults::FaultRegistry,
    /// Bytes received on the FE HTTP port (headers and bodies), for wire tests.
    pub fe_bytes_received: Arc<AtomicU64>,
    /// Bytes received on the BE HTTP port.
    pub be_bytes_received: Arc<AtomicU64>,
    /// Requests, connections and rows that crossed the faces, for wire tests.
    pub wire: wire_stats::WireStats,
    /// The request shapes received, for the wire-inventory check (see [`wire_log`]).
    pub wire_log: Option<wire_log::WireLog>,
    /// Flight sessions and pending results.
    #[cfg(feature = "sql")]
    pub flight: flight::FlightState,
    /// Streaming jobs.
    pub jobs: jobs::JobRegistry,
    /// The simulated BEs (tablet placement, result sinks, bandwidth).
    pub backends: Arc<backends::Backends>,
    be_http_port: OnceLock<u16>,
    /// The TLS acceptor of [`EmulatorConfig::tls`] (set at start; the MySQL face uses it
    /// after an SSLRequest).
    pub(crate) tls_config: OnceLock<Option<Arc<rustls::ServerConfig>>>,
    public_endpoint: Mutex<Option<String>>,
    /// The SQL mode a new MySQL session starts with (`SET GLOBAL sql_mode`; Doris's default
    /// `ONLY_FULL_GROUP_BY`).
    pub global_sql_mode: Mutex<String>,
    error_logs: Mutex<HashMap<String, String>>,
}

impl Shared {
    fn new(config: EmulatorConfig) -> Self {
        Self {
            users: auth::Users::new(&config.root_password),
            txns: TxnRegistry::new(config.retention),
            catalog: Catalog::with_name_rules(config.profile.name_rules()),
            faults: faults::FaultRegistry::default(),
            fe_bytes_received: Arc::default(),
            be_bytes_received: Arc::default(),
            wire: wire_stats::WireStats::default(),
            wire_log: config.wire_log.as_deref().and_then(|dir| {
                wire_log::WireLog::open(dir)
                    .map_err(|e| eprintln!("doris-emulator: no wire log in {}: {e}", dir.display()))
                    .ok()
            }),
            #[cfg(feature = "sql")]
            flight: flight::FlightState::default(),
            jobs: jobs::JobRegistry::default(),
            backends: Arc::new(backends::Backends::new(
                config.backends,
                config.be_bandwidth,
            )),
            be_http_port: OnceLock::new(),
            tls_config: OnceLock::new(),
            public_endpoint: Mutex::new(None),
            global_sql_mode: Mutex::new("ONLY_FULL_GROUP_BY".into()),
            error_logs: Mutex::new(HashMap::new()),
            config,
        }
    }

    /// The BE HTTP port actually bound.
    pub fn be_http_port(&self) -> u16 {
        self.be_http_port
            .get()
            .copied()
            .unwrap_or(self.config.be_http_port)
    }

    /// The BE's `tag.public_endpoint`, used for `redirect-policy: public`.
    pub fn public_endpoint(&self) -> Option<String> {
        self.public_endpoint.lock().ok().and_then(|p| p.clone())
    }

    /// Sets the BE's `tag.public_endpoint` (`host:port`).
    pub fn set_public_endpoint(&self, endpoint: Option<String>) {
        if let Ok(mut p) = self.public_endpoint.lock() {
            *p = endpoint;
        }
    }

    /// `https` when the HTTP faces serve TLS, else `http`.
    pub fn http_scheme(&self) -> &'static str {
        if self.config.tls.is_some() {
            "https"
        } else {
            "http"
        }
    }

    /// Stores an error log and returns its `ErrorURL`.
    pub fn store_error_log(&self, text: String) -> String {
        let file = format!(
            "__shard_0/error_log_insert_stmt_{}",
            uuid::Uuid::new_v4().simple()
        );
        let url = format!(
            "{}://{}:{}/api/_load_error_log?file={file}",
            self.http_scheme(),
            self.config.advertise_host,
            self.be_http_port()
        );
        if let Ok(mut logs) = self.error_logs.lock() {
            logs.insert(file, text);
        }
        url
    }

    /// The error log stored under `file`.
    pub fn error_log(&self, file: &str) -> Option<String> {
        self.error_logs
            .lock()
            .ok()
            .and_then(|l| l.get(file).cloned())
    }

    /// Routes rows to tablets; returns the rows per tablet and how many rows no partition took.
    pub fn stage(
        &self,
        table: &Table,
        batches: Vec<RecordBatch>,
    ) -> Result<(txn::Staged, u64), EmulatorError> {
        let mut per_tablet: txn::Staged = vec![Vec::new(); table.tablets.len()];
        let mut unrouted = 0u64;
        for batch in batches {
            let routes = table.route(&batch)?;
            let mut by_tablet: Vec<Vec<u32>> = vec![Vec::new(); table.tablets.len()];
            for (row, route) in routes.iter().enumerate() {
                match route {
                    Some(t) => by_tablet[*t].push(row as u32),
                    None => unrouted += 1,
                }
            }
            for (tablet, rows) in by_tablet
                .into_iter()
                .enumerate()
                .filter(|(_, r)| !r.is_empty())
            {
                if rows.len() == batch.num_rows() {
                    per_tablet[tablet].push(batch.clone());
                    continue;
                }
                let indices = arrow::array::UInt32Array::from(rows);
                let columns = batch
                    .columns()
                    .iter()
                    .map(|c| arrow::compute::take(c, &indices, None))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| EmulatorError::Internal(e.to_string()))?;
                let part = RecordBatch::try_new(batch.schema(), columns)
                    .map_err(|e| EmulatorError::Internal(e.to_string()))?;
                per_tablet[tablet].push(part);
            }
        }
        Ok((per_tablet, unrouted))
    }
}

/// A running emulator. Dropping it stops every face.
#[derive(Debug)]
pub struct Emulator {
    shared: Arc<Shared>,
    fe_http: SocketAddr,
    be_http: SocketAddr,
    query: SocketAddr,
    flight: Option<(SocketAddr, SocketAddr)>,
    be_flights: Vec<SocketAddr>,
    restored: bool,
    shutdown: watch::Sender<bool>,
    /// The listeners' loops and the job runner (each returns once `shutdown` is sent).
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

/// Closes the HTTP connection a request arrived on, without writing anything more.
#[derive(Debug, Clone)]
pub struct ConnKill(Arc<tokio::sync::Notify>);

impl ConnKill {
    /// Drops the connection; the handler should then never return (see `http/mod.rs`).
    pub fn kill(&self) {
        self.0.notify_one();
    }
}

/// Records each request's method and path in [`Shared::wire`] (a middleware of both faces).
async fn record_request(
    axum::extract::State((shared, face)): axum::extract::State<(Arc<Shared>, wire_stats::HttpFace)>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    shared
        .wire
        .record_http(face, request.method().as_str(), request.uri().path());
    if let Some(log) = &shared.wire_log {
        http::record_shapes(log, face, &request);
    }
    next.run(request).await
}

/// Serves `router` with one hyper HTTP/1 connection task per client; each request carries
/// the peer address (`ConnectInfo`) and a [`ConnKill`] for the connection-level faults.
async fn serve(
    listener: TcpListener,
    router: axum::Router,
    received: Arc<AtomicU64>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        let (stream, peer) = tokio::select! {
            _ = stop.wait_for(|s| *s) => return,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(_) => continue,
            },
        };
        let kill = Arc::new(tokio::sync::Notify::new());
        let service = router
            .clone()
            .layer(axum::Extension(axum::extract::ConnectInfo(peer)))
            .layer(axum::Extension(ConnKill(kill.clone())));
        let stream = CountingStream {
            inner: stream,
            received: received.clone(),
        };
        let tls = tls.clone();
        tokio::spawn(async move {
            match tls {
                None => serve_stream(stream, service, kill).await,
                // A failed handshake (a client that does not trust the certificate) just
                // closes the connection, as a TLS server does.
                Some(acceptor) => {
                    if let Ok(stream) = acceptor.accept(stream).await {
                        serve_stream(stream, service, kill).await;
                    }
                }
            }
        });
    }
}

/// One HTTP/1 connection over `stream`, until it ends or is killed.
async fn serve_stream<S>(stream: S, service: axum::Router, kill: Arc<tokio::sync::Notify>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let connection = hyper::server::conn::http1::Builder::new().serve_connection(
        hyper_util::rt::TokioIo::new(stream),
        hyper_util::service::TowerToHyperService::new(service),
    );
    tokio::select! {
        _ = connection => {}
        // Dropping the connection closes the socket with nothing more written.
        _ = kill.notified() => {}
    }
}

/// A TCP stream that counts the bytes it receives.
struct CountingStream {
    inner: tokio::net::TcpStream,
    received: Arc<AtomicU64>,
}

impl tokio::io::AsyncRead for CountingStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        let read = buf.filled().len() - before;
        self.received.fetch_add(read as u64, Ordering::Relaxed);
        poll
    }
}

impl tokio::io::AsyncWrite for CountingStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

async fn bind(host: &str, port: u16) -> Result<TcpListener, EmulatorError> {
    TcpListener::bind((host, port))
        .await
        .map_err(|e| EmulatorError::Internal(format!("cannot bind {host}:{port}: {e}")))
}

impl Emulator {
    /// Binds every face and starts serving on the current Tokio runtime.
    pub async fn start(config: EmulatorConfig) -> Result<Self, EmulatorError> {
        let fe = bind(&config.host, config.fe_http_port).await?;
        let be = bind(&config.host, config.be_http_port).await?;
        let query = bind(&config.host, config.query_port).await?;
        let local = |l: &TcpListener| {
            l.local_addr()
                .map_err(|e| EmulatorError::Internal(e.to_string()))
        };
        let (fe_http, be_http, query_addr) = (local(&fe)?, local(&be)?, local(&query)?);
        let shared = Arc::new(Shared::new(config));
        let _ = shared.be_http_port.set(be_http.port());
        let restored = match &shared.config.data_dir {
            Some(dir) => persist::restore(&shared, dir)?,
            None => false,
        };
        let (shutdown, stop) = watch::channel(false);
        let tls_config = match &shared.config.tls {
            Some((cert, key)) => Some(tls::server_config(
                cert,
                key,
                shared.config.tls_client_ca.as_deref(),
            )?),
            None => None,
        };
        let tls = tls_config.clone().map(tokio_rustls::TlsAcceptor::from);
        let _ = shared.tls_config.set(tls_config);
        let mut tasks = Vec::new();
        tasks.push(tokio::spawn(serve(
            fe,
            http::fe_router(shared.clone()).layer(axum::middleware::from_fn_with_state(
                (shared.clone(), wire_stats::HttpFace::Fe),
                record_request,
            )),
            shared.fe_bytes_received.clone(),
            tls.clone(),
            stop.clone(),
        )));
        tasks.push(tokio::spawn(serve(
            be,
            http::be_router(shared.clone()).layer(axum::middleware::from_fn_with_state(
                (shared.clone(), wire_stats::HttpFace::Be),
                record_request,
            )),
            shared.be_bytes_received.clone(),
            tls,
            stop.clone(),
        )));
        #[cfg(feature = "sql")]
        let (flight, be_flights) = {
            let fe = bind(&shared.config.host, shared.config.fe_flight_port).await?;
            let fe_addr = local(&fe)?;
            // One BE Flight listener per simulated BE: BE `i` on `be_flight_port + i` when a
            // port is given, else on a free port.
            let mut bes = Vec::new();
            let mut be_addrs = Vec::new();
            for i in 0..shared.backends.count() {
                let port = match shared.config.be_flight_port {
                    0 => 0,
                    p => u16::try_from(usize::from(p) + i).map_err(|_| {
                        EmulatorError::Internal(format!("no BE Flight port {p} + {i}"))
                    })?,
                };
                let be = bind(&shared.config.host, port).await?;
                be_addrs.push(local(&be)?);
                bes.push(be);
            }
            flight::spawn(shared.clone(), fe, bes, stop.clone());
            (Some((fe_addr, be_addrs[0])), be_addrs)
        };
        #[cfg(not(feature = "sql"))]
        let (flight, be_flights) = (None, Vec::new());
        tasks.push(jobs::runner::spawn(shared.clone(), stop.clone()));
        tasks.push(tokio::spawn(mysql::serve(query, shared.clone(), stop)));
        Ok(Self {
            shared,
            fe_http,
            be_http,
            query: query_addr,
            flight,
            be_flights,
            restored,
            shutdown,
            tasks,
        })
    }

    /// The FE HTTP address (Stream Load entry point, `/api/backends`).
    pub fn fe_http_addr(&self) -> SocketAddr {
        self.fe_http
    }

    /// The BE HTTP address.
    pub fn be_http_addr(&self) -> SocketAddr {
        self.be_http
    }

    /// The FE MySQL query address.
    pub fn query_addr(&self) -> SocketAddr {
        self.query
    }

    /// The FE and BE Arrow Flight addresses (`None` without the `sql` feature).
    pub fn flight_addrs(&self) -> Option<(SocketAddr, SocketAddr)> {
        self.flight
    }

    /// Every simulated BE's Arrow Flight address, BE 0 first (empty without the `sql`
    /// feature).
    pub fn be_flight_addrs(&self) -> &[SocketAddr] {
        &self.be_flights
    }

    /// The fault registry (arm faults, read what fired).
    pub fn faults(&self) -> &faults::FaultRegistry {
        &self.shared.faults
    }

    /// The shared state (catalog, users, transactions).
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Runs a script of `;`-separated statements (see [`ddl`] for what is understood).
    pub fn execute(&self, current_db: Option<&str>, script: &str) -> Result<(), EmulatorError> {
        let result = ddl::execute_script(&self.shared, current_db, script);
        persist::save(&self.shared);
        result
    }

    /// Whether the state was restored from the data directory's snapshot on start.
    pub fn restored(&self) -> bool {
        self.restored
    }

    /// One JSON line with every bound port, as the binary prints on start.
    pub fn ports_json(&self) -> String {
        serde_json::json!({
            "host": self.shared.config.advertise_host,
            "fe_http_port": self.fe_http.port(),
            "be_http_port": self.be_http.port(),
            "query_port": self.query.port(),
            "fe_flight_port": self.flight.map(|f| f.0.port()),
            "be_flight_port": self.flight.map(|f| f.1.port()),
            "be_flight_ports": self.be_flights.iter().map(SocketAddr::port).collect::<Vec<_>>(),
            "backends": self.shared.backends.count(),
        })
        .to_string()
    }

    /// Commits `batches` (in the table's Arrow schema) to `db.table` directly, as one
    /// visible load: rows routed to their tablets and merged by the key model. For test
    /// fixtures that need data without going through a face.
    pub fn commit_rows(
        &self,
        db: &str,
        table: &str,
        batches: Vec<RecordBatch>,
    ) -> Result<(), EmulatorError> {
        let table = self.shared.catalog.table(db, table)?;
        let (staged, _) = self.shared.stage(&table, batches)?;
        table.apply(staged)?;
        persist::save(&self.shared);
        Ok(())
    }

    /// Bytes received so far on the FE and the BE HTTP ports (headers included).
    pub fn http_bytes_received(&self) -> (u64, u64) {
        (
            self.shared.fe_bytes_received.load(Ordering::Relaxed),
            self.shared.be_bytes_received.load(Ordering::Relaxed),
        )
    }

    /// What crossed the faces: requests, open connections and streams, rows sent.
    pub fn wire(&self) -> &wire_stats::WireStats {
        &self.shared.wire
    }

    /// Every HTTP request received so far on the FE and BE faces, in arrival order.
    pub fn http_requests(&self) -> Vec<wire_stats::HttpRequest> {
        self.shared.wire.http_requests()
    }

    /// MySQL connections open now (a session counts from accept until its socket closes).
    pub fn mysql_open_connections(&self) -> usize {
        self.shared.wire.mysql_connections.now()
    }

    /// Result rows written to MySQL connections so far.
    pub fn mysql_rows_sent(&self) -> u64 {
        self.shared.wire.mysql_rows_sent()
    }

    /// Stops every face.
    pub fn stop(&self) {
        let _ = self.shutdown.send(true);
    }

    /// Stops every face and waits until the listeners no longer accept and the job runner
    /// has returned (so a data folder is no longer written by its loop, and another
    /// emulator may start on it at once).
    pub async fn shut_down(mut self) {
        self.stop();
        for task in std::mem::take(&mut self.tasks) {
            let _ = task.await;
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        self.stop();
    }
}
