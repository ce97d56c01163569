//! The Arrow Flight SQL transport (docs/emulator.md, "Arrow Flight SQL").
//!
//! The FE authenticates (`Handshake` with Basic credentials → bearer token) and plans the
//! query (`GetFlightInfo(CommandStatementQuery)`); the rows come from `DoGet` on every
//! endpoint, each at its own location (a BE), several at once up to a bound. An endpoint
//! without a location is fetched from the FE. BE addresses the client cannot reach can be
//! rewritten (`host:port` → `host:port`). A token the FE has forgotten (`invalid bearer
//! token`) is replaced by one new handshake. Every batch is checked against the planned
//! schema (same names) and cast safely to its types (a value that does not fit is an error,
//! never changed), then cut to the batch bounds.
//!
//! One FE session (handshake and bearer token) serves every read of the process for the
//! same FE, user and TLS setting ([`FlightSqlEndpoint::reuse_session`]): Doris caps Flight
//! sessions per user and keeps them for days, so reads do not open new ones.
//!
//! The transport never falls back to MySQL.
//!
//! Here: the endpoint, the handshake and `GetFlightInfo`, and `query` (what
//! [`Transport::read`](crate::Transport::read) runs for a Flight read). The parts:
//! `session` (the shared FE sessions), `locations` (where each `DoGet` may go), `fetch`
//! (one endpoint's stream) and `batches` (conform, gather, cut).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use arrow_flight::error::FlightError;
use arrow_flight::flight_service_client::FlightServiceClient;
use arrow_flight::sql::{CommandStatementQuery, ProstMessageExt};
use arrow_flight::{FlightDescriptor, FlightInfo, HandshakeRequest};
use arrow_schema::SchemaRef;
use doris_connection::{AddressAllowlist, ConnectionSettings, Credentials};
use doris_mysql::{scrub, scrub_statement_text};
use doris_plan::PlanEndpoint;
use prost::Message;
use secrecy::ExposeSecret as _;
use tokio::sync::Semaphore;
use tonic::transport::{Channel, ClientTlsConfig};
use tonic::{Code, Request, Status};

use crate::error::ReadError;
use crate::feed;
use crate::mysql::stream::{BatchLimits, BatchStream};

/// The `user-agent` of every Flight call doris-read makes (tonic appends its own).
pub const USER_AGENT: &str = concat!("doris-read/", env!("CARGO_PKG_VERSION"));

mod batches;
mod fetch;
mod locations;
mod session;
mod values;

use fetch::{Fetched, fetch};
use locations::admitted_addresses;
pub use session::forget_sessions;
use session::plan;

/// Where and how to reach the FE's Flight SQL service. `Debug` hides the password.
#[derive(Clone)]
pub struct FlightSqlEndpoint {
    /// FE host.
    pub host: String,
    /// FE `arrow_flight_sql_port` (Doris default 8070).
    pub port: u16,
    /// The user and password ([`doris_connection::Credentials`]: `Debug` hides the password).
    pub credentials: Credentials,
    /// TLS (`grpc+tls`), verified against the web PKI roots and [`Self::ca_bundle_pem`].
    pub tls: bool,
    /// Extra trusted CA certificates (PEM) for TLS.
    pub ca_bundle_pem: Option<Vec<u8>>,
    /// The client certificate and key presented to the FE and BEs when they ask for one
    /// (mutual TLS; ADBC's `mtls_cert_chain` and `mtls_private_key`).
    pub client_identity: Option<doris_connection::ClientIdentity>,
    /// `host:port` of a location as the FE reports it → `host:port` to connect to instead.
    /// A rewritten location is the user's choice and is fetched without further check.
    pub rewrite: HashMap<String, String>,
    /// Which other locations `DoGet` may go to (each receives the bearer token): the policy
    /// Stream Load redirects follow. By default, a host the FE reports at `/api/backends`
    /// (any port: the FE reports no Flight ports) or an explicit target; the FE itself is
    /// always allowed. A refused location fails the read before any `DoGet`
    /// ([`ReadError::LocationRefused`]).
    pub allowlist: AddressAllowlist,
    /// Where the reported BEs are listed (`GET /api/backends` on the FE's HTTP port).
    /// [`Self::new`] sets `http://host:8030` with the same credentials; `None` reports no BE.
    pub fe_http: Option<PlanEndpoint>,
    /// Connect timeout (FE and each BE).
    pub connect_timeout: Duration,
    /// Longest wait for one RPC answer or the next batch.
    pub read_timeout: Duration,
    /// Most endpoints fetched at once.
    pub max_parallel: usize,
    /// Largest gRPC message accepted (tonic's default of 4 MiB is too small for Doris).
    pub max_message_bytes: usize,
    /// Share one FE session (bearer token) per FE, user and TLS setting across every read
    /// of the process (default). Doris caps Flight sessions per user and keeps each for
    /// days, so a new handshake per read ends in `Reach limit of connections`.
    pub reuse_session: bool,
}

