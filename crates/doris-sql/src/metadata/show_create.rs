//! The `SHOW CREATE TABLE` parser (also reads `CREATE TABLE` DDL as users write it).

use super::lex::{Spanned, Token, tokenize};
use super::{
    Aggregation, Buckets, Column, ColumnDefault, Distribution, KeyModel, Partition, PartitionKind,
    PartitionValues, Partitioning, SequenceColumn, TableSchema,
};
use crate::error::{Result, SqlError};
use crate::types::DorisType;

/// Parses the `Create Table` text of `SHOW CREATE TABLE` into a [`TableSchema`].
///
/// Accepts every release's layout: upper- or lower-case types, with or without widths,
/// `COMMENT 'OLAP'` or no comment line, index lines in the column list, RANGE/LIST/AUTO
/// partitioning, HASH/RANDOM distribution with fixed or AUTO buckets, and any properties.
///
/// ```
/// use doris_sql::{parse_show_create, KeyModel, SequenceColumn};
/// let t = parse_show_create(
///     "CREATE TABLE `t` (`k` int NOT NULL, `v` text NULL, `s` bigint NULL) ENGINE=OLAP \
///      UNIQUE KEY(`k`) DISTRIBUTED BY HASH(`k`) BUCKETS AUTO PROPERTIES (\
///      \"enable_unique_key_merge_on_write\" = \"true\", \"function_column.sequence_col\" = \"s\")",
/// ).unwrap();
/// assert_eq!((t.key_model, t.merge_on_write), (Some(KeyModel::Unique), true));
/// assert_eq!(t.sequence, Some(SequenceColumn::Mapped("s".into())));
/// ```
pub fn parse_show_create(text: &str) -> Result<TableSchema> {
    let tokens = tokenize(text).map_err(SqlError::MetadataParse)?;
    let mut p = Cursor {
        text,
        tokens: &tokens,
        at: 0,
    };
    p.parse()
}

/// Parses `SHOW CREATE TABLE` text against the table's `DESC` rows, which name its columns
/// unambiguously, and checks that both describe the same columns
/// ([`TableSchema::reconcile`]).
///
/// Doris prints every name between backticks without doubling a backtick inside it, so the
/// text of a column named ``a`b`` reads `` `a`b` ``. Each such name `DESC` gives is
/// written back doubled before parsing; if the text still does not parse into the columns
/// `DESC` lists, it is refused naming that column, never read as other columns.
///
/// ```
/// use doris_sql::{parse_describe, parse_show_create_checked, DescRow};
/// let row = |field: &str, key: &str| DescRow {
///     field: field.into(), type_text: "int".into(), null: "No".into(),
///     key: key.into(), default: None, extra: String::new(),
/// };
/// let desc = parse_describe(&[row("k", "true"), row("a`b", "false")]).unwrap();
/// let t = parse_show_create_checked(
///     "CREATE TABLE `t` (`k` int NOT NULL, `a`b` int NOT NULL) DUPLICATE KEY(`k`)",
///     &desc,
/// ).unwrap();
/// assert_eq!(t.columns[1].name, "a`b");
/// ```
pub fn parse_show_create_checked(text: &str, desc: &[super::DescColumn]) -> Result<TableSchema> {
    let ticked: Vec<&str> = desc
        .iter()
        .map(|d| d.name.as_str())
        .filter(|name| name.contains('`'))
        .collect();
    let mut escaped = text.to_owned();
    for name in &ticked {
        escaped = escaped.replace(
            &format!("`{name}`"),
            &format!("`{}`", name.replace('`', "``")),
        );
    }
    let checked = parse_show_create(&escaped).and_then(|mut schema| {
        schema.reconcile(desc)?;
        // `DESC` marks a generated column in Extra whatever the text spelt.
        for column in &mut schema.columns {
            column.generated |= desc.iter().any(|d| {
                d.name.eq_ignore_ascii_case(&column.name)
                    && d.extras
                        .iter()
                        .any(|e| e.to_ascii_uppercase().ends_with("GENERATED"))
            });
        }
        Ok(schema)
    });
    match (checked, ticked.first()) {
        (Err(e), Some(name)) => Err(SqlError::MetadataParse(format!(
            "column {name:?} holds a backtick, which SHOW CREATE TABLE prints undoubled, and \
             the table's text cannot be read unambiguously ({e})"
        ))),
        (checked, _) => checked,
    }
}

