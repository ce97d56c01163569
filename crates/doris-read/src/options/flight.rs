//! `flight_options`: the ADBC Flight SQL driver's string keys, as code written for
//! ADBC-based connectors passes them, mapped onto [`crate::FlightSqlEndpoint`].
//!
//! | key | here |
//! |---|---|
//! | `max_parallel_endpoints` | [`FlightSqlEndpoint::max_parallel`](crate::FlightSqlEndpoint::max_parallel), 1 to [`FlightSqlEndpoint::MOST_PARALLEL`](crate::FlightSqlEndpoint::MOST_PARALLEL) |
//! | `adbc.flight.sql.client_option.tls_root_certs` | PEM CA certificates trusted on a Flight read's links (the FE and BE Flight endpoints, and the FE's HTTP list of BEs), besides the web PKI roots and `tls_ca_file` |
//! | `adbc.flight.sql.client_option.with_max_msg_size` | the largest gRPC message, in bytes ([`FlightSqlEndpoint::max_message_bytes`](crate::FlightSqlEndpoint::max_message_bytes)) |
//! | `adbc.flight.sql.client_option.tls_skip_verify` | `"false"` only: certificates are always verified |
//! | `adbc.flight.sql.client_option.mtls_cert_chain`, `…mtls_private_key` | the client certificate chain and its key (PEM text, both or neither), presented on a Flight read's links when the server asks for one ([`FlightSqlEndpoint::client_identity`](crate::FlightSqlEndpoint::client_identity)) |
//!
//! The settings a read takes as arguments of its own (URI, user, password, timeouts) are
//! refused naming the argument, and keys this transport cannot honour (call headers, a
//! host name override, …) saying why.

use std::collections::BTreeMap;

use doris_connection::ClientIdentity;

use super::{holds_certificate, refuse_keys};
use crate::error::ReadError;
use crate::flight::FlightSqlEndpoint;

const CLIENT_OPTION: &str = "adbc.flight.sql.client_option.";
const TLS_ROOT_CERTS: &str = "adbc.flight.sql.client_option.tls_root_certs";
const TLS_SKIP_VERIFY: &str = "adbc.flight.sql.client_option.tls_skip_verify";
const MTLS_CERT_CHAIN: &str = "adbc.flight.sql.client_option.mtls_cert_chain";
const MTLS_PRIVATE_KEY: &str = "adbc.flight.sql.client_option.mtls_private_key";
const MAX_MESSAGE_SIZE: &str = "adbc.flight.sql.client_option.with_max_msg_size";
/// The ADBC key that sets the largest gRPC message (named by the error of an answer over it).
pub(crate) const MAX_MESSAGE_SIZE_KEY: &str = MAX_MESSAGE_SIZE;
const MAX_PARALLEL: &str = "max_parallel_endpoints";
const CALL_HEADER: &str = "adbc.flight.sql.rpc.call_header.";

/// Keys a read sets through arguments of its own, each with what to use instead.
const RESERVED: &[(&str, &str)] = &[
    (
        "adbc.flight.sql.rpc.timeout_seconds.connect",
        "use connect_timeout_seconds",
    ),
    (
        "adbc.flight.sql.client_option.with_block",
        "the connector connects when a task runs",
    ),
    (
        "adbc.flight.sql.rpc.timeout_seconds.fetch",
        "use query_timeout_seconds",
    ),
    (
        "adbc.flight.sql.rpc.timeout_seconds.query",
        "use query_timeout_seconds",
    ),
    ("password", "use password"),
    ("uri", "use host, flight_port and flight_secure"),
    ("username", "use username"),
];

/// ADBC keys this transport cannot honour, each with the reason.
const REFUSED: &[(&str, &str)] = &[
    (
        "adbc.flight.sql.client_option.tls_override_hostname",
        "the certificate must name the host connected to (flight_endpoint_rewrite changes \
         where the BEs are reached)",
    ),
    (
        "adbc.flight.sql.client_option.authority",
        "the connector sends the host it connects to",
    ),
    (
        "adbc.flight.sql.client_option.with_cookie_middleware",
        "Doris's Flight SQL authenticates with a bearer token, not cookies",
    ),
    (
        "adbc.flight.sql.authorization_header",
        "use username and password",
    ),
    (
        "adbc.flight.sql.rpc.timeout_seconds.update",
        "a read runs no update",
    ),
];

