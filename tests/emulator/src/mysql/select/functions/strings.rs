//! Doris's string functions, where DataFusion has none or answers differently.
//!
//! Positions and lengths count characters (UTF-8 code points), except `length`, which
//! counts bytes, as Doris does. Each rule below is checked by a case of
//! `tests/emulator/corpus/function_strings.txt` (Doris's own `.out` results).

use base64::Engine as _;

use super::row_fn::{Kind, Out, RowFn, Value};

const TEXT: &[Kind] = &[Kind::Text];
const TEXT_INT: &[Kind] = &[Kind::Text, Kind::Int];
const TEXT_TEXT_INT: &[Kind] = &[Kind::Text, Kind::Text, Kind::Int];
const TEXT_INT_TEXT: &[Kind] = &[Kind::Text, Kind::Int, Kind::Text];
const TEXT_INT_INT: &[Kind] = &[Kind::Text, Kind::Int, Kind::Int];
const INT_TEXT: &[Kind] = &[Kind::Int, Kind::Text];

/// The string functions the emulator defines.
pub fn all() -> Vec<RowFn> {
    vec![
        RowFn::new("concat", &[1, usize::MAX], TEXT, Out::Text, concat),
        RowFn::new("length", &[1], TEXT, Out::Int32, length),
        RowFn::new("char_length", &[1], TEXT, Out::Int32, char_length)
            .aliases(&["character_length"]),
        RowFn::new("lower", &[1], TEXT, Out::Text, lower).aliases(&["lcase"]),
        RowFn::new("upper", &[1], TEXT, Out::Text, upper).aliases(&["ucase"]),
        RowFn::new("ascii", &[1], TEXT, Out::Int32, ascii),
        RowFn::new("left", &[2], TEXT_INT, Out::Text, left).aliases(&["strleft"]),
        RowFn::new("right", &[2], TEXT_INT, Out::Text, right).aliases(&["strright"]),
        RowFn::new("substr", &[2, 3], TEXT_INT_INT, Out::Text, substring)
            .aliases(&["substring", "mid"]),
        RowFn::new("locate", &[2, 3], TEXT_TEXT_INT, Out::Int32, locate),
        RowFn::new("instr", &[2], TEXT, Out::Int32, instr),
        RowFn::new("lpad", &[3], TEXT_INT_TEXT, Out::Text, lpad),
        RowFn::new("rpad", &[3], TEXT_INT_TEXT, Out::Text, rpad),
        RowFn::new("repeat", &[2], TEXT_INT, Out::Text, repeat),
        RowFn::new("replace", &[3], TEXT, Out::Text, replace),
        RowFn::new("to_base64", &[1], TEXT, Out::Text, to_base64),
        RowFn::new("from_base64", &[1], TEXT, Out::Text, from_base64),
        RowFn::new("hex", &[1], &[Kind::IntOrText], Out::Text, hex),
        RowFn::new("unhex", &[1], TEXT, Out::Text, unhex),
        RowFn::new("elt", &[2, usize::MAX], INT_TEXT, Out::Text, elt).sees_nulls(),
        RowFn::new("null_or_empty", &[1], TEXT, Out::Bool, null_or_empty).sees_nulls(),
        RowFn::new(
            "not_null_or_empty",
            &[1],
            TEXT,
            Out::Bool,
            not_null_or_empty,
        )
        .sees_nulls(),
        RowFn::new(
            "append_trailing_char_if_absent",
            &[2],
            TEXT,
            Out::Text,
            append_trailing_char_if_absent,
        ),
    ]
}

type Answer = Result<Value, String>;

fn text(v: &Value) -> Result<&str, String> {
    v.text().ok_or_else(|| "expected a string".to_owned())
}

fn int(v: &Value) -> Result<i64, String> {
    v.int().ok_or_else(|| "expected an integer".to_owned())
}

