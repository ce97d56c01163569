//! MySQL packet framing and the packets the emulator writes by hand (OK, EOF, text rows);
//! handshake, handshake response, column definitions and errors come from `mysql_common`.

use mysql_common::constants::{ColumnFlags, ColumnType};
use mysql_common::packets::{Column, ErrPacket, ServerError, SqlState};
use mysql_common::proto::MySerialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

/// The largest payload of one packet; longer payloads continue in the next packet.
const MAX_PAYLOAD: usize = 0xFF_FFFF;

/// Doris's `SERVER_STATUS_AUTOCOMMIT` in OK and EOF packets.
pub const STATUS_AUTOCOMMIT: u16 = 0x0002;

/// A connection's packet reader and writer, with the sequence id.
pub struct PacketIo {
    reader: BufReader<OwnedReadHalf>,
    writer: BufWriter<OwnedWriteHalf>,
    seq: u8,
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
    /// Wraps the two halves of a TCP stream.
    pub fn new(reader: OwnedReadHalf, writer: OwnedWriteHalf) -> Self {
        Self {
            reader: BufReader::with_capacity(64 * 1024, reader),
            writer: BufWriter::with_capacity(64 * 1024, writer),
            seq: 0,
        }
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
        self.writer.write_all(&header).await?;
        self.writer.write_all(chunk).await
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
        let mut p = vec![0x00];
        lenenc_int(&mut p, affected_rows);
        lenenc_int(&mut p, 0);
        p.extend_from_slice(&STATUS_AUTOCOMMIT.to_le_bytes());
        p.extend_from_slice(&0u16.to_le_bytes());
        self.write(&p).await?;
        self.flush().await
    }

    /// Writes a classic EOF packet (Doris 2.x/3.x never negotiates DEPRECATE_EOF).
    pub async fn eof(&mut self) -> std::io::Result<()> {
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
        self.columns(columns).await?;
        for row in rows {
            self.row(row.iter().map(|c| c.as_deref().map(str::as_bytes)))
                .await?;
        }
        self.eof().await?;
        self.flush().await
    }

    /// Writes the column count, the column definitions and the EOF after them.
    pub async fn columns(&mut self, columns: &[ColumnDef]) -> std::io::Result<()> {
        let mut p = Vec::new();
        lenenc_int(&mut p, columns.len() as u64);
        self.write(&p).await?;
        for c in columns {
            let mut p = Vec::new();
            Column::new(c.column_type)
                .with_name(c.name.as_bytes())
                .with_org_name(c.name.as_bytes())
                .with_character_set(33)
                .with_column_length(c.length)
                .with_decimals(c.decimals)
                .with_flags(ColumnFlags::empty())
                .serialize(&mut p);
            self.write(&p).await?;
        }
        self.eof().await
    }

    /// Writes one text-protocol row.
    pub async fn row<'a>(
        &mut self,
        cells: impl Iterator<Item = Option<&'a [u8]>>,
    ) -> std::io::Result<()> {
        let mut p = Vec::new();
        for cell in cells {
            match cell {
                None => p.push(0xFB),
                Some(bytes) => {
                    lenenc_int(&mut p, bytes.len() as u64);
                    p.extend_from_slice(bytes);
                }
            }
        }
        self.write(&p).await
    }
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
