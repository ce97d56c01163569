//! Stream Load bodies: options from the headers, decompression, decoding of every format
//! into the table's Arrow schema, and Doris's row filtering rules.
//!
//! Filtering, as Doris does it: a NULL for a NOT NULL column filters the row; a value that
//! does not convert to the column's type filters the row in strict mode and becomes NULL
//! otherwise (unless the column is NOT NULL). CSV rows with the wrong number of fields and
//! JSON lines that are not objects are filtered too. Filtered rows go to the error log.

mod conform;
mod csv;
mod json;
mod options;
#[cfg(feature = "sql")]
mod sql;

use std::io::Read;

use arrow::record_batch::RecordBatch;
use axum::body::Bytes;

use crate::catalog::Table;

pub use conform::conform_batch;
pub use json::{JsonPath, JsonStep};
pub use options::{Compression, Format, LoadOptions, NOT_EMULATED_HEADERS, parse_options};
#[cfg(feature = "sql")]
pub use sql::{apply_mappings, apply_merge, apply_where};

use csv::{Dialect, conform_text, field_value, split_records};
use json::{eval_jsonpath, flexible_rows, rows_by_jsonpaths};

/// The hidden delete-sign column of UNIQUE tables: a row whose value is 1 deletes its key.
pub const DELETE_SIGN: &str = "__DORIS_DELETE_SIGN__";

/// Schema metadata key that marks a partial-update batch with the columns it provides.
pub const PARTIAL_COLUMNS: &str = "doris.emulator.partial_columns";

/// Schema metadata key: `error` when a partial update must not insert new keys.
pub const PARTIAL_NEW_KEY: &str = "doris.emulator.partial_new_key";

/// Schema metadata key that marks a batch whose rows delete their keys (`merge_type: DELETE`).
pub const DELETE_ROWS: &str = "doris.emulator.delete";

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
        Format::Csv { header_lines } => {
            let text = String::from_utf8(body.to_vec())
                .map_err(|_| "[DATA_QUALITY_ERROR]the CSV body is not valid UTF-8".to_owned())?;
            // Doris: the header lines of csv_with_names[_and_types] replace skip_lines.
            let skip = if header_lines > 0 {
                header_lines
            } else {
                opts.skip_lines
            };
            let names = source_names(table, opts);
            let dialect = Dialect::of(opts);
            let mut rows: Vec<Vec<Option<String>>> = Vec::new();
            for (n, record) in split_records(&text, &dialect)
                .into_iter()
                .enumerate()
                .skip(skip)
            {
                if record.line.is_empty() && n > 0 {
                    continue;
                }
                let line = record.line.strip_suffix('\r').unwrap_or(record.line);
                let mut fields = record.fields;
                if let Some(last) = fields.last_mut() {
                    *last = last.strip_suffix('\r').unwrap_or(last);
                }
                out.total_rows += 1;
                if fields.len() != names.len() {
                    out.reject(format!(
                        "Reason: actual column number {} is not equal to schema column number {}. src line [{line}];",
                        fields.len(),
                        names.len()
                    ));
                    continue;
                }
                rows.push(fields.iter().map(|f| field_value(f, &dialect)).collect());
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

#[cfg(test)]
mod tests {
    use axum::http::HeaderMap;

    use super::json::{parse_jsonpath, parse_jsonpaths};
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

    /// The fields' values of `text`'s records, read as Doris reads CSV.
    fn read_csv(
        text: &str,
        sep: &str,
        enclose: Option<u8>,
        escape: Option<u8>,
    ) -> Vec<Vec<Option<String>>> {
        let d = Dialect {
            line_delimiter: "\n",
            column_separator: sep,
            enclose,
            escape,
            trim_double_quotes: false,
        };
        split_records(text, &d)
            .into_iter()
            .map(|r| r.fields.iter().map(|f| field_value(f, &d)).collect())
            .collect()
    }

    fn row(values: &[&str]) -> Vec<Option<String>> {
        values.iter().map(|v| Some((*v).to_owned())).collect()
    }

    #[test]
    fn csv_fields_read_as_doris_reads_them() {
        assert_eq!(
            read_csv("a\tb\t", "\t", None, None),
            vec![row(&["a", "b", ""])]
        );
        assert_eq!(read_csv("a||b", "||", None, None), vec![row(&["a", "b"])]);
        let (q, e) = (Some(b'"'), Some(b'\\'));
        // Enclosed separators are data; a doubled enclose is one; an escape outside an
        // enclosed field is removed too (every field is read as a string).
        assert_eq!(
            read_csv("\"x,y\",\"q\"\"d\",\\\"z", ",", q, e),
            vec![row(&["x,y", "q\"d", "\"z"])]
        );
        assert_eq!(
            read_csv("'a\\'b',c", ",", Some(b'\''), e),
            vec![row(&["a'b", "c"])]
        );
        // An escaped escape before the closing enclose: the field closes there.
        assert_eq!(
            read_csv("\"ends\\\\\",\"\\\\N\",\\N,\"\\N\"", ",", q, e),
            vec![vec![
                Some("ends\\".to_owned()),
                Some("\\N".to_owned()),
                None,
                None
            ]]
        );
        // Without an escape byte, backslashes are data.
        assert_eq!(read_csv("a\\b", ",", q, None), vec![row(&["a\\b"])]);
        // Bytes after the closing enclose stay in the field, which is then not trimmed.
        assert_eq!(read_csv("\"a\"b,c", ",", q, e), vec![row(&["\"a\"b", "c"])]);
    }

    #[test]
    fn csv_records_keep_delimiters_inside_enclosed_fields() {
        let (q, e) = (Some(b'"'), Some(b'\\'));
        assert_eq!(
            read_csv("1,\"a\nb\"\n2,\"c\\\"\n\"\n", ",", q, e),
            vec![row(&["1", "a\nb"]), row(&["2", "c\"\n"])]
        );
        assert_eq!(
            read_csv("a\nb", ",", None, None),
            vec![row(&["a"]), row(&["b"])]
        );
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
        // A blank separator reaches the server empty (HTTP strips the value): refused, never
        // split on.
        let mut h = HeaderMap::new();
        h.insert("column_separator", "".parse().unwrap());
        assert_eq!(
            parse_options(&h).unwrap_err(),
            "[INVALID_ARGUMENT]Column separator is null or empty"
        );
        let mut h = HeaderMap::new();
        h.insert("column_separator", "\\x01".parse().unwrap());
        h.insert("columns", "`b`, a".parse().unwrap());
        let o = parse_options(&h).unwrap();
        assert_eq!(o.column_separator, "\u{1}");
        assert_eq!(o.columns, Some(vec!["b".to_owned(), "a".to_owned()]));
        assert_eq!(o.label.len(), 36, "a generated UUID label");
    }
}
