//! The authentication guard against a hostile server (no emulator: a scripted one that holds
//! its own RSA key): whatever it sends in the connection phase, under every `ssl_mode` that
//! does not verify it, with a server key pinned or not, it recovers nothing of the password
//! (not in clear, not encrypted to its own key), and a greeting the guard cannot read gets
//! nothing at all.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use doris_mysql::{MySqlEndpoint, SslMode};
use rsa::pkcs8::DecodePrivateKey as _;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The hostile server's key pair: it sends the public half as if it were the server the
/// client pinned, and tries the private half on everything the client sends.
const HOSTILE_PUBLIC_KEY_PEM: &str = include_str!("hostile_public_key.pem");
const HOSTILE_PRIVATE_KEY_PEM: &str = include_str!("hostile_private_key.pem");
/// The key the client pins (the real server's, whose private half is elsewhere).
const PINNED_PUBLIC_KEY_PEM: &str = include_str!("pinned_public_key.pem");

const HOSTILE_PASSWORD: &str = "pw-H0stile-Cl3ar";
/// The nonce of the greeting and of every switch the script sends.
const NONCE: &[u8; 20] = b"abcdefghijklmnopqrst";
/// `CLIENT_SSL`.
const CLIENT_SSL: u32 = 0x800;

/// What a hostile server sends after the client's handshake response, one packet per step
/// (each answering the client's last packet).
#[derive(Debug, Clone)]
enum Step {
    /// An auth switch (0xFE) to a plugin.
    Switch(&'static str),
    /// `caching_sha2_password`'s "perform full authentication" (0x01 0x04).
    FullAuth,
    /// `caching_sha2_password`'s fast authentication success (0x01 0x03).
    FastOk,
    /// Its own public key as a key packet (0x01 + PEM).
    Key,
    /// Its own public key behind an OK's first byte (0x00 + PEM): the walk-around.
    KeyAsOk,
    /// An OK packet.
    Ok,
    /// An OK with a sequence id off by three.
    OkOutOfSequence,
    /// Any other packet.
    Extra(Vec<u8>),
}

/// A greeting with any protocol byte, capabilities and plugin, and [`NONCE`].
fn hostile_greeting(protocol: u8, capabilities: u32, plugin: &str) -> Vec<u8> {
    let mut p = vec![protocol];
    p.extend_from_slice(b"5.7.99\0");
    p.extend_from_slice(&9u32.to_le_bytes());
    p.extend_from_slice(&NONCE[..8]);
    p.push(0);
    p.extend_from_slice(&(capabilities as u16).to_le_bytes());
    p.push(33);
    p.extend_from_slice(&2u16.to_le_bytes());
    p.extend_from_slice(&((capabilities >> 16) as u16).to_le_bytes());
    p.push(21);
    p.extend_from_slice(&[0; 10]);
    p.extend_from_slice(&NONCE[8..]);
    p.push(0);
    p.extend_from_slice(plugin.as_bytes());
    p.push(0);
    p
}

trait Link: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Link for T {}

async fn send(link: &mut (impl AsyncWrite + Unpin + ?Sized), seq: u8, payload: &[u8]) -> bool {
    let mut framed = (payload.len() as u32).to_le_bytes()[..3].to_vec();
    framed.push(seq);
    framed.extend_from_slice(payload);
    link.write_all(&framed).await.is_ok() && link.flush().await.is_ok()
}

/// The client's next packet (its sequence id and payload), within 300 ms.
async fn receive(link: &mut (impl AsyncRead + Unpin + ?Sized)) -> Option<(u8, Vec<u8>)> {
    let read = async {
        let mut header = [0u8; 4];
        link.read_exact(&mut header).await.ok()?;
        let len =
            usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
        let mut payload = vec![0u8; len];
        link.read_exact(&mut payload).await.ok()?;
        Some((header[3], payload))
    };
    tokio::time::timeout(Duration::from_millis(300), read)
        .await
        .ok()
        .flatten()
}

fn payload_of(step: Step) -> Vec<u8> {
    match step {
        Step::Switch(plugin) => {
            let mut p = vec![0xFE];
            p.extend_from_slice(plugin.as_bytes());
            p.push(0);
            p.extend_from_slice(NONCE);
            p.push(0);
            p
        }
        Step::FullAuth => vec![0x01, 0x04],
        Step::FastOk => vec![0x01, 0x03],
        Step::Key | Step::KeyAsOk => {
            let first = if matches!(step, Step::Key) {
                0x01
            } else {
                0x00
            };
            let mut p = vec![first];
            p.extend_from_slice(HOSTILE_PUBLIC_KEY_PEM.as_bytes());
            p
        }
        Step::Ok | Step::OkOutOfSequence => vec![0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00],
        Step::Extra(bytes) => bytes,
    }
}

/// What the hostile server saw: every byte the client sent before any TLS (the TLS request),
/// and every packet payload it sent (inside TLS when the link took it).
#[derive(Debug, Default)]
struct Seen {
    plain: Vec<u8>,
    packets: Vec<Vec<u8>>,
}

/// Serves one connection as scripted, taking TLS when the client asks for it.
async fn hostile_server(
    listener: tokio::net::TcpListener,
    greeting: Vec<u8>,
    steps: Vec<Step>,
) -> Seen {
    let mut seen = Seen::default();
    let Ok(Ok((mut socket, _))) =
        tokio::time::timeout(Duration::from_secs(5), listener.accept()).await
    else {
        return seen;
    };
    if !send(&mut socket, 0, &greeting).await {
        return seen;
    }
    let Some((mut seq, first)) = receive(&mut socket).await else {
        return seen;
    };
    seen.plain.extend_from_slice(&first);
    let mut link: Box<dyn Link> = if first.len() == 32 {
        // A TLS request: take TLS with a certificate nobody verifies.
        let ca = doris_emulator::tls::TestCa::new(&["127.0.0.1"]).unwrap();
        let config = doris_emulator::tls::server_config(&ca.cert_pem, &ca.key_pem, None).unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(config);
        let Ok(tls) = acceptor.accept(socket).await else {
            return seen;
        };
        let mut tls: Box<dyn Link> = Box::new(tls);
        match receive(&mut tls).await {
            Some((s, response)) => {
                seq = s;
                seen.packets.push(response);
            }
            None => return seen,
        }
        tls
    } else {
        seen.packets.push(first);
        Box::new(socket)
    };
    for step in steps {
        let seq_out = match step {
            Step::OkOutOfSequence => seq.wrapping_add(4),
            _ => seq.wrapping_add(1),
        };
        let answer_due = !matches!(step, Step::FastOk);
        if !send(&mut link, seq_out, &payload_of(step)).await {
            return seen;
        }
        if !answer_due {
            seq = seq_out;
            continue;
        }
        match receive(&mut link).await {
            Some((s, answer)) => {
                seq = s;
                seen.packets.push(answer);
            }
            None => return seen,
        }
    }
    seen
}

/// Whether `seen` gives the hostile server the password: in clear anywhere, or as a packet
/// its private key decrypts (RSA-OAEP with SHA-1, the password XOR the nonce, as
/// `caching_sha2_password` and `sha256_password` encrypt it).
fn recovers_the_password(seen: &Seen) -> bool {
    let needle = HOSTILE_PASSWORD.as_bytes();
    let in_clear = |bytes: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    if in_clear(&seen.plain) || seen.packets.iter().any(|p| in_clear(p)) {
        return true;
    }
    let key = rsa::RsaPrivateKey::from_pkcs8_pem(HOSTILE_PRIVATE_KEY_PEM).unwrap();
    seen.packets.iter().any(|packet| {
        if packet.len() != 128 {
            return false;
        }
        let Ok(mut plain) = key.decrypt(rsa::Oaep::new::<sha1::Sha1>(), packet) else {
            return false;
        };
        for (i, b) in plain.iter_mut().enumerate() {
            *b ^= NONCE[i % NONCE.len()];
        }
        plain.strip_suffix(&[0]).unwrap_or(&plain) == needle
    })
}

/// Runs `steps` against a guarded connect under `mode`, with the pinned key or not.
fn run(
    greeting: Vec<u8>,
    steps: Vec<Step>,
    mode: SslMode,
    pinned: bool,
) -> (Seen, Result<(), doris_mysql::MySqlError>) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = tokio::spawn(hostile_server(listener, greeting, steps));
        let mut endpoint = MySqlEndpoint::new("127.0.0.1", port, "bob", HOSTILE_PASSWORD);
        endpoint.ssl_mode = mode;
        endpoint.connect_timeout = Duration::from_secs(3);
        if pinned {
            endpoint.server_public_key_pem = Some(PINNED_PUBLIC_KEY_PEM.as_bytes().to_vec());
        }
        let outcome = endpoint.connect().await.map(drop);
        if let Err(e) = &outcome {
            assert!(!e.to_string().contains(HOSTILE_PASSWORD), "{e}");
        }
        (server.await.unwrap(), outcome)
    })
}

