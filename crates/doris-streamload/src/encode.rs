//! Encoding record batches into a Stream Load body, slice by slice, so that a load can be
//! cut by rows and by encoded bytes while it streams.

use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow::record_batch::RecordBatch;
use arrow_schema::SchemaRef;

use crate::error::StreamLoadError;
use crate::options::{Compression, CsvOptions, Format};

/// Rows per slice when no byte budget steers the slicing (bounds the encoder's buffers).
const FREE_SLICE_ROWS: usize = 16 * 1024;
/// Largest slice when a byte budget steers it.
const MAX_SLICE_ROWS: usize = 64 * 1024;

/// Where a load stops while it is being formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most rows in one load.
    pub max_rows: usize,
    /// Target encoded (uncompressed) bytes of one load; a single row larger than this
    /// still forms a load of its own.
    pub max_bytes: u64,
}

/// What an encoding produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Encoded {
    /// Rows encoded.
    pub rows: u64,
    /// Encoded bytes before compression.
    pub encoded_bytes: u64,
}

/// Counts bytes written through it.
struct Counting<W> {
    inner: W,
    count: Arc<AtomicU64>,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The compression layer between the format writer and the sink.
enum Compressor<W: Write> {
    None(W),
    Gzip(flate2::write::GzEncoder<W>),
    Lz4(lz4_flex::frame::FrameEncoder<W>),
}

impl<W: Write> Compressor<W> {
    fn new(kind: Compression, sink: W) -> Self {
        match kind {
            Compression::None => Self::None(sink),
            Compression::Gzip => Self::Gzip(flate2::write::GzEncoder::new(
                sink,
                flate2::Compression::fast(),
            )),
            Compression::Lz4 => Self::Lz4(lz4_flex::frame::FrameEncoder::new(sink)),
        }
    }

    fn finish(self) -> io::Result<W> {
        match self {
            Self::None(w) => Ok(w),
            Self::Gzip(g) => g.finish(),
            Self::Lz4(l) => l.finish().map_err(io::Error::other),
        }
    }
}

impl<W: Write> Write for Compressor<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Self::None(w) => w.write(buf),
            Self::Gzip(g) => g.write(buf),
            Self::Lz4(l) => l.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Self::None(w) => w.flush(),
            Self::Gzip(g) => g.flush(),
            Self::Lz4(l) => l.flush(),
        }
    }
}

type Layered<W> = Counting<Compressor<W>>;

/// One format writer over the counted, compressed sink.
enum FormatWriter<W: Write + Send> {
    Arrow(arrow::ipc::writer::StreamWriter<Layered<W>>),
    Parquet(parquet::arrow::ArrowWriter<Layered<W>>),
    Json(arrow::json::LineDelimitedWriter<Layered<W>>),
    /// The writer and the escape byte its strings get doubled.
    Csv(arrow::csv::Writer<Layered<W>>, u8),
}

fn csv_writer<W: Write>(csv: &CsvOptions, sink: W) -> arrow::csv::Writer<W> {
    arrow::csv::WriterBuilder::new()
        .with_header(false)
        .with_delimiter(csv.separator)
        .with_quote(csv.enclose)
        .with_escape(csv.escape)
        .with_double_quote(false)
        .with_null(NULL_MARKER.to_owned())
        .with_date_format("%Y-%m-%d".to_owned())
        .with_datetime_format("%Y-%m-%d %H:%M:%S%.f".to_owned())
        .with_timestamp_format("%Y-%m-%d %H:%M:%S%.f".to_owned())
        .build(sink)
}

impl<W: Write + Send> FormatWriter<W> {
    fn new(format: &Format, schema: &SchemaRef, sink: Layered<W>) -> Result<Self, StreamLoadError> {
        Ok(match format {
            Format::Arrow => Self::Arrow(arrow::ipc::writer::StreamWriter::try_new(sink, schema)?),
            Format::Parquet => {
                let props = parquet::file::properties::WriterProperties::builder()
                    .set_compression(parquet::basic::Compression::LZ4_RAW)
                    .build();
                Self::Parquet(parquet::arrow::ArrowWriter::try_new(
                    sink,
                    schema.clone(),
                    Some(props),
                )?)
            }
            Format::Json => Self::Json(arrow::json::LineDelimitedWriter::new(sink)),
            Format::Csv(csv) => Self::Csv(csv_writer(csv, sink), csv.escape),
        })
    }

