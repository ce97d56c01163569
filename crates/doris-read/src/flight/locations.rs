//! Where each endpoint's `DoGet` goes: the FE, a rewritten address, or a location the
//! allowlist admits (explicit targets, or the BEs the FE's HTTP face reports).

use std::collections::HashMap;

use arrow_flight::FlightEndpoint;
use doris_connection::HostPort;

use super::FlightSqlEndpoint;
use crate::error::ReadError;

/// Where an endpoint's `DoGet` goes.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Destination {
    /// No location: the FE.
    Fe,
    /// A location the user rewrote: the rewritten address.
    Rewritten(String),
    /// A location as the FE named it, to be checked against the allowlist.
    Named(String),
}

/// Where an endpoint's `DoGet` goes: its first location (rewritten if asked) or the FE.
pub(super) fn destination(
    endpoint: &FlightSqlEndpoint,
    ep: &FlightEndpoint,
) -> Result<Destination, ReadError> {
    let Some(location) = ep.location.first().filter(|l| !l.uri.is_empty()) else {
        return Ok(Destination::Fe);
    };
    let host_port = location
        .uri
        .split_once("://")
        .map_or(location.uri.as_str(), |(_, rest)| rest)
        .trim_end_matches('/');
    if host_port.is_empty() {
        return Err(ReadError::Metadata(
            "the FE sent an endpoint location without an address".into(),
        ));
    }
    Ok(match endpoint.rewrite.get(host_port) {
        Some(to) => Destination::Rewritten(to.clone()),
        None if host_port.eq_ignore_ascii_case(&endpoint.fe_host_port()) => Destination::Fe,
        None => Destination::Named(host_port.to_owned()),
    })
}

/// The BEs each FE HTTP endpoint reported, by its URL (fetched once per process, refreshed
/// once when a location is not among them).
fn reported_cache() -> &'static std::sync::Mutex<HashMap<String, Vec<HostPort>>> {
    static CACHE: std::sync::OnceLock<std::sync::Mutex<HashMap<String, Vec<HostPort>>>> =
        std::sync::OnceLock::new();
    CACHE.get_or_init(Default::default)
}

async fn reported_backends(
    endpoint: &FlightSqlEndpoint,
    refresh: bool,
) -> Result<Vec<HostPort>, ReadError> {
    let Some(http) = endpoint
        .fe_http
        .as_ref()
        .filter(|_| endpoint.allowlist.reported_backends)
    else {
        return Ok(Vec::new());
    };
    if endpoint.tls && http.fe.scheme() != "https" {
        // The list is fetched with the user's credentials (Basic auth): a read the user
        // put on TLS never sends them in clear.
        return Err(ReadError::Config(
            "the Flight link uses TLS but the FE's HTTP port is plain HTTP: the BEs it reports \
             (/api/backends) are not fetched with the credentials in clear; set http_secure=True, \
             or allow the BE locations explicitly or by a rewrite"
                .into(),
        ));
    }
    let key = http.fe.as_str().to_owned();
    if !refresh
        && let Some(list) = reported_cache()
            .lock()
            .ok()
            .and_then(|c| c.get(&key).cloned())
    {
        return Ok(list);
    }
    let list = doris_plan::fetch_backends(http).await.map_err(|e| match e {
        doris_plan::PlanError::Auth(m) => ReadError::Auth(m),
        doris_plan::PlanError::Permission(m) => ReadError::Permission(m),
        doris_plan::PlanError::Config(m) => ReadError::Config(m),
        other => ReadError::Transport(format!(
            "cannot list the BEs the FE reports (/api/backends on the FE's HTTP port) to check a \
             Flight location; make the HTTP port reachable, or allow the location explicitly or \
             by a rewrite: {other}"
        )),
    })?;
    if let Ok(mut cache) = reported_cache().lock() {
        cache.insert(key, list.clone());
    }
    Ok(list)
}

/// The address of every endpoint's `DoGet`, each admitted: the FE, a rewritten location,
/// or a location the allowlist admits (the reported BEs refreshed once before a refusal).
pub(super) async fn admitted_addresses(
    endpoint: &FlightSqlEndpoint,
    endpoints: &[FlightEndpoint],
) -> Result<Vec<String>, ReadError> {
    let mut reported: Option<Vec<HostPort>> = None;
    let mut refreshed = false;
    let mut out = Vec::with_capacity(endpoints.len());
    for ep in endpoints {
        let named = match destination(endpoint, ep)? {
            Destination::Fe => {
                out.push(endpoint.fe_host_port());
                continue;
            }
            Destination::Rewritten(to) => {
                out.push(to);
                continue;
            }
            Destination::Named(named) => named,
        };
        let refuse = |reason: &str| ReadError::LocationRefused {
            location: named.clone(),
            reason: reason.to_owned(),
        };
        let Some(at) = HostPort::parse(&named) else {
            return Err(refuse("it is not host:port"));
        };
        let list = &endpoint.allowlist;
        let admitted = |reported: &[HostPort]| {
            list.allows_on_reported_host(&at.host, at.port, &endpoint.host, reported)
        };
        if !admitted(&[]) {
            if reported.is_none() {
                reported = Some(reported_backends(endpoint, false).await?);
            }
            if !reported.as_deref().is_some_and(admitted) && !refreshed {
                refreshed = true;
                reported = Some(reported_backends(endpoint, true).await?);
            }
            if !reported.as_deref().is_some_and(admitted) {
                return Err(refuse(
                    if endpoint.fe_http.is_none() || !list.reported_backends {
                        "it is not an explicit target, and reported BEs are not consulted"
                    } else {
                        "its host is not a BE the FE reports, nor an explicit target"
                    },
                ));
            }
        }
        out.push(named);
    }
    Ok(out)
}
