//! # doris-sql
//!
//! Apache Doris SQL without I/O: everything a connector needs to *say* to Doris and to
//! *understand* what Doris says about a table, as pure functions over plain data. No
//! networking, no async runtime, no Python; the only heavy-ish dependency is
//! `arrow-schema` (types only).
//!
//! | module | what it does | entry points |
//! |---|---|---|
//! | identifiers | validation and backtick quoting | [`quote_ident`], [`TableRef`] |
//! | literals | exact text-protocol rendering of typed values | [`Literal`], [`Decimal`], [`Date`], [`DateTime`], [`Time`] |
//! | predicate IR | a serialisable filter tree, built from an engine's expressions | [`Expr`] |
//! | translation | pushes the exact conjuncts, returns the residual | [`translate_filter`], [`render_predicate`] |
//! | trusted fragments | `unsafe_where_sql` with `:name` parameters | [`bind_trusted_where`], [`scan_fragment`] |
//! | SELECT | projection, `TABLET(…)`, WHERE, LIMIT, count | [`SelectBuilder`] |
//! | types | every Doris type spelling; mapping to Arrow | [`DorisType`], [`Spelling`] |
//! | write rules | which Arrow types may go into which column | [`check_writable`] |
//! | write targets | a whole write checked against a table, by name | [`check_write_target`] |
//! | metadata | `SHOW CREATE TABLE` and `DESC` into a table schema | [`parse_show_create`], [`parse_describe`], [`TableSchema`] |
//! | nested text | Doris's ARRAY/MAP/STRUCT text into JSON | [`nested_to_json`] |
//! | table creation | `CREATE TABLE` from an Arrow schema (catalogs) | [`create_table_ddl`], [`doris_type_for`] |
//! | SQL sessions | the session trait write coordinators drive, and what a failure may mean | [`session::SqlSession`] |
//! | releases | which Doris release a server runs (`@@version_comment`) | [`release::DorisRelease`] |
//! | SQL mode | a session that reads backslash escapes, as the literals are rendered for | [`sql_mode::backslash_escapes_statement`] |
//!
//! ## A read task's statement, end to end
//!
//! ```
//! use std::collections::BTreeMap;
//! use doris_sql::*;
//!
//! // The engine's filter, as IR (the Python binding sends it as JSON).
//! let filter = Expr::col("score").gt_eq(Expr::lit(Literal::Int64(80)))
//!     .and(Expr::col("name").arithmetic(ArithmeticOp::Divide, Expr::lit(Literal::Int64(2)))
//!         .eq(Expr::lit(Literal::Int64(1))));
//! let translation = translate_filter(&filter);
//! // Division is never pushed: it stays for the engine to apply.
//! assert!(translation.residual.is_some());
//!
//! let trusted = bind_trusted_where(
//!     "kind = :kind",
//!     &BTreeMap::from([("kind".to_owned(), Param::from(Literal::String("click".into())))]),
//! ).unwrap();
//! let sql = SelectBuilder::new(TableRef::new("analytics", "events").unwrap())
//!     .columns(["event_id", "score", "name"])
//!     .trusted_where(trusted)
//!     .filter(&translation)
//!     .build()
//!     .unwrap();
//! assert_eq!(sql, "SELECT `event_id`, `score`, `name` FROM `analytics`.`events` \
//!                  WHERE (kind = 'click') AND (`score` >= 80)");
//! ```
//!
//! ## Errors and secrets
//!
//! All fallible functions return [`SqlError`]; its [`kind`](SqlError::kind) is an
//! [`ErrorKind`], the vocabulary every crate of the workspace sorts its errors into.
//! Error texts name identifiers, positions and
//! parameter names, never literal values, bound parameters or trusted SQL text. Where a
//! cluster is and the credentials to reach it are the `doris-connection` crate's; Doris 4.0
//! streaming jobs (`CREATE JOB … ON STREAMING`) are the `doris-jobs` crate's.

mod create_table;
mod error;
mod expr;
mod ident;
mod literal;
mod metadata;
mod nested;
mod params;
pub mod release;
mod select;
pub mod session;
pub mod sql_mode;
mod translate;
mod types;
mod write_compat;
mod write_target;

pub use create_table::{
    CreateTableOptions, MAX_BUCKETS, create_table_ddl, doris_type_for, property_string,
};
pub use error::{ErrorKind, Result, SqlError};
pub use expr::{ArithmeticOp, CompareOp, Expr};
pub use ident::{TableRef, check_column_list, quote_ident, validate_ident};
pub use literal::{
    Date, DateTime, Decimal, Literal, MAX_DECIMAL_PRECISION, Time, push_string_literal,
    push_string_value,
};
pub use metadata::{
    Aggregation, Buckets, Column, ColumnDefault, DescColumn, DescRow, Distribution, KeyModel,
    Partition, PartitionKind, PartitionValues, Partitioning, SequenceColumn, TableSchema,
    parse_describe, parse_show_create, parse_show_create_checked,
};
pub use nested::nested_to_json;
pub use params::{FragmentPiece, Param, TrustedWhere, bind_trusted_where, scan_fragment};
pub use select::SelectBuilder;
pub use translate::{Translation, escape_like, render_predicate, translate_filter};
pub use types::{
    DorisType, MAX_CHAR_LENGTH, MAX_VARCHAR_LENGTH, Spelling, StructField, TimestampUnits,
    datetime_unit,
};
pub use write_compat::{NestedStep, ValueCheck, WriteIncompatibility, WritePlan, check_writable};
pub use write_target::{
    ColumnWrite, WriteOperation, WriteTarget, WriteTargetError, check_write_target,
};

/// The README's example, run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
