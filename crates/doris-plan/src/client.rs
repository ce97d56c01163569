//! The `_query_plan` client.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use doris_connection::{
    BackendsAnswerError, ClientIdentity, ConnectionSettings, Credentials, HostPort,
};
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

/// Why planning failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// Invalid configuration; nothing was sent.
    #[error("invalid planning configuration: {0}")]
    Config(String),
    /// The FE refused the credentials (`code: 401`).
    #[error("the FE refused the credentials: {0}")]
    Auth(String),
    /// The user may not read the table (`code: 403`).
    #[error("permission denied: {0}")]
    Permission(String),
    /// The database or table does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// The FE rejected the planning query (`data.status` 400, or `"1"`).
    #[error("the FE rejected the planning query: {0}")]
    Rejected(String),
    /// The FE failed internally (`data.status` 500).
    #[error("the FE failed to plan: {0}")]
    Internal(String),
    /// The request failed before an answer arrived (connect, TLS, timeout, a cut
    /// connection). The source is reqwest's error, without the URL.
    #[error("planning request failed: {0}")]
    Request(#[source] reqwest::Error),
    /// The FE answered, but not with a plan to read: an unexpected HTTP status, or an
    /// answer larger than the endpoint's cap.
    #[error("planning request failed: {0}")]
    Transport(String),
    /// The answer is not a plan.
    #[error("malformed planning answer: {0}")]
    Malformed(String),
}

impl PlanError {
    /// Whether a `Single` discovery policy may fall back to one unsplit task.
    pub fn may_fall_back(&self) -> bool {
        matches!(
            self,
            Self::Rejected(_)
                | Self::Internal(_)
                | Self::Request(_)
                | Self::Transport(_)
                | Self::Malformed(_)
        )
    }

    /// The variant's name, for warnings that must not carry details.
    pub fn class(&self) -> &'static str {
        match self {
            Self::Config(_) => "Config",
            Self::Auth(_) => "Auth",
            Self::Permission(_) => "Permission",
            Self::NotFound(_) => "NotFound",
            Self::Rejected(_) => "Rejected",
            Self::Internal(_) => "Internal",
            Self::Request(_) => "Request",
            Self::Transport(_) => "Transport",
            Self::Malformed(_) => "Malformed",
        }
    }
}

/// Where one tablet lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabletPlacement {
    /// Tablet id.
    pub id: u64,
    /// Replica BEs (`host:be_port`).
    pub routings: Vec<String>,
    /// Visible version.
    pub version: i64,
}

/// The tablets a query scans, by ascending id.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QueryPlan {
    /// Tablets.
    pub tablets: Vec<TabletPlacement>,
}

