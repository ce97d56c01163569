//! Reads a Doris table over the MySQL protocol, split by tablets, and prints it.
//!
//! ```text
//! cargo run -p doris-read --example read_table -- \
//!     <host> <query-port> <fe-http-url> <db> <table> [<column> <min-value>]
//! ```
//!
//! With a column and a minimum, the filter `column >= min` is pushed into every task and
//! into the FE's tablet planning (so partitions are pruned). The password comes from
//! `DORIS_PASSWORD` (empty by default); the user is `root` unless `DORIS_USER` is set.

use std::error::Error;

use arrow::util::pretty::pretty_format_batches;
use doris_plan::{DiscoveryPolicy, PlanEndpoint};
use doris_read::{BatchLimits, MySqlEndpoint, Split, TableReadOptions, Transport, plan_table_read};
use doris_sql::{Expr, Literal};

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [host, port, fe, db, table, rest @ ..] = args.as_slice() else {
        eprintln!(
            "usage: read_table <host> <query-port> <fe-http-url> <db> <table> [<column> <min>]"
        );
        std::process::exit(2);
    };
    let user = std::env::var("DORIS_USER").unwrap_or_else(|_| "root".into());
    let password = std::env::var("DORIS_PASSWORD").unwrap_or_default();
    let mut mysql = MySqlEndpoint::new(
        host.as_str(),
        port.parse()?,
        user.as_str(),
        password.as_str(),
    );
    mysql.database = Some(db.clone());
    let filter = match rest {
        [column, min] => {
            Some(Expr::col(column.as_str()).gt_eq(Expr::lit(Literal::Int64(min.parse()?))))
        }
        _ => None,
    };
    let options = TableReadOptions {
        filter,
        split: Split::Auto {
            fe: PlanEndpoint::new(fe.parse()?, user.as_str(), password.as_str()),
            target_tasks: 4,
            policy: DiscoveryPolicy::Single,
        },
        ..TableReadOptions::default()
    };
    let plan = plan_table_read(&mysql, db, table, &options).await?;
    if let Some(w) = &plan.warning {
        eprintln!("warning: {w}");
    }
    let transport = Transport::MySql(mysql);
    let mut rows = 0;
    for (i, sql) in plan.tasks.iter().enumerate() {
        let batches = transport
            .read([sql.as_str()], plan.schema.clone(), BatchLimits::default())
            .await?
            .collect()
            .await?;
        let n: usize = batches.iter().map(|b| b.num_rows()).sum();
        rows += n;
        println!("task {i}: {sql}  -> {n} row(s)");
        if n > 0 {
            println!("{}", pretty_format_batches(&batches)?);
        }
    }
    println!(
        "{rows} row(s) in {} task(s) over the MySQL protocol",
        plan.tasks.len()
    );
    Ok(())
}
