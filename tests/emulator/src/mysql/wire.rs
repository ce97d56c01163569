//! MySQL packet framing and the packets the emulator writes by hand (OK, EOF, text rows);
//! handshake, handshake response, column definitions and errors come from `mysql_common`.

use mysql_common::constants::{ColumnFlags, ColumnType};
use mysql_common::packets::{Column, ErrPacket, ServerError, SqlState};
use mysql_common::proto::MySerialize;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};

/// The largest payload of one packet; longer payloads continue in the next packet.
pub const MAX_PAYLOAD: usize = 0xFF_FFFF;

/// Doris's `SERVER_STATUS_AUTOCOMMIT` in OK and EOF packets.
pub const STATUS_AUTOCOMMIT: u16 = 0x0002;

/// A connection's packet reader and writer, with the sequence id.
pub struct PacketIo {
    reader: BufReader<Box<dyn AsyncRead + Send + Unpin>>,
    writer: BufWriter<Box<dyn AsyncWrite + Send + Unpin>>,
    seq: u8,
    deprecate_eof: bool,
    written: u64,
}

/// One result column: its name and the Doris wire description.
#[derive(Debug, Clone)]
pub struct ColumnDef {
    /// Column name.
    pub name: String,
    /// MySQL type code.
    pub column_type: ColumnType,
    /// Column length.
    pub length: u32,
    /// Decimals (scale for DECIMAL, precision for DATETIME, 31 for FLOAT/DOUBLE).
    pub decimals: u8,
}

impl ColumnDef {
    /// A text column as Doris sends for SHOW results (STRING, length 255).
    pub fn text(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            column_type: ColumnType::MYSQL_TYPE_STRING,
            length: 255,
            decimals: 0,
        }
    }
}

impl PacketIo {
    /// Wraps the two halves of a stream (TCP, or TLS after an SSLRequest).
    pub fn new(
        reader: impl AsyncRead + Send + Unpin + 'static,
        writer: impl AsyncWrite + Send + Unpin + 'static,
    ) -> Self {
        Self {
            reader: BufReader::with_capacity(64 * 1024, Box::new(reader)),
            writer: BufWriter::with_capacity(64 * 1024, Box::new(writer)),
            seq: 0,
            deprecate_eof: false,
            written: 0,
        }
    }

    /// Continues a packet exchange begun on another stream (the sequence id after the
    /// client's SSLRequest).
    pub fn set_seq(&mut self, seq: u8) {
        self.seq = seq;
    }

    /// Reads one logical packet (joining continuations); `None` at end of stream.
    pub async fn read(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        let mut payload = Vec::new();
        loop {
            let mut header = [0u8; 4];
            match self.reader.read_exact(&mut header).await {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && payload.is_empty() => {
                    return Ok(None);
                }
                Err(e) => return Err(e),
            }
            let len =
                usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
            self.seq = header[3].wrapping_add(1);
            let start = payload.len();
            payload.resize(start + len, 0);
            self.reader.read_exact(&mut payload[start..]).await?;
            if len < MAX_PAYLOAD {
                return Ok(Some(payload));
            }
        }
    }

    /// Writes one logical packet (splitting it when longer than a packet can hold).
    pub async fn write(&mut self, payload: &[u8]) -> std::io::Result<()> {
        let mut chunks = payload.chunks(MAX_PAYLOAD).peekable();
        if payload.is_empty() {
            return self.write_one(&[]).await;
        }
        while let Some(chunk) = chunks.next() {
            self.write_one(chunk).await?;
            if chunks.peek().is_none() && chunk.len() == MAX_PAYLOAD {
                self.write_one(&[]).await?;
            }
        }
        Ok(())
    }

    async fn write_one(&mut self, chunk: &[u8]) -> std::io::Result<()> {
        let len = chunk.len();
        let header = [len as u8, (len >> 8) as u8, (len >> 16) as u8, self.seq];
        self.seq = self.seq.wrapping_add(1);
        self.written += 4 + len as u64;
        self.writer.write_all(&header).await?;
        self.writer.write_all(chunk).await
    }

    /// Bytes written to the connection so far (headers included).
    pub fn bytes_written(&self) -> u64 {
        self.written
    }

    /// The sequence id for a packet framed by the caller (see [`PacketIo::write_framed`]).
    pub fn next_seq(&mut self) -> u8 {
        let seq = self.seq;
        self.seq = self.seq.wrapping_add(1);
        seq
    }

    /// Writes packets the caller framed itself (headers with ids from
    /// [`PacketIo::next_seq`]), so a batch of rows goes out in one write.
    pub async fn write_framed(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.written += bytes.len() as u64;
        self.writer.write_all(bytes).await
    }

