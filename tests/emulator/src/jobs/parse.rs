//! Takes the streaming-job statements apart (their syntax: docs/streaming-jobs.md):
//!
//! ```text
//! CREATE JOB <name> [PROPERTIES (...)] ON STREAMING [PROPERTIES (...)] [COMMENT '...'] DO <insert>
//!     (PROPERTIES once, before or after ON STREAMING)
//! ALTER JOB <name> [PROPERTIES (...)] [<insert>]
//! PAUSE JOB WHERE jobname = '...'      RESUME JOB WHERE jobname = '...'
//! DROP JOB [IF EXISTS] WHERE jobname = '...'
//! <insert> = INSERT INTO [db.]table [(cols)] SELECT * FROM S3 (...)
//! ```

use sqlparser::tokenizer::{Token, Word};

use crate::tokens::{render, tokenize};

/// `INSERT INTO … SELECT * FROM S3(…)`, as a task runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InsertSpec {
    /// The statement as written (the job's `ExecuteSql`).
    pub sql: String,
    /// `[db.]table` as written.
    pub table: Vec<String>,
    /// Target columns, when listed.
    pub columns: Option<Vec<String>>,
    /// The S3 table function's properties, keys lower-cased, in order.
    pub source: Vec<(String, String)>,
}

/// A parsed job statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobStatement {
    /// `CREATE JOB`.
    Create {
        /// Job name.
        name: String,
        /// Job properties in order.
        properties: Vec<(String, String)>,
        /// `COMMENT`.
        comment: Option<String>,
        /// What each task runs.
        insert: InsertSpec,
    },
    /// `ALTER JOB`.
    Alter {
        /// Job name.
        name: String,
        /// Properties to set.
        properties: Vec<(String, String)>,
        /// A new INSERT.
        insert: Option<InsertSpec>,
    },
    /// `PAUSE JOB`.
    Pause(String),
    /// `RESUME JOB`.
    Resume(String),
    /// `DROP JOB`.
    Drop {
        /// Job name.
        name: String,
        /// `IF EXISTS`.
        if_exists: bool,
    },
}

/// Tokens without whitespace, with a cursor.
struct Cursor {
    tokens: Vec<Token>,
    pos: usize,
}

impl Cursor {
    fn new(sql: &str) -> Result<Self, String> {
        let tokens = tokenize(sql)?
            .into_iter()
            .filter(|t| !matches!(t, Token::Whitespace(_) | Token::SemiColon))
            .collect();
        Ok(Self { tokens, pos: 0 })
    }

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn peek_keyword(&self, keyword: &str) -> bool {
        matches!(self.peek(), Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(keyword))
    }

    fn keyword(&mut self, keyword: &str) -> Result<(), String> {
        if self.peek_keyword(keyword) {
            self.pos += 1;
            Ok(())
        } else {
            Err(format!("syntax error: expected {keyword}{}", self.near()))
        }
    }

    fn eat(&mut self, keyword: &str) -> bool {
        let found = self.peek_keyword(keyword);
        if found {
            self.pos += 1;
        }
        found
    }

    fn token(&mut self, expected: &Token) -> Result<(), String> {
        if self.peek() == Some(expected) {
            self.pos += 1;
            Ok(())
        } else {
            Err(format!("syntax error: expected {expected}{}", self.near()))
        }
    }

    fn near(&self) -> String {
        match self.peek() {
            Some(t) => format!(" near '{t}'"),
            None => " at the end".into(),
        }
    }

    fn ident(&mut self, what: &str) -> Result<String, String> {
        match self.peek() {
            Some(Token::Word(Word { value, .. })) => {
                let v = value.clone();
                self.pos += 1;
                Ok(v)
            }
            _ => Err(format!(
                "syntax error: expected a {what} name{}",
                self.near()
            )),
        }
    }

    fn string(&mut self, what: &str) -> Result<String, String> {
        match self.peek() {
            Some(Token::SingleQuotedString(s) | Token::DoubleQuotedString(s)) => {
                let v = s.clone();
                self.pos += 1;
                Ok(v)
            }
            _ => Err(format!(
                "syntax error: expected a quoted {what}{}",
                self.near()
            )),
        }
    }

    /// A property value: a quoted string, a number or a bare word.
    fn value(&mut self) -> Result<String, String> {
        let value = match self.peek() {
            Some(Token::SingleQuotedString(s) | Token::DoubleQuotedString(s)) => s.clone(),
            Some(Token::Number(n, _)) => n.clone(),
            Some(Token::Word(w)) => w.value.clone(),
            Some(Token::Minus) => {
                self.pos += 1;
                return self.value().map(|v| format!("-{v}"));
            }
            _ => {
                return Err(format!(
                    "syntax error: expected a property value{}",
                    self.near()
                ));
            }
        };
        self.pos += 1;
        Ok(value)
    }

