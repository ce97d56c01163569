//! The typed Stream Load headers (docs/emulator.md lists what each does) a writer needs.

use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue};

use crate::error::StreamLoadError;

/// Body format.
#[derive(Debug, Clone, PartialEq)]
pub enum Format {
    /// Arrow IPC stream (`format: arrow`, Doris 2.1+): no text conversion at all.
    Arrow,
    /// Parquet (`format: parquet`).
    Parquet,
    /// Newline-delimited JSON objects (`format: json`, `read_json_by_line: true`); the form
    /// partial updates of only some columns need. NULL fields are omitted (Doris reads a
    /// missing key as NULL).
    Json,
    /// CSV with quoting (`format: csv`, `enclose`, `escape`, `\N` for NULL).
    Csv(CsvOptions),
}

impl Format {
    /// The `format` header value.
    pub fn header_value(&self) -> &'static str {
        match self {
            Self::Arrow => "arrow",
            Self::Parquet => "parquet",
            Self::Json => "json",
            Self::Csv(_) => "csv",
        }
    }
}

/// CSV dialect. Doris splits on `column_separator` and `line_delimiter`, honours `enclose`
/// around fields, reads `\N` as NULL and removes every `escape` byte from a field (keeping
/// the byte after it). The encoder escapes every escape and enclose byte of a string (and
/// puts one escape byte before a string that is exactly `\N`), so every string (a
/// backslash, `\N`, quotes, separators, newlines) loads exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvOptions {
    /// Field separator (one byte here; Doris also takes multi-byte ones).
    pub separator: u8,
    /// Enclosing quote.
    pub enclose: u8,
    /// Escape byte.
    pub escape: u8,
}

impl CsvOptions {
    /// The three bytes must be ASCII, distinct, and none a line break (Doris reads each
    /// header as one byte, and the line delimiter is `\n`); `enclose` and `escape` must be
    /// visible (an HTTP header value loses its surrounding blanks; the separator, sent in
    /// Doris's `\xNN` form when it is not visible, may be a tab or a control byte).
    pub fn validate(&self) -> Result<(), StreamLoadError> {
        let bytes = [self.separator, self.enclose, self.escape];
        if bytes
            .iter()
            .any(|b| !b.is_ascii() || *b == b'\n' || *b == b'\r')
        {
            return Err(StreamLoadError::Config(
                "the CSV separator, enclose and escape must be ASCII and not a line break".into(),
            ));
        }
        if !self.enclose.is_ascii_graphic() || !self.escape.is_ascii_graphic() {
            return Err(StreamLoadError::Config(
                "the CSV enclose and escape must be visible ASCII characters".into(),
            ));
        }
        if bytes[0] == bytes[1] || bytes[0] == bytes[2] || bytes[1] == bytes[2] {
            return Err(StreamLoadError::Config(
                "the CSV separator, enclose and escape must differ".into(),
            ));
        }
        Ok(())
    }
}

impl Default for CsvOptions {
    fn default() -> Self {
        Self {
            separator: b',',
            enclose: b'"',
            escape: b'\\',
        }
    }
}

/// `compress_type` for text formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    /// Uncompressed.
    #[default]
    None,
    /// `gz`
    Gzip,
    /// `lz4` (LZ4 frame format).
    Lz4,
}

/// `merge_type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeType {
    /// `APPEND` (Doris's default; not sent).
    Append,
    /// `DELETE`: every loaded row deletes its key (UNIQUE tables).
    Delete,
    /// `MERGE` with a `delete` predicate: rows matching it are deletes, the rest upserts.
    Merge {
        /// The `delete` predicate, SQL over the loaded columns.
        delete_predicate: String,
    },
}

/// `unique_key_update_mode` / `partial_columns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateMode {
    /// Full rows (`UPSERT`, the default; not sent).
    Upsert,
    /// Only the loaded columns change for existing keys (`UPDATE_FIXED_COLUMNS`; with
    /// `legacy_header` the older `partial_columns: true` is sent instead).
    FixedColumns {
        /// Send `partial_columns: true` (Doris before 3.0) rather than the mode header.
        legacy_header: bool,
    },
    /// Each JSON row updates only the keys it carries (`UPDATE_FLEXIBLE_COLUMNS`, JSON only).
    FlexibleColumns,
}

/// `partial_update_new_key_behavior`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewKeyBehavior {
    /// Insert rows with new keys (filling missing columns with defaults).
    Append,
    /// Fail the load on a new key.
    Error,
}

