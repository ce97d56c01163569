//! TLS on the emulator's HTTP faces (FE and BE), with certificates made at run time.
//!
//! [`TestCa::new`] makes a CA and a server certificate it signs for the given names (IP
//! addresses become IP SANs), so every TLS path of a client can be tested end to end: the
//! CA given (verification passes), no CA (the web PKI roots do not know it), and a
//! certificate for another name (host name verification fails).

use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose,
};
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use crate::error::EmulatorError;

/// A test CA, one server certificate and one client certificate it signed, all PEM.
#[derive(Clone)]
pub struct TestCa {
    /// The CA certificate (what clients trust).
    pub ca_pem: String,
    /// The server certificate.
    pub cert_pem: String,
    /// The server's private key.
    pub key_pem: String,
    /// A client certificate (`doris-test-client`, for client authentication), for servers
    /// started with [`crate::EmulatorConfig::tls_client_ca`].
    pub client_cert_pem: String,
    /// The client certificate's private key.
    pub client_key_pem: String,
}

impl std::fmt::Debug for TestCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestCa").finish_non_exhaustive()
    }
}

fn tls_error(e: impl std::fmt::Display) -> EmulatorError {
    EmulatorError::Internal(format!("TLS: {e}"))
}

impl TestCa {
    /// A new CA and a server certificate for `names` (host names or IP addresses).
    pub fn new(names: &[&str]) -> Result<Self, EmulatorError> {
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(tls_error)?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "doris-emulator test CA");
        ca_params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().map_err(tls_error)?)
            .map_err(tls_error)?;
        let key = KeyPair::generate().map_err(tls_error)?;
        let mut params =
            CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>())
                .map_err(tls_error)?;
        params.distinguished_name.push(
            DnType::CommonName,
            names.first().copied().unwrap_or("doris"),
        );
        let cert = params.signed_by(&key, &ca).map_err(tls_error)?;
        let client_key = KeyPair::generate().map_err(tls_error)?;
        let mut client = CertificateParams::new(Vec::<String>::new()).map_err(tls_error)?;
        client
            .distinguished_name
            .push(DnType::CommonName, "doris-test-client");
        client.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
        let client_cert = client.signed_by(&client_key, &ca).map_err(tls_error)?;
        Ok(Self {
            ca_pem: ca.pem(),
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            client_cert_pem: client_cert.pem(),
            client_key_pem: client_key.serialize_pem(),
        })
    }
}

/// A TLS server configuration serving `cert_pem` with `key_pem`; with `client_ca_pem`,
/// every client must present a certificate that CA signed.
pub fn server_config(
    cert_pem: &str,
    key_pem: &str,
    client_ca_pem: Option<&str>,
) -> Result<Arc<rustls::ServerConfig>, EmulatorError> {
    let certs = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(tls_error)?;
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).map_err(tls_error)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(tls_error)?;
    let builder = match client_ca_pem {
        None => builder.with_no_client_auth(),
        Some(pem) => {
            let mut roots = rustls::RootCertStore::empty();
            for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
                roots.add(cert.map_err(tls_error)?).map_err(tls_error)?;
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .build()
            .map_err(tls_error)?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let config = builder.with_single_cert(certs, key).map_err(tls_error)?;
    Ok(Arc::new(config))
}
