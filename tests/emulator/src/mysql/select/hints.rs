//! `TABLET(id, …)` hints: taken out of a statement before DataFusion sees it, each
//! remembered for the table written just before it (after an optional `PARTITION (…)`).

use sqlparser::tokenizer::Token;

/// A table reference as written, and the tablets or partitions its hint named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    /// `db` (when qualified) and `table`.
    pub name: Vec<String>,
    /// Tablet ids (`TABLET(…)`).
    pub tablets: Vec<u64>,
    /// Partition names (`PARTITION p`, `PARTITION (p, q)`, `PARTITIONS (…)`).
    pub partitions: Vec<String>,
}

fn is_word(t: &Token, keyword: &str) -> bool {
    matches!(t, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(keyword))
}

/// The table name that ends `out` (an identifier chain, whitespace allowed before it).
fn trailing_table_name(out: &[Token]) -> Vec<String> {
    let mut k = out.len();
    while k > 0 && matches!(out[k - 1], Token::Whitespace(_)) {
        k -= 1;
    }
    let mut name = Vec::new();
    while let Some(Token::Word(w)) = k.checked_sub(1).and_then(|at| out.get(at)) {
        name.insert(0, w.value.clone());
        k -= 1;
        if k > 0 && out[k - 1] == Token::Period {
            k -= 1;
        } else {
            break;
        }
    }
    name
}

/// Reads `( item [, item]* )` from `tokens[at]` (the opening parenthesis); returns the
/// items and the index of the closing one.
fn parenthesised(tokens: &[Token], at: usize, what: &str) -> Result<(Vec<Token>, usize), String> {
    let mut items = Vec::new();
    let mut j = at + 1;
    loop {
        match tokens.get(j) {
            Some(Token::Whitespace(_)) | Some(Token::Comma) => j += 1,
            Some(Token::RParen) => return Ok((items, j)),
            Some(t @ (Token::Number(..) | Token::Word(_))) => {
                items.push(t.clone());
                j += 1;
            }
            _ => return Err(format!("malformed {what}")),
        }
    }
}

/// Takes the `TABLET(...)` hints and the `PARTITION …` clauses after table names out of
/// `sql`; returns the SQL without them and the hints.
pub fn strip_tablet_hints(sql: &str) -> Result<(String, Vec<Hint>), String> {
    let tokens = crate::tokens::tokenize(sql)?;
    let next_significant =
        |from: usize| (from..tokens.len()).find(|j| !matches!(tokens[*j], Token::Whitespace(_)));
    let mut out: Vec<Token> = Vec::with_capacity(tokens.len());
    let mut hints = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let next = next_significant(i + 1);
        let opens = next.is_some_and(|j| tokens[j] == Token::LParen);
        if is_word(&tokens[i], "TABLET") && opens {
            let (items, end) = parenthesised(&tokens, next.unwrap_or(i), "TABLET(...) hint")?;
            let mut ids = Vec::new();
            for item in items {
                match item {
                    Token::Number(n, _) => {
                        ids.push(n.parse::<u64>().map_err(|_| format!("bad tablet id {n}"))?)
                    }
                    _ => return Err("malformed TABLET(...) hint".into()),
                }
            }
            let name = trailing_table_name(&out);
            if name.is_empty() {
                return Err("TABLET(...) must follow a table name".into());
            }
            hints.push(Hint {
                name,
                tablets: ids,
                partitions: Vec::new(),
            });
            i = end + 1;
            continue;
        }
        let partition_clause = (is_word(&tokens[i], "PARTITION")
            || is_word(&tokens[i], "PARTITIONS"))
            && !next.is_some_and(|j| is_word(&tokens[j], "BY"));
        let name = if partition_clause {
            trailing_table_name(&out)
        } else {
            Vec::new()
        };
        if !name.is_empty() {
            let (partitions, end) = match next.map(|j| (j, &tokens[j])) {
                Some((j, Token::LParen)) => {
                    let (items, end) = parenthesised(&tokens, j, "PARTITION (...) clause")?;
                    let names = items
                        .into_iter()
                        .map(|t| match t {
                            Token::Word(w) => Ok(w.value),
                            _ => Err("malformed PARTITION (...) clause".to_owned()),
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    (names, end)
                }
                Some((j, Token::Word(w))) => (vec![w.value.clone()], j),
                _ => return Err("PARTITION must name a partition".into()),
            };
            hints.push(Hint {
                name,
                tablets: Vec::new(),
                partitions,
            });
            i = end + 1;
            continue;
        }
        out.push(tokens[i].clone());
        i += 1;
    }
    Ok((crate::tokens::render(&out), hints))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tablet_hints_are_taken_out_with_their_table() {
        let (sql, hints) =
            strip_tablet_hints("SELECT `a` FROM `db`.`t` TABLET(10005, 10007) WHERE `a` > 1")
                .unwrap();
        assert_eq!(sql, "SELECT `a` FROM `db`.`t`  WHERE `a` > 1");
        assert_eq!(
            hints,
            vec![Hint {
                name: vec!["db".into(), "t".into()],
                tablets: vec![10005, 10007],
                partitions: Vec::new(),
            }]
        );
        let (sql, hints) =
            strip_tablet_hints("select * from t PARTITION (p1, P2) TABLET(3) x").unwrap();
        assert_eq!(
            sql.split_whitespace().collect::<Vec<_>>(),
            ["select", "*", "from", "t", "x"]
        );
        assert_eq!(hints.len(), 2);
        assert!(hints.iter().all(|h| h.name == ["t"]));
        assert_eq!(hints[0].partitions, ["p1", "P2"]);
        assert_eq!(hints[1].tablets, [3]);
        let (sql, hints) =
            strip_tablet_hints("select * from d.t partition p2 where a = 1").unwrap();
        assert_eq!(hints[0].name, ["d", "t"]);
        assert_eq!(hints[0].partitions, ["p2"]);
        assert!(!sql.to_ascii_lowercase().contains("partition"), "{sql}");
        // A window's PARTITION BY is not a partition clause.
        let (sql, hints) =
            strip_tablet_hints("select row_number() over (partition by a) from t").unwrap();
        assert!(hints.is_empty() && sql.contains("partition by"), "{sql}");
        assert!(strip_tablet_hints("select * from t TABLET(x)").is_err());
        let (sql, _) = strip_tablet_hints(r"select 'it\'s', 'a\\b', 'q''q' from t").unwrap();
        assert_eq!(sql, r"select 'it\'s', 'a\\b', 'q\'q' from t");
        let (sql, hints) = strip_tablet_hints("select 'TABLET(1)' from t").unwrap();
        assert!(hints.is_empty());
        assert!(sql.contains("'TABLET(1)'"));
    }
}
