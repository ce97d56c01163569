//! The statements of an atomic, idempotent write (no I/O): a staging table per run, the
//! transaction that publishes a run (`BEGIN WITH LABEL`, the rows, one row of the commit
//! ledger, `COMMIT`), the ledger itself, and the names that tie a staging table to its
//! idempotence key and its creation time.
//!
//! A run loads its rows into a DUPLICATE staging table through Stream Load, each task
//! attempt tagging its rows with its own tag in [`LOAD_TAG_COLUMN`]; the run then copies the
//! rows of the attempts that succeeded into the target with one labelled INSERT, so the
//! target changes once, or not at all. See `docs/consistency.md`.
//!
//! ```
//! use doris_write::staging::*;
//! let name = StagingName::new("nightly-2024-06-01", 1_717_200_000, 0xabcdef12);
//! assert!(name.to_string().starts_with("daft_doris_stage_"));
//! let parsed = StagingName::parse(&name.to_string()).unwrap();
//! assert_eq!(parsed, name);
//! assert!(parsed.belongs_to("nightly-2024-06-01"));
//! ```

use std::fmt;

use doris_sql::{DorisType, Literal, Result, SqlError, TableSchema, property_string, quote_ident};

/// The staging table's tag column: which task attempt loaded the row.
pub const LOAD_TAG_COLUMN: &str = "__dd_load";

/// Every staging table's name starts with this (a letter first: Doris refuses a table
/// name that starts with `_`).
pub const STAGING_PREFIX: &str = "daft_doris_stage_";

/// A staging table's name: the key's hash, the creation time and a random part
/// (`daft_doris_stage_<16 hex>_<unix seconds hex>_<8 hex>`, 51 characters at most: a
/// name Doris's table rule takes, `^[a-zA-Z][a-zA-Z0-9-_]*$` within 64 characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StagingName {
    /// FNV-1a hash of the idempotence key.
    pub key_hash: u64,
    /// Creation time, Unix seconds.
    pub created: u64,
    /// Random part, so two runs of one key never share a table.
    pub run: u32,
}

impl StagingName {
    /// A new name for a run of `key`.
    pub fn new(key: &str, created_unix_seconds: u64, run: u32) -> Self {
        Self {
            key_hash: key_hash(key),
            created: created_unix_seconds,
            run,
        }
    }

    /// Reads a name this module made; `None` for any other table name.
    pub fn parse(name: &str) -> Option<Self> {
        let rest = name.strip_prefix(STAGING_PREFIX)?;
        let mut parts = rest.split('_');
        let key_hash = u64::from_str_radix(parts.next()?, 16).ok()?;
        let created = u64::from_str_radix(parts.next()?, 16).ok()?;
        let run = u32::from_str_radix(parts.next()?, 16).ok()?;
        if parts.next().is_some() {
            return None;
        }
        Some(Self {
            key_hash,
            created,
            run,
        })
    }

    /// Whether this staging table was made for `key`.
    pub fn belongs_to(&self, key: &str) -> bool {
        self.key_hash == key_hash(key)
    }
}

impl fmt::Display for StagingName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{STAGING_PREFIX}{:016x}_{:x}_{:08x}",
            self.key_hash, self.created, self.run
        )
    }
}

