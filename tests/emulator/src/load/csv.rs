//! CSV bodies as Doris's BE reads them: records and fields with `enclose` and `escape`,
//! each field's value (NULL, enclose trimmed, escapes removed), then text rows into typed
//! rows.
//!
//! Doris (be/src/vec/exec/format/csv/csv_reader.cpp and the enclose-aware line reader
//! `EncloseCsvLineReaderCtx`): a field that starts with the enclose byte is enclosed until
//! an enclose byte that is neither escaped nor doubled; inside it, separators and line
//! delimiters are data. The escape byte toggles (`\\` is an escaped escape). Outside an
//! enclosed field nothing is special but the separators. Each field then loses one enclose
//! byte at each end (when it starts and ends with one), `\N` is NULL, and every field is
//! read as a string whose escape bytes are removed (the byte after an escape is kept, and
//! the first of two enclose bytes is dropped) before it is cast to its column.

use std::sync::Arc;

use arrow::array::{ArrayRef, StringArray};

use crate::catalog::Table;

use super::Decoded;
use super::conform::conform;
use super::options::LoadOptions;

/// How a CSV body is cut and read (from the load's headers).
pub(super) struct Dialect<'a> {
    pub line_delimiter: &'a str,
    pub column_separator: &'a str,
    pub enclose: Option<u8>,
    pub escape: Option<u8>,
    pub trim_double_quotes: bool,
}

impl<'a> Dialect<'a> {
    pub(super) fn of(opts: &'a LoadOptions) -> Self {
        Self {
            line_delimiter: &opts.line_delimiter,
            column_separator: &opts.column_separator,
            enclose: opts.enclose,
            escape: opts.escape,
            trim_double_quotes: opts.trim_double_quotes,
        }
    }
}

/// One record: its text (for error messages) and its fields as they stand in the body.
pub(super) struct Record<'a> {
    pub line: &'a str,
    pub fields: Vec<&'a str>,
}

/// Where the reader is inside a field.
#[derive(Clone, Copy, PartialEq)]
enum State {
    /// At a field's first byte.
    Start,
    /// In a field that did not start with the enclose byte.
    Plain,
    /// Inside an enclosed field.
    Enclosed,
    /// After an enclosed field's closing byte, before the separator.
    Closed,
}

/// Cuts `text` into records of raw fields. Every slice boundary is at an ASCII byte (the
/// separators, delimiters and the enclose and escape bytes are ASCII), so the slices are
/// valid text.
pub(super) fn split_records<'a>(text: &'a str, d: &Dialect<'_>) -> Vec<Record<'a>> {
    // The options refuse empty separators; a match of an empty one would never advance.
    debug_assert!(!d.line_delimiter.is_empty() && !d.column_separator.is_empty());
    if d.line_delimiter.is_empty() || d.column_separator.is_empty() {
        return Vec::new();
    }
    let bytes = text.as_bytes();
    let (line_delim, sep) = (d.line_delimiter.as_bytes(), d.column_separator.as_bytes());
    let mut records = Vec::new();
    let mut fields = Vec::new();
    let (mut record_start, mut field_start, mut i) = (0, 0, 0);
    let mut state = State::Start;
    // Inside an enclosed field: the last byte was an unescaped escape / enclose byte.
    let (mut escaped, mut after_enclose) = (false, false);
    let separator_or_end = |i: usize| -> Option<bool> {
        if bytes[i..].starts_with(sep) {
            Some(true)
        } else if bytes[i..].starts_with(line_delim) {
            Some(false)
        } else {
            None
        }
    };
    while i < bytes.len() {
        match state {
            State::Start => {
                if d.enclose == Some(bytes[i]) {
                    state = State::Enclosed;
                    (escaped, after_enclose) = (false, false);
                    i += 1;
                } else {
                    state = State::Plain;
                }
                continue;
            }
            State::Enclosed => {
                let b = bytes[i];
                if d.escape == Some(b) {
                    escaped = !escaped;
                } else if escaped {
                    escaped = false;
                } else if after_enclose {
                    after_enclose = false;
                    if d.enclose != Some(b) {
                        // The enclose byte before this one closed the field.
                        state = State::Closed;
                        continue;
                    }
                } else if d.enclose == Some(b) {
                    after_enclose = true;
                }
                i += 1;
                continue;
            }
            State::Plain | State::Closed => {}
        }
        match separator_or_end(i) {
            Some(true) => {
                fields.push(&text[field_start..i]);
                i += sep.len();
                field_start = i;
                state = State::Start;
            }
            Some(false) => {
                fields.push(&text[field_start..i]);
                records.push(Record {
                    line: &text[record_start..i],
                    fields: std::mem::take(&mut fields),
                });
                i += line_delim.len();
                (record_start, field_start) = (i, i);
                state = State::Start;
            }
            None => i += 1,
        }
    }
    // The last record, unless the body ended with its delimiter.
    if record_start < bytes.len() || !fields.is_empty() {
        fields.push(&text[field_start..]);
        records.push(Record {
            line: &text[record_start..],
            fields,
        });
    }
    records
}

/// A raw field's value: `None` for NULL.
pub(super) fn field_value(raw: &str, d: &Dialect<'_>) -> Option<String> {
    let mut field = raw;
    if let Some(e) = d.enclose {
        let b = field.as_bytes();
        if b.len() > 1 && b[0] == e && b[b.len() - 1] == e {
            field = &field[1..field.len() - 1];
        }
    }
    // `trim_double_quotes`: a field between double quotes loses them and is never NULL.
    let quoted =
        d.trim_double_quotes && field.len() > 1 && field.starts_with('"') && field.ends_with('"');
    if quoted {
        field = &field[1..field.len() - 1];
    } else if field == "\\N" {
        return None;
    }
    Some(match d.escape {
        Some(escape) => unescape(field, escape, d.enclose),
        None => field.to_owned(),
    })
}

/// Removes escapes as Doris does (`escape_string_for_csv`): an escape byte not itself
/// escaped is dropped and the byte after it kept; of two enclose bytes the first is dropped.
fn unescape(field: &str, escape: u8, enclose: Option<u8>) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut drop_next = false;
    for (i, &b) in bytes.iter().enumerate() {
        let doubled_enclose =
            enclose == Some(b) && bytes.get(i + 1).is_some_and(|&n| Some(n) == enclose);
        drop_next = if doubled_enclose || b == escape {
            !drop_next
        } else {
            false
        };
        if !drop_next {
            out.push(b);
        }
    }
    // Only ASCII bytes were dropped: the rest is the field's own UTF-8.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Turns text rows (one `Option<String>` per source field) into typed rows.
pub(super) fn conform_text(
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
