//! The BE's Stream Load answer: [`LoadResponse`], field for field in Doris's order.

use std::time::Instant;

use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// The Stream Load response, field for field in Doris's order.
#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "PascalCase")]
pub struct LoadResponse {
    /// `TxnId` (-1 when none was allocated).
    pub txn_id: i64,
    /// `Label`
    pub label: String,
    /// `Comment`
    pub comment: String,
    /// `TwoPhaseCommit` (a string; absent for group commit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub two_phase_commit: Option<String>,
    /// `GroupCommit` (a bool, only for group commit, instead of `TwoPhaseCommit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_commit: Option<bool>,
    /// `Status`
    pub status: String,
    /// `ExistingJobStatus` (only for Label Already Exists).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub existing_job_status: Option<String>,
    /// `Message`
    pub message: String,
    /// `NumberTotalRows`
    pub number_total_rows: u64,
    /// `NumberLoadedRows`
    pub number_loaded_rows: u64,
    /// `NumberFilteredRows`
    pub number_filtered_rows: u64,
    /// `NumberUnselectedRows`
    pub number_unselected_rows: u64,
    /// `LoadBytes`
    pub load_bytes: u64,
    /// `LoadTimeMs`
    pub load_time_ms: u64,
    /// `BeginTxnTimeMs` (omitted for group commit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub begin_txn_time_ms: Option<u64>,
    /// `StreamLoadPutTimeMs`
    pub stream_load_put_time_ms: u64,
    /// `ReadDataTimeMs`
    pub read_data_time_ms: u64,
    /// `WriteDataTimeMs`
    pub write_data_time_ms: u64,
    /// `ReceiveDataTimeMs`
    pub receive_data_time_ms: u64,
    /// `CommitAndPublishTimeMs` (omitted for group commit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit_and_publish_time_ms: Option<u64>,
    /// `ErrorURL` (only when an error log exists).
    #[serde(rename = "ErrorURL", skip_serializing_if = "Option::is_none")]
    pub error_url: Option<String>,
}

impl LoadResponse {
    /// Serialises as the BE does: 4-space pretty print and a trailing newline.
    pub fn to_body(&self) -> String {
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
        let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
        let _ = self.serialize(&mut ser);
        let mut text = String::from_utf8(out).unwrap_or_default();
        text.push('\n');
        text
    }

    pub(super) fn failed(label: &str, comment: &str, two_phase: bool, message: String) -> Self {
        Self {
            txn_id: -1,
            label: label.to_owned(),
            comment: comment.to_owned(),
            two_phase_commit: Some(two_phase.to_string()),
            status: "Fail".into(),
            message,
            begin_txn_time_ms: Some(0),
            commit_and_publish_time_ms: Some(0),
            ..Self::default()
        }
    }
}

pub(super) fn load_reply(response: &LoadResponse) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json; charset=utf-8")],
        response.to_body(),
    )
        .into_response()
}

/// Milliseconds since `since`.
pub(super) fn ms(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}
