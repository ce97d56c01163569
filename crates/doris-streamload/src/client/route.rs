//! Where a load goes: the FE's redirect (asked with headers only), a configured or
//! remembered BE, and the allowlist every redirect target and error-log URL must pass.

use std::sync::atomic::Ordering;

use http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use url::Url;

use crate::config::{HostPort, Route, host_port};
use crate::error::StreamLoadError;
use crate::response::{Answer, classify};
use crate::wire::{BodyPlan, Waits, WireError};

use super::StreamLoadClient;
use super::attempt::AttemptError;
use super::body::{MAX_BACKENDS_BYTES, read_body_capped};

/// Whether an HTTP status is a redirect the client follows (after checking its target).
pub(super) fn redirect_status(status: StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
}

/// `Location` without userinfo (the FE puts the raw password there).
pub(super) fn strip_userinfo(mut url: Url) -> Url {
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url
}

impl StreamLoadClient {
    /// The alive BEs the FE reports (`GET /api/backends?is_alive=true`).
    pub async fn backends(&self) -> Result<Vec<HostPort>, StreamLoadError> {
        let mut url = Self::api_url(&self.config.fe, &["backends"]);
        url.set_query(Some("is_alive=true"));
        let response =
            self.authorized_get(url)
                .send()
                .await
                .map_err(|e| StreamLoadError::Transport {
                    label: String::new(),
                    attempts: 1,
                    detail: format!("GET /api/backends failed: {}", e.without_url()),
                })?;
        let body = read_body_capped(response, MAX_BACKENDS_BYTES, "/api/backends").await?;
        doris_connection::parse_backends(&body).map_err(|e| match e {
            doris_connection::BackendsAnswerError::Unauthorized(message) => {
                StreamLoadError::Auth { message }
            }
            other => StreamLoadError::Malformed(other.to_string()),
        })
    }

    /// Checks a redirect target against the allowlist; returns it without userinfo.
    pub(super) async fn allowed_target(&self, location: &str) -> Result<Url, StreamLoadError> {
        let parsed = Url::parse(location)
            .or_else(|_| self.config.fe.join(location))
            .map_err(|_| StreamLoadError::RedirectRefused {
                target: "(unparsable Location)".into(),
                reason: "the Location header is not a URL".into(),
            })?;
        let target = strip_userinfo(parsed);
        let refuse = |reason: &str| StreamLoadError::RedirectRefused {
            target: target.to_string(),
            reason: reason.to_owned(),
        };
        if !matches!(target.scheme(), "http" | "https") {
            return Err(refuse("only http and https targets are followed"));
        }
        if self.config.fe.scheme() == "https" && target.scheme() == "http" {
            return Err(refuse(
                "the FE was reached over https; no downgrade to http",
            ));
        }
        let (host, port) = host_port(&target).ok_or_else(|| refuse("no host or port"))?;
        let (fe_host, _) = host_port(&self.config.fe).unwrap_or_default();
        let allowlist = &self.config.allowlist;
        for refresh in [false, true] {
            let reported = if allowlist.reported_backends {
                self.reported_backends(refresh).await?
            } else {
                Vec::new()
            };
            if allowlist.allows(&host, port, &fe_host, &reported) {
                return Ok(target);
            }
            if !allowlist.reported_backends {
                break;
            }
        }
        Err(refuse(allowlist.refusal_reason()))
    }

    async fn reported_backends(&self, refresh: bool) -> Result<Vec<HostPort>, StreamLoadError> {
        if !refresh && let Some(list) = self.reported.lock().ok().and_then(|r| r.clone()) {
            return Ok(list);
        }
        let list = self.backends().await?;
        if let Ok(mut r) = self.reported.lock() {
            *r = Some(list.clone());
        }
        Ok(list)
    }

