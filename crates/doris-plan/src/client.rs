//! The FE's HTTP client: `_query_plan` and `/api/backends` over reqwest (the `http`
//! feature).

use std::fmt;
use std::time::Duration;

use doris_connection::{
    BackendsAnswerError, ClientIdentity, ConnectionSettings, Credentials, HostPort,
};

use crate::answer::QueryPlan;
use crate::error::PlanError;
use url::Url;

/// Where the FE is and how to authenticate. `Debug` hides the password.
#[derive(Clone)]
pub struct PlanEndpoint {
    /// FE HTTP base URL (`http://fe:8030`).
    pub fe: Url,
    /// The user and password ([`doris_connection::Credentials`]: `Debug` hides the password).
    pub credentials: Credentials,
    /// Whole-request timeout.
    pub timeout: Duration,
    /// Largest answer accepted.
    pub max_response_bytes: usize,
    /// Extra trusted CA certificates (PEM) for HTTPS.
    pub ca_bundle_pem: Option<Vec<u8>>,
    /// The client certificate and key presented when the FE asks for one (mutual TLS).
    pub client_identity: Option<ClientIdentity>,
}

impl fmt::Debug for PlanEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlanEndpoint")
            .field("fe", &self.fe.as_str())
            .field("credentials", &self.credentials)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl PlanEndpoint {
    /// An endpoint with a 30 s timeout and a 16 MiB answer cap.
    pub fn new(fe: Url, user: impl Into<String>, password: impl Into<String>) -> Self {
        Self::with_credentials(fe, Credentials::new(user, password))
    }

    /// The FE's HTTP face as `settings` describe it: its URL, credentials, trusted CAs and
    /// client certificate, and [`ConnectionSettings::planning_timeout`] as the whole-request timeout.
    pub fn from_settings(settings: &ConnectionSettings) -> Result<Self, PlanError> {
        let fe = settings
            .http_url()
            .map_err(|e| PlanError::Config(e.to_string()))?;
        let mut endpoint = Self::with_credentials(fe, settings.credentials.clone());
        endpoint.timeout = settings.planning_timeout();
        endpoint.ca_bundle_pem = settings.ca_pem.clone();
        endpoint.client_identity = settings.client_identity.clone();
        Ok(endpoint)
    }

    /// The same defaults, with credentials a service already holds.
    pub fn with_credentials(fe: Url, credentials: Credentials) -> Self {
        Self {
            fe,
            credentials,
            timeout: Duration::from_secs(30),
            max_response_bytes: 16 * 1024 * 1024,
            ca_bundle_pem: None,
            client_identity: None,
        }
    }
}

/// The `User-Agent` of every request doris-plan sends (Doris's audit log shows it).
pub const USER_AGENT: &str = concat!("doris-plan/", env!("CARGO_PKG_VERSION"));

fn http_client(endpoint: &PlanEndpoint) -> Result<reqwest::Client, PlanError> {
    // reqwest is built without a default crypto provider; ring is the workspace's.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(endpoint.timeout);
    if let Some(pem) = &endpoint.ca_bundle_pem {
        for cert in reqwest::Certificate::from_pem_bundle(pem)
            .map_err(|e| PlanError::Config(format!("the CA bundle is not valid PEM: {e}")))?
        {
            builder = builder.add_root_certificate(cert);
        }
    }
    if let Some(identity) = &endpoint.client_identity {
        builder = builder.identity(client_identity(identity)?);
    }
    builder
        .build()
        .map_err(|e| PlanError::Config(format!("cannot build the HTTP client: {e}")))
}

/// `identity` as reqwest takes it (key and chain in one PEM buffer), checked first so the
/// error names the part at fault, never its text.
fn client_identity(identity: &ClientIdentity) -> Result<reqwest::Identity, PlanError> {
    use doris_connection::secrecy::{ExposeSecret as _, SecretSlice};
    identity
        .to_der()
        .map_err(|e| PlanError::Config(e.to_string()))?;
    let key = identity.key_pem().expose_secret();
    // Zeroed when dropped, as the key's own copy is.
    let pem =
        SecretSlice::from([key.as_bytes(), b"\n", identity.cert_chain_pem().as_bytes()].concat());
    reqwest::Identity::from_pem(pem.expose_secret()).map_err(|_| {
        PlanError::Config("the client certificate and key cannot be used together".into())
    })
}

