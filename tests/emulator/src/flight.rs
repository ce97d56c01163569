//! The Arrow Flight SQL faces (protocol document §5): the FE service (default port 8070)
//! and the BE `DoGet` service (default 8050).
//!
//! - **FE.** `Handshake` checks `authorization: Basic …` with the same users as the MySQL
//!   face and answers `authorization: Bearer <token>`; every later call must carry the
//!   bearer (`invalid bearer token` otherwise). At most `flight_session_cap` tokens live at
//!   once (`Reach limit of connections`). `GetFlightInfo(CommandStatementQuery)` plans the
//!   SELECT with the MySQL face's engine (privileges, `TABLET(…)` hints) and answers one
//!   endpoint per output partition, each with a `TicketStatementQuery` whose handle is
//!   `<hex id>:<sql>` and the BE location `grpc+tcp://<advertise host>:<BE Flight port>`
//!   (`grpc+tls://` when the emulator serves TLS, on both faces).
//!   Statements the FE answers itself (SET, USE, SHOW, `SELECT @@…`, DDL) get one endpoint
//!   without a location, fetched from the FE (`StatusResult = 0` for those without rows).
//!   `GetSchema` and prepared statements are not served (`UNIMPLEMENTED`). `GetSqlInfo` names the server `DorisFE`.
//! - **BE.** `DoGet(ticket)` needs no credentials (the ticket is the credential), streams
//!   the partition's schema and batches, and forgets the ticket. Types are the emulator's
//!   storage types, which are Doris 4.0's Flight types: LARGEINT as utf8, DATEV2 as date32,
//!   DATETIMEV2(p) as a time-zone-naive timestamp with the unit chosen by p.
//!
//! [`FlightState::evict_tokens`] drops every token (the eviction a real FE does when its
//! token cache is full or a token expires), for clients' re-handshake tests.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use arrow::record_batch::RecordBatch;
use arrow_flight::encode::FlightDataEncoderBuilder;
use arrow_flight::error::FlightError;
use arrow_flight::flight_service_server::{FlightService, FlightServiceServer};
use arrow_flight::sql::server::FlightSqlService;
use arrow_flight::sql::{
    CommandGetSqlInfo, CommandStatementQuery, ProstMessageExt, SqlInfo, TicketStatementQuery,
};
use arrow_flight::{
    FlightDescriptor, FlightEndpoint, FlightInfo, HandshakeRequest, HandshakeResponse, Ticket,
};
use datafusion::physical_plan::SendableRecordBatchStream;
use futures::{Stream, StreamExt, TryStreamExt};
use prost::Message;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tonic::{Request, Response, Status, Streaming};

use crate::Shared;
use crate::auth::{access_denied, parse_basic};
use crate::faults::{Fault, Point};
use crate::mysql::Session;
use crate::mysql::query::LocalRows;

/// Tokens and pending results shared by the FE and BE Flight faces.
#[derive(Default)]
pub struct FlightState {
    evict_on_next_info: std::sync::atomic::AtomicBool,
    tokens: Mutex<HashMap<String, String>>,
    results: Mutex<HashMap<String, SendableRecordBatchStream>>,
}

impl std::fmt::Debug for FlightState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlightState").finish_non_exhaustive()
    }
}

impl FlightState {
    /// Forgets every bearer token: the next call with one gets `invalid bearer token`.
    pub fn evict_tokens(&self) {
        if let Ok(mut t) = self.tokens.lock() {
            t.clear();
        }
    }

    /// Fault: the next `GetFlightInfo` finds every token evicted (as if it expired between
    /// the client's handshake and its query).
    pub fn evict_on_next_info(&self) {
        self.evict_on_next_info.store(true, Ordering::SeqCst);
    }

    /// How many sessions (tokens) are open.
    pub fn sessions(&self) -> usize {
        self.tokens.lock().map(|t| t.len()).unwrap_or(0)
    }

    /// How many result partitions wait for their `DoGet`.
    pub fn pending_results(&self) -> usize {
        self.results.lock().map(|r| r.len()).unwrap_or(0)
    }
}

/// Which process a Flight service plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Fe,
    Be,
}

/// One Flight SQL service (FE or BE role) over the shared state.
#[derive(Clone)]
struct Face {
    shared: Arc<Shared>,
    role: Role,
    be_port: u16,
}

