//! A Doris user and password: the one credentials type every crate of the workspace takes
//! (Stream Load, `_query_plan`, MySQL, Flight SQL), so a service builds it once and hands
//! it to each client.
//!
//! The password is a [`SecretString`]: `Debug` prints `[REDACTED]`, and the only ways to
//! read it are [`Credentials::expose_password`] and [`Credentials::basic_authorization`],
//! which the clients call at the moment they authenticate.

use std::fmt;

use base64::Engine as _;
use secrecy::{ExposeSecret, SecretString};

/// A Doris user and its password. `Debug` never shows the password.
///
/// ```
/// use doris_connection::Credentials;
/// use secrecy::ExposeSecret as _;
///
/// let loader = Credentials::new("loader", "s3cr3t");
/// assert_eq!(loader.user(), "loader");
/// assert!(!format!("{loader:?}").contains("s3cr3t"));
/// assert_eq!(
///     loader.basic_authorization().expose_secret(),
///     "Basic bG9hZGVyOnMzY3IzdA=="
/// );
/// ```
#[derive(Clone)]
pub struct Credentials {
    user: String,
    password: SecretString,
}

impl Credentials {
    /// A user and its password (empty for Doris's default `root`).
    pub fn new(user: impl Into<String>, password: impl Into<String>) -> Self {
        Self {
            user: user.into(),
            password: SecretString::from(password.into()),
        }
    }

    /// The user name.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// Whether a password is set (an empty one is sent as *no* password over MySQL).
    pub fn has_password(&self) -> bool {
        !self.password.expose_secret().is_empty()
    }

    /// The password, for the client that authenticates with it right now. Never log it,
    /// never put it in an error.
    pub fn expose_password(&self) -> &str {
        self.password.expose_secret()
    }

    /// Whether `other` names the same user with the same password (a cached session made
    /// with old credentials must not be reused with new ones).
    pub fn same_as(&self, other: &Credentials) -> bool {
        self.user == other.user && self.password.expose_secret() == other.password.expose_secret()
    }

    /// The HTTP `Authorization` value for these credentials: `Basic base64(user:password)`
    /// (Stream Load, `_query_plan`, `/api/backends`, the Flight SQL handshake).
    pub fn basic_authorization(&self) -> SecretString {
        let raw = format!("{}:{}", self.user, self.password.expose_secret());
        SecretString::from(format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(raw)
        ))
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("user", &self.user)
            .field("password", &"[REDACTED]")
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_names_the_user_and_hides_the_password() {
        let c = Credentials::new("loader", "Hidden-Pw-42");
        let shown = format!("{c:?} {:#?}", c.clone());
        assert!(shown.contains("loader"), "{shown}");
        assert!(!shown.contains("Hidden-Pw-42"), "{shown}");
        assert!(!format!("{:?}", c.basic_authorization()).contains("Basic"));
    }

    #[test]
    fn basic_authorization_is_user_colon_password_in_base64() {
        let value = Credentials::new("root", "").basic_authorization();
        assert_eq!(value.expose_secret(), "Basic cm9vdDo=");
        let with_colon = Credentials::new("u", "a:b").basic_authorization();
        let encoded = with_colon.expose_secret().strip_prefix("Basic ").unwrap();
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .unwrap();
        assert_eq!(decoded, b"u:a:b");
    }

    #[test]
    fn same_as_compares_user_and_password() {
        let a = Credentials::new("u", "one");
        assert!(a.same_as(&Credentials::new("u", "one")));
        assert!(!a.same_as(&Credentials::new("u", "two")));
        assert!(!a.same_as(&Credentials::new("v", "one")));
        assert!(!Credentials::new("root", "").has_password());
        assert!(a.has_password());
    }
}
