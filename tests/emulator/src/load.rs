//! Stream Load bodies: options from the headers, decompression, decoding of every format
//! into the table's Arrow schema, and Doris's row filtering rules.
//!
//! Filtering, as Doris does it: a NULL for a NOT NULL column filters the row; a value that
//! does not convert to the column's type filters the row in strict mode and becomes NULL
//! otherwise (unless the column is NOT NULL). CSV rows with the wrong number of fields and
//! JSON lines that are not objects are filtered too. Filtered rows go to the error log.

use std::io::Read;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, StringArray, new_null_array};
use arrow::compute::{CastOptions, cast_with_options, filter_record_batch};
use arrow::datatypes::DataType;
use arrow::record_batch::RecordBatch;
use axum::body::Bytes;
use axum::http::HeaderMap;

use crate::catalog::Table;

/// Body formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `csv` (also `csv_with_names`, which skips the header line)
    Csv {
        /// Skip the first line (`csv_with_names`).
        with_names: bool,
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
    /// `enclose`
    pub enclose: Option<char>,
    /// `escape`
    pub escape: Option<char>,
    /// `skip_lines`
    pub skip_lines: usize,
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

/// The hidden delete-sign column of UNIQUE tables: a row whose value is 1 deletes its key.
pub const DELETE_SIGN: &str = "__DORIS_DELETE_SIGN__";

/// Schema metadata key that marks a partial-update batch with the columns it provides.
pub const PARTIAL_COLUMNS: &str = "doris.emulator.partial_columns";
/// Schema metadata key: `error` when a partial update must not insert new keys.
pub const PARTIAL_NEW_KEY: &str = "doris.emulator.partial_new_key";
/// Schema metadata key that marks a batch whose rows delete their keys (`merge_type: DELETE`).
pub const DELETE_ROWS: &str = "doris.emulator.delete";

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn bool_header(headers: &HeaderMap, name: &str) -> Result<bool, String> {
    match header(headers, name).map(str::trim) {
        None => Ok(false),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
        Some(_) => Err(format!(
            "[INVALID_ARGUMENT]Invalid {name} format. Must be bool type"
        )),
    }
}

/// `\x01`-style hex escapes in separators, as Doris accepts them.
fn unescape_separator(text: &str) -> String {
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

/// Reads the load options; `Err` carries the `Message` of a `Fail` response.
pub fn parse_options(headers: &HeaderMap) -> Result<LoadOptions, String> {
    let label = header(headers, "label")
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned);
    let format = match header(headers, "format")
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("csv") => Format::Csv { with_names: false },
        Some("csv_with_names") => Format::Csv { with_names: true },
        Some("json") => Format::Json,
        Some("arrow") => Format::Arrow,
        Some("parquet") => Format::Parquet,
        Some(other) => {
            return Err(format!(
                "[INVALID_ARGUMENT]unknown data format, format={other}"
            ));
        }
    };
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
                match item.split_once('=') {
                    Some((target, expr)) => {
                        let target = target.trim().trim_matches('`').to_owned();
                        if target.is_empty() || expr.trim().is_empty() {
                            return Err(format!("[INVALID_ARGUMENT]bad columns item: {item}"));
                        }
                        mappings.push((target, expr.trim().to_owned()));
                    }
                    None => names.push(item.trim().trim_matches('`').to_owned()),
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
    let one_char = |name: &str| -> Result<Option<char>, String> {
        match header(headers, name) {
            None => Ok(None),
            Some(v) => {
                let mut chars = v.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => Ok(Some(c)),
                    _ => Err(format!("[INVALID_ARGUMENT]{name} must be one character")),
                }
            }
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
        column_separator: header(headers, "column_separator")
            .map_or_else(|| "\t".to_owned(), unescape_separator),
        line_delimiter: header(headers, "line_delimiter")
            .map_or_else(|| "\n".to_owned(), unescape_separator),
        enclose: one_char("enclose")?,
        escape: one_char("escape")?,
        skip_lines: header(headers, "skip_lines")
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0),
        strict_mode: bool_header(headers, "strict_mode")?,
        max_filter_ratio,
        strip_outer_array: bool_header(headers, "strip_outer_array")?,
        two_phase_commit: bool_header(headers, "two_phase_commit")?,
        comment: header(headers, "comment").unwrap_or_default().to_owned(),
    })
}