impl fmt::Debug for FlightSqlEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FlightSqlEndpoint")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("credentials", &self.credentials)
            .field("tls", &self.tls)
            .field("rewrite", &self.rewrite)
            .field("allowlist", &self.allowlist)
            .finish_non_exhaustive()
    }
}

impl FlightSqlEndpoint {
    /// An endpoint with defaults: plain gRPC, 10 s connect, 300 s read, 4 endpoints at once,
    /// 256 MiB messages, locations allowed on the BEs the FE's `http://host:8030` reports.
    pub fn new(
        host: impl Into<String>,
        port: u16,
        user: impl Into<String>,
        password: impl Into<String>,
    ) -> Self {
        Self::with_credentials(host, port, Credentials::new(user, password))
    }

    /// The same defaults, with credentials a service already holds.
    pub fn with_credentials(host: impl Into<String>, port: u16, credentials: Credentials) -> Self {
        let host = host.into();
        let http_host = if host.contains(':') {
            format!("[{host}]")
        } else {
            host.clone()
        };
        let fe_http = url::Url::parse(&format!(
            "http://{http_host}:{}",
            ConnectionSettings::DEFAULT_HTTP_PORT
        ))
        .ok()
        .map(|url| PlanEndpoint::with_credentials(url, credentials.clone()));
        Self {
            host,
            port,
            credentials,
            tls: false,
            ca_bundle_pem: None,
            client_identity: None,
            rewrite: HashMap::new(),
            allowlist: AddressAllowlist::default(),
            fe_http,
            connect_timeout: ConnectionSettings::DEFAULT_CONNECT_TIMEOUT,
            read_timeout: ConnectionSettings::DEFAULT_QUERY_TIMEOUT,
            max_parallel: 4,
            max_message_bytes: 256 * 1024 * 1024,
            reuse_session: true,
        }
    }

    /// The largest [`FlightSqlEndpoint::max_parallel`] a caller should set (each endpoint
    /// fetched at once holds a gRPC stream and its batches).
    pub const MOST_PARALLEL: usize = 64;

    /// The FE's Flight SQL endpoint as `settings` describe it: host, `flight_port`, TLS
    /// (`flight_secure`) and trusted CAs, credentials, timeouts, and the FE's HTTP face
    /// (`/api/backends`, which admits BE locations) at `settings`' HTTP URL. The other
    /// fields keep [`FlightSqlEndpoint::new`]'s defaults.
    pub fn from_settings(settings: &ConnectionSettings) -> Result<Self, ReadError> {
        let fe_http =
            PlanEndpoint::from_settings(settings).map_err(crate::table::from_plan_error)?;
        let mut endpoint = Self::with_credentials(
            settings.host.clone(),
            settings.flight_port,
            settings.credentials.clone(),
        );
        endpoint.tls = settings.flight_secure;
        endpoint.ca_bundle_pem = settings.ca_pem.clone();
        endpoint.client_identity = settings.client_identity.clone();
        endpoint.fe_http = Some(fe_http);
        endpoint.connect_timeout = settings.connect_timeout;
        endpoint.read_timeout = settings.query_timeout;
        Ok(endpoint)
    }

