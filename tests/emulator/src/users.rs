//! `CREATE USER` and `DROP USER` as Doris parses them, and what of them the emulator runs.
//!
//! Users are global in the emulator (one password per name, any client host), so a clause
//! whose effect it cannot honour is refused by name rather than dropped: a host other than
//! `'%'` (Doris would refuse other clients), a password hash (`IDENTIFIED BY PASSWORD`),
//! `DEFAULT ROLE` (no roles), and password policies (`PASSWORD_EXPIRE`,
//! `FAILED_LOGIN_ATTEMPTS`, `PASSWORD_LOCK_TIME`, `PASSWORD_HISTORY`, `ACCOUNT_LOCK`).
//! `COMMENT '…'` is accepted: nothing the emulator answers shows a user's comment.

use sqlparser::tokenizer::Token;

use crate::error::EmulatorError;

/// What `CREATE USER` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateUser {
    /// The user name.
    pub user: String,
    /// The password (empty without `IDENTIFIED BY`).
    pub password: String,
}

fn refuse(what: &str) -> EmulatorError {
    EmulatorError::Analysis(format!(
        "the Doris emulator does not run CREATE USER with {what} yet"
    ))
}

fn syntax(statement: &str) -> EmulatorError {
    EmulatorError::Analysis(format!("Syntax error in {statement}"))
}

/// The statement's tokens without whitespace and comments.
fn tokens(stmt: &str) -> Result<Vec<Token>, EmulatorError> {
    Ok(crate::tokens::tokenize(stmt)
        .map_err(EmulatorError::Analysis)?
        .into_iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect())
}

fn word_is(token: Option<&Token>, keyword: &str) -> bool {
    matches!(token, Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(keyword))
}

/// A name as written: a word, or a quoted string.
fn name(token: Option<&Token>) -> Option<String> {
    match token? {
        Token::Word(w) => Some(w.value.clone()),
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Some(s.clone()),
        _ => None,
    }
}

fn host_refused(statement: &str) -> EmulatorError {
    EmulatorError::Analysis(format!(
        "the Doris emulator does not run {statement} for a host other than '%' yet"
    ))
}

/// `'user'[@'host' | @('domain')]` at `at`; returns the user and the index after it. A
/// host other than `%` is refused (the emulator's users match every client).
fn user_identity(
    tokens: &[Token],
    mut at: usize,
    statement: &str,
) -> Result<(String, usize), EmulatorError> {
    let mut user = name(tokens.get(at)).ok_or_else(|| syntax(statement))?;
    at += 1;
    // The MySQL tokenizer reads an unquoted `jack1@` as one word, and `@(` or `@host` as a
    // word of its own: the `@` is the separator either way.
    let separated = if tokens.get(at) == Some(&Token::AtSign) {
        at += 1;
        true
    } else if let Some(bare) = user.strip_suffix('@') {
        user = bare.to_owned();
        true
    } else if let Some(Token::Word(w)) = tokens.get(at)
        && let Some(rest) = w.value.strip_prefix('@')
    {
        at += 1;
        match rest {
            "" => true,
            "(" => {
                // `@('domain')`: the domain, then `)`.
                let domain = name(tokens.get(at)).ok_or_else(|| syntax(statement))?;
                if tokens.get(at + 1) != Some(&Token::RParen) {
                    return Err(syntax(statement));
                }
                let _ = domain;
                return Err(host_refused(statement));
            }
            "%" => false,
            _ => return Err(host_refused(statement)),
        }
    } else {
        false
    };
    if separated {
        let host = match tokens.get(at) {
            Some(Token::LParen) => {
                let domain = name(tokens.get(at + 1)).ok_or_else(|| syntax(statement))?;
                if tokens.get(at + 2) != Some(&Token::RParen) {
                    return Err(syntax(statement));
                }
                at += 2;
                format!("({domain})")
            }
            other => name(other).ok_or_else(|| syntax(statement))?,
        };
        at += 1;
        if host != "%" {
            return Err(host_refused(statement));
        }
    }
    Ok((user, at))
}