    /// `( 'k' = v [, …] )`, keys lower-cased.
    fn properties(&mut self) -> Result<Vec<(String, String)>, String> {
        self.token(&Token::LParen)?;
        let mut out: Vec<(String, String)> = Vec::new();
        if self.peek() == Some(&Token::RParen) {
            self.pos += 1;
            return Ok(out);
        }
        loop {
            let key = self.string("property key")?.to_ascii_lowercase();
            self.token(&Token::Eq)?;
            let value = self.value()?;
            match out.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = value,
                None => out.push((key, value)),
            }
            if self.peek() == Some(&Token::Comma) {
                self.pos += 1;
                continue;
            }
            self.token(&Token::RParen)?;
            return Ok(out);
        }
    }

    fn end(&self) -> Result<(), String> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(format!("syntax error: unexpected text{}", self.near())),
        }
    }

    /// `WHERE jobname = '…'`.
    fn where_jobname(&mut self) -> Result<String, String> {
        self.keyword("WHERE")?;
        let key = self.ident("column")?;
        if !key.eq_ignore_ascii_case("jobname") {
            return Err("a job is named with WHERE jobname = '<name>'".into());
        }
        self.token(&Token::Eq)?;
        self.string("job name")
    }

    fn insert(&mut self) -> Result<InsertSpec, String> {
        let start = self.pos;
        self.keyword("INSERT")?;
        self.keyword("INTO")?;
        let mut table = vec![self.ident("table")?];
        while self.peek() == Some(&Token::Period) {
            self.pos += 1;
            table.push(self.ident("table")?);
        }
        let columns = if self.peek() == Some(&Token::LParen) {
            self.pos += 1;
            let mut columns = vec![self.ident("column")?];
            while self.peek() == Some(&Token::Comma) {
                self.pos += 1;
                columns.push(self.ident("column")?);
            }
            self.token(&Token::RParen)?;
            Some(columns)
        } else {
            None
        };
        self.keyword("SELECT")?;
        if self.peek() != Some(&Token::Mul) {
            return Err(
                "the emulator's streaming jobs run INSERT INTO <table> SELECT * FROM S3(...) only"
                    .into(),
            );
        }
        self.pos += 1;
        self.keyword("FROM")?;
        let function = self.ident("table function")?;
        if !function.eq_ignore_ascii_case("S3") {
            return Err(format!(
                "a streaming job reads FROM S3(...), not {function}(...)"
            ));
        }
        let source = self.properties()?;
        let spaced: Vec<Token> = self.tokens[start..self.pos]
            .iter()
            .flat_map(|t| {
                [
                    t.clone(),
                    Token::Whitespace(sqlparser::tokenizer::Whitespace::Space),
                ]
            })
            .collect();
        let sql = render(&spaced[..spaced.len().saturating_sub(1)])
            .replace(" ( ", "(")
            .replace(" ,", ",")
            .replace(" )", ")")
            .replace(" . ", ".");
        Ok(InsertSpec {
            sql,
            table,
            columns,
            source,
        })
    }
}

/// Whether `sql` is a job statement (`CREATE|ALTER|PAUSE|RESUME|DROP JOB`).
pub fn is_job_statement(sql: &str) -> bool {
    let mut words = sql.split_whitespace();
    matches!(
        (
            words.next().map(str::to_ascii_uppercase).as_deref(),
            words.next().map(str::to_ascii_uppercase).as_deref()
        ),
        (
            Some("CREATE" | "ALTER" | "PAUSE" | "RESUME" | "DROP"),
            Some("JOB")
        )
    )
}