    /// Sends everything buffered.
    pub async fn flush(&mut self) -> std::io::Result<()> {
        self.writer.flush().await
    }

    /// Starts a new command exchange (the server's first packet has sequence 0).
    pub fn reset_seq(&mut self) {
        self.seq = 0;
    }

    /// Writes an OK packet.
    pub async fn ok(&mut self, affected_rows: u64) -> std::io::Result<()> {
        self.write(&ok_payload(0x00, affected_rows)).await?;
        self.flush().await
    }

    /// Writes an OK packet with an info text, as Doris answers INSERT, BEGIN, COMMIT and
    /// ROLLBACK (`{'label':'…', 'status':'VISIBLE', 'txnId':'…'}`): a length-encoded
    /// string after the warnings, as Doris's `MysqlOkPacket` and MySQL's `net_send_ok`
    /// write it (libmariadb reads it so).
    pub async fn ok_with_info(&mut self, affected_rows: u64, info: &str) -> std::io::Result<()> {
        let mut p = ok_payload(0x00, affected_rows);
        lenenc_int(&mut p, info.len() as u64);
        p.extend_from_slice(info.as_bytes());
        self.write(&p).await?;
        self.flush().await
    }

    /// Both sides agreed on CLIENT_DEPRECATE_EOF (only offered with the switch that selects
    /// Doris master's behaviour): result sets end with an OK packet (header 0xFE) and no EOF
    /// follows the column definitions.
    pub fn set_deprecate_eof(&mut self, on: bool) {
        self.deprecate_eof = on;
    }

    /// Ends column (or PREPARE_OK parameter) definitions: a classic EOF, or nothing under
    /// DEPRECATE_EOF (as Doris master's `MysqlProtocolAdapter` sends them).
    async fn end_of_columns(&mut self) -> std::io::Result<()> {
        if self.deprecate_eof {
            return Ok(());
        }
        self.eof().await
    }

    /// Ends a result set's rows: a classic EOF, or an OK packet with the 0xFE header under
    /// DEPRECATE_EOF.
    pub async fn end_of_rows(&mut self) -> std::io::Result<()> {
        if !self.deprecate_eof {
            return self.eof().await;
        }
        self.write(&ok_payload(0xFE, 0)).await
    }

    /// Writes a classic EOF packet (Doris 2.x/3.x never negotiates DEPRECATE_EOF).
    async fn eof(&mut self) -> std::io::Result<()> {
        let mut p = vec![0xFE];
        p.extend_from_slice(&0u16.to_le_bytes());
        p.extend_from_slice(&STATUS_AUTOCOMMIT.to_le_bytes());
        self.write(&p).await
    }

    /// Writes an ERR packet.
    pub async fn error(
        &mut self,
        code: u16,
        state: &[u8; 5],
        message: &str,
    ) -> std::io::Result<()> {
        let mut p = Vec::new();
        ErrPacket::Error(ServerError::new(
            code,
            Some(SqlState::new(*state)),
            message.as_bytes(),
        ))
        .serialize(&mut p);
        self.write(&p).await?;
        self.flush().await
    }

    /// Writes a whole text result set: column count, definitions, EOF, rows, EOF.
    pub async fn result_set(
        &mut self,
        columns: &[ColumnDef],
        rows: &[Vec<Option<String>>],
    ) -> std::io::Result<()> {
        self.whole_result_set(columns, rows, false).await
    }

    /// Writes a whole binary-protocol result set (the answer to COM_STMT_EXECUTE).
    pub async fn binary_result_set(
        &mut self,
        columns: &[ColumnDef],
        rows: &[Vec<Option<String>>],
    ) -> std::io::Result<()> {
        self.whole_result_set(columns, rows, true).await
    }

    async fn whole_result_set(
        &mut self,
        columns: &[ColumnDef],
        rows: &[Vec<Option<String>>],
        binary: bool,
    ) -> std::io::Result<()> {
        self.columns(columns).await?;
        let mut packet = Vec::new();
        for row in rows {
            let cells = row.iter().map(|c| c.as_deref().map(str::as_bytes));
            if binary {
                binary_row(columns, cells, &mut packet);
            } else {
                text_row(cells, &mut packet);
            }
            self.write(&packet).await?;
        }
        self.end_of_rows().await?;
        self.flush().await
    }

