//! The Arrow Flight SQL faces (docs/emulator.md, "Arrow Flight SQL"): the FE service (default port 8070)
//! and the BE `DoGet` service (default 8050).
//!
//! - **FE.** `Handshake` checks `authorization: Basic …` with the same users as the MySQL
//!   face and answers `authorization: Bearer <token>`; every later call must carry the
//!   bearer (`invalid bearer token` otherwise). At most `flight_session_cap` tokens live at
//!   once (`Reach limit of connections`). `GetFlightInfo(CommandStatementQuery)` plans the
//!   SELECT with the MySQL face's engine (privileges, `TABLET(…)` hints) and answers one
//!   endpoint per output partition, each with a `TicketStatementQuery` whose handle is
//!   `<hex id>:<sql>` and the BE location `grpc+tcp://<advertise host>:<BE Flight port>`
//!   (`grpc+tls://` when the emulator serves TLS, on both faces). With several simulated
//!   BEs, every endpoint of a query names the BE that sinks it, and that BE's bandwidth
//!   paces its frames ([`crate::backends`]).
//!   Statements the FE answers itself (SET, USE, SHOW, `SELECT @@…`, DDL) get one endpoint
//!   without a location, fetched from the FE (`StatusResult = 0` for those without rows).
//!   Prepared statements with `?` parameters (`CreatePreparedStatement`, `DoPut` of one
//!   parameter row, `GetFlightInfo`, `ClosePreparedStatement`; see `flight/prepared.rs`) run the
//!   statement with the values bound as literals, as the MySQL face's COM_STMT_EXECUTE does.
//!   `GetSchema` is not served (`UNIMPLEMENTED`). `GetSqlInfo` names the server `DorisFE`.
//! - **BE.** `DoGet(ticket)` needs no credentials (the ticket is the credential), streams
//!   the partition's schema and batches, and forgets the ticket. Types are the BE's Flight
//!   types (`wire`): the storage types (LARGEINT as utf8, DATEV2 as date32, …) except where
//!   Doris's serde writes otherwise — DATETIMEV2(p) as a timestamp zoned in the session's
//!   time zone (naive on the releases with apache/doris#66873), IPV4 as int32, TIMESTAMPTZ
//!   tagged with the session zone.
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
use arrow_flight::sql::server::PeekableFlightDataStream;
use arrow_flight::sql::{
    ActionClosePreparedStatementRequest, ActionCreatePreparedStatementRequest,
    ActionCreatePreparedStatementResult, CommandGetSqlInfo, CommandPreparedStatementQuery,
    CommandStatementQuery, DoPutPreparedStatementResult, ProstMessageExt, SqlInfo,
    TicketStatementQuery,
};
use arrow_flight::{
    Action, FlightDescriptor, FlightEndpoint, FlightInfo, HandshakeRequest, HandshakeResponse,
    Ticket,
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

mod prepared;
pub mod wire;

/// Tokens and pending results shared by the FE and BE Flight faces.
#[derive(Default)]
pub struct FlightState {
    evict_on_next_info: std::sync::atomic::AtomicBool,
    tokens: Mutex<HashMap<String, String>>,
    results: Mutex<HashMap<String, Parked>>,
    prepared: prepared::PreparedQueries,
}

/// A result partition waiting for its `DoGet`, and the BE that sinks it (none for results
/// the FE answers itself).
struct Parked {
    stream: SendableRecordBatchStream,
    sink: Option<Arc<crate::backends::Sink>>,
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
    /// Every simulated BE's Flight port, BE 0 first.
    be_ports: Arc<Vec<u16>>,
}

static FLIGHT_SESSION_IDS: AtomicU32 = AtomicU32::new(1 << 20);

/// A Doris session for one Flight call (Flight keeps no session state across calls).
fn flight_session(shared: &Shared, user: String, peer: std::net::SocketAddr) -> Session {
    Session {
        id: FLIGHT_SESSION_IDS.fetch_add(1, Ordering::Relaxed),
        user,
        peer,
        database: None,
        time_zone: shared.config.time_zone.clone(),
        sql_mode: String::new(),
        partial_update: false,
        insert_filter: crate::mysql::InsertFilter::default(),
        txn: None,
        version_comment: shared.config.profile.version_comment(),
        client: "unnamed".into(),
    }
}

type DoGetStream = Pin<Box<dyn Stream<Item = Result<arrow_flight::FlightData, Status>> + Send>>;

impl Face {
    /// Logs one call's shape in the [`crate::wire_log`], its client from `user-agent`.
    fn log<T>(&self, request: &Request<T>, shape: impl FnOnce() -> String) {
        if let Some(log) = &self.shared.wire_log {
            let client = crate::wire_log::client_of_user_agent(
                request
                    .metadata()
                    .get("user-agent")
                    .and_then(|v| v.to_str().ok()),
            );
            let face = if self.role == Role::Be {
                "be-flight"
            } else {
                "fe-flight"
            };
            log.record(&client, face, shape());
        }
    }

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
    /// the BE that sinks them (`None`: an FE-local result, no location).
    async fn plan(
        &self,
        user: String,
        peer: std::net::SocketAddr,
        sql: &str,
    ) -> Result<(arrow::datatypes::SchemaRef, Vec<String>, Option<usize>), Status> {
        let mut session = flight_session(&self.shared, user, peer);
        if !crate::mysql::query::runs_on_select_engine(sql) {
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
                .insert(
                    handle.clone(),
                    Parked {
                        stream: Box::pin(stream),
                        sink: None,
                    },
                );
            return Ok((schema, vec![handle], None));
        }
        let planned = crate::mysql::select::plan(&self.shared, &session, sql)
            .await
            .map_err(|e| Status::internal(e.message))?;
        // The BE's Arrow forms of the values (`wire`), in the schema and every batch.
        let form = self.wire_form(&session);
        let types = planned.doris_types().to_vec();
        let schema = wire::wire_schema(&planned.schema(), &types, &form);
        // Every partition of one query is sunk by one BE (see `crate::backends`).
        let sink = Arc::new(self.shared.backends.sink(planned.holders()));
        let be = sink.backend();
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
            let (wire_schema, types) = (schema.clone(), types.clone());
            let converted = stream.map(move |batch| {
                batch.and_then(|b| {
                    wire::to_wire(&b, &wire_schema, &types).map_err(|e| {
                        datafusion::error::DataFusionError::ArrowError(Box::new(e), None)
                    })
                })
            });
            let stream: SendableRecordBatchStream = Box::pin(
                datafusion::physical_plan::stream::RecordBatchStreamAdapter::new(
                    schema.clone(),
                    converted,
                ),
            );
            results.insert(
                handle.clone(),
                Parked {
                    stream,
                    sink: Some(sink.clone()),
                },
            );
            handles.push(handle);
        }
        Ok((schema, handles, Some(be)))
    }

    /// The `FlightInfo` of `sql` run as `user`: planned and parked, one endpoint per
    /// partition at the BE that sinks the query (or at the FE for its own statements).
    async fn info_for(
        &self,
        user: String,
        sql: &str,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let peer = request
            .remote_addr()
            .unwrap_or_else(|| std::net::SocketAddr::from(([127, 0, 0, 1], 0)));
        let (schema, handles, be) = self.plan(user, peer, sql).await?;
        let scheme = if self.shared.config.tls.is_some() {
            "grpc+tls"
        } else {
            "grpc+tcp"
        };
        let fault = self.shared.faults.take(Point::FlightInfo);
        let location = format!(
            "{scheme}://{}:{}",
            self.shared.config.advertise_host,
            self.be_ports[be.unwrap_or(0).min(self.be_ports.len() - 1)]
        );
        let location_of = |index: usize| match &fault {
            Some(Fault::FlightLocation {
                host,
                port,
                endpoint,
            }) if endpoint.is_none_or(|only| only == index) => {
                format!("{scheme}://{host}:{port}")
            }
            _ => location.clone(),
        };
        let mut info = FlightInfo::new()
            .try_with_schema(&schema)
            .map_err(|e| Status::internal(e.to_string()))?
            .with_descriptor(request.into_inner());
        for (index, handle) in handles.into_iter().enumerate() {
            let ticket = TicketStatementQuery {
                statement_handle: handle.into_bytes().into(),
            };
            let mut endpoint =
                FlightEndpoint::new().with_ticket(Ticket::new(ticket.as_any().encode_to_vec()));
            if be.is_some() {
                endpoint = endpoint.with_location(location_of(index));
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

    /// The schema `sql` would answer with, planned without running it.
    async fn result_schema(
        &self,
        user: String,
        peer: std::net::SocketAddr,
        sql: &str,
    ) -> Result<arrow::datatypes::SchemaRef, Status> {
        let session = flight_session(&self.shared, user, peer);
        if !crate::mysql::query::runs_on_select_engine(sql) {
            return Ok(Arc::new(arrow::datatypes::Schema::empty()));
        }
        let planned = crate::mysql::select::plan(&self.shared, &session, sql)
            .await
            .map_err(|e| Status::internal(e.message))?;
        let form = self.wire_form(&session);
        Ok(wire::wire_schema(
            &planned.schema(),
            planned.doris_types(),
            &form,
        ))
    }

    /// How a result of `session` travels: its zone and the release's DATETIME form.
    fn wire_form(&self, session: &Session) -> wire::WireForm {
        wire::WireForm {
            zone: session.time_zone.clone(),
            naive_datetime: self.shared.config.profile.flight_datetime_naive(),
        }
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
        self.log(&request, || "Handshake".into());
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
        let payload = match self.shared.faults.take(Point::FlightHandshake) {
            Some(f @ Fault::OversizedHandshake { bytes }) => {
                self.shared.faults.record(&f, None, None, false);
                vec![b'x'; bytes].into()
            }
            _ => token.clone().into(),
        };
        let output = futures::stream::iter(vec![Ok(HandshakeResponse {
            protocol_version: 0,
            payload,
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
        self.log(&request, || {
            format!(
                "GetFlightInfo CommandStatementQuery: {}",
                crate::wire_log::sql_shape(&query.query)
            )
        });
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
        self.info_for(user, &query.query, request).await
    }

    async fn get_flight_info_prepared_statement(
        &self,
        query: CommandPreparedStatementQuery,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        self.log(&request, || {
            "GetFlightInfo CommandPreparedStatementQuery".into()
        });
        if self.role == Role::Be {
            return Err(Status::unimplemented("GetFlightInfo is served by the FE"));
        }
        let user = self.user(&request)?;
        let sql = self
            .state()
            .prepared
            .bound_sql(&query.prepared_statement_handle, &user)?;
        self.info_for(user, &sql, request).await
    }

    async fn do_action_create_prepared_statement(
        &self,
        query: ActionCreatePreparedStatementRequest,
        request: Request<Action>,
    ) -> Result<ActionCreatePreparedStatementResult, Status> {
        self.log(&request, || {
            format!(
                "CreatePreparedStatement: {}",
                crate::wire_log::sql_shape(&query.query)
            )
        });
        if self.role == Role::Be {
            return Err(Status::unimplemented(
                "prepared statements are served by the FE",
            ));
        }
        let user = self.user(&request)?;
        let peer = request
            .remote_addr()
            .unwrap_or_else(|| std::net::SocketAddr::from(([127, 0, 0, 1], 0)));
        let (handle, probe) = self.state().prepared.create(&user, &query.query)?;
        // The result's schema, found by planning the statement with every parameter NULL.
        let schema = self.result_schema(user, peer, &probe).await?;
        Ok(ActionCreatePreparedStatementResult {
            prepared_statement_handle: handle.into(),
            dataset_schema: prepared::schema_bytes(&schema)?,
            parameter_schema: Default::default(),
        })
    }

    async fn do_put_prepared_statement_query(
        &self,
        query: CommandPreparedStatementQuery,
        request: Request<PeekableFlightDataStream>,
    ) -> Result<DoPutPreparedStatementResult, Status> {
        self.log(&request, || "DoPut CommandPreparedStatementQuery".into());
        let user = self.user(&request)?;
        let stream = request
            .into_inner()
            .map_err(|s| FlightError::Tonic(Box::new(s)));
        let batches: Vec<RecordBatch> =
            arrow_flight::decode::FlightRecordBatchStream::new_from_flight_data(stream)
                .try_collect()
                .await
                .map_err(|e| {
                    Status::invalid_argument(format!("cannot read the parameters: {e}"))
                })?;
        self.state()
            .prepared
            .bind(&query.prepared_statement_handle, &user, &batches)?;
        Ok(DoPutPreparedStatementResult {
            prepared_statement_handle: Some(query.prepared_statement_handle),
        })
    }

    async fn do_action_close_prepared_statement(
        &self,
        query: ActionClosePreparedStatementRequest,
        request: Request<Action>,
    ) -> Result<(), Status> {
        self.log(&request, || "ClosePreparedStatement".into());
        let user = self.user(&request)?;
        self.state()
            .prepared
            .close(&query.prepared_statement_handle, &user);
        Ok(())
    }

    async fn do_get_statement(
        &self,
        ticket: TicketStatementQuery,
        request: Request<Ticket>,
    ) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        self.log(&request, || "DoGet TicketStatementQuery".into());
        let handle = String::from_utf8_lossy(&ticket.statement_handle).into_owned();
        let Parked { stream, sink } = self
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
        let encoded = encoded.then(move |item| {
            let _open = &open;
            // The sinking BE's bandwidth paces the frames it sends.
            let wait = match (&item, &sink) {
                (Ok(data), Some(sink)) => {
                    sink.reserve((data.data_header.len() + data.data_body.len()) as u64)
                }
                _ => std::time::Duration::ZERO,
            };
            async move {
                if !wait.is_zero() {
                    tokio::time::sleep(wait).await;
                }
                item
            }
        });
        let out: DoGetStream = Box::pin(encoded);
        Ok(Response::new(out))
    }

    async fn get_flight_info_sql_info(
        &self,
        query: CommandGetSqlInfo,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        self.log(&request, || "GetFlightInfo CommandGetSqlInfo".into());
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
        request: Request<Ticket>,
    ) -> Result<Response<<Self as FlightService>::DoGetStream>, Status> {
        self.log(&request, || "DoGet CommandGetSqlInfo".into());
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
        let mut tls = tonic::transport::ServerTlsConfig::new().identity(identity);
        // As on the HTTP and MySQL faces: every client must present a certificate this CA
        // signed.
        if let Some(ca) = &face.shared.config.tls_client_ca {
            tls = tls.client_ca_root(tonic::transport::Certificate::from_pem(ca));
        }
        builder = match builder.tls_config(tls) {
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
    bes: Vec<TcpListener>,
    stop: watch::Receiver<bool>,
) {
    let be_ports: Arc<Vec<u16>> = Arc::new(
        bes.iter()
            .map(|l| l.local_addr().map_or(0, |a| a.port()))
            .collect(),
    );
    let face = |role| Face {
        shared: shared.clone(),
        role,
        be_ports: be_ports.clone(),
    };
    tokio::spawn(serve_face(fe, face(Role::Fe), stop.clone()));
    for be in bes {
        tokio::spawn(serve_face(be, face(Role::Be), stop.clone()));
    }
}