/// FNV-1a, 64 bits: stable across releases and platforms (unlike `std`'s hasher).
fn key_hash(key: &str) -> u64 {
    key.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// `CREATE TABLE` for a run's staging table beside `target` in `database`: the tag column,
/// then every target column with its type (all nullable, no aggregation), DUPLICATE KEY on
/// the tag, one bucket per tag hash, and the target's replication property when it has one.
///
/// Columns whose types a DUPLICATE table cannot hold as values (HLL, BITMAP,
/// QUANTILE_STATE, AGG_STATE) are refused: such tables are loaded through their own
/// aggregation, not by copying rows.
pub fn staging_table_ddl(
    database: &str,
    name: &StagingName,
    target: &TableSchema,
) -> Result<String> {
    let mut columns = vec![format!(
        "{} BIGINT NOT NULL",
        quote_ident("column", LOAD_TAG_COLUMN)?
    )];
    for column in &target.columns {
        if column.name == LOAD_TAG_COLUMN {
            return Err(SqlError::InvalidQuery(format!(
                "the table has a column named {LOAD_TAG_COLUMN}, which atomic writes use"
            )));
        }
        if matches!(
            column.ty,
            DorisType::Hll
                | DorisType::Bitmap
                | DorisType::QuantileState
                | DorisType::AggState { .. }
        ) {
            return Err(SqlError::InvalidQuery(format!(
                "column {} has an aggregate-state type, which an atomic write cannot stage",
                column.name
            )));
        }
        columns.push(format!(
            "{} {} NULL",
            quote_ident("column", &column.name)?,
            column.ty.spell(doris_sql::Spelling::Upper)
        ));
    }
    let replication = ["replication_allocation", "replication_num"]
        .iter()
        .find_map(|key| target.property(key).map(|v| (*key, v)));
    let mut properties = vec![("light_schema_change", "true")];
    if let Some(r) = replication {
        properties.push(r);
    }
    let properties = properties
        .iter()
        .map(|(k, v)| format!("{} = {}", property_string(k), property_string(v)))
        .collect::<Vec<_>>()
        .join(", ");
    Ok(format!(
        "CREATE TABLE {}.{} ({}) DUPLICATE KEY({tag}) DISTRIBUTED BY HASH({tag}) BUCKETS 1 PROPERTIES ({properties})",
        quote_ident("database", database)?,
        quote_ident("table", &name.to_string())?,
        columns.join(", "),
        tag = quote_ident("column", LOAD_TAG_COLUMN)?,
    ))
}

/// The Stream Load `columns` header that loads `fields` into a staging table and sets the
/// tag column to `tag` (a constant mapping, so the body carries no tag).
pub fn staging_columns_header(fields: &[String], tag: &str) -> Result<String> {
    validate_tag(tag)?;
    let mut out: Vec<String> = fields
        .iter()
        .map(|f| quote_ident("column", f))
        .collect::<Result<_>>()?;
    out.push(format!("{}={tag}", quote_ident("column", LOAD_TAG_COLUMN)?));
    Ok(out.join(","))
}

/// `` `a`, `b` ``: quoted column names for a statement's column list.
fn column_list(columns: &[String]) -> Result<String> {
    Ok(columns
        .iter()
        .map(|c| quote_ident("column", c))
        .collect::<Result<Vec<_>>>()?
        .join(", "))
}

/// `INSERT INTO target (cols) SELECT cols FROM staging WHERE 1 = 0`: checks the
/// publishing INSERT's privileges (LOAD on the target, SELECT on the staging table) and
/// columns without loading a row. Doris plans it to an empty set and begins no
/// transaction, so no label is taken.
pub fn privilege_probe_insert(
    database: &str,
    target: &str,
    staging: &StagingName,
    columns: &[String],
) -> Result<String> {
    if columns.is_empty() {
        return Err(SqlError::InvalidQuery(
            "a probe needs at least one column".into(),
        ));
    }
    let cols = column_list(columns)?;
    Ok(format!(
        "INSERT INTO {db}.{target} ({cols}) SELECT {cols} FROM {db}.{staging} WHERE 1 = 0",
        db = quote_ident("database", database)?,
        target = quote_ident("table", target)?,
        staging = quote_ident("table", &staging.to_string())?,
    ))
}

/// The one statement that publishes a run: `INSERT INTO target WITH LABEL … (columns)
/// SELECT columns FROM staging WHERE tag IN (tags)`.
pub fn publish_insert(
    database: &str,
    target: &str,
    staging: &StagingName,
    label: &str,
    columns: &[String],
    tags: &[String],
) -> Result<String> {
    publish_into(database, target, staging, Some(label), columns, tags)
}

/// `INSERT INTO target [WITH LABEL …] (columns) SELECT … WHERE tag IN (tags)`, refused
/// without a tag (nothing to publish).
fn publish_into(
    database: &str,
    target: &str,
    staging: &StagingName,
    label: Option<&str>,
    columns: &[String],
    tags: &[String],
) -> Result<String> {
    if tags.is_empty() {
        return Err(SqlError::InvalidQuery(
            "a publish needs at least one tag".into(),
        ));
    }
    publish_statement(
        "INSERT INTO",
        database,
        target,
        staging,
        label,
        columns,
        tags,
    )
}

/// The statement that publishes a run as a replacement of the whole table: `INSERT
/// OVERWRITE TABLE target WITH LABEL … (columns) SELECT columns FROM staging WHERE tag IN
/// (tags)`; with no tag the table is emptied (`WHERE 1 = 0`), still under the label.
pub fn publish_overwrite(
    database: &str,
    target: &str,
    staging: &StagingName,
    label: &str,
    columns: &[String],
    tags: &[String],
) -> Result<String> {
    publish_statement(
        "INSERT OVERWRITE TABLE",
        database,
        target,
        staging,
        Some(label),
        columns,
        tags,
    )
}

/// `<verb> target [WITH LABEL l] (columns) SELECT columns FROM staging WHERE tag IN (tags)`.
fn publish_statement(
    verb: &str,
    database: &str,
    target: &str,
    staging: &StagingName,
    label: Option<&str>,
    columns: &[String],
    tags: &[String],
) -> Result<String> {
    let with_label = match label {
        Some(label) => {
            validate_label(label)?;
            format!(" WITH LABEL {label}")
        }
        None => String::new(),
    };
    if columns.is_empty() {
        return Err(SqlError::InvalidQuery(
            "a publish needs at least one column".into(),
        ));
    }
    let cols = column_list(columns)?;
    Ok(format!(
        "{verb} {db}.{target}{with_label} ({cols}) SELECT {cols} FROM {db}.{staging} WHERE {filter}",
        db = quote_ident("database", database)?,
        target = quote_ident("table", target)?,
        staging = quote_ident("table", &staging.to_string())?,
        filter = tag_filter(tags)?,
    ))
}

/// `tag IN (17, 42)`, or `1 = 0` for no tag.
fn tag_filter(tags: &[String]) -> Result<String> {
    tag_filter_on("", tags)
}

/// [`tag_filter`] with the tag column qualified by `qualifier` (`` `s`. ``).
fn tag_filter_on(qualifier: &str, tags: &[String]) -> Result<String> {
    if tags.is_empty() {
        return Ok("1 = 0".to_owned());
    }
    let tags = tags
        .iter()
        .map(|t| validate_tag(t).map(|()| t.as_str()))
        .collect::<Result<Vec<_>>>()?
        .join(", ");
    Ok(format!(
        "{qualifier}{} IN ({tags})",
        quote_ident("column", LOAD_TAG_COLUMN)?
    ))
}

/// A label as Doris's SQL takes it (`WITH LABEL <identifier>`, unquoted): a letter, then
/// letters, digits or `_`, 128 characters at most (see `atomic::key_label`).
fn validate_label(label: &str) -> Result<()> {
    let mut chars = label.chars();
    let starts_with_letter = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    if !starts_with_letter
        || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        || label.len() > 128
    {
        return Err(SqlError::InvalidQuery(
            "a label in SQL is a letter, then letters, digits or '_', 128 characters at most"
                .into(),
        ));
    }
    Ok(())
}

/// A DATETIME literal from `YYYY-MM-DD HH:MM:SS` text (checked, so no other text is sent).
fn datetime(text: &str) -> Result<String> {
    let parsed: doris_sql::DateTime = text
        .parse()
        .map_err(|_| SqlError::InvalidQuery("a ledger time is YYYY-MM-DD HH:MM:SS".into()))?;
    Literal::DateTime(parsed).to_sql()
}

/// Whether `name` is one of the atomic write's own tables (a staging table, or the default
/// commit ledger): what a catalog leaves out of its listings.
pub fn is_internal_table(name: &str) -> bool {
    name == DEFAULT_LEDGER_TABLE || StagingName::parse(name).is_some()
}

/// The commit ledger's default name: one table per database, created by the first atomic
/// write that uses it.
pub const DEFAULT_LEDGER_TABLE: &str = "daft_doris_commits";

/// The ledger's columns, in order: the key's label, the table written, the rows published
/// (NULL when a repaired record does not know them) and when the record was written (UTC).
pub const LEDGER_COLUMNS: [&str; 4] = ["key_label", "target_table", "row_count", "committed_at"];

/// `CREATE TABLE IF NOT EXISTS` for the commit ledger in `database`: DUPLICATE on the
/// label (a key may be recorded twice, harmlessly), one bucket, and `target`'s
/// replication property when it has one (so the ledger lives where the data does).
pub fn ledger_table_ddl(database: &str, ledger: &str, target: &TableSchema) -> Result<String> {
    let replication = ["replication_allocation", "replication_num"]
        .iter()
        .find_map(|key| target.property(key).map(|v| (*key, v)));
    let properties = match replication {
        Some((k, v)) => format!(
            " PROPERTIES ({} = {})",
            property_string(k),
            property_string(v)
        ),
        None => String::new(),
    };
    let [label, table, rows, at] = LEDGER_COLUMNS.map(|c| quote_ident("column", c));
    let label = label?;
    Ok(format!(
        "CREATE TABLE IF NOT EXISTS {}.{} ({label} VARCHAR(128) NOT NULL, {} VARCHAR(256) NOT NULL, \
         {} BIGINT NULL, {} DATETIME NOT NULL) DUPLICATE KEY({label}) \
         DISTRIBUTED BY HASH({label}) BUCKETS 1{properties}",
        quote_ident("database", database)?,
        quote_ident("table", ledger)?,
        table?,
        rows?,
        at?,
    ))
}

/// `SELECT row_count, committed_at FROM ledger WHERE key_label = '…'`: the key's records.
pub fn ledger_lookup_query(database: &str, ledger: &str, label: &str) -> Result<String> {
    validate_label(label)?;
    Ok(format!(
        "SELECT {}, {} FROM {}.{} WHERE {} = {}",
        quote_ident("column", LEDGER_COLUMNS[2])?,
        quote_ident("column", LEDGER_COLUMNS[3])?,
        quote_ident("database", database)?,
        quote_ident("table", ledger)?,
        quote_ident("column", LEDGER_COLUMNS[0])?,
        string(label)?,
    ))
}

/// `INSERT INTO ledger (…) SELECT … FROM ledger WHERE 1 = 0`: checks LOAD and SELECT on
/// the ledger without writing a record (an INSERT that plans to an empty set begins no
/// transaction). Not a COUNT over the staging table: an aggregate always yields one row.
pub fn ledger_probe_insert(database: &str, ledger: &str) -> Result<String> {
    let cols = column_list(&LEDGER_COLUMNS.map(str::to_owned))?;
    Ok(format!(
        "INSERT INTO {db}.{ledger} ({cols}) SELECT {cols} FROM {db}.{ledger} WHERE 1 = 0",
        db = quote_ident("database", database)?,
        ledger = quote_ident("table", ledger)?,
    ))
}

/// One committed key, as the publishing transaction records it in the ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerRecord<'a> {
    /// The key's label.
    pub label: &'a str,
    /// The table the rows went to.
    pub target_table: &'a str,
    /// When, UTC, `YYYY-MM-DD HH:MM:SS`.
    pub committed_at: &'a str,
}