    /// Writes COM_STMT_PREPARE's answer as Doris's `sendStmtPrepareOK` does: status,
    /// statement id, column and parameter counts, a filler byte, then, only when there are
    /// parameters or columns, the warning count and a `metadata_follows` byte (so a
    /// statement with neither gets the short 10-byte packet); then one STRING definition
    /// per parameter named `$n` and an EOF, then the column definitions and an EOF.
    pub async fn prepare_ok(
        &mut self,
        statement_id: u32,
        params: usize,
        columns: &[ColumnDef],
    ) -> std::io::Result<()> {
        let mut p = vec![0x00];
        p.extend_from_slice(&statement_id.to_le_bytes());
        p.extend_from_slice(&(columns.len() as u16).to_le_bytes());
        p.extend_from_slice(&(params as u16).to_le_bytes());
        p.push(0);
        if params > 0 || !columns.is_empty() {
            p.extend_from_slice(&0u16.to_le_bytes());
            p.push(1);
        }
        self.write(&p).await?;
        if params > 0 {
            for i in 0..params {
                self.column(&ColumnDef::text(&format!("${}", i + 1)))
                    .await?;
            }
            self.end_of_columns().await?;
        }
        if !columns.is_empty() {
            for c in columns {
                self.column(c).await?;
            }
            self.end_of_columns().await?;
        }
        self.flush().await
    }

    /// Writes the column count, the column definitions and the EOF after them.
    pub async fn columns(&mut self, columns: &[ColumnDef]) -> std::io::Result<()> {
        let mut p = Vec::new();
        lenenc_int(&mut p, columns.len() as u64);
        self.write(&p).await?;
        for c in columns {
            self.column(c).await?;
        }
        self.end_of_columns().await
    }

    /// Writes one column definition.
    async fn column(&mut self, c: &ColumnDef) -> std::io::Result<()> {
        let mut p = Vec::new();
        Column::new(c.column_type)
            .with_name(c.name.as_bytes())
            .with_org_name(c.name.as_bytes())
            .with_character_set(33)
            .with_column_length(c.length)
            .with_decimals(c.decimals)
            .with_flags(ColumnFlags::empty())
            .serialize(&mut p);
        self.write(&p).await
    }
}

/// A text-protocol row: each cell length-encoded, NULL as 0xFB.
fn text_row<'a>(cells: impl Iterator<Item = Option<&'a [u8]>>, out: &mut Vec<u8>) {
    out.clear();
    for cell in cells {
        match cell {
            None => out.push(0xFB),
            Some(bytes) => {
                lenenc_int(out, bytes.len() as u64);
                out.extend_from_slice(bytes);
            }
        }
    }
}

/// An OK packet's payload with `header` (0x00, or 0xFE where it ends a result set under
/// DEPRECATE_EOF).
fn ok_payload(header: u8, affected_rows: u64) -> Vec<u8> {
    let mut p = vec![header];
    lenenc_int(&mut p, affected_rows);
    lenenc_int(&mut p, 0);
    p.extend_from_slice(&STATUS_AUTOCOMMIT.to_le_bytes());
    p.extend_from_slice(&0u16.to_le_bytes());
    p
}

