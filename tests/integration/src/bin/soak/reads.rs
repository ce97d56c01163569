//! The readers: the newest units read over MySQL (one query) and over Flight SQL (split by
//! tablet), each read checked against the units committed before it began.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use arrow::array::{AsArray, RecordBatch};
use arrow::datatypes::Int64Type;
use doris_plan::{DiscoveryPolicy, PlanEndpoint};
use doris_read::{
    BatchLimits, FlightSqlEndpoint, MySqlEndpoint, Split, TableReadOptions, Transport,
    plan_table_read,
};
use futures::StreamExt as _;

use crate::{Context, DB, READ_WINDOW, TABLE, UNIT_ROWS};

/// The ids of units `from_unit` and later, read through `transport`, split by tablet or
/// not (the filter is pushed down).
pub(crate) async fn read_ids(
    ctx: &Context,
    transport: &Transport,
    split: bool,
    from_unit: i64,
) -> Result<Vec<i64>, String> {
    let mysql = MySqlEndpoint::from_settings(&ctx.settings);
    let options = TableReadOptions {
        columns: Some(vec!["id".into()]),
        filter: Some(doris_sql::Expr::col("id").gt_eq(doris_sql::Expr::lit(
            doris_sql::Literal::Int64(from_unit * UNIT_ROWS),
        ))),
        split: if split {
            Split::Auto {
                fe: PlanEndpoint::from_settings(&ctx.settings).map_err(|e| e.to_string())?,
                target_tasks: 4,
                policy: DiscoveryPolicy::Error,
            }
        } else {
            Split::Single
        },
        ..TableReadOptions::default()
    };
    let plan = plan_table_read(&mysql, DB, TABLE, &options)
        .await
        .map_err(|e| e.to_string())?;
    let mut ids = Vec::new();
    for sql in plan.tasks {
        let mut stream = transport
            .read([sql], plan.schema.clone(), BatchLimits::default())
            .await
            .map_err(|e| e.to_string())?;
        while let Some(batch) = stream.next().await {
            let batch: RecordBatch = batch.map_err(|e| e.to_string())?;
            ids.extend(batch.column(0).as_primitive::<Int64Type>().values().iter());
        }
    }
    Ok(ids)
}

/// Per unit, how many rows of it `ids` holds; and how many ids appear more than once.
pub(crate) fn per_unit(ids: &[i64]) -> (HashMap<i64, i64>, u64) {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    let doubled = sorted.windows(2).filter(|w| w[0] == w[1]).count() as u64;
    let mut units: HashMap<i64, i64> = HashMap::new();
    sorted.dedup();
    for id in sorted {
        *units.entry(id / UNIT_ROWS).or_default() += 1;
    }
    (units, doubled)
}

pub(crate) async fn reader(ctx: Arc<Context>, flight: bool) {
    let transport = if flight {
        Transport::Flight(FlightSqlEndpoint::from_settings(&ctx.settings).unwrap())
    } else {
        Transport::MySql(MySqlEndpoint::from_settings(&ctx.settings))
    };
    while !ctx.stop.load(Ordering::SeqCst) {
        let from_unit = (ctx.next_unit.load(Ordering::SeqCst) as i64 - READ_WINDOW).max(0);
        let before: Vec<i64> = ctx
            .tally
            .committed
            .lock()
            .unwrap()
            .iter()
            .map(|(u, _)| *u)
            .filter(|u| *u >= from_unit)
            .collect();
        match read_ids(&ctx, &transport, flight, from_unit).await {
            Ok(ids) => {
                ctx.tally.reads_ok.fetch_add(1, Ordering::SeqCst);
                let (units, doubled) = per_unit(&ids);
                ctx.tally
                    .doubled_reads
                    .fetch_add(u64::from(doubled > 0), Ordering::SeqCst);
                for unit in before {
                    let held = units.get(&unit).copied().unwrap_or(0);
                    if held != UNIT_ROWS {
                        ctx.tally.short_reads.lock().unwrap().push(format!(
                            "{} read held {held} of unit {unit}'s {UNIT_ROWS} rows",
                            if flight { "flight" } else { "mysql" }
                        ));
                    }
                }
            }
            Err(_) => {
                ctx.tally.reads_failed.fetch_add(1, Ordering::SeqCst);
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unit_held_twice_or_partly_is_seen() {
        let mut ids: Vec<i64> = (0..UNIT_ROWS).collect();
        ids.push(3);
        ids.extend(UNIT_ROWS..UNIT_ROWS + 10);
        let (units, doubled) = per_unit(&ids);
        assert_eq!(doubled, 1);
        assert_eq!(units[&0], UNIT_ROWS);
        assert_eq!(units[&1], 10);
    }
}