/// The keys [`FlightOptions::parse`] maps.
const SUPPORTED: &[&str] = &[
    MAX_PARALLEL,
    TLS_ROOT_CERTS,
    MAX_MESSAGE_SIZE,
    TLS_SKIP_VERIFY,
    MTLS_CERT_CHAIN,
    MTLS_PRIVATE_KEY,
];

/// Largest gRPC message size accepted (gRPC's own limit, 2 GiB − 1).
const MOST_MESSAGE_BYTES: usize = i32::MAX as usize;

/// What `flight_options` ask of the Flight links.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct FlightOptions {
    /// Endpoints fetched at once (`None`: the endpoint's default).
    pub max_parallel: Option<usize>,
    /// PEM CA certificates trusted on the Flight links.
    pub tls_root_certs: Option<String>,
    /// The largest gRPC message, in bytes (`None`: the endpoint's default).
    pub max_message_bytes: Option<usize>,
    /// The client certificate and key (mutual TLS). `Debug` hides the key.
    pub client_identity: Option<ClientIdentity>,
}

impl std::fmt::Debug for FlightOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlightOptions")
            .field("max_parallel", &self.max_parallel)
            .field(
                "tls_root_certs",
                &self.tls_root_certs.as_ref().map(|_| ".."),
            )
            .field("max_message_bytes", &self.max_message_bytes)
            .field("client_identity", &self.client_identity)
            .finish()
    }
}