/// Appends a length-encoded integer.
pub fn lenenc_int(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=250 => out.push(v as u8),
        251..=0xFFFF => {
            out.push(0xFC);
            out.extend_from_slice(&(v as u16).to_le_bytes());
        }
        0x1_0000..=0xFF_FFFF => {
            out.push(0xFD);
            out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xFE);
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// Appends one non-NULL value of a binary-protocol row (COM_STMT_EXECUTE results), from its
/// text form, as the column's wire type asks: integers and floats little-endian in their
/// width, DATE/DATETIME/TIME as the length-prefixed date structure (length 0 for the zero
/// date), everything else (DECIMAL, strings, LARGEINT, complex types) as a length-encoded
/// string, like Doris's FE result sender and the BE's binary `MysqlRowBuffer`.
pub fn binary_cell(column_type: ColumnType, text: &[u8], out: &mut Vec<u8>) {
    use ColumnType as C;
    let s = std::str::from_utf8(text).unwrap_or_default();
    let int = || s.parse::<i128>().ok();
    match column_type {
        C::MYSQL_TYPE_TINY => {
            if let Some(v) = int() {
                return out.push(v as i8 as u8);
            }
        }
        C::MYSQL_TYPE_SHORT | C::MYSQL_TYPE_YEAR => {
            if let Some(v) = int() {
                return out.extend_from_slice(&(v as i16).to_le_bytes());
            }
        }
        C::MYSQL_TYPE_LONG | C::MYSQL_TYPE_INT24 => {
            if let Some(v) = int() {
                return out.extend_from_slice(&(v as i32).to_le_bytes());
            }
        }
        C::MYSQL_TYPE_LONGLONG => {
            if let Some(v) = int() {
                return out.extend_from_slice(&(v as i64).to_le_bytes());
            }
        }
        C::MYSQL_TYPE_FLOAT => {
            if let Ok(v) = s.parse::<f32>() {
                return out.extend_from_slice(&v.to_le_bytes());
            }
        }
        C::MYSQL_TYPE_DOUBLE => {
            if let Ok(v) = s.parse::<f64>() {
                return out.extend_from_slice(&v.to_le_bytes());
            }
        }
        C::MYSQL_TYPE_DATE | C::MYSQL_TYPE_DATETIME | C::MYSQL_TYPE_TIMESTAMP => {
            if let Some(parts) = date_parts(s) {
                return push_date(parts, column_type == C::MYSQL_TYPE_DATE, out);
            }
        }
        C::MYSQL_TYPE_TIME => {
            if let Some(parts) = time_parts(s) {
                return push_time(parts, out);
            }
        }
        _ => {}
    }
    lenenc_int(out, text.len() as u64);
    out.extend_from_slice(text);
}

/// `(year, month, day, hour, minute, second, microsecond)` of `YYYY-MM-DD[ HH:MM:SS[.f…]]`.
type DateParts = (u16, u8, u8, u8, u8, u8, u32);

fn date_parts(s: &str) -> Option<DateParts> {
    let (date, time) = s.split_once(' ').unwrap_or((s, ""));
    let mut d = date.splitn(3, '-');
    let year = d.next()?.parse().ok()?;
    let month = d.next()?.parse().ok()?;
    let day = d.next()?.parse().ok()?;
    let (h, m, sec, micros) = if time.is_empty() {
        (0, 0, 0, 0)
    } else {
        let (h, m, sec, micros) = clock_parts(time)?;
        (u8::try_from(h).ok()?, m, sec, micros)
    };
    Some((year, month, day, h, m, sec, micros))
}

/// `HH:MM:SS[.f…]` → hours (unbounded, as TIME allows), minutes, seconds, microseconds.
fn clock_parts(s: &str) -> Option<(u32, u8, u8, u32)> {
    let (hms, frac) = s.split_once('.').unwrap_or((s, ""));
    let mut p = hms.splitn(3, ':');
    let h = p.next()?.parse().ok()?;
    let m = p.next()?.parse().ok()?;
    let sec = p.next()?.parse().ok()?;
    let micros = if frac.is_empty() {
        0
    } else {
        let digits: String = frac.chars().chain(std::iter::repeat('0')).take(6).collect();
        digits.parse().ok()?
    };
    Some((h, m, sec, micros))
}

fn push_date((y, mo, d, h, mi, s, us): DateParts, date_only: bool, out: &mut Vec<u8>) {
    if (y, mo, d, h, mi, s, us) == (0, 0, 0, 0, 0, 0, 0) {
        return out.push(0);
    }
    let length = if date_only {
        4
    } else if us != 0 {
        11
    } else {
        7
    };
    out.push(length);
    out.extend_from_slice(&y.to_le_bytes());
    out.extend_from_slice(&[mo, d]);
    if length >= 7 {
        out.extend_from_slice(&[h, mi, s]);
    }
    if length == 11 {
        out.extend_from_slice(&us.to_le_bytes());
    }
}

/// `(negative, hours, minutes, seconds, microseconds)` of `[-]H…:MM:SS[.f…]`.
fn time_parts(s: &str) -> Option<(bool, u32, u8, u8, u32)> {
    let (negative, rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (h, m, sec, us) = clock_parts(rest)?;
    Some((negative, h, m, sec, us))
}

fn push_time((negative, h, m, s, us): (bool, u32, u8, u8, u32), out: &mut Vec<u8>) {
    if (h, m, s, us) == (0, 0, 0, 0) {
        return out.push(0);
    }
    out.push(if us != 0 { 12 } else { 8 });
    out.push(u8::from(negative));
    out.extend_from_slice(&(h / 24).to_le_bytes());
    out.extend_from_slice(&[(h % 24) as u8, m, s]);
    if us != 0 {
        out.extend_from_slice(&us.to_le_bytes());
    }
}

/// A binary-protocol row: the 0x00 header, the NULL bitmap (offset 2) and the values.
pub fn binary_row<'a>(
    columns: &[ColumnDef],
    cells: impl Iterator<Item = Option<&'a [u8]>>,
    out: &mut Vec<u8>,
) {
    out.clear();
    out.push(0x00);
    let bitmap_at = out.len();
    out.resize(bitmap_at + (columns.len() + 7 + 2) / 8, 0);
    for (i, (cell, column)) in cells.zip(columns).enumerate() {
        match cell {
            None => out[bitmap_at + (i + 2) / 8] |= 1 << ((i + 2) % 8),
            Some(text) => binary_cell(column.column_type, text, out),
        }
    }
}
