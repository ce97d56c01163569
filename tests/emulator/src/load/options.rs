//! The load's options, read from the Stream Load headers (with Doris's messages for bad ones).

use axum::http::HeaderMap;

use super::DELETE_SIGN;
use super::json::{JsonPath, parse_jsonpath, parse_jsonpaths};

/// Body formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `csv`; `csv_with_names` and `csv_with_names_and_types` skip their one or two header
    /// lines (and then ignore `skip_lines`, as Doris does).
    Csv {
        /// Header lines: 0 (`csv`), 1 (`csv_with_names`) or 2 (`csv_with_names_and_types`).
        header_lines: usize,
    },
    /// `json`
    Json,
    /// `arrow` (Arrow IPC stream)
    Arrow,
    /// `parquet`
    Parquet,
}

/// `compress_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// None.
    None,
    /// `gz`
    Gzip,
    /// `lz4` (frame format)
    Lz4,
}

/// Everything a load takes from its headers.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// The label, or a generated UUID.
    pub label: String,
    /// Body format.
    pub format: Format,
    /// Body compression.
    pub compression: Compression,
    /// `columns`: the order of the source fields, as column names.
    pub columns: Option<Vec<String>>,
    /// `column_separator` (default tab).
    pub column_separator: String,
    /// `line_delimiter` (default newline).
    pub line_delimiter: String,
    /// `enclose` (one ASCII byte)
    pub enclose: Option<u8>,
    /// `escape` (one ASCII byte)
    pub escape: Option<u8>,
    /// `skip_lines`
    pub skip_lines: usize,
    /// `trim_double_quotes`: the outermost double quotes of each CSV field are removed.
    pub trim_double_quotes: bool,
    /// `strict_mode`
    pub strict_mode: bool,
    /// `max_filter_ratio`
    pub max_filter_ratio: f64,
    /// `strip_outer_array`
    pub strip_outer_array: bool,
    /// `two_phase_commit`
    pub two_phase_commit: bool,
    /// `comment`
    pub comment: String,
    /// Partial-column update (`partial_columns: true` or `unique_key_update_mode:
    /// UPDATE_FIXED_COLUMNS`): only the loaded columns change for existing keys.
    pub partial: bool,
    /// `partial_update_new_key_behavior: ERROR`: a new key fails the load.
    pub new_key_error: bool,
    /// `merge_type: MERGE` with `delete: <condition>`: rows the condition accepts delete
    /// their key, the others are loaded.
    pub merge_delete: Option<String>,
    /// `merge_type: DELETE`: every loaded row deletes its key.
    pub delete: bool,
    /// `where`: a predicate over the table's columns; rows it rejects are unselected.
    pub where_predicate: Option<String>,
    /// `jsonpaths`: one JSON path per target column (the `columns` header's, else the
    /// table's, in order).
    pub jsonpaths: Option<Vec<JsonPath>>,
    /// `json_root`: the node whose content is the data (applied to the whole body with
    /// `strip_outer_array`, to every line otherwise).
    pub json_root: Option<JsonPath>,
    /// `unique_key_update_mode: UPDATE_FLEXIBLE_COLUMNS`: each JSON row updates the columns
    /// it carries (implies `partial`).
    pub flexible: bool,
    /// `hidden_columns`: hidden columns the body carries after the table's columns (only
    /// without a `columns` header, as in Doris); the emulator knows `__DORIS_DELETE_SIGN__`.
    pub hidden_columns: Vec<String>,
    /// `columns` items `target = expression`: columns computed from the source columns
    /// (SQL run by DataFusion) before the rows are conformed to the table.
    pub mappings: Vec<(String, String)>,
}

impl LoadOptions {
    /// The options as a release before flexible partial update (3.1) reads the same
    /// headers: `partial_columns` alone decides a partial update; `unique_key_update_mode`
    /// and `partial_update_new_key_behavior` are ignored.
    pub fn before_flexible_partial_update(mut self, headers: &HeaderMap) -> Result<Self, String> {
        self.partial = bool_header(headers, "partial_columns")?;
        self.flexible = false;
        self.new_key_error = false;
        Ok(self)
    }
}

/// A header as text: its bytes as UTF-8, as Doris's BE reads them (so `columns` may name
/// non-ASCII columns).
pub(super) fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| std::str::from_utf8(v.as_bytes()).ok())
}