    fn uri(&self, host_port: &str) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{host_port}")
    }

    fn fe_host_port(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    async fn connect(&self, host_port: &str) -> Result<FlightServiceClient<Channel>, ReadError> {
        let mut endpoint = tonic::transport::Endpoint::from_shared(self.uri(host_port))
            .map_err(|_| ReadError::Config(format!("{host_port} is not a valid address")))?
            .user_agent(USER_AGENT)
            .map_err(|_| ReadError::Config("the user agent is not a header value".into()))?
            .connect_timeout(self.connect_timeout)
            .timeout(self.read_timeout)
            .tcp_nodelay(true);
        if self.tls {
            let mut tls = ClientTlsConfig::new().with_webpki_roots();
            if let Some(pem) = &self.ca_bundle_pem {
                tls = tls.ca_certificate(tonic::transport::Certificate::from_pem(pem));
            }
            if let Some(identity) = &self.client_identity {
                use doris_connection::secrecy::ExposeSecret as _;
                // Checked first: the error names the part at fault, never its text.
                identity
                    .to_der()
                    .map_err(|e| ReadError::Config(format!("Flight TLS: {e}")))?;
                tls = tls.identity(tonic::transport::Identity::from_pem(
                    identity.cert_chain_pem(),
                    identity.key_pem().expose_secret(),
                ));
            }
            endpoint = endpoint
                .tls_config(tls)
                .map_err(|e| ReadError::Config(format!("TLS: {e}")))?;
        }
        let channel = endpoint
            .connect()
            .await
            .map_err(|e| ReadError::Transport(format!("cannot connect to {host_port}: {e}")))?;
        Ok(FlightServiceClient::new(channel)
            .max_decoding_message_size(self.max_message_bytes)
            .max_encoding_message_size(self.max_message_bytes))
    }

    /// Basic → bearer.
    async fn handshake(&self, fe: &mut FlightServiceClient<Channel>) -> Result<String, ReadError> {
        let mut request = Request::new(futures::stream::iter(vec![HandshakeRequest::default()]));
        let value = self
            .credentials
            .basic_authorization()
            .expose_secret()
            .parse()
            .map_err(|_| ReadError::Config("the user name is not a valid header value".into()))?;
        request.metadata_mut().insert("authorization", value);
        let fe_answer = |status| match status_error(status) {
            ReadError::Transport(m) => ReadError::Transport(format!("the FE's handshake: {m}")),
            other => other,
        };
        let response = fe.handshake(request).await.map_err(fe_answer)?;
        let header = response
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::to_owned);
        // Only the first handshake message is read (a server could stream without end);
        // its size is bounded by the channel's message cap.
        let first = response.into_inner().message().await.map_err(fe_answer)?;
        header
            .or_else(|| first.map(|p| String::from_utf8_lossy(&p.payload).into_owned()))
            .filter(|t| !t.is_empty())
            .ok_or_else(|| ReadError::Auth("the FE answered the handshake without a token".into()))
    }
}

fn with_bearer<T>(message: T, token: &str) -> Result<Request<T>, ReadError> {
    let mut request = Request::new(message);
    let value = format!("Bearer {token}")
        .parse()
        .map_err(|_| ReadError::Auth("the FE's token is not a valid header value".into()))?;
    request.metadata_mut().insert("authorization", value);
    Ok(request)
}

/// What a Flight failure that is not the caller's to fix says first (the reference
/// connector 1.1's words, which code written for it may match).
const FLIGHT_FAILED: &str = "Doris Flight query failed";

