//! Server-side prepared statements (docs/emulator.md, "FE MySQL face"): COM_STMT_PREPARE,
//! COM_STMT_EXECUTE with binary result rows, COM_STMT_CLOSE and COM_STMT_RESET, in the
//! profile the configuration names ([`PrepareProfile`]).
//!
//! A prepared statement keeps its SQL text; EXECUTE decodes the binary parameters, writes
//! each one into the text as a SQL literal where its `?` stood, and runs the result on the
//! same engine as COM_QUERY, answering with binary rows. Commands Doris 2.x/3.x/4.0 does
//! not handle (COM_STMT_FETCH, COM_STMT_SEND_LONG_DATA) get its `Unsupported command(…)`
//! error; cursor flags on EXECUTE are ignored, so rows stream at once as Doris does.

use std::collections::HashMap;

use sqlparser::tokenizer::{Token, Word};

use super::Session;
use super::query::{self, Protocol};
use super::wire::{ColumnDef, PacketIo};
use crate::Shared;

/// Which Doris generation's COM_STMT_PREPARE the MySQL face speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrepareProfile {
    /// Doris 2.1.5 and later (3.x, 4.0): any statement can be prepared (server-side
    /// prepare is on by default), results come as binary rows.
    #[default]
    ServerSide,
    /// Doris 2.0 to 2.1.2: only high-concurrency point queries could be prepared. The
    /// emulator has no row store, so every COM_STMT_PREPARE is refused with Doris's text.
    PointQueryOnly,
}

impl std::str::FromStr for PrepareProfile {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "server-side" => Ok(Self::ServerSide),
            "point-query-only" => Ok(Self::PointQueryOnly),
            other => Err(format!(
                "unknown prepare profile {other:?} (server-side | point-query-only)"
            )),
        }
    }
}

/// Doris 2.0–2.1.2's refusal of a statement that is not a point query.
pub const POINT_QUERY_ONLY: &str =
    "errCode = 2, detailMessage = Only support prepare SelectStmt point query now";

/// One prepared statement.
#[derive(Debug, Clone)]
struct Statement {
    sql: String,
    params: usize,
    /// Parameter types of the last EXECUTE that sent them (`new_params_bound_flag`).
    types: Vec<u16>,
}

/// The prepared statements of one connection (ids count from 1, as Doris's do).
#[derive(Debug, Default)]
pub struct Statements {
    next_id: u32,
    by_id: HashMap<u32, Statement>,
}

/// COM_STMT_PREPARE: answers PREPARE_OK with the parameter and column definitions.
pub async fn prepare(
    shared: &Shared,
    session: &Session,
    statements: &mut Statements,
    sql: &str,
    io: &mut PacketIo,
) -> std::io::Result<()> {
    if shared.config.profile.prepare == PrepareProfile::PointQueryOnly {
        return io.error(1105, b"HY000", POINT_QUERY_ONLY).await;
    }
    let tokens = match crate::tokens::tokenize(sql) {
        Ok(t) => t,
        Err(e) => return io.error(1105, b"HY000", &analysis(e)).await,
    };
    if has_label(&tokens) {
        let message = analysis("Only support prepare InsertStmt without label now");
        return io.error(1105, b"HY000", &message).await;
    }
    let params = tokens
        .iter()
        .filter(|t| matches!(t, Token::Placeholder(p) if p == "?"))
        .count();
    // The result columns, found by planning the statement with every parameter NULL.
    let probe = bind(&tokens, &vec![null(); params]);
    let columns = match result_columns(shared, session, &probe).await {
        Ok(c) => c,
        Err((code, state, message)) => return io.error(code, state, &message).await,
    };
    statements.next_id = statements.next_id.wrapping_add(1).max(1);
    let id = statements.next_id;
    statements.by_id.insert(
        id,
        Statement {
            sql: sql.to_owned(),
            params,
            types: Vec::new(),
        },
    );
    io.prepare_ok(id, params, &columns).await
}

