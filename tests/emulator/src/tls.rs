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

/// A test CA and one server certificate it signed, all PEM.
#[derive(Clone)]
pub struct TestCa {
    /// The CA certificate (what clients trust).
    pub ca_pem: String,
    /// The server certificate.
    pub cert_pem: String,
    /// The server's private key.
    pub key_pem: String,
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
        Ok(Self {
            ca_pem: ca.pem(),
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }
}

/// A TLS server configuration serving `cert_pem` with `key_pem`.
pub(crate) fn server_config(
    cert_pem: &str,
    key_pem: &str,
) -> Result<Arc<rustls::ServerConfig>, EmulatorError> {
    let certs = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(tls_error)?;
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).map_err(tls_error)?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(tls_error)?
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .map_err(tls_error)?;
    Ok(Arc::new(config))
}
