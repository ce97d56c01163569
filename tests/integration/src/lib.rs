//! Shared helpers of the cross-crate integration tests.
//!
//! - [`mariadb`]: a text-protocol connection to the real MariaDB server the machine runs
//!   (`DAFT_DORIS_MARIADB_URL`, default `mysql://root@127.0.0.1:3306/test`). A test that
//!   needs it fails, with the URL in the message, when the server is down: `.ci/run`
//!   starts it, and a silently skipped test would prove nothing.
//! - [`oracle`]: an evaluator of `doris-sql`'s predicate IR with SQL semantics, the
//!   independent side of the pushdown-equivalence test.

pub mod mariadb;
pub mod oracle;