/// COM_STMT_EXECUTE: binds the parameters and runs the statement with binary rows.
pub async fn execute(
    shared: &std::sync::Arc<Shared>,
    session: &mut Session,
    statements: &mut Statements,
    body: &[u8],
    io: &mut PacketIo,
) -> std::io::Result<()> {
    let statement = body
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .and_then(|id| statements.by_id.get_mut(&id));
    let Some(statement) = statement else {
        return io
            .error(1047, b"08S01", "msg: Not supported such prepared statement")
            .await;
    };
    // stmt_id(4), flags(1: cursor type, ignored as Doris ignores it), iteration_count(4).
    let values = match decode_params(body.get(9..).unwrap_or_default(), statement) {
        Ok(v) => v,
        Err(e) => return io.error(1105, b"HY000", &analysis(e)).await,
    };
    let tokens = match crate::tokens::tokenize(&statement.sql) {
        Ok(t) => t,
        Err(e) => return io.error(1105, b"HY000", &analysis(e)).await,
    };
    let sql = bind(&tokens, &values);
    query::run(shared, session, &sql, Protocol::Binary, io).await
}

/// COM_STMT_CLOSE: forgets the statement (the protocol has no answer).
pub fn close(statements: &mut Statements, body: &[u8]) {
    if let Some(b) = body.get(..4) {
        statements
            .by_id
            .remove(&u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    }
}

/// COM_STMT_RESET: nothing is buffered per statement, so it only answers OK (or the
/// unknown-statement error).
pub async fn reset(statements: &Statements, body: &[u8], io: &mut PacketIo) -> std::io::Result<()> {
    let known = body.get(..4).is_some_and(|b| {
        statements
            .by_id
            .contains_key(&u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    });
    if known {
        io.ok(0).await
    } else {
        io.error(1047, b"08S01", "msg: Not supported such prepared statement")
            .await
    }
}

fn analysis(message: impl std::fmt::Display) -> String {
    format!("errCode = 2, detailMessage = {message}")
}

/// Whether an INSERT names a label (`INSERT INTO t WITH LABEL l …`), which Doris refuses to
/// prepare.
fn has_label(tokens: &[Token]) -> bool {
    let words: Vec<String> = tokens
        .iter()
        .filter_map(|t| match t {
            Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
            _ => None,
        })
        .collect();
    words.first().map(String::as_str) == Some("INSERT")
        && words.windows(2).any(|w| w[0] == "WITH" && w[1] == "LABEL")
}

/// The SQL text with the `?` placeholders replaced, in order, by `values`.
pub(crate) fn bind(tokens: &[Token], values: &[Token]) -> String {
    let mut next = values.iter();
    let bound: Vec<Token> = tokens
        .iter()
        .map(|t| match t {
            Token::Placeholder(p) if p == "?" => next.next().cloned().unwrap_or_else(null),
            other => other.clone(),
        })
        .collect();
    crate::tokens::render(&bound)
}

pub(crate) fn null() -> Token {
    Token::Word(Word {
        value: "NULL".into(),
        quote_style: None,
        keyword: sqlparser::keywords::Keyword::NULL,
    })
}

/// The columns a statement would return: planned by the SELECT engine when it reads
/// tables, asked of the FE's own statements otherwise.
async fn result_columns(
    shared: &Shared,
    session: &Session,
    sql: &str,
) -> Result<Vec<ColumnDef>, (u16, &'static [u8; 5], String)> {
    if query::runs_on_select_engine(sql) {
        #[cfg(feature = "sql")]
        return match super::select::plan(shared, session, sql.trim().trim_end_matches(';')).await {
            Ok(planned) => Ok(planned.columns().to_vec()),
            Err(e) => Err((e.code, e.state, e.message)),
        };
    }
    Ok(query::local_columns(shared, session, sql))
}

/// MySQL binary-protocol type codes of COM_STMT_EXECUTE parameters.
mod types {
    pub const DECIMAL: u8 = 0x00;
    pub const TINY: u8 = 0x01;
    pub const SHORT: u8 = 0x02;
    pub const LONG: u8 = 0x03;
    pub const FLOAT: u8 = 0x04;
    pub const DOUBLE: u8 = 0x05;
    pub const NULL: u8 = 0x06;
    pub const TIMESTAMP: u8 = 0x07;
    pub const LONGLONG: u8 = 0x08;
    pub const INT24: u8 = 0x09;
    pub const DATE: u8 = 0x0a;
    pub const TIME: u8 = 0x0b;
    pub const DATETIME: u8 = 0x0c;
    pub const YEAR: u8 = 0x0d;
    pub const NEWDECIMAL: u8 = 0xf6;
}

/// Decodes the parameters after `iteration_count`: the NULL bitmap, `new_params_bound_flag`,
/// the types when bound, then each value, as SQL literal tokens.
fn decode_params(mut buf: &[u8], statement: &mut Statement) -> Result<Vec<Token>, String> {
    let n = statement.params;
    if n == 0 {
        return Ok(Vec::new());
    }
    let bitmap = take(&mut buf, n.div_ceil(8))?.to_vec();
    let bound = take(&mut buf, 1)?[0];
    if bound == 1 {
        let raw = take(&mut buf, 2 * n)?;
        statement.types = raw
            .chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
    }
    if statement.types.len() != n {
        return Err("COM_STMT_EXECUTE without parameter types".into());
    }
    let mut values = Vec::with_capacity(n);
    for (i, &ty) in statement.types.iter().enumerate() {
        if bitmap[i / 8] & (1 << (i % 8)) != 0 {
            values.push(null());
            continue;
        }
        values.push(decode_value(&mut buf, ty)?);
    }
    Ok(values)
}

fn take<'a>(buf: &mut &'a [u8], n: usize) -> Result<&'a [u8], String> {
    if buf.len() < n {
        return Err("malformed COM_STMT_EXECUTE packet".into());
    }
    let (head, rest) = buf.split_at(n);
    *buf = rest;
    Ok(head)
}