/// Splits a `columns` header at the commas outside parentheses and quotes
/// (`k, v = concat(a, ',')` is two items).
fn split_top_level(list: &str) -> Vec<String> {
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
/// (protocol document §1, `unique_key_update_mode`).
fn check_flexible(headers: &HeaderMap, format: &Format) -> Result<(), String> {
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

/// Doris's rule for filtered rows of an INSERT or a job task: in strict mode any filtered
/// row fails the statement; otherwise it fails when more than `max_filter_ratio` of the
/// rows were filtered. `url` is the error log's address, when one was stored.
pub fn filtered_rows_rule(
    strict: bool,
    max_filter_ratio: f64,
    filtered: u64,
    total: u64,
    first_error: &str,
    url: Option<&str>,
) -> Result<(), String> {
    if filtered == 0 {
        return Ok(());
    }
    let url = url.map(|u| format!(" url: {u}")).unwrap_or_default();
    if strict {
        return Err(format!(
            "Insert has filtered data in strict mode.{url} First error: {first_error}"
        ));
    }
    if filtered as f64 > max_filter_ratio * total as f64 {
        return Err(format!(
            "Insert has too many filtered data {filtered}/{total} insert_max_filter_ratio is \
             {max_filter_ratio}.{url} First error: {first_error}"
        ));
    }
    Ok(())
}

/// Rows decoded from a body.
#[derive(Debug, Default)]
pub struct Decoded {
    /// Accepted rows in the table's Arrow schema.
    pub batches: Vec<RecordBatch>,
    /// Rows read from the body.
    pub total_rows: u64,
    /// Rows rejected.
    pub filtered_rows: u64,
    /// One line per rejected row (at most 1000 kept).
    pub error_log: Vec<String>,
}

impl Decoded {
    /// Counts a rejected row and keeps its reason for the error log.
    pub fn reject(&mut self, reason: String) {
        self.filtered_rows += 1;
        if self.error_log.len() < 1000 {
            self.error_log.push(reason);
        }
    }
}

fn decompress(body: Bytes, compression: Compression) -> Result<Bytes, String> {
    let mut out = Vec::new();
    let result = match compression {
        Compression::None => return Ok(body),
        Compression::Gzip => flate2::read::MultiGzDecoder::new(&body[..]).read_to_end(&mut out),
        Compression::Lz4 => lz4_flex::frame::FrameDecoder::new(&body[..]).read_to_end(&mut out),
    };
    result.map_err(|e| format!("[INTERNAL_ERROR]failed to decompress the body: {e}"))?;
    Ok(Bytes::from(out))
}

/// Decodes a whole body into the table's schema.
pub fn decode(table: &Table, opts: &LoadOptions, body: Bytes) -> Result<Decoded, String> {
    let body = decompress(body, opts.compression)?;
    let mut out = Decoded::default();
    match opts.format {
        Format::Arrow => {
            let reader =
                arrow::ipc::reader::StreamReader::try_new(std::io::Cursor::new(body), None)
                    .map_err(|e| format!("[INTERNAL_ERROR]failed to read the Arrow stream: {e}"))?;
            for batch in reader {
                let batch = batch
                    .map_err(|e| format!("[INTERNAL_ERROR]failed to read the Arrow stream: {e}"))?;
                conform_batch(table, opts, &batch, &mut out)?;
            }
        }
        Format::Parquet => {
            let reader =
                parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(body)
                    .and_then(|b| b.build())
                    .map_err(|e| format!("[INTERNAL_ERROR]failed to read the Parquet file: {e}"))?;
            for batch in reader {
                let batch = batch
                    .map_err(|e| format!("[INTERNAL_ERROR]failed to read the Parquet file: {e}"))?;
                conform_batch(table, opts, &batch, &mut out)?;
            }
        }
        Format::Csv { with_names } => {
            let text = String::from_utf8(body.to_vec())
                .map_err(|_| "[DATA_QUALITY_ERROR]the CSV body is not valid UTF-8".to_owned())?;
            let skip = opts.skip_lines + usize::from(with_names);
            let names = source_names(table, opts);
            let mut rows: Vec<Vec<Option<String>>> = Vec::new();
            for (n, line) in
                split_csv_records(&text, &opts.line_delimiter, opts.enclose, opts.escape)
                    .into_iter()
                    .enumerate()
                    .skip(skip)
            {
                if line.is_empty() && n > 0 {
                    continue;
                }
                let line = line.strip_suffix('\r').unwrap_or(line);
                let fields =
                    split_csv_line(line, &opts.column_separator, opts.enclose, opts.escape);
                out.total_rows += 1;
                if fields.len() != names.len() {
                    out.reject(format!(
                        "Reason: actual column number {} is not equal to schema column number {}. src line [{line}];",
                        fields.len(),
                        names.len()
                    ));
                    continue;
                }
                rows.push(
                    fields
                        .into_iter()
                        .map(|f| (f != "\\N").then_some(f))
                        .collect(),
                );
            }
            conform_text(table, opts, &names, rows, None, &mut out)?;
        }
        Format::Json => {
            let text = String::from_utf8(body.to_vec())
                .map_err(|_| "[DATA_QUALITY_ERROR]the JSON body is not valid UTF-8".to_owned())?;
            let root = |v: serde_json::Value| match &opts.json_root {
                None => Some(v),
                Some(path) => eval_jsonpath(&v, path).cloned(),
            };
            let values: Vec<serde_json::Value> = if opts.strip_outer_array {
                match serde_json::from_str::<serde_json::Value>(&text).ok().map(root) {
                    Some(Some(serde_json::Value::Array(items))) => items,
                    Some(None) => return Err("[DATA_QUALITY_ERROR]JSON Root not found.".into()),
                    _ => return Err("[DATA_QUALITY_ERROR]JSON data is not an array-object, strip_outer_array must be FALSE".into()),
                }
            } else {
                let mut items = Vec::new();
                for line in text.lines().filter(|l| !l.trim().is_empty()) {
                    match serde_json::from_str::<serde_json::Value>(line).map(root) {
                        Ok(Some(v)) => items.push(v),
                        Ok(None) => {
                            out.total_rows += 1;
                            out.reject(format!("Reason: JSON Root not found. src line [{line}];"));
                        }
                        Err(_) => {
                            out.total_rows += 1;
                            out.reject(format!(
                                "Reason: Parse json data failed. src line [{line}];"
                            ));
                        }
                    }
                }
                items
            };
            if let Some(paths) = &opts.jsonpaths {
                let (names, rows) = rows_by_jsonpaths(table, opts, paths, values, &mut out)?;
                conform_text(table, opts, &names, rows, Some(names.as_slice()), &mut out)?;
                return Ok(out);
            }
            if opts.flexible {
                flexible_rows(table, opts, values, &mut out)?;
                return Ok(out);
            }
            let sign = source_names(table, opts)
                .into_iter()
                .find(|n| n.eq_ignore_ascii_case(DELETE_SIGN));
            let names: Vec<String> = if opts.mappings.is_empty() {
                table
                    .schema
                    .columns
                    .iter()
                    .map(|c| c.name.clone())
                    .chain(sign)
                    .collect()
            } else {
                // Mapped loads read the source fields `columns` names, table columns or not.
                source_names(table, opts)
            };
            let json_provided: Option<Vec<String>> = opts.columns.clone().or_else(|| {
                values
                    .first()
                    .and_then(|v| v.as_object())
                    .map(|o| o.keys().cloned().collect())
            });
            let mut rows = Vec::new();
            for v in values {
                out.total_rows += 1;
                let serde_json::Value::Object(map) = v else {
                    out.reject("Reason: JSON data is not an object. src line [..];".into());
                    continue;
                };
                rows.push(
                    names
                        .iter()
                        .map(|n| {
                            map.iter()
                                .find(|(k, _)| k.eq_ignore_ascii_case(n))
                                .and_then(|(_, v)| match v {
                                    serde_json::Value::Null => None,
                                    serde_json::Value::String(s) => Some(s.clone()),
                                    other => Some(other.to_string()),
                                })
                        })
                        .collect(),
                );
            }
            conform_text(
                table,
                opts,
                &names,
                rows,
                json_provided.as_deref(),
                &mut out,
            )?;
        }
    }
    Ok(out)
}

/// `UPDATE_FLEXIBLE_COLUMNS`: every JSON object updates the table columns it carries. Runs
/// of consecutive rows carrying the same columns become one partial-update batch each, so
/// the merge applies them in row order, each with its own column set.
fn flexible_rows(
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

/// The column each source field feeds: the `columns` header, else the table's order.
fn source_names(table: &Table, opts: &LoadOptions) -> Vec<String> {
    opts.columns.clone().unwrap_or_else(|| {
        table
            .schema
            .columns
            .iter()
            .map(|c| c.name.clone())
            .chain(opts.hidden_columns.iter().cloned())
            .collect()
    })
}

/// Splits a CSV body into records on the line delimiter; with `enclose`, a delimiter
/// inside an enclosed field is data (as Doris's enclose-aware line reader treats it).
fn split_csv_records<'a>(
    text: &'a str,
    delimiter: &str,
    enclose: Option<char>,
    escape: Option<char>,
) -> Vec<&'a str> {
    let Some(quote) = enclose else {
        return text.split(delimiter).collect();
    };
    let mut records = Vec::new();
    let (mut start, mut quoted, mut i) = (0, false, 0);
    let bytes = text.as_bytes();
    let mut quote_buf = [0u8; 4];
    let quote = quote.encode_utf8(&mut quote_buf).as_bytes();
    let escape = escape.filter(char::is_ascii).map(|e| e as u8);
    while i < bytes.len() {
        if quoted && Some(bytes[i]) == escape && bytes[i + 1..].starts_with(quote) {
            i += 1 + quote.len();
        } else if bytes[i..].starts_with(quote) {
            quoted = !quoted;
            i += quote.len();
        } else if !quoted && bytes[i..].starts_with(delimiter.as_bytes()) {
            records.push(&text[start..i]);
            i += delimiter.len();
            start = i;
        } else {
            i += 1;
        }
    }
    records.push(&text[start.min(text.len())..]);
    records
}

/// Splits one CSV line on a (possibly multi-character) separator, honouring `enclose`.
fn split_csv_line(
    line: &str,
    sep: &str,
    enclose: Option<char>,
    escape: Option<char>,
) -> Vec<String> {
    let Some(quote) = enclose else {
        return line.split(sep).map(str::to_owned).collect();
    };
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut rest = line;
    while let Some(ch) = rest.chars().next() {
        // Inside an enclosed field the escape character escapes the enclose character;
        // before anything else it is kept as data (so `"\N"` still reads as NULL).
        if Some(ch) == escape && quoted && rest[ch.len_utf8()..].starts_with(quote) {
            field.push(quote);
            rest = &rest[ch.len_utf8() + quote.len_utf8()..];
            continue;
        }
        if ch == quote {
            if quoted && rest[1..].starts_with(quote) {
                field.push(quote);
                rest = &rest[2 * quote.len_utf8()..];
                continue;
            }
            quoted = !quoted;
            rest = &rest[ch.len_utf8()..];
            continue;
        }
        if !quoted && rest.starts_with(sep) {
            fields.push(std::mem::take(&mut field));
            rest = &rest[sep.len()..];
            continue;
        }
        field.push(ch);
        rest = &rest[ch.len_utf8()..];
    }
    fields.push(field);
    fields
}

/// Turns text rows (one `Option<String>` per source field) into typed rows.
fn conform_text(
    table: &Table,
    opts: &LoadOptions,
    names: &[String],
    rows: Vec<Vec<Option<String>>>,
    provided: Option<&[String]>,
    out: &mut Decoded,
) -> Result<(), String> {
    if rows.is_empty() {
        return Ok(());
    }
    let columns: Vec<(String, ArrayRef)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let values: StringArray = rows.iter().map(|r| r[i].as_deref()).collect();
            (n.clone(), Arc::new(values) as ArrayRef)
        })
        .collect();
    conform(table, opts, columns, provided, out)
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
fn parse_jsonpaths(text: &str) -> Result<Vec<JsonPath>, String> {
    let invalid = || format!("[INVALID_ARGUMENT]Invalid json path: {text}");
    let paths: Vec<String> = serde_json::from_str(text).map_err(|_| invalid())?;
    paths
        .iter()
        .map(|p| parse_jsonpath(p).ok_or_else(invalid))
        .collect()
}