impl FlightOptions {
    /// Refuses `flight_options` keys that would send a secret where the options travel to
    /// other processes (a pickled task of Daft's Ray runner): the client's private key as
    /// text (`…mtls_private_key`); the certificate and key as files, read by each process
    /// that connects, are the way there.
    ///
    /// ```
    /// use doris_read::options::FlightOptions;
    /// assert!(FlightOptions::check_travels(["max_parallel_endpoints"]).is_ok());
    /// let key = "adbc.flight.sql.client_option.mtls_private_key";
    /// assert!(FlightOptions::check_travels([key]).is_err());
    /// ```
    pub fn check_travels<'a>(keys: impl IntoIterator<Item = &'a str>) -> Result<(), ReadError> {
        if keys.into_iter().any(|key| key == MTLS_PRIVATE_KEY) {
            return Err(ReadError::Config(format!(
                "flight_options {MTLS_PRIVATE_KEY} is a private key as text, which pickling (as \
                 Daft's Ray runner does with every task) would send with the tasks: give the \
                 client certificate and key as files, tls_client_cert_file and \
                 tls_client_key_file, read by each process that connects"
            )));
        }
        Ok(())
    }

    /// Maps ADBC keys; the first problem found is a [`ReadError::Config`] naming the key.
    pub fn parse(pairs: impl IntoIterator<Item = (String, String)>) -> Result<Self, ReadError> {
        let mut options: BTreeMap<String, String> = pairs.into_iter().collect();
        refuse_keys("flight_options", &options, RESERVED, REFUSED)?;
        if options.keys().any(|k| k.starts_with(CALL_HEADER)) {
            return Err(config(format!(
                "flight_options {CALL_HEADER}* is refused: no call headers are sent besides \
                 the session's own"
            )));
        }
        let unknown: Vec<&str> = options
            .keys()
            .map(String::as_str)
            .filter(|k| !SUPPORTED.contains(k))
            .collect();
        if !unknown.is_empty() {
            let hint = if unknown.iter().any(|k| k.starts_with(CLIENT_OPTION)) {
                " by the native Flight transport"
            } else {
                ""
            };
            return Err(config(format!(
                "flight_options {} are not supported{hint} (supported: {})",
                unknown.join(", "),
                SUPPORTED.join(", ")
            )));
        }
        let most = FlightSqlEndpoint::MOST_PARALLEL;
        let max_parallel = options
            .remove(MAX_PARALLEL)
            .map(|n| {
                count(&n).filter(|n| (1..=most).contains(n)).ok_or_else(|| {
                    config(format!(
                        "flight_options {MAX_PARALLEL} must be an integer from 1 to {most}"
                    ))
                })
            })
            .transpose()?;
        let max_message_bytes = options
            .remove(MAX_MESSAGE_SIZE)
            .map(|n| {
                count(&n)
                    .filter(|n| (1..=MOST_MESSAGE_BYTES).contains(n))
                    .ok_or_else(|| {
                        config(format!(
                            "flight_options {MAX_MESSAGE_SIZE} must be an integer from 1 to \
                             {MOST_MESSAGE_BYTES}"
                        ))
                    })
            })
            .transpose()?;
        if let Some(skip) = options.remove(TLS_SKIP_VERIFY)
            && !skip.eq_ignore_ascii_case("false")
        {
            return Err(config(format!(
                "flight_options {TLS_SKIP_VERIFY} must be \"false\": certificates are always \
                 verified (trust a private CA with {TLS_ROOT_CERTS} or tls_ca_file)"
            )));
        }
        let tls_root_certs = match options.remove(TLS_ROOT_CERTS) {
            None => None,
            Some(pem) if holds_certificate(&pem) => Some(pem),
            Some(_) => {
                return Err(config(format!(
                    "flight_options {TLS_ROOT_CERTS} must hold PEM certificates"
                )));
            }
        };
        let client_identity = match (
            options.remove(MTLS_CERT_CHAIN),
            options.remove(MTLS_PRIVATE_KEY),
        ) {
            (None, None) => None,
            (Some(chain), Some(key)) => {
                let identity = ClientIdentity::from_pem(chain, key);
                identity.to_der().map_err(|e| {
                    config(format!(
                        "flight_options {MTLS_CERT_CHAIN} and {MTLS_PRIVATE_KEY}: {e}"
                    ))
                })?;
                Some(identity)
            }
            (Some(_), None) | (None, Some(_)) => {
                return Err(config(format!(
                    "flight_options {MTLS_CERT_CHAIN} and {MTLS_PRIVATE_KEY} go together: \
                     give both or neither"
                )));
            }
        };
        Ok(Self {
            max_parallel,
            tls_root_certs,
            max_message_bytes,
            client_identity,
        })
    }

    /// Sets what the options ask on `endpoint`: the root certificates join its CA bundle
    /// (and that of its FE HTTP face, which lists the BEs); the client certificate replaces
    /// the connection's on the Flight links and that HTTP face.
    pub fn apply(&self, endpoint: &mut FlightSqlEndpoint) {
        if let Some(identity) = &self.client_identity {
            endpoint.client_identity = Some(identity.clone());
            if let Some(fe_http) = &mut endpoint.fe_http {
                fe_http.client_identity = Some(identity.clone());
            }
        }
        if let Some(n) = self.max_parallel {
            endpoint.max_parallel = n;
        }
        if let Some(n) = self.max_message_bytes {
            endpoint.max_message_bytes = n;
        }
        if let Some(pem) = &self.tls_root_certs {
            add_roots(&mut endpoint.ca_bundle_pem, pem);
            // The BEs a Flight read may be sent to are listed by the FE's HTTP face: the
            // same trust for that link of the read.
            if let Some(fe_http) = &mut endpoint.fe_http {
                add_roots(&mut fe_http.ca_bundle_pem, pem);
            }
        }
    }
}

/// `pem` appended to a CA bundle.
fn add_roots(bundle: &mut Option<Vec<u8>>, pem: &str) {
    let bundle = bundle.get_or_insert_with(Vec::new);
    if !bundle.is_empty() && !bundle.ends_with(b"\n") {
        bundle.push(b'\n');
    }
    bundle.extend_from_slice(pem.as_bytes());
}