fn lenenc(buf: &mut &[u8]) -> Result<u64, String> {
    let first = take(buf, 1)?[0];
    let width = match first {
        0xFC => 2,
        0xFD => 3,
        0xFE => 8,
        small => return Ok(u64::from(small)),
    };
    let bytes = take(buf, width)?;
    let mut v = [0u8; 8];
    v[..width].copy_from_slice(bytes);
    Ok(u64::from_le_bytes(v))
}

fn number(text: String) -> Token {
    Token::Number(text, false)
}

fn string(text: String) -> Token {
    Token::SingleQuotedString(text)
}

/// One parameter value of type `ty` (the high byte's 0x80 marks unsigned integers).
fn decode_value(buf: &mut &[u8], ty: u16) -> Result<Token, String> {
    let unsigned = ty & 0x8000 != 0;
    let int = |bytes: &[u8]| -> String {
        let mut v = [0u8; 8];
        v[..bytes.len()].copy_from_slice(bytes);
        let raw = u64::from_le_bytes(v);
        if unsigned {
            return raw.to_string();
        }
        let shift = 64 - 8 * bytes.len() as u32;
        (((raw << shift) as i64) >> shift).to_string()
    };
    Ok(match (ty & 0xFF) as u8 {
        types::NULL => null(),
        types::TINY => number(int(take(buf, 1)?)),
        types::SHORT | types::YEAR => number(int(take(buf, 2)?)),
        types::LONG | types::INT24 => number(int(take(buf, 4)?)),
        types::LONGLONG => number(int(take(buf, 8)?)),
        types::FLOAT => {
            let b = take(buf, 4)?;
            finite(f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])))?
        }
        types::DOUBLE => {
            let b = take(buf, 8)?;
            let mut v = [0u8; 8];
            v.copy_from_slice(b);
            finite(f64::from_le_bytes(v))?
        }
        types::DATE | types::DATETIME | types::TIMESTAMP => {
            let len = usize::from(take(buf, 1)?[0]);
            let b = take(buf, len)?;
            let at = |i: usize| b.get(i).copied().unwrap_or(0);
            let year = if len >= 2 {
                u16::from_le_bytes([b[0], b[1]])
            } else {
                0
            };
            let mut text = format!("{year:04}-{:02}-{:02}", at(2), at(3));
            if (ty & 0xFF) as u8 != types::DATE || len > 4 {
                text.push_str(&format!(" {:02}:{:02}:{:02}", at(4), at(5), at(6)));
                if len >= 11 {
                    let micros = u32::from_le_bytes([b[7], b[8], b[9], b[10]]);
                    text.push_str(&format!(".{micros:06}"));
                }
            }
            string(text)
        }
        types::TIME => {
            let len = usize::from(take(buf, 1)?[0]);
            let b = take(buf, len)?;
            let at = |i: usize| b.get(i).copied().unwrap_or(0);
            let days = if len >= 5 {
                u32::from_le_bytes([b[1], b[2], b[3], b[4]])
            } else {
                0
            };
            let sign = if at(0) == 1 { "-" } else { "" };
            let mut text = format!(
                "{sign}{:02}:{:02}:{:02}",
                days * 24 + u32::from(at(5)),
                at(6),
                at(7)
            );
            if len >= 12 {
                let micros = u32::from_le_bytes([b[8], b[9], b[10], b[11]]);
                text.push_str(&format!(".{micros:06}"));
            }
            string(text)
        }
        other => {
            let len = usize::try_from(lenenc(buf)?).map_err(|_| "parameter too long")?;
            let bytes = take(buf, len)?;
            let text = String::from_utf8(bytes.to_vec())
                .map_err(|_| "binary (non-UTF-8) parameters are not supported".to_string())?;
            if matches!(other, types::DECIMAL | types::NEWDECIMAL) && text.parse::<f64>().is_ok() {
                number(text)
            } else {
                string(text)
            }
        }
    })
}

