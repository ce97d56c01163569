//! The emulator's own reading of `CREATE TABLE` in Doris syntax.
//!
//! The connector reads tables with doris-sql's `parse_show_create`; if the emulator created
//! its tables with that same parser, a defect in it would be invisible from both sides. So
//! the server side is written apart: sqlparser's tokenizer (MySQL dialect: backtick names,
//! both quote styles, comments) and a recursive descent over Doris's grammar, with a type
//! parser of its own. Where doris-sql is tolerant (it reads what any release prints and
//! skips what it does not know), this one is strict, as a server is: a clause the emulator
//! does not run (`ROLLUP`, an `INDEX`, a generated column, per-partition properties, batch
//! partition ranges, `AGG_STATE`) is refused by name, never accepted as a no-op.
//! `tests/emulator/tests/faces/ddl_differential.rs` runs the corpus's and the tests' DDL
//! through both parsers and compares what they read.

use doris_sql::{
    Aggregation, Buckets, Column, ColumnDefault, Distribution, DorisType, KeyModel, Partition,
    PartitionKind, PartitionValues, Partitioning, SequenceColumn, StructField, TableSchema,
};
use sqlparser::dialect::MySqlDialect;
use sqlparser::tokenizer::{Token, Tokenizer};

use crate::error::EmulatorError;

/// Deeper type nesting is refused (a guard against stack exhaustion).
const MAX_NESTING: usize = 32;

/// Parses one `CREATE [EXTERNAL] TABLE [IF NOT EXISTS] [db.]name (…) …` statement.
pub fn parse_create_table(sql: &str) -> Result<TableSchema, EmulatorError> {
    let mut p = Parser::new(sql)?;
    let table = p.statement()?;
    p.eat(&Token::SemiColon);
    if let Some(t) = p.peek() {
        return Err(syntax(format!("unexpected {t} after the statement")));
    }
    Ok(table)
}

/// A type as Doris's DDL spells it (`ARRAY<DECIMAL(10, 2)>`), read by this module's parser.
pub fn parse_type(text: &str) -> Result<DorisType, EmulatorError> {
    let mut p = Parser::new(text)?;
    let ty = p.doris_type(0)?;
    if let Some(t) = p.peek() {
        return Err(syntax(format!("unexpected {t} after the type")));
    }
    Ok(ty)
}

fn syntax(message: impl std::fmt::Display) -> EmulatorError {
    EmulatorError::Analysis(format!("Syntax error in CREATE TABLE: {message}"))
}

