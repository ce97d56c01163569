//! Grouping tablets into read tasks, and the discovery policy.

use crate::answer::QueryPlan;
#[cfg(feature = "http")]
use crate::client::{PlanEndpoint, fetch_plan};
use crate::error::PlanError;

/// One read task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadTask {
    /// Read these tablets (`TABLET(...)`), ascending ids.
    Tablets(Vec<u64>),
    /// The plan had no tablet: a task that returns no rows (never an unrestricted scan).
    Empty,
    /// Read the whole table in one task (split off, or the fallback after a planning
    /// failure).
    Whole,
}

/// What to do when planning fails (`read_doris`'s `discovery_policy`: `"single"`, the
/// default, or `"error"`).
///
/// ```
/// use doris_plan::DiscoveryPolicy;
/// assert_eq!("error".parse::<DiscoveryPolicy>().unwrap(), DiscoveryPolicy::Error);
/// assert_eq!(DiscoveryPolicy::default().as_str(), "single");
/// assert!("fallback".parse::<DiscoveryPolicy>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DiscoveryPolicy {
    /// Fall back to one whole-table task (with a warning) when planning fails for a
    /// reason other than auth, permission, not-found or configuration.
    #[default]
    Single,
    /// Return every planning error.
    Error,
}

impl DiscoveryPolicy {
    /// The names [`FromStr`](std::str::FromStr) accepts.
    pub const NAMES: [&'static str; 2] = ["single", "error"];

    /// `"single"` or `"error"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Single => "single",
            Self::Error => "error",
        }
    }
}

impl std::str::FromStr for DiscoveryPolicy {
    type Err = PlanError;

    /// `"single"` or `"error"`; anything else is a [`PlanError::Config`] naming both (never
    /// the value given).
    fn from_str(name: &str) -> Result<Self, PlanError> {
        match name {
            "single" => Ok(Self::Single),
            "error" => Ok(Self::Error),
            _ => Err(PlanError::Config(
                "discovery_policy must be one of 'single', 'error'".into(),
            )),
        }
    }
}

/// Tasks and, when the plan fell back, the warning to log (table and error class only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// The tasks.
    pub tasks: Vec<ReadTask>,
    /// Set when planning failed and the policy fell back to one task.
    pub warning: Option<String>,
}

/// Groups the plan's tablets into at most `target_tasks` tasks: every group gets ⌊n/k⌋ or
/// ⌈n/k⌉ tablets, and the tablets of each BE (first routing) are dealt out over the groups
/// in turn, so no group piles onto one BE.
pub fn group_tablets(plan: &QueryPlan, target_tasks: usize) -> Vec<ReadTask> {
    let n = plan.tablets.len();
    if n == 0 {
        return vec![ReadTask::Empty];
    }
    let k = target_tasks.clamp(1, n);
    // Tablets by BE, BEs in first-seen order, tablets in id order.
    let mut by_be: Vec<(String, Vec<u64>)> = Vec::new();
    for t in &plan.tablets {
        let be = t.routings.first().cloned().unwrap_or_default();
        match by_be.iter_mut().find(|(b, _)| *b == be) {
            Some((_, ids)) => ids.push(t.id),
            None => by_be.push((be, vec![t.id])),
        }
    }
    // Interleave the BEs' lists, then deal round robin.
    let mut dealt = Vec::with_capacity(n);
    let mut round = 0;
    while dealt.len() < n {
        for (_, ids) in &by_be {
            if let Some(id) = ids.get(round) {
                dealt.push(*id);
            }
        }
        round += 1;
    }
    // Deal round robin, shifting the starting group every round, so that a group does
    // not keep receiving the same BE's tablets when the BE count divides k.
    let mut groups = vec![Vec::new(); k];
    for (i, id) in dealt.into_iter().enumerate() {
        groups[(i + i / k) % k].push(id);
    }
    groups
        .into_iter()
        .map(|mut g| {
            g.sort_unstable();
            ReadTask::Tablets(g)
        })
        .collect()
}

#[cfg(feature = "http")]
/// Plans the read of `sql` (a plain SELECT over `database.table`, no LIMIT) into tasks.
pub async fn plan_tasks(
    endpoint: &PlanEndpoint,
    database: &str,
    table: &str,
    sql: &str,
    target_tasks: usize,
    policy: DiscoveryPolicy,
) -> Result<Planned, PlanError> {
    match fetch_plan(endpoint, database, table, sql).await {
        Ok(plan) => Ok(Planned {
            tasks: group_tablets(&plan, target_tasks),
            warning: None,
        }),
        Err(e) if policy == DiscoveryPolicy::Single && e.may_fall_back() => Ok(Planned {
            tasks: vec![ReadTask::Whole],
            warning: Some(format!(
                "Doris tablet discovery failed for {database:?}.{table:?} ({}); falling back to one task",
                e.class()
            )),
        }),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::TabletPlacement;

    fn plan(spec: &[(u64, &str)]) -> QueryPlan {
        QueryPlan {
            tablets: spec
                .iter()
                .map(|(id, be)| TabletPlacement {
                    id: *id,
                    routings: vec![(*be).to_owned()],
                    version: 1,
                })
                .collect(),
        }
    }

    #[test]
    fn groups_are_balanced_and_spread_over_backends() {
        let p = plan(&[
            (1, "a"),
            (2, "a"),
            (3, "a"),
            (4, "a"),
            (5, "b"),
            (6, "b"),
            (7, "b"),
            (8, "b"),
            (9, "a"),
            (10, "b"),
        ]);
        let tasks = group_tablets(&p, 4);
        assert_eq!(tasks.len(), 4);
        let mut all: Vec<u64> = Vec::new();
        for t in &tasks {
            let ReadTask::Tablets(ids) = t else { panic!() };
            assert!((2..=3).contains(&ids.len()), "{tasks:?}");
            let on_a = ids
                .iter()
                .filter(|id| [1, 2, 3, 4, 9].contains(*id))
                .count();
            assert!(on_a >= 1 && on_a < ids.len(), "one BE only: {ids:?}");
            all.extend(ids.iter().copied());
        }
        all.sort_unstable();
        assert_eq!(all, (1..=10).collect::<Vec<_>>());
        // 10 tablets, 8 targets: 8 tasks (the reference made 5).
        assert_eq!(group_tablets(&p, 8).len(), 8);
        assert_eq!(group_tablets(&p, 100).len(), 10);
        assert_eq!(
            group_tablets(&QueryPlan::default(), 8),
            vec![ReadTask::Empty]
        );
    }
}
