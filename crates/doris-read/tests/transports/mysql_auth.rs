//! The MySQL link's authentication against a server that asks for more than it should:
//! the password never goes to a party the user did not vouch for (`doris_mysql`'s guard), TLS is
//! negotiated when the mode says so (counted on the emulator's side of the wire), and
//! `verify_ca` trusts the user's CA alone.
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

/// What a hostile server sends after the client's handshake response, one step per packet
/// (each waits for the client's answer, if any comes).
#[derive(Debug, Clone)]
enum Step {
    /// An auth switch (0xFE) to a plugin.
    Switch(&'static str),
    /// `caching_sha2_password`'s "perform full authentication" (0x01 0x04).
    FullAuth,
    /// An auth-more-data packet with a public key in it.
    Key,
    /// Any other packet.
    Extra(Vec<u8>),
}

const HOSTILE_PASSWORD: &str = "pw-H0stile-Cl3ar";

/// A greeting with any protocol byte, capabilities and plugin.
pub(crate) fn hostile_greeting(protocol: u8, capabilities: u32, plugin: &str) -> Vec<u8> {
    let mut p = vec![protocol];
    p.extend_from_slice(b"5.7.99\0");
    p.extend_from_slice(&9u32.to_le_bytes());
    p.extend_from_slice(b"abcdefgh\0");
    p.extend_from_slice(&(capabilities as u16).to_le_bytes());
    p.push(33);
    p.extend_from_slice(&2u16.to_le_bytes());
    p.extend_from_slice(&((capabilities >> 16) as u16).to_le_bytes());
    p.push(21);
    p.extend_from_slice(&[0; 10]);
    p.extend_from_slice(b"ijklmnopqrst\0");
    p.extend_from_slice(plugin.as_bytes());
    p.push(0);
    p
}

async fn send(socket: &mut tokio::net::TcpStream, seq: u8, payload: &[u8]) -> std::io::Result<()> {
    use tokio::io::AsyncWriteExt;
    let mut framed = (payload.len() as u32).to_le_bytes()[..3].to_vec();
    framed.push(seq);
    framed.extend_from_slice(payload);
    socket.write_all(&framed).await
}

/// Serves one connection as scripted and returns every byte the client sent.
async fn hostile_server(
    listener: tokio::net::TcpListener,
    greeting: Vec<u8>,
    steps: Vec<Step>,
) -> Vec<u8> {
    use tokio::io::AsyncReadExt;
    let mut received = Vec::new();
    let Ok(Ok((mut socket, _))) =
        tokio::time::timeout(Duration::from_secs(5), listener.accept()).await
    else {
        return received;
    };
    let mut seq = 0u8;
    if send(&mut socket, seq, &greeting).await.is_err() {
        return received;
    }
    let mut steps = steps.into_iter();
    loop {
        // Whatever the client sends next (its response, or its answer to the last step).
        let mut buf = vec![0u8; 4096];
        match tokio::time::timeout(Duration::from_millis(300), socket.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => received.extend_from_slice(&buf[..n]),
            _ => return received,
        }
        seq = seq.wrapping_add(2);
        let Some(step) = steps.next() else {
            return received;
        };
        let payload = match step {
            Step::Switch(plugin) => {
                let mut p = vec![0xFE];
                p.extend_from_slice(plugin.as_bytes());
                p.push(0);
                p.extend_from_slice(b"abcdefghijklmnopqrst\0");
                p
            }
            Step::FullAuth => vec![0x01, 0x04],
            Step::Key => {
                let mut p = vec![0x01];
                p.extend_from_slice(OTHER_PUBLIC_KEY_PEM.as_bytes());
                p
            }
            Step::Extra(bytes) => bytes,
        };
        if send(&mut socket, seq, &payload).await.is_err() {
            return received;
        }
    }
}

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    prop_oneof![
        prop::sample::select(vec![
            "mysql_native_password",
            "caching_sha2_password",
            "mysql_clear_password",
            "sha256_password",
            "dialog",
            "auth_gssapi_client",
            "client_ed25519",
            "",
        ])
        .prop_map(Step::Switch),
        Just(Step::FullAuth),
        Just(Step::Key),
        proptest::collection::vec(any::<u8>(), 1..8).prop_map(Step::Extra),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    /// Whatever a hostile server sends in the connection phase (any protocol byte, plugin,
    /// capability bits, auth switches, full authentication, keys, stray packets), on an
    /// unverified link the password never reaches it in clear; a greeting the guard cannot
    /// read gets nothing at all.
    #[test]
    fn no_connection_phase_gets_the_password_in_clear(
        protocol in proptest::prop_oneof![proptest::prelude::Just(10u8), proptest::prelude::any::<u8>()],
        capabilities in proptest::prelude::any::<u32>(),
        plugin in proptest::sample::select(vec![
            "mysql_native_password", "caching_sha2_password", "mysql_clear_password",
            "sha256_password", "dialog", "", "x",
        ]),
        steps in proptest::collection::vec(step(), 0..4),
        mode in proptest::sample::select(vec![SslMode::Disabled, SslMode::Preferred, SslMode::Required]),
    ) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (received, readable) = runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let port = listener.local_addr().unwrap().port();
            let greeting = hostile_greeting(protocol, capabilities, plugin);
            let readable = protocol == 10;
            let server = tokio::spawn(hostile_server(listener, greeting, steps.clone()));
            let mut endpoint = MySqlEndpoint::new("127.0.0.1", port, "bob", HOSTILE_PASSWORD);
            endpoint.ssl_mode = mode;
            endpoint.connect_timeout = Duration::from_secs(3);
            let outcome = endpoint.connect().await;
            if let Err(e) = &outcome {
                assert!(!e.to_string().contains(HOSTILE_PASSWORD), "{e}");
            }
            (server.await.unwrap(), readable)
        });
        let needle = HOSTILE_PASSWORD.as_bytes();
        proptest::prop_assert!(
            !received.windows(needle.len()).any(|w| w == needle),
            "the password left in clear ({mode:?}, {steps:?})"
        );
        if !readable {
            proptest::prop_assert!(received.is_empty(), "protocol {protocol}: the server got {} bytes", received.len());
        }
    }
}
