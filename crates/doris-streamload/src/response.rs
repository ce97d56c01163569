//! Doris's answers: the BE's Stream Load JSON, the FE's envelopes, and the 2PC replies,
//! parsed leniently (unknown fields ignored, missing ones defaulted) and classified.

use serde::Deserialize;

use crate::error::StreamLoadError;

/// Doris answers are small; anything larger is not an answer.
pub(crate) const MAX_ANSWER_BYTES: usize = 1 << 20;

/// The BE's Stream Load response (its fields as docs/emulator.md describes them), every field.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "PascalCase", default)]
pub struct LoadResponse {
    /// `TxnId` (-1 when none was allocated).
    pub txn_id: i64,
    /// `Label`
    pub label: String,
    /// `Comment`
    pub comment: String,
    /// `TwoPhaseCommit` (Doris sends the string `"true"`/`"false"`).
    #[serde(deserialize_with = "string_or_bool")]
    pub two_phase_commit: bool,
    /// `GroupCommit` (group-commit loads only).
    pub group_commit: bool,
    /// `Status`
    pub status: String,
    /// `ExistingJobStatus` (Label Already Exists only).
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
    /// `BeginTxnTimeMs`
    pub begin_txn_time_ms: u64,
    /// `StreamLoadPutTimeMs`
    pub stream_load_put_time_ms: u64,
    /// `ReadDataTimeMs`
    pub read_data_time_ms: u64,
    /// `WriteDataTimeMs`
    pub write_data_time_ms: u64,
    /// `ReceiveDataTimeMs`
    pub receive_data_time_ms: u64,
    /// `CommitAndPublishTimeMs`
    pub commit_and_publish_time_ms: u64,
    /// `ErrorURL` (absent or empty when there is no error log).
    #[serde(rename = "ErrorURL")]
    pub error_url: Option<String>,
}

fn string_or_bool<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        B(bool),
        S(String),
    }
    Ok(match Either::deserialize(d)? {
        Either::B(b) => b,
        Either::S(s) => s.eq_ignore_ascii_case("true"),
    })
}

/// `ExistingJobStatus` of a `Label Already Exists` answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExistingJobStatus {
    /// The earlier load is still running (PREPARE).
    Running,
    /// A 2PC load waits for commit or abort.
    Precommitted,
    /// The earlier load committed (COMMITTED or VISIBLE): its rows are, or will be, there.
    Finished,
    /// Doris sent something else (or nothing).
    Unknown,
}

impl ExistingJobStatus {
    fn parse(text: Option<&str>) -> Self {
        match text.map(str::to_ascii_uppercase).as_deref() {
            Some("RUNNING") => Self::Running,
            Some("PRECOMMITTED") => Self::Precommitted,
            Some("FINISHED") => Self::Finished,
            _ => Self::Unknown,
        }
    }
}

/// What one answer means ([`classify`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Answer {
    /// `Success` (or, with 2PC, pre-committed).
    Success(LoadResponse),
    /// `Publish Timeout`: committed, visible later.
    PublishTimeout(LoadResponse),
    /// `Label Already Exists`.
    LabelExists {
        /// The label's state (`ExistingJobStatus`).
        existing: ExistingJobStatus,
        /// The label's transaction, from `… relate to txn [<id>]` in `Message`.
        txn_id: Option<i64>,
    },
    /// Credentials refused.
    Auth(String),
    /// `Fail` or an FE `FAILED` envelope.
    Fail {
        /// Doris's `Message` (or the envelope's `msg` and `data`).
        message: String,
        /// Doris's `ErrorURL`, when it is not empty.
        error_url: Option<String>,
    },
}

/// The transaction id in `… relate to txn [<id>]`.
pub(crate) fn related_txn(message: &str) -> Option<i64> {
    let start = message.find("relate to txn [")? + "relate to txn [".len();
    let end = message[start..].find(']')? + start;
    message[start..end].parse().ok()
}

fn is_auth_text(message: &str) -> bool {
    message.contains("Access denied for user")
        || message.contains("no valid Basic authorization")
        || message.contains("[NOT_AUTHORIZED]")
}

