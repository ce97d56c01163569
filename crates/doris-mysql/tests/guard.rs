//! The authentication guard against a hostile server (no emulator: a scripted one): whatever
//! it sends in the connection phase, the password never reaches it in clear over a link
//! nobody verified, and a greeting the guard cannot read gets nothing at all.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use doris_mysql::{MySqlEndpoint, SslMode};

/// A public key the client did not pin (a server's claim to be someone it is not).
const HOSTILE_PUBLIC_KEY_PEM: &str = include_str!("hostile_public_key.pem");

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
fn hostile_greeting(protocol: u8, capabilities: u32, plugin: &str) -> Vec<u8> {
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
                p.extend_from_slice(HOSTILE_PUBLIC_KEY_PEM.as_bytes());
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