/// Classifies a gRPC status (its message may carry Doris's MySQL-style text).
fn status_error(status: Status) -> ReadError {
    let message = scrub(status.message());
    let lower = message.to_ascii_lowercase();
    // Errors that name no object may quote a value of the statement: every quoted
    // fragment is blanked (the object-naming ones keep their names).
    let values_blanked = scrub_statement_text(status.message());
    let failed = || format!("{FLIGHT_FAILED}: {values_blanked}");
    match status.code() {
        // tonic refuses a message over the channel's cap before it buffers it.
        Code::OutOfRange if lower.contains("message length too large") => {
            ReadError::Transport(format!(
                "an answer is larger than the Flight message cap ({message}); \
                 flight_options {} raises the cap",
                crate::options::MAX_MESSAGE_SIZE_KEY
            ))
        }
        Code::Unauthenticated => ReadError::Auth(message),
        Code::PermissionDenied => ReadError::Permission(message),
        Code::NotFound if lower.contains("ticket") => ReadError::Transport(failed()),
        Code::NotFound => ReadError::NotFound(message),
        Code::DeadlineExceeded => ReadError::Timeout(message),
        Code::InvalidArgument => ReadError::Config(values_blanked),
        _ if lower.contains("command denied") || lower.contains("access denied") => {
            ReadError::Permission(message)
        }
        _ if lower.contains("does not exist")
            || lower.contains("unknown table")
            || lower.contains("unknown database") =>
        {
            ReadError::NotFound(message)
        }
        Code::Unavailable | Code::ResourceExhausted | Code::Cancelled | Code::Aborted => {
            ReadError::Transport(failed())
        }
        // The client's own link failed before the request left (tonic: "Service was not
        // ready: transport error"), or while it was under way: a transport failure, not
        // the server's answer.
        Code::Unknown
            if lower.starts_with("service was not ready") || lower.contains("transport error") =>
        {
            ReadError::Transport(failed())
        }
        _ => ReadError::Query {
            code: 0,
            message: failed(),
        },
    }
}

fn flight_error(e: FlightError) -> ReadError {
    match e {
        FlightError::Tonic(status) => status_error(*status),
        other => ReadError::Transport(format!("{FLIGHT_FAILED}: {other}")),
    }
}

/// `GetFlightInfo` for `sql`, with one new handshake when the FE forgot the token.
async fn flight_info(
    endpoint: &FlightSqlEndpoint,
    fe: &mut FlightServiceClient<Channel>,
    token: &mut String,
    sql: &str,
) -> Result<FlightInfo, ReadError> {
    let command = CommandStatementQuery {
        query: sql.to_owned(),
        transaction_id: None,
    };
    let descriptor = FlightDescriptor::new_cmd(command.as_any().encode_to_vec());
    match fe
        .get_flight_info(with_bearer(descriptor.clone(), token)?)
        .await
    {
        Ok(info) => Ok(info.into_inner()),
        Err(status) if status.code() == Code::Unauthenticated => {
            *token = endpoint.handshake(fe).await?;
            fe.get_flight_info(with_bearer(descriptor, token)?)
                .await
                .map(tonic::Response::into_inner)
                .map_err(status_error)
        }
        Err(status) => Err(status_error(status)),
    }
}

/// The endpoints of `sql`'s plan: each location as the FE named it (`None`: fetched from
/// the FE) and where its `DoGet` would go, or why the allowlist refuses it. Nothing is
/// fetched (for [`crate::diagnose`]).
pub(crate) async fn planned_locations(
    endpoint: &FlightSqlEndpoint,
    sql: &str,
) -> Result<Vec<(Option<String>, Result<String, ReadError>)>, ReadError> {
    let (info, _) = plan(endpoint, sql).await?;
    let mut out = Vec::with_capacity(info.endpoint.len());
    for ep in &info.endpoint {
        let named = ep
            .location
            .first()
            .filter(|l| !l.uri.is_empty())
            .map(|l| l.uri.clone());
        let admitted = admitted_addresses(endpoint, std::slice::from_ref(ep))
            .await
            .and_then(|mut to| {
                to.pop()
                    .ok_or_else(|| ReadError::Metadata("an endpoint without an address".into()))
            });
        out.push((named, admitted));
    }
    Ok(out)
}

