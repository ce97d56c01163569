//! The MySQL link's packet cap against a hostile server: a row larger than the link's
//! `max_packet_bytes` (in one part, or in the parts of a multi-part packet, which sqlx
//! would join without limit) ends the read with an error naming the cap, and the rows
//! under it are read as they are.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use arrow::array::Array as _;
use arrow_schema::{DataType, Field, Schema};
use doris_read::{BatchLimits, MySqlEndpoint, ReadError, SslMode};
use futures::TryStreamExt as _;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// A greeting with any protocol byte, capabilities and plugin.
pub(crate) fn hostile_greeting(protocol: u8, capabilities: u32, plugin: &str) -> Vec<u8> {
    let mut p = vec![protocol];
    p.extend_from_slice(b"5.7.99\0");
    p.extend_from_slice(&9u32.to_le_bytes());
    p.extend_from_slice(b"abcdefgh\0");
    p.extend_from_slice(&(capabilities as u16).to_le_bytes());
    p.push(33);
    p.extend_from_slice(&2u16.to_le_bytes());
    p.extend_from_slice(&((capabilities >> 16) as u16).to_le_bytes());
    p.push(21);
    p.extend_from_slice(&[0; 10]);
    p.extend_from_slice(b"ijklmnopqrst\0");
    p.extend_from_slice(plugin.as_bytes());
    p.push(0);
    p
}

/// CLIENT_PROTOCOL_41 | CLIENT_TRANSACTIONS | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH.
const CAPABILITIES: u32 = 0x200 | 0x2000 | 0x8000 | 0x80000;
/// The largest length of one part of a packet.
const FULL_PART: usize = 0xFF_FFFF;

/// Writes `payload` as one packet, split into parts as MySQL frames a large one.
async fn write_packet(socket: &mut TcpStream, seq: &mut u8, payload: &[u8]) -> std::io::Result<()> {
    let mut rest = payload;
    loop {
        let part = rest.len().min(FULL_PART);
        let mut header = (part as u32).to_le_bytes();
        header[3] = *seq;
        *seq = seq.wrapping_add(1);
        socket.write_all(&header).await?;
        socket.write_all(&rest[..part]).await?;
        rest = &rest[part..];
        if part < FULL_PART {
            return Ok(());
        }
    }
}

/// Reads one packet (one part: the client's are small).
async fn read_packet(socket: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut header = [0u8; 4];
    socket.read_exact(&mut header).await?;
    let len = usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
    let mut payload = vec![0u8; len];
    socket.read_exact(&mut payload).await?;
    Ok(payload)
}

/// A length-encoded string.
fn lenenc(bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![0xFE];
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
    out
}

/// One column `v` (VAR_STRING) definition.
fn column_definition() -> Vec<u8> {
    let mut p = Vec::new();
    for text in ["def", "", "", "", "v", "v"] {
        p.push(text.len() as u8);
        p.extend_from_slice(text.as_bytes());
    }
    p.push(0x0C);
    p.extend_from_slice(&33u16.to_le_bytes());
    p.extend_from_slice(&u32::MAX.to_le_bytes());
    p.push(0xFD);
    p.extend_from_slice(&0u16.to_le_bytes());
    p.push(0);
    p.extend_from_slice(&[0, 0]);
    p
}