fn http_client(endpoint: &PlanEndpoint) -> Result<reqwest::Client, PlanError> {
    // reqwest is built without a default crypto provider; ring is the workspace's.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder()
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

/// Parses a `_query_plan` answer.
pub(crate) fn parse_answer(body: &[u8]) -> Result<QueryPlan, PlanError> {
    let value: serde_json::Value = serde_json::from_slice(body)
        .map_err(|_| PlanError::Malformed("the answer is not JSON".into()))?;
    let text = |v: Option<&serde_json::Value>| -> String {
        match v {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        }
    };
    let code = value
        .get("code")
        .and_then(serde_json::Value::as_i64)
        .ok_or_else(|| PlanError::Malformed("no numeric `code` in the envelope".into()))?;
    let data = value.get("data");
    match code {
        0 => {}
        401 => return Err(PlanError::Auth(text(data))),
        403 => {
            let detail = text(data);
            return Err(
                if detail.contains("POST body") || detail.contains("malformed json") {
                    PlanError::Rejected(detail)
                } else {
                    PlanError::Permission(detail)
                },
            );
        }
        _ => {
            let detail = text(data);
            let lower = detail.to_ascii_lowercase();
            return Err(
                if lower.contains("unknown table")
                    || lower.contains("unknown database")
                    || lower.contains("does not exist")
                    || lower.contains("not found")
                {
                    PlanError::NotFound(detail)
                } else if lower.contains("denied") {
                    PlanError::Permission(detail)
                } else {
                    PlanError::Rejected(format!("code {code}: {detail}"))
                },
            );
        }
    }
    let data = data
        .and_then(serde_json::Value::as_object)
        .ok_or_else(|| PlanError::Malformed("`data` is not an object".into()))?;
    let exception = text(data.get("exception"));
    match data.get("status") {
        Some(serde_json::Value::Number(n)) if n.as_i64() == Some(200) => {}
        Some(serde_json::Value::Number(n)) if n.as_i64() == Some(500) => {
            return Err(PlanError::Internal(exception));
        }
        // Doris's handler answers every failure after the password check (a missing
        // SELECT privilege included) with `data.status` "1" and the message.
        Some(serde_json::Value::Number(_)) | Some(serde_json::Value::String(_))
            if exception.contains("Access denied") =>
        {
            return Err(PlanError::Permission(exception));
        }
        Some(serde_json::Value::Number(_)) | Some(serde_json::Value::String(_)) => {
            return Err(PlanError::Rejected(exception));
        }
        _ => return Err(PlanError::Malformed("no `data.status`".into())),
    }
    let partitions = data
        .get("partitions")
        .and_then(serde_json::Value::as_object)
        .ok_or_else(|| PlanError::Malformed("no `data.partitions` object".into()))?;
    let mut tablets = BTreeMap::new();
    for (key, info) in partitions {
        let id: u64 = key
            .parse()
            .ok()
            .filter(|id| *id > 0 && key.trim_start_matches('0').len() == key.len())
            .ok_or_else(|| {
                PlanError::Malformed(format!("tablet id {key:?} is not a positive integer"))
            })?;
        let routings = info
            .get("routings")
            .and_then(serde_json::Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let version = info
            .get("version")
            .and_then(serde_json::Value::as_i64)
            .unwrap_or(0);
        if tablets
            .insert(
                id,
                TabletPlacement {
                    id,
                    routings,
                    version,
                },
            )
            .is_some()
        {
            return Err(PlanError::Malformed(format!("tablet {id} is listed twice")));
        }
    }
    Ok(QueryPlan {
        tablets: tablets.into_values().collect(),
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
    parse_answer(&body)
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

    /// JSON of any shape up to three levels deep, its keys mostly those a `_query_plan`
    /// answer has: what a broken or hostile FE may send.
    fn plan_like() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        use serde_json::Value;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            prop::sample::select(vec![0i64, 200, 401, 403, 500, 1, -1]).prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            "[a-z0-9:]{0,8}".prop_map(Value::from),
            prop::sample::select(vec![
                "10005",
                "007",
                "0",
                "-3",
                "Access denied",
                "not found"
            ])
            .prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 32, 5, |inner| {
            let key = prop::sample::select(vec![
                "code",
                "data",
                "msg",
                "status",
                "exception",
                "partitions",
                "routings",
                "version",
                "10005",
                "10007",
                "007",
                "x",
            ])
            .prop_map(str::to_owned);
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map(key, inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Any answer, and any bytes, give a plan or a typed error, never a panic; a plan's
        /// tablet ids are positive, distinct and in order (256 cases).
        #[test]
        fn any_plan_answer_is_parsed_or_refused(
            value in plan_like(),
            raw in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..48),
        ) {
            let _ = parse_answer(&raw);
            if let Ok(plan) = parse_answer(&serde_json::to_vec(&value).unwrap()) {
                let ids: Vec<u64> = plan.tablets.iter().map(|t| t.id).collect();
                proptest::prop_assert!(ids.iter().all(|id| *id > 0));
                proptest::prop_assert!(ids.windows(2).all(|w| w[0] < w[1]), "{:?}", ids);
            }
        }
    }

    #[test]
    fn envelopes_map_to_typed_errors() {
        let ok = br#"{"msg":"success","code":0,"data":{"partitions":{"10007":{"routings":["b:9060"],"version":3,"schemaHash":0},"10005":{"routings":["a:9060","b:9060"],"version":3,"schemaHash":0}},"opaqued_query_plan":"x","status":200},"count":0}"#;
        let plan = parse_answer(ok).unwrap();
        assert_eq!(
            plan.tablets.iter().map(|t| t.id).collect::<Vec<_>>(),
            vec![10005, 10007]
        );
        assert_eq!(plan.tablets[0].routings, vec!["a:9060", "b:9060"]);
        let cases: [(&[u8], &str); 9] = [
            (br#"{"msg":"Unauthorized","code":401,"data":"Access denied","count":0}"#, "Auth"),
            (br#"{"msg":"Bad Request","code":403,"data":"POST body must contains [sql] root object","count":0}"#, "Rejected"),
            (br#"{"msg":"Error","code":1,"data":"errCode = 2, detailMessage = Unknown table 't'","count":0}"#, "NotFound"),
            (br#"{"msg":"success","code":0,"data":{"status":400,"exception":"only support single table filter-prune-scan"},"count":0}"#, "Rejected"),
            (br#"{"msg":"success","code":0,"data":{"status":500,"exception":"boom"},"count":0}"#, "Internal"),
            (br#"{"msg":"success","code":0,"data":{"status":"1","exception":"x"},"count":0}"#, "Rejected"),
            // A missing SELECT privilege: not a 401 (the credentials were good).
            (br#"{"msg":"success","code":0,"data":{"status":"1","exception":"Access denied; you need (at least one of) the (SELECT) privilege(s) for this operation"},"count":0}"#, "Permission"),
            (br#"{"msg":"success","code":0,"data":{"status":200,"partitions":{"01":{}}},"count":0}"#, "Malformed"),
            (b"<html>", "Malformed"),
        ];
        for (body, class) in cases {
            assert_eq!(
                parse_answer(body).unwrap_err().class(),
                class,
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }

    #[test]
    fn debug_hides_the_password() {
        let e = PlanEndpoint::new("http://fe:8030".parse().unwrap(), "u", "pw-Secret-1");
        assert!(!format!("{e:?}").contains("pw-Secret-1"));
    }
}
