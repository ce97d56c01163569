//! From a filter to the statements a split read runs.
//!
//! `cargo run -p doris-sql --example pushdown` prints, for one filter, what is pushed to
//! Doris, what stays for the engine, and the SELECT of each tablet group.

use std::collections::BTreeMap;

use doris_sql::{
    Expr, Literal, Param, SelectBuilder, TableRef, bind_trusted_where, translate_filter,
};

fn main() -> Result<(), doris_sql::SqlError> {
    // What Daft would hand over for:
    //   (col("score") >= 80) & col("name").str.startswith("a_") & (col("ratio") == float("nan"))
    let filter = Expr::col("score")
        .gt_eq(Expr::lit(Literal::Int64(80)))
        .and(Expr::col("name").starts_with("a_"))
        .and(Expr::col("ratio").eq(Expr::lit(Literal::Float64(f64::NAN))));
    println!(
        "filter IR (JSON):\n  {}",
        serde_json::to_string(&filter).unwrap_or_default()
    );

    let translation = translate_filter(&filter);
    println!(
        "pushed to Doris:\n  {}",
        translation.pushed_sql().unwrap_or_default()
    );
    println!("left for the engine:\n  {:?}", translation.residual);

    let trusted = bind_trusted_where(
        "region = :region",
        &BTreeMap::from([(
            "region".to_owned(),
            Param::from(Literal::String("eu' OR 1=1 --".into())),
        )]),
    )?;
    let table = TableRef::new("analytics", "events")?;
    for tablets in [vec![10005, 10006], vec![10007, 10008]] {
        let sql = SelectBuilder::new(table.clone())
            .columns(["event_id", "score", "name", "ratio"])
            .tablets(tablets)
            .trusted_where(trusted.clone())
            .filter(&translation)
            .build()?;
        println!("task:\n  {sql}");
    }
    Ok(())
}