/// Parses `CREATE USER [IF NOT EXISTS] user_identity [IDENTIFIED BY 'pw'] [COMMENT '…']`.
pub fn parse_create_user(stmt: &str) -> Result<CreateUser, EmulatorError> {
    let t = tokens(stmt)?;
    let mut at = 2;
    if word_is(t.get(2), "IF") {
        if !(word_is(t.get(3), "NOT") && word_is(t.get(4), "EXISTS")) {
            return Err(syntax("CREATE USER"));
        }
        at = 5;
    }
    let (user, mut at) = user_identity(&t, at, "CREATE USER")?;
    let mut password = String::new();
    while at < t.len() {
        if t[at] == Token::SemiColon {
            break;
        }
        if word_is(t.get(at), "IDENTIFIED") && word_is(t.get(at + 1), "BY") {
            if word_is(t.get(at + 2), "PASSWORD") {
                return Err(refuse("a password hash (IDENTIFIED BY PASSWORD)"));
            }
            password = match t.get(at + 2) {
                Some(Token::SingleQuotedString(s) | Token::DoubleQuotedString(s)) => s.clone(),
                _ => return Err(syntax("CREATE USER")),
            };
            at += 3;
        } else if word_is(t.get(at), "COMMENT") {
            match t.get(at + 1) {
                Some(Token::SingleQuotedString(_) | Token::DoubleQuotedString(_)) => at += 2,
                _ => return Err(syntax("CREATE USER")),
            }
        } else if word_is(t.get(at), "DEFAULT") && word_is(t.get(at + 1), "ROLE") {
            return Err(refuse("DEFAULT ROLE (roles are not emulated)"));
        } else if let Some(Token::Word(w)) = t.get(at) {
            return Err(refuse(&format!(
                "{} (password policies are not emulated)",
                w.value.to_ascii_uppercase()
            )));
        } else {
            return Err(syntax("CREATE USER"));
        }
    }
    Ok(CreateUser { user, password })
}

/// Parses `DROP USER [IF EXISTS] user_identity`; returns the user.
pub fn parse_drop_user(stmt: &str) -> Result<String, EmulatorError> {
    let t = tokens(stmt)?;
    let at = if word_is(t.get(2), "IF") && word_is(t.get(3), "EXISTS") {
        4
    } else {
        2
    };
    let (user, at) = user_identity(&t, at, "DROP USER")?;
    match t.get(at) {
        None | Some(Token::SemiColon) => Ok(user),
        _ => Err(syntax("DROP USER")),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn created(sql: &str) -> Result<(String, String), String> {
        parse_create_user(sql)
            .map(|c| (c.user, c.password))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn the_forms_the_emulator_runs() {
        assert_eq!(
            created("CREATE USER 'jack'"),
            Ok(("jack".into(), String::new()))
        );
        assert_eq!(
            created("CREATE USER IF NOT EXISTS 'u'@'%' IDENTIFIED BY 'p w'"),
            Ok(("u".into(), "p w".into()))
        );
        assert_eq!(
            created("CREATE USER jack8 COMMENT \"this is my first user\""),
            Ok(("jack8".into(), String::new()))
        );
        assert_eq!(
            created("create user `x` identified by 'a''b' comment 'c'"),
            Ok(("x".into(), "a'b".into()))
        );
        assert_eq!(
            parse_drop_user("DROP USER IF EXISTS 'jack'@'%'").unwrap(),
            "jack"
        );
        assert_eq!(parse_drop_user("drop user jack8").unwrap(), "jack8");
    }

    #[test]
    fn clauses_the_emulator_cannot_honour_are_refused_by_name() {
        for (sql, named) in [
            (
                "CREATE USER jack1@'172.10.1.10' IDENTIFIED BY '123456'",
                "host",
            ),
            (
                "CREATE USER 'jack4'@('csding') IDENTIFIED BY '12345'",
                "host",
            ),
            (
                "CREATE USER jack2 IDENTIFIED BY PASSWORD '*6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9'",
                "password hash",
            ),
            (
                "CREATE USER 'jack5'@'%' IDENTIFIED BY '12345' DEFAULT ROLE 'admin'",
                "DEFAULT ROLE",
            ),
            (
                "CREATE USER 'jack7' IDENTIFIED BY '12345' PASSWORD_HISTORY 8",
                "PASSWORD_HISTORY",
            ),
            (
                "CREATE USER 'jack6' IDENTIFIED BY '12345' FAILED_LOGIN_ATTEMPTS 3",
                "FAILED_LOGIN_ATTEMPTS",
            ),
        ] {
            let message = created(sql).unwrap_err();
            assert!(
                message.contains("does not run") && message.contains(named),
                "{sql}: {message}"
            );
            // The password is never part of the refusal.
            assert!(
                !message.contains("12345") && !message.contains("123456"),
                "{message}"
            );
        }
    }
}