    fn write(&mut self, batch: &RecordBatch) -> Result<(), StreamLoadError> {
        match self {
            Self::Arrow(w) => w.write(batch)?,
            Self::Parquet(w) => w.write(batch)?,
            Self::Json(w) => w.write(batch)?,
            Self::Csv(w, escape) => w.write(&escape_csv_strings(batch, *escape)?)?,
        }
        Ok(())
    }

    /// Bytes this load will take so far (Parquet: written plus the buffered row group).
    fn size(&self, counted: u64) -> u64 {
        match self {
            Self::Parquet(w) => counted + w.in_progress_size() as u64,
            _ => counted,
        }
    }

    fn finish(self) -> Result<Compressor<W>, StreamLoadError> {
        let counting = match self {
            Self::Arrow(mut w) => {
                w.finish()?;
                w.into_inner()?
            }
            Self::Parquet(w) => w.into_inner()?,
            Self::Json(mut w) => {
                w.finish()?;
                w.into_inner()
            }
            Self::Csv(w, _) => w.into_inner(),
        };
        Ok(counting.inner)
    }
}

/// How CSV writes NULL (Doris reads `\N`, enclosed or not, as NULL).
const NULL_MARKER: &str = "\\N";

/// `batch` with the escape byte doubled in every string value, so that Doris, which
/// removes every escape byte of a field and keeps the byte after it, reads each value
/// back as it was (`\` → `\\`, so `\N` stays text: `\\N`). The CSV writer escapes the
/// enclose byte itself (`"` → `\"`). Other columns hold no escape byte.
fn escape_csv_strings(batch: &RecordBatch, escape: u8) -> Result<RecordBatch, StreamLoadError> {
    use arrow::array::{Array, ArrayRef, AsArray, LargeStringArray, StringArray, StringViewArray};
    use arrow::datatypes::DataType;
    let escape = char::from(escape);
    let doubled = escape.to_string().repeat(2);
    // The text `\N` would read as NULL whatever the escape byte: one escape byte before
    // it keeps it text (with `\` as the escape byte, doubling already does).
    let fix = |s: &str| -> String {
        let fixed = s.replace(escape, &doubled);
        if fixed == NULL_MARKER {
            format!("{escape}{fixed}")
        } else {
            fixed
        }
    };
    let needs = |s: &str| s.contains(escape) || s == NULL_MARKER;
    let mut changed = false;
    let columns: Vec<ArrayRef> = batch
        .columns()
        .iter()
        .map(|column| {
            let out: Option<ArrayRef> = match column.data_type() {
                DataType::Utf8 if column.as_string::<i32>().iter().flatten().any(needs) => {
                    Some(std::sync::Arc::new(
                        column
                            .as_string::<i32>()
                            .iter()
                            .map(|v| v.map(fix))
                            .collect::<StringArray>(),
                    ))
                }
                DataType::LargeUtf8 if column.as_string::<i64>().iter().flatten().any(needs) => {
                    Some(std::sync::Arc::new(
                        column
                            .as_string::<i64>()
                            .iter()
                            .map(|v| v.map(fix))
                            .collect::<LargeStringArray>(),
                    ))
                }
                DataType::Utf8View if column.as_string_view().iter().flatten().any(needs) => {
                    Some(std::sync::Arc::new(
                        column
                            .as_string_view()
                            .iter()
                            .map(|v| v.map(fix))
                            .collect::<StringViewArray>(),
                    ))
                }
                _ => None,
            };
            changed |= out.is_some();
            out.unwrap_or_else(|| column.clone())
        })
        .collect();
    if !changed {
        return Ok(batch.clone());
    }
    // Nulls stay nulls: `fix` maps values only.
    debug_assert!(
        columns
            .iter()
            .zip(batch.columns())
            .all(|(a, b)| a.null_count() == b.null_count())
    );
    Ok(RecordBatch::try_new(batch.schema(), columns)?)
}