pub(super) fn bool_header(headers: &HeaderMap, name: &str) -> Result<bool, String> {
    match header(headers, name).map(str::trim) {
        None => Ok(false),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
        Some(_) => Err(format!(
            "[INVALID_ARGUMENT]Invalid {name} format. Must be bool type"
        )),
    }
}

/// A separator header: absent, its default; given, its text or `\x01`-style hex; empty
/// (a blank value, which HTTP strips to nothing), refused as Doris's `Separator` refuses it.
fn separator(headers: &HeaderMap, name: &str, default: &str, what: &str) -> Result<String, String> {
    match header(headers, name) {
        None => Ok(default.to_owned()),
        Some(text) => {
            let separator = unescape_separator(text);
            if separator.is_empty() {
                return Err(format!("[INVALID_ARGUMENT]{what} is null or empty"));
            }
            Ok(separator)
        }
    }
}

/// `\x01`-style hex escapes in separators, as Doris accepts them.
pub(super) fn unescape_separator(text: &str) -> String {
    if let Some(hex) = text.strip_prefix("\\x") {
        let bytes: Option<Vec<u8>> = (0..hex.len())
            .step_by(2)
            .map(|i| {
                hex.get(i..i + 2)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
            })
            .collect();
        if let Some(s) = bytes.and_then(|b| String::from_utf8(b).ok()) {
            return s;
        }
    }
    text.to_owned()
}

/// Doris Stream Load headers that change what a load writes but that the emulator does not
/// emulate: a load that sets one is refused (a `Fail` naming the header) rather than run
/// as if the header were absent. Headers that only tune Doris (`timeout`,
/// `exec_mem_limit`, `send_batch_parallelism`, `load_to_single_tablet`,
/// `memtable_on_sink_node`) are accepted, and so is `timezone`, though DATETIME text that
/// names its zone loads as UTC's wall time whatever it says (docs/emulator.md, "Not
/// emulated").
pub const NOT_EMULATED_HEADERS: [&str; 6] = [
    "partitions",
    "temporary_partitions",
    "num_as_string",
    "fuzzy_parse",
    "function_column.sequence_col",
    "sequence_col",
];

