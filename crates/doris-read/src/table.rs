//! Planning the read of one table: schema, pushed filter, limit, and one SELECT per task.

use std::sync::Arc;

use arrow_schema::SchemaRef;
use arrow_schema::{DataType, Field, Schema};
use doris_plan::{DiscoveryPolicy, PlanEndpoint, PlanError, ReadTask, plan_tasks};
use doris_sql::{Expr, SelectBuilder, TableRef, TimestampUnits, TrustedWhere, translate_filter};

use crate::error::ReadError;
use crate::schema::discover_in;
use doris_mysql::MySqlEndpoint;

/// How a read is split into tasks.
// One per read, never in a collection: the automatic split's size costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Split {
    /// One task.
    Single,
    /// One task per group of tablets, planned by the FE's `_query_plan`.
    Auto {
        /// The FE HTTP endpoint.
        fe: PlanEndpoint,
        /// Most tasks.
        target_tasks: usize,
        /// What a planning failure does.
        policy: DiscoveryPolicy,
    },
}

/// Which [`Split`] a user asked for, by name (`read_doris`'s `split`: `"single"`, the
/// default, or `"auto"`); [`Split`] adds what an automatic split needs.
///
/// ```
/// use doris_read::SplitKind;
/// assert_eq!("auto".parse::<SplitKind>().unwrap(), SplitKind::Auto);
/// assert_eq!(SplitKind::default().as_str(), "single");
/// assert!("off".parse::<SplitKind>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SplitKind {
    /// One task ([`Split::Single`]).
    #[default]
    Single,
    /// One task per group of tablets ([`Split::Auto`]).
    Auto,
}

impl SplitKind {
    /// The names [`FromStr`](std::str::FromStr) accepts.
    pub const NAMES: [&'static str; 2] = ["single", "auto"];

    /// `"single"` or `"auto"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Single => "single",
            Self::Auto => "auto",
        }
    }
}

impl std::str::FromStr for SplitKind {
    type Err = ReadError;

    /// `"single"` or `"auto"`; anything else is a [`ReadError::Config`] naming both (never
    /// the value given).
    fn from_str(name: &str) -> Result<Self, ReadError> {
        match name {
            "single" => Ok(Self::Single),
            "auto" => Ok(Self::Auto),
            _ => Err(ReadError::Config(
                "split must be one of 'single', 'auto'".into(),
            )),
        }
    }
}

/// How many tasks a split read aims at and may never exceed (`read_doris`'s
/// `target_tasks` and `max_tasks`), with their defaults and limits.
///
/// ```
/// use doris_read::TaskCounts;
/// assert_eq!(TaskCounts::new(None, None).unwrap(), TaskCounts { target: 8, max: 256 });
/// assert!(TaskCounts::new(Some(9), Some(8)).is_err());
/// assert!(TaskCounts::new(Some(TaskCounts::MOST + 1), None).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskCounts {
    /// Tasks a split read aims at ([`Split::Auto`]'s `target_tasks`).
    pub target: usize,
    /// Most tasks: `target` may not exceed it.
    pub max: usize,
}

impl TaskCounts {
    /// The largest count either may be.
    pub const MOST: usize = 1024;
    /// Eight tasks wanted, at most 256.
    pub const DEFAULT: Self = Self {
        target: 8,
        max: 256,
    };
    /// The wait for the FE's `_query_plan` a read takes by default.
    pub const DEFAULT_PLANNING_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

    /// `target` and `max` (each `None`: its default), checked: from 1 to [`Self::MOST`],
    /// and `target <= max`.
    pub fn new(target: Option<usize>, max: Option<usize>) -> Result<Self, ReadError> {
        let counts = Self {
            target: target.unwrap_or(Self::DEFAULT.target),
            max: max.unwrap_or(Self::DEFAULT.max),
        };
        for (name, n) in [("target_tasks", counts.target), ("max_tasks", counts.max)] {
            if !(1..=Self::MOST).contains(&n) {
                return Err(ReadError::Config(format!(
                    "{name} must be an integer from 1 to {}",
                    Self::MOST
                )));
            }
        }
        if counts.target > counts.max {
            return Err(ReadError::Config(
                "target_tasks must not exceed max_tasks".into(),
            ));
        }
        Ok(counts)
    }
}

