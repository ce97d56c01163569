//! The first lines of a rejected load's error log, fetched only from Doris's error-log
//! endpoint on the BE that answered the load.

use url::Url;

use super::StreamLoadClient;
use super::body::{MAX_ERROR_LOG_BYTES, read_body_head};

/// The BE's error-log endpoint (`ErrorURL` is `http://<be>:<port>/api/_load_error_log?file=…`).
const ERROR_LOG_PATH: &str = "/api/_load_error_log";

/// Whether `url` is Doris's error-log endpoint on `backend` (same scheme, host and port),
/// asking for one `file` and nothing else: the only URL the client sends its credentials
/// to for a log, whatever a BE writes into `ErrorURL`.
pub(crate) fn is_error_log_of(url: &Url, backend: &Url) -> bool {
    let mut pairs = url.query_pairs();
    let one_file = matches!(pairs.next(), Some((k, v)) if k == "file" && !v.is_empty())
        && pairs.next().is_none();
    url.path() == ERROR_LOG_PATH
        && one_file
        && url.fragment().is_none()
        && url.username().is_empty()
        && url.password().is_none()
        && url.scheme() == backend.scheme()
        && url.host_str().is_some()
        && url.host_str() == backend.host_str()
        && url.port_or_known_default() == backend.port_or_known_default()
}

impl StreamLoadClient {
    /// The first lines of an error log, when configured, the URL is Doris's error-log
    /// endpoint on `backend` (the BE that answered the load) and that BE is allowed.
    pub(super) async fn error_log_head(
        &self,
        url: Option<&str>,
        backend: Option<&Url>,
    ) -> Vec<String> {
        let (Some(url), Some(backend), lines) = (url, backend, self.config.error_log_lines) else {
            return Vec::new();
        };
        if lines == 0 {
            return Vec::new();
        }
        match Url::parse(url) {
            Ok(parsed) if is_error_log_of(&parsed, backend) => {}
            _ => return Vec::new(),
        }
        let Ok(target) = self.allowed_target(url).await else {
            return Vec::new();
        };
        let Ok(response) = self.authorized_get(target).send().await else {
            return Vec::new();
        };
        // Only the head is kept; a log larger than the cap is read no further.
        let Ok(body) = read_body_head(response, MAX_ERROR_LOG_BYTES).await else {
            return Vec::new();
        };
        String::from_utf8_lossy(&body)
            .lines()
            .take(lines)
            .map(str::to_owned)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_error_log_endpoint_of_the_answering_be_is_read() {
        let be = Url::parse("http://10.0.0.7:8040/api/db/t/_stream_load")
            .unwrap_or_else(|_| unreachable!());
        let ok = |u: &str| is_error_log_of(&Url::parse(u).unwrap_or_else(|_| unreachable!()), &be);
        assert!(ok(
            "http://10.0.0.7:8040/api/_load_error_log?file=__shard_1/error_log_x"
        ));
        for refused in [
            // another path on the same BE (an admin endpoint, a metrics page)
            "http://10.0.0.7:8040/api/snapshot?file=x",
            "http://10.0.0.7:8040/api/_load_error_log/../_snapshot?file=x",
            // another BE, port or scheme
            "http://10.0.0.8:8040/api/_load_error_log?file=x",
            "http://10.0.0.7:9040/api/_load_error_log?file=x",
            "https://10.0.0.7:8040/api/_load_error_log?file=x",
            // more than one file, none, a fragment, credentials in the URL
            "http://10.0.0.7:8040/api/_load_error_log?file=x&token=y",
            "http://10.0.0.7:8040/api/_load_error_log",
            "http://10.0.0.7:8040/api/_load_error_log?file=x#frag",
            "http://u:p@10.0.0.7:8040/api/_load_error_log?file=x",
        ] {
            assert!(!ok(refused), "{refused}");
        }
    }
}