/// Classifies a Stream Load answer's body (the BE's JSON or an FE envelope). A body over
/// 1 MiB, not JSON, not an object, with a field of the wrong type or without `Status` is
/// [`StreamLoadError::Malformed`].
pub fn classify(body: &[u8]) -> Result<Answer, StreamLoadError> {
    if body.len() > MAX_ANSWER_BYTES {
        return Err(StreamLoadError::Malformed(format!(
            "answer of {} bytes is larger than the {MAX_ANSWER_BYTES}-byte cap",
            body.len()
        )));
    }
    let value: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| StreamLoadError::Malformed(format!("answer is not JSON ({e})")))?;
    let Some(object) = value.as_object() else {
        return Err(StreamLoadError::Malformed(
            "answer is not a JSON object".into(),
        ));
    };
    // FE envelope: {"msg": "Unauthorized", "code": 401, "data": "...", "count": 0}
    if let Some(code) = object.get("code").and_then(serde_json::Value::as_i64)
        && !object.contains_key("Status")
    {
        let data = object
            .get("data")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default();
        let msg = object
            .get("msg")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default();
        return Ok(if code == 401 {
            Answer::Auth(if data.is_empty() { msg } else { data }.to_owned())
        } else {
            Answer::Fail {
                message: format!("FE answered code {code}: {msg} {data}")
                    .trim()
                    .to_owned(),
                error_url: None,
            }
        });
    }
    // FE RestBaseResult: {"status": "FAILED", "msg": "..."}
    if !object.contains_key("Status")
        && let Some(status) = object.get("status").and_then(serde_json::Value::as_str)
    {
        let msg = object
            .get("msg")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if is_auth_text(&msg) {
            return Ok(Answer::Auth(msg));
        }
        return Ok(Answer::Fail {
            message: format!("FE answered {status}: {msg}"),
            error_url: None,
        });
    }
    let response: LoadResponse = serde_json::from_value(value)
        .map_err(|e| StreamLoadError::Malformed(format!("unexpected field type ({e})")))?;
    let normalized = response.status.to_ascii_lowercase().replace('_', " ");
    Ok(match normalized.trim() {
        "success" => Answer::Success(response),
        "publish timeout" => Answer::PublishTimeout(response),
        "label already exists" => Answer::LabelExists {
            existing: ExistingJobStatus::parse(response.existing_job_status.as_deref()),
            txn_id: related_txn(&response.message),
        },
        "" => {
            return Err(StreamLoadError::Malformed(
                "answer has no Status field".into(),
            ));
        }
        _ if is_auth_text(&response.message) => Answer::Auth(response.message),
        _ => Answer::Fail {
            error_url: response.error_url.filter(|u| !u.is_empty()),
            message: response.message,
        },
    })
}

/// Whether a `Fail` message names a condition that passes (too many running transactions,
/// a cancelled fragment), so that retrying the same label later may succeed.
pub(crate) fn is_transient_failure(message: &str) -> bool {
    message.contains("larger than limit") || message.contains("[TOO_MANY_TASKS]")
}

/// Checks that the counters of a committed load add up.
pub(crate) fn reconcile(response: &LoadResponse, rows_sent: Option<u64>) -> Result<(), String> {
    if let Some(sent) = rows_sent
        && response.number_total_rows != sent
    {
        return Err(format!(
            "NumberTotalRows is {} but {sent} rows were sent",
            response.number_total_rows
        ));
    }
    let accounted = response
        .number_loaded_rows
        .checked_add(response.number_filtered_rows)
        .and_then(|s| s.checked_add(response.number_unselected_rows));
    if accounted != Some(response.number_total_rows) {
        return Err(format!(
            "loaded {} + filtered {} + unselected {} != total {}",
            response.number_loaded_rows,
            response.number_filtered_rows,
            response.number_unselected_rows,
            response.number_total_rows
        ));
    }
    Ok(())
}

/// The 2PC reply (`{"status": …, "msg": …}`) or an FE envelope.
#[derive(Debug, Clone, Deserialize)]
#[non_exhaustive]
pub struct TwoPhaseReply {
    /// `status` (`Success`, `Fail`, or an envelope's).
    #[serde(default)]
    pub status: String,
    /// `msg`
    #[serde(default)]
    pub msg: String,
    /// An FE envelope's `code` (401: credentials refused).
    #[serde(default)]
    pub code: Option<i64>,
    /// An FE envelope's `data`.
    #[serde(default)]
    pub data: Option<serde_json::Value>,
}

