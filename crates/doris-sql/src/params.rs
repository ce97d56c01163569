//! The trusted WHERE fragment (`unsafe_where_sql`) and its `:name` parameters.
//!
//! The fragment is SQL the caller vouches for; only the values bound to its `:name` markers
//! are untrusted, and they are rendered as literals by this crate. The scanner understands
//! quoting (`'…'` and `"…"` with backslash escapes and doubled quotes, `` `…` `` with
//! doubled backticks) and comments (`-- …` and `/* … */`, which are removed so that they
//! cannot swallow the parenthesis the fragment is wrapped in; a block comment leaves a
//! space, so removing it never joins two tokens). A marker is `:` followed by
//! `[A-Za-z_][A-Za-z0-9_]*`, outside quotes and comments, and not preceded by another `:`
//! (so `::` casts are left alone).
//!
//! Beyond the reference connector, the fragment must also keep the statement's structure:
//! parentheses balanced and no `;` statement separator outside quotes. That does not make
//! an untrusted fragment safe, but it turns a typo into an error instead of a different query.
//!
//! ```
//! use std::collections::BTreeMap;
//! use doris_sql::{bind_trusted_where, Literal, Param};
//! let params = BTreeMap::from([("kind".to_owned(), Param::from(Literal::String("x' OR 1 --".into())))]);
//! let fragment = bind_trusted_where("kind = :kind AND ts::date IS NOT NULL", &params).unwrap();
//! assert_eq!(fragment.sql(), "kind = 'x'' OR 1 --' AND ts::date IS NOT NULL");
//! ```

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::error::{Result, SqlError};
use crate::literal::Literal;

/// A value bound to a `:name` marker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Param {
    /// One literal, rendered in place of the marker.
    Scalar(Literal),
    /// A list, rendered as `(v1, v2, …)` for `IN :name`. Must not be empty.
    List(Vec<Literal>),
}

impl From<Literal> for Param {
    fn from(value: Literal) -> Self {
        Param::Scalar(value)
    }
}

/// A trusted fragment with its parameters rendered: ready to be wrapped in parentheses.
#[derive(Clone, PartialEq, Eq)]
pub struct TrustedWhere {
    sql: String,
}

impl TrustedWhere {
    /// The rendered fragment.
    pub fn sql(&self) -> &str {
        &self.sql
    }
}

impl std::fmt::Debug for TrustedWhere {
    /// Redacted: the fragment holds bound values.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TrustedWhere(<redacted>)")
    }
}