/// Serves one connection: authenticates anyone, answers `SET` with OK and any other query
/// with one row per size in `rows`, each a text value of that many bytes. Returns how many
/// bytes of rows it managed to send.
async fn server(listener: TcpListener, rows: Vec<usize>) -> usize {
    let ok = [0u8, 0, 0, 2, 0, 0, 0];
    let eof = [0xFEu8, 0, 0, 2, 0];
    let (mut socket, _) = listener.accept().await.unwrap();
    let mut seq = 0;
    let greeting = hostile_greeting(10, CAPABILITIES, "mysql_native_password");
    write_packet(&mut socket, &mut seq, &greeting)
        .await
        .unwrap();
    read_packet(&mut socket).await.unwrap();
    seq = 2;
    write_packet(&mut socket, &mut seq, &ok).await.unwrap();
    let mut sent = 0;
    loop {
        let Ok(command) = read_packet(&mut socket).await else {
            return sent;
        };
        let mut seq = 1;
        if command.first() != Some(&0x03) || command[1..].starts_with(b"SET") {
            if write_packet(&mut socket, &mut seq, &ok).await.is_err() {
                return sent;
            }
            continue;
        }
        let answer = async {
            write_packet(&mut socket, &mut seq, &[1]).await?;
            write_packet(&mut socket, &mut seq, &column_definition()).await?;
            write_packet(&mut socket, &mut seq, &eof).await?;
            for &size in &rows {
                write_packet(&mut socket, &mut seq, &lenenc(&vec![b'x'; size])).await?;
                sent += size;
            }
            write_packet(&mut socket, &mut seq, &eof).await
        };
        if answer.await.is_err() {
            return sent;
        }
    }
}

/// Reads `SELECT v` from a server sending `rows` through a link capped at `cap` bytes.
async fn read(cap: usize, rows: Vec<usize>) -> (Result<Vec<usize>, ReadError>, usize) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let served = tokio::spawn(server(listener, rows));
    let mut endpoint = MySqlEndpoint::new("127.0.0.1", port, "bob", "");
    endpoint.ssl_mode = SslMode::Disabled;
    endpoint.time_zone = None;
    endpoint.connect_timeout = Duration::from_secs(5);
    endpoint.max_packet_bytes = cap;
    let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Utf8, true)]));
    let outcome = async {
        let stream =
            crate::query(&endpoint, "SELECT v".into(), schema, BatchLimits::default()).await?;
        let batches: Vec<_> = stream.try_collect().await?;
        Ok(batches
            .iter()
            .flat_map(|b| {
                let values = b
                    .column(0)
                    .as_any()
                    .downcast_ref::<arrow::array::StringArray>()
                    .unwrap();
                (0..values.len())
                    .map(|i| values.value(i).len())
                    .collect::<Vec<_>>()
            })
            .collect())
    }
    .await;
    let sent = tokio::time::timeout(Duration::from_secs(20), served)
        .await
        .unwrap()
        .unwrap();
    (outcome, sent)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_packet_over_the_cap_ends_the_read_naming_the_cap() {
    const MIB: usize = 1 << 20;
    // Under the cap, in one part and in the parts of a multi-part packet: read whole.
    let (rows, _) = read(40 * MIB, vec![10, MIB, 2 * FULL_PART + 5]).await;
    assert_eq!(rows.unwrap(), vec![10, MIB, 2 * FULL_PART + 5]);
    // Over it: a one-part packet, and a multi-part packet whose first part fits (each far
    // larger than the sockets' buffers, so the server cannot finish sending it once the
    // link is closed).
    for (cap, rows) in [
        (MIB, vec![10, 64 * MIB, 10]),
        (20 * MIB, vec![10, 5 * FULL_PART, 10]),
    ] {
        let big = rows[1];
        let (outcome, sent) = read(cap, rows).await;
        let err = outcome.unwrap_err();
        assert!(matches!(err, ReadError::Transport(_)), "{err}");
        let text = err.to_string();
        assert!(
            text.contains(&format!("cap of {cap}")) && text.contains("max_allowed_packet"),
            "{text}"
        );
        // The server could not send the whole row: the link closed under it.
        assert!(sent < 10 + big, "the server sent {sent} bytes of rows");
    }
    // A cap outside its bounds is refused before connecting.
    let endpoint = {
        let mut e = MySqlEndpoint::new("127.0.0.1", 9, "bob", "");
        e.max_packet_bytes = 10;
        e
    };
    let err = ReadError::from(endpoint.connect().await.unwrap_err());
    assert!(matches!(err, ReadError::Config(_)), "{err}");
    assert!(err.to_string().contains("max_allowed_packet"), "{err}");
}
