//! Why planning failed: one error type for the client and the answer parser.

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
    #[cfg(feature = "http")]
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
    /// The error's [`ErrorKind`](doris_sql::ErrorKind): a refused plan and an FE that
    /// failed to plan are [`Rejected`](doris_sql::ErrorKind::Rejected); a request that
    /// timed out is [`Timeout`](doris_sql::ErrorKind::Timeout); a failed link or an answer
    /// that is not a plan is [`Transport`](doris_sql::ErrorKind::Transport).
    pub fn kind(&self) -> doris_sql::ErrorKind {
        use doris_sql::ErrorKind;
        match self {
            Self::Config(_) => ErrorKind::Configuration,
            Self::Auth(_) => ErrorKind::Authentication,
            Self::Permission(_) => ErrorKind::Permission,
            Self::NotFound(_) => ErrorKind::NotFound,
            Self::Rejected(_) | Self::Internal(_) => ErrorKind::Rejected,
            #[cfg(feature = "http")]
            Self::Request(e) if e.is_timeout() => ErrorKind::Timeout,
            #[cfg(feature = "http")]
            Self::Request(_) => ErrorKind::Transport,
            Self::Transport(_) | Self::Malformed(_) => ErrorKind::Transport,
        }
    }

    /// Whether a `Single` discovery policy may fall back to one unsplit task.
    pub fn may_fall_back(&self) -> bool {
        matches!(
            self,
            Self::Rejected(_) | Self::Internal(_) | Self::Transport(_) | Self::Malformed(_)
        ) || self.is_request()
    }

    #[cfg(feature = "http")]
    fn is_request(&self) -> bool {
        matches!(self, Self::Request(_))
    }

    #[cfg(not(feature = "http"))]
    fn is_request(&self) -> bool {
        false
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
            #[cfg(feature = "http")]
            Self::Request(_) => "Request",
            Self::Transport(_) => "Transport",
            Self::Malformed(_) => "Malformed",
        }
    }
}