fn parse_jsonpath(path: &str) -> Option<JsonPath> {
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
fn eval_jsonpath<'a>(
    value: &'a serde_json::Value,
    path: &[JsonStep],
) -> Option<&'a serde_json::Value> {
    path.iter().try_fold(value, |v, step| match step {
        JsonStep::Member(name) => v.get(name.as_str()),
        JsonStep::Index(i) => v.get(*i),
    })
}

/// Rows of text cells (`None`: NULL).
type TextRows = Vec<Vec<Option<String>>>;

/// Rows of text cells by `jsonpaths`: the i-th path feeds the i-th target column (the
/// `columns` header's, else the table's); a path that finds nothing gives NULL.
fn rows_by_jsonpaths(
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

/// A DataFusion context with `batches` registered as the table `__load` (one partition, so
/// a projection keeps the row order).
#[cfg(feature = "sql")]
fn load_context(
    schema: arrow::datatypes::SchemaRef,
    batches: Vec<RecordBatch>,
) -> Result<datafusion::prelude::SessionContext, String> {
    let ctx = datafusion::prelude::SessionContext::new_with_config(
        datafusion::prelude::SessionConfig::new()
            .with_target_partitions(1)
            .set_str("datafusion.sql_parser.dialect", "mysql"),
    );
    let table = datafusion::datasource::MemTable::try_new(schema, vec![batches])
        .map_err(|e| format!("[INTERNAL_ERROR]{e}"))?;
    ctx.register_table("__load", Arc::new(table))
        .map_err(|e| format!("[INTERNAL_ERROR]{e}"))?;
    Ok(ctx)
}

/// Keeps the rows of `batches` that `predicate` (SQL over the table's columns) accepts;
/// returns them and how many were left out (`NumberUnselectedRows`).
#[cfg(feature = "sql")]
pub async fn apply_where(
    batches: Vec<RecordBatch>,
    predicate: &str,
) -> Result<(Vec<RecordBatch>, u64), String> {
    let Some(schema) = batches.first().map(RecordBatch::schema) else {
        return Ok((batches, 0));
    };
    let before: usize = batches.iter().map(RecordBatch::num_rows).sum();
    let ctx = load_context(schema, batches)?;
    let analysis = |e: datafusion::error::DataFusionError| {
        format!(
            "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = the where predicate is invalid: {}",
            e.to_string().lines().next().unwrap_or_default()
        )
    };
    let kept = ctx
        .sql(&format!("SELECT * FROM __load WHERE {predicate}"))
        .await
        .map_err(analysis)?
        .collect()
        .await
        .map_err(analysis)?;
    let after: usize = kept.iter().map(RecordBatch::num_rows).sum();
    Ok((kept, (before - after) as u64))
}

/// Marks the rows `condition` accepts as deletes (`merge_type: MERGE`): each batch is cut
/// into runs of consecutive rows with the same verdict, so the load keeps its row order.
#[cfg(feature = "sql")]
pub async fn apply_merge(
    batches: Vec<RecordBatch>,
    condition: &str,
) -> Result<Vec<RecordBatch>, String> {
    let mut out = Vec::with_capacity(batches.len());
    for batch in batches {
        let ctx = load_context(batch.schema(), vec![batch.clone()])?;
        let analysis = |e: datafusion::error::DataFusionError| {
            format!(
                "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = the delete condition is invalid: {}",
                e.to_string().lines().next().unwrap_or_default()
            )
        };
        let verdicts = ctx
            .sql(&format!(
                "SELECT coalesce(({condition}), false) AS __delete FROM __load"
            ))
            .await
            .map_err(analysis)?
            .collect()
            .await
            .map_err(analysis)?;
        let mut marks: Vec<bool> = Vec::with_capacity(batch.num_rows());
        for v in &verdicts {
            let column = v
                .column(0)
                .as_any()
                .downcast_ref::<BooleanArray>()
                .ok_or("[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = the delete condition is not a boolean expression")?;
            marks.extend(column.iter().map(|b| b.unwrap_or(false)));
        }
        if marks.len() != batch.num_rows() {
            return Err("[INTERNAL_ERROR]the delete condition changed the row count".into());
        }
        split_by_marks(batch, &marks, &mut out)?;
    }
    Ok(out)
}

/// Conforms one Arrow batch (columns by name, or by position under `opts.columns`) to the
/// table, filtering rows as Doris does.
pub fn conform_batch(
    table: &Table,
    opts: &LoadOptions,
    batch: &RecordBatch,
    out: &mut Decoded,
) -> Result<(), String> {
    out.total_rows += batch.num_rows() as u64;
    let names: Vec<String> = match &opts.columns {
        Some(cols) if cols.len() == batch.num_columns() => cols.clone(),
        _ => batch
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect(),
    };
    let columns = names
        .into_iter()
        .zip(batch.columns().iter().cloned())
        .collect();
    conform(table, opts, columns, None, out)
}

/// Casts source columns to the table's columns and filters rows by Doris's rules.
fn conform(
    table: &Table,
    opts: &LoadOptions,
    source: Vec<(String, ArrayRef)>,
    provided: Option<&[String]>,
    out: &mut Decoded,
) -> Result<(), String> {
    if !opts.mappings.is_empty() {
        // Column mappings come first: keep the source columns as they are (see
        // `apply_mappings`, which conforms the mapped rows afterwards).
        return raw_batch(source, out);
    }
    let rows = source.first().map_or(0, |(_, a)| a.len());
    let signs = delete_signs(table, &source, rows)?;
    // A partial update changes only the columns it provides; every key must be among them.
    let provided: Vec<String> = table
        .schema
        .columns
        .iter()
        .filter(|c| {
            let given = |n: &String| n.eq_ignore_ascii_case(&c.name);
            match provided {
                Some(p) => p.iter().any(given),
                None => source.iter().any(|(n, _)| given(n)),
            }
        })
        .map(|c| c.name.clone())
        .collect();
    let is_provided = |name: &str| provided.iter().any(|p| p.eq_ignore_ascii_case(name));
    if (opts.partial || opts.delete)
        && let Some(missing) = table.schema.key_columns.iter().find(|k| !is_provided(k))
    {
        return Err(format!(
            "[INVALID_ARGUMENT]{} requires every key column, `{missing}` is missing",
            if opts.delete {
                "delete"
            } else {
                "partial update"
            }
        ));
    }
    let mut keep = vec![true; rows];
    let mut reasons: Vec<Option<String>> = vec![None; rows];
    let mut arrays = Vec::with_capacity(table.schema.columns.len());
    for (column, field) in table.schema.columns.iter().zip(table.arrow_schema.fields()) {
        let src = source
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(&column.name));
        let array = match src {
            None => new_null_array(field.data_type(), rows),
            Some((_, a)) if a.data_type() == field.data_type() => a.clone(),
            Some((_, a)) if is_nested(field.data_type()) && a.data_type() == &DataType::Utf8 => {
                text_to_nested(a.as_string::<i32>(), field.data_type())?
            }
            Some((_, a)) => cast_with_options(
                a,
                field.data_type(),
                &CastOptions {
                    safe: true,
                    ..Default::default()
                },
            )
            .map_err(|e| {
                format!(
                    "[INTERNAL_ERROR]column {} cannot be loaded from {}: {e}",
                    column.name,
                    a.data_type()
                )
            })?,
        };
        // Without a cast no value can fail to convert: only NULLs in a NOT NULL column count.
        let cast_happened = src.is_some_and(|(_, a)| a.data_type() != field.data_type());
        let check_nulls = !(opts.partial || opts.delete) || is_provided(&column.name);
        if !cast_happened && (column.nullable || array.null_count() == 0 || !check_nulls) {
            arrays.push(array);
            continue;
        }
        for r in 0..rows {
            let failed_cast =
                cast_happened && src.is_some_and(|(_, a)| a.is_valid(r)) && array.is_null(r);
            let null_in_not_null = array.is_null(r) && !column.nullable && check_nulls;
            if (failed_cast && opts.strict_mode) || null_in_not_null {
                keep[r] = false;
                if reasons[r].is_none() {
                    reasons[r] = Some(if failed_cast {
                        format!(
                            "Reason: column({}) value is incorrect while strict mode is true. row [{r}];",
                            column.name
                        )
                    } else {
                        format!(
                            "Reason: column({}) values is null while columns is not nullable. row [{r}];",
                            column.name
                        )
                    });
                }
            }
        }
        arrays.push(array);
    }
    // Until the rejected rows are gone, NOT NULL columns may still hold NULLs: build the
    // batch under an all-nullable schema, filter, then take the table's schema.
    let nullable = table.nullable_schema();
    let batch = RecordBatch::try_new(nullable.clone(), arrays)
        .map_err(|e| format!("[INTERNAL_ERROR]{e}"))?;
    for reason in reasons.into_iter().flatten() {
        out.reject(reason);
    }
    let signs: Option<Vec<bool>> = signs.map(|marks| {
        marks
            .into_iter()
            .zip(&keep)
            .filter_map(|(m, k)| k.then_some(m))
            .collect()
    });
    let batch = if keep.iter().all(|k| *k) {
        batch
    } else {
        filter_record_batch(&batch, &BooleanArray::from(keep))
            .map_err(|e| format!("[INTERNAL_ERROR]{e}"))?
    };
    let schema = if opts.delete {
        // Only the keys matter; other columns may stay NULL.
        let mut metadata = std::collections::HashMap::new();
        metadata.insert(DELETE_ROWS.to_owned(), "true".to_owned());
        Arc::new(nullable.as_ref().clone().with_metadata(metadata))
    } else if opts.partial {
        // NOT NULL columns the update does not provide stay NULL until the merge fills them.
        let mut metadata = std::collections::HashMap::new();
        metadata.insert(PARTIAL_COLUMNS.to_owned(), provided.join(","));
        let behavior = if opts.new_key_error {
            "error"
        } else {
            "append"
        };
        metadata.insert(PARTIAL_NEW_KEY.to_owned(), behavior.to_owned());
        Arc::new(nullable.as_ref().clone().with_metadata(metadata))
    } else {
        table.arrow_schema.clone()
    };
    let batch = RecordBatch::try_new(schema, batch.columns().to_vec())
        .map_err(|e| format!("[INTERNAL_ERROR]{e}"))?;
    match signs {
        Some(marks) => split_by_marks(batch, &marks, &mut out.batches)?,
        None if batch.num_rows() > 0 => out.batches.push(batch),
        None => {}
    }
    Ok(())
}

