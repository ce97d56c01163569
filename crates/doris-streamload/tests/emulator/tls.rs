//! Stream Load over TLS, verified.

use crate::common::*;

/// An emulator whose HTTP faces serve TLS with a certificate for `names`, and its CA.
async fn tls_env(names: &[&str]) -> (Env, doris_emulator::tls::TestCa) {
    let ca = doris_emulator::tls::TestCa::new(names).unwrap();
    let config = EmulatorConfig {
        tls: Some((ca.cert_pem.clone(), ca.key_pem.clone())),
        ..EmulatorConfig::default()
    };
    let emulator = Emulator::start(config).await.unwrap();
    emulator
        .execute(None, &format!("CREATE DATABASE d; {DUP}"))
        .unwrap();
    (Env { emulator }, ca)
}

fn https_config(env: &Env, ca_pem: Option<&str>) -> ClientConfig {
    let mut c = ClientConfig::new(
        format!("https://{}", env.emulator.fe_http_addr())
            .parse()
            .unwrap(),
        Credentials::new("root", ""),
    );
    c.ca_bundle_pem = ca_pem.map(|p| p.as_bytes().to_vec());
    c.retry.max_attempts = 2;
    c.retry.initial_backoff = Duration::from_millis(20);
    c
}

#[tokio::test]
async fn a_load_over_tls_verifies_the_fe_and_the_be() {
    let (env, ca) = tls_env(&["127.0.0.1"]).await;
    let client = StreamLoadClient::new(https_config(&env, Some(&ca.ca_pem))).unwrap();
    let r = labeled(&client, &LoadOptions::default(), "tls1", batch(0, 50))
        .await
        .unwrap();
    assert_eq!(r.status, LoadStatus::Success);
    assert_eq!(sorted_ids(&env.rows("t")), (0..50).collect::<Vec<_>>());
    // 2PC over TLS as well (FE, then the BE it redirects to).
    let options = LoadOptions {
        two_phase_commit: true,
        ..LoadOptions::default()
    };
    let r = labeled(&client, &options, "tls2", batch(50, 10))
        .await
        .unwrap();
    client.commit("d", &txn_ref(&r).unwrap()).await.unwrap();
    assert_eq!(env.row_count("t"), 60);
}

#[tokio::test]
async fn a_certificate_from_an_unknown_ca_or_for_another_name_is_refused() {
    // No extra CA: the web PKI roots do not know the test CA.
    let (env, ca) = tls_env(&["127.0.0.1"]).await;
    let client = StreamLoadClient::new(https_config(&env, None)).unwrap();
    let e = labeled(&client, &LoadOptions::default(), "tls3", batch(0, 5))
        .await
        .unwrap_err();
    assert!(matches!(e, StreamLoadError::Transport { .. }), "{e}");
    // Another CA than the one that signed the server's certificate.
    let other = doris_emulator::tls::TestCa::new(&["127.0.0.1"]).unwrap();
    let client = StreamLoadClient::new(https_config(&env, Some(&other.ca_pem))).unwrap();
    assert!(
        labeled(&client, &LoadOptions::default(), "tls4", batch(0, 5))
            .await
            .is_err()
    );
    drop(ca);
    // The right CA, but the certificate names another host than the one connected to.
    let (env, ca) = tls_env(&["doris.example"]).await;
    let client = StreamLoadClient::new(https_config(&env, Some(&ca.ca_pem))).unwrap();
    let e = labeled(&client, &LoadOptions::default(), "tls5", batch(0, 5))
        .await
        .unwrap_err();
    assert!(matches!(e, StreamLoadError::Transport { .. }), "{e}");
    assert_eq!(
        env.row_count("t"),
        0,
        "nothing was sent without a verified link"
    );
}

#[tokio::test]
async fn a_server_that_asks_for_a_client_certificate_gets_the_configured_one() {
    // Mutual TLS: the emulator's FE and BE ask every client for a certificate its CA
    // signed. Without one the load is refused before any body byte is sent (not an
    // ambiguous outcome); with the CA's client certificate it loads.
    let ca = doris_emulator::tls::TestCa::new(&["127.0.0.1"]).unwrap();
    let config = EmulatorConfig {
        tls: Some((ca.cert_pem.clone(), ca.key_pem.clone())),
        tls_client_ca: Some(ca.ca_pem.clone()),
        ..EmulatorConfig::default()
    };
    let emulator = Emulator::start(config).await.unwrap();
    emulator
        .execute(None, &format!("CREATE DATABASE d; {DUP}"))
        .unwrap();
    let env = Env { emulator };
    let anonymous = StreamLoadClient::new(https_config(&env, Some(&ca.ca_pem))).unwrap();
    let e = labeled(&anonymous, &LoadOptions::default(), "mtls1", batch(0, 5))
        .await
        .unwrap_err();
    assert!(matches!(e, StreamLoadError::Transport { .. }), "{e}");
    assert_eq!(env.row_count("t"), 0);
    let mut config = https_config(&env, Some(&ca.ca_pem));
    config.client_identity = Some(ClientIdentity::from_pem(
        ca.client_cert_pem.clone(),
        ca.client_key_pem.clone(),
    ));
    assert!(!format!("{config:?}").contains("PRIVATE KEY"));
    let client = StreamLoadClient::new(config).unwrap();
    let r = labeled(&client, &LoadOptions::default(), "mtls2", batch(0, 5))
        .await
        .unwrap();
    assert_eq!(r.status, LoadStatus::Success);
    assert_eq!(sorted_ids(&env.rows("t")), (0..5).collect::<Vec<_>>());
}

/// An FE reached over https that redirects the load to a plain-http BE is refused before
/// any body byte: no downgrade (docs/security.md).
#[tokio::test]
async fn an_https_fe_redirecting_to_plain_http_is_refused_before_the_body() {
    let (env, ca) = tls_env(&["127.0.0.1"]).await;
    let client = StreamLoadClient::new(https_config(&env, Some(&ca.ca_pem))).unwrap();
    env.emulator.faults().arm(Fault::RedirectPlainHttp, 2);
    let e = labeled(&client, &LoadOptions::default(), "tls-down", batch(0, 5))
        .await
        .unwrap_err();
    match &e {
        StreamLoadError::RedirectRefused { target, reason } => {
            assert!(reason.contains("no downgrade to http"), "{reason}");
            assert!(target.starts_with("http://"), "{target}");
        }
        other => panic!("{other}"),
    }
    assert!(
        !env.emulator.faults().fired().is_empty(),
        "the FE redirected to http"
    );
    assert_eq!(env.row_count("t"), 0);
}