/// What to read.
#[derive(Debug, Clone)]
pub struct TableReadOptions {
    /// Columns, in this order (`None`: every column, table order).
    pub columns: Option<Vec<String>>,
    /// A filter; its conjuncts that render exactly are pushed, the rest is returned as
    /// [`ReadPlan::residual`] for the caller to apply.
    pub filter: Option<Expr>,
    /// Most rows (pushed only when nothing of the filter stays residual).
    pub limit: Option<u64>,
    /// Splitting.
    pub split: Split,
    /// A trusted fragment (`unsafe_where_sql` with its parameters bound), applied first.
    pub trusted_where: Option<TrustedWhere>,
    /// Count the rows instead of reading them: one task `SELECT count(*) AS <alias>`
    /// whose batch has one non-null UInt64 column. A count whose filter does not render
    /// exactly is refused (`SelectBuilder::build`): it would count rows the filter excludes.
    pub count: Option<Count>,
    /// The Arrow unit of DATETIME columns (default: microseconds for every precision).
    pub timestamp_units: TimestampUnits,
}

/// Which rows a pushed count counts, as an engine asks for `count(column)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CountMode {
    /// Every row (`count(*)`).
    #[default]
    All,
    /// The rows whose column is not NULL (SQL's `count(column)`).
    Valid,
    /// The rows whose column is NULL.
    Null,
}

impl CountMode {
    /// The names [`FromStr`](std::str::FromStr) takes.
    pub const NAMES: [&'static str; 3] = ["all", "valid", "null"];
}

impl std::str::FromStr for CountMode {
    type Err = ReadError;

    fn from_str(name: &str) -> Result<Self, ReadError> {
        match name {
            "all" => Ok(Self::All),
            "valid" => Ok(Self::Valid),
            "null" => Ok(Self::Null),
            _ => Err(ReadError::Config(format!(
                "count mode must be one of {}",
                Self::NAMES.join(", ")
            ))),
        }
    }
}

/// A count pushed into the statement: the rows of `column` that `mode` counts, returned
/// as one column named `column`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Count {
    /// The column counted, and the name of the result's one column.
    pub column: String,
    /// Which of its rows count.
    pub mode: CountMode,
}

impl Count {
    /// `filter` with the count's own condition (`column IS [NOT] NULL`) added.
    fn restrict(&self, filter: Option<Expr>) -> Option<Expr> {
        let own = match self.mode {
            CountMode::All => return filter,
            CountMode::Valid => Expr::col(self.column.clone()).is_not_null(),
            CountMode::Null => Expr::col(self.column.clone()).is_null(),
        };
        Some(match filter {
            Some(f) => f.and(own),
            None => own,
        })
    }
}

impl Default for TableReadOptions {
    fn default() -> Self {
        Self {
            columns: None,
            filter: None,
            limit: None,
            split: Split::Single,
            trusted_where: None,
            count: None,
            timestamp_units: TimestampUnits::default(),
        }
    }
}

/// A planned read.
#[derive(Debug, Clone)]
pub struct ReadPlan {
    /// The schema of every task's batches.
    pub schema: SchemaRef,
    /// One SELECT per task.
    pub tasks: Vec<String>,
    /// The part of the filter the caller must still apply.
    pub residual: Option<Expr>,
    /// Whether the limit was pushed into each task (the caller still truncates the union
    /// of the tasks, each of which may return up to the limit).
    pub limit_pushed: bool,
    /// Set when tablet planning failed and the read fell back to one task.
    pub warning: Option<String>,
}