/// The source columns as one batch, unconverted (for column mappings).
fn raw_batch(source: Vec<(String, ArrayRef)>, out: &mut Decoded) -> Result<(), String> {
    let fields: Vec<arrow::datatypes::Field> = source
        .iter()
        .map(|(n, a)| arrow::datatypes::Field::new(n, a.data_type().clone(), true))
        .collect();
    let schema = Arc::new(arrow::datatypes::Schema::new(fields));
    let batch = RecordBatch::try_new(schema, source.into_iter().map(|(_, a)| a).collect())
        .map_err(|e| format!("[INTERNAL_ERROR]{e}"))?;
    if batch.num_rows() > 0 {
        out.batches.push(batch);
    }
    Ok(())
}

/// Computes the `columns` mappings over the raw source batches `decoded` holds (DataFusion
/// runs `SELECT <sources>, <expression> AS <target>, …`), then conforms the result to the
/// table as any load is. Row counts carry over; conversion rejects are added.
#[cfg(feature = "sql")]
pub async fn apply_mappings(
    table: &Table,
    opts: &LoadOptions,
    mut decoded: Decoded,
) -> Result<Decoded, String> {
    let raw = std::mem::take(&mut decoded.batches);
    let Some(schema) = raw.first().map(RecordBatch::schema) else {
        return Ok(decoded);
    };
    let targets: Vec<&str> = opts.mappings.iter().map(|(t, _)| t.as_str()).collect();
    let mut select: Vec<String> = schema
        .fields()
        .iter()
        .filter(|f| !targets.iter().any(|t| t.eq_ignore_ascii_case(f.name())))
        .map(|f| format!("`{}`", f.name().replace('`', "``")))
        .collect();
    select.extend(
        opts.mappings
            .iter()
            .map(|(target, expr)| format!("({expr}) AS `{}`", target.replace('`', "``"))),
    );
    let analysis = |e: datafusion::error::DataFusionError| {
        format!(
            "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = a column mapping is invalid: {}",
            e.to_string().lines().next().unwrap_or_default()
        )
    };
    let sql = format!("SELECT {} FROM __load", select.join(", "));
    let frame = match load_context(schema.clone(), raw.clone())?.sql(&sql).await {
        Ok(frame) => frame,
        // Text fields are strings to DataFusion, which will not do arithmetic on them;
        // Doris casts such fields implicitly. Retry with numeric-looking text as numbers.
        Err(first) => {
            let typed: Vec<RecordBatch> = raw.iter().map(numbers_from_text).collect();
            let Some(schema) = typed.first().map(RecordBatch::schema) else {
                return Err(analysis(first));
            };
            load_context(schema, typed)?
                .sql(&sql)
                .await
                .map_err(|_| analysis(first))?
        }
    };
    let mapped = frame.collect().await.map_err(analysis)?;
    let plain = LoadOptions {
        columns: None,
        mappings: Vec::new(),
        ..opts.clone()
    };
    let mut conformed = Decoded::default();
    for batch in &mapped {
        conform_batch(table, &plain, batch, &mut conformed)?;
    }
    decoded.batches = conformed.batches;
    decoded.filtered_rows += conformed.filtered_rows;
    let room = 1000usize.saturating_sub(decoded.error_log.len());
    decoded
        .error_log
        .extend(conformed.error_log.into_iter().take(room));
    Ok(decoded)
}

