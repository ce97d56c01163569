//! CSV bodies: records, fields with `enclose` and `escape`, and text rows into typed rows.

use std::sync::Arc;

use arrow::array::{ArrayRef, StringArray};

use crate::catalog::Table;

use super::Decoded;
use super::conform::conform;
use super::options::LoadOptions;

/// Splits a CSV body into records on the line delimiter; with `enclose`, a delimiter
/// inside an enclosed field is data (as Doris's enclose-aware line reader treats it).
pub(super) fn split_csv_records<'a>(
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
pub(super) fn split_csv_line(
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

/// `trim_double_quotes: true`: a field that starts and ends with `"` loses those two.
pub(super) fn trim_double_quotes(field: String) -> String {
    match field
        .strip_prefix('"')
        .and_then(|inner| inner.strip_suffix('"'))
    {
        Some(inner) => inner.to_owned(),
        None => field,
    }
}