/// Reads the load options; `Err` carries the `Message` of a `Fail` response.
pub fn parse_options(headers: &HeaderMap) -> Result<LoadOptions, String> {
    if let Some(name) = NOT_EMULATED_HEADERS
        .iter()
        .find(|name| header(headers, name).is_some_and(|v| !v.trim().is_empty()))
    {
        return Err(format!(
            "[NOT_IMPLEMENTED_ERROR]the Doris emulator does not emulate the `{name}` header"
        ));
    }
    let label = header(headers, "label")
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned);
    let format = match header(headers, "format")
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("csv") => Format::Csv { header_lines: 0 },
        Some("csv_with_names") => Format::Csv { header_lines: 1 },
        Some("csv_with_names_and_types") => Format::Csv { header_lines: 2 },
        Some("json") => Format::Json,
        Some("arrow") => Format::Arrow,
        Some("parquet") => Format::Parquet,
        Some(other) => {
            return Err(format!(
                "[INVALID_ARGUMENT]unknown data format, format={other}"
            ));
        }
    };
    // `StreamLoadAction::_on_header` (be/src/http/action/stream_load.cpp): a non-empty
    // `compress_type` with `format: json` is refused before anything is read.
    if format == Format::Json && header(headers, "compress_type").is_some_and(|c| !c.is_empty()) {
        return Err("[INTERNAL_ERROR]compress data of JSON format is not supported.".into());
    }
    let compression = match header(headers, "compress_type")
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("") => Compression::None,
        Some("gz") => Compression::Gzip,
        Some("lz4") => Compression::Lz4,
        Some(other) => {
            return Err(format!(
                "[INVALID_ARGUMENT]the emulator does not support compress_type={other} (gz and lz4 only)"
            ));
        }
    };
    if compression != Compression::None && matches!(format, Format::Arrow | Format::Parquet) {
        return Err("[INVALID_ARGUMENT]compress_type applies to csv and json only".into());
    }
    let delete_condition = header(headers, "delete")
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(str::to_owned);
    let merge_type = header(headers, "merge_type").map(|m| m.trim().to_ascii_uppercase());
    let (delete, merge_delete) = match merge_type.as_deref() {
        None | Some("APPEND") | Some("DELETE") if delete_condition.is_some() => {
            return Err(
                "[INVALID_ARGUMENT]the delete header (the delete condition) applies to merge_type MERGE only"
                    .into(),
            );
        }
        None | Some("APPEND") => (false, None),
        Some("DELETE") => (true, None),
        Some("MERGE") => match delete_condition {
            Some(condition) if cfg!(feature = "sql") => (false, Some(condition)),
            Some(_) => {
                return Err("[NOT_IMPLEMENTED_ERROR]this emulator was built without the `sql` feature: no merge_type MERGE".into());
            }
            None => {
                return Err(
                    "[INVALID_ARGUMENT]merge_type MERGE needs the delete header (the condition that marks rows to delete)"
                        .into(),
                );
            }
        },
        Some(other) => {
            return Err(format!(
                "[INVALID_ARGUMENT]merge_type must be APPEND, DELETE or MERGE, not {other}"
            ));
        }
    };
    let where_predicate = header(headers, "where")
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .map(str::to_owned);
    if where_predicate.is_some() && !cfg!(feature = "sql") {
        return Err(
            "[NOT_IMPLEMENTED_ERROR]this emulator was built without the `sql` feature: no `where`"
                .into(),
        );
    }
    let jsonpaths = match header(headers, "jsonpaths").map(str::trim) {
        None | Some("") => None,
        Some(text) => Some(parse_jsonpaths(text)?),
    };
    let json_root = match header(headers, "json_root").map(str::trim) {
        None | Some("") => None,
        Some(text) => Some(
            parse_jsonpath(text)
                .ok_or_else(|| format!("[INVALID_ARGUMENT]Invalid json root: {text}"))?,
        ),
    };
    let hidden_columns: Vec<String> = header(headers, "hidden_columns")
        .map(|list| {
            list.split(',')
                .map(|c| c.trim().trim_matches('`').to_owned())
                .filter(|c| !c.is_empty())
                .collect()
        })
        .unwrap_or_default();
    if let Some(other) = hidden_columns
        .iter()
        .find(|c| !c.eq_ignore_ascii_case(DELETE_SIGN))
    {
        return Err(format!(
            "[NOT_IMPLEMENTED_ERROR]the Doris emulator knows the hidden column {DELETE_SIGN} only, not `{other}`"
        ));
    }
    let mut mappings = Vec::new();
    let columns = match header(headers, "columns") {
        None => None,
        Some(list) => {
            let mut names = Vec::new();
            for item in split_top_level(list) {
                match split_assignment(&item) {
                    Some((target, expr)) => {
                        let target = unquote_ident(target);
                        if target.is_empty() || expr.trim().is_empty() {
                            return Err(format!("[INVALID_ARGUMENT]bad columns item: {item}"));
                        }
                        mappings.push((target, expr.trim().to_owned()));
                    }
                    None => names.push(unquote_ident(&item)),
                }
            }
            if names.iter().any(String::is_empty) {
                return Err("[INVALID_ARGUMENT]the columns header has an empty item".into());
            }
            Some(names)
        }
    };
    if !mappings.is_empty() && !cfg!(feature = "sql") {
        return Err(
            "[NOT_IMPLEMENTED_ERROR]this emulator was built without the `sql` feature: no column mappings"
                .into(),
        );
    }
    let max_filter_ratio = match header(headers, "max_filter_ratio") {
        None => 0.0,
        Some(v) => v
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|r| (0.0..=1.0).contains(r))
            .ok_or_else(|| {
                "[INVALID_ARGUMENT]max_filter_ratio must be between 0 and 1".to_owned()
            })?,
    };
    let one_char = |name: &str| -> Result<Option<u8>, String> {
        match header(headers, name) {
            None => Ok(None),
            Some(v) => match v.as_bytes() {
                [b] if b.is_ascii() => Ok(Some(*b)),
                _ => Err(format!("[INVALID_ARGUMENT]{name} must be one character")),
            },
        }
    };
    let mode = header(headers, "unique_key_update_mode").map(|m| m.trim().to_ascii_uppercase());
    let flexible = mode.as_deref() == Some("UPDATE_FLEXIBLE_COLUMNS");
    let partial = match mode.as_deref() {
        None => bool_header(headers, "partial_columns")?,
        Some("UPSERT") => false,
        Some("UPDATE_FIXED_COLUMNS") | Some("UPDATE_FLEXIBLE_COLUMNS") => true,
        Some(m) => {
            return Err(format!(
                "[INVALID_ARGUMENT]Invalid unique_key_update_mode {m}"
            ));
        }
    };
    let behavior =
        header(headers, "partial_update_new_key_behavior").map(|m| m.trim().to_ascii_uppercase());
    let new_key_error = match behavior.as_deref() {
        None | Some("APPEND") => false,
        Some("ERROR") => true,
        Some(m) => {
            return Err(format!(
                "[INVALID_ARGUMENT]Invalid partial_update_new_key_behavior {m}"
            ));
        }
    };
    if flexible {
        check_flexible(headers, &format)?;
    }
    Ok(LoadOptions {
        partial,
        new_key_error,
        delete,
        where_predicate,
        jsonpaths,
        json_root,
        flexible,
        hidden_columns,
        mappings,
        merge_delete,
        label,
        format,
        compression,
        columns,
        column_separator: separator(headers, "column_separator", "\t", "Column separator")?,
        line_delimiter: separator(headers, "line_delimiter", "\n", "Line delimiter")?,
        enclose: one_char("enclose")?,
        escape: one_char("escape")?,
        skip_lines: header(headers, "skip_lines")
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0),
        trim_double_quotes: bool_header(headers, "trim_double_quotes")?,
        strict_mode: bool_header(headers, "strict_mode")?,
        max_filter_ratio,
        strip_outer_array: bool_header(headers, "strip_outer_array")?,
        two_phase_commit: bool_header(headers, "two_phase_commit")?,
        comment: header(headers, "comment").unwrap_or_default().to_owned(),
    })
}