static FLIGHT_SESSION_IDS: AtomicU32 = AtomicU32::new(1 << 20);

type DoGetStream = Pin<Box<dyn Stream<Item = Result<arrow_flight::FlightData, Status>> + Send>>;

impl Face {
    fn state(&self) -> &FlightState {
        &self.shared.flight
    }

    /// The user behind the request's bearer token.
    fn user<T>(&self, request: &Request<T>) -> Result<String, Status> {
        let token = request
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .ok_or_else(|| Status::unauthenticated("invalid bearer token"))?;
        self.state()
            .tokens
            .lock()
            .ok()
            .and_then(|t| t.get(token).cloned())
            .ok_or_else(|| Status::unauthenticated("invalid bearer token"))
    }

    /// Plans `sql` and parks one result stream per partition; returns their handles and
    /// whether each is served by the BE (`false`: an FE-local result, no location).
    async fn plan(
        &self,
        user: String,
        peer: std::net::SocketAddr,
        sql: &str,
    ) -> Result<(arrow::datatypes::SchemaRef, Vec<(String, bool)>), Status> {
        let mut session = Session {
            id: FLIGHT_SESSION_IDS.fetch_add(1, Ordering::Relaxed),
            user,
            peer,
            database: None,
            time_zone: "UTC".into(),
            sql_mode: String::new(),
            partial_update: false,
        };
        if !crate::mysql::query::reads_tables(sql) {
            let local = crate::mysql::query::fe_local(&self.shared, &mut session, sql)
                .map_err(Status::internal)?;
            let batch = local_batch(local).map_err(|e| Status::internal(e.to_string()))?;
            let schema = batch.schema();
            let stream = datafusion::physical_plan::memory::MemoryStream::try_new(
                vec![batch],
                schema.clone(),
                None,
            )
            .map_err(|e| Status::internal(e.to_string()))?;
            let handle = format!("{}:{sql}", uuid::Uuid::new_v4().simple());
            self.state()
                .results
                .lock()
                .map_err(|_| Status::internal("state poisoned"))?
                .insert(handle.clone(), Box::pin(stream));
            return Ok((schema, vec![(handle, false)]));
        }
        let planned = crate::mysql::select::plan(&self.shared, &session, sql)
            .await
            .map_err(|e| Status::internal(e.message))?;
        let schema = planned.schema();
        let streams = planned
            .partition_streams()
            .await
            .map_err(|e| Status::internal(e.message))?;
        let mut handles = Vec::with_capacity(streams.len());
        let mut results = self
            .state()
            .results
            .lock()
            .map_err(|_| Status::internal("state poisoned"))?;
        for stream in streams {
            let handle = format!("{}:{sql}", uuid::Uuid::new_v4().simple());
            results.insert(handle.clone(), stream);
            handles.push((handle, true));
        }
        Ok((schema, handles))
    }
}

#[tonic::async_trait]
impl FlightSqlService for Face {
    type FlightService = Face;