fn count(n: usize) -> Value {
    Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

fn chars(s: &str) -> Vec<char> {
    s.chars().collect()
}

/// NULL as soon as one argument is NULL (unlike DataFusion's `concat`, which skips them).
fn concat(args: &[Value]) -> Answer {
    let mut out = String::new();
    for a in args {
        out.push_str(text(a)?);
    }
    Ok(Value::Text(out))
}

/// Bytes, not characters.
fn length(args: &[Value]) -> Answer {
    Ok(count(text(&args[0])?.len()))
}

fn char_length(args: &[Value]) -> Answer {
    Ok(count(text(&args[0])?.chars().count()))
}

fn lower(args: &[Value]) -> Answer {
    Ok(Value::Text(text(&args[0])?.to_lowercase()))
}

fn upper(args: &[Value]) -> Answer {
    Ok(Value::Text(text(&args[0])?.to_uppercase()))
}

/// The first byte (0 for an empty string).
fn ascii(args: &[Value]) -> Answer {
    Ok(Value::Int(
        text(&args[0])?.bytes().next().map_or(0, i64::from),
    ))
}

/// The first `n` characters; none for `n <= 0`.
fn left(args: &[Value]) -> Answer {
    let s = text(&args[0])?;
    let n = usize::try_from(int(&args[1])?).unwrap_or(0);
    Ok(Value::Text(s.chars().take(n).collect()))
}

/// The last `n` characters; none for `n <= 0`.
fn right(args: &[Value]) -> Answer {
    let s = chars(text(&args[0])?);
    let n = usize::try_from(int(&args[1])?).unwrap_or(0).min(s.len());
    Ok(Value::Text(s[s.len() - n..].iter().collect()))
}

/// MySQL's rules: a 1-based start, a negative start counts from the end, start 0 or a
/// length below 1 gives the empty string.
fn substring(args: &[Value]) -> Answer {
    let s = chars(text(&args[0])?);
    let pos = int(&args[1])?;
    let len = match args.get(2) {
        Some(v) => int(v)?,
        None => i64::MAX,
    };
    let total = i64::try_from(s.len()).unwrap_or(i64::MAX);
    let start = match pos {
        0 => return Ok(Value::Text(String::new())),
        p if p > 0 => p - 1,
        p => total + p,
    };
    if start < 0 || start >= total || len <= 0 {
        return Ok(Value::Text(String::new()));
    }
    let end = start.saturating_add(len).min(total);
    let (start, end) = (
        usize::try_from(start).unwrap_or(0),
        usize::try_from(end).unwrap_or(0),
    );
    Ok(Value::Text(s[start..end].iter().collect()))
}

/// The 1-based position of `needle` in `hay` at or after `pos` (0: not found, or `pos`
/// outside the string; an empty needle is found at `pos`).
fn position(needle: &str, hay: &str, pos: i64) -> Value {
    let hay = chars(hay);
    let needle = chars(needle);
    let len = i64::try_from(hay.len()).unwrap_or(i64::MAX);
    if pos < 1 || (pos > len && !(len == 0 && pos == 1)) {
        return Value::Int(0);
    }
    let from = usize::try_from(pos - 1).unwrap_or(0);
    if needle.is_empty() {
        return Value::Int(pos);
    }
    let found = (from..hay.len())
        .find(|&at| hay[at..].starts_with(&needle))
        .map_or(0, |at| at + 1);
    count(found)
}

fn locate(args: &[Value]) -> Answer {
    let pos = match args.get(2) {
        Some(v) => int(v)?,
        None => 1,
    };
    Ok(position(text(&args[0])?, text(&args[1])?, pos))
}

fn instr(args: &[Value]) -> Answer {
    Ok(position(text(&args[1])?, text(&args[0])?, 1))
}

/// Pads on one side to `len` characters, or cuts to `len`: NULL for a negative length,
/// the empty string when padding is needed and the pad is empty.
fn pad(args: &[Value], on_left: bool) -> Answer {
    let s = chars(text(&args[0])?);
    let Ok(len) = usize::try_from(int(&args[1])?) else {
        return Ok(Value::Null);
    };
    let fill = chars(text(&args[2])?);
    if len <= s.len() {
        return Ok(Value::Text(s[..len].iter().collect()));
    }
    if fill.is_empty() {
        return Ok(Value::Text(String::new()));
    }
    let padding: String = fill.iter().cycle().take(len - s.len()).collect();
    let s: String = s.into_iter().collect();
    Ok(Value::Text(if on_left {
        padding + &s
    } else {
        s + &padding
    }))
}

fn lpad(args: &[Value]) -> Answer {
    pad(args, true)
}

fn rpad(args: &[Value]) -> Answer {
    pad(args, false)
}

/// `n` copies; none for `n <= 0`.
fn repeat(args: &[Value]) -> Answer {
    let s = text(&args[0])?;
    let n = usize::try_from(int(&args[1])?).unwrap_or(0);
    Ok(Value::Text(s.repeat(n)))
}

/// Every occurrence replaced; an empty search string leaves the string as it is.
fn replace(args: &[Value]) -> Answer {
    let (s, from, to) = (text(&args[0])?, text(&args[1])?, text(&args[2])?);
    Ok(Value::Text(if from.is_empty() {
        s.to_owned()
    } else {
        s.replace(from, to)
    }))
}

/// Decoded bytes as text: the emulator's strings are UTF-8, so other bytes fail the query
/// (Doris would return them as they are).
fn text_of(bytes: Vec<u8>) -> Answer {
    String::from_utf8(bytes).map(Value::Text).map_err(|_| {
        "the decoded bytes are not UTF-8, which the emulator's strings cannot hold".to_owned()
    })
}

fn to_base64(args: &[Value]) -> Answer {
    Ok(Value::Text(
        base64::engine::general_purpose::STANDARD.encode(text(&args[0])?),
    ))
}

/// NULL for text that is not Base64; the empty string for the empty string.
fn from_base64(args: &[Value]) -> Answer {
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(text(&args[0])?) else {
        return Ok(Value::Null);
    };
    text_of(bytes)
}

/// Upper-case hex digits of an integer (two's complement for a negative one) or of the
/// bytes of a string.
fn hex(args: &[Value]) -> Answer {
    if let Value::Int(n) = args[0] {
        return Ok(Value::Text(format!(
            "{:X}",
            u64::from_ne_bytes(n.to_ne_bytes())
        )));
    }
    let s = text(&args[0])?;
    Ok(Value::Text(s.bytes().map(|b| format!("{b:02X}")).collect()))
}

/// The bytes of a hex string; the empty string when it is not hex.
fn unhex(args: &[Value]) -> Answer {
    let s = text(&args[0])?;
    if s.len() % 2 != 0 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(Value::Text(String::new()));
    }
    let bytes: Vec<u8> = (0..s.len())
        .step_by(2)
        .filter_map(|at| u8::from_str_radix(&s[at..at + 2], 16).ok())
        .collect();
    text_of(bytes)
}