/// `POST /api/{db}/{table}/_query_plan` with `{"sql": sql}`.
pub async fn fetch_plan(
    endpoint: &PlanEndpoint,
    database: &str,
    table: &str,
    sql: &str,
) -> Result<QueryPlan, PlanError> {
    let url = fe_api_url(endpoint, &[database, table, "_query_plan"])?;
    if database.is_empty() || table.is_empty() {
        return Err(PlanError::Config(
            "database and table must not be empty".into(),
        ));
    }
    let mut response = authorized(http_client(endpoint)?.post(url), endpoint)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(serde_json::json!({ "sql": sql }).to_string())
        .send()
        .await
        .map_err(|e| PlanError::Request(e.without_url()))?;
    let body = read_capped(endpoint, "_query_plan", &mut response).await?;
    crate::answer::parse_plan_answer(&body)
}

/// `<fe>/api/<segments…>` (each segment percent-encoded), once the FE URL is checked to be
/// `http(s)://host:port`.
fn fe_api_url(endpoint: &PlanEndpoint, segments: &[&str]) -> Result<Url, PlanError> {
    if !matches!(endpoint.fe.scheme(), "http" | "https") || endpoint.fe.host_str().is_none() {
        return Err(PlanError::Config(
            "the FE URL must be http(s)://host:port".into(),
        ));
    }
    let mut url = endpoint.fe.clone();
    url.path_segments_mut()
        .map_err(|_| PlanError::Config("the FE URL cannot carry a path".into()))?
        .clear()
        .push("api")
        .extend(segments);
    Ok(url)
}

/// The request with the endpoint's Basic credentials (reqwest marks the header sensitive,
/// so it is never logged).
fn authorized(
    request: reqwest::RequestBuilder,
    endpoint: &PlanEndpoint,
) -> reqwest::RequestBuilder {
    request.basic_auth(
        endpoint.credentials.user(),
        Some(endpoint.credentials.expose_password()),
    )
}

/// Reads a `200 OK` answer of `what` (the endpoint, for the error) up to the endpoint's
/// cap; other statuses are typed errors.
async fn read_capped(
    endpoint: &PlanEndpoint,
    what: &str,
    response: &mut reqwest::Response,
) -> Result<Vec<u8>, PlanError> {
    let status = response.status();
    if status != reqwest::StatusCode::OK {
        return Err(match status.as_u16() {
            401 => PlanError::Auth(format!("HTTP {status}")),
            403 => PlanError::Permission(format!("HTTP {status}")),
            _ => PlanError::Transport(format!("the FE answered HTTP {status}")),
        });
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| PlanError::Request(e.without_url()))?
    {
        if body.len() + chunk.len() > endpoint.max_response_bytes {
            return Err(PlanError::Transport(format!(
                "the {what} answer is larger than {} bytes",
                endpoint.max_response_bytes
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The alive BEs the FE reports (`GET /api/backends?is_alive=true`), each with its HTTP
/// port: what [`doris_connection::AddressAllowlist`] calls the reported backends.
pub async fn fetch_backends(endpoint: &PlanEndpoint) -> Result<Vec<HostPort>, PlanError> {
    let mut url = fe_api_url(endpoint, &["backends"])?;
    url.set_query(Some("is_alive=true"));
    let mut response = authorized(http_client(endpoint)?.get(url), endpoint)
        .send()
        .await
        .map_err(|e| PlanError::Request(e.without_url()))?;
    let body = read_capped(endpoint, "/api/backends", &mut response).await?;
    doris_connection::parse_backends(&body).map_err(|e| match e {
        BackendsAnswerError::Unauthorized(m) => PlanError::Auth(m),
        other => PlanError::Malformed(other.to_string()),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn debug_hides_the_password() {
        let e = PlanEndpoint::new("http://fe:8030".parse().unwrap(), "u", "pw-Secret-1");
        assert!(!format!("{e:?}").contains("pw-Secret-1"));
    }
}