/// Runs `sql` over Flight SQL and streams its rows as batches of `schema`.
///
/// Planning errors (credentials, privileges, missing table, bad SQL) are returned here;
/// errors while fetching arrive as stream items. Dropping the stream cancels every fetch.
pub(crate) async fn query(
    endpoint: &FlightSqlEndpoint,
    sql: String,
    schema: SchemaRef,
    limits: BatchLimits,
) -> Result<BatchStream, ReadError> {
    if limits.rows == 0 || limits.bytes == 0 || endpoint.max_parallel == 0 {
        return Err(ReadError::Config(
            "batch rows, batch bytes and parallel fetches must be at least 1".into(),
        ));
    }
    let (info, token) = plan(endpoint, &sql).await?;
    let addresses = admitted_addresses(endpoint, &info.endpoint).await?;
    let endpoint = Arc::new(endpoint.clone());
    let out_schema = schema.clone();
    // The FE may announce the row count (`total_records`, -1 when it does not): a result
    // that ends cleanly with another count is short or padded, and fails.
    let announced = u64::try_from(info.total_records).ok();
    let (rx, task) = feed::spawn(2, move |feed| async move {
        let permits = Arc::new(Semaphore::new(endpoint.max_parallel));
        let mut fetches = tokio::task::JoinSet::new();
        for (ep, address) in info.endpoint.into_iter().zip(addresses) {
            let (endpoint, token, schema, feed, permits) = (
                endpoint.clone(),
                token.clone(),
                schema.clone(),
                feed.clone(),
                permits.clone(),
            );
            fetches.spawn(async move {
                let _permit = permits.acquire_owned().await;
                fetch(endpoint, ep, address, token, schema, limits, feed).await
            });
        }
        let mut received = 0u64;
        while let Some(done) = fetches.join_next().await {
            match done {
                Ok(Ok(Fetched::All(rows))) => received += rows,
                Ok(Ok(Fetched::Abandoned)) => return Ok(()),
                Ok(Err(e)) => return Err(e),
                Err(e) => {
                    return Err(ReadError::Transport(if e.is_panic() {
                        "a fetch failed on a malformed result".into()
                    } else {
                        "a fetch was cancelled".into()
                    }));
                }
            }
        }
        match announced {
            Some(expected) if expected != received => Err(ReadError::Transport(format!(
                "the FE announced {expected} rows and the endpoints sent {received}"
            ))),
            _ => Ok(()),
        }
    });
    Ok(BatchStream::from_parts(
        crate::mysql::stream::Source::Flight,
        out_schema,
        rx,
        task,
    ))
}

#[cfg(test)]
mod tests {
    use super::batches::{Coalescer, cut, data_bytes};
    use super::locations::{Destination, destination};
    use super::*;
    use arrow::array::Int32Array;
    use arrow::array::RecordBatch;
    use arrow_flight::FlightEndpoint;
    use arrow_schema::{DataType, Field, Schema};
    use doris_connection::HostPort;

    #[test]
    fn an_endpoint_from_settings_takes_every_link_setting() {
        let mut settings =
            ConnectionSettings::new("::1", Credentials::new("reader", "pw")).unwrap();
        settings.flight_port = 18070;
        settings.http_port = 18030;
        settings.http_secure = true;
        settings.flight_secure = true;
        settings.ca_pem = Some(b"pem".to_vec());
        let settings = settings.with_request_timeout(Duration::from_secs(90));
        let flight = FlightSqlEndpoint::from_settings(&settings).unwrap();
        assert_eq!((flight.host.as_str(), flight.port), ("::1", 18070));
        assert!(flight.tls && flight.ca_bundle_pem.as_deref() == Some(&b"pem"[..]));
        assert_eq!(flight.connect_timeout, Duration::from_secs(30));
        assert_eq!(flight.read_timeout, Duration::from_secs(90));
        let fe = flight.fe_http.expect("the FE's HTTP face");
        assert_eq!(fe.fe.as_str(), "https://[::1]:18030/");
        assert_eq!(fe.timeout, Duration::from_secs(90));
        assert_eq!(fe.credentials.user(), "reader");
        let mysql = crate::MySqlEndpoint::from_settings(&settings);
        assert_eq!(
            (mysql.port, mysql.read_timeout),
            (9030, Duration::from_secs(90))
        );
        assert_eq!(mysql.ssl_mode, doris_connection::SslMode::Preferred);
        assert_eq!(mysql.ssl_ca_pem.as_deref(), Some(&b"pem"[..]));
        // A CA for the MySQL link alone is trusted there and nowhere else.
        let mut settings = settings;
        settings.mysql_ca_pem = Some(b"mysql".to_vec());
        let mysql = crate::MySqlEndpoint::from_settings(&settings);
        assert_eq!(mysql.ssl_ca_pem.as_deref(), Some(&b"mysql"[..]));
        let flight = FlightSqlEndpoint::from_settings(&settings).unwrap();
        assert_eq!(flight.ca_bundle_pem.as_deref(), Some(&b"pem"[..]));
        let fe = flight.fe_http.expect("the FE's HTTP face");
        assert_eq!(fe.ca_bundle_pem.as_deref(), Some(&b"pem"[..]));
    }

