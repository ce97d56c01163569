//! Text-protocol rows of a record batch, formatted column by column and framed in bulk: each
//! column's cells are written once into one buffer (integers with `itoa`, strings copied,
//! everything else through [`format_value`]), then every row's packet is assembled from
//! them into one buffer that goes out in a single write. This keeps the emulator's scan
//! rate well above what a client can read, so client benchmarks measure the client.

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{
    DataType, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type,
    UInt64Type,
};
use doris_sql::DorisType;

use super::select::format_value;
use super::wire::{MAX_PAYLOAD, PacketIo, lenenc_int};

/// One column's cells for a batch: the text of every row, back to back.
#[derive(Debug, Default)]
pub struct ColumnCells {
    data: Vec<u8>,
    /// `ends[i]` is where row `i`'s text ends; `None` for NULL.
    ends: Vec<Option<usize>>,
}

impl ColumnCells {
    /// Row `row`'s text, `None` for NULL.
    #[cfg(test)]
    fn get(&self, row: usize) -> Option<&[u8]> {
        let end = self.ends[row]?;
        let start = self.ends[..row].iter().rev().find_map(|e| *e).unwrap_or(0);
        Some(&self.data[start..end])
    }
}

/// Formats every row of `array` into `cells` (Doris's text forms, as [`format_value`]).
pub fn format_column(array: &ArrayRef, doris: Option<&DorisType>, cells: &mut ColumnCells) {
    cells.data.clear();
    cells.ends.clear();
    let rows = array.len();
    macro_rules! integers {
        ($t:ty) => {{
            let a = array.as_primitive::<$t>();
            let mut buffer = itoa::Buffer::new();
            for row in 0..rows {
                if a.is_null(row) {
                    cells.ends.push(None);
                } else {
                    cells
                        .data
                        .extend_from_slice(buffer.format(a.value(row)).as_bytes());
                    cells.ends.push(Some(cells.data.len()));
                }
            }
        }};
    }
    macro_rules! strings {
        ($a:expr) => {{
            let a = $a;
            for row in 0..rows {
                if a.is_null(row) {
                    cells.ends.push(None);
                } else {
                    cells.data.extend_from_slice(a.value(row).as_bytes());
                    cells.ends.push(Some(cells.data.len()));
                }
            }
        }};
    }
    match array.data_type() {
        DataType::Int8 => integers!(Int8Type),
        DataType::Int16 => integers!(Int16Type),
        DataType::Int32 => integers!(Int32Type),
        DataType::Int64 => integers!(Int64Type),
        DataType::UInt8 => integers!(UInt8Type),
        DataType::UInt16 => integers!(UInt16Type),
        DataType::UInt32 => integers!(UInt32Type),
        DataType::UInt64 => integers!(UInt64Type),
        DataType::Utf8 => strings!(array.as_string::<i32>()),
        DataType::LargeUtf8 => strings!(array.as_string::<i64>()),
        DataType::Utf8View => strings!(array.as_string_view()),
        _ => {
            for row in 0..rows {
                if array.is_null(row) {
                    cells.ends.push(None);
                } else {
                    format_value(array, row, doris, &mut cells.data);
                    cells.ends.push(Some(cells.data.len()));
                }
            }
        }
    }
}

/// Frames rows `0..rows` of the formatted `columns` as text-protocol packets into `out`
/// (cleared first) and writes them; a row too long for one packet goes through
/// [`PacketIo::write`], which splits it.
pub async fn write_rows(
    columns: &[ColumnCells],
    rows: usize,
    io: &mut PacketIo,
    out: &mut Vec<u8>,
) -> std::io::Result<()> {
    out.clear();
    // Where each column's previous non-NULL cell ended (cells are back to back).
    let mut starts = vec![0usize; columns.len()];
    for row in 0..rows {
        let at = out.len();
        out.extend_from_slice(&[0, 0, 0, 0]);
        for (c, cells) in columns.iter().enumerate() {
            match cells.ends[row] {
                None => out.push(0xFB),
                Some(end) => {
                    let cell = &cells.data[starts[c]..end];
                    lenenc_int(out, cell.len() as u64);
                    out.extend_from_slice(cell);
                    starts[c] = end;
                }
            }
        }
        let len = out.len() - at - 4;
        if len >= MAX_PAYLOAD {
            let payload = out.split_off(at + 4);
            out.truncate(at);
            io.write_framed(out).await?;
            out.clear();
            io.write(&payload).await?;
            continue;
        }
        out[at..at + 3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
        out[at + 3] = io.next_seq();
        if out.len() >= 1 << 20 {
            io.write_framed(out).await?;
            out.clear();
        }
    }
    io.write_framed(out).await
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Int32Array, StringArray};

    use super::*;

    #[test]
    fn cells_keep_nulls_and_text_per_row() {
        let mut cells = ColumnCells::default();
        let ints: ArrayRef = Arc::new(Int32Array::from(vec![Some(-5), None, Some(120)]));
        format_column(&ints, None, &mut cells);
        assert_eq!(cells.get(0), Some(&b"-5"[..]));
        assert_eq!(cells.get(1), None);
        assert_eq!(cells.get(2), Some(&b"120"[..]));
        let strings: ArrayRef = Arc::new(StringArray::from(vec![None, Some(""), Some("é")]));
        format_column(&strings, None, &mut cells);
        assert_eq!(cells.get(0), None);
        assert_eq!(cells.get(1), Some(&b""[..]));
        assert_eq!(cells.get(2), Some("é".as_bytes()));
    }
}