/// `batch` with every text column whose values all read as integers (else as floats) turned
/// into Int64 (Float64) columns; other columns unchanged.
#[cfg(feature = "sql")]
fn numbers_from_text(batch: &RecordBatch) -> RecordBatch {
    let mut fields = Vec::with_capacity(batch.num_columns());
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        let converted = column.as_string_opt::<i32>().and_then(|text| {
            // A NULL stays NULL; one value that does not parse keeps the column as text.
            fn all<T: std::str::FromStr>(
                text: &arrow::array::StringArray,
            ) -> Option<Vec<Option<T>>> {
                text.iter()
                    .map(|v| match v {
                        None => Some(None),
                        Some(v) => v.trim().parse::<T>().ok().map(Some),
                    })
                    .collect()
            }
            if let Some(ints) = all::<i64>(text) {
                return Some(Arc::new(arrow::array::Int64Array::from(ints)) as ArrayRef);
            }
            let floats = all::<f64>(text).map(arrow::array::Float64Array::from);
            floats.map(|f| Arc::new(f) as ArrayRef)
        });
        match converted {
            Some(array) => {
                fields.push(arrow::datatypes::Field::new(
                    field.name(),
                    array.data_type().clone(),
                    true,
                ));
                columns.push(array);
            }
            None => {
                fields.push(field.as_ref().clone());
                columns.push(column.clone());
            }
        }
    }
    let schema = Arc::new(arrow::datatypes::Schema::new(fields));
    RecordBatch::try_new(schema, columns).unwrap_or_else(|_| batch.clone())
}

