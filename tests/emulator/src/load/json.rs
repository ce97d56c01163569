//! JSON bodies: `jsonpaths`, `json_root` and flexible partial-update rows.

use crate::catalog::Table;

use super::csv::conform_text;
use super::options::LoadOptions;
use super::{Decoded, source_names};

/// `UPDATE_FLEXIBLE_COLUMNS`: every JSON object updates the table columns it carries. Runs
/// of consecutive rows carrying the same columns become one partial-update batch each, so
/// the merge applies them in row order, each with its own column set.
pub(super) fn flexible_rows(
    table: &Table,
    opts: &LoadOptions,
    values: Vec<serde_json::Value>,
    out: &mut Decoded,
) -> Result<(), String> {
    let names: Vec<String> = table
        .schema
        .columns
        .iter()
        .map(|c| c.name.clone())
        .collect();
    let mut run: Option<Vec<String>> = None;
    let mut rows: TextRows = Vec::new();
    for v in values {
        out.total_rows += 1;
        let serde_json::Value::Object(map) = v else {
            out.reject("Reason: JSON data is not an object. src line [..];".into());
            continue;
        };
        let field = |n: &String| map.iter().find(|(k, _)| k.eq_ignore_ascii_case(n));
        let carried: Vec<String> = names
            .iter()
            .filter(|n| field(n).is_some())
            .cloned()
            .collect();
        if run.as_ref().is_some_and(|r| *r != carried) {
            let provided = run.take().unwrap_or_default();
            conform_text(
                table,
                opts,
                &names,
                std::mem::take(&mut rows),
                Some(&provided),
                out,
            )?;
        }
        run = Some(carried);
        rows.push(
            names
                .iter()
                .map(|n| match field(n).map(|(_, v)| v) {
                    None | Some(serde_json::Value::Null) => None,
                    Some(serde_json::Value::String(s)) => Some(s.clone()),
                    Some(other) => Some(other.to_string()),
                })
                .collect(),
        );
    }
    if let Some(provided) = run {
        conform_text(table, opts, &names, rows, Some(&provided), out)?;
    }
    Ok(())
}

/// One step of a JSON path: a member name or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonStep {
    /// `.name` or `['name']`.
    Member(String),
    /// `[n]`.
    Index(usize),
}

/// A JSON path of the `jsonpaths` header: `$`, then `.name`, `['name']` or `[n]` steps.
pub type JsonPath = Vec<JsonStep>;

/// Parses the `jsonpaths` header: a JSON array of path strings.
pub(super) fn parse_jsonpaths(text: &str) -> Result<Vec<JsonPath>, String> {
    let invalid = || format!("[INVALID_ARGUMENT]Invalid json path: {text}");
    let paths: Vec<String> = serde_json::from_str(text).map_err(|_| invalid())?;
    paths
        .iter()
        .map(|p| parse_jsonpath(p).ok_or_else(invalid))
        .collect()
}

pub(super) fn parse_jsonpath(path: &str) -> Option<JsonPath> {
    let mut rest = path.trim().strip_prefix('$')?;
    let mut steps = Vec::new();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            if end == 0 {
                return None;
            }
            steps.push(JsonStep::Member(after[..end].to_owned()));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            let inner = after[..end].trim();
            let quoted = inner
                .strip_prefix('\'')
                .and_then(|i| i.strip_suffix('\''))
                .or_else(|| inner.strip_prefix('"').and_then(|i| i.strip_suffix('"')));
            steps.push(match quoted {
                Some(name) => JsonStep::Member(name.to_owned()),
                None => JsonStep::Index(inner.parse().ok()?),
            });
            rest = &after[end + 1..];
        } else {
            return None;
        }
    }
    Some(steps)
}

/// Evaluates one path; `None` when a step finds nothing.
pub(super) fn eval_jsonpath<'a>(
    value: &'a serde_json::Value,
    path: &[JsonStep],
) -> Option<&'a serde_json::Value> {
    path.iter().try_fold(value, |v, step| match step {
        JsonStep::Member(name) => v.get(name.as_str()),
        JsonStep::Index(i) => v.get(*i),
    })
}

/// Rows of text cells (`None`: NULL).
pub(super) type TextRows = Vec<Vec<Option<String>>>;

/// Rows of text cells by `jsonpaths`: the i-th path feeds the i-th target column (the
/// `columns` header's, else the table's); a path that finds nothing gives NULL.
pub(super) fn rows_by_jsonpaths(
    table: &Table,
    opts: &LoadOptions,
    paths: &[JsonPath],
    values: Vec<serde_json::Value>,
    out: &mut Decoded,
) -> Result<(Vec<String>, TextRows), String> {
    let targets = source_names(table, opts);
    if paths.len() > targets.len() {
        return Err(format!(
            "[INVALID_ARGUMENT]jsonpaths has {} paths for {} columns",
            paths.len(),
            targets.len()
        ));
    }
    let names = targets[..paths.len()].to_vec();
    let mut rows = Vec::with_capacity(values.len());
    for v in values {
        out.total_rows += 1;
        rows.push(
            paths
                .iter()
                .map(|p| match eval_jsonpath(&v, p) {
                    None | Some(serde_json::Value::Null) => None,
                    Some(serde_json::Value::String(s)) => Some(s.clone()),
                    Some(other) => Some(other.to_string()),
                })
                .collect(),
        );
    }
    Ok((names, rows))
}
