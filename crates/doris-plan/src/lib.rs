//! # doris-plan
//!
//! Which tablets a Doris read touches, and how to split it into tasks.
//!
//! - [`fetch_plan`] asks the FE's `POST /api/{db}/{table}/_query_plan` for the tablets a
//!   query scans (after partition pruning), with Basic auth, no redirects, no proxy from the
//!   environment, a timeout and a response size cap, and maps every envelope of the
//!   protocol (`code`, `data.status` as a number, `data.exception`, the string `"1"`) to a
//!   typed [`PlanError`].
//! - [`fetch_backends`] lists the alive BEs the FE reports (`/api/backends`), the same
//!   way: what a client checks the addresses the FE sends it to against.
//! - [`group_tablets`] turns the tablets into at most `target_tasks` groups, balanced by
//!   tablet count and spreading every BE's tablets over the groups.
//! - [`plan_tasks`] combines both under a [`DiscoveryPolicy`]: with `Single`, a planning
//!   failure falls back to one whole-table task with a warning that names only the table
//!   and the error class; auth, permission and not-found errors never fall back.
//! - [`parse_plan_answer`] reads a `_query_plan` answer a caller fetched itself.
//!
//! Features: `http` (default) is the FE client (reqwest, tokio) and [`plan_tasks`];
//! without it the crate is the answer parser, the grouping and the policy, with no I/O.

mod answer;
#[cfg(feature = "http")]
mod client;
mod error;
mod group;

pub use answer::{QueryPlan, TabletPlacement, parse_plan_answer};
#[cfg(feature = "http")]
pub use client::{PlanEndpoint, fetch_backends, fetch_plan};
pub use doris_connection::Credentials;
pub use doris_sql::ErrorKind;
pub use error::PlanError;
#[cfg(feature = "http")]
pub use group::plan_tasks;
pub use group::{DiscoveryPolicy, Planned, ReadTask, group_tablets};