    async fn do_handshake(
        &self,
        request: Request<Streaming<HandshakeRequest>>,
    ) -> Result<
        Response<Pin<Box<dyn Stream<Item = Result<HandshakeResponse, Status>> + Send>>>,
        Status,
    > {
        if self.role == Role::Be {
            return Err(Status::unimplemented("the BE does not authenticate"));
        }
        let header = request
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok());
        let Some(basic) = parse_basic(header) else {
            return Err(Status::unauthenticated("no basic credentials"));
        };
        let host = request
            .remote_addr()
            .map_or_else(|| "127.0.0.1".to_owned(), |a| a.ip().to_string());
        if !self.shared.users.check(&basic.user, &basic.password) {
            return Err(Status::unauthenticated(access_denied(
                &basic.user,
                &host,
                !basic.password.is_empty(),
            )));
        }
        let token = uuid::Uuid::new_v4().simple().to_string();
        {
            let mut tokens = self
                .state()
                .tokens
                .lock()
                .map_err(|_| Status::internal("state poisoned"))?;
            if tokens.len() >= self.shared.config.flight_session_cap {
                return Err(Status::resource_exhausted(
                    "Reach limit of connections".to_owned(),
                ));
            }
            tokens.insert(token.clone(), basic.user.clone());
        }
        let output = futures::stream::iter(vec![Ok(HandshakeResponse {
            protocol_version: 0,
            payload: token.clone().into(),
        })]);
        let mut response: Response<
            Pin<Box<dyn Stream<Item = Result<HandshakeResponse, Status>> + Send>>,
        > = Response::new(Box::pin(output));
        let bearer = format!("Bearer {token}")
            .parse()
            .map_err(|_| Status::internal("token is not a header value"))?;
        response.metadata_mut().insert("authorization", bearer);
        Ok(response)
    }

    async fn get_flight_info_statement(
        &self,
        query: CommandStatementQuery,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        if self.role == Role::Be {
            return Err(Status::unimplemented("GetFlightInfo is served by the FE"));
        }
        if self
            .state()
            .evict_on_next_info
            .swap(false, Ordering::SeqCst)
        {
            self.state().evict_tokens();
        }
        let user = self.user(&request)?;
        let peer = request
            .remote_addr()
            .unwrap_or_else(|| std::net::SocketAddr::from(([127, 0, 0, 1], 0)));
        let (schema, handles) = self.plan(user, peer, &query.query).await?;
        let scheme = if self.shared.config.tls.is_some() {
            "grpc+tls"
        } else {
            "grpc+tcp"
        };
        let fault = self.shared.faults.take(Point::FlightInfo);
        let location = match &fault {
            Some(Fault::FlightLocation { host, port }) => format!("{scheme}://{host}:{port}"),
            _ => format!(
                "{scheme}://{}:{}",
                self.shared.config.advertise_host, self.be_port
            ),
        };
        let mut info = FlightInfo::new()
            .try_with_schema(&schema)
            .map_err(|e| Status::internal(e.to_string()))?
            .with_descriptor(request.into_inner());
        for (handle, on_be) in handles {
            let ticket = TicketStatementQuery {
                statement_handle: handle.into_bytes().into(),
            };
            let mut endpoint =
                FlightEndpoint::new().with_ticket(Ticket::new(ticket.as_any().encode_to_vec()));
            if on_be {
                endpoint = endpoint.with_location(location.clone());
            }
            info = info.with_endpoint(endpoint);
        }
        if let Some(f) = fault {
            self.shared.faults.record(&f, None, None, false);
            if let Fault::AnnounceFlightRows { rows } = f {
                info = info.with_total_records(rows);
            }
        }
        Ok(Response::new(info))
    }

    async fn do_get_statement(
        &self,
        ticket: TicketStatementQuery,
        _request: Request<Ticket>,
    ) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        let handle = String::from_utf8_lossy(&ticket.statement_handle).into_owned();
        let stream = self
            .state()
            .results
            .lock()
            .map_err(|_| Status::internal("state poisoned"))?
            .remove(&handle)
            .ok_or_else(|| Status::not_found("unknown or already fetched ticket"))?;
        let schema = stream.schema();
        let cut = match self.shared.faults.take(Point::FlightResult) {
            Some(f @ Fault::CutFlightStream { rows }) => {
                self.shared.faults.record(&f, None, None, false);
                Some(rows)
            }
            _ => None,
        };
        let batches = stream.map_err(|e| FlightError::ExternalError(Box::new(e)));
        let batches: Pin<Box<dyn Stream<Item = Result<RecordBatch, FlightError>> + Send>> =
            match cut {
                None => Box::pin(batches),
                Some(limit) => Box::pin(cut_after(batches, limit)),
            };
        let encoded = FlightDataEncoderBuilder::new()
            .with_schema(schema)
            .build(batches)
            .map_err(|e| match e {
                FlightError::Tonic(status) => *status,
                other => Status::internal(other.to_string()),
            });
        // The stream holds a gauge entry: tests see when the server let it go.
        let open = self.shared.wire.flight_streams.enter();
        let encoded = encoded.map(move |item| {
            let _open = &open;
            item
        });
        let out: DoGetStream = Box::pin(encoded);
        Ok(Response::new(out))
    }

    async fn get_flight_info_sql_info(
        &self,
        query: CommandGetSqlInfo,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        self.user(&request)?;
        let info = FlightInfo::new()
            .try_with_schema(&sql_info_data().schema())
            .map_err(|e| Status::internal(e.to_string()))?
            .with_endpoint(
                FlightEndpoint::new().with_ticket(Ticket::new(query.as_any().encode_to_vec())),
            )
            .with_descriptor(request.into_inner());
        Ok(Response::new(info))
    }

    async fn do_get_sql_info(
        &self,
        query: CommandGetSqlInfo,
        _request: Request<Ticket>,
    ) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        let batch = sql_info_data()
            .record_batch(query.info)
            .map_err(|e| Status::internal(e.to_string()))?;
        let encoded = FlightDataEncoderBuilder::new()
            .build(futures::stream::iter(vec![Ok(batch)]))
            .map_err(|e| Status::internal(e.to_string()));
        let out: DoGetStream = Box::pin(encoded);
        Ok(Response::new(out))
    }

    async fn register_sql_info(&self, _id: i32, _result: &SqlInfo) {}
}

