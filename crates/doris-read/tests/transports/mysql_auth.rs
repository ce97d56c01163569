//! The MySQL link's authentication against a server that asks for more than it should:
//! the password never goes to a party the user did not vouch for (`doris_mysql`'s guard), TLS is
//! negotiated when the mode says so (counted on the emulator's side of the wire), and
//! `verify_ca` trusts the user's CA alone, through reads against the emulator. The guard
//! against a scripted hostile server is tested in its own crate
//! (`crates/doris-mysql/tests/guard.rs`).
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use doris_emulator::faults::Fault;
use doris_emulator::mysql::full_authentication::{OTHER_PUBLIC_KEY_PEM, SERVER_PUBLIC_KEY_PEM};
use doris_emulator::tls::TestCa;
use doris_emulator::{Emulator, EmulatorConfig};
use doris_read::{MySqlEndpoint, ReadError, SslMode, discover};

const PASSWORD: &str = "pw-Fu11Auth";

async fn emulator(tls: Option<&TestCa>) -> (Emulator, MySqlEndpoint) {
    let e = Emulator::start(EmulatorConfig {
        tls: tls.map(|ca| (ca.cert_pem.clone(), ca.key_pem.clone())),
        ..EmulatorConfig::default()
    })
    .await
    .unwrap();
    e.execute(
        None,
        &format!(
            "CREATE DATABASE demo;
             CREATE TABLE demo.t (`id` BIGINT NOT NULL) DUPLICATE KEY(`id`)
               DISTRIBUTED BY HASH(`id`) BUCKETS 1;
             CREATE USER 'bob'@'%' IDENTIFIED BY '{PASSWORD}';
             GRANT SELECT_PRIV ON demo.t TO 'bob'@'%';"
        ),
    )
    .unwrap();
    let mut endpoint = MySqlEndpoint::new("127.0.0.1", e.query_addr().port(), "bob", PASSWORD);
    endpoint.database = Some("demo".into());
    endpoint.connect_timeout = Duration::from_secs(5);
    (e, endpoint)
}