/// `group_commit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupCommit {
    /// `sync_mode`: the call returns after the shared batch commits.
    Sync,
    /// `async_mode`: the call returns once the data is in the BE's WAL.
    Async,
}

/// The `columns` header.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Columns {
    /// Sent for CSV (field order) and for partial updates (the updated columns), from the
    /// data's field names; Arrow, Parquet and JSON otherwise match columns by name.
    #[default]
    Auto,
    /// Never sent.
    Omit,
    /// Sent as given: column names and mapping expressions (`` `a`,`b`,c=to_bitmap(b) ``).
    Raw(String),
}

/// Every Stream Load option a writer needs, one typed field per header.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// `format` (default Arrow IPC stream).
    pub format: Format,
    /// `compress_type` (text formats only).
    pub compression: Compression,
    /// `columns`
    pub columns: Columns,
    /// `where`: rows not matching it are counted as unselected.
    pub where_predicate: Option<String>,
    /// `max_filter_ratio` (0 to 1).
    pub max_filter_ratio: f64,
    /// `strict_mode`
    pub strict_mode: bool,
    /// `timeout` (whole seconds).
    pub timeout: Option<Duration>,
    /// `timezone`, always sent (default `UTC`) so Doris's `Asia/Shanghai` default never
    /// shifts DATETIME values silently.
    pub timezone: String,
    /// Partial-column updates.
    pub update_mode: UpdateMode,
    /// `partial_update_new_key_behavior`
    pub new_key_behavior: Option<NewKeyBehavior>,
    /// `merge_type` / `delete`
    pub merge_type: MergeType,
    /// `function_column.sequence_col`
    pub sequence_column: Option<String>,
    /// `two_phase_commit: true`: loads are pre-committed and need a commit or abort.
    pub two_phase_commit: bool,
    /// With `two_phase_commit`: a label Doris holds pre-committed before this load sent
    /// anything under it is adopted as this load's (`true`, the default: a rerun of a job
    /// killed before its commit, whose deterministic labels name the same rows), or refused
    /// as another holder's with [`StreamLoadError::LabelExists`](crate::StreamLoadError)
    /// (`false`: for writers whose identical partitions in several processes may make the
    /// same label, `doris_write` among them).
    pub adopt_precommitted: bool,
    /// `group_commit`: no label, therefore no dedupe by label.
    pub group_commit: Option<GroupCommit>,
    /// `comment`, echoed in the response.
    pub comment: Option<String>,
    /// Other headers; a managed header here is refused.
    pub extra_headers: Vec<(String, String)>,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            format: Format::Arrow,
            compression: Compression::None,
            columns: Columns::Auto,
            where_predicate: None,
            max_filter_ratio: 0.0,
            strict_mode: true,
            timeout: None,
            timezone: "UTC".into(),
            update_mode: UpdateMode::Upsert,
            new_key_behavior: None,
            merge_type: MergeType::Append,
            sequence_column: None,
            two_phase_commit: false,
            adopt_precommitted: true,
            group_commit: None,
            comment: None,
            extra_headers: Vec::new(),
        }
    }
}

/// Headers the client sets itself; `extra_headers` may not override them.
pub const MANAGED_HEADERS: &[&str] = &[
    "authorization",
    "expect",
    "content-length",
    "transfer-encoding",
    "host",
    "connection",
    "label",
    "format",
    "compress_type",
    "columns",
    "where",
    "max_filter_ratio",
    "strict_mode",
    "timeout",
    "timezone",
    "time_zone",
    "partial_columns",
    "unique_key_update_mode",
    "partial_update_new_key_behavior",
    "merge_type",
    "delete",
    "function_column.sequence_col",
    "two_phase_commit",
    "group_commit",
    "comment",
    "column_separator",
    "line_delimiter",
    "enclose",
    "escape",
    "read_json_by_line",
    "strip_outer_array",
    "redirect-policy",
    "txn_id",
    "txn_operation",
];

