//! SQL text as sqlparser tokens: statements the emulator takes apart by hand (`TABLET(...)`
//! hints, `CREATE JOB`, table functions) are tokenized with the MySQL dialect and written
//! back with [`render`].

use sqlparser::dialect::MySqlDialect;
use sqlparser::tokenizer::{Token, Tokenizer};

/// Tokenizes `sql` with the MySQL dialect (whitespace tokens kept).
pub fn tokenize(sql: &str) -> Result<Vec<Token>, String> {
    Tokenizer::new(&MySqlDialect {}, sql)
        .tokenize()
        .map_err(|e| e.to_string())
}

/// A token as SQL text. sqlparser's `Display` writes a string literal's unescaped value
/// between quotes (`'it's'`), so quoted strings are escaped again here.
pub fn render_token(token: &Token) -> String {
    let quoted = |s: &str, q: char| {
        let mut out = String::with_capacity(s.len() + 2);
        out.push(q);
        for c in s.chars() {
            if c == '\\' || c == q {
                out.push('\\');
            }
            out.push(c);
        }
        out.push(q);
        out
    };
    match token {
        Token::SingleQuotedString(s) => quoted(s, '\''),
        Token::DoubleQuotedString(s) => quoted(s, '"'),
        // A backtick-quoted name: its own backticks are doubled again (sqlparser writes the
        // unescaped value between backticks).
        Token::Word(w) if w.quote_style == Some('`') => {
            format!("`{}`", w.value.replace('`', "``"))
        }
        other => other.to_string(),
    }
}

/// Tokens written back as SQL text.
pub fn render(tokens: &[Token]) -> String {
    tokens.iter().map(render_token).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn names_with_doubled_backticks_survive_a_round_trip() {
        let sql = "SELECT `tick``col`, 'it''s' FROM `d`.`t``x` WHERE `a` = 1";
        let back = render(&tokenize(sql).unwrap());
        assert_eq!(tokenize(&back).unwrap(), tokenize(sql).unwrap());
        assert!(
            back.contains("`tick``col`") && back.contains("`t``x`"),
            "{back}"
        );
    }
}