/// Splits a `columns` header at the commas outside parentheses and quotes
/// (`k, v = concat(a, ',')` is two items).
/// A `columns` item's name: between backticks a doubled backtick is one (as Doris's SQL
/// lexer reads identifiers), else the text trimmed.
fn unquote_ident(item: &str) -> String {
    let item = item.trim();
    match item
        .strip_prefix('`')
        .and_then(|rest| rest.strip_suffix('`'))
    {
        Some(inner) => inner.replace("``", "`"),
        None => item.to_owned(),
    }
}

/// `target = expression` split at the first `=` outside backticks and quotes.
fn split_assignment(item: &str) -> Option<(&str, &str)> {
    let mut quote = None::<char>;
    for (at, c) in item.char_indices() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"' | '`') => quote = Some(c),
            (None, '=') => return Some((&item[..at], &item[at + 1..])),
            _ => {}
        }
    }
    None
}

pub(super) fn split_top_level(list: &str) -> Vec<String> {
    let mut items = Vec::new();
    let (mut depth, mut quote, mut current) = (0i32, None::<char>, String::new());
    for c in list.chars() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"' | '`') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => depth -= 1,
            (None, ',') if depth == 0 => {
                items.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    items.push(current);
    items
}

/// Flexible partial updates read JSON only and take no header that reshapes rows
/// (Doris's Stream Load documentation, `unique_key_update_mode`).
pub(super) fn check_flexible(headers: &HeaderMap, format: &Format) -> Result<(), String> {
    if !matches!(format, Format::Json) {
        return Err(
            "[INVALID_ARGUMENT]flexible partial update (UPDATE_FLEXIBLE_COLUMNS) only supports json format"
                .into(),
        );
    }
    for name in [
        "fuzzy_parse",
        "columns",
        "jsonpaths",
        "hidden_columns",
        "function_column.sequence_col",
        "merge_type",
        "where",
    ] {
        if header(headers, name).is_some_and(|v| !v.trim().is_empty()) {
            return Err(format!(
                "[INVALID_ARGUMENT]flexible partial update (UPDATE_FLEXIBLE_COLUMNS) does not support `{name}`"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{split_assignment, split_top_level, unquote_ident};

    #[test]
    fn columns_items_read_quoted_names_as_doris_does() {
        assert_eq!(unquote_ident(" `tick``name` "), "tick`name");
        assert_eq!(unquote_ident("`it's size`"), "it's size");
        assert_eq!(unquote_ident("plain"), "plain");
        assert_eq!(
            split_assignment("`a=b` = `x` + 1"),
            Some(("`a=b` ", " `x` + 1"))
        );
        assert_eq!(split_assignment("`a=b`"), None);
        let items = split_top_level("`id`,`tick``name`,`it's size`");
        assert_eq!(items.len(), 3);
        assert_eq!(unquote_ident(&items[1]), "tick`name");
    }
}