/// One piece of a scanned fragment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FragmentPiece<'a> {
    /// SQL text copied verbatim (quotes included, comments already removed).
    Text(&'a str),
    /// A `:name` marker (the name without the colon).
    Marker(&'a str),
}

/// Splits a trusted fragment into text and `:name` markers, dropping comments.
///
/// ```
/// use doris_sql::{scan_fragment, FragmentPiece};
/// let pieces = scan_fragment("a = ':no' /* :no */ AND b = :yes").unwrap();
/// assert_eq!(pieces, vec![
///     FragmentPiece::Text("a = ':no' "),
///     FragmentPiece::Text(" "),
///     FragmentPiece::Text(" AND b = "),
///     FragmentPiece::Marker("yes"),
/// ]);
/// ```
pub fn scan_fragment<'a>(fragment: &'a str) -> Result<Vec<FragmentPiece<'a>>> {
    let bytes = fragment.as_bytes();
    let mut pieces = Vec::new();
    let mut text_start = 0;
    let mut i = 0;
    let mut depth: i64 = 0;
    let flush = |pieces: &mut Vec<FragmentPiece<'a>>, from: usize, to: usize| {
        if to > from {
            pieces.push(FragmentPiece::Text(&fragment[from..to]));
        }
    };
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'\'' | b'"' | b'`') => {
                i = skip_quoted(bytes, i, quote)?;
            }
            // Doris and MySQL read `--x` differently (a comment, or two minus signs), and a
            // removed block comment could turn `--/**/` into the comment `-- `: refused.
            // (Found by the `trusted_where` fuzz target.)
            b'-' if bytes.get(i + 1) == Some(&b'-')
                && bytes.get(i + 2).is_some_and(|b| !b.is_ascii_whitespace()) =>
            {
                return Err(SqlError::InvalidTrustedFragment(format!(
                    "'--' at byte {i} is not followed by a space: write '-- ' for a comment or \
                     '- -' for two minus signs"
                )));
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                flush(&mut pieces, text_start, i);
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                text_start = i;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                flush(&mut pieces, text_start, i);
                let Some(end) = fragment[i + 2..].find("*/") else {
                    return Err(SqlError::InvalidTrustedFragment(format!(
                        "the comment opened at byte {i} is not closed"
                    )));
                };
                // A space, not nothing: `-/**/-` must not become the comment marker `--`.
                pieces.push(FragmentPiece::Text(" "));
                i += 2 + end + 2;
                text_start = i;
            }
            b':' if i == 0 || bytes[i - 1] != b':' => {
                let name_len = bytes[i + 1..]
                    .iter()
                    .enumerate()
                    .take_while(|(k, b)| {
                        b.is_ascii_alphabetic() || **b == b'_' || (*k > 0 && b.is_ascii_digit())
                    })
                    .count();
                if name_len > 0 {
                    flush(&mut pieces, text_start, i);
                    pieces.push(FragmentPiece::Marker(&fragment[i + 1..i + 1 + name_len]));
                    i += 1 + name_len;
                    text_start = i;
                } else {
                    i += 1;
                }
            }
            b'(' => {
                depth += 1;
                i += 1;
            }
            b')' => {
                depth -= 1;
                if depth < 0 {
                    return Err(SqlError::InvalidTrustedFragment(format!(
                        "unbalanced ')' at byte {i}"
                    )));
                }
                i += 1;
            }
            b';' => {
                return Err(SqlError::InvalidTrustedFragment(format!(
                    "statement separator ';' at byte {i}"
                )));
            }
            _ => i += 1,
        }
    }
    if depth != 0 {
        return Err(SqlError::InvalidTrustedFragment(
            "unbalanced '(': a parenthesis is not closed".into(),
        ));
    }
    flush(&mut pieces, text_start, bytes.len());
    Ok(pieces)
}

/// Returns the index just past the closing quote of the quoted run starting at `start`.
fn skip_quoted(bytes: &[u8], start: usize, quote: u8) -> Result<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\\' && quote != b'`' {
            i += 2;
        } else if b == quote {
            if bytes.get(i + 1) == Some(&quote) {
                i += 2;
            } else {
                return Ok(i + 1);
            }
        } else {
            i += 1;
        }
    }
    Err(SqlError::InvalidTrustedFragment(format!(
        "the quote {:?} opened at byte {start} is not closed",
        char::from(quote)
    )))
}

/// Renders the fragment with every marker replaced by its parameter's literal.
///
/// Every marker must have a parameter and every parameter must be used; errors name the
/// parameter but never its value.
///
/// ```
/// use std::collections::BTreeMap;
/// use doris_sql::{bind_trusted_where, Literal, Param};
/// let params = BTreeMap::from([
///     ("ids".to_owned(), Param::List(vec![Literal::Int64(1), Literal::Int64(2)])),
/// ]);
/// assert_eq!(bind_trusted_where("id IN :ids", &params).unwrap().sql(), "id IN (1, 2)");
/// let err = bind_trusted_where("id = :other", &params).unwrap_err();
/// assert!(err.to_string().contains(":other"));
/// ```
pub fn bind_trusted_where(
    fragment: &str,
    params: &BTreeMap<String, Param>,
) -> Result<TrustedWhere> {
    let pieces = scan_fragment(fragment)?;
    let mut sql = String::with_capacity(fragment.len());
    let mut used = BTreeSet::new();
    for piece in pieces {
        match piece {
            FragmentPiece::Text(text) => sql.push_str(text),
            FragmentPiece::Marker(name) => {
                let Some(param) = params.get(name) else {
                    return Err(SqlError::InvalidTrustedFragment(format!(
                        "no value was supplied for the marker :{name}"
                    )));
                };
                used.insert(name);
                render_param(param, name, &mut sql)?;
            }
        }
    }
    if let Some(unused) = params.keys().find(|k| !used.contains(k.as_str())) {
        return Err(SqlError::InvalidTrustedFragment(format!(
            "the parameter {unused:?} is not used by any :{unused} marker"
        )));
    }
    let sql = sql.trim().to_owned();
    if sql.is_empty() {
        return Err(SqlError::InvalidTrustedFragment(
            "the fragment is empty".into(),
        ));
    }
    Ok(TrustedWhere { sql })
}

