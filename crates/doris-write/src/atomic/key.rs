//! The label of an idempotence key: the one name under which Doris remembers that the key's
//! write committed.
//!
//! The label goes into SQL (`BEGIN WITH LABEL <label>`), where Doris's grammar takes an
//! identifier, `(LETTER | DIGIT | '_')+`, unquoted (a backquoted label keeps its backticks
//! and then fails the label rule, `^[-_A-Za-z0-9:]{1,128}$`, `FeNameFormat.checkLabel`).
//! So the label holds only letters, digits and `_`, starts with a letter, and fits 128
//! characters, whatever the key: letters and digits of the key stand as they are, and
//! every other byte of it (`_` included) is written `_` and two upper-case hex digits.
//! Two keys never share a label, and a key's label never changes.
//!
//! A label Doris's lexer reads as a reserved keyword is no identifier there: such a label
//! (a `label_prefix` and key that spell, say, `sql_block_rule`) is refused before anything
//! is written. A label always holds a `_`, so only keywords with one can collide
//! ([`RESERVED_WITH_UNDERSCORE`]).

use doris_streamload::{Label, MAX_LABEL_LEN, StreamLoadError};

/// Doris's keywords that hold a `_` and that its grammar does not take as an identifier
/// (`DorisLexer.g4` less `DorisParser.g4`'s `nonReserved`), in any release 2.1 to 4.1: a
/// label equal to one of them, in any case, is a syntax error in `BEGIN WITH LABEL`.
pub const RESERVED_WITH_UNDERSCORE: [&str; 11] = [
    "ACCOUNT_LOCK",
    "ACCOUNT_UNLOCK",
    "BITMAP_EMPTY",
    "HASH_MAP",
    "IP_TRIE",
    "LOW_PRIORITY",
    "NO_USE_MV",
    "SQL_BLOCK_RULE",
    "TOKEN_FILTER",
    "TYPE_CAST",
    "USE_MV",
];

/// The key's label, `<prefix>_<key written as above>`.
///
/// ```
/// use doris_write::atomic::key_label;
/// assert_eq!(key_label("daft_doris", "2026-12-04").unwrap().as_str(), "daft_doris_2026_2D12_2D04");
/// assert_eq!(key_label("etl", "run7").unwrap().as_str(), "etl_run7");
/// // `_` is escaped too, so `a_b` and `a-b` stay apart.
/// assert_ne!(key_label("etl", "a_b").unwrap(), key_label("etl", "a-b").unwrap());
/// assert!(key_label("9lives", "k").is_err(), "a label starts with a letter");
/// assert!(key_label("sql_block", "rule").is_err(), "a reserved keyword is no label");
/// ```
pub fn key_label(prefix: &str, key: &str) -> Result<Label, StreamLoadError> {
    check_prefix(prefix)?;
    if key.is_empty() {
        return Err(StreamLoadError::Config(
            "an idempotence key must not be empty".into(),
        ));
    }
    let mut label = String::with_capacity(prefix.len() + 1 + key.len());
    label.push_str(prefix);
    label.push('_');
    for byte in key.bytes() {
        if byte.is_ascii_alphanumeric() {
            label.push(char::from(byte));
        } else {
            label.push('_');
            label.push(hex_digit(byte >> 4));
            label.push(hex_digit(byte & 0x0f));
        }
    }
    if label.len() > MAX_LABEL_LEN {
        return Err(StreamLoadError::Config(format!(
            "label_prefix and idempotence_key make a Doris label of {} characters, over Doris's \
             {MAX_LABEL_LEN} (in the atomic mode a key's letters and digits take one character \
             each, any other character three)",
            label.len()
        )));
    }
    if let Some(keyword) = RESERVED_WITH_UNDERSCORE
        .iter()
        .find(|k| k.eq_ignore_ascii_case(&label))
    {
        return Err(StreamLoadError::Config(format!(
            "label_prefix and idempotence_key make the Doris label {keyword}, which Doris's SQL \
             reads as a reserved keyword: choose another label_prefix"
        )));
    }
    Label::new(label)
}

/// The label prefix of an atomic write: a letter, then letters, digits or `_`.
pub fn check_prefix(prefix: &str) -> Result<(), StreamLoadError> {
    let mut chars = prefix.chars();
    let starts_with_letter = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    if !starts_with_letter || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(StreamLoadError::Config(
            "in the atomic mode label_prefix must start with a letter and hold only letters, \
             digits and '_' (Doris takes the label as an SQL identifier)"
                .into(),
        ));
    }
    Ok(())
}

fn hex_digit(nibble: u8) -> char {
    char::from(b"0123456789ABCDEF"[usize::from(nibble & 0x0f)])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    /// What Doris's lexer takes as an unquoted identifier and its label rule accepts.
    fn doris_accepts_unquoted(label: &str) -> bool {
        label.len() <= 128
            && label.starts_with(|c: char| c.is_ascii_alphabetic())
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    }

    /// Reads a label back into its key (the inverse the one-to-one claim rests on).
    fn key_of(label: &str, prefix: &str) -> Vec<u8> {
        let rest = label
            .strip_prefix(prefix)
            .unwrap()
            .strip_prefix('_')
            .unwrap();
        let bytes = rest.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'_' {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 3;
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        out
    }

    #[test]
    fn keys_with_every_kind_of_character() {
        for key in ["2026-12-04", "a_b", "a:b", "ünï", "x y", "_", "-", "A", "0"] {
            let label = key_label("daft_doris", key).unwrap();
            assert!(doris_accepts_unquoted(label.as_str()), "{label}");
            assert_eq!(key_of(label.as_str(), "daft_doris"), key.as_bytes());
        }
        assert!(key_label("p", "").is_err());
        assert!(key_label("", "k").is_err());
        assert!(
            key_label("a-b", "k").is_err(),
            "'-' is no identifier character"
        );
        assert!(key_label("_a", "k").is_err());
        assert!(
            key_label("p", &"-".repeat(43)).is_err(),
            "128 characters at most"
        );
        assert!(key_label("p", &"k".repeat(126)).is_ok());
        for (prefix, key) in [("sql_block", "rule"), ("USE", "mv"), ("type", "Cast")] {
            let e = key_label(prefix, key).unwrap_err().to_string();
            assert!(e.contains("reserved keyword"), "{e}");
        }
        // A keyword Doris takes as an identifier is a label like any other.
        assert!(key_label("current", "timestamp").is_ok());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn every_key_maps_to_its_own_accepted_label(
            prefix in "[A-Za-z][A-Za-z0-9_]{0,20}",
            a in "\\PC{1,30}",
            b in "\\PC{1,30}",
        ) {
            if let (Ok(la), Ok(lb)) = (key_label(&prefix, &a), key_label(&prefix, &b)) {
                prop_assert!(doris_accepts_unquoted(la.as_str()));
                prop_assert_eq!(key_of(la.as_str(), &prefix), a.as_bytes().to_vec());
                prop_assert_eq!(la == lb, a == b);
            }
        }
    }
}
