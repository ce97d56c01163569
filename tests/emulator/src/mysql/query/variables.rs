//! Session variables: the compatibility variables Doris answers in `SELECT @@…`, and `SET`
//! with Doris's refusals (non-constant values, unknown variables, values a variable cannot
//! take).

use super::{NON_CONSTANT_SET, Outcome, Session, analysis, split_top_level, unquote};
use crate::Shared;
use crate::mysql::wire::ColumnDef;

/// Compatibility variables Doris accepts in `SET` and answers in `SELECT @@…`.
pub(super) fn variable(session: &Session, name: &str) -> Option<String> {
    let name = name.to_ascii_lowercase();
    let name = name
        .trim_start_matches("@@")
        .trim_start_matches("session.")
        .trim_start_matches("global.")
        .trim_start_matches("local.");
    Some(match name {
        "version_comment" => session.version_comment.clone(),
        "version" => "5.7.99".into(),
        "socket" => String::new(),
        "max_allowed_packet" => "67108864".into(),
        "time_zone" => session.time_zone.clone(),
        "system_time_zone" => "UTC".into(),
        "sql_mode" => session.sql_mode.clone(),
        "autocommit" => "1".into(),
        "tx_isolation" | "transaction_isolation" => "REPEATABLE-READ".into(),
        "tx_read_only" | "transaction_read_only" => "0".into(),
        "character_set_client"
        | "character_set_connection"
        | "character_set_results"
        | "character_set_server"
        | "character_set_database" => "utf8mb4".into(),
        "collation_connection" | "collation_database" | "collation_server" => {
            "utf8mb4_0900_bin".into()
        }
        "lower_case_table_names" => "0".into(),
        "wait_timeout" => "28800".into(),
        "interactive_timeout" => "3600".into(),
        "net_write_timeout" | "net_read_timeout" => "600".into(),
        "query_timeout" => "900".into(),
        "license" => "Apache License, Version 2.0".into(),
        "auto_increment_increment" => "1".into(),
        "sql_select_limit" => "18446744073709551615".into(),
        "performance_schema" => "0".into(),
        "init_connect" => String::new(),
        "have_query_cache" => "YES".into(),
        "query_cache_size" | "query_cache_type" => "0".into(),
        "exec_mem_limit" => "2147483648".into(),
        "enable_profile" | "sql_safe_updates" => "0".into(),
        "enable_server_side_prepared_statement" => "1".into(),
        "group_commit" => "off_mode".into(),
        "insert_timeout" => "14400".into(),
        "parallel_pipeline_task_num" => "0".into(),
        // Planner switches: Doris 3.x/4.0 always plans with Nereids; accepted, no effect.
        "enable_nereids_planner"
        | "experimental_enable_nereids_planner"
        | "enable_fallback_to_original_planner" => "true".into(),
        "enable_insert_strict" => session.insert_filter.strict.to_string(),
        "insert_max_filter_ratio" => session.insert_filter.max_filter_ratio.to_string(),
        "enable_unique_key_partial_update" => if session.partial_update {
            "true"
        } else {
            "false"
        }
        .into(),
        _ => return None,
    })
}

fn is_constant(value: &str) -> bool {
    let upper = value.to_ascii_uppercase();
    !(upper.contains("SELECT") || value.contains("@@") || value.contains('('))
}

pub(super) fn set(shared: &Shared, session: &mut Session, body: &str) -> Outcome {
    for assignment in split_top_level(body) {
        let upper = assignment.to_ascii_uppercase();
        if upper.starts_with("NAMES")
            || upper.starts_with("CHARACTER SET")
            || upper.starts_with("CHARSET")
        {
            let charset = assignment
                .split_whitespace()
                .nth(if upper.starts_with("CHARACTER") { 2 } else { 1 });
            let charset = charset
                .map(unquote)
                .unwrap_or_default()
                .to_ascii_lowercase();
            if !charset.starts_with("utf8") && charset != "default" {
                return Outcome::Err(
                    1115,
                    b"42000",
                    format!("Unknown character set: '{charset}'"),
                );
            }
            continue;
        }
        let Some((name, value)) = assignment.split_once('=') else {
            return analysis(format!("Syntax error in SET: {assignment}"));
        };
        let name = name.trim();
        let value = value.trim();
        if !is_constant(value) {
            return Outcome::Err(1105, b"HY000", NON_CONSTANT_SET.into());
        }
        if name.starts_with('@') && !name.starts_with("@@") {
            continue; // user variable
        }
        let bare = name
            .split_whitespace()
            .last()
            .unwrap_or(name)
            .trim_start_matches("@@")
            .to_ascii_lowercase();
        let bare = bare
            .trim_start_matches("session.")
            .trim_start_matches("global.")
            .trim_start_matches("local.")
            .to_owned();
        if variable(session, &bare).is_none() {
            return Outcome::Err(1193, b"HY000", format!("Unknown system variable '{bare}'"));
        }
        match bare.as_str() {
            "time_zone" => session.time_zone = unquote(value),
            // `SqlModeHelper.encode`; GLOBAL (an admin's) also sets the mode new sessions
            // start with, and this session's.
            "sql_mode" => match super::sql_mode::encode(&unquote(value)) {
                Ok(bits) => {
                    let mode = super::sql_mode::decode(bits);
                    let scope = name.to_ascii_lowercase();
                    if scope.starts_with("global") || scope.starts_with("@@global.") {
                        if let Some(refused) = super::admin_only(session) {
                            return refused;
                        }
                        if let Ok(mut global) = shared.global_sql_mode.lock() {
                            global.clone_from(&mode);
                        }
                    }
                    session.sql_mode = mode;
                }
                Err(part) => return cannot_set("sql_mode", &part),
            },
            "enable_insert_strict" => match parse_bool(&unquote(value)) {
                Some(on) => session.insert_filter.strict = on,
                None => return cannot_set(&bare, value),
            },
            "insert_max_filter_ratio" => match unquote(value).parse::<f64>() {
                Ok(r) if (0.0..=1.0).contains(&r) => session.insert_filter.max_filter_ratio = r,
                _ => return cannot_set(&bare, value),
            },
            "enable_unique_key_partial_update" => {
                session.partial_update = match unquote(value).to_ascii_lowercase().as_str() {
                    "true" | "1" | "on" => true,
                    "false" | "0" | "off" => false,
                    _ => {
                        return Outcome::Err(
                            1231,
                            b"42000",
                            format!(
                                "Variable 'enable_unique_key_partial_update' can't be set to the value of '{}'",
                                unquote(value)
                            ),
                        );
                    }
                };
            }
            _ => {}
        }
    }
    Outcome::Ok(0)
}