struct Cursor<'a> {
    text: &'a str,
    tokens: &'a [Spanned],
    at: usize,
}

fn err(msg: impl Into<String>) -> SqlError {
    SqlError::MetadataParse(msg.into())
}

impl Cursor<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at).map(|(_, _, t)| t)
    }

    fn peek_at(&self, offset: usize) -> Option<&Token> {
        self.tokens.get(self.at + offset).map(|(_, _, t)| t)
    }

    fn next(&mut self) -> Option<&Token> {
        let t = self.tokens.get(self.at).map(|(_, _, t)| t);
        self.at += 1;
        t
    }

    fn offset(&self) -> usize {
        self.tokens
            .get(self.at)
            .map_or(self.text.len(), |(start, _, _)| *start)
    }

    fn eat_word(&mut self, kw: &str) -> bool {
        if self.peek().is_some_and(|t| t.is_word(kw)) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn eat_punct(&mut self, ch: char) -> bool {
        if self.peek() == Some(&Token::Punct(ch)) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect_word(&mut self, kw: &str) -> Result<()> {
        if self.eat_word(kw) {
            Ok(())
        } else {
            Err(err(format!("expected {kw} at byte {}", self.offset())))
        }
    }

    fn expect_punct(&mut self, ch: char) -> Result<()> {
        if self.eat_punct(ch) {
            Ok(())
        } else {
            Err(err(format!("expected '{ch}' at byte {}", self.offset())))
        }
    }

    fn name(&mut self) -> Result<String> {
        match self.peek().and_then(Token::name) {
            Some(n) => {
                let n = n.to_owned();
                self.at += 1;
                Ok(n)
            }
            None => Err(err(format!("expected a name at byte {}", self.offset()))),
        }
    }

    fn string(&mut self) -> Result<String> {
        match self.next() {
            Some(Token::Str(s)) => Ok(s.clone()),
            _ => Err(err(format!(
                "expected a quoted string at byte {}",
                self.offset()
            ))),
        }
    }

    /// Skips one token, or a whole balanced group if it opens one.
    fn skip_item(&mut self) -> Result<()> {
        let open = match self.next() {
            Some(Token::Punct(c @ ('(' | '[' | '<'))) => *c,
            Some(_) => return Ok(()),
            None => return Err(err("unexpected end of text")),
        };
        let close = match open {
            '(' => ')',
            '[' => ']',
            _ => '>',
        };
        let mut depth = 1usize;
        while depth > 0 {
            match self.next() {
                Some(Token::Punct(c)) if *c == open => depth += 1,
                Some(Token::Punct(c)) if *c == close => depth -= 1,
                Some(_) => {}
                None => return Err(err(format!("unclosed '{open}'"))),
            }
        }
        Ok(())
    }

    /// `( name, … )`: a parenthesised list of identifiers.
    fn name_list(&mut self) -> Result<Vec<String>> {
        self.expect_punct('(')?;
        let mut names = Vec::new();
        if self.eat_punct(')') {
            return Ok(names);
        }
        loop {
            names.push(self.name()?);
            if self.eat_punct(')') {
                return Ok(names);
            }
            self.expect_punct(',')?;
        }
    }

    fn parse(&mut self) -> Result<TableSchema> {
        self.expect_word("CREATE")?;
        self.eat_word("EXTERNAL");
        self.expect_word("TABLE")?;
        if self.eat_word("IF") {
            self.expect_word("NOT")?;
            self.expect_word("EXISTS")?;
        }
        // [catalog.][db.]table
        let mut parts = vec![self.name()?];
        while self.eat_punct('.') {
            parts.push(self.name()?);
        }
        let name = parts.pop().unwrap_or_default();
        let database = parts.pop();
        let mut columns = self.column_list()?;
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
        self.table_clauses(&mut table)?;
        for c in &mut columns {
            c.is_key = table
                .key_columns
                .iter()
                .any(|k| k.eq_ignore_ascii_case(&c.name));
        }
        for k in &table.key_columns {
            if !columns.iter().any(|c| c.name.eq_ignore_ascii_case(k)) {
                return Err(err(format!(
                    "key column {k:?} is not a column of the table"
                )));
            }
        }
        if columns.is_empty() {
            return Err(err("the table has no columns"));
        }
        table.columns = columns;
        table.merge_on_write = table.key_model == Some(KeyModel::Unique)
            && table
                .property("enable_unique_key_merge_on_write")
                .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        table.sequence = match (
            table.property("function_column.sequence_col"),
            table.property("function_column.sequence_type"),
        ) {
            (Some(col), _) => Some(SequenceColumn::Mapped(col.to_owned())),
            (None, Some(ty)) => Some(SequenceColumn::Hidden(
                ty.parse::<DorisType>()
                    .map_err(|e| err(format!("bad sequence type: {e}")))?,
            )),
            (None, None) => None,
        };
        Ok(table)
    }

    fn column_list(&mut self) -> Result<Vec<Column>> {
        self.expect_punct('(')?;
        let mut columns = Vec::new();
        loop {
            let is_index = self.peek().is_some_and(|t| t.is_word("INDEX"))
                && !matches!(self.peek_at(1), Some(Token::Word(w)) if is_type_word(w));
            if is_index {
                while !matches!(self.peek(), Some(Token::Punct(',' | ')')) | None) {
                    self.skip_item()?;
                }
            } else {
                columns.push(self.column()?);
            }
            if self.eat_punct(')') {
                return Ok(columns);
            }
            self.expect_punct(',')?;
        }
    }

    /// The raw text of a type: a word, then a balanced `(…)` and/or `<…>`.
    fn type_text(&mut self) -> Result<String> {
        let start = self.offset();
        match self.next() {
            Some(Token::Word(_)) => {}
            _ => return Err(err(format!("expected a type at byte {start}"))),
        }
        let mut end = self.tokens[self.at - 1].1;
        while matches!(self.peek(), Some(Token::Punct('(' | '<'))) {
            self.skip_item()?;
            end = self.tokens[self.at - 1].1;
        }
        Ok(self.text[start..end].to_owned())
    }

    fn column(&mut self) -> Result<Column> {
        let name = self.name()?;
        let type_text = self.type_text()?;
        let ty: DorisType = type_text
            .parse()
            .map_err(|e| err(format!("column {name:?}: {e}")))?;
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
        loop {
            match self.peek() {
                None | Some(Token::Punct(',' | ')')) => return Ok(column),
                Some(Token::Word(w)) => {
                    let w = w.to_ascii_uppercase();
                    self.at += 1;
                    match w.as_str() {
                        "NULL" => column.nullable = true,
                        "NOT" => {
                            self.expect_word("NULL")?;
                            column.nullable = false;
                        }
                        "AUTO_INCREMENT" => {
                            column.auto_increment = true;
                            if self.peek() == Some(&Token::Punct('(')) {
                                self.skip_item()?;
                            }
                        }
                        "DEFAULT" => column.default = Some(self.default_value()?),
                        "COMMENT" => column.comment = Some(self.string()?),
                        "ON" => {
                            self.expect_word("UPDATE")?;
                            self.skip_item()?;
                            if self.peek() == Some(&Token::Punct('(')) {
                                self.skip_item()?;
                            }
                        }
                        other => {
                            if let Some(a) = Aggregation::parse(other) {
                                column.aggregation = Some(a);
                            } else if other != "NONE" {
                                // `[GENERATED ALWAYS] AS (expr)`: a generated column.
                                if other == "AS" {
                                    column.generated = true;
                                }
                                // GENERATED ALWAYS AS (…), KEY, or a future attribute.
                                if self.peek() == Some(&Token::Punct('(')) {
                                    self.skip_item()?;
                                }
                            }
                        }
                    }
                }
                Some(_) => self.skip_item()?,
            }
        }
    }

    fn default_value(&mut self) -> Result<ColumnDefault> {
        let start = self.offset();
        let value = match self.next() {
            Some(Token::Str(s)) => ColumnDefault::Text(s.clone()),
            Some(Token::Number(n)) => ColumnDefault::Text(n.clone()),
            Some(t) if t.is_word("NULL") => ColumnDefault::Null,
            Some(t) if t.is_word("CURRENT_TIMESTAMP") => {
                if self.peek() == Some(&Token::Punct('(')) {
                    self.skip_item()?;
                }
                ColumnDefault::CurrentTimestamp
            }
            Some(Token::Word(_)) => {
                if self.peek() == Some(&Token::Punct('(')) {
                    self.skip_item()?;
                }
                let end = self.tokens[self.at - 1].1;
                ColumnDefault::Expr(self.text[start..end].to_owned())
            }
            _ => return Err(err(format!("expected a default value at byte {start}"))),
        };
        Ok(value)
    }

    fn table_clauses(&mut self, table: &mut TableSchema) -> Result<()> {
        while let Some(token) = self.peek() {
            let Token::Word(w) = token else {
                if self.eat_punct(';') {
                    continue;
                }
                return Err(err(format!("unexpected token at byte {}", self.offset())));
            };
            match w.to_ascii_uppercase().as_str() {
                "ENGINE" => {
                    self.at += 1;
                    self.expect_punct('=')?;
                    self.name()?;
                }
                kw @ ("DUPLICATE" | "UNIQUE" | "AGGREGATE") => {
                    table.key_model = Some(match kw {
                        "DUPLICATE" => KeyModel::Duplicate,
                        "UNIQUE" => KeyModel::Unique,
                        _ => KeyModel::Aggregate,
                    });
                    self.at += 1;
                    self.expect_word("KEY")?;
                    table.key_columns = self.name_list()?;
                }
                "COMMENT" => {
                    self.at += 1;
                    let c = self.string()?;
                    table.comment = (!c.is_empty() && c != "OLAP").then_some(c);
                }
                "AUTO" | "PARTITION" => table.partitioning = Some(self.partitioning()?),
                "DISTRIBUTED" => table.distribution = Some(self.distribution()?),
                "PROPERTIES" => {
                    self.at += 1;
                    table.properties = self.properties()?;
                }
                _ => {
                    // ROLLUP (…), BROKER PROPERTIES, or clauses of future releases.
                    self.at += 1;
                    if self.peek() == Some(&Token::Punct('(')) {
                        self.skip_item()?;
                    }
                }
            }
        }
        Ok(())
    }

    fn partitioning(&mut self) -> Result<Partitioning> {
        let auto = self.eat_word("AUTO");
        self.expect_word("PARTITION")?;
        self.expect_word("BY")?;
        let kind = if self.eat_word("RANGE") {
            PartitionKind::Range
        } else if self.eat_word("LIST") {
            PartitionKind::List
        } else {
            return Err(err(format!(
                "expected RANGE or LIST at byte {}",
                self.offset()
            )));
        };
        // Columns: identifiers inside the first group, which may hold a function call such
        // as date_trunc(`dt`, 'day').
        let group_start = self.at;
        self.skip_item()?;
        let columns = self.tokens[group_start..self.at]
            .iter()
            .enumerate()
            .filter_map(|(i, (_, _, t))| match t {
                Token::Ident(n) => Some(n.clone()),
                Token::Word(n)
                    if self.tokens.get(group_start + i + 1).map(|s| &s.2)
                        != Some(&Token::Punct('(')) =>
                {
                    Some(n.clone())
                }
                _ => None,
            })
            .collect();
        let mut partitions = Vec::new();
        if self.eat_punct('(') {
            while !self.eat_punct(')') {
                if self.eat_punct(',') {
                    continue;
                }
                partitions.push(self.partition()?);
            }
        }
        Ok(Partitioning {
            kind,
            auto,
            columns,
            partitions,
        })
    }

    fn partition(&mut self) -> Result<Partition> {
        if self.peek().is_none() {
            // Found by the `show_create` fuzz target: without this the list loop never ends.
            return Err(err("unclosed partition list"));
        }
        let start = self.offset();
        let first = self.at;
        if !self.eat_word("PARTITION") {
            // FROM (…) TO (…) INTERVAL … and other batch forms: keep verbatim.
            while !matches!(self.peek(), Some(Token::Punct(',' | ')')) | None) {
                self.skip_item()?;
            }
            if self.at == first {
                return Err(err(format!(
                    "unexpected token in the partition list at byte {start}"
                )));
            }
            let end = self.tokens[self.at - 1].1;
            return Ok(Partition {
                name: String::new(),
                values: PartitionValues::Other(self.text[start..end].to_owned()),
            });
        }
        self.eat_word("IF");
        self.eat_word("NOT");
        self.eat_word("EXISTS");
        let name = self.name()?;
        self.expect_word("VALUES")?;
        let values = if self.eat_word("LESS") {
            self.expect_word("THAN")?;
            PartitionValues::LessThan(if self.eat_word("MAXVALUE") {
                vec!["MAXVALUE".to_owned()]
            } else {
                self.value_tuple()?
            })
        } else if self.eat_word("IN") {
            self.expect_punct('(')?;
            let mut tuples = Vec::new();
            while !self.eat_punct(')') {
                if self.eat_punct(',') {
                    continue;
                }
                if self.peek() == Some(&Token::Punct('(')) {
                    tuples.push(self.value_tuple()?);
                } else {
                    tuples.push(vec![self.value()?]);
                }
            }
            PartitionValues::In(tuples)
        } else if self.eat_punct('[') {
            let lower = self.value_tuple()?;
            self.expect_punct(',')?;
            let upper = self.value_tuple()?;
            self.expect_punct(')')?;
            PartitionValues::Range { lower, upper }
        } else {
            return Err(err(format!(
                "unknown partition bound at byte {}",
                self.offset()
            )));
        };
        // Per-partition properties such as ("replication_num" = "1").
        while self.peek() == Some(&Token::Punct('(')) {
            self.skip_item()?;
        }
        Ok(Partition { name, values })
    }

    fn value(&mut self) -> Result<String> {
        match self.next() {
            Some(Token::Str(s) | Token::Number(s) | Token::Word(s)) => Ok(s.clone()),
            _ => Err(err(format!(
                "expected a partition value at byte {}",
                self.offset()
            ))),
        }
    }

    fn value_tuple(&mut self) -> Result<Vec<String>> {
        self.expect_punct('(')?;
        let mut values = Vec::new();
        while !self.eat_punct(')') {
            if self.eat_punct(',') {
                continue;
            }
            values.push(self.value()?);
        }
        Ok(values)
    }

    fn distribution(&mut self) -> Result<Distribution> {
        self.expect_word("DISTRIBUTED")?;
        self.expect_word("BY")?;
        let hash_columns = if self.eat_word("HASH") {
            Some(self.name_list()?)
        } else {
            self.expect_word("RANDOM")?;
            None
        };
        let buckets = if self.eat_word("BUCKETS") {
            match self.next() {
                Some(Token::Number(n)) => Buckets::Fixed(
                    n.parse()
                        .ok()
                        .filter(|b| *b > 0)
                        .ok_or_else(|| err("bucket count must be a positive integer"))?,
                ),
                Some(t) if t.is_word("AUTO") => Buckets::Auto,
                _ => return Err(err("expected a bucket count or AUTO")),
            }
        } else {
            Buckets::Auto
        };
        Ok(match hash_columns {
            Some(columns) => Distribution::Hash { columns, buckets },
            None => Distribution::Random { buckets },
        })
    }

    fn properties(&mut self) -> Result<Vec<(String, String)>> {
        self.expect_punct('(')?;
        let mut props = Vec::new();
        while !self.eat_punct(')') {
            if self.eat_punct(',') {
                continue;
            }
            let key = self.string()?;
            self.expect_punct('=')?;
            let value = self.string()?;
            props.push((key, value));
        }
        Ok(props)
    }
}

/// Words that start a column type, to tell a column named `index` from an INDEX line.
fn is_type_word(word: &str) -> bool {
    word.parse::<DorisType>().is_ok()
        || [
            "ARRAY",
            "MAP",
            "STRUCT",
            "AGG_STATE",
            "DECIMAL",
            "VARCHAR",
            "CHAR",
            "DATETIME",
        ]
        .iter()
        .any(|t| t.eq_ignore_ascii_case(word))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::lex::read_backtick;

    fn desc(names: &[(&str, bool)]) -> Vec<crate::metadata::DescColumn> {
        let rows: Vec<crate::metadata::DescRow> = names
            .iter()
            .map(|(name, key)| crate::metadata::DescRow {
                field: (*name).into(),
                type_text: "int".into(),
                null: "No".into(),
                key: key.to_string(),
                default: None,
                extra: String::new(),
            })
            .collect();
        crate::metadata::parse_describe(&rows).unwrap()
    }

    /// Names holding backticks, quotes, spaces and non-ASCII, printed as Doris prints them
    /// (inner backticks undoubled), read with the names `DESC` gives; a text that does not
    /// match `DESC` is refused naming the column.
    #[test]
    fn undoubled_backticks_are_read_with_the_names_desc_gives() {
        let names = [
            ("k`", true),
            ("a`b", false),
            ("x` int NOT NULL, `y", false),
            ("q'\" é", false),
        ];
        let text = format!(
            "CREATE TABLE `t` (\n{}\n) ENGINE=OLAP\nDUPLICATE KEY(`k``)\nDISTRIBUTED BY HASH(`k``) BUCKETS 1",
            names
                .iter()
                .map(|(n, _)| format!("  `{n}` int NOT NULL"))
                .collect::<Vec<_>>()
                .join(",\n")
        );
        let schema = parse_show_create_checked(&text, &desc(&names)).unwrap();
        let got: Vec<&str> = schema.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(got, names.map(|(n, _)| n));
        assert_eq!(schema.key_columns, ["k`"]);
        // Doubled (as a DDL a user writes), the same text reads the same.
        let doubled = text.replace("`a`b`", "`a``b`");
        assert_eq!(
            parse_show_create_checked(&doubled, &desc(&names))
                .unwrap()
                .columns[1]
                .name,
            "a`b"
        );
        // DESC naming another column: refused, naming the column with the backtick.
        let other = [
            ("k`", true),
            ("a`c", false),
            ("x` int NOT NULL, `y", false),
            ("q'\" é", false),
        ];
        let err = parse_show_create_checked(&text, &desc(&other))
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"k`\" holds a backtick"), "{err}");
        // Without backticks in any name, the plain reconcile error.
        let plain = parse_show_create_checked(
            "CREATE TABLE `t` (`k` int NOT NULL) DUPLICATE KEY(`k`)",
            &desc(&[("j", true)]),
        )
        .unwrap_err()
        .to_string();
        assert!(plain.contains("column order differs"), "{plain}");
    }

    /// Found by the `show_create` fuzz target: a partition list cut off after an unknown
    /// token sliced the text backwards (a panic), or looped for ever (out of memory).
    #[test]
    fn a_partition_list_cut_off_is_an_error_not_a_panic_or_a_loop() {
        let head = "CREATE TABLE `t` (\n  `id` bigint NOT NULL\n) ENGINE=OLAP\n\
                    DUPLICATE KEY(`id`)\nPARTITION BY RANGE(`id`)\n";
        for tail in [
            "(-;\n",
            "(",
            "(PARTITION p0 VALUES LESS THAN (\"1\"),",
            "(FROM",
        ] {
            let text = format!("{head}{tail}");
            let e = parse_show_create(&text).unwrap_err();
            assert!(!e.to_string().is_empty(), "{tail:?}");
        }
    }

    const DUP_UPPER: &str = r#"CREATE TABLE `t_dup` (
  `id` BIGINT NOT NULL COMMENT 'pk',
  `name` VARCHAR(64) NULL,
  `ts` DATETIME(3) NULL,
  `amount` DECIMAL(20, 6) NULL DEFAULT "0",
  INDEX idx_name (`name`) USING INVERTED COMMENT ''
) ENGINE=OLAP
DUPLICATE KEY(`id`)
COMMENT 'OLAP'
DISTRIBUTED BY HASH(`id`) BUCKETS 8
PROPERTIES (
"replication_allocation" = "tag.location.default: 1",
"min_load_replica_num" = "-1",
"storage_format" = "V2",
"light_schema_change" = "true"
);"#;

    const UNIQUE_LOWER: &str = r#"CREATE TABLE `orders` (
  `order_id` bigint NOT NULL,
  `region` varchar(20) NOT NULL,
  `dt` date NOT NULL,
  `status` text NULL DEFAULT NULL,
  `created` datetime(6) NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  `seq` int NULL,
  `auto_id` bigint NOT NULL AUTO_INCREMENT(1),
  `tags` array<text> NULL,
  `attrs` struct<a:int,b:text> NULL COMMENT '用户id'
) ENGINE=OLAP
UNIQUE KEY(`order_id`, `region`, `dt`)
PARTITION BY RANGE(`dt`)
(PARTITION p202401 VALUES [("2024-01-01"), ("2024-02-01")),
PARTITION p202402 VALUES [("2024-02-01"), ("2024-03-01")))
DISTRIBUTED BY HASH(`order_id`, `region`) BUCKETS AUTO
PROPERTIES (
"replication_allocation" = "tag.location.default: 1",
"enable_unique_key_merge_on_write" = "true",
"function_column.sequence_col" = "seq",
"enable_mow_light_delete" = "false"
);"#;

    const AGG_LEGACY: &str = r#"CREATE TABLE `site_visit` (
  `city` varchar(150) NULL COMMENT "city",
  `k1` int(11) NULL,
  `cost` bigint(20) SUM NULL DEFAULT "0",
  `last` datetime REPLACE NULL,
  `maybe` int(11) REPLACE_IF_NOT_NULL NULL,
  `hi` int(11) MAX NULL,
  `lo` int(11) MIN NULL,
  `u` bitmap BITMAP_UNION NOT NULL,
  `h` hll HLL_UNION NOT NULL,
  `q` quantile_state QUANTILE_UNION NOT NULL,
  `s` agg_state<max(int(11))> GENERIC NOT NULL
) ENGINE=OLAP
AGGREGATE KEY(`city`, `k1`)
COMMENT "visits"
PARTITION BY LIST(`city`)
(PARTITION p_cn VALUES IN ("Beijing","beijing"),
PARTITION p_multi VALUES IN (("a", "1"), ("b", "2")))
DISTRIBUTED BY RANDOM BUCKETS 3
PROPERTIES ("replication_num" = "1")"#;

    #[test]
    fn duplicate_table_upper_case() {
        let t = parse_show_create(DUP_UPPER).unwrap();
        assert_eq!(t.name, "t_dup");
        assert_eq!(t.key_model, Some(KeyModel::Duplicate));
        assert_eq!(t.key_columns, vec!["id"]);
        assert_eq!(t.columns.len(), 4);
        let id = &t.columns[0];
        assert!(id.is_key && !id.nullable);
        assert_eq!(id.comment.as_deref(), Some("pk"));
        assert_eq!(id.ty, DorisType::BigInt);
        assert_eq!(t.columns[2].ty, DorisType::DateTime { precision: 3 });
        assert_eq!(t.columns[3].default, Some(ColumnDefault::Text("0".into())));
        assert_eq!(t.comment, None);
        assert_eq!(
            t.distribution,
            Some(Distribution::Hash {
                columns: vec!["id".into()],
                buckets: Buckets::Fixed(8)
            })
        );
        assert_eq!(t.property("min_load_replica_num"), Some("-1"));
        assert_eq!(t.properties.len(), 4);
        assert!(!t.merge_on_write);
        assert_eq!(t.sequence, None);
        assert_eq!(t.partitioning, None);
    }

    #[test]
    fn unique_mow_table_lower_case_with_partitions() {
        let t = parse_show_create(UNIQUE_LOWER).unwrap();
        assert_eq!(t.key_model, Some(KeyModel::Unique));
        assert!(t.merge_on_write);
        assert_eq!(t.sequence, Some(SequenceColumn::Mapped("seq".into())));
        assert_eq!(t.key_columns, vec!["order_id", "region", "dt"]);
        assert_eq!(
            t.column("STATUS").unwrap().default,
            Some(ColumnDefault::Null)
        );
        let created = t.column("created").unwrap();
        assert_eq!(created.default, Some(ColumnDefault::CurrentTimestamp));
        assert_eq!(created.ty, DorisType::DateTime { precision: 6 });
        assert!(t.column("auto_id").unwrap().auto_increment);
        let g = parse_show_create(
            "CREATE TABLE g (`a` int NULL, `b` int NULL, `s` int AS (`a` + `b`) NULL, \
             `t` bigint GENERATED ALWAYS AS (`a` * 2) NOT NULL) DUPLICATE KEY(`a`)",
        )
        .unwrap();
        let generated: Vec<bool> = g.columns.iter().map(|c| c.generated).collect();
        assert_eq!(generated, [false, false, true, true]);
        assert_eq!(
            t.column("attrs").unwrap().comment.as_deref(),
            Some("用户id")
        );
        let p = t.partitioning.unwrap();
        assert_eq!((p.kind, p.auto), (PartitionKind::Range, false));
        assert_eq!(p.columns, vec!["dt"]);
        assert_eq!(p.partitions.len(), 2);
        assert_eq!(
            p.partitions[1],
            Partition {
                name: "p202402".into(),
                values: PartitionValues::Range {
                    lower: vec!["2024-02-01".into()],
                    upper: vec!["2024-03-01".into()]
                }
            }
        );
        assert_eq!(
            t.distribution,
            Some(Distribution::Hash {
                columns: vec!["order_id".into(), "region".into()],
                buckets: Buckets::Auto
            })
        );
    }

    #[test]
    fn aggregate_table_legacy_spelling_and_list_partitions() {
        let t = parse_show_create(AGG_LEGACY).unwrap();
        assert_eq!(t.key_model, Some(KeyModel::Aggregate));
        let aggs: Vec<_> = t.columns.iter().map(|c| c.aggregation).collect();
        use Aggregation::*;
        assert_eq!(
            aggs,
            vec![
                None,
                None,
                Some(Sum),
                Some(Replace),
                Some(ReplaceIfNotNull),
                Some(Max),
                Some(Min),
                Some(BitmapUnion),
                Some(HllUnion),
                Some(QuantileUnion),
                Some(Generic)
            ]
        );
        assert_eq!(t.comment.as_deref(), Some("visits"));
        assert_eq!(t.columns[0].comment.as_deref(), Some("city"));
        assert_eq!(
            t.columns[10].ty,
            DorisType::AggState {
                signature: "max(int(11))".into()
            }
        );
        let p = t.partitioning.unwrap();
        assert_eq!(p.kind, PartitionKind::List);
        assert_eq!(
            p.partitions[0].values,
            PartitionValues::In(vec![vec!["Beijing".into()], vec!["beijing".into()]])
        );
        assert_eq!(
            p.partitions[1].values,
            PartitionValues::In(vec![
                vec!["a".into(), "1".into()],
                vec!["b".into(), "2".into()]
            ])
        );
        assert_eq!(
            t.distribution,
            Some(Distribution::Random {
                buckets: Buckets::Fixed(3)
            })
        );
    }

    #[test]
    fn tolerant_forms() {
        // No key clause (duplicate without keys), AUTO partitioning with a function,
        // LESS THAN bounds, a hidden sequence column, a user-written DDL with comments and
        // an unescaped embedded backtick as Doris 4.0.6 prints it.
        let ddl = "create table if not exists db.`we`ird` ( -- note\n `index` int, /* c */ `b` int not null )\n\
                   auto partition by range (date_trunc(`b`, 'day')) ()\n\
                   distributed by random\n\
                   properties (\"function_column.sequence_type\" = \"bigint\")";
        let t = parse_show_create(ddl).unwrap();
        assert_eq!(t.name, "we`ird");
        assert_eq!(t.database.as_deref(), Some("db"));
        assert_eq!(t.key_model, None);
        assert_eq!(t.columns[0].name, "index");
        let p = t.partitioning.unwrap();
        assert!(p.auto);
        assert_eq!(p.columns, vec!["b"]);
        assert!(p.partitions.is_empty());
        assert_eq!(
            t.distribution,
            Some(Distribution::Random {
                buckets: Buckets::Auto
            })
        );
        assert_eq!(t.sequence, Some(SequenceColumn::Hidden(DorisType::BigInt)));

        let less = "CREATE TABLE t (k int) DUPLICATE KEY(k) PARTITION BY RANGE(k) \
                    (PARTITION p1 VALUES LESS THAN (\"10\"), PARTITION p2 VALUES LESS THAN (MAXVALUE)) \
                    DISTRIBUTED BY HASH(k) BUCKETS 1";
        let p = parse_show_create(less).unwrap().partitioning.unwrap();
        assert_eq!(
            p.partitions[0].values,
            PartitionValues::LessThan(vec!["10".into()])
        );
        assert_eq!(
            p.partitions[1].values,
            PartitionValues::LessThan(vec!["MAXVALUE".into()])
        );
        assert_eq!(read_backtick("`x`"), Some(("x".into(), 3)));
    }

    #[test]
    fn malformed_text_is_a_typed_error() {
        let cases = [
            "",
            "SELECT 1",
            "CREATE TABLE t",
            "CREATE TABLE t (",
            "CREATE TABLE t ()",
            "CREATE TABLE t (a FOO)",
            "CREATE TABLE t (a INT) DUPLICATE KEY(b)",
            "CREATE TABLE t (a INT) DISTRIBUTED BY HASH(a) BUCKETS 0",
            "CREATE TABLE t (a INT) PROPERTIES (\"k\" = )",
            "CREATE TABLE t (a INT) PARTITION BY HASH(a)",
            "CREATE TABLE t (a INT 'x",
            "CREATE TABLE t (a INT) ENGINE=",
            "CREATE TABLE t (a INT) PROPERTIES (\"function_column.sequence_type\" = \"nope\")",
        ];
        for text in cases {
            let e = parse_show_create(text).unwrap_err();
            assert!(matches!(e, SqlError::MetadataParse(_)), "{text}: {e:?}");
        }
    }
}