/// Passes `limit` rows through, then fails the stream like a dead BE connection.
fn cut_after(
    batches: impl Stream<Item = Result<RecordBatch, FlightError>> + Send + 'static,
    limit: u64,
) -> impl Stream<Item = Result<RecordBatch, FlightError>> + Send + 'static {
    let mut left = limit;
    batches
        .map_ok(move |batch| {
            let take = usize::try_from(left)
                .unwrap_or(usize::MAX)
                .min(batch.num_rows());
            left -= take as u64;
            batch.slice(0, take)
        })
        .take_while(|r| std::future::ready(r.as_ref().map_or(true, |b| b.num_rows() > 0)))
        .chain(futures::stream::once(async {
            Err(FlightError::Tonic(Box::new(Status::unavailable(
                "the BE closed the result stream",
            ))))
        }))
}

/// An FE-local result as one batch: text columns, or `StatusResult = 0` for a statement
/// without rows (as Doris answers SET and DDL).
fn local_batch(local: Option<LocalRows>) -> Result<RecordBatch, arrow::error::ArrowError> {
    use arrow::array::{ArrayRef, Int32Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    match local {
        None => RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new(
                "StatusResult",
                DataType::Int32,
                false,
            )])),
            vec![Arc::new(Int32Array::from(vec![0]))],
        ),
        Some((names, rows)) => {
            let fields: Vec<Field> = names
                .iter()
                .map(|n| Field::new(n, DataType::Utf8, true))
                .collect();
            let columns: Vec<ArrayRef> = (0..names.len())
                .map(|i| {
                    Arc::new(StringArray::from_iter(
                        rows.iter().map(|r| r.get(i).cloned().flatten()),
                    )) as ArrayRef
                })
                .collect();
            RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        }
    }
}

/// The `GetSqlInfo` answers.
fn sql_info_data() -> arrow_flight::sql::metadata::SqlInfoData {
    let mut builder = arrow_flight::sql::metadata::SqlInfoDataBuilder::new();
    builder.append(SqlInfo::FlightSqlServerName, "DorisFE");
    builder.append(SqlInfo::FlightSqlServerVersion, "4.0.6-emulator");
    builder.append(SqlInfo::FlightSqlServerArrowVersion, "59");
    builder.append(SqlInfo::FlightSqlServerReadOnly, false);
    match builder.build() {
        Ok(data) => data,
        Err(e) => panic!("static SqlInfo data is valid: {e}"),
    }
}

/// Serves the FE (`Role::Fe`) or BE Flight face on `listener` until `stop`.
async fn serve_face(listener: TcpListener, face: Face, mut stop: watch::Receiver<bool>) {
    let incoming = tonic::transport::server::TcpIncoming::from(listener);
    let mut builder = tonic::transport::Server::builder();
    if let Some((cert, key)) = &face.shared.config.tls {
        let identity = tonic::transport::Identity::from_pem(cert, key);
        builder =
            match builder.tls_config(tonic::transport::ServerTlsConfig::new().identity(identity)) {
                Ok(b) => b,
                // The certificate was checked when the HTTP faces were set up.
                Err(_) => return,
            };
    }
    let _ = builder
        .add_service(FlightServiceServer::new(face))
        .serve_with_incoming_shutdown(incoming, async move {
            let _ = stop.wait_for(|s| *s).await;
        })
        .await;
}

/// Starts both Flight faces.
pub fn spawn(
    shared: Arc<Shared>,
    fe: TcpListener,
    be: TcpListener,
    be_port: u16,
    stop: watch::Receiver<bool>,
) {
    let face = |role| Face {
        shared: shared.clone(),
        role,
        be_port,
    };
    tokio::spawn(serve_face(fe, face(Role::Fe), stop.clone()));
    tokio::spawn(serve_face(be, face(Role::Be), stop));
}
