//! A client certificate and its private key, for links whose server asks the client to
//! prove who it is (mutual TLS).
//!
//! The key is a [`SecretString`]: `Debug` shows the certificate's size, never the key.

use std::fmt;

use secrecy::SecretString;

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
