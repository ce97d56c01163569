//! Asks the FE where a table's tablets live and groups them into read tasks.
//!
//! ```text
//! cargo run -p doris-plan --example plan_tasks -- <fe-http-url> <db> <table> [<tasks>]
//! ```
//!
//! Prints every tablet with its replicas and version, then the tasks (`TABLET(…)` groups,
//! at most `<tasks>`, default 4) a reader would run, each spread over the BEs. The user is
//! `root` unless `DORIS_USER` is set; the password comes from `DORIS_PASSWORD`.

use std::error::Error;

use doris_plan::{PlanEndpoint, ReadTask, fetch_plan, group_tablets};
use doris_sql::TableRef;

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [fe, db, table, rest @ ..] = args.as_slice() else {
        eprintln!("usage: plan_tasks <fe-http-url> <db> <table> [<tasks>]");
        std::process::exit(2);
    };
    let tasks: usize = match rest {
        [n] => n.parse()?,
        _ => 4,
    };
    let user = std::env::var("DORIS_USER").unwrap_or_else(|_| "root".into());
    let password = std::env::var("DORIS_PASSWORD").unwrap_or_default();
    let endpoint = PlanEndpoint::new(fe.parse()?, user.as_str(), password.as_str());
    // `_query_plan` takes one plain scan of the table (identifiers quoted by doris-sql).
    let sql = format!("SELECT * FROM {}", TableRef::new(db, table)?.to_sql());
    let plan = fetch_plan(&endpoint, db, table, &sql).await?;
    for tablet in &plan.tablets {
        println!(
            "tablet {} version {} on {}",
            tablet.id,
            tablet.version,
            tablet.routings.join(", ")
        );
    }
    for (i, task) in group_tablets(&plan, tasks).iter().enumerate() {
        match task {
            ReadTask::Tablets(ids) => {
                let ids: Vec<String> = ids.iter().map(u64::to_string).collect();
                println!("task {i}: TABLET({})", ids.join(", "));
            }
            other => println!("task {i}: {other:?}"),
        }
    }
    Ok(())
}
