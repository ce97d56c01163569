//! doris-plan against the emulator's `_query_plan`.
#![allow(clippy::unwrap_used)]

use doris_emulator::{Emulator, EmulatorConfig};
use doris_plan::{DiscoveryPolicy, PlanEndpoint, PlanError, ReadTask, fetch_plan, plan_tasks};

const DDL: &str = "CREATE DATABASE d;
CREATE TABLE d.t (`id` BIGINT NOT NULL, `v` INT NULL) DUPLICATE KEY(`id`)
PARTITION BY RANGE(`id`) (PARTITION p0 VALUES LESS THAN (\"100\"), PARTITION p1 VALUES LESS THAN (MAXVALUE))
DISTRIBUTED BY HASH(`id`) BUCKETS 5;
CREATE USER 'bob'@'%' IDENTIFIED BY 'pw';";

async fn setup() -> (Emulator, PlanEndpoint) {
    let e = Emulator::start(EmulatorConfig::default()).await.unwrap();
    e.execute(None, DDL).unwrap();
    let endpoint = PlanEndpoint::new(
        format!("http://{}", e.fe_http_addr()).parse().unwrap(),
        "root",
        "",
    );
    (e, endpoint)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plans_list_every_tablet_and_prune_partitions() {
    let (e, endpoint) = setup().await;
    let table = e.shared().catalog.table("d", "t").unwrap();
    let all: Vec<u64> = table.tablets.iter().map(|t| t.id).collect();
    let plan = fetch_plan(&endpoint, "d", "t", "SELECT `id` FROM `d`.`t`")
        .await
        .unwrap();
    assert_eq!(plan.tablets.iter().map(|t| t.id).collect::<Vec<_>>(), all);
    let pruned = fetch_plan(
        &endpoint,
        "d",
        "t",
        "SELECT `id` FROM `d`.`t` WHERE `id` < 50",
    )
    .await
    .unwrap();
    assert_eq!(pruned.tablets.len(), 5);
    let planned = plan_tasks(
        &endpoint,
        "d",
        "t",
        "SELECT `id` FROM `d`.`t`",
        4,
        DiscoveryPolicy::Error,
    )
    .await
    .unwrap();
    assert_eq!(planned.tasks.len(), 4);
    let mut ids: Vec<u64> = planned
        .tasks
        .iter()
        .flat_map(|t| match t {
            ReadTask::Tablets(ids) => ids.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, all);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_are_typed_and_only_planning_failures_fall_back() {
    let (_e, endpoint) = setup().await;
    let rejected = "SELECT count(*) FROM `d`.`t`";
    let e = fetch_plan(&endpoint, "d", "t", rejected).await.unwrap_err();
    assert!(matches!(e, PlanError::Rejected(_)), "{e}");
    let fallback = plan_tasks(&endpoint, "d", "t", rejected, 4, DiscoveryPolicy::Single)
        .await
        .unwrap();
    assert_eq!(fallback.tasks, vec![ReadTask::Whole]);
    let warning = fallback.warning.unwrap();
    assert!(
        warning.contains("Rejected") && !warning.contains("count"),
        "{warning}"
    );
    assert!(
        plan_tasks(&endpoint, "d", "t", rejected, 4, DiscoveryPolicy::Error)
            .await
            .is_err()
    );

    let mut bad = endpoint.clone();
    bad.credentials = doris_connection::Credentials::new(bad.credentials.user(), "Wrong-Secret-9");
    let e = plan_tasks(
        &bad,
        "d",
        "t",
        "SELECT `id` FROM `d`.`t`",
        4,
        DiscoveryPolicy::Single,
    )
    .await
    .unwrap_err();
    assert!(matches!(e, PlanError::Auth(_)), "{e}");
    assert!(!e.to_string().contains("Wrong-Secret-9"));

    let e = plan_tasks(
        &endpoint,
        "d",
        "nope",
        "SELECT `id` FROM `d`.`nope`",
        4,
        DiscoveryPolicy::Single,
    )
    .await
    .unwrap_err();
    assert!(matches!(e, PlanError::NotFound(_)), "{e}");

    let mut bob = endpoint.clone();
    bob.credentials = doris_connection::Credentials::new("bob", "pw");
    let e = plan_tasks(
        &bob,
        "d",
        "t",
        "SELECT `id` FROM `d`.`t`",
        4,
        DiscoveryPolicy::Single,
    )
    .await
    .unwrap_err();
    // Good credentials without SELECT: a permission error, never taken for bad ones.
    assert!(matches!(e, PlanError::Permission(_)), "{e}");

    let mut unreachable = endpoint.clone();
    unreachable.fe = "http://127.0.0.1:1".parse().unwrap();
    // A refused connection keeps reqwest's error as the source, its URL removed.
    let e = fetch_plan(&unreachable, "d", "t", "SELECT `id` FROM `d`.`t`")
        .await
        .unwrap_err();
    assert!(
        matches!(e, PlanError::Request(_)) && e.may_fall_back(),
        "{e}"
    );
    let source = std::error::Error::source(&e)
        .and_then(|s| s.downcast_ref::<reqwest::Error>())
        .expect("reqwest's error as the source");
    assert!(source.is_connect() && source.url().is_none(), "{source:?}");
    let fallback = plan_tasks(
        &unreachable,
        "d",
        "t",
        "SELECT `id` FROM `d`.`t`",
        4,
        DiscoveryPolicy::Single,
    )
    .await
    .unwrap();
    assert_eq!(fallback.tasks, vec![ReadTask::Whole]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_injected_planner_failure_is_internal_and_falls_back_under_single() {
    use doris_emulator::faults::Fault;
    let (e, endpoint) = setup().await;
    let boom = serde_json::json!({
        "msg": "success", "code": 0,
        "data": {"status": 500, "exception": "planner crashed"}, "count": 0
    });
    e.faults().arm(Fault::QueryPlanAnswer { answer: boom }, 2);
    let sql = "SELECT `id` FROM `d`.`t`";
    let err = fetch_plan(&endpoint, "d", "t", sql).await.unwrap_err();
    assert!(
        matches!(&err, PlanError::Internal(m) if m == "planner crashed"),
        "{err}"
    );
    let planned = plan_tasks(&endpoint, "d", "t", sql, 4, DiscoveryPolicy::Single)
        .await
        .unwrap();
    assert_eq!(planned.tasks, vec![ReadTask::Whole]);
    assert!(planned.warning.unwrap().contains("Internal"));
    // Disarmed after two uses: planning works again.
    assert_eq!(
        fetch_plan(&endpoint, "d", "t", sql)
            .await
            .unwrap()
            .tablets
            .len(),
        10
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_over_the_cap_is_refused_naming_the_endpoint() {
    let (_e, mut endpoint) = setup().await;
    // Ten tablets with their routings and an opaque plan: well over 256 bytes.
    endpoint.max_response_bytes = 256;
    let e = fetch_plan(&endpoint, "d", "t", "SELECT `id` FROM `d`.`t`")
        .await
        .unwrap_err();
    let text = e.to_string();
    assert!(
        matches!(e, PlanError::Transport(_))
            && text.contains("_query_plan")
            && text.contains("256"),
        "{text}"
    );
    let e = doris_plan::fetch_backends(&endpoint).await;
    // The BE list of one BE fits; a cap below it does not.
    assert!(e.is_ok(), "{e:?}");
    endpoint.max_response_bytes = 16;
    let e = doris_plan::fetch_backends(&endpoint).await.unwrap_err();
    assert!(e.to_string().contains("/api/backends"), "{e}");
}