/// The `n`th of the strings (1-based); NULL outside them or for a NULL `n`.
fn elt(args: &[Value]) -> Answer {
    let Value::Int(n) = args[0] else {
        return Ok(Value::Null);
    };
    Ok(usize::try_from(n)
        .ok()
        .filter(|n| *n >= 1)
        .and_then(|n| args.get(n))
        .cloned()
        .unwrap_or(Value::Null))
}

fn null_or_empty(args: &[Value]) -> Answer {
    Ok(Value::Bool(args[0].text().is_none_or(str::is_empty)))
}

fn not_null_or_empty(args: &[Value]) -> Answer {
    Ok(Value::Bool(args[0].text().is_some_and(|s| !s.is_empty())))
}

/// Appends the one character when the string does not already end with it (NULL when the
/// second argument is not one character).
fn append_trailing_char_if_absent(args: &[Value]) -> Answer {
    let (s, c) = (text(&args[0])?, text(&args[1])?);
    if c.chars().count() != 1 {
        return Ok(Value::Null);
    }
    Ok(Value::Text(if s.ends_with(c) {
        s.to_owned()
    } else {
        format!("{s}{c}")
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Value {
        Value::Text(s.to_owned())
    }

    #[test]
    fn substring_follows_mysql_positions() {
        let sub = |s: &str, p: i64, l: Option<i64>| {
            let mut args = vec![t(s), Value::Int(p)];
            args.extend(l.map(Value::Int));
            substring(&args).unwrap()
        };
        assert_eq!(sub("abc1", 2, None), t("bc1"));
        assert_eq!(sub("abc1", -2, None), t("c1"));
        assert_eq!(sub("abc1", 5, None), t(""));
        assert_eq!(sub("abc1def", 2, Some(2)), t("bc"));
        assert_eq!(sub("abcdef", 3, Some(-1)), t(""));
        assert_eq!(sub("a", 0, Some(1)), t(""));
        assert_eq!(sub("a", -2, Some(1)), t(""));
        assert_eq!(sub("中文测试", 2, Some(2)), t("文测"));
    }

    #[test]
    fn left_and_right_of_a_negative_count_are_empty() {
        assert_eq!(left(&[t("good morning"), Value::Int(-5)]).unwrap(), t(""));
        assert_eq!(
            right(&[t("Hello doris"), Value::Int(120)]).unwrap(),
            t("Hello doris")
        );
        assert_eq!(
            right(&[t("Hello doris"), Value::Int(5)]).unwrap(),
            t("doris")
        );
    }

    #[test]
    fn hex_of_a_negative_integer_is_its_twos_complement() {
        assert_eq!(hex(&[Value::Int(-1)]).unwrap(), t("FFFFFFFFFFFFFFFF"));
        assert_eq!(hex(&[Value::Int(12)]).unwrap(), t("C"));
        assert_eq!(hex(&[t("12")]).unwrap(), t("3132"));
        assert_eq!(hex(&[t("@")]).unwrap(), t("40"));
        assert_eq!(unhex(&[t("4142")]).unwrap(), t("AB"));
        assert_eq!(unhex(&[t("@")]).unwrap(), t(""));
    }

    #[test]
    fn concat_takes_one_argument_or_more() {
        let f = all()
            .into_iter()
            .find(|f| f.names().any(|n| n == "concat"))
            .unwrap();
        assert!(f.takes(1) && f.takes(5) && !f.takes(0));
    }
}