fn finite(v: f64) -> Result<Token, String> {
    if v.is_finite() {
        Ok(number(format!("{v:?}")))
    } else {
        Err(format!("parameter {v} is not a finite number"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn statement(sql: &str, params: usize) -> Statement {
        Statement {
            sql: sql.into(),
            params,
            types: Vec::new(),
        }
    }

    #[test]
    fn parameters_become_literals_in_place_of_placeholders() {
        let tokens =
            crate::tokens::tokenize("SELECT * FROM t WHERE a = ? AND b = '?' AND c IN (?)")
                .unwrap();
        let sql = bind(&tokens, &[number("-5".into()), string("it's".into())]);
        assert_eq!(
            sql,
            "SELECT * FROM t WHERE a = -5 AND b = '?' AND c IN ('it\\'s')"
        );
    }

    #[test]
    fn binary_parameters_decode_by_type_and_null_bitmap() {
        let mut s = statement("?", 5);
        let mut body = vec![0b0000_0100, 1];
        for ty in [0x08u16, 0x8001, 0x06, 0xfd, 0x0c] {
            body.extend_from_slice(&ty.to_le_bytes());
        }
        body.extend_from_slice(&(-7i64).to_le_bytes());
        body.push(200); // unsigned TINY
        body.extend_from_slice(&[3, b'a', b'\'', b'b']);
        body.extend_from_slice(&[11, 0xE9, 0x07, 1, 2, 3, 4, 5, 0x40, 0xE2, 0x01, 0x00]);
        let values = decode_params(&body, &mut s).unwrap();
        assert_eq!(
            values,
            vec![
                number("-7".into()),
                number("200".into()),
                null(),
                string("a'b".into()),
                string("2025-01-02 03:04:05.123456".into()),
            ]
        );
        // A later EXECUTE may leave the types out: the last ones stay in force.
        let mut again = vec![0b0001_1110, 0];
        again.extend_from_slice(&1i64.to_le_bytes());
        let values = decode_params(&again, &mut s).unwrap();
        assert_eq!(values[0], number("1".into()));
        assert!(values[1..].iter().all(|v| *v == null()));
    }

    #[test]
    fn truncated_parameters_are_an_error_not_a_panic() {
        let mut s = statement("?", 1);
        let body = [0u8, 1, 0x08, 0, 1, 2];
        assert!(decode_params(&body, &mut s).is_err());
    }

    #[test]
    fn labelled_inserts_are_recognised() {
        let t = crate::tokens::tokenize("INSERT INTO t WITH LABEL l1 VALUES (?)").unwrap();
        assert!(has_label(&t));
        let t = crate::tokens::tokenize("INSERT INTO t VALUES ('WITH LABEL')").unwrap();
        assert!(!has_label(&t));
    }
}