/// `` `name` `` with backticks doubled, as Doris's `columns` header takes it.
pub fn quote_column(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// A header value: UTF-8 text as its bytes (Doris's BE reads them so: a `columns` header
/// may name non-ASCII columns), never a control character.
fn value(text: &str, what: &str) -> Result<HeaderValue, StreamLoadError> {
    HeaderValue::from_bytes(text.as_bytes()).map_err(|_| {
        StreamLoadError::Config(format!(
            "the {what} option holds characters an HTTP header cannot carry"
        ))
    })
}

impl LoadOptions {
    /// Sets one option given by its Stream Load header name, as a user's "load
    /// properties" mapping names it: `timezone`, `where`, `comment`,
    /// `partial_update_new_key_behavior` (`APPEND` or `ERROR`) and the sequence column
    /// (`sequence_col` or `function_column.sequence_col`) set their typed fields; any
    /// other name becomes an extra header, which [`validate`](Self::validate) refuses if
    /// the client manages it ([`MANAGED_HEADERS`]).
    pub fn set_property(&mut self, name: &str, value: &str) -> Result<(), StreamLoadError> {
        match name.to_ascii_lowercase().as_str() {
            "timezone" | "time_zone" => self.timezone = value.to_owned(),
            "where" => self.where_predicate = Some(value.to_owned()),
            "comment" => self.comment = Some(value.to_owned()),
            "sequence_col" | "function_column.sequence_col" => {
                self.sequence_column = Some(value.to_owned())
            }
            "partial_update_new_key_behavior" => {
                self.new_key_behavior = Some(match value.to_ascii_uppercase().as_str() {
                    "APPEND" => NewKeyBehavior::Append,
                    "ERROR" => NewKeyBehavior::Error,
                    _ => {
                        return Err(StreamLoadError::Config(
                            "partial_update_new_key_behavior must be APPEND or ERROR".into(),
                        ));
                    }
                });
            }
            _ => self.extra_headers.push((name.to_owned(), value.to_owned())),
        }
        Ok(())
    }

    /// Checks combinations Doris would refuse, before anything is sent.
    pub fn validate(&self) -> Result<(), StreamLoadError> {
        let bad = |m: &str| Err(StreamLoadError::Config(m.to_owned()));
        if !(0.0..=1.0).contains(&self.max_filter_ratio) {
            return bad("max_filter_ratio must be between 0 and 1");
        }
        // Doris reads compressed CSV only: the BE refuses `compress_type` with JSON.
        if self.compression != Compression::None && !matches!(self.format, Format::Csv(_)) {
            return bad("compress_type applies to csv bodies only");
        }
        if self.update_mode == UpdateMode::FlexibleColumns {
            if self.format != Format::Json {
                return bad("UPDATE_FLEXIBLE_COLUMNS needs the json format");
            }
            if self.columns != Columns::Auto
                || self.where_predicate.is_some()
                || self.sequence_column.is_some()
                || self.merge_type != MergeType::Append
            {
                return bad(
                    "UPDATE_FLEXIBLE_COLUMNS cannot be combined with columns, where, a sequence column or merge_type",
                );
            }
        }
        if self.new_key_behavior.is_some() && self.update_mode == UpdateMode::Upsert {
            return bad("partial_update_new_key_behavior applies to partial updates only");
        }
        if self.group_commit.is_some() && self.two_phase_commit {
            return bad("group commit and two-phase commit exclude each other");
        }
        if self.timezone.trim().is_empty() {
            return bad("timezone must not be empty");
        }
        if let Format::Csv(csv) = &self.format {
            csv.validate()?;
        }
        for (name, v) in &self.extra_headers {
            let lower = name.to_ascii_lowercase();
            if MANAGED_HEADERS.contains(&lower.as_str()) {
                return Err(StreamLoadError::Config(format!(
                    "header {name} is managed by the client; use its typed option"
                )));
            }
            HeaderName::from_bytes(lower.as_bytes()).map_err(|_| {
                StreamLoadError::Config(format!("{name:?} is not a valid header name"))
            })?;
            value(v, "extra header")?;
        }
        Ok(())
    }

    /// The Stream Load headers for a body whose fields are `fields`, under `label`
    /// (`None` for group commit).
    pub fn headers(
        &self,
        label: Option<&str>,
        fields: &[String],
    ) -> Result<HeaderMap, StreamLoadError> {
        self.validate()?;
        let mut h = HeaderMap::new();
        let mut put = |name: &'static str, text: &str| -> Result<(), StreamLoadError> {
            h.insert(HeaderName::from_static(name), value(text, name)?);
            Ok(())
        };
        if let Some(label) = label {
            put("label", label)?;
        }
        put("format", self.format.header_value())?;
        match self.compression {
            Compression::None => {}
            Compression::Gzip => put("compress_type", "gz")?,
            Compression::Lz4 => put("compress_type", "lz4")?,
        }
        match &self.format {
            Format::Json => put("read_json_by_line", "true")?,
            Format::Csv(csv) => {
                // A tab or a control byte travels in Doris's hex form: an HTTP header value
                // loses its surrounding blanks.
                let separator = if csv.separator.is_ascii_graphic() {
                    char::from(csv.separator).to_string()
                } else {
                    format!("\\x{:02X}", csv.separator)
                };
                put("column_separator", &separator)?;
                put("enclose", &char::from(csv.enclose).to_string())?;
                put("escape", &char::from(csv.escape).to_string())?;
            }
            _ => {}
        }
        let partial = matches!(self.update_mode, UpdateMode::FixedColumns { .. });
        let columns = match &self.columns {
            Columns::Omit => None,
            Columns::Raw(text) => Some(text.clone()),
            Columns::Auto if partial || matches!(self.format, Format::Csv(_)) => Some(
                fields
                    .iter()
                    .map(|f| quote_column(f))
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            Columns::Auto => None,
        };
        if let Some(columns) = columns {
            put("columns", &columns)?;
        }
        if let Some(w) = &self.where_predicate {
            put("where", w)?;
        }
        put("max_filter_ratio", &self.max_filter_ratio.to_string())?;
        put(
            "strict_mode",
            if self.strict_mode { "true" } else { "false" },
        )?;
        if let Some(t) = self.timeout {
            put("timeout", &t.as_secs().max(1).to_string())?;
        }
        put("timezone", &self.timezone)?;
        match self.update_mode {
            UpdateMode::Upsert => {}
            UpdateMode::FixedColumns {
                legacy_header: true,
            } => put("partial_columns", "true")?,
            UpdateMode::FixedColumns {
                legacy_header: false,
            } => put("unique_key_update_mode", "UPDATE_FIXED_COLUMNS")?,
            UpdateMode::FlexibleColumns => {
                put("unique_key_update_mode", "UPDATE_FLEXIBLE_COLUMNS")?
            }
        }
        match self.new_key_behavior {
            None => {}
            Some(NewKeyBehavior::Append) => put("partial_update_new_key_behavior", "APPEND")?,
            Some(NewKeyBehavior::Error) => put("partial_update_new_key_behavior", "ERROR")?,
        }
        match &self.merge_type {
            MergeType::Append => {}
            MergeType::Delete => put("merge_type", "DELETE")?,
            MergeType::Merge { delete_predicate } => {
                put("merge_type", "MERGE")?;
                put("delete", delete_predicate)?;
            }
        }
        if let Some(seq) = &self.sequence_column {
            put("function_column.sequence_col", seq)?;
        }
        if self.two_phase_commit {
            put("two_phase_commit", "true")?;
        }
        match self.group_commit {
            None => {}
            Some(GroupCommit::Sync) => put("group_commit", "sync_mode")?,
            Some(GroupCommit::Async) => put("group_commit", "async_mode")?,
        }
        if let Some(c) = &self.comment {
            put("comment", c)?;
        }
        for (name, v) in &self.extra_headers {
            let name = HeaderName::from_bytes(name.to_ascii_lowercase().as_bytes())
                .map_err(|_| StreamLoadError::Config(format!("{name:?} is not a header name")))?;
            h.insert(name, value(v, "extra header")?);
        }
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> Vec<String> {
        vec!["id".into(), "we`ird".into()]
    }

    #[test]
    fn defaults_send_utc_strict_arrow_and_no_columns() {
        let h = LoadOptions::default()
            .headers(Some("l1"), &fields())
            .unwrap();
        assert_eq!(h["label"], "l1");
        assert_eq!(h["format"], "arrow");
        assert_eq!(h["timezone"], "UTC");
        assert_eq!(h["strict_mode"], "true");
        assert_eq!(h["max_filter_ratio"], "0");
        assert!(!h.contains_key("columns"));
        assert!(!h.contains_key("two_phase_commit"));
    }

    #[test]
    fn partial_update_sends_quoted_columns_and_mode() {
        let opts = LoadOptions {
            format: Format::Json,
            update_mode: UpdateMode::FixedColumns {
                legacy_header: false,
            },
            new_key_behavior: Some(NewKeyBehavior::Error),
            ..LoadOptions::default()
        };
        let h = opts.headers(Some("l"), &fields()).unwrap();
        assert_eq!(h["columns"], "`id`,`we``ird`");
        assert_eq!(h["unique_key_update_mode"], "UPDATE_FIXED_COLUMNS");
        assert_eq!(h["partial_update_new_key_behavior"], "ERROR");
        assert_eq!(h["read_json_by_line"], "true");
    }

    #[test]
    fn properties_set_their_typed_option_or_an_extra_header_that_validate_judges() {
        let mut options = LoadOptions::default();
        options.set_property("timezone", "Asia/Tokyo").unwrap();
        options.set_property("WHERE", "k > 1").unwrap();
        options
            .set_property("function_column.sequence_col", "ver")
            .unwrap();
        options
            .set_property("partial_update_new_key_behavior", "error")
            .unwrap();
        options.set_property("send_batch_parallelism", "2").unwrap();
        assert_eq!(options.timezone, "Asia/Tokyo");
        assert_eq!(options.where_predicate.as_deref(), Some("k > 1"));
        assert_eq!(options.sequence_column.as_deref(), Some("ver"));
        assert_eq!(options.new_key_behavior, Some(NewKeyBehavior::Error));
        assert_eq!(
            options.extra_headers,
            [("send_batch_parallelism".to_owned(), "2".to_owned())]
        );
        assert!(
            options
                .set_property("partial_update_new_key_behavior", "maybe")
                .is_err()
        );
        let mut managed = LoadOptions::default();
        managed.set_property("label", "mine").unwrap();
        let err = managed.validate().unwrap_err().to_string();
        assert!(err.contains("label is managed"), "{err}");
    }

    #[test]
    fn managed_headers_cannot_be_overridden() {
        for name in ["Label", "AUTHORIZATION", "two_phase_commit", "Expect"] {
            let opts = LoadOptions {
                extra_headers: vec![(name.into(), "x".into())],
                ..LoadOptions::default()
            };
            assert!(
                matches!(opts.validate(), Err(StreamLoadError::Config(m)) if m.contains(name)),
                "{name}"
            );
        }
        let ok = LoadOptions {
            extra_headers: vec![("load_to_single_tablet".into(), "true".into())],
            ..LoadOptions::default()
        };
        let h = ok.headers(Some("l"), &fields()).unwrap();
        assert_eq!(h["load_to_single_tablet"], "true");
    }

    #[test]
    fn invalid_combinations_are_refused() {
        let cases = [
            LoadOptions {
                compression: Compression::Gzip,
                ..LoadOptions::default()
            },
            LoadOptions {
                max_filter_ratio: 1.5,
                ..LoadOptions::default()
            },
            LoadOptions {
                update_mode: UpdateMode::FlexibleColumns,
                ..LoadOptions::default()
            },
            LoadOptions {
                group_commit: Some(GroupCommit::Sync),
                two_phase_commit: true,
                ..LoadOptions::default()
            },
            LoadOptions {
                where_predicate: Some("a = 1\r\nX-Evil: 1".into()),
                ..LoadOptions::default()
            },
        ];
        for opts in cases {
            assert!(opts.headers(Some("l"), &fields()).is_err(), "{opts:?}");
        }
    }

    #[test]
    fn csv_and_merge_headers() {
        let opts = LoadOptions {
            format: Format::Csv(CsvOptions::default()),
            compression: Compression::Lz4,
            merge_type: MergeType::Merge {
                delete_predicate: "flag = 1".into(),
            },
            sequence_column: Some("ts".into()),
            group_commit: Some(GroupCommit::Async),
            ..LoadOptions::default()
        };
        let h = opts.headers(None, &fields()).unwrap();
        assert!(!h.contains_key("label"));
        assert_eq!(h["columns"], "`id`,`we``ird`");
        assert_eq!(h["compress_type"], "lz4");
        assert_eq!(h["merge_type"], "MERGE");
        assert_eq!(h["delete"], "flag = 1");
        assert_eq!(h["function_column.sequence_col"], "ts");
        assert_eq!(h["group_commit"], "async_mode");
        assert_eq!(h["enclose"], "\"");
        assert_eq!(h["column_separator"], ",");
        // A tab travels as `\x09` (a header value loses its surrounding blanks).
        let tabbed = LoadOptions {
            format: Format::Csv(CsvOptions {
                separator: b'\t',
                ..CsvOptions::default()
            }),
            ..LoadOptions::default()
        };
        let h = tabbed.headers(None, &fields()).unwrap();
        assert_eq!(h["column_separator"], "\\x09");
    }
}