fn not_run(what: &str) -> EmulatorError {
    EmulatorError::Analysis(format!(
        "the Doris emulator does not run {what} in CREATE TABLE"
    ))
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn new(sql: &str) -> Result<Self, EmulatorError> {
        let tokens = Tokenizer::new(&MySqlDialect {}, sql)
            .tokenize()
            .map_err(|e| syntax(e.message))?
            .into_iter()
            .filter(|t| !matches!(t, Token::Whitespace(_)))
            .flat_map(|t| match t {
                // `ARRAY<ARRAY<INT>>`: the tokenizer reads the two closing brackets as a shift.
                Token::ShiftRight => vec![Token::Gt, Token::Gt],
                other => vec![other],
            })
            .collect();
        Ok(Self { tokens, at: 0 })
    }

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn eat(&mut self, token: &Token) -> bool {
        if self.peek() == Some(token) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &Token) -> Result<(), EmulatorError> {
        if self.eat(token) {
            return Ok(());
        }
        Err(syntax(match self.peek() {
            Some(t) => format!("expected {token}, found {t}"),
            None => format!("expected {token} at the end"),
        }))
    }

    /// The next token is the unquoted word `kw` (any case).
    fn is_keyword(&self, kw: &str) -> bool {
        matches!(self.peek(), Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(kw))
    }

    fn eat_keyword(&mut self, kw: &str) -> bool {
        let found = self.is_keyword(kw);
        if found {
            self.at += 1;
        }
        found
    }

    fn expect_keyword(&mut self, kw: &str) -> Result<(), EmulatorError> {
        if self.eat_keyword(kw) {
            Ok(())
        } else {
            Err(syntax(format!("expected {kw}")))
        }
    }

    /// An identifier, quoted with backticks or bare.
    fn name(&mut self) -> Result<String, EmulatorError> {
        match self.next() {
            Some(Token::Word(w)) if matches!(w.quote_style, None | Some('`')) => Ok(w.value),
            Some(t) => Err(syntax(format!("expected a name, found {t}"))),
            None => Err(syntax("expected a name at the end")),
        }
    }

    /// A string literal in either quote style.
    fn string(&mut self) -> Result<String, EmulatorError> {
        match self.next() {
            Some(Token::SingleQuotedString(s) | Token::DoubleQuotedString(s)) => Ok(s),
            _ => Err(syntax("expected a string")),
        }
    }

    fn number(&mut self) -> Result<u32, EmulatorError> {
        match self.next() {
            Some(Token::Number(n, _)) => n
                .parse()
                .map_err(|_| syntax(format!("{n} is not a small whole number"))),
            _ => Err(syntax("expected a number")),
        }
    }

    /// `(name, …)`.
    fn name_list(&mut self) -> Result<Vec<String>, EmulatorError> {
        self.expect(&Token::LParen)?;
        let mut names = vec![self.name()?];
        while self.eat(&Token::Comma) {
            names.push(self.name()?);
        }
        self.expect(&Token::RParen)?;
        Ok(names)
    }

    fn statement(&mut self) -> Result<TableSchema, EmulatorError> {
        self.expect_keyword("CREATE")?;
        if self.is_keyword("EXTERNAL") {
            return Err(not_run("an EXTERNAL table"));
        }
        self.expect_keyword("TABLE")?;
        if self.eat_keyword("IF") {
            self.expect_keyword("NOT")?;
            self.expect_keyword("EXISTS")?;
        }
        let mut parts = vec![self.name()?];
        while self.eat(&Token::Period) {
            parts.push(self.name()?);
        }
        if parts.len() > 2 {
            return Err(not_run("a catalog-qualified name"));
        }
        let name = parts.pop().unwrap_or_default();
        let database = parts.pop();
        let mut columns = self.columns()?;
        let mut table = TableSchema {
            database,
            name,
            columns: Vec::new(),
            key_model: None,
            key_columns: Vec::new(),
            merge_on_write: false,
            sequence: None,
            partitioning: None,
            distribution: None,
            comment: None,
            properties: Vec::new(),
        };
        self.clauses(&mut table)?;
        for key in &table.key_columns {
            if !columns.iter().any(|c| c.name.eq_ignore_ascii_case(key)) {
                return Err(EmulatorError::Analysis(format!(
                    "Key column {key} is not a column of the table"
                )));
            }
        }
        for c in &mut columns {
            c.is_key = table
                .key_columns
                .iter()
                .any(|k| k.eq_ignore_ascii_case(&c.name));
        }
        table.columns = columns;
        let merge_on_write = table.key_model == Some(KeyModel::Unique)
            && table
                .property("enable_unique_key_merge_on_write")
                .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        let sequence = match (
            table.property("function_column.sequence_col"),
            table.property("function_column.sequence_type"),
        ) {
            (Some(column), _) => Some(SequenceColumn::Mapped(column.to_owned())),
            (None, Some(ty)) => Some(SequenceColumn::Hidden(parse_type(ty)?)),
            (None, None) => None,
        };
        table.merge_on_write = merge_on_write;
        table.sequence = sequence;
        Ok(table)
    }

    fn columns(&mut self) -> Result<Vec<Column>, EmulatorError> {
        self.expect(&Token::LParen)?;
        let mut columns = Vec::new();
        loop {
            if self.is_keyword("INDEX") && !self.next_is_type() {
                return Err(not_run("an INDEX"));
            }
            columns.push(self.column()?);
            if self.eat(&Token::RParen) {
                break;
            }
            self.expect(&Token::Comma)?;
        }
        Ok(columns)
    }

    /// Whether the token after the current one starts a type (a column named `index`).
    fn next_is_type(&self) -> bool {
        let Some(Token::Word(w)) = self.tokens.get(self.at + 1) else {
            return false;
        };
        let word = w.value.to_ascii_uppercase();
        w.quote_style.is_none()
            && (scalar_type(&word, &[]).is_ok()
                || ["ARRAY", "MAP", "STRUCT"].contains(&word.as_str()))
    }

    fn column(&mut self) -> Result<Column, EmulatorError> {
        let name = self.name()?;
        let ty = self.doris_type(0)?;
        let mut column = Column {
            name,
            ty,
            nullable: true,
            is_key: false,
            aggregation: None,
            default: None,
            auto_increment: false,
            generated: false,
            comment: None,
        };
        while !matches!(self.peek(), Some(Token::Comma | Token::RParen) | None) {
            let Some(Token::Word(w)) = self.next() else {
                return Err(syntax(format!(
                    "unexpected text in the definition of column {}",
                    column.name
                )));
            };
            let word = w.value.to_ascii_uppercase();
            match word.as_str() {
                "NULL" => column.nullable = true,
                "NOT" => {
                    self.expect_keyword("NULL")?;
                    column.nullable = false;
                }
                "AUTO_INCREMENT" => {
                    column.auto_increment = true;
                    if self.eat(&Token::LParen) {
                        self.number()?;
                        self.expect(&Token::RParen)?;
                    }
                }
                "DEFAULT" => column.default = Some(self.default_value()?),
                "COMMENT" => column.comment = Some(self.string()?),
                "ON" => {
                    self.expect_keyword("UPDATE")?;
                    self.expect_keyword("CURRENT_TIMESTAMP")?;
                    if self.eat(&Token::LParen) {
                        self.number()?;
                        self.expect(&Token::RParen)?;
                    }
                }
                "GENERATED" | "AS" => return Err(not_run("a generated column")),
                other => match Aggregation::parse(other) {
                    Some(Aggregation::Generic) => {
                        return Err(not_run("the GENERIC aggregation"));
                    }
                    Some(a) => column.aggregation = Some(a),
                    None if other == "NONE" => {}
                    None => {
                        return Err(syntax(format!(
                            "unknown attribute {} of column {}",
                            w.value, column.name
                        )));
                    }
                },
            }
        }
        Ok(column)
    }

    fn default_value(&mut self) -> Result<ColumnDefault, EmulatorError> {
        Ok(match self.next() {
            Some(Token::SingleQuotedString(s) | Token::DoubleQuotedString(s)) => {
                ColumnDefault::Text(s)
            }
            Some(Token::Number(n, _)) => ColumnDefault::Text(n),
            Some(Token::Minus) => match self.next() {
                Some(Token::Number(n, _)) => ColumnDefault::Text(format!("-{n}")),
                _ => return Err(syntax("expected a number after '-' in DEFAULT")),
            },
            Some(Token::Word(w)) if w.value.eq_ignore_ascii_case("NULL") => ColumnDefault::Null,
            Some(Token::Word(w)) if w.value.eq_ignore_ascii_case("CURRENT_TIMESTAMP") => {
                if self.eat(&Token::LParen) {
                    self.number()?;
                    self.expect(&Token::RParen)?;
                }
                ColumnDefault::CurrentTimestamp
            }
            Some(Token::Word(w)) => {
                // BITMAP_EMPTY, PI, E, CURRENT_DATE and the like, as written.
                if self.eat(&Token::LParen) {
                    self.expect(&Token::RParen)?;
                    ColumnDefault::Expr(format!("{}()", w.value))
                } else {
                    ColumnDefault::Expr(w.value)
                }
            }
            _ => return Err(syntax("expected a DEFAULT value")),
        })
    }

    /// A column type: a scalar type with its arguments, or ARRAY/MAP/STRUCT of types.
    fn doris_type(&mut self, depth: usize) -> Result<DorisType, EmulatorError> {
        if depth > MAX_NESTING {
            return Err(syntax("types are nested too deeply"));
        }
        let word = match self.next() {
            Some(Token::Word(w)) if w.quote_style.is_none() => w.value.to_ascii_uppercase(),
            _ => return Err(syntax("expected a type")),
        };
        match word.as_str() {
            "ARRAY" => {
                self.expect(&Token::Lt)?;
                let element = self.doris_type(depth + 1)?;
                let element_nullable = self.nullability()?;
                self.expect(&Token::Gt)?;
                Ok(DorisType::Array {
                    element: Box::new(element),
                    element_nullable,
                })
            }
            "MAP" => {
                self.expect(&Token::Lt)?;
                let key = self.doris_type(depth + 1)?;
                self.nullability()?;
                self.expect(&Token::Comma)?;
                let value = self.doris_type(depth + 1)?;
                self.nullability()?;
                self.expect(&Token::Gt)?;
                Ok(DorisType::Map {
                    key: Box::new(key),
                    value: Box::new(value),
                })
            }
            "STRUCT" => {
                self.expect(&Token::Lt)?;
                let mut fields = Vec::new();
                loop {
                    let name = self.name()?;
                    self.expect(&Token::Colon)?;
                    let ty = self.doris_type(depth + 1)?;
                    let nullable = self.nullability()?;
                    let comment = if self.eat_keyword("COMMENT") {
                        Some(self.string()?)
                    } else {
                        None
                    };
                    fields.push(StructField {
                        name,
                        ty,
                        nullable,
                        comment,
                    });
                    if self.eat(&Token::Gt) {
                        break;
                    }
                    self.expect(&Token::Comma)?;
                }
                Ok(DorisType::Struct { fields })
            }
            "AGG_STATE" => Err(not_run("an AGG_STATE column")),
            _ => {
                let mut args: Vec<Option<u32>> = Vec::new();
                if self.eat(&Token::LParen) {
                    loop {
                        if self.eat(&Token::Mul) {
                            args.push(None);
                        } else {
                            args.push(Some(self.number()?));
                        }
                        if self.eat(&Token::RParen) {
                            break;
                        }
                        self.expect(&Token::Comma)?;
                    }
                }
                scalar_type(&word, &args)
            }
        }
    }

    /// An optional `NULL` / `NOT NULL` after a nested type (nullable when absent).
    fn nullability(&mut self) -> Result<bool, EmulatorError> {
        if self.eat_keyword("NOT") {
            self.expect_keyword("NULL")?;
            return Ok(false);
        }
        self.eat_keyword("NULL");
        Ok(true)
    }

    fn clauses(&mut self, table: &mut TableSchema) -> Result<(), EmulatorError> {
        while let Some(token) = self.peek().cloned() {
            let Token::Word(w) = token else {
                if token == Token::SemiColon {
                    return Ok(());
                }
                return Err(syntax(format!("unexpected {token}")));
            };
            match w.value.to_ascii_uppercase().as_str() {
                "ENGINE" => {
                    self.at += 1;
                    self.expect(&Token::Eq)?;
                    let engine = self.name()?;
                    if !engine.eq_ignore_ascii_case("OLAP") {
                        return Err(not_run(&format!("ENGINE={engine}")));
                    }
                }
                kw @ ("DUPLICATE" | "UNIQUE" | "AGGREGATE") => {
                    table.key_model = Some(match kw {
                        "DUPLICATE" => KeyModel::Duplicate,
                        "UNIQUE" => KeyModel::Unique,
                        _ => KeyModel::Aggregate,
                    });
                    self.at += 1;
                    self.expect_keyword("KEY")?;
                    table.key_columns = self.name_list()?;
                }
                "COMMENT" => {
                    self.at += 1;
                    let comment = self.string()?;
                    table.comment = (!comment.is_empty() && comment != "OLAP").then_some(comment);
                }
                "AUTO" | "PARTITION" => table.partitioning = Some(self.partitioning()?),
                "DISTRIBUTED" => table.distribution = Some(self.distribution()?),
                "PROPERTIES" => {
                    self.at += 1;
                    table.properties = self.properties()?;
                }
                "ROLLUP" => return Err(not_run("ROLLUP")),
                other => return Err(syntax(format!("unknown clause {other}"))),
            }
        }
        Ok(())
    }

    fn partitioning(&mut self) -> Result<Partitioning, EmulatorError> {
        let auto = self.eat_keyword("AUTO");
        self.expect_keyword("PARTITION")?;
        self.expect_keyword("BY")?;
        let kind = if self.eat_keyword("RANGE") {
            PartitionKind::Range
        } else if self.eat_keyword("LIST") {
            PartitionKind::List
        } else {
            return Err(syntax("expected RANGE or LIST after PARTITION BY"));
        };
        // Columns, or (AUTO) a call such as date_trunc(`dt`, 'day') over one.
        self.expect(&Token::LParen)?;
        let mut columns = Vec::new();
        loop {
            let name = self.name()?;
            if self.eat(&Token::LParen) {
                columns.push(self.name()?);
                while self.eat(&Token::Comma) {
                    self.string()?;
                }
                self.expect(&Token::RParen)?;
            } else {
                columns.push(name);
            }
            if self.eat(&Token::RParen) {
                break;
            }
            self.expect(&Token::Comma)?;
        }
        let mut partitions = Vec::new();
        self.expect(&Token::LParen)?;
        if !self.eat(&Token::RParen) {
            loop {
                partitions.push(self.partition()?);
                if self.eat(&Token::RParen) {
                    break;
                }
                self.expect(&Token::Comma)?;
            }
        }
        Ok(Partitioning {
            kind,
            auto,
            columns,
            partitions,
        })
    }

    fn partition(&mut self) -> Result<Partition, EmulatorError> {
        if self.is_keyword("FROM") {
            return Err(not_run("a batch partition range (FROM … TO … INTERVAL)"));
        }
        self.expect_keyword("PARTITION")?;
        if self.eat_keyword("IF") {
            self.expect_keyword("NOT")?;
            self.expect_keyword("EXISTS")?;
        }
        let name = self.name()?;
        self.expect_keyword("VALUES")?;
        let values = if self.eat_keyword("LESS") {
            self.expect_keyword("THAN")?;
            PartitionValues::LessThan(if self.eat_keyword("MAXVALUE") {
                vec!["MAXVALUE".to_owned()]
            } else {
                self.value_tuple()?
            })
        } else if self.eat_keyword("IN") {
            self.expect(&Token::LParen)?;
            let mut tuples = Vec::new();
            loop {
                if self.peek() == Some(&Token::LParen) {
                    tuples.push(self.value_tuple()?);
                } else {
                    tuples.push(vec![self.value()?]);
                }
                if self.eat(&Token::RParen) {
                    break;
                }
                self.expect(&Token::Comma)?;
            }
            PartitionValues::In(tuples)
        } else if self.eat(&Token::LBracket) {
            let lower = self.value_tuple()?;
            self.expect(&Token::Comma)?;
            let upper = self.value_tuple()?;
            self.expect(&Token::RParen)?;
            PartitionValues::Range { lower, upper }
        } else {
            return Err(syntax(format!("unknown bound of partition {name}")));
        };
        if self.peek() == Some(&Token::LParen) {
            return Err(not_run("per-partition properties"));
        }
        Ok(Partition { name, values })
    }

    fn value(&mut self) -> Result<String, EmulatorError> {
        match self.next() {
            Some(Token::SingleQuotedString(s) | Token::DoubleQuotedString(s)) => Ok(s),
            Some(Token::Number(n, _)) => Ok(n),
            Some(Token::Minus) => match self.next() {
                Some(Token::Number(n, _)) => Ok(format!("-{n}")),
                _ => Err(syntax("expected a number after '-'")),
            },
            Some(Token::Word(w)) if w.quote_style.is_none() => Ok(w.value),
            _ => Err(syntax("expected a partition value")),
        }
    }

    fn value_tuple(&mut self) -> Result<Vec<String>, EmulatorError> {
        self.expect(&Token::LParen)?;
        let mut values = vec![self.value()?];
        while self.eat(&Token::Comma) {
            values.push(self.value()?);
        }
        self.expect(&Token::RParen)?;
        Ok(values)
    }

    fn distribution(&mut self) -> Result<Distribution, EmulatorError> {
        self.expect_keyword("DISTRIBUTED")?;
        self.expect_keyword("BY")?;
        let hash = if self.eat_keyword("HASH") {
            Some(self.name_list()?)
        } else {
            self.expect_keyword("RANDOM")?;
            None
        };
        let buckets = if self.eat_keyword("BUCKETS") {
            if self.eat_keyword("AUTO") {
                Buckets::Auto
            } else {
                match self.number()? {
                    0 => return Err(syntax("the bucket count must be positive")),
                    n => Buckets::Fixed(n),
                }
            }
        } else {
            Buckets::Auto
        };
        Ok(match hash {
            Some(columns) => Distribution::Hash { columns, buckets },
            None => Distribution::Random { buckets },
        })
    }

    fn properties(&mut self) -> Result<Vec<(String, String)>, EmulatorError> {
        self.expect(&Token::LParen)?;
        let mut properties = Vec::new();
        if self.eat(&Token::RParen) {
            return Ok(properties);
        }
        loop {
            let key = self.string()?;
            self.expect(&Token::Eq)?;
            properties.push((key, self.string()?));
            if self.eat(&Token::RParen) {
                return Ok(properties);
            }
            self.expect(&Token::Comma)?;
        }
    }
}