impl ReadPlan {
    /// The tasks in groups an engine task reads together: `per_task` statements each, or
    /// by default `parallelism` groups (as many as the engine runs tasks at once, so every
    /// statement, and every BE holding one, is read at once however few tasks run).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use arrow_schema::Schema;
    /// # use doris_read::ReadPlan;
    /// let plan = ReadPlan {
    ///     schema: Arc::new(Schema::empty()),
    ///     tasks: (0..5).map(|i| format!("SELECT {i}")).collect(),
    ///     residual: None,
    ///     limit_pushed: false,
    ///     warning: None,
    /// };
    /// assert_eq!(plan.grouped(None, 2).iter().map(Vec::len).collect::<Vec<_>>(), [3, 2]);
    /// assert_eq!(plan.grouped(Some(1), 2).len(), 5);
    /// ```
    pub fn grouped(&self, per_task: Option<usize>, parallelism: usize) -> Vec<Vec<String>> {
        let per_task = per_task
            .unwrap_or_else(|| self.tasks.len().div_ceil(parallelism.max(1)))
            .max(1);
        self.tasks
            .chunks(per_task)
            .map(<[String]>::to_vec)
            .collect()
    }
}

/// A planning error as a read error. The FE's texts (`_query_plan`'s `data.exception`)
/// may echo the planning statement, whose filter carries bound values: they are scrubbed
/// as every server text is, and every quoted fragment is blanked
/// ([`crate::error::scrub_statement_text`]).
pub(crate) fn from_plan_error(e: PlanError) -> ReadError {
    use crate::error::scrub_statement_text as scrub;
    match e {
        PlanError::Auth(m) => ReadError::Auth(scrub(&m)),
        PlanError::Permission(m) => ReadError::Permission(scrub(&m)),
        PlanError::NotFound(m) => ReadError::NotFound(scrub(&m)),
        PlanError::Config(m) => ReadError::Config(m),
        PlanError::Rejected(m) => ReadError::Planning(PlanError::Rejected(scrub(&m))),
        PlanError::Internal(m) => ReadError::Planning(PlanError::Internal(scrub(&m))),
        other => ReadError::Planning(other),
    }
}

/// Discovers the table's schema (`DESC` over MySQL) and plans its read.
pub async fn plan_table_read(
    mysql: &MySqlEndpoint,
    database: &str,
    table: &str,
    options: &TableReadOptions,
) -> Result<ReadPlan, ReadError> {
    let schema = match &options.count {
        // A count reads no column: nothing to discover.
        Some(_) => Arc::new(Schema::empty()),
        None => discover_in(mysql, database, table, options.timestamp_units)
            .await?
            .arrow_schema(options.columns.as_deref())?,
    };
    plan_read_of_schema(database, table, schema, options).await
}