/// The ledger row of a publish, counted from the staged rows it publishes: `INSERT INTO
/// ledger (…) SELECT '<label>', '<table>', COUNT(*), '<time>' FROM staging WHERE tag IN
/// (…)`. It reads a table, so inside a transaction Doris takes it through the same
/// `INSERT … SELECT` path as the rows (constant rows, `VALUES` or a SELECT without FROM,
/// go through another path, and the two cannot mix in one transaction).
pub fn ledger_insert_from_staging(
    database: &str,
    ledger: &str,
    staging: &StagingName,
    record: &LedgerRecord<'_>,
    tags: &[String],
) -> Result<String> {
    validate_label(record.label)?;
    if tags.is_empty() {
        // COUNT(*) over no rows is still one row: a record of nothing published.
        return Err(SqlError::InvalidQuery(
            "a ledger record needs at least one tag".into(),
        ));
    }
    Ok(format!(
        "INSERT INTO {}.{} ({}) SELECT {}, {}, COUNT(*), {} FROM {}.{} WHERE {}",
        quote_ident("database", database)?,
        quote_ident("table", ledger)?,
        column_list(&LEDGER_COLUMNS.map(str::to_owned))?,
        string(record.label)?,
        string(record.target_table)?,
        datetime(record.committed_at)?,
        quote_ident("database", database)?,
        quote_ident("table", &staging.to_string())?,
        tag_filter(tags)?,
    ))
}

