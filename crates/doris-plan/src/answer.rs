//! The `_query_plan` answer: the tablets a query scans, read from the FE's JSON, every
//! envelope of the protocol mapped to a typed [`PlanError`]. No I/O: a service that asks
//! the FE itself parses the answer here.

use std::collections::BTreeMap;

use crate::error::PlanError;

/// Where one tablet lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabletPlacement {
    /// Tablet id.
    pub id: u64,
    /// Replica BEs (`host:be_port`).
    pub routings: Vec<String>,
    /// Visible version.
    pub version: i64,
}

/// The tablets a query scans, by ascending id.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QueryPlan {
    /// Tablets.
    pub tablets: Vec<TabletPlacement>,
}

/// Parses a `_query_plan` answer (the body of `POST /api/{db}/{table}/_query_plan`):
/// the tablets by ascending id, each id positive and listed once, or the typed error the
/// envelope says (`code` 401, 403, a `data.status` other than 200, …) or
/// [`PlanError::Malformed`].
///
/// ```
/// let plan = doris_plan::parse_plan_answer(
///     br#"{"code":0,"data":{"status":200,"partitions":{"10005":{"routings":["be:9060"],"version":3}}}}"#,
/// )
/// .unwrap();
/// assert_eq!(plan.tablets[0].id, 10005);
/// let refused = doris_plan::parse_plan_answer(br#"{"code":401,"data":"Access denied"}"#);
/// assert_eq!(refused.unwrap_err().class(), "Auth");
/// ```
pub fn parse_plan_answer(body: &[u8]) -> Result<QueryPlan, PlanError> {
    let value: serde_json::Value = serde_json::from_slice(body)
        .map_err(|_| PlanError::Malformed("the answer is not JSON".into()))?;
    let text = |v: Option<&serde_json::Value>| -> String {
        match v {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        }
    };
    let code = value
        .get("code")
        .and_then(serde_json::Value::as_i64)
        .ok_or_else(|| PlanError::Malformed("no numeric `code` in the envelope".into()))?;
    let data = value.get("data");
    match code {
        0 => {}
        401 => return Err(PlanError::Auth(text(data))),
        403 => {
            let detail = text(data);
            return Err(
                if detail.contains("POST body") || detail.contains("malformed json") {
                    PlanError::Rejected(detail)
                } else {
                    PlanError::Permission(detail)
                },
            );
        }
        _ => {
            // A refusal may carry its reason in `msg` with `data` null (a missing table:
            // `{"code":1,"msg":"…","data":null}`).
            let detail = match data {
                None | Some(serde_json::Value::Null) => text(value.get("msg")),
                Some(_) => text(data),
            };
            let lower = detail.to_ascii_lowercase();
            return Err(
                if lower.contains("unknown table")
                    || lower.contains("unknown database")
                    || lower.contains("does not exist")
                    || lower.contains("not found")
                {
                    PlanError::NotFound(detail)
                } else if lower.contains("denied") {
                    PlanError::Permission(detail)
                } else {
                    PlanError::Rejected(format!("code {code}: {detail}"))
                },
            );
        }
    }
    let data = data
        .and_then(serde_json::Value::as_object)
        .ok_or_else(|| PlanError::Malformed("`data` is not an object".into()))?;
    let exception = text(data.get("exception"));
    match data.get("status") {
        Some(serde_json::Value::Number(n)) if n.as_i64() == Some(200) => {}
        Some(serde_json::Value::Number(n)) if n.as_i64() == Some(500) => {
            return Err(PlanError::Internal(exception));
        }
        // Doris's handler answers every failure after the password check (a missing
        // SELECT privilege included) with `data.status` "1" and the message.
        Some(serde_json::Value::Number(_)) | Some(serde_json::Value::String(_))
            if exception.contains("Access denied") =>
        {
            return Err(PlanError::Permission(exception));
        }
        Some(serde_json::Value::Number(_)) | Some(serde_json::Value::String(_)) => {
            return Err(PlanError::Rejected(exception));
        }
        _ => return Err(PlanError::Malformed("no `data.status`".into())),
    }
    let partitions = data
        .get("partitions")
        .and_then(serde_json::Value::as_object)
        .ok_or_else(|| PlanError::Malformed("no `data.partitions` object".into()))?;
    let mut tablets = BTreeMap::new();
    for (key, info) in partitions {
        let id: u64 = key
            .parse()
            .ok()
            .filter(|id| *id > 0 && key.trim_start_matches('0').len() == key.len())
            .ok_or_else(|| {
                PlanError::Malformed(format!("tablet id {key:?} is not a positive integer"))
            })?;
        let routings = info
            .get("routings")
            .and_then(serde_json::Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let version = info
            .get("version")
            .and_then(serde_json::Value::as_i64)
            .unwrap_or(0);
        if tablets
            .insert(
                id,
                TabletPlacement {
                    id,
                    routings,
                    version,
                },
            )
            .is_some()
        {
            return Err(PlanError::Malformed(format!("tablet {id} is listed twice")));
        }
    }
    Ok(QueryPlan {
        tablets: tablets.into_values().collect(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// JSON of any shape up to three levels deep, its keys mostly those a `_query_plan`
    /// answer has: what a broken or hostile FE may send.
    fn plan_like() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        use serde_json::Value;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            prop::sample::select(vec![0i64, 200, 401, 403, 500, 1, -1]).prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            "[a-z0-9:]{0,8}".prop_map(Value::from),
            prop::sample::select(vec![
                "10005",
                "007",
                "0",
                "-3",
                "Access denied",
                "not found"
            ])
            .prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 32, 5, |inner| {
            let key = prop::sample::select(vec![
                "code",
                "data",
                "msg",
                "status",
                "exception",
                "partitions",
                "routings",
                "version",
                "10005",
                "10007",
                "007",
                "x",
            ])
            .prop_map(str::to_owned);
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map(key, inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Any answer, and any bytes, give a plan or a typed error, never a panic; a plan's
        /// tablet ids are positive, distinct and in order (256 cases).
        #[test]
        fn any_plan_answer_is_parsed_or_refused(
            value in plan_like(),
            raw in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..48),
        ) {
            let _ = parse_plan_answer(&raw);
            if let Ok(plan) = parse_plan_answer(&serde_json::to_vec(&value).unwrap()) {
                let ids: Vec<u64> = plan.tablets.iter().map(|t| t.id).collect();
                proptest::prop_assert!(ids.iter().all(|id| *id > 0));
                proptest::prop_assert!(ids.windows(2).all(|w| w[0] < w[1]), "{:?}", ids);
            }
        }
    }

    #[test]
    fn envelopes_map_to_typed_errors() {
        let ok = br#"{"msg":"success","code":0,"data":{"partitions":{"10007":{"routings":["b:9060"],"version":3,"schemaHash":0},"10005":{"routings":["a:9060","b:9060"],"version":3,"schemaHash":0}},"opaqued_query_plan":"x","status":200},"count":0}"#;
        let plan = parse_plan_answer(ok).unwrap();
        assert_eq!(
            plan.tablets.iter().map(|t| t.id).collect::<Vec<_>>(),
            vec![10005, 10007]
        );
        assert_eq!(plan.tablets[0].routings, vec!["a:9060", "b:9060"]);
        let cases: [(&[u8], &str); 10] = [
            (br#"{"msg":"Unauthorized","code":401,"data":"Access denied","count":0}"#, "Auth"),
            (br#"{"msg":"Bad Request","code":403,"data":"POST body must contains [sql] root object","count":0}"#, "Rejected"),
            (br#"{"msg":"Error","code":1,"data":"errCode = 2, detailMessage = Unknown table 't'","count":0}"#, "NotFound"),
            (br#"{"msg":"success","code":0,"data":{"status":400,"exception":"only support single table filter-prune-scan"},"count":0}"#, "Rejected"),
            (br#"{"code":1,"msg":"errCode = 2, detailMessage = Table [missing] does not exist","data":null}"#, "NotFound"),
            (br#"{"msg":"success","code":0,"data":{"status":500,"exception":"boom"},"count":0}"#, "Internal"),
            (br#"{"msg":"success","code":0,"data":{"status":"1","exception":"x"},"count":0}"#, "Rejected"),
            // A missing SELECT privilege: not a 401 (the credentials were good).
            (br#"{"msg":"success","code":0,"data":{"status":"1","exception":"Access denied; you need (at least one of) the (SELECT) privilege(s) for this operation"},"count":0}"#, "Permission"),
            (br#"{"msg":"success","code":0,"data":{"status":200,"partitions":{"01":{}}},"count":0}"#, "Malformed"),
            (b"<html>", "Malformed"),
        ];
        for (body, class) in cases {
            assert_eq!(
                parse_plan_answer(body).unwrap_err().class(),
                class,
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }
}
