//! Reading answers from servers: every body read has a cap.

use crate::error::StreamLoadError;

/// Largest `/api/backends` answer read (thousands of BEs fit in far less).
pub(super) const MAX_BACKENDS_BYTES: usize = 4 << 20;

/// Most of an error log read (its first lines are all that is kept).
pub(super) const MAX_ERROR_LOG_BYTES: usize = 1 << 20;

/// Reads a response body, refusing one larger than `cap` bytes; `what` names the endpoint
/// in the error.
pub(super) async fn read_body_capped(
    mut response: reqwest::Response,
    cap: usize,
    what: &str,
) -> Result<Vec<u8>, StreamLoadError> {
    if response.content_length().is_some_and(|n| n > cap as u64) {
        return Err(StreamLoadError::Malformed(format!(
            "{what}: the answer is larger than the {cap}-byte cap"
        )));
    }
    let mut out = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| {
        StreamLoadError::Malformed(format!(
            "{what}: the answer was cut off: {}",
            e.without_url()
        ))
    })? {
        if out.len() + chunk.len() > cap {
            return Err(StreamLoadError::Malformed(format!(
                "{what}: the answer is larger than the {cap}-byte cap"
            )));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// The first `cap` bytes of a body (the rest is not read).
pub(super) async fn read_body_head(
    mut response: reqwest::Response,
    cap: usize,
) -> Result<Vec<u8>, reqwest::Error> {
    let mut out = Vec::new();
    while out.len() < cap {
        let Some(chunk) = response.chunk().await? else {
            break;
        };
        let room = cap - out.len();
        out.extend_from_slice(&chunk[..chunk.len().min(room)]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(body: &'static str, announce_length: bool) -> reqwest::Response {
        let mut builder = http::Response::builder().status(200);
        if announce_length {
            builder = builder.header(http::header::CONTENT_LENGTH, body.len());
        }
        reqwest::Response::from(builder.body(body).unwrap_or_default())
    }

    #[tokio::test]
    async fn a_body_within_the_cap_is_read_whole() {
        let body = read_body_capped(response("0123456789", true), 10, "/x")
            .await
            .ok();
        assert_eq!(body.as_deref(), Some(&b"0123456789"[..]));
    }

    #[tokio::test]
    async fn a_body_over_the_cap_is_refused_whether_or_not_its_length_is_announced() {
        for announce in [true, false] {
            let Err(StreamLoadError::Malformed(message)) =
                read_body_capped(response("0123456789", announce), 9, "/api/backends").await
            else {
                panic!("a 10-byte body passed a 9-byte cap (announced: {announce})");
            };
            assert_eq!(
                message,
                "/api/backends: the answer is larger than the 9-byte cap"
            );
            // The body itself is never part of the message.
            assert!(!message.contains("0123"));
        }
    }

    #[tokio::test]
    async fn the_head_of_a_body_stops_at_the_cap() {
        let head = read_body_head(response("0123456789", false), 4).await.ok();
        assert_eq!(head.as_deref(), Some(&b"0123"[..]));
        let whole = read_body_head(response("01", false), 4).await.ok();
        assert_eq!(whole.as_deref(), Some(&b"01"[..]));
    }
}