/// Encodes `batches` (all of them, or as many rows as `limits` allow) into `sink`, then
/// finishes the format and the compression. Returns what was encoded, and the sink.
pub fn encode<W: Write + Send>(
    schema: &SchemaRef,
    batches: &[RecordBatch],
    format: &Format,
    compression: Compression,
    limits: Option<Limits>,
    sink: W,
) -> Result<(Encoded, W), StreamLoadError> {
    let count = Arc::new(AtomicU64::new(0));
    let layered = Counting {
        inner: Compressor::new(compression, sink),
        count: count.clone(),
    };
    let mut writer = FormatWriter::new(format, schema, layered)?;
    let mut rows = 0usize;
    'batches: for batch in batches {
        let mut offset = 0;
        while offset < batch.num_rows() {
            let available = batch.num_rows() - offset;
            let take = match limits {
                None => available.min(FREE_SLICE_ROWS),
                Some(l) => {
                    let size = writer.size(count.load(Ordering::Relaxed));
                    if rows >= l.max_rows || (rows > 0 && size >= l.max_bytes) {
                        break 'batches;
                    }
                    let room_rows = l.max_rows - rows;
                    if rows == 0 {
                        // One row first, to learn the row width.
                        1
                    } else {
                        let per_row = (size / rows as u64).max(1);
                        let budget = l.max_bytes.saturating_sub(size);
                        if budget < per_row {
                            break 'batches;
                        }
                        ((budget / per_row) as usize)
                            .clamp(1, MAX_SLICE_ROWS)
                            .min(room_rows)
                            .min(available)
                    }
                }
            };
            writer.write(&batch.slice(offset, take))?;
            offset += take;
            rows += take;
        }
    }
    let compressor = writer.finish()?;
    let encoded_bytes = count.load(Ordering::Relaxed);
    let sink = compressor
        .finish()
        .map_err(|e| StreamLoadError::Encode(e.to_string()))?;
    Ok((
        Encoded {
            rows: rows as u64,
            encoded_bytes,
        },
        sink,
    ))
}