    #[test]
    fn batches_are_cut_by_rows_and_bytes() {
        let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int32, false)]));
        let batch =
            RecordBatch::try_new(schema, vec![Arc::new(Int32Array::from_iter_values(0..100))])
                .unwrap();
        let by_rows = cut(
            batch.clone(),
            BatchLimits {
                rows: 30,
                bytes: 1 << 20,
            },
        );
        assert_eq!(
            by_rows
                .iter()
                .map(RecordBatch::num_rows)
                .collect::<Vec<_>>(),
            [30, 30, 30, 10]
        );
        let tiny = cut(
            batch,
            BatchLimits {
                rows: 1000,
                bytes: 1,
            },
        );
        assert_eq!(tiny.len(), 100);
    }

    /// A batch as a Flight message decodes: every column a slice of the message's body.
    fn decoded_as_one_message(columns: usize, rows: i32) -> RecordBatch {
        let fields: Vec<Field> = (0..columns)
            .map(|i| Field::new(format!("c{i}"), DataType::Int32, false))
            .collect();
        let schema = Arc::new(Schema::new(fields));
        let arrays = (0..columns)
            .map(|_| Arc::new(Int32Array::from_iter_values(0..rows)) as _)
            .collect();
        let batch = RecordBatch::try_new(schema.clone(), arrays).unwrap();
        let mut body = Vec::new();
        let mut writer = arrow::ipc::writer::StreamWriter::try_new(&mut body, &schema).unwrap();
        writer.write(&batch).unwrap();
        writer.finish().unwrap();
        drop(writer);
        let mut reader = arrow::ipc::reader::StreamReader::try_new(body.as_slice(), None).unwrap();
        reader.next().unwrap().unwrap()
    }

    #[test]
    fn a_decoded_message_counts_its_values_once_not_its_body_per_column() {
        let batch = decoded_as_one_message(16, 1000);
        let values = 16 * 1000 * 4;
        assert_eq!(data_bytes(&batch), values);
        // Bounds of 4 batches' values: four such batches are gathered into one, as they
        // would not be if each counted the whole body once per column.
        let limits = BatchLimits {
            rows: 1 << 20,
            bytes: 4 * values,
        };
        let mut gather = Coalescer::new(batch.schema(), limits);
        for _ in 0..3 {
            assert!(gather.push(batch.clone()).unwrap().is_empty());
        }
        let out = gather.push(batch.clone()).unwrap();
        assert_eq!(
            out.iter().map(RecordBatch::num_rows).collect::<Vec<_>>(),
            [4000]
        );
        assert_eq!(
            cut(batch, limits).len(),
            1,
            "one batch within the bounds stays whole"
        );
    }

    #[test]
    fn statuses_map_to_read_errors() {
        assert!(matches!(
            status_error(Status::unauthenticated("invalid bearer token")),
            ReadError::Auth(_)
        ));
        assert!(matches!(
            status_error(Status::internal(
                "errCode = 2, detailMessage = SELECT command denied to user 'u'"
            )),
            ReadError::Permission(_)
        ));
        assert!(matches!(
            status_error(Status::internal("Table [t] does not exist in database [d]")),
            ReadError::NotFound(_)
        ));
        let syntax = status_error(Status::internal("syntax error near 'secret' at line 1"));
        assert!(!syntax.to_string().contains("secret"));
        // A value quoted by an error that names no object is blanked too.
        let value = status_error(Status::internal(
            "errCode = 2, detailMessage = Invalid number 'hunter2' for column `id`",
        ));
        assert!(!value.to_string().contains("hunter2"), "{value}");
        // tonic's own words when the client's link broke: a transport failure.
        assert!(matches!(
            status_error(Status::unknown("Service was not ready: transport error")),
            ReadError::Transport(_)
        ));
    }

    #[test]
    fn locations_are_rewritten() {
        let mut endpoint = FlightSqlEndpoint::new("fe", 8070, "u", "p");
        endpoint
            .rewrite
            .insert("10.0.0.5:8050".into(), "proxy:18050".into());
        let ep = FlightEndpoint::new().with_location("grpc+tcp://10.0.0.5:8050");
        assert_eq!(
            destination(&endpoint, &ep).unwrap(),
            Destination::Rewritten("proxy:18050".into())
        );
        let ep = FlightEndpoint::new().with_location("grpc+tcp://10.0.0.6:8050");
        assert_eq!(
            destination(&endpoint, &ep).unwrap(),
            Destination::Named("10.0.0.6:8050".into())
        );
        let ep = FlightEndpoint::new().with_location("grpc+tls://FE:8070/");
        assert_eq!(destination(&endpoint, &ep).unwrap(), Destination::Fe);
        assert_eq!(
            destination(&endpoint, &FlightEndpoint::new()).unwrap(),
            Destination::Fe
        );
    }

    #[tokio::test]
    async fn locations_outside_the_allowlist_are_refused_before_any_fetch() {
        let mut endpoint = FlightSqlEndpoint::new("fe", 8070, "u", "p");
        endpoint.fe_http = None;
        endpoint
            .rewrite
            .insert("10.0.0.5:8050".into(), "proxy:18050".into());
        endpoint
            .allowlist
            .targets
            .push(HostPort::new("10.0.0.7", 8050));
        let eps = [
            FlightEndpoint::new(),
            FlightEndpoint::new().with_location("grpc+tcp://10.0.0.5:8050"),
            FlightEndpoint::new().with_location("grpc+tcp://10.0.0.7:8050"),
        ];
        assert_eq!(
            admitted_addresses(&endpoint, &eps).await.unwrap(),
            ["fe:8070", "proxy:18050", "10.0.0.7:8050"]
        );
        let hostile = [FlightEndpoint::new().with_location("grpc+tcp://attacker.example:8050")];
        let refused = admitted_addresses(&endpoint, &hostile).await.unwrap_err();
        assert!(
            matches!(&refused, ReadError::LocationRefused { location, .. } if location == "attacker.example:8050"),
            "{refused:?}"
        );
    }

    #[tokio::test]
    async fn a_tls_read_never_lists_the_bes_over_plain_http() {
        // The FE's HTTP face is plain HTTP on a port where nothing listens: a Config error
        // (not a connection error) shows that no request was tried.
        let mut endpoint = FlightSqlEndpoint::new("127.0.0.1", 8070, "u", "p");
        endpoint.tls = true;
        let eps = [FlightEndpoint::new().with_location("grpc+tls://10.0.0.9:8050")];
        let refused = admitted_addresses(&endpoint, &eps).await.unwrap_err();
        assert!(
            matches!(&refused, ReadError::Config(m) if m.contains("http_secure=True")),
            "{refused:?}"
        );
        // An explicitly allowed location needs no list.
        endpoint
            .allowlist
            .targets
            .push(HostPort::new("10.0.0.9", 8050));
        assert_eq!(
            admitted_addresses(&endpoint, &eps).await.unwrap(),
            ["10.0.0.9:8050"]
        );
    }
}
