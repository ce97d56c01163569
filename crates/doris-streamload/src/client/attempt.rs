//! One attempt of a load: find the BE, stream the body once, read the answer.

use std::sync::Arc;

use http::{HeaderMap, StatusCode};

use crate::encode::{Encoded, encode};
use crate::error::StreamLoadError;
use crate::options::LoadOptions;
use crate::response::{Answer, classify};
use crate::wire::{BodyPlan, Waits, WireError};

use super::StreamLoadClient;
use super::source::Source;

/// What a failed attempt allows.
pub(super) enum AttemptError {
    /// Retry under the same label; `sent` body bytes may have reached Doris.
    Retryable { sent: u64, detail: String },
    /// Do not retry.
    Final(StreamLoadError),
}

/// One attempt's answer.
pub(super) struct Attempted {
    pub(super) answer: Answer,
    pub(super) encoded: Option<Encoded>,
    pub(super) sent: u64,
    /// The BE that answered (`None`: the FE answered before any redirect).
    pub(super) backend: Option<url::Url>,
}

impl StreamLoadClient {
    pub(super) async fn attempt(
        &self,
        db: &str,
        table: &str,
        headers: &HeaderMap,
        options: &LoadOptions,
        source: &Arc<Source>,
    ) -> Result<Attempted, AttemptError> {
        let (target, remembered) = match self.backend_for(db, table, headers).await? {
            Ok(t) => t,
            Err(answer) => {
                return Ok(Attempted {
                    answer,
                    encoded: None,
                    sent: 0,
                    backend: None,
                });
            }
        };
        let producer_source = source.clone();
        let (format, compression) = (options.format.clone(), options.compression);
        let produce: crate::wire::Producer<Encoded> = Box::new(move |sink| {
            let src = producer_source;
            let (batches, limits) = src.plan();
            let (enc, sink) = encode(&src.schema, &batches, &format, compression, limits, sink)
                .map_err(|e| e.to_string())?;
            sink.finish().map_err(|e| e.to_string())?;
            if limits.is_some() {
                src.set_cut(enc.rows);
            }
            Ok(enc)
        });
        let result = self
            .connector
            .put(
                &target,
                headers.clone(),
                BodyPlan::Stream(produce),
                Waits {
                    answer: self.config.answer_timeout,
                    upload_stall: self.config.upload_stall_timeout,
                },
                None,
            )
            .await;
        let (exchange, produced) = match result {
            Ok(r) => r,
            Err(WireError {
                body_bytes_sent,
                detail,
            }) => {
                if remembered
                    && body_bytes_sent == 0
                    && let Ok(mut r) = self.remembered.lock()
                {
                    *r = None;
                }
                if detail.starts_with("body encoding failed") {
                    return Err(AttemptError::Final(StreamLoadError::Encode(detail)));
                }
                return Err(AttemptError::Retryable {
                    sent: body_bytes_sent,
                    detail: format!("BE: {detail}"),
                });
            }
        };
        let encoded = match produced {
            Some(Ok(e)) => Some(e),
            Some(Err(e)) => return Err(AttemptError::Final(StreamLoadError::Encode(e))),
            None => None,
        };
        let sent = exchange.body_bytes_sent;
        if exchange.status != StatusCode::OK {
            let detail = format!("the BE answered HTTP {}", exchange.status);
            return if sent == 0 && !exchange.status.is_server_error() {
                Err(AttemptError::Final(StreamLoadError::Malformed(detail)))
            } else {
                Err(AttemptError::Retryable { sent, detail })
            };
        }
        match classify(&exchange.body) {
            Ok(answer) => Ok(Attempted {
                answer,
                encoded,
                sent,
                backend: Some(target),
            }),
            Err(e) => Err(AttemptError::Retryable {
                sent,
                detail: e.to_string(),
            }),
        }
    }
}