/// The first `rows` rows of `batches`, as zero-copy slices.
pub fn take_rows(batches: &[RecordBatch], rows: u64) -> Vec<RecordBatch> {
    let mut left = rows as usize;
    let mut out = Vec::new();
    for b in batches {
        if left == 0 {
            break;
        }
        let n = b.num_rows().min(left);
        out.push(if n == b.num_rows() {
            b.clone()
        } else {
            b.slice(0, n)
        });
        left -= n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int64Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    fn batch(rows: usize, width: usize) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("s", DataType::Utf8, true),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from_iter_values(0..rows as i64)),
                Arc::new(StringArray::from_iter_values(
                    (0..rows).map(|_| "x".repeat(width)),
                )),
            ],
        )
        .unwrap()
    }

    fn read_arrow(bytes: &[u8]) -> usize {
        arrow::ipc::reader::StreamReader::try_new(bytes, None)
            .unwrap()
            .map(|b| b.unwrap().num_rows())
            .sum()
    }

    /// The CSV text of one string column holding `values`.
    fn csv_of(values: Vec<Option<&str>>) -> String {
        let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)]));
        let b = RecordBatch::try_new(schema.clone(), vec![Arc::new(StringArray::from(values))])
            .unwrap();
        let csv = Format::Csv(CsvOptions::default());
        let (_, out) = encode(&schema, &[b], &csv, Compression::None, None, Vec::new()).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn csv_doubles_every_escape_byte_and_escapes_the_enclose_byte() {
        // Doris removes every escape byte of a field and keeps the byte after it, so each
        // escape byte of a value is doubled; the enclose byte is escaped inside an enclosed
        // field. NULL is `\N`, enclosed as any field holding the escape byte (Doris trims the
        // enclose before it looks for `\N`, so it reads NULL); the text `\N` is `\\N`.
        let cases = [
            (Some("plain"), "plain"),
            (Some("\\"), "\"\\\\\""),
            (Some("trail\\"), "\"trail\\\\\""),
            (Some("\\N"), "\"\\\\N\""),
            (None, "\"\\N\""),
            (Some("a\"b"), "\"a\\\"b\""),
            (Some("a\\\"b"), "\"a\\\\\\\"b\""),
            (Some("a,b"), "\"a,b\""),
            (Some("l1\nl2"), "\"l1\nl2\""),
        ];
        for (value, encoded) in cases {
            assert_eq!(csv_of(vec![value]), format!("{encoded}\n"), "{value:?}");
        }
    }

    #[test]
    fn csv_options_must_be_distinct_ascii_bytes() {
        for bad in [
            CsvOptions {
                escape: b'"',
                ..CsvOptions::default()
            },
            CsvOptions {
                separator: b'\\',
                ..CsvOptions::default()
            },
            CsvOptions {
                enclose: b'\n',
                ..CsvOptions::default()
            },
            CsvOptions {
                separator: 0xE9,
                ..CsvOptions::default()
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
        CsvOptions {
            separator: b'\t',
            ..CsvOptions::default()
        }
        .validate()
        .unwrap();
    }

    /// Strings made of what text formats trip on: the empty string, `\N`, backslashes,
    /// tabs, NUL, CR/LF, quotes, separators, non-ASCII.
    fn edge_string() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        proptest::collection::vec(
            prop::sample::select(vec![
                "", "\\N", "\\", "\t", "\0", "\r\n", "\n", "\"", "'", ",", "ż", "日本", "a", " ",
            ]),
            0..6,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest::proptest! {
        /// JSON carries every such string and NULL exactly, and CSV encodes every one
        /// (that Doris reads each back exactly is checked against the emulator's CSV reader,
        /// `csv_carries_every_string_exactly` in `tests/emulator/formats.rs`; 256 cases).
        #[test]
        fn edge_strings_survive_json_and_encode_as_csv(
            values in proptest::collection::vec(proptest::option::of(edge_string()), 1..12)
        ) {
            let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)]));
            let b = RecordBatch::try_new(
                schema.clone(),
                vec![Arc::new(StringArray::from(values.clone()))],
            )
            .unwrap();
            let (_, json) =
                encode(&schema, std::slice::from_ref(&b), &Format::Json, Compression::None, None, Vec::new())
                    .unwrap();
            let back: Vec<Option<String>> = json
                .split(|c| *c == b'\n')
                .filter(|line| !line.is_empty())
                .map(|line| {
                    serde_json::from_slice::<serde_json::Value>(line).unwrap()["s"]
                        .as_str()
                        .map(str::to_owned)
                })
                .collect();
            proptest::prop_assert_eq!(&back, &values);
            let csv = Format::Csv(CsvOptions::default());
            let encoded =
                encode(&schema, std::slice::from_ref(&b), &csv, Compression::None, None, Vec::new());
            proptest::prop_assert!(encoded.is_ok(), "{:?}", encoded.err());
        }
    }

    #[test]
    fn whole_input_round_trips_in_every_format() {
        let b = batch(40_000, 10);
        let schema = b.schema();
        for format in [
            Format::Arrow,
            Format::Parquet,
            Format::Json,
            Format::Csv(CsvOptions::default()),
        ] {
            let (enc, out) = encode(
                &schema,
                std::slice::from_ref(&b),
                &format,
                Compression::None,
                None,
                Vec::new(),
            )
            .unwrap();
            assert_eq!(enc.rows, 40_000, "{format:?}");
            assert_eq!(enc.encoded_bytes, out.len() as u64, "{format:?}");
        }
        let (_, out) = encode(
            &schema,
            std::slice::from_ref(&b),
            &Format::Arrow,
            Compression::None,
            None,
            Vec::new(),
        )
        .unwrap();
        assert_eq!(read_arrow(&out), 40_000);
        let (_, json) = encode(
            &schema,
            std::slice::from_ref(&b),
            &Format::Json,
            Compression::None,
            None,
            Vec::new(),
        )
        .unwrap();
        let first = json.split(|c| *c == b'\n').next().unwrap();
        assert_eq!(first, br#"{"id":0,"s":"xxxxxxxxxx"}"#);
        // Parquet and CSV decode back to the very rows.
        let whole =
            |batches: Vec<RecordBatch>| arrow::compute::concat_batches(&schema, &batches).unwrap();
        let (_, parquet) = encode(
            &schema,
            std::slice::from_ref(&b),
            &Format::Parquet,
            Compression::None,
            None,
            Vec::new(),
        )
        .unwrap();
        let back: Vec<RecordBatch> =
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
                bytes::Bytes::from(parquet),
            )
            .unwrap()
            .build()
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
        assert_eq!(whole(back), b);
        let (_, csv) = encode(
            &schema,
            std::slice::from_ref(&b),
            &Format::Csv(CsvOptions::default()),
            Compression::None,
            None,
            Vec::new(),
        )
        .unwrap();
        let back: Vec<RecordBatch> = arrow::csv::ReaderBuilder::new(schema.clone())
            .with_header(false)
            .with_quote(b'"')
            .with_escape(b'\\')
            .build(&csv[..])
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
        assert_eq!(whole(back), b);
    }

    #[test]
    fn byte_limit_cuts_near_the_target_and_never_below_one_row() {
        let b = batch(10_000, 100);
        let schema = b.schema();
        let limits = Limits {
            max_rows: usize::MAX,
            max_bytes: 200_000,
        };
        let (enc, out) = encode(
            &schema,
            std::slice::from_ref(&b),
            &Format::Arrow,
            Compression::None,
            Some(limits),
            Vec::new(),
        )
        .unwrap();
        assert!(enc.rows > 1_000 && enc.rows < 2_000, "{enc:?}");
        assert!(out.len() as u64 <= 200_000 + 2_000, "{}", out.len());
        assert_eq!(read_arrow(&out), enc.rows as usize);
        // A single row wider than the budget still forms a load of its own.
        let wide = batch(3, 5_000);
        let (enc, _) = encode(
            &wide.schema(),
            std::slice::from_ref(&wide),
            &Format::Arrow,
            Compression::None,
            Some(Limits {
                max_rows: 10,
                max_bytes: 100,
            }),
            Vec::new(),
        )
        .unwrap();
        assert_eq!(enc.rows, 1);
    }

    #[test]
    fn row_limit_spans_batches() {
        let parts = vec![batch(300, 1), batch(300, 1)];
        let (enc, out) = encode(
            &parts[0].schema(),
            &parts,
            &Format::Arrow,
            Compression::None,
            Some(Limits {
                max_rows: 450,
                max_bytes: u64::MAX,
            }),
            Vec::new(),
        )
        .unwrap();
        assert_eq!(enc.rows, 450);
        assert_eq!(read_arrow(&out), 450);
        let taken = take_rows(&parts, 450);
        assert_eq!(taken.iter().map(|b| b.num_rows()).sum::<usize>(), 450);
    }

    #[test]
    fn compressed_text_decompresses_to_the_plain_encoding() {
        use std::io::Read;
        let b = batch(1_000, 5);
        let plain = encode(
            &b.schema(),
            std::slice::from_ref(&b),
            &Format::Json,
            Compression::None,
            None,
            Vec::new(),
        )
        .unwrap()
        .1;
        let gz = encode(
            &b.schema(),
            std::slice::from_ref(&b),
            &Format::Json,
            Compression::Gzip,
            None,
            Vec::new(),
        )
        .unwrap()
        .1;
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut back)
            .unwrap();
        assert_eq!(back, plain);
        let lz4 = encode(
            &b.schema(),
            std::slice::from_ref(&b),
            &Format::Json,
            Compression::Lz4,
            None,
            Vec::new(),
        )
        .unwrap()
        .1;
        let mut back = Vec::new();
        lz4_flex::frame::FrameDecoder::new(&lz4[..])
            .read_to_end(&mut back)
            .unwrap();
        assert_eq!(back, plain);
    }
}
