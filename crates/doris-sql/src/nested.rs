//! Doris's text form of nested values (ARRAY, MAP, STRUCT), as the MySQL text protocol and
//! CSV loads carry it, turned into JSON that any JSON reader can decode into typed values.

/// Rewrites Doris's text for nested values into JSON: unquoted map keys get quotes.
/// (`[1, null]`, `["a"]` and `{"f":1}` already are JSON; `{1:{"a":0}}` is not.)
pub fn nested_to_json(input: &str) -> crate::Result<String> {
    let bytes = input.as_bytes();
    let mut out = String::with_capacity(input.len() + 8);
    // For each open bracket: whether it is an object and whether a key is expected next.
    let mut stack: Vec<(bool, bool)> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i] as char;
        match c {
            '"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                out.push_str(&input[start..(i + 1).min(input.len())]);
                if let Some(top) = stack.last_mut() {
                    top.1 = false;
                }
                i += 1;
                continue;
            }
            '{' => {
                stack.push((true, true));
                out.push(c);
            }
            '[' => {
                stack.push((false, false));
                out.push(c);
            }
            '}' | ']' => {
                stack.pop();
                out.push(c);
            }
            ',' => {
                if let Some(top) = stack.last_mut()
                    && top.0
                {
                    top.1 = true;
                }
                out.push(c);
            }
            ':' => out.push(c),
            c if c.is_whitespace() => out.push(c),
            _ => {
                let start = i;
                while i < bytes.len() && !matches!(bytes[i], b',' | b':' | b']' | b'}') {
                    i += 1;
                }
                let token = input[start..i].trim_end();
                let key_expected = stack.last().is_some_and(|t| t.0 && t.1);
                // A key, or a float Doris prints unquoted that JSON has no word for
                // (`nan`, `inf`, `NaN`, `Infinity`): a JSON string a float reader parses.
                if key_expected || is_non_finite(token) {
                    out.push('"');
                    out.push_str(token);
                    out.push('"');
                } else {
                    out.push_str(token);
                }
                out.push_str(&input[start + token.len()..i]);
                if let Some(top) = stack.last_mut() {
                    top.1 = false;
                }
                continue;
            }
        }
        i += 1;
    }
    if !stack.is_empty() {
        return Err(crate::SqlError::InvalidLiteral {
            kind: "nested",
            reason: "unbalanced brackets".into(),
        });
    }
    Ok(out)
}

/// Doris's spellings of non-finite floats inside nested text (fmt's `nan`/`inf` in 2.1–3.x,
/// `NaN`/`Infinity` in 4.x).
fn is_non_finite(token: &str) -> bool {
    let unsigned = token.strip_prefix(['-', '+']).unwrap_or(token);
    ["nan", "inf", "infinity"]
        .iter()
        .any(|word| unsigned.eq_ignore_ascii_case(word))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn non_finite_floats_become_json_strings() {
        assert_eq!(
            nested_to_json("[1.5, nan, -inf, NaN, Infinity, -Infinity]").unwrap(),
            "[1.5, \"nan\", \"-inf\", \"NaN\", \"Infinity\", \"-Infinity\"]"
        );
    }

    #[test]
    fn nested_text_becomes_json() {
        assert_eq!(nested_to_json("[1, null, 3]").unwrap(), "[1, null, 3]");
        assert_eq!(
            nested_to_json("{1:{\"a\":0, \"b\":0}}").unwrap(),
            "{\"1\":{\"a\":0, \"b\":0}}"
        );
        assert_eq!(
            nested_to_json("[\"x,y\", \"\", \"null\"]").unwrap(),
            "[\"x,y\", \"\", \"null\"]"
        );
        assert!(nested_to_json("[1, 2").is_err());
    }
}