/// A ledger row written on its own (`INSERT INTO ledger (…) VALUES (…)`): after an
/// `INSERT OVERWRITE`, which cannot run inside a transaction, and to record a key whose
/// label Doris still remembers but the ledger lacks (a key committed before the ledger
/// existed). `rows` is `None` when it is not known.
pub fn ledger_insert_values(
    database: &str,
    ledger: &str,
    record: &LedgerRecord<'_>,
    rows: Option<u64>,
) -> Result<String> {
    validate_label(record.label)?;
    Ok(format!(
        "INSERT INTO {}.{} ({}) VALUES ({}, {}, {}, {})",
        quote_ident("database", database)?,
        quote_ident("table", ledger)?,
        column_list(&LEDGER_COLUMNS.map(str::to_owned))?,
        string(record.label)?,
        string(record.target_table)?,
        rows.map_or_else(|| "NULL".to_owned(), |n| n.to_string()),
        datetime(record.committed_at)?,
    ))
}

/// `DELETE FROM ledger WHERE committed_at < '<before>'`: the records written before a time
/// (UTC, `YYYY-MM-DD HH:MM:SS`, checked). A plain literal on the right, as Doris's delete
/// conditions take them.
pub fn ledger_cleanup_statement(database: &str, ledger: &str, before: &str) -> Result<String> {
    let _: doris_sql::DateTime = before
        .parse()
        .map_err(|_| SqlError::InvalidQuery("a ledger time is YYYY-MM-DD HH:MM:SS".into()))?;
    Ok(format!(
        "DELETE FROM {}.{} WHERE {} < {}",
        quote_ident("database", database)?,
        quote_ident("table", ledger)?,
        quote_ident("column", LEDGER_COLUMNS[3])?,
        string(before)?,
    ))
}