fn is_nested(ty: &DataType) -> bool {
    matches!(
        ty,
        DataType::List(_) | DataType::LargeList(_) | DataType::Map(_, _) | DataType::Struct(_)
    )
}

/// Text cells in Doris's text form of nested values (`[1, 2]`, `{"k":1}`, `{1:2}`; JSON
/// loads hand over their JSON text) as an array of the nested type `ty`, through arrow-json.
/// A cell that does not parse becomes NULL, which the caller counts as a failed conversion.
fn text_to_nested(text: &StringArray, ty: &DataType) -> Result<ArrayRef, String> {
    let schema = Arc::new(arrow::datatypes::Schema::new(vec![
        arrow::datatypes::Field::new("v", ty.clone(), true),
    ]));
    let line = |cell: Option<&str>| -> Vec<u8> {
        let json = cell.and_then(|c| doris_sql::nested_to_json(c).ok());
        format!("{{\"v\":{}}}\n", json.as_deref().unwrap_or("null")).into_bytes()
    };
    let decode = |lines: &[u8], rows: usize| -> Option<ArrayRef> {
        let mut decoder = arrow::json::ReaderBuilder::new(schema.clone())
            .with_batch_size(rows.max(1))
            .build_decoder()
            .ok()?;
        decoder.decode(lines).ok()?;
        decoder.flush().ok()?.map(|b| b.column(0).clone())
    };
    let all: Vec<u8> = text.iter().flat_map(line).collect();
    if let Some(array) = decode(&all, text.len()) {
        return Ok(array);
    }
    // Some cell is not valid for the type: decode cell by cell, the bad ones as NULL.
    let mut parts = Vec::with_capacity(text.len());
    for cell in text.iter() {
        let one = decode(&line(cell), 1)
            .or_else(|| decode(&line(None), 1))
            .ok_or_else(|| format!("[INTERNAL_ERROR]cannot build a NULL of {ty}"))?;
        parts.push(one);
    }
    let refs: Vec<&dyn Array> = parts.iter().map(AsRef::as_ref).collect();
    arrow::compute::concat(&refs).map_err(|e| format!("[INTERNAL_ERROR]{e}"))
}