impl TwoPhaseReply {
    /// A 2PC answer's body: a JSON object only (serde would also read the fields from an
    /// array, so `["Success"]` would pass for a commit).
    pub fn parse(body: &[u8]) -> Result<Self, StreamLoadError> {
        let value: serde_json::Value = serde_json::from_slice(body)
            .map_err(|_| StreamLoadError::Malformed("the 2PC answer is not JSON".into()))?;
        if !value.is_object() {
            return Err(StreamLoadError::Malformed(
                "the 2PC answer is not a JSON object".into(),
            ));
        }
        serde_json::from_value(value).map_err(|_| {
            StreamLoadError::Malformed("the 2PC answer has a field of the wrong type".into())
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// JSON of any shape up to three levels deep, its keys and values mostly those of
    /// Stream Load answers, 2PC answers and FE envelopes: what a broken or hostile server
    /// may send.
    pub(crate) fn answer_like() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        use serde_json::Value;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            ".{0,12}".prop_map(Value::from),
            prop::sample::select(vec![
                "Success",
                "Fail",
                "Label Already Exists",
                "PUBLISH_TIMEOUT",
                "FINISHED",
                "RUNNING",
                "errCode = 2, detailMessage = Label [l] has already been used, relate to txn [7]",
                "Access denied for user",
                "FAILED",
                "",
            ])
            .prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 32, 6, |inner| {
            let key = prop::sample::select(vec![
                "Status",
                "Message",
                "TxnId",
                "Label",
                "NumberTotalRows",
                "NumberLoadedRows",
                "NumberFilteredRows",
                "ExistingJobStatus",
                "ErrorURL",
                "TwoPhaseCommit",
                "code",
                "msg",
                "data",
                "status",
            ])
            .prop_map(str::to_owned);
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map(key, inner, 0..8)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Any answer, and any bytes, are classified or refused as malformed, never a panic;
        /// `Success` only when the answer says so (256 cases).
        #[test]
        fn any_answer_is_classified_or_refused(
            value in answer_like(),
            raw in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..48),
        ) {
            let _ = classify(&raw);
            let body = serde_json::to_vec(&value).unwrap_or_default();
            match classify(&body) {
                Ok(Answer::Success(response)) => {
                    proptest::prop_assert!(response.status.eq_ignore_ascii_case("success"));
                }
                Ok(_) => {}
                Err(e) => proptest::prop_assert!(
                    matches!(e, StreamLoadError::Malformed(_)),
                    "{e}"
                ),
            }
        }
    }

    const SUCCESS: &str = r#"{
    "TxnId": 1003,
    "Label": "l1",
    "Comment": "",
    "TwoPhaseCommit": "false",
    "Status": "Success",
    "Message": "OK",
    "NumberTotalRows": 3,
    "NumberLoadedRows": 2,
    "NumberFilteredRows": 1,
    "NumberUnselectedRows": 0,
    "LoadBytes": 42,
    "LoadTimeMs": 57,
    "SomethingNew": [1, 2]
}
"#;

    #[test]
    fn success_is_parsed_with_unknown_fields_ignored() {
        let Answer::Success(r) = classify(SUCCESS.as_bytes()).unwrap() else {
            panic!("not success")
        };
        assert_eq!(r.txn_id, 1003);
        assert!(!r.two_phase_commit);
        assert_eq!(r.number_filtered_rows, 1);
        assert_eq!(r.commit_and_publish_time_ms, 0);
        assert!(reconcile(&r, Some(3)).is_ok());
        assert!(reconcile(&r, Some(4)).unwrap_err().contains("4 rows"));
    }

    #[test]
    fn label_exists_carries_status_and_txn() {
        let body = r#"{"TxnId": -1, "Label": "x", "Status": "Label Already Exists",
            "ExistingJobStatus": "FINISHED",
            "Message": "[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label [x] has already been used, relate to txn [602531767123968]"}"#;
        assert_eq!(
            classify(body.as_bytes()).unwrap(),
            Answer::LabelExists {
                existing: ExistingJobStatus::Finished,
                txn_id: Some(602531767123968)
            }
        );
    }

    #[test]
    fn fe_envelopes_and_auth_failures() {
        let fe401 = r#"{"msg":"Unauthorized","code":401,"data":"Access denied for user 'u@127.0.0.1' (using password: YES)","count":0}"#;
        assert!(
            matches!(classify(fe401.as_bytes()).unwrap(), Answer::Auth(m) if m.contains("Access denied"))
        );
        let failed = r#"{"status":"FAILED","msg":"There is no 100-continue header"}"#;
        assert!(
            matches!(classify(failed.as_bytes()).unwrap(), Answer::Fail { message, .. } if message.contains("100-continue"))
        );
        let be_auth = r#"{"TxnId": -1, "Status": "Fail", "Message": "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Access denied for user 'u@1.2.3.4' (using password: YES)"}"#;
        assert!(matches!(
            classify(be_auth.as_bytes()).unwrap(),
            Answer::Auth(_)
        ));
    }

    #[test]
    fn malformed_answers() {
        for body in [
            "<html>502</html>",
            "[1,2]",
            "{\"TxnId\": 1,",
            "{\"Status\": \"\"}",
            "{\"Status\": \"Success\", \"NumberTotalRows\": \"many\"}",
        ] {
            assert!(
                matches!(
                    classify(body.as_bytes()),
                    Err(StreamLoadError::Malformed(_))
                ),
                "{body}"
            );
        }
    }

    #[test]
    fn fail_keeps_message_and_error_url() {
        let body = r#"{"Status": "Fail", "Message": "[DATA_QUALITY_ERROR]too many filtered rows", "ErrorURL": "http://be:8040/api/_load_error_log?file=x"}"#;
        assert_eq!(
            classify(body.as_bytes()).unwrap(),
            Answer::Fail {
                message: "[DATA_QUALITY_ERROR]too many filtered rows".into(),
                error_url: Some("http://be:8040/api/_load_error_log?file=x".into())
            }
        );
        let empty_url = r#"{"Status": "Fail", "Message": "[INTERNAL_ERROR]x", "ErrorURL": ""}"#;
        assert!(matches!(
            classify(empty_url.as_bytes()).unwrap(),
            Answer::Fail {
                error_url: None,
                ..
            }
        ));
    }
}
