//! `_query_plan` as doris-plan relies on it: every tablet of the table with its replicas
//! and version, non-scan SQL rejected, unknown tables, bad credentials and a missing
//! privilege told apart.

use doris_plan::{PlanError, fetch_plan};

use crate::common::with_table;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_lists_every_tablet_with_replicas_and_a_version() {
    let (target, db) = with_table().await;
    target
        .execute(&format!(
            "/* fixture */ INSERT INTO `{}`.`t` (`id`, `name`) VALUES (1, 'a'), (2, 'b'), (3, 'c')",
            db.name
        ))
        .await;
    let sql = format!("SELECT `id`, `name` FROM `{}`.`t`", db.name);
    let plan = fetch_plan(&target.plan(), &db.name, "t", &sql)
        .await
        .unwrap();
    // One partition of three buckets: three tablets, by ascending id, each on a BE.
    assert_eq!(plan.tablets.len(), 3, "{plan:?}");
    assert!(
        plan.tablets.windows(2).all(|w| w[0].id < w[1].id),
        "{plan:?}"
    );
    for tablet in &plan.tablets {
        assert!(!tablet.routings.is_empty(), "{tablet:?}");
        assert!(
            tablet.routings.iter().all(|r| r
                .rsplit_once(':')
                .is_some_and(|(_, p)| p.parse::<u16>().is_ok())),
            "routings are host:port: {tablet:?}"
        );
        // A table with one committed load has a visible version past the first.
        assert!(tablet.version >= 2, "{tablet:?}");
    }
    target.drop_scratch(db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_scan_sql_unknown_tables_and_bad_credentials_are_told_apart() {
    let (target, db) = with_table().await;
    let plan = target.plan();
    let aggregate = format!("SELECT count(*) FROM `{}`.`t`", db.name);
    let e = fetch_plan(&plan, &db.name, "t", &aggregate)
        .await
        .unwrap_err();
    assert!(matches!(e, PlanError::Rejected(_)), "{e}");

    let missing = format!("SELECT `id` FROM `{}`.`nope`", db.name);
    let e = fetch_plan(&plan, &db.name, "nope", &missing)
        .await
        .unwrap_err();
    assert!(matches!(e, PlanError::NotFound(_)), "{e}");

    let mut wrong = plan.clone();
    wrong.credentials =
        doris_connection::Credentials::new(wrong.credentials.user(), "Conformance-Wrong-Pw-8");
    let scan = format!("SELECT `id` FROM `{}`.`t`", db.name);
    let e = fetch_plan(&wrong, &db.name, "t", &scan).await.unwrap_err();
    assert!(matches!(e, PlanError::Auth(_)), "{e}");
    assert!(!e.to_string().contains("Conformance-Wrong-Pw-8"));
    target.drop_scratch(db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_select_privilege_is_told_apart_from_bad_credentials() {
    let (target, db) = with_table().await;
    let user = format!("{}_loader", db.name);
    target
        .execute(&format!(
            "/* fixture */ CREATE USER '{user}'@'%' IDENTIFIED BY 'Conformance-Pw-9'"
        ))
        .await;
    target
        .execute(&format!(
            "/* fixture */ GRANT LOAD_PRIV ON `{}`.* TO '{user}'@'%'",
            db.name
        ))
        .await;
    let mut loader = target.plan();
    loader.credentials = doris_connection::Credentials::new(&user, "Conformance-Pw-9");
    let scan = format!("SELECT `id` FROM `{}`.`t`", db.name);
    let e = fetch_plan(&loader, &db.name, "t", &scan).await.unwrap_err();
    assert!(matches!(e, PlanError::Permission(_)), "{e}");
    assert!(!e.to_string().contains("Conformance-Pw-9"));
    // The same user with a wrong password is an authentication error.
    loader.credentials = doris_connection::Credentials::new(&user, "Conformance-Wrong-Pw-9");
    let e = fetch_plan(&loader, &db.name, "t", &scan).await.unwrap_err();
    assert!(matches!(e, PlanError::Auth(_)), "{e}");
    target
        .execute(&format!("/* fixture */ DROP USER '{user}'@'%'"))
        .await;
    target.drop_scratch(db).await;
}