/// Parses a job statement.
pub fn parse(sql: &str) -> Result<JobStatement, String> {
    let mut c = Cursor::new(sql)?;
    let verb = c.ident("statement")?.to_ascii_uppercase();
    c.keyword("JOB")?;
    let statement = match verb.as_str() {
        "CREATE" => {
            let name = c.ident("job")?;
            // PROPERTIES stands before `ON STREAMING` in Doris's regression suites and after
            // it in Doris's documentation: both are accepted, once. COMMENT follows the
            // trigger (`ON STREAMING`), as in Doris's grammar for `ON SCHEDULE`.
            let mut properties = if c.eat("PROPERTIES") {
                Some(c.properties()?)
            } else {
                None
            };
            c.keyword("ON")?;
            if !c.eat("STREAMING") {
                return Err(
                    "the emulator runs streaming jobs only (CREATE JOB … ON STREAMING DO INSERT …)"
                        .into(),
                );
            }
            if properties.is_none() && c.eat("PROPERTIES") {
                properties = Some(c.properties()?);
            }
            let comment = if c.eat("COMMENT") {
                Some(c.string("comment")?)
            } else {
                None
            };
            let properties = properties.unwrap_or_default();
            c.keyword("DO")?;
            let insert = c.insert()?;
            JobStatement::Create {
                name,
                properties,
                comment,
                insert,
            }
        }
        "ALTER" => {
            let name = c.ident("job")?;
            let properties = if c.eat("PROPERTIES") {
                c.properties()?
            } else {
                Vec::new()
            };
            let insert = if c.peek_keyword("INSERT") {
                Some(c.insert()?)
            } else {
                None
            };
            if properties.is_empty() && insert.is_none() {
                return Err("ALTER JOB needs PROPERTIES or an INSERT statement".into());
            }
            JobStatement::Alter {
                name,
                properties,
                insert,
            }
        }
        "PAUSE" => JobStatement::Pause(c.where_jobname()?),
        "RESUME" => JobStatement::Resume(c.where_jobname()?),
        "DROP" => {
            let if_exists = if c.eat("IF") {
                c.keyword("EXISTS")?;
                true
            } else {
                false
            };
            JobStatement::Drop {
                name: c.where_jobname()?,
                if_exists,
            }
        }
        other => return Err(format!("unknown job statement {other} JOB")),
    };
    c.end()?;
    Ok(statement)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_with_properties_comment_and_s3_source() {
        let sql = "CREATE JOB my_job PROPERTIES (\"s3.max_batch_files\" = \"1\", 'session.insert_max_filter_ratio' = 0.5) \
                   ON STREAMING COMMENT 'it''s nightly' DO INSERT INTO db.t (a, b) SELECT * FROM S3 (\
                   \"uri\" = \"s3://bucket/in/example_[0-1].csv\", \"format\" = \"csv\", \"S3.Secret_Key\" = 'x');";
        let JobStatement::Create {
            name,
            properties,
            comment,
            insert,
        } = parse(sql).unwrap()
        else {
            panic!("not a create");
        };
        assert_eq!(name, "my_job");
        assert_eq!(
            properties,
            [
                ("s3.max_batch_files".into(), "1".into()),
                ("session.insert_max_filter_ratio".into(), "0.5".into())
            ]
        );
        assert_eq!(comment.as_deref(), Some("it's nightly"));
        assert_eq!(insert.table, ["db", "t"]);
        assert_eq!(insert.columns, Some(vec!["a".into(), "b".into()]));
        assert_eq!(insert.source[0].1, "s3://bucket/in/example_[0-1].csv");
        assert_eq!(insert.source[2].0, "s3.secret_key");
        assert!(
            insert
                .sql
                .starts_with("INSERT INTO db.t(a, b) SELECT * FROM S3(\"uri\" = "),
            "{}",
            insert.sql
        );
    }

    /// The clause orders Doris's documentation and regression suites write: PROPERTIES
    /// before `ON STREAMING` (test_streaming_insert_job.groovy) or after it
    /// (CREATE-STREAMING-JOB.md), COMMENT after it; anything else is a syntax error.
    #[test]
    fn clause_orders_of_doris_docs_and_suites() {
        let insert = "DO INSERT INTO t SELECT * FROM S3('uri' = 's3://b/k', 'format' = 'csv')";
        let expected = |sql: &str| {
            let JobStatement::Create {
                properties,
                comment,
                ..
            } = parse(sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
            else {
                panic!("not a create: {sql}")
            };
            (properties, comment)
        };
        let props = vec![("max_interval".to_string(), "5".to_string())];
        for sql in [
            format!(
                "CREATE JOB j PROPERTIES ('max_interval' = '5') ON STREAMING COMMENT 'c' {insert}"
            ),
            format!(
                "CREATE JOB j ON STREAMING PROPERTIES ('max_interval' = '5') COMMENT 'c' {insert}"
            ),
        ] {
            assert_eq!(
                expected(&sql),
                (props.clone(), Some("c".to_string())),
                "{sql}"
            );
        }
        assert_eq!(
            expected(&format!("CREATE JOB j ON STREAMING {insert}")),
            (Vec::new(), None)
        );
        for wrong in [
            format!("CREATE JOB j COMMENT 'c' ON STREAMING {insert}"),
            format!(
                "CREATE JOB j ON STREAMING COMMENT 'c' PROPERTIES ('max_interval' = '5') {insert}"
            ),
            format!(
                "CREATE JOB j PROPERTIES ('a' = '1') ON STREAMING PROPERTIES ('b' = '2') {insert}"
            ),
        ] {
            let error = parse(&wrong).unwrap_err();
            assert!(error.starts_with("syntax error"), "{wrong}: {error}");
        }
    }

    #[test]
    fn control_and_alter_statements() {
        assert_eq!(
            parse("PAUSE JOB WHERE jobname = 'j'").unwrap(),
            JobStatement::Pause("j".into())
        );
        assert_eq!(
            parse("resume job where JOBNAME = \"j\"").unwrap(),
            JobStatement::Resume("j".into())
        );
        assert_eq!(
            parse("DROP JOB IF EXISTS WHERE jobname = 'j'").unwrap(),
            JobStatement::Drop {
                name: "j".into(),
                if_exists: true
            }
        );
        let JobStatement::Alter {
            properties, insert, ..
        } = parse("ALTER JOB `j` PROPERTIES ('max_interval' = '5')").unwrap()
        else {
            panic!()
        };
        assert_eq!(properties, [("max_interval".into(), "5".into())]);
        assert!(insert.is_none());
        assert!(parse("ALTER JOB j").is_err());
        assert!(parse("PAUSE JOB j").is_err());
        assert!(
            parse("CREATE JOB j ON STREAMING DO INSERT INTO t SELECT a FROM S3('uri'='s3://b/k')")
                .unwrap_err()
                .contains("SELECT *")
        );
        assert!(is_job_statement("  create   job x"));
        assert!(!is_job_statement("CREATE TABLE job"));
    }
}
