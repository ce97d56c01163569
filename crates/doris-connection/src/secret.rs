//! Where a password comes from: an environment variable or a file read in each process
//! that connects (so a task sent to another process carries the name, not the value), or
//! the value itself. `Debug` shows the variable's name or the file's path, never a value.

use std::fmt;
use std::io::Read;
use std::path::PathBuf;

use secrecy::{ExposeSecret, SecretString};

/// The most bytes a secret file may hold (a password, a token: far less).
pub const MAX_SECRET_FILE_BYTES: u64 = 64 * 1024;

/// Why a secret cannot be named or read. Messages name the variable or the file, never a
/// value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    /// An environment variable's name is not `[A-Za-z_][A-Za-z0-9_]*`.
    #[error("secret environment variable has an invalid name")]
    EnvName,
    /// A file's path is empty.
    #[error("a secret file is given by its path, a non-empty string")]
    EmptyPath,
    /// The environment variable is not set in this process.
    #[error("required secret environment variable '{0}' is not set")]
    Unset(String),
    /// The file cannot be read, is not UTF-8 text, or is larger than
    /// [`MAX_SECRET_FILE_BYTES`].
    #[error("the secret file '{0}' cannot be read as UTF-8 text of at most 64 KiB")]
    Unreadable(String),
}

impl SecretError {
    /// Always [`Configuration`](doris_sql::ErrorKind::Configuration): nothing was sent.
    pub fn kind(&self) -> doris_sql::ErrorKind {
        doris_sql::ErrorKind::Configuration
    }
}

/// A password's source, resolved where a connection is made ([`SecretRef::resolve`]).
///
/// ```
/// use doris_connection::{SecretError, SecretRef};
/// use doris_connection::secrecy::ExposeSecret;
///
/// let inline = SecretRef::inline("s3cr3t");
/// assert_eq!(inline.resolve().unwrap().expose_secret(), "s3cr3t");
/// assert!(!format!("{inline:?}").contains("s3cr3t"));
/// assert_eq!(SecretRef::env("1BAD").unwrap_err(), SecretError::EnvName);
/// let unset = SecretRef::env("DORIS_DOC_UNSET_PASSWORD").unwrap();
/// assert_eq!(
///     unset.resolve().unwrap_err().to_string(),
///     "required secret environment variable 'DORIS_DOC_UNSET_PASSWORD' is not set"
/// );
/// ```
#[derive(Clone)]
pub enum SecretRef {
    /// The environment variable of this name, read in each process that connects.
    Env(String),
    /// The text of this file, one trailing line break dropped, read in each process that
    /// connects (a secret mounted on every worker).
    File(PathBuf),
    /// The value itself (sent wherever the reference is sent: a choice for trusted
    /// transports only).
    Inline(SecretString),
}

impl SecretRef {
    /// The environment variable `name` (`[A-Za-z_][A-Za-z0-9_]*`).
    pub fn env(name: impl Into<String>) -> Result<Self, SecretError> {
        let name = name.into();
        let mut chars = name.chars();
        let first = chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        if !first || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(SecretError::EnvName);
        }
        Ok(Self::Env(name))
    }

    /// The file at `path` (not empty).
    pub fn file(path: impl Into<PathBuf>) -> Result<Self, SecretError> {
        let path = path.into();
        if path.as_os_str().is_empty() {
            return Err(SecretError::EmptyPath);
        }
        Ok(Self::File(path))
    }

    /// The value itself.
    pub fn inline(value: impl Into<String>) -> Self {
        Self::Inline(SecretString::from(value.into()))
    }

    /// The secret's value in this process.
    pub fn resolve(&self) -> Result<SecretString, SecretError> {
        match self {
            Self::Inline(value) => Ok(value.clone()),
            Self::Env(name) => std::env::var(name)
                .map(SecretString::from)
                .map_err(|_| SecretError::Unset(name.clone())),
            Self::File(path) => {
                let unreadable = || SecretError::Unreadable(path.display().to_string());
                let mut bytes = Vec::new();
                std::fs::File::open(path)
                    .and_then(|f| f.take(MAX_SECRET_FILE_BYTES + 1).read_to_end(&mut bytes))
                    .map_err(|_| unreadable())?;
                if bytes.len() as u64 > MAX_SECRET_FILE_BYTES {
                    return Err(unreadable());
                }
                let mut text = String::from_utf8(bytes).map_err(|_| unreadable())?;
                let line_break = if text.ends_with("\r\n") {
                    2
                } else {
                    usize::from(text.ends_with('\n'))
                };
                text.truncate(text.len() - line_break);
                Ok(SecretString::from(text))
            }
        }
    }
}

impl PartialEq for SecretRef {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Env(a), Self::Env(b)) => a == b,
            (Self::File(a), Self::File(b)) => a == b,
            (Self::Inline(a), Self::Inline(b)) => a.expose_secret() == b.expose_secret(),
            _ => false,
        }
    }
}

impl Eq for SecretRef {}

impl fmt::Debug for SecretRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Env(name) => f.debug_tuple("Env").field(name).finish(),
            Self::File(path) => f.debug_tuple("File").field(path).finish(),
            Self::Inline(_) => f.write_str("Inline([REDACTED])"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_secret_drops_one_trailing_line_break_and_refuses_what_is_not_short_text() {
        let dir = std::env::temp_dir().join(format!("doris-secret-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let read = |name: &str, body: &[u8]| {
            let path = dir.join(name);
            std::fs::write(&path, body).unwrap();
            SecretRef::file(&path)
                .unwrap()
                .resolve()
                .map(|s| s.expose_secret().to_owned())
        };
        assert_eq!(read("lf", b"pw\n").unwrap(), "pw");
        assert_eq!(read("crlf", b"pw\r\n").unwrap(), "pw");
        assert_eq!(read("two", b"pw\n\n").unwrap(), "pw\n");
        assert_eq!(read("none", b"pw").unwrap(), "pw");
        assert!(matches!(
            read("latin1", b"p\xe9"),
            Err(SecretError::Unreadable(_))
        ));
        let big = vec![b'a'; MAX_SECRET_FILE_BYTES as usize + 1];
        assert!(matches!(read("big", &big), Err(SecretError::Unreadable(_))));
        let missing = SecretRef::file(dir.join("missing")).unwrap().resolve();
        assert!(matches!(missing, Err(SecretError::Unreadable(_))));
        assert_eq!(SecretRef::file("").unwrap_err(), SecretError::EmptyPath);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn environment_variable_names_follow_the_shells_rule() {
        for good in ["A", "_x", "DORIS_PW_2"] {
            assert!(SecretRef::env(good).is_ok(), "{good}");
        }
        for bad in ["", "2X", "A-B", "A B", "É"] {
            assert_eq!(
                SecretRef::env(bad).unwrap_err(),
                SecretError::EnvName,
                "{bad}"
            );
        }
    }
}