/// A scalar type from its (upper-case) name and arguments.
fn scalar_type(name: &str, args: &[Option<u32>]) -> Result<DorisType, EmulatorError> {
    let bad = |why: &str| syntax(format!("{name}: {why}"));
    let numbers = || -> Result<Vec<u32>, EmulatorError> {
        args.iter()
            .map(|a| a.ok_or_else(|| bad("'*' is not an argument of this type")))
            .collect()
    };
    let plain = |ty: DorisType| {
        if args.is_empty() {
            Ok(ty)
        } else {
            Err(bad("takes no arguments"))
        }
    };
    // Integer types take an optional display width, which changes nothing.
    let integer = |ty: DorisType| match numbers()?.as_slice() {
        [] | [1..=255] => Ok(ty),
        _ => Err(bad("takes at most a display width")),
    };
    let fraction = || -> Result<u8, EmulatorError> {
        match numbers()?.as_slice() {
            [] => Ok(0),
            [p @ 0..=6] => Ok(u8::try_from(*p).unwrap_or(0)),
            _ => Err(bad("the fractional precision is 0 to 6")),
        }
    };
    Ok(match name {
        "BOOLEAN" | "BOOL" => plain(DorisType::Boolean)?,
        "TINYINT" => integer(DorisType::TinyInt)?,
        "SMALLINT" => integer(DorisType::SmallInt)?,
        "INT" | "INTEGER" => integer(DorisType::Int)?,
        "BIGINT" => integer(DorisType::BigInt)?,
        "LARGEINT" => integer(DorisType::LargeInt)?,
        "FLOAT" => plain(DorisType::Float)?,
        "DOUBLE" => plain(DorisType::Double)?,
        "DECIMAL" | "DECIMALV3" | "DECIMALV2" => {
            let (precision, scale) = match numbers()?.as_slice() {
                [] if name == "DECIMALV2" => (27, 9),
                [] => (9, 0),
                [p] => (*p, 0),
                [p, s] => (*p, *s),
                _ => return Err(bad("takes (precision, scale)")),
            };
            if !(1..=76).contains(&precision) || scale > precision {
                return Err(bad("precision is 1 to 76 and scale at most the precision"));
            }
            DorisType::Decimal {
                precision: u8::try_from(precision).unwrap_or(0),
                scale: u8::try_from(scale).unwrap_or(0),
            }
        }
        "DATE" | "DATEV2" => plain(DorisType::Date)?,
        "DATETIME" | "DATETIMEV2" => DorisType::DateTime {
            precision: fraction()?,
        },
        "CHAR" => match numbers()?.as_slice() {
            [] => DorisType::Char { length: 1 },
            [n @ 1..=255] => DorisType::Char { length: *n },
            _ => return Err(bad("the length is 1 to 255")),
        },
        "VARCHAR" => match args {
            [] | [None] => DorisType::Varchar { length: None },
            [Some(n @ 1..=65533)] => DorisType::Varchar { length: Some(*n) },
            _ => return Err(bad("the length is 1 to 65533")),
        },
        "STRING" | "TEXT" => plain(DorisType::String)?,
        "JSON" | "JSONB" => plain(DorisType::Json)?,
        "VARIANT" => plain(DorisType::Variant)?,
        "HLL" => plain(DorisType::Hll)?,
        "BITMAP" => plain(DorisType::Bitmap)?,
        "QUANTILE_STATE" => plain(DorisType::QuantileState)?,
        "IPV4" => plain(DorisType::Ipv4)?,
        "IPV6" => plain(DorisType::Ipv6)?,
        "VARBINARY" => match args {
            [] | [None] => DorisType::VarBinary { length: None },
            [Some(n @ 1..)] => DorisType::VarBinary { length: Some(*n) },
            _ => return Err(bad("the length must be positive")),
        },
        other => return Err(syntax(format!("unknown type {other}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_keys_partitions_distribution_and_properties() {
        let t = parse_create_table(
            "CREATE TABLE IF NOT EXISTS d.`t``x` (
               `k` INT NOT NULL COMMENT 'the key',
               v ARRAY<ARRAY<DECIMAL(10, 2) NOT NULL>> NULL,
               m MAP<STRING, STRUCT<a:INT, b:VARCHAR(3) COMMENT 'bee'>>,
               s BIGINT SUM DEFAULT \"0\"
             ) ENGINE=OLAP AGGREGATE KEY(`k`, v, m) COMMENT 'OLAP'
             PARTITION BY RANGE(`k`) (PARTITION p1 VALUES LESS THAN (\"10\"),
               PARTITION p2 VALUES [(\"10\"), (\"20\")), PARTITION p3 VALUES LESS THAN MAXVALUE)
             DISTRIBUTED BY HASH(`k`) BUCKETS 3 PROPERTIES (\"replication_num\" = \"1\");",
        )
        .unwrap();
        assert_eq!((t.database.as_deref(), t.name.as_str()), (Some("d"), "t`x"));
        assert_eq!(t.key_model, Some(KeyModel::Aggregate));
        assert!(t.columns[0].is_key && !t.columns[0].nullable);
        assert_eq!(t.columns[0].comment.as_deref(), Some("the key"));
        assert_eq!(t.columns[3].aggregation, Some(Aggregation::Sum));
        assert_eq!(t.columns[3].default, Some(ColumnDefault::Text("0".into())));
        let DorisType::Array { element, .. } = &t.columns[1].ty else {
            panic!("{:?}", t.columns[1].ty)
        };
        assert!(matches!(
            element.as_ref(),
            DorisType::Array {
                element_nullable: false,
                ..
            }
        ));
        assert_eq!(t.comment, None);
        let parts = t.partitioning.unwrap();
        assert_eq!(parts.partitions.len(), 3);
        assert_eq!(
            parts.partitions[1].values,
            PartitionValues::Range {
                lower: vec!["10".into()],
                upper: vec!["20".into()]
            }
        );
        assert_eq!(
            t.distribution,
            Some(Distribution::Hash {
                columns: vec!["k".into()],
                buckets: Buckets::Fixed(3)
            })
        );
        assert_eq!(t.properties, vec![("replication_num".into(), "1".into())]);
    }

    #[test]
    fn clauses_the_emulator_does_not_run_are_refused_by_name() {
        for (ddl, named) in [
            (
                "CREATE TABLE t (k INT, INDEX i (k) USING INVERTED) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
                "an INDEX",
            ),
            (
                "CREATE TABLE t (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 ROLLUP (r (k))",
                "ROLLUP",
            ),
            (
                "CREATE TABLE t (k INT, s AGG_STATE<max_by(int, int)> GENERIC) AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
                "an AGG_STATE column",
            ),
            (
                "CREATE TABLE t (k DATE) PARTITION BY RANGE(k) (FROM (\"2024-01-01\") TO (\"2024-02-01\") INTERVAL 1 DAY) DISTRIBUTED BY HASH(k) BUCKETS 1",
                "a batch partition range",
            ),
        ] {
            let Err(EmulatorError::Analysis(why)) = parse_create_table(ddl) else {
                panic!("accepted: {ddl}");
            };
            assert!(why.contains("does not run") && why.contains(named), "{why}");
        }
        assert!(
            parse_create_table("CREATE TABLE t (k INT) DISTRIBUTED BY HASH(k) BUCKETS 0").is_err()
        );
        assert!(parse_create_table("CREATE TABLE t (k INT) DUPLICATE KEY(z)").is_err());
    }
}