/// Plans the read of `schema`'s columns, in its order, without asking the server for the
/// table's schema again: for a caller that already ran [`discover`](crate::discover) (a data source that
/// describes its table once, then plans each query). `options.columns` is not consulted;
/// `schema` is the projection (from [`TableLayout::arrow_schema`](crate::TableLayout::arrow_schema)).
/// Only tablet planning (`Split::Auto`) talks to the server.
pub async fn plan_read_of_schema(
    database: &str,
    table: &str,
    schema: SchemaRef,
    options: &TableReadOptions,
) -> Result<ReadPlan, ReadError> {
    let table_ref = TableRef::new(database, table).map_err(ReadError::Statement)?;
    let sql_error = ReadError::Statement;
    if let Some(count) = &options.count {
        // A filter that leaves a residual is refused by the builder: the count would
        // include rows it excludes.
        let translation = count
            .restrict(options.filter.clone())
            .map(|f| translate_filter(&f));
        // A count is one number: it is never split, and a limit caps it.
        let mut builder = SelectBuilder::new(table_ref).count(count.column.clone());
        if let Some(n) = options.limit {
            builder = builder.limit(n);
        }
        if let Some(t) = &options.trusted_where {
            builder = builder.trusted_where(t.clone());
        }
        if let Some(t) = &translation {
            builder = builder.filter(t);
        }
        return Ok(ReadPlan {
            schema: Arc::new(Schema::new(vec![Field::new(
                &count.column,
                DataType::UInt64,
                false,
            )])),
            tasks: vec![builder.build().map_err(sql_error)?],
            residual: None,
            limit_pushed: false,
            warning: None,
        });
    }
    let translation = options.filter.as_ref().map(translate_filter);
    let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let mut builder = SelectBuilder::new(table_ref).columns(names);
    if let Some(t) = &options.trusted_where {
        builder = builder.trusted_where(t.clone());
    }
    if let Some(t) = &translation {
        builder = builder.filter(t);
    }
    let residual = translation.and_then(|t| t.residual);
    let limit = options.limit.filter(|_| residual.is_none());
    let with_limit = |b: SelectBuilder| match limit {
        Some(n) => b.limit(n),
        None => b,
    };
    let (tasks, warning) = match &options.split {
        Split::Single => (vec![with_limit(builder).build().map_err(sql_error)?], None),
        Split::Auto { .. } if limit == Some(0) => {
            (vec![with_limit(builder).build().map_err(sql_error)?], None)
        }
        Split::Auto {
            fe,
            target_tasks,
            policy,
        } => {
            let planning_sql = builder.build().map_err(sql_error)?;
            let planned = plan_tasks(fe, database, table, &planning_sql, *target_tasks, *policy)
                .await
                .map_err(from_plan_error)?;
            let mut tasks = Vec::with_capacity(planned.tasks.len());
            for task in planned.tasks {
                let sql = match task {
                    ReadTask::Tablets(ids) => with_limit(builder.clone().tablets(ids)).build(),
                    ReadTask::Empty => builder.clone().limit(0).build(),
                    ReadTask::Whole => with_limit(builder.clone()).build(),
                };
                tasks.push(sql.map_err(sql_error)?);
            }
            (tasks, planned.warning)
        }
    };
    Ok(ReadPlan {
        schema,
        tasks,
        residual,
        limit_pushed: limit.is_some(),
        warning,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count_plan(mode: CountMode, filter: Option<Expr>) -> Result<ReadPlan, ReadError> {
        let options = TableReadOptions {
            filter,
            count: Some(Count {
                column: "score".into(),
                mode,
            }),
            ..TableReadOptions::default()
        };
        futures::executor::block_on(plan_read_of_schema(
            "d",
            "t",
            Arc::new(Schema::empty()),
            &options,
        ))
    }

    #[test]
    fn a_count_counts_the_rows_its_mode_names() {
        let positive = Expr::col("id").gt(Expr::lit(doris_sql::Literal::Int64(0)));
        for (mode, filter, expected) in [
            (
                CountMode::All,
                None,
                "SELECT count(*) AS `score` FROM `d`.`t`",
            ),
            (
                CountMode::Valid,
                None,
                "SELECT count(*) AS `score` FROM `d`.`t` WHERE (`score` IS NOT NULL)",
            ),
            (
                CountMode::Null,
                Some(positive),
                "SELECT count(*) AS `score` FROM `d`.`t` WHERE (`id` > 0) AND (`score` IS NULL)",
            ),
        ] {
            let plan = count_plan(mode, filter).unwrap();
            assert_eq!(plan.tasks, [expected], "{mode:?}");
            assert_eq!(plan.schema.field(0).name(), "score");
        }
        assert_eq!("valid".parse::<CountMode>().unwrap(), CountMode::Valid);
        assert!("some".parse::<CountMode>().is_err());
    }

    #[test]
    fn a_count_whose_filter_leaves_a_residual_is_refused() {
        // A bare column has no known type here: it stays residual.
        let e = count_plan(CountMode::All, Some(Expr::col("flag"))).unwrap_err();
        assert!(e.to_string().contains("residual"), "{e}");
    }
}