fn with(endpoint: &MySqlEndpoint, mode: SslMode, ca: Option<&TestCa>) -> MySqlEndpoint {
    let mut e = endpoint.clone();
    e.ssl_mode = mode;
    e.ssl_ca_pem = ca.map(|ca| ca.ca_pem.clone().into_bytes());
    e
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_authentication_gets_no_password_over_an_unverified_link() {
    // Plain (disabled, or preferred against a server without TLS) and encrypted but
    // unverified (preferred, required): the server asks for the password itself.
    let ca = TestCa::new(&["127.0.0.1"]).unwrap();
    for (tls, mode) in [
        (None, SslMode::Disabled),
        (None, SslMode::Preferred),
        (Some(&ca), SslMode::Preferred),
        (Some(&ca), SslMode::Required),
    ] {
        let (e, endpoint) = emulator(tls).await;
        e.faults().arm(Fault::Sha2FullAuth, 1);
        let err = discover(&with(&endpoint, mode, None), "demo", "t")
            .await
            .unwrap_err();
        assert!(matches!(err, ReadError::Auth(_)), "{mode:?}: {err}");
        assert!(err.to_string().contains("full authentication"), "{err}");
        assert!(!err.to_string().contains(PASSWORD));
        assert_eq!(e.faults().fired().len(), 1, "{mode:?}: the server asked");
        assert_eq!(e.wire().mysql_passwords_revealed(), 0, "{mode:?}");
        // Without the fault the same link authenticates (the scramble reveals nothing).
        discover(&with(&endpoint, mode, None), "demo", "t")
            .await
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_key_or_a_verified_link_lets_full_authentication_through() {
    let (e, endpoint) = emulator(None).await;
    // The server's key, pinned: the password goes encrypted to it and the server reads it.
    let mut pinned = with(&endpoint, SslMode::Disabled, None);
    pinned.server_public_key_pem = Some(SERVER_PUBLIC_KEY_PEM.as_bytes().to_vec());
    e.faults().arm(Fault::Sha2FullAuth, 1);
    discover(&pinned, "demo", "t").await.unwrap();
    assert_eq!(e.wire().mysql_passwords_revealed(), 1);
    // Another key pinned: whatever key the server sends, the password is encrypted to the
    // pinned one, which this server cannot read.
    pinned.server_public_key_pem = Some(OTHER_PUBLIC_KEY_PEM.as_bytes().to_vec());
    e.faults().arm(Fault::Sha2FullAuth, 1);
    let err = discover(&pinned, "demo", "t").await.unwrap_err();
    assert!(matches!(err, ReadError::Auth(_)), "{err}");
    assert_eq!(
        e.wire().mysql_passwords_revealed(),
        1,
        "nothing more was learned"
    );
    // A key that is not a PEM public key is a configuration error, before any byte.
    pinned.server_public_key_pem = Some(b"ssh-rsa AAAA".to_vec());
    let err = discover(&pinned, "demo", "t").await.unwrap_err();
    assert!(matches!(err, ReadError::Config(_)), "{err}");

    // A verified link: the server is the one the user's CA vouches for.
    let ca = TestCa::new(&["127.0.0.1"]).unwrap();
    let (e, endpoint) = emulator(Some(&ca)).await;
    for mode in [SslMode::VerifyCa, SslMode::VerifyIdentity] {
        let before = e.wire().mysql_passwords_revealed();
        e.faults().arm(Fault::Sha2FullAuth, 1);
        discover(&with(&endpoint, mode, Some(&ca)), "demo", "t")
            .await
            .unwrap();
        assert_eq!(e.wire().mysql_passwords_revealed(), before + 1, "{mode:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_is_negotiated_on_the_wire_when_the_mode_says_so() {
    let ca = TestCa::new(&["127.0.0.1"]).unwrap();
    let (e, with_password) = emulator(Some(&ca)).await;
    // With and without a password (every link goes through the guard, which owns its TLS).
    let mut without = MySqlEndpoint::new("127.0.0.1", e.query_addr().port(), "root", "");
    without.database = Some("demo".into());
    for (mode, ca_given, encrypted) in [
        (SslMode::Disabled, None, false),
        (SslMode::Preferred, None, true),
        (SslMode::Required, None, true),
        (SslMode::VerifyCa, Some(&ca), true),
        (SslMode::VerifyIdentity, Some(&ca), true),
    ] {
        for endpoint in [&with_password, &without] {
            let before = e.wire().mysql_tls_sessions();
            discover(&with(endpoint, mode, ca_given), "demo", "t")
                .await
                .unwrap();
            let negotiated = e.wire().mysql_tls_sessions() - before;
            assert_eq!(negotiated, u64::from(encrypted), "{mode:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_ca_trusts_the_users_ca_alone_and_skips_the_host_name() {
    // A certificate for another name, signed by the user's CA.
    let ca = TestCa::new(&["db.other.example"]).unwrap();
    let (_e, endpoint) = emulator(Some(&ca)).await;
    discover(&with(&endpoint, SslMode::VerifyCa, Some(&ca)), "demo", "t")
        .await
        .unwrap();
    // verify_identity checks the name too.
    let err = discover(
        &with(&endpoint, SslMode::VerifyIdentity, Some(&ca)),
        "demo",
        "t",
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ReadError::Transport(_)), "{err}");
    // Another CA: the chain does not verify.
    let other = TestCa::new(&["db.other.example"]).unwrap();
    let err = discover(
        &with(&endpoint, SslMode::VerifyCa, Some(&other)),
        "demo",
        "t",
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ReadError::Transport(_)), "{err}");
    // No CA: verify_ca has nothing to check against (the web PKI roots would accept any
    // public certificate for any name), so it is refused before connecting.
    let err = discover(&with(&endpoint, SslMode::VerifyCa, None), "demo", "t")
        .await
        .unwrap_err();
    assert!(matches!(err, ReadError::Config(_)), "{err}");
    assert!(err.to_string().contains("ssl_ca"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_asking_for_a_clear_text_password_is_refused_over_an_unverified_link() {
    let (e, endpoint) = emulator(None).await;
    e.faults().arm(Fault::ClearPasswordGreeting, 1);
    let err = discover(&endpoint, "demo", "t").await.unwrap_err();
    assert!(matches!(err, ReadError::Auth(_)), "{err}");
    assert!(err.to_string().contains("mysql_clear_password"), "{err}");
    assert!(!err.to_string().contains(PASSWORD));
    assert_eq!(e.faults().fired().len(), 1);
}
