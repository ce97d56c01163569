//! A client certificate and its private key, for links whose server asks the client to
//! prove who it is (mutual TLS).
//!
//! The key is a [`SecretString`]: `Debug` shows the certificate's size, never the key.

use std::fmt;

use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use secrecy::{ExposeSecret as _, SecretString};

/// A client certificate chain and its private key, both PEM. `Debug` hides the key.
///
/// ```
/// use doris_connection::ClientIdentity;
///
/// let identity = ClientIdentity::from_pem(
///     "-----BEGIN CERTIFICATE-----\n…\n-----END CERTIFICATE-----\n",
///     "-----BEGIN PRIVATE KEY-----\nsecret\n-----END PRIVATE KEY-----\n",
/// );
/// assert!(!format!("{identity:?}").contains("secret"));
/// ```
#[derive(Clone)]
pub struct ClientIdentity {
    cert_chain_pem: String,
    key_pem: SecretString,
}

impl ClientIdentity {
    /// The certificate chain (the client's certificate first) and its private key, PEM.
    /// They are checked where a TLS link is built, which names what is wrong.
    pub fn from_pem(cert_chain_pem: impl Into<String>, key_pem: impl Into<String>) -> Self {
        Self {
            cert_chain_pem: cert_chain_pem.into(),
            key_pem: SecretString::from(key_pem.into()),
        }
    }

    /// The certificate chain, PEM.
    pub fn cert_chain_pem(&self) -> &str {
        &self.cert_chain_pem
    }

    /// The private key, PEM (read it only to build a TLS link).
    pub fn key_pem(&self) -> &SecretString {
        &self.key_pem
    }
}

/// Why a [`ClientIdentity`] cannot be used. The messages name the part, never its text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IdentityError {
    /// The certificate chain is not PEM, or holds no certificate.
    #[error("the client certificate chain holds no readable PEM certificate")]
    Certificate,
    /// The key is not a PEM private key (PKCS#8, PKCS#1 or SEC1; an encrypted key is not
    /// read).
    #[error("the client key is not an unencrypted PEM private key")]
    Key,
}

impl IdentityError {
    /// Always [`Configuration`](doris_sql::ErrorKind::Configuration): nothing was sent.
    pub fn kind(&self) -> doris_sql::ErrorKind {
        doris_sql::ErrorKind::Configuration
    }
}

impl ClientIdentity {
    /// The chain and key as TLS libraries take them (rustls, and what is built on it),
    /// checked: at least one certificate, and a readable private key.
    ///
    /// ```
    /// use doris_connection::{ClientIdentity, IdentityError};
    ///
    /// let identity = ClientIdentity::from_pem("not a certificate", "not a key");
    /// assert_eq!(identity.to_der().unwrap_err(), IdentityError::Certificate);
    /// ```
    pub fn to_der(
        &self,
    ) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), IdentityError> {
        let certs = CertificateDer::pem_slice_iter(self.cert_chain_pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| IdentityError::Certificate)?;
        if certs.is_empty() {
            return Err(IdentityError::Certificate);
        }
        let key = PrivateKeyDer::from_pem_slice(self.key_pem.expose_secret().as_bytes())
            .map_err(|_| IdentityError::Key)?;
        Ok((certs, key))
    }
}

/// Two identities are equal when both their chains and their keys are.
impl PartialEq for ClientIdentity {
    fn eq(&self, other: &Self) -> bool {
        self.cert_chain_pem == other.cert_chain_pem
            && self.key_pem.expose_secret() == other.key_pem.expose_secret()
    }
}

impl Eq for ClientIdentity {}

impl fmt::Debug for ClientIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientIdentity")
            .field(
                "cert_chain_pem",
                &format_args!("<{} bytes>", self.cert_chain_pem.len()),
            )
            .field("key_pem", &"[REDACTED]")
            .finish()
    }
}
