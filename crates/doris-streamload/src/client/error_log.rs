//! The first lines of a rejected load's error log, fetched only from an allowed BE.

use super::StreamLoadClient;
use super::body::{MAX_ERROR_LOG_BYTES, read_body_head};

impl StreamLoadClient {
    /// The first lines of an error log, when configured and the URL is an allowed BE.
    pub(super) async fn error_log_head(&self, url: Option<&str>) -> Vec<String> {
        let (Some(url), lines) = (url, self.config.error_log_lines) else {
            return Vec::new();
        };
        if lines == 0 {
            return Vec::new();
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
