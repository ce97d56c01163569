//! The process's FE sessions: one handshake per FE, user and TLS setting, shared by every
//! read (Doris caps Flight sessions per user), re-made when the FE forgets the token.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_flight::FlightInfo;
use arrow_flight::flight_service_client::FlightServiceClient;
use doris_connection::Credentials;
use tonic::transport::Channel;

use super::{FlightSqlEndpoint, flight_info};
use crate::error::ReadError;

/// An FE connection and its bearer token.
struct FeSession {
    fe: FlightServiceClient<Channel>,
    token: String,
    /// The credentials the token was obtained with (a changed password handshakes again).
    credentials: Credentials,
}

/// The process's FE sessions, by FE address, user and TLS. Each is locked while a read
/// plans its query (`GetFlightInfo`), so plans on one Doris session never overlap; the
/// `DoGet`s that follow run outside the lock.
type SessionSlot = Arc<tokio::sync::Mutex<Option<FeSession>>>;

/// FE `host:port`, user, TLS.
type SessionKey = (String, String, bool);

type SessionTable = std::sync::Mutex<HashMap<SessionKey, SessionSlot>>;

fn sessions() -> &'static SessionTable {
    static SESSIONS: std::sync::OnceLock<SessionTable> = std::sync::OnceLock::new();
    SESSIONS.get_or_init(Default::default)
}

/// Forgets every shared Flight session of this process (the FE expires them itself); the
/// next read handshakes again.
pub fn forget_sessions() {
    if let Ok(mut all) = sessions().lock() {
        all.clear();
    }
}

/// Plans `sql` on the FE: on the shared session when the endpoint reuses sessions (one
/// handshake per process and FE), otherwise on a new one. Returns the plan and the token
/// its tickets go with.
pub(super) async fn plan(
    endpoint: &FlightSqlEndpoint,
    sql: &str,
) -> Result<(FlightInfo, String), ReadError> {
    if !endpoint.reuse_session {
        let mut fe = endpoint.connect(&endpoint.fe_host_port()).await?;
        let mut token = endpoint.handshake(&mut fe).await?;
        let info = flight_info(endpoint, &mut fe, &mut token, sql).await?;
        return Ok((info, token));
    }
    let key = (
        endpoint.fe_host_port(),
        endpoint.credentials.user().to_owned(),
        endpoint.tls,
    );
    let slot = sessions()
        .lock()
        .map_err(|_| ReadError::Transport("the Flight session table is poisoned".into()))?
        .entry(key)
        .or_default()
        .clone();
    let mut guard = slot.lock().await;
    let stale = guard
        .as_ref()
        .is_none_or(|s| !s.credentials.same_as(&endpoint.credentials));
    if stale {
        let mut fe = endpoint.connect(&endpoint.fe_host_port()).await?;
        let token = endpoint.handshake(&mut fe).await?;
        *guard = Some(FeSession {
            fe,
            token,
            credentials: endpoint.credentials.clone(),
        });
    }
    let Some(session) = guard.as_mut() else {
        return Err(ReadError::Transport("no Flight session".into()));
    };
    match flight_info(endpoint, &mut session.fe, &mut session.token, sql).await {
        Ok(info) => Ok((info, session.token.clone())),
        // A kept session's link may have died since its last read (the FE restarted, an
        // idle connection was closed): the plan is asked once more on a new link and
        // session. A plan changes nothing in Doris, so asking twice is safe.
        Err(ReadError::Transport(_)) if !stale => {
            *guard = None;
            let mut fe = endpoint.connect(&endpoint.fe_host_port()).await?;
            let mut token = endpoint.handshake(&mut fe).await?;
            let info = flight_info(endpoint, &mut fe, &mut token, sql).await?;
            *guard = Some(FeSession {
                fe,
                token: token.clone(),
                credentials: endpoint.credentials.clone(),
            });
            Ok((info, token))
        }
        Err(e) => {
            if matches!(e, ReadError::Transport(_) | ReadError::Auth(_)) {
                // A broken link or a refused token: the next read starts afresh.
                *guard = None;
            }
            Err(e)
        }
    }
}
