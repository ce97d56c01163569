//! A small tokenizer for Doris DDL text (`SHOW CREATE TABLE` output).
//!
//! It knows backtick identifiers (doubled backticks, and the unescaped embedded backticks
//! that Doris 4.0.6 was seen printing), single- and double-quoted strings with backslash
//! escapes, numbers, words, punctuation, and `--` / `/* */` comments (skipped).

/// One token with its byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token {
    /// A backtick-quoted identifier, unquoted.
    Ident(String),
    /// A bare word (keyword or unquoted identifier), as written.
    Word(String),
    /// A quoted string, unescaped.
    Str(String),
    /// A number, as written (may be signed or have a fraction).
    Number(String),
    /// Any other single character.
    Punct(char),
}

impl Token {
    /// True if this is the bare word `kw`, ignoring case.
    pub(crate) fn is_word(&self, kw: &str) -> bool {
        matches!(self, Token::Word(w) if w.eq_ignore_ascii_case(kw))
    }

    /// The name carried by an identifier or a bare word.
    pub(crate) fn name(&self) -> Option<&str> {
        match self {
            Token::Ident(s) | Token::Word(s) => Some(s),
            _ => None,
        }
    }
}

/// Reads a backtick identifier at the start of `text`; returns the name and bytes used.
///
/// A doubled backtick is one backtick. A single backtick closes the name only when what
/// follows could end an identifier (space, punctuation or the end); otherwise it is taken
/// as part of the name, which is how Doris 4.0.6 printed embedded backticks.
pub(crate) fn read_backtick(text: &str) -> Option<(String, usize)> {
    let bytes = text.as_bytes();
    if bytes.first() != Some(&b'`') {
        return None;
    }
    let mut name = String::new();
    let mut i = 1;
    while i < bytes.len() {
        let ch = text[i..].chars().next()?;
        if ch == '`' {
            if bytes.get(i + 1) == Some(&b'`') {
                name.push('`');
                i += 2;
                continue;
            }
            let ends = bytes
                .get(i + 1)
                .is_none_or(|b| b.is_ascii_whitespace() || b",().;:=<>".contains(b));
            if ends {
                return Some((name, i + 1));
            }
        }
        name.push(ch);
        i += ch.len_utf8();
    }
    None
}

/// Reads a `'…'` or `"…"` string at the start of `text`; returns the value and bytes used.
pub(crate) fn read_quoted(text: &str) -> Option<(String, usize)> {
    let mut chars = text.char_indices();
    let (_, quote) = chars.next()?;
    if quote != '\'' && quote != '"' {
        return None;
    }
    let mut value = String::new();
    while let Some((i, ch)) = chars.next() {
        if ch == '\\' {
            let (_, escaped) = chars.next()?;
            value.push(match escaped {
                'n' => '\n',
                'r' => '\r',
                't' => '\t',
                '0' => '\0',
                'Z' => '\u{1a}',
                'b' => '\u{8}',
                other => other,
            });
        } else if ch == quote {
            if text[i + 1..].starts_with(quote) {
                chars.next();
                value.push(quote);
            } else {
                return Some((value, i + 1));
            }
        } else {
            value.push(ch);
        }
    }
    None
}

/// A token with its start and end byte offsets in the source text.
pub(crate) type Spanned = (usize, usize, Token);

/// Splits DDL text into tokens with their byte offsets.
pub(crate) fn tokenize(text: &str) -> Result<Vec<Spanned>, String> {
    let mut tokens = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        let rest = &text[pos..];
        let Some(ch) = rest.chars().next() else { break };
        if ch.is_whitespace() {
            pos += ch.len_utf8();
        } else if rest.starts_with("--") {
            pos += rest.find('\n').unwrap_or(rest.len());
        } else if let Some(body) = rest.strip_prefix("/*") {
            let end = body
                .find("*/")
                .ok_or_else(|| format!("unclosed comment at byte {pos}"))?;
            pos += end + 4;
        } else if ch == '`' {
            let (name, used) =
                read_backtick(rest).ok_or_else(|| format!("unclosed backtick at byte {pos}"))?;
            tokens.push((pos, pos + used, Token::Ident(name)));
            pos += used;
        } else if ch == '\'' || ch == '"' {
            let (value, used) =
                read_quoted(rest).ok_or_else(|| format!("unclosed string at byte {pos}"))?;
            tokens.push((pos, pos + used, Token::Str(value)));
            pos += used;
        } else if ch.is_ascii_digit()
            || (ch == '-' && rest[1..].starts_with(|c: char| c.is_ascii_digit()))
        {
            let len = 1 + rest[1..]
                .bytes()
                .take_while(|b| b.is_ascii_digit() || *b == b'.')
                .count();
            tokens.push((pos, pos + len, Token::Number(rest[..len].to_owned())));
            pos += len;
        } else if ch.is_alphanumeric() || ch == '_' {
            let len: usize = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .map(char::len_utf8)
                .sum();
            tokens.push((pos, pos + len, Token::Word(rest[..len].to_owned())));
            pos += len;
        } else {
            tokens.push((pos, pos + ch.len_utf8(), Token::Punct(ch)));
            pos += ch.len_utf8();
        }
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backticks_doubled_and_unescaped() {
        assert_eq!(read_backtick("`a``b` x"), Some(("a`b".into(), 6)));
        assert_eq!(read_backtick("`a`b` INT"), Some(("a`b".into(), 5)));
        assert_eq!(read_backtick("`名`,"), Some(("名".into(), 5)));
        assert_eq!(read_backtick("`open"), None);
    }

    #[test]
    fn quoted_strings_unescape() {
        assert_eq!(read_quoted(r"'a\'b' rest"), Some(("a'b".into(), 6)));
        assert_eq!(read_quoted(r#""x""y""#), Some(("x\"y".into(), 6)));
        assert_eq!(read_quoted(r"'\n\\'"), Some(("\n\\".into(), 6)));
        assert_eq!(read_quoted("'open"), None);
    }

    #[test]
    fn tokenizes_ddl() {
        let toks: Vec<Token> =
            tokenize("CREATE /* c */ `t` (-- x\n `a` INT(11) DEFAULT \"-1\", -5)")
                .unwrap()
                .into_iter()
                .map(|(_, _, t)| t)
                .collect();
        assert_eq!(
            toks,
            vec![
                Token::Word("CREATE".into()),
                Token::Ident("t".into()),
                Token::Punct('('),
                Token::Ident("a".into()),
                Token::Word("INT".into()),
                Token::Punct('('),
                Token::Number("11".into()),
                Token::Punct(')'),
                Token::Word("DEFAULT".into()),
                Token::Str("-1".into()),
                Token::Punct(','),
                Token::Number("-5".into()),
                Token::Punct(')'),
            ]
        );
        assert!(tokenize("a /* open").is_err());
        assert!(tokenize("'open").is_err());
    }
}