/// A decimal count (digits only).
fn count(text: &str) -> Option<usize> {
    (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

fn config(message: String) -> ReadError {
    ReadError::Config(message)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const PEM: &str = "-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----\n";
    /// PEM blocks whose base64 reads (their DER is checked only by a TLS handshake).
    const CHAIN: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    const KEY: &str = "-----BEGIN PRIVATE KEY-----\ns3cr3t0=\n-----END PRIVATE KEY-----\n";

    fn parse(pairs: &[(&str, &str)]) -> Result<FlightOptions, ReadError> {
        FlightOptions::parse(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        )
    }

    #[test]
    fn adbc_keys_map_onto_the_endpoint() {
        let options = parse(&[
            (MAX_PARALLEL, "3"),
            (MAX_MESSAGE_SIZE, "1048576"),
            (TLS_ROOT_CERTS, PEM),
            (TLS_SKIP_VERIFY, "False"),
        ])
        .unwrap();
        let mut endpoint = FlightSqlEndpoint::new("fe", 8070, "u", "p");
        assert!(endpoint.fe_http.is_some());
        endpoint.ca_bundle_pem =
            Some(b"-----BEGIN CERTIFICATE-----\nA\n-----END CERTIFICATE-----".to_vec());
        options.apply(&mut endpoint);
        assert_eq!(endpoint.max_parallel, 3);
        assert_eq!(endpoint.max_message_bytes, 1 << 20);
        let bundle = String::from_utf8(endpoint.ca_bundle_pem.unwrap()).unwrap();
        assert_eq!(bundle.matches("BEGIN CERTIFICATE").count(), 2, "{bundle}");
        let listing = endpoint.fe_http.unwrap().ca_bundle_pem.unwrap();
        assert_eq!(listing, PEM.as_bytes());
        assert!(!format!("{options:?}").contains("MII"));
        assert_eq!(parse(&[]).unwrap(), FlightOptions::default());
    }

    #[test]
    fn a_client_certificate_goes_to_the_flight_links_and_the_be_listing() {
        let options = parse(&[(MTLS_CERT_CHAIN, CHAIN), (MTLS_PRIVATE_KEY, KEY)]).unwrap();
        assert!(!format!("{options:?}").contains("s3cr3t"));
        let mut endpoint = FlightSqlEndpoint::new("fe", 8070, "u", "p");
        options.apply(&mut endpoint);
        let on = |identity: &Option<ClientIdentity>| {
            identity.as_ref().map(|i| i.cert_chain_pem().to_owned())
        };
        assert_eq!(on(&endpoint.client_identity).as_deref(), Some(CHAIN));
        assert_eq!(
            on(&endpoint.fe_http.unwrap().client_identity).as_deref(),
            Some(CHAIN)
        );
    }

    #[test]
    fn other_keys_are_refused_by_name_without_their_value() {
        let refused = |pairs: &[(&str, &str)], needle: &str| {
            let e = parse(pairs).unwrap_err().to_string();
            assert!(e.contains(needle), "{e}");
            assert!(!e.contains("s3cr3t"), "{e}");
        };
        refused(&[(MAX_PARALLEL, "0")], "from 1 to 64");
        refused(&[(MAX_PARALLEL, "+4")], MAX_PARALLEL);
        refused(&[(MAX_MESSAGE_SIZE, "-1")], MAX_MESSAGE_SIZE);
        refused(&[(TLS_SKIP_VERIFY, "true")], "always verified");
        refused(&[(TLS_ROOT_CERTS, "s3cr3t")], "must hold PEM certificates");
        refused(&[(MTLS_PRIVATE_KEY, "s3cr3t")], "give both or neither");
        refused(&[(MTLS_CERT_CHAIN, PEM)], "give both or neither");
        refused(
            &[(MTLS_CERT_CHAIN, "s3cr3t"), (MTLS_PRIVATE_KEY, "s3cr3t")],
            "client certificate chain holds no readable PEM certificate",
        );
        refused(
            &[(MTLS_CERT_CHAIN, CHAIN), (MTLS_PRIVATE_KEY, "s3cr3t")],
            "client key is not an unencrypted PEM private key",
        );
        refused(
            &[("adbc.flight.sql.rpc.call_header.x-token", "s3cr3t")],
            "no call headers",
        );
        refused(
            &[
                ("adbc.flight.sql.rpc.timeout_seconds.query", "1"),
                ("username", "s3cr3t"),
            ],
            "adbc.flight.sql.rpc.timeout_seconds.query (use query_timeout_seconds), username (use username)",
        );
        refused(
            &[("adbc.flight.sql.client_option.made_up", "1")],
            "not supported by the native Flight transport",
        );
        refused(&[("made_up", "1")], "made_up are not supported");
    }
}