/// The delete-sign values of the source (`__DORIS_DELETE_SIGN__` from `hidden_columns` or
/// the `columns` header): `true` where the value is 1. `None` when the source has none.
fn delete_signs(
    table: &Table,
    source: &[(String, ArrayRef)],
    rows: usize,
) -> Result<Option<Vec<bool>>, String> {
    let Some((_, array)) = source
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(DELETE_SIGN))
    else {
        return Ok(None);
    };
    if table.schema.key_model != Some(doris_sql::KeyModel::Unique) {
        return Err(format!(
            "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = unknown column {DELETE_SIGN}: only unique tables have a delete sign"
        ));
    }
    let ints = cast_with_options(
        array,
        &DataType::Int64,
        &CastOptions {
            safe: true,
            ..Default::default()
        },
    )
    .map_err(|e| format!("[INTERNAL_ERROR]{DELETE_SIGN}: {e}"))?;
    let ints = ints.as_primitive::<arrow::datatypes::Int64Type>();
    Ok(Some(
        (0..rows)
            .map(|r| ints.is_valid(r) && ints.value(r) == 1)
            .collect(),
    ))
}

/// Cuts `batch` into runs of consecutive rows with the same mark and appends them to `out`;
/// marked runs carry [`DELETE_ROWS`], so the merge deletes their keys in row order.
fn split_by_marks(
    batch: RecordBatch,
    marks: &[bool],
    out: &mut Vec<RecordBatch>,
) -> Result<(), String> {
    let mut start = 0;
    while start < marks.len() {
        let verdict = marks[start];
        let end = (start..marks.len())
            .find(|i| marks[*i] != verdict)
            .unwrap_or(marks.len());
        let run = batch.slice(start, end - start);
        out.push(if verdict {
            let mut metadata = run.schema().metadata().clone();
            metadata.insert(DELETE_ROWS.to_owned(), "true".to_owned());
            let schema = Arc::new(run.schema().as_ref().clone().with_metadata(metadata));
            RecordBatch::try_new(schema, run.columns().to_vec())
                .map_err(|e| format!("[INTERNAL_ERROR]{e}"))?
        } else {
            run
        });
        start = end;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonpaths_parse_and_evaluate() {
        let paths =
            parse_jsonpaths(r#"["$.id", "$.info.name", "$['odd key']", "$.tags[1]"]"#).unwrap();
        let v: serde_json::Value = serde_json::from_str(
            r#"{"id": 7, "info": {"name": "a"}, "odd key": true, "tags": ["x", "y"]}"#,
        )
        .unwrap();
        let got: Vec<String> = paths
            .iter()
            .map(|p| {
                eval_jsonpath(&v, p)
                    .map(ToString::to_string)
                    .unwrap_or_default()
            })
            .collect();
        assert_eq!(got, ["7", "\"a\"", "true", "\"y\""]);
        assert!(eval_jsonpath(&v, &parse_jsonpath("$.missing.x").unwrap()).is_none());
        assert!(parse_jsonpaths(r#"["id"]"#).is_err());
        assert!(parse_jsonpaths("not json").is_err());
    }

    #[test]
    fn csv_lines_split_with_enclose_and_escape() {
        assert_eq!(
            split_csv_line("a\tb\t", "\t", None, None),
            vec!["a", "b", ""]
        );
        assert_eq!(split_csv_line("a||b", "||", None, None), vec!["a", "b"]);
        assert_eq!(
            split_csv_line("\"x,y\",\"q\"\"d\",\\\"z", ",", Some('"'), Some('\\')),
            vec!["x,y", "q\"d", "\\z"]
        );
        assert_eq!(
            split_csv_line("'a\\'b',c", ",", Some('\''), Some('\\')),
            vec!["a'b", "c"]
        );
    }

    #[test]
    fn csv_records_keep_delimiters_inside_enclosed_fields() {
        assert_eq!(
            split_csv_records("1,\"a\nb\"\n2,\"c\\\"\n\"\n", "\n", Some('"'), Some('\\')),
            vec!["1,\"a\nb\"", "2,\"c\\\"\n\"", ""]
        );
        assert_eq!(split_csv_records("a\nb", "\n", None, None), vec!["a", "b"]);
    }

    #[test]
    fn options_are_validated() {
        let mut h = HeaderMap::new();
        h.insert("format", "xml".parse().unwrap());
        assert_eq!(
            parse_options(&h).unwrap_err(),
            "[INVALID_ARGUMENT]unknown data format, format=xml"
        );
        let mut h = HeaderMap::new();
        h.insert("strict_mode", "yes".parse().unwrap());
        assert!(parse_options(&h).unwrap_err().contains("strict_mode"));
        let mut h = HeaderMap::new();
        h.insert("column_separator", "\\x01".parse().unwrap());
        h.insert("columns", "`b`, a".parse().unwrap());
        let o = parse_options(&h).unwrap();
        assert_eq!(o.column_separator, "\u{1}");
        assert_eq!(o.columns, Some(vec!["b".to_owned(), "a".to_owned()]));
        assert_eq!(o.label.len(), 36, "a generated UUID label");
    }
}