fn parse_bool(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "true" | "1" | "on" => Some(true),
        "false" | "0" | "off" => Some(false),
        _ => None,
    }
}

/// MySQL's 1231 for a value a variable cannot take.
fn cannot_set(name: &str, value: &str) -> Outcome {
    Outcome::Err(
        1231,
        b"42000",
        format!(
            "Variable '{name}' can't be set to the value of '{}'",
            unquote(value)
        ),
    )
}

/// The session functions a SELECT of the FE's own answers (see [`select_variables`]).
const SESSION_FUNCTIONS: &[&str] = &[
    "DATABASE()",
    "SCHEMA()",
    "CONNECTION_ID()",
    "USER()",
    "CURRENT_USER()",
    "VERSION()",
    "1",
];

/// Whether the FE answers a SELECT of `list` itself: every item a `@@variable` or a
/// session function (the rest runs on the SELECT engine).
pub(super) fn fe_answers(list: &str) -> bool {
    split_top_level(list).iter().all(|item| {
        let expr = match item.to_ascii_uppercase().find(" AS ") {
            Some(at) => item[..at].trim().to_owned(),
            None => item.trim().to_owned(),
        };
        expr.starts_with("@@") || SESSION_FUNCTIONS.contains(&expr.to_ascii_uppercase().as_str())
    })
}

pub(super) fn select_variables(session: &Session, list: &str) -> Outcome {
    let mut columns = Vec::new();
    let mut row = Vec::new();
    for item in split_top_level(list) {
        let (expr, alias) = match item.to_ascii_uppercase().find(" AS ") {
            Some(at) => (item[..at].trim().to_owned(), Some(unquote(&item[at + 4..]))),
            None => (item.clone(), None),
        };
        let value = if expr.starts_with("@@") {
            match variable(session, &expr) {
                Some(v) => Some(v),
                None => {
                    let bare = expr.trim_start_matches("@@").to_owned();
                    return Outcome::Err(
                        1193,
                        b"HY000",
                        format!("Unknown system variable '{bare}'"),
                    );
                }
            }
        } else {
            match expr.to_ascii_uppercase().as_str() {
                "DATABASE()" | "SCHEMA()" => session.database.clone(),
                "CONNECTION_ID()" => Some(session.id.to_string()),
                "USER()" | "CURRENT_USER()" => {
                    Some(format!("'{}'@'{}'", session.user, session.peer.ip()))
                }
                "VERSION()" => Some("5.7.99".into()),
                "1" => Some("1".into()),
                _ => return analysis("the Doris emulator cannot evaluate this SELECT yet"),
            }
        };
        columns.push(ColumnDef::text(&alias.unwrap_or(expr)));
        row.push(value);
    }
    Outcome::Rows(columns, vec![row])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_values_must_be_constant() {
        assert!(is_constant("'+00:00'"));
        assert!(is_constant("utf8mb4"));
        assert!(!is_constant(
            "(SELECT CONCAT(@@sql_mode, ',PIPES_AS_CONCAT'))"
        ));
        assert_eq!(
            split_top_level(
                "sql_mode=(SELECT CONCAT(@@sql_mode, ',X')),time_zone='+00:00',NAMES utf8mb4"
            ),
            vec![
                "sql_mode=(SELECT CONCAT(@@sql_mode, ',X'))",
                "time_zone='+00:00'",
                "NAMES utf8mb4"
            ]
        );
    }
}