/// `BEGIN WITH LABEL <label>`: the publishing transaction, under the key's label.
pub fn begin_with_label(label: &str) -> Result<String> {
    validate_label(label)?;
    Ok(format!("BEGIN WITH LABEL {label}"))
}

/// The rows of a publish inside its transaction: `INSERT INTO target (columns) SELECT
/// columns FROM staging WHERE tag IN (tags)`, without a label of its own (Doris refuses
/// an INSERT whose label differs from the transaction's).
pub fn publish_rows_insert(
    database: &str,
    target: &str,
    staging: &StagingName,
    columns: &[String],
    tags: &[String],
) -> Result<String> {
    publish_into(database, target, staging, None, columns, tags)
}

/// Whether a table holds what an overwrite published, after its answer was lost: one row
/// with the table's row count and the count of published rows the table lacks (compared
/// null-safely on `columns`; pass only the columns [`null_safe_comparable`] accepts, since
/// Doris refuses `<=>` on MAP, STRUCT and JSON; with none, a published row counts as
/// present when the table holds any row). Doris commits an `INSERT OVERWRITE`'s label when
/// its rows are in temporary partitions and replaces the partitions after, so a committed
/// label alone does not prove the replacement; the table holding exactly the published
/// rows does (whichever way it came to hold them).
pub fn overwrite_check_query(
    database: &str,
    target: &str,
    staging: &StagingName,
    columns: &[String],
    tags: &[String],
) -> Result<String> {
    let db = quote_ident("database", database)?;
    let target = quote_ident("table", target)?;
    let same = columns
        .iter()
        .map(|c| {
            let c = quote_ident("column", c)?;
            Ok(format!("`__t`.{c} <=> `__s`.{c}"))
        })
        .collect::<Result<Vec<_>>>()?
        .join(" AND ");
    let same = if same.is_empty() {
        "1 = 1".to_owned()
    } else {
        same
    };
    Ok(format!(
        "SELECT (SELECT COUNT(*) FROM {db}.{target}) AS `target_rows`, \
         (SELECT COUNT(*) FROM {db}.{staging} `__s` WHERE {filter} AND NOT EXISTS \
         (SELECT 1 FROM {db}.{target} `__t` WHERE {same})) AS `missing_rows`",
        staging = quote_ident("table", &staging.to_string())?,
        filter = tag_filter_on("`__s`.", tags)?,
    ))
}

/// Whether Doris compares values of `ty` with `<=>`: not MAP, STRUCT, JSON, VARIANT,
/// ARRAY, nor the aggregate states.
pub fn null_safe_comparable(ty: &DorisType) -> bool {
    !matches!(
        ty,
        DorisType::Map { .. }
            | DorisType::Struct { .. }
            | DorisType::Array { .. }
            | DorisType::Json
            | DorisType::Variant
            | DorisType::Hll
            | DorisType::Bitmap
            | DorisType::QuantileState
            | DorisType::AggState { .. }
    )
}

