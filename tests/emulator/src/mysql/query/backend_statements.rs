//! `SHOW BACKENDS` and `ALTER SYSTEM MODIFY BACKEND … SET ('tag.…' = …)`: the emulator's one
//! BE and its public endpoint tag.

use super::{Outcome, analysis, split_top_level, unquote};
use crate::Shared;
use crate::mysql::wire::ColumnDef;

/// The one BE, as `SHOW BACKENDS` lists it (a subset of Doris's columns, in its order).
pub(super) fn show_backends(shared: &Shared) -> Outcome {
    let columns: Vec<ColumnDef> = [
        "BackendId",
        "Host",
        "HeartbeatPort",
        "BePort",
        "HttpPort",
        "BrpcPort",
        "ArrowFlightSqlPort",
        "LastStartTime",
        "LastHeartbeat",
        "Alive",
        "SystemDecommissioned",
        "TabletNum",
        "Tag",
        "ErrMsg",
        "Version",
        "Status",
    ]
    .iter()
    .map(|c| ColumnDef::text(c))
    .collect();
    let tag = match shared.public_endpoint() {
        Some(endpoint) => {
            format!("{{\"location\" : \"default\", \"public_endpoint\" : \"{endpoint}\"}}")
        }
        None => "{\"location\" : \"default\"}".to_owned(),
    };
    let row = vec![
        Some("10001".into()),
        Some(shared.config.advertise_host.clone()),
        Some("9050".into()),
        Some("9060".into()),
        Some(shared.be_http_port().to_string()),
        Some("8060".into()),
        Some("-1".into()),
        None,
        None,
        Some("true".into()),
        Some("false".into()),
        Some("0".into()),
        Some(tag),
        Some(String::new()),
        Some(format!("doris-{}-emulator", shared.config.profile.release)),
        Some("{\"lastSuccessReportTabletsTime\":\"N/A\",\"isQueryDisabled\":false,\"isLoadDisabled\":false}".into()),
    ];
    Outcome::Rows(columns, vec![row])
}

/// `ALTER SYSTEM MODIFY BACKEND 'host:9050' SET ('tag.location' = …, 'tag.public_endpoint' = …)`.
pub(super) fn modify_backend(shared: &Shared, rest: &str) -> Outcome {
    let Some((target, props)) = rest.split_once(|c: char| c.is_whitespace()) else {
        return analysis("ALTER SYSTEM MODIFY BACKEND needs a backend and SET (...)");
    };
    let target = unquote(target);
    let expected = format!("{}:9050", shared.config.advertise_host);
    if target != expected {
        return analysis(format!("backend does not exist[{target}]"));
    }
    let props = props.trim();
    let Some(list) = props
        .strip_prefix("SET")
        .or_else(|| props.strip_prefix("set"))
        .map(str::trim)
        .and_then(|p| p.strip_prefix('('))
        .and_then(|p| p.strip_suffix(')'))
    else {
        return analysis("ALTER SYSTEM MODIFY BACKEND needs SET (\"key\" = \"value\", ...)");
    };
    let mut location = None;
    let mut endpoint = None;
    for item in split_top_level(list) {
        let Some((k, v)) = item.split_once('=') else {
            return analysis(format!("bad property {item}"));
        };
        match unquote(k).as_str() {
            "tag.location" => location = Some(unquote(v)),
            "tag.public_endpoint" => endpoint = Some(unquote(v)),
            other => return analysis(format!("unsupported backend property {other}")),
        }
    }
    if endpoint.is_some() && location.is_none() {
        return analysis("Must specify 'tag.location' when setting backend tags");
    }
    if let Some(endpoint) = endpoint {
        shared.set_public_endpoint(Some(endpoint));
    }
    Outcome::Ok(0)
}