fn render_param(param: &Param, name: &str, out: &mut String) -> Result<()> {
    let invalid =
        |reason: &str| SqlError::InvalidTrustedFragment(format!("the parameter {name:?} {reason}"));
    match param {
        Param::Scalar(v) => v
            .write_sql(out)
            .map_err(|_| invalid("has no exact SQL literal (NaN or infinity)")),
        Param::List(items) => {
            if items.is_empty() {
                return Err(invalid("is an empty list"));
            }
            if items.iter().any(Literal::is_null) {
                // `c IN (NULL, …)` never matches the NULL: refused rather than misleading.
                return Err(invalid(
                    "is a list holding NULL (IN never matches NULL: write `col IS NULL OR col IN (…)`)",
                ));
            }
            out.push('(');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                item.write_sql(out)
                    .map_err(|_| invalid("has no exact SQL literal (NaN or infinity)"))?;
            }
            out.push(')');
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, Param)]) -> BTreeMap<String, Param> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect()
    }

    fn s(v: &str) -> Param {
        Param::Scalar(Literal::String(v.into()))
    }

    #[test]
    fn markers_are_found_only_outside_quotes_and_comments() {
        use FragmentPiece::*;
        let p = scan_fragment(r#"a=:x AND b=':y' AND c="\":z" AND `:w`=1 AND d::int=:v_1 -- :c"#)
            .unwrap();
        let markers: Vec<_> = p
            .iter()
            .filter_map(|x| match x {
                Marker(m) => Some(*m),
                Text(_) => None,
            })
            .collect();
        assert_eq!(markers, vec!["x", "v_1"]);
        assert_eq!(scan_fragment(":1").unwrap(), vec![Text(":1")]);
        assert_eq!(
            scan_fragment("a='it''s :x'").unwrap(),
            vec![Text("a='it''s :x'")]
        );
        assert_eq!(
            scan_fragment("a-- b\n:x").unwrap(),
            vec![Text("a"), Text("\n"), Marker("x")]
        );
        // `--x`: a comment to Doris, two minus signs to MySQL; refused.
        for ambiguous in ["a--b", "a --/* c */ `x", "1--1"] {
            let e = scan_fragment(ambiguous).unwrap_err().to_string();
            assert!(e.contains("not followed by a space"), "{ambiguous}: {e}");
        }
        assert_eq!(scan_fragment("a - -b").unwrap(), vec![Text("a - -b")]);
    }

    /// Killers of mutants that lived (docs/testing.md): parentheses must balance, and a
    /// doubled quote far from the start must not end the string.
    #[test]
    fn parentheses_balance_and_doubled_quotes_stay_inside_their_string() {
        use FragmentPiece::*;
        let pieces = scan_fragment("a IN (:x) AND ((b = 1))").unwrap();
        assert!(pieces.contains(&Marker("x")), "{pieces:?}");
        for unbalanced in ["(a", "a)", "(a))", ")("] {
            assert!(scan_fragment(unbalanced).is_err(), "{unbalanced}");
        }
        let pieces = scan_fragment("x = 'ab''c' AND y = :v").unwrap();
        assert_eq!(pieces.last(), Some(&Marker("v")));
        let pieces = scan_fragment("x = 'ab''c :no' AND y = :v").unwrap();
        assert_eq!(
            pieces.iter().filter(|p| matches!(p, Marker(_))).count(),
            1,
            "{pieces:?}"
        );
    }

    /// Found by the `trusted_where` fuzz target: `--/* c */` scanned as text, and binding
    /// (which replaces the block comment by a space) turned it into the comment `-- `.
    #[test]
    fn binding_never_turns_text_into_a_comment() {
        let fragment = "ND IN --/* c */ /* c */ `c}}}}}}v\n `c}\n} c =";
        assert!(bind_trusted_where(fragment, &BTreeMap::new()).is_err());
        let bound = bind_trusted_where("a -/**/- 1", &BTreeMap::new()).unwrap();
        assert_eq!(bound.sql(), "a - - 1");
    }

    #[test]
    fn binds_scalars_and_lists() {
        let bound = bind_trusted_where(
            "kind = :kind AND id IN :ids AND x = :kind",
            &params(&[
                ("kind", s("a'b")),
                (
                    "ids",
                    Param::List(vec![Literal::Int64(1), Literal::Int64(2)]),
                ),
            ]),
        )
        .unwrap();
        assert_eq!(bound.sql(), "kind = 'a''b' AND id IN (1, 2) AND x = 'a''b'");
        assert_eq!(format!("{bound:?}"), "TrustedWhere(<redacted>)");
        let no_params = bind_trusted_where("  a LIKE '50%' /* note */ ", &BTreeMap::new()).unwrap();
        assert_eq!(no_params.sql(), "a LIKE '50%'");
        let joined = bind_trusted_where("x = 1 -/**/- 2", &BTreeMap::new()).unwrap();
        assert_eq!(joined.sql(), "x = 1 - - 2");
    }

    #[test]
    fn reports_inconsistencies_without_values() {
        let cases: Vec<(&str, BTreeMap<String, Param>, &str)> = vec![
            (
                "a = :x",
                BTreeMap::new(),
                "no value was supplied for the marker :x",
            ),
            ("a = 1", params(&[("x", s("secret"))]), "\"x\" is not used"),
            ("a = 'open", BTreeMap::new(), "not closed"),
            ("a = `open", BTreeMap::new(), "not closed"),
            ("a /* open", BTreeMap::new(), "comment opened at byte 2"),
            ("(a = 1", BTreeMap::new(), "unbalanced '('"),
            ("a = 1) OR (1 = 1", BTreeMap::new(), "unbalanced ')'"),
            ("a = 1; DROP TABLE t", BTreeMap::new(), "separator"),
            ("-- only a comment", BTreeMap::new(), "empty"),
            (
                "a IN :x",
                params(&[("x", Param::List(vec![]))]),
                "empty list",
            ),
            (
                "a IN :x",
                params(&[("x", Param::List(vec![Literal::Int64(1), Literal::Null]))]),
                "holding NULL",
            ),
            (
                "a = :x",
                params(&[("x", Param::Scalar(Literal::Float64(f64::NAN)))]),
                "NaN",
            ),
        ];
        for (fragment, p, expected) in cases {
            let err = bind_trusted_where(fragment, &p).unwrap_err().to_string();
            assert!(err.contains(expected), "{fragment}: {err}");
            assert!(!err.contains("secret"), "{err}");
        }
    }

    #[test]
    fn params_deserialize_from_json() {
        let p: BTreeMap<String, Param> = serde_json::from_str(
            r#"{"a": {"type": "int64", "value": 3}, "b": [{"type": "string", "value": "x"}]}"#,
        )
        .unwrap();
        assert_eq!(p["a"], Param::Scalar(Literal::Int64(3)));
        assert_eq!(p["b"], Param::List(vec![Literal::String("x".into())]));
    }
}