/// `SELECT tag, COUNT(*) FROM staging GROUP BY tag`: the rows each attempt staged, to be
/// checked against what the loads reported before anything is published.
pub fn staged_counts_query(database: &str, staging: &StagingName) -> Result<String> {
    Ok(format!(
        "SELECT {tag}, COUNT(*) FROM {}.{} GROUP BY {tag}",
        quote_ident("database", database)?,
        quote_ident("table", &staging.to_string())?,
        tag = quote_ident("column", LOAD_TAG_COLUMN)?,
    ))
}

/// Tags are made by the writer ([`LOAD_TAG_COLUMN`] is a BIGINT: a sort key and a filter
/// that cost little): a positive integer of 1 to 18 decimal digits, no leading zero, so it
/// reads back from Doris exactly as written.
fn validate_tag(tag: &str) -> Result<()> {
    if tag.is_empty()
        || tag.len() > 18
        || tag.starts_with('0')
        || !tag.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(SqlError::InvalidQuery(
            "a load tag is a positive integer of 1 to 18 digits".into(),
        ));
    }
    Ok(())
}

fn string(s: &str) -> Result<String> {
    Literal::String(s.to_owned()).to_sql()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    fn target() -> TableSchema {
        doris_sql::parse_show_create(
            "CREATE TABLE `t` (`id` BIGINT NOT NULL, `total` BIGINT SUM NULL) \
             AGGREGATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 4 \
             PROPERTIES ('replication_allocation' = 'tag.location.default: 1')",
        )
        .unwrap()
    }

    #[test]
    fn the_overwrite_check_compares_only_what_doris_compares() {
        use doris_sql::DorisType;
        assert!(null_safe_comparable(&DorisType::BigInt));
        assert!(null_safe_comparable(&DorisType::String));
        assert!(!null_safe_comparable(&DorisType::Json));
        assert!(!null_safe_comparable(&DorisType::Variant));
        let staging = StagingName::new("k", 16, 1);
        let none = overwrite_check_query("d", "t", &staging, &[], &["11".into()]).unwrap();
        assert!(none.contains("WHERE 1 = 1"), "{none}");
        assert!(!none.contains("<=>"), "{none}");
    }

    #[test]
    fn the_staging_table_is_duplicate_on_the_tag_with_every_column_plain() {
        let ddl = staging_table_ddl("d", &StagingName::new("k", 16, 1), &target()).unwrap();
        assert_eq!(
            ddl,
            "CREATE TABLE `d`.`daft_doris_stage_af63e64c8601fd8a_10_00000001` (`__dd_load` BIGINT NOT NULL, \
             `id` BIGINT NULL, `total` BIGINT NULL) DUPLICATE KEY(`__dd_load`) \
             DISTRIBUTED BY HASH(`__dd_load`) BUCKETS 1 PROPERTIES ('light_schema_change' = 'true', \
             'replication_allocation' = 'tag.location.default: 1')"
        );
        let parsed = doris_sql::parse_show_create(&ddl).unwrap();
        assert_eq!(parsed.key_columns, [LOAD_TAG_COLUMN]);
        assert!(
            parsed
                .columns
                .iter()
                .skip(1)
                .all(|c| c.nullable && c.aggregation.is_none())
        );
    }

    #[test]
    fn aggregate_state_columns_and_a_clashing_name_are_refused() {
        let hll = doris_sql::parse_show_create(
            "CREATE TABLE `t` (`id` INT NOT NULL, `h` HLL HLL_UNION NOT NULL) AGGREGATE KEY(`id`) \
             DISTRIBUTED BY HASH(`id`) BUCKETS 1",
        )
        .unwrap();
        assert!(staging_table_ddl("d", &StagingName::new("k", 1, 1), &hll).is_err());
        let clash = doris_sql::parse_show_create(
            "CREATE TABLE `t` (`__dd_load` INT NOT NULL) DUPLICATE KEY(`__dd_load`) \
             DISTRIBUTED BY HASH(`__dd_load`) BUCKETS 1",
        )
        .unwrap();
        assert!(staging_table_ddl("d", &StagingName::new("k", 1, 1), &clash).is_err());
    }

    #[test]
    fn the_publish_selects_only_the_given_tags() {
        let staging = StagingName::new("k", 16, 1);
        let sql = publish_insert(
            "d",
            "t",
            &staging,
            "dd_k",
            &["id".into(), "na`me".into()],
            &["11".into(), "22".into()],
        )
        .unwrap();
        assert_eq!(
            sql,
            "INSERT INTO `d`.`t` WITH LABEL dd_k (`id`, `na``me`) SELECT `id`, `na``me` FROM \
             `d`.`daft_doris_stage_af63e64c8601fd8a_10_00000001` WHERE `__dd_load` IN (11, 22)"
        );
        assert!(publish_insert("d", "t", &staging, "dd_k", &["id".into()], &[]).is_err());
        assert!(
            publish_insert(
                "d",
                "t",
                &staging,
                "dd_k",
                &["id".into()],
                &["x' OR 1=1 --".into()]
            )
            .is_err()
        );
        assert!(publish_insert("d", "t", &staging, "a b", &["id".into()], &["x".into()]).is_err());
    }

    #[test]
    fn an_overwrite_replaces_the_table_and_an_empty_one_empties_it() {
        let staging = StagingName::new("k", 16, 1);
        let sql =
            publish_overwrite("d", "t", &staging, "dd_k", &["id".into()], &["11".into()]).unwrap();
        assert_eq!(
            sql,
            "INSERT OVERWRITE TABLE `d`.`t` WITH LABEL dd_k (`id`) SELECT `id` FROM \
             `d`.`daft_doris_stage_af63e64c8601fd8a_10_00000001` WHERE `__dd_load` IN (11)"
        );
        let empty = publish_overwrite("d", "t", &staging, "dd_k", &["id".into()], &[]).unwrap();
        assert!(empty.ends_with("WHERE 1 = 0"), "{empty}");
        assert!(publish_overwrite("d", "t", &staging, "dd_k", &[], &[]).is_err());
    }

    #[test]
    fn the_ledger_is_duplicate_on_the_label_beside_the_target() {
        let ddl = ledger_table_ddl("d", DEFAULT_LEDGER_TABLE, &target()).unwrap();
        assert_eq!(
            ddl,
            "CREATE TABLE IF NOT EXISTS `d`.`daft_doris_commits` (`key_label` VARCHAR(128) NOT NULL, \
             `target_table` VARCHAR(256) NOT NULL, `row_count` BIGINT NULL, `committed_at` DATETIME NOT NULL) \
             DUPLICATE KEY(`key_label`) DISTRIBUTED BY HASH(`key_label`) BUCKETS 1 \
             PROPERTIES ('replication_allocation' = 'tag.location.default: 1')"
        );
        let parsed =
            doris_sql::parse_show_create(ddl.replace(" IF NOT EXISTS", "").as_str()).unwrap();
        assert_eq!(parsed.key_columns, ["key_label"]);
        assert!(ledger_table_ddl("d", "bad`name\u{0}", &target()).is_err());
    }

    #[test]
    fn the_ledger_record_counts_the_published_tags_and_reads_a_table() {
        let staging = StagingName::new("k", 16, 1);
        let record = LedgerRecord {
            label: "dd_k",
            target_table: "or'ders",
            committed_at: "2026-12-04 10:00:00",
        };
        let sql = ledger_insert_from_staging("d", "l", &staging, &record, &["11".into()]).unwrap();
        assert_eq!(
            sql,
            "INSERT INTO `d`.`l` (`key_label`, `target_table`, `row_count`, `committed_at`) \
             SELECT 'dd_k', 'or''ders', COUNT(*), CAST('2026-12-04 10:00:00' AS DATETIME) \
             FROM `d`.`daft_doris_stage_af63e64c8601fd8a_10_00000001` WHERE `__dd_load` IN (11)"
        );
        // COUNT(*) over no tag would still record a commit: refused.
        assert!(ledger_insert_from_staging("d", "l", &staging, &record, &[]).is_err());
        let bad_time = LedgerRecord {
            committed_at: "now()",
            ..record.clone()
        };
        assert!(ledger_insert_from_staging("d", "l", &staging, &bad_time, &["11".into()]).is_err());
        let alone = ledger_insert_values("d", "l", &record, None).unwrap();
        assert!(
            alone.ends_with(
                "VALUES ('dd_k', 'or''ders', NULL, CAST('2026-12-04 10:00:00' AS DATETIME))"
            ),
            "{alone}"
        );
        assert_eq!(
            ledger_lookup_query("d", "l", "dd_k").unwrap(),
            "SELECT `row_count`, `committed_at` FROM `d`.`l` WHERE `key_label` = 'dd_k'"
        );
        assert!(ledger_lookup_query("d", "l", "x' OR '1'='1").is_err());
        assert_eq!(
            ledger_probe_insert("d", "l").unwrap(),
            "INSERT INTO `d`.`l` (`key_label`, `target_table`, `row_count`, `committed_at`) \
             SELECT `key_label`, `target_table`, `row_count`, `committed_at` FROM `d`.`l` WHERE 1 = 0"
        );
    }

    #[test]
    fn old_ledger_records_are_deleted_by_a_plain_time_condition() {
        assert_eq!(
            ledger_cleanup_statement("d", "l", "2026-11-01 00:00:00").unwrap(),
            "DELETE FROM `d`.`l` WHERE `committed_at` < '2026-11-01 00:00:00'"
        );
        assert!(ledger_cleanup_statement("d", "l", "yesterday").is_err());
    }

    #[test]
    fn the_publishing_transaction_names_its_label_once() {
        let staging = StagingName::new("k", 16, 1);
        assert_eq!(begin_with_label("dd_k").unwrap(), "BEGIN WITH LABEL dd_k");
        assert!(begin_with_label("dd k; DROP").is_err());
        let rows = publish_rows_insert("d", "t", &staging, &["id".into()], &["11".into()]).unwrap();
        assert_eq!(
            rows,
            "INSERT INTO `d`.`t` (`id`) SELECT `id` FROM \
             `d`.`daft_doris_stage_af63e64c8601fd8a_10_00000001` WHERE `__dd_load` IN (11)"
        );
        assert!(
            !rows.contains("LABEL"),
            "Doris refuses a label of its own inside a transaction"
        );
        assert!(publish_rows_insert("d", "t", &staging, &["id".into()], &[]).is_err());
    }

    #[test]
    fn an_overwrite_is_checked_by_the_rows_the_table_holds() {
        let staging = StagingName::new("k", 16, 1);
        let sql = overwrite_check_query(
            "d",
            "t",
            &staging,
            &["id".into(), "v".into()],
            &["7".into()],
        )
        .unwrap();
        assert_eq!(
            sql,
            "SELECT (SELECT COUNT(*) FROM `d`.`t`) AS `target_rows`, (SELECT COUNT(*) FROM \
             `d`.`daft_doris_stage_af63e64c8601fd8a_10_00000001` `__s` WHERE `__s`.`__dd_load` IN (7) \
             AND NOT EXISTS (SELECT 1 FROM `d`.`t` `__t` WHERE `__t`.`id` <=> `__s`.`id` AND \
             `__t`.`v` <=> `__s`.`v`)) AS `missing_rows`"
        );
    }

    #[test]
    fn the_columns_header_maps_the_tag_as_a_constant() {
        assert_eq!(
            staging_columns_header(&["id".into(), "v".into()], "901").unwrap(),
            "`id`,`v`,`__dd_load`=901"
        );
        for bad in ["t'1", "", "0", "012", "1234567890123456789", "-1", "1 OR 1"] {
            assert!(
                staging_columns_header(&["id".into()], bad).is_err(),
                "{bad}"
            );
        }
    }

    proptest! {
        #[test]
        fn names_round_trip_and_other_tables_are_not_staging(key in ".{0,80}", created in any::<u64>(), run in any::<u32>(), other in "[a-z_]{1,40}") {
            let name = StagingName::new(&key, created, run);
            let text = name.to_string();
            prop_assert!(text.len() <= 64);
            prop_assert_eq!(StagingName::parse(&text), Some(name));
            prop_assert!(name.belongs_to(&key));
            prop_assert!(doris_sql::validate_ident("table", &text).is_ok());
            if !other.starts_with(STAGING_PREFIX) {
                prop_assert_eq!(StagingName::parse(&other), None);
            }
        }
    }
}