    /// Finds the BE for the next attempt: a configured one, the remembered one, or the
    /// FE's redirect (asked with the headers only, never the body).
    pub(super) async fn backend_for(
        &self,
        db: &str,
        table: &str,
        headers: &HeaderMap,
    ) -> Result<Result<(Url, bool), Answer>, AttemptError> {
        let path = |base: &Url| Self::api_url(base, &[db, table, "_stream_load"]);
        match &self.config.route {
            Route::Backends(list) => {
                let i = self.next_backend.fetch_add(1, Ordering::Relaxed) % list.len();
                return Ok(Ok((path(&list[i]), false)));
            }
            Route::ViaFe {
                remember_backend: true,
            } => {
                if let Some(be) = self.remembered.lock().ok().and_then(|r| r.clone()) {
                    return Ok(Ok((path(&be), true)));
                }
            }
            Route::ViaFe { .. } => {}
        }
        let mut fe_headers = headers.clone();
        if let Some(policy) = self.config.redirect_policy {
            fe_headers.insert(
                HeaderName::from_static("redirect-policy"),
                HeaderValue::from_static(policy.header_value()),
            );
        }
        let fe_url = path(&self.config.fe);
        let probe = self
            .connector
            .put::<()>(
                &fe_url,
                fe_headers,
                BodyPlan::Withhold,
                Waits::answer_only(self.config.answer_timeout),
                None,
            )
            .await;
        let (exchange, produced) = match probe {
            Ok(r) => r,
            Err(WireError { detail, .. }) => {
                return Err(AttemptError::Retryable {
                    sent: 0,
                    detail: format!("FE: {detail}"),
                });
            }
        };
        if let Some(Err(detail)) = produced {
            return Err(AttemptError::Final(StreamLoadError::Config(format!(
                "{} did not redirect: {detail}; point the client at a Doris FE or configure BEs",
                self.config.fe
            ))));
        }
        if redirect_status(exchange.status) {
            let location = exchange
                .headers
                .get(header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .ok_or_else(|| {
                    AttemptError::Final(StreamLoadError::Malformed(
                        "the FE's redirect has no Location".into(),
                    ))
                })?;
            let target = self
                .allowed_target(location)
                .await
                .map_err(AttemptError::Final)?;
            tracing::debug!(
                host = target.host_str().unwrap_or(""),
                port = target.port_or_known_default().unwrap_or(0),
                "stream load redirected by the FE"
            );
            if matches!(
                self.config.route,
                Route::ViaFe {
                    remember_backend: true
                }
            ) {
                let mut base = target.clone();
                base.set_path("/");
                base.set_query(None);
                if let Ok(mut r) = self.remembered.lock() {
                    *r = Some(base);
                }
            }
            return Ok(Ok((target, false)));
        }
        if exchange.status == StatusCode::OK {
            return classify(&exchange.body)
                .map(Err)
                .map_err(|e| AttemptError::Retryable {
                    sent: 0,
                    detail: format!("FE: {e}"),
                });
        }
        let detail = format!("the FE answered HTTP {}", exchange.status);
        if exchange.status.is_server_error() {
            Err(AttemptError::Retryable { sent: 0, detail })
        } else {
            Err(AttemptError::Final(StreamLoadError::Malformed(detail)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_redirect_statuses_are_followed() {
        for code in [301, 302, 303, 307, 308] {
            assert!(
                redirect_status(StatusCode::from_u16(code).unwrap_or_default()),
                "{code}"
            );
        }
        for code in [200, 304, 305, 400, 500] {
            assert!(
                !redirect_status(StatusCode::from_u16(code).unwrap_or_default()),
                "{code}"
            );
        }
    }

    #[test]
    fn the_password_the_fe_puts_into_location_is_dropped() {
        let url = Url::parse("http://root:s3cret@be:8040/api/d/t/_stream_load?x=1")
            .unwrap_or_else(|e| panic!("{e}"));
        let stripped = strip_userinfo(url);
        assert_eq!(stripped.as_str(), "http://be:8040/api/d/t/_stream_load?x=1");
        assert!(!stripped.as_str().contains("s3cret"));
    }
}
