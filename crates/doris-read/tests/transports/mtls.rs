//! Mutual TLS on every read-side link: an emulator whose FE and BE faces (HTTP, MySQL,
//! Flight) ask each client for a certificate its CA signed refuses a client without one and
//! serves the one that `ConnectionSettings::client_identity` gives, through each endpoint's
//! `from_settings`, on the MySQL link (verified, and through the guard), the FE's
//! `_query_plan` and `/api/backends`, and Flight (FE and BE).
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use arrow_schema::{DataType, Field, Schema};
use doris_connection::{ClientIdentity, ConnectionSettings, Credentials, SslMode};
use doris_emulator::tls::TestCa;
use doris_emulator::{Emulator, EmulatorConfig};
use doris_plan::{PlanEndpoint, fetch_backends, fetch_plan};
use doris_read::{BatchLimits, FlightSqlEndpoint, MySqlEndpoint, ReadError, discover};
use futures::TryStreamExt as _;

use crate::flight_query;

const DDL: &str = "CREATE DATABASE demo;
CREATE TABLE demo.t (`id` BIGINT NOT NULL) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 2;
CREATE USER 'bob'@'%' IDENTIFIED BY 'pw-mTLS';
GRANT SELECT_PRIV ON demo.t TO 'bob'@'%';";

/// An emulator that asks every TLS client for a certificate `ca` signed, and the settings
/// to reach it over TLS on every link (no client certificate yet).
async fn setup(ca: &TestCa) -> (Emulator, ConnectionSettings) {
    let e = Emulator::start(EmulatorConfig {
        tls: Some((ca.cert_pem.clone(), ca.key_pem.clone())),
        tls_client_ca: Some(ca.ca_pem.clone()),
        ..EmulatorConfig::default()
    })
    .await
    .unwrap();
    e.execute(None, DDL).unwrap();
    let ids = arrow::array::Int64Array::from(vec![1, 2, 3]);
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let batch = arrow::array::RecordBatch::try_new(schema, vec![Arc::new(ids)]).unwrap();
    e.commit_rows("demo", "t", vec![batch]).unwrap();
    let mut settings =
        ConnectionSettings::new("127.0.0.1", Credentials::new("bob", "pw-mTLS")).unwrap();
    settings.mysql_port = e.query_addr().port();
    settings.http_port = e.fe_http_addr().port();
    settings.flight_port = e.flight_addrs().unwrap().0.port();
    settings.http_secure = true;
    settings.flight_secure = true;
    settings.mysql_ssl_mode = SslMode::VerifyIdentity;
    settings.ca_pem = Some(ca.ca_pem.clone().into_bytes());
    settings.connect_timeout = Duration::from_secs(5);
    (e, settings)
}

fn identity(ca: &TestCa) -> ClientIdentity {
    ClientIdentity::from_pem(ca.client_cert_pem.clone(), ca.client_key_pem.clone())
}

async fn flight_ids(endpoint: &FlightSqlEndpoint) -> Result<Vec<i64>, ReadError> {
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let stream = flight_query(
        endpoint,
        "SELECT `id` FROM `demo`.`t` ORDER BY `id`".into(),
        schema,
        BatchLimits::default(),
    )
    .await?;
    let batches: Vec<_> = stream.try_collect().await?;
    Ok(batches
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_any()
                .downcast_ref::<arrow::array::Int64Array>()
                .unwrap()
                .values()
                .to_vec()
        })
        .collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mysql_link_presents_the_client_certificate_when_asked() {
    let ca = TestCa::new(&["127.0.0.1"]).unwrap();
    let (_e, mut settings) = setup(&ca).await;
    // verify_identity and verify_ca alike (the guard's TLS on every link).
    for mode in [SslMode::VerifyIdentity, SslMode::VerifyCa] {
        settings.mysql_ssl_mode = mode;
        settings.client_identity = None;
        let anonymous = MySqlEndpoint::from_settings(&settings);
        assert!(
            discover(&anonymous, "demo", "t").await.is_err(),
            "{mode:?}: a server that asks for a certificate refuses a client without one"
        );
        settings.client_identity = Some(identity(&ca));
        let endpoint = MySqlEndpoint::from_settings(&settings);
        assert!(!format!("{endpoint:?}").contains("PRIVATE KEY"));
        let schema = discover(&endpoint, "demo", "t").await.unwrap();
        assert_eq!(schema.columns.len(), 1, "{mode:?}");
    }
    // A certificate another CA signed is refused too.
    let other = TestCa::new(&["127.0.0.1"]).unwrap();
    settings.client_identity = Some(identity(&other));
    assert!(
        discover(&MySqlEndpoint::from_settings(&settings), "demo", "t")
            .await
            .is_err()
    );
    // A key that is not one is a configuration error naming the part, never its text.
    settings.client_identity = Some(ClientIdentity::from_pem(
        ca.client_cert_pem.clone(),
        "-----BEGIN PRIVATE KEY-----\n!!s3cr3t!!\n-----END PRIVATE KEY-----\n",
    ));
    let e = discover(&MySqlEndpoint::from_settings(&settings), "demo", "t")
        .await
        .unwrap_err();
    assert!(matches!(e, ReadError::Config(_)), "{e}");
    assert!(e.to_string().contains("client key"), "{e}");
    assert!(!e.to_string().contains("s3cr3t"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fe_http_face_gets_the_client_certificate_for_plans_and_backends() {
    let ca = TestCa::new(&["127.0.0.1"]).unwrap();
    let (_e, mut settings) = setup(&ca).await;
    let sql = "SELECT `id` FROM `demo`.`t`";
    let anonymous = PlanEndpoint::from_settings(&settings).unwrap();
    assert!(fetch_plan(&anonymous, "demo", "t", sql).await.is_err());
    assert!(fetch_backends(&anonymous).await.is_err());
    settings.client_identity = Some(identity(&ca));
    let endpoint = PlanEndpoint::from_settings(&settings).unwrap();
    assert!(!format!("{endpoint:?}").contains("PRIVATE KEY"));
    let plan = fetch_plan(&endpoint, "demo", "t", sql).await.unwrap();
    assert_eq!(plan.tablets.len(), 2);
    assert!(!fetch_backends(&endpoint).await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flight_reads_present_the_client_certificate_to_the_fe_and_the_bes() {
    let ca = TestCa::new(&["127.0.0.1"]).unwrap();
    let (_e, mut settings) = setup(&ca).await;
    let anonymous = FlightSqlEndpoint::from_settings(&settings).unwrap();
    let e = flight_ids(&anonymous).await.unwrap_err();
    assert!(!matches!(e, ReadError::Config(_)), "{e}");
    settings.client_identity = Some(identity(&ca));
    let endpoint = FlightSqlEndpoint::from_settings(&settings).unwrap();
    assert!(!format!("{endpoint:?}").contains("PRIVATE KEY"));
    assert_eq!(flight_ids(&endpoint).await.unwrap(), vec![1, 2, 3]);
}
