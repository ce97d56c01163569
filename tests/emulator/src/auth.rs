//! Users and passwords.
//!
//! Only password checks exist so far; privileges (`GRANT`/`REVOKE`) arrive with the MySQL
//! face (see `docs/emulator.md`).

use std::collections::HashMap;
use std::sync::RwLock;

/// The emulator's users: `root` (empty password unless configured) and any added later.
#[derive(Debug)]
pub struct Users {
    passwords: RwLock<HashMap<String, String>>,
}

impl Users {
    /// Users with `root` and the given password.
    pub fn new(root_password: &str) -> Self {
        Self {
            passwords: RwLock::new(HashMap::from([(
                "root".to_owned(),
                root_password.to_owned(),
            )])),
        }
    }

    /// Adds or replaces a user.
    pub fn set(&self, user: &str, password: &str) {
        if let Ok(mut p) = self.passwords.write() {
            p.insert(user.to_owned(), password.to_owned());
        }
    }

    /// The password of `user`, if the user exists.
    pub fn password(&self, user: &str) -> Option<String> {
        self.passwords
            .read()
            .ok()
            .and_then(|p| p.get(user).cloned())
    }

    /// True if `user` exists and `password` is theirs.
    pub fn check(&self, user: &str, password: &str) -> bool {
        self.passwords
            .read()
            .map(|p| p.get(user).is_some_and(|pw| pw == password))
            .unwrap_or(false)
    }
}

/// Credentials from an `Authorization: Basic …` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BasicAuth {
    /// The user name (any `default_cluster:` prefix removed).
    pub user: String,
    /// The password.
    pub password: String,
}

/// Parses an `Authorization` header value; `None` if it is not well-formed Basic auth.
pub fn parse_basic(value: Option<&str>) -> Option<BasicAuth> {
    use base64::Engine as _;
    let encoded = value?.strip_prefix("Basic ")?.trim();
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, password) = text.split_once(':')?;
    let user = user.strip_prefix("default_cluster:").unwrap_or(user);
    Some(BasicAuth {
        user: user.to_owned(),
        password: password.to_owned(),
    })
}

/// Doris's access-denied text.
pub fn access_denied(user: &str, host: &str, used_password: bool) -> String {
    format!(
        "Access denied for user '{user}@{host}' (using password: {})",
        if used_password { "YES" } else { "NO" }
    )
}