const UNVERIFIED: [SslMode; 3] = [SslMode::Disabled, SslMode::Preferred, SslMode::Required];

/// A deterministic generator for the control's padding (no randomness is needed to test a
/// detector).
struct CountingRng(u64);

impl rsa::rand_core::RngCore for CountingRng {
    fn next_u32(&mut self) -> u32 {
        self.next_u64() as u32
    }
    fn next_u64(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        self.0 >> 11
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for b in dest {
            *b = self.next_u64() as u8;
        }
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rsa::rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

impl rsa::rand_core::CryptoRng for CountingRng {}

/// The detector itself finds a password encrypted to the hostile key (so a pass below is
/// not a detector that finds nothing).
#[test]
fn the_detector_recovers_a_password_encrypted_to_the_hostile_key() {
    use rsa::pkcs8::DecodePublicKey as _;
    let public = rsa::RsaPublicKey::from_public_key_pem(HOSTILE_PUBLIC_KEY_PEM).unwrap();
    let mut plain = HOSTILE_PASSWORD.as_bytes().to_vec();
    plain.push(0);
    for (i, b) in plain.iter_mut().enumerate() {
        *b ^= NONCE[i % NONCE.len()];
    }
    let sealed = public
        .encrypt(&mut CountingRng(7), rsa::Oaep::new::<sha1::Sha1>(), &plain)
        .unwrap();
    let seen = Seen {
        plain: Vec::new(),
        packets: vec![sealed],
    };
    assert!(recovers_the_password(&seen));
}

/// The walk-around of a pinned key: the server asks for full authentication and answers the
/// key request with `0x00` and its own key. Under every unverified mode the guard refuses
/// it, and the server recovers nothing.
#[test]
fn a_key_sent_behind_an_ok_is_refused_and_recovers_nothing() {
    for mode in UNVERIFIED {
        let greeting = hostile_greeting(10, 0xFFFF_FFFF, "caching_sha2_password");
        let (seen, outcome) = run(
            greeting,
            vec![Step::FullAuth, Step::KeyAsOk, Step::Ok],
            mode,
            true,
        );
        let e = outcome.unwrap_err();
        assert!(
            matches!(e, doris_mysql::MySqlError::Auth(_)) && e.to_string().contains("not a key"),
            "{mode:?}: {e}"
        );
        assert!(!recovers_the_password(&seen), "{mode:?}: {seen:?}");
        assert!(
            seen.packets.iter().any(|p| p == &[0x02]),
            "{mode:?}: the exchange reached the key request"
        );
    }
}

/// With a key pinned, full authentication goes through encrypted to the pinned key: the
/// hostile server that sends its own key gets a blob it cannot open.
#[test]
fn full_authentication_with_a_pinned_key_encrypts_to_the_pinned_key_alone() {
    for mode in UNVERIFIED {
        let greeting = hostile_greeting(10, 0xFFFF_FFFF, "caching_sha2_password");
        let (seen, _) = run(
            greeting,
            vec![Step::FullAuth, Step::Key, Step::Ok],
            mode,
            true,
        );
        assert!(!recovers_the_password(&seen), "{mode:?}");
        assert!(
            seen.packets
                .iter()
                .any(|p| p.len() == 256 || p.len() == 128),
            "{mode:?}: the client sent its encrypted password ({:?})",
            seen.packets.iter().map(Vec::len).collect::<Vec<_>>()
        );
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
        Just(Step::FastOk),
        Just(Step::Key),
        Just(Step::KeyAsOk),
        Just(Step::Ok),
        Just(Step::OkOutOfSequence),
        proptest::collection::vec(any::<u8>(), 1..8).prop_map(Step::Extra),
        proptest::collection::vec(any::<u8>(), 70_000..70_001).prop_map(Step::Extra),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// Whatever a hostile server sends in the connection phase (any protocol byte, plugin,
    /// capability bits, auth switches, full authentication, keys behind any first byte, OKs
    /// in and out of sequence, stray and oversized packets), under every unverified mode,
    /// with a key pinned or not, it recovers nothing of the password; a greeting the guard
    /// cannot read gets nothing at all.
    #[test]
    fn no_connection_phase_recovers_the_password(
        protocol in proptest::prop_oneof![proptest::prelude::Just(10u8), proptest::prelude::any::<u8>()],
        capabilities in proptest::prop_oneof![
            proptest::prelude::any::<u32>(),
            proptest::prelude::Just(0xFFFF_FFFFu32),
            proptest::prelude::Just(!CLIENT_SSL),
        ],
        plugin in proptest::sample::select(vec![
            "mysql_native_password", "caching_sha2_password", "mysql_clear_password",
            "sha256_password", "dialog", "", "x",
        ]),
        steps in proptest::collection::vec(step(), 0..5),
        mode in proptest::sample::select(UNVERIFIED.to_vec()),
        pinned in proptest::prelude::any::<bool>(),
    ) {
        let greeting = hostile_greeting(protocol, capabilities, plugin);
        let (seen, _) = run(greeting, steps.clone(), mode, pinned);
        proptest::prop_assert!(
            !recovers_the_password(&seen),
            "the password was recovered ({mode:?}, pinned {pinned}, {steps:?})"
        );
        if protocol != 10 {
            proptest::prop_assert!(
                seen.plain.is_empty() && seen.packets.is_empty(),
                "protocol {protocol}: the server got {} packets", seen.packets.len()
            );
        }
    }
}

/// A sanity check of the script: an honest `caching_sha2_password` fast authentication
/// through the guard ends in a connection (so the refusals above are the guard's rules, not
/// a script sqlx cannot follow).
#[test]
fn an_honest_fast_authentication_connects_under_every_mode() {
    for mode in [SslMode::Disabled, SslMode::Preferred] {
        let greeting = hostile_greeting(10, 0xFFFF_FFFF, "caching_sha2_password");
        let (seen, outcome) = run(greeting, vec![Step::FastOk, Step::Ok], mode, false);
        assert!(!recovers_the_password(&seen));
        // sqlx sends its connect statements after the OK; the script answers none, so the
        // connect ends on them, never on the authentication.
        if let Err(e) = outcome {
            assert!(
                !matches!(e, doris_mysql::MySqlError::Auth(_)),
                "{mode:?}: {e}"
            );
        }
    }
}
