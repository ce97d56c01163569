//! The MySQL link's authentication guard: a relay on a private Unix socket between sqlx and the
//! server, which owns the link's TLS and so reads the authentication exchange in clear, and
//! stops it before the password goes where the user did not send it.
//!
//! sqlx answers whatever the server asks while authenticating: an auth switch to any plugin
//! it knows, or `caching_sha2_password` *full* authentication, where the password leaves
//! encrypted to an RSA key the server itself sends (on a plain link) or in clear (inside
//! TLS). On a link whose certificate nobody verified the "server" may be whoever sits on
//! the path, so the guard lets through only what reveals nothing:
//!
//! - the `mysql_native_password` and `caching_sha2_password` scrambles (the password
//!   hashed with the server's nonce), and a greeting or switch naming only those plugins;
//! - full authentication only over TLS verified against the user's CA (`verify_ca`), or
//!   with a pinned server key ([`MySqlEndpoint::server_public_key_pem`]), which replaces
//!   the key the server sends so the password is encrypted to the key the user trusts.
//!
//! Anything else closes both sides and the connect fails with [`ReadError::Auth`] naming
//! what the server asked for. `verify_ca` here checks the certificate chain against the
//! user's CA alone (not the web PKI roots: any public certificate for any name would
//! pass a check that skips the host name). After the server's OK the relay copies bytes
//! both ways until either side closes.
//!
//! The guard serves `disabled`, `preferred` and `required` links that carry a password, and
//! every `verify_ca` link; `verify_identity` links are sqlx's own (chain and host name
//! verified: whatever the server asks for then goes to the server the user named).

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use doris_connection::SslMode;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::{TcpStream, UnixListener};

use crate::error::ReadError;
use crate::mysql::connect::MySqlEndpoint;
use crate::mysql::greeting::{CLIENT_SSL, Greeting};

/// The largest packet the authentication exchange may hold (a greeting, a switch, an RSA
/// key): anything larger is not authentication.
const MAX_AUTH_PACKET: usize = 64 * 1024;
/// The plugins whose exchange reveals nothing of the password.
const SAFE_PLUGINS: [&str; 2] = ["mysql_native_password", "caching_sha2_password"];

/// A relay started for one connection: sqlx connects to its Unix socket, `socket`, in a
/// folder only this user may enter, and the relay serves the first connection that comes
/// from this very process (its peer credentials name this process id), so no other local
/// process, of this user or another, can take the client's place.
pub(crate) struct Guard {
    /// The Unix socket the relay accepts one connection on.
    pub(crate) socket: std::path::PathBuf,
    refusal: Arc<Mutex<Option<ReadError>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Guard {
    /// Whether `endpoint`'s link goes through the guard.
    pub(crate) fn needed(endpoint: &MySqlEndpoint) -> bool {
        match endpoint.ssl_mode {
            SslMode::VerifyIdentity => false,
            SslMode::VerifyCa => true,
            SslMode::Disabled | SslMode::Preferred | SslMode::Required => {
                endpoint.credentials.has_password()
            }
        }
    }

    /// Binds the socket and starts the relay, which accepts one connection of this process
    /// (within the connect timeout) and serves it until either side closes.
    pub(crate) async fn start(endpoint: &MySqlEndpoint) -> Result<Self, ReadError> {
        let policy = Policy::of(endpoint)?;
        let bind_error =
            |e: io::Error| ReadError::Transport(format!("the MySQL guard could not bind: {e}"));
        let folder = private_folder().map_err(bind_error)?;
        let socket = folder.join("s");
        let listener = UnixListener::bind(&socket).map_err(bind_error)?;
        let refusal = Arc::new(Mutex::new(None));
        let slot = refusal.clone();
        let upstream_port = endpoint.port;
        let wait = endpoint.connect_timeout;
        let task = tokio::spawn(async move {
            let accepted = tokio::time::timeout(wait, accept_own(&listener)).await;
            drop(listener);
            let _ = std::fs::remove_dir_all(&folder);
            let Ok(Some(client)) = accepted else {
                return;
            };
            if let Err(e) = relay(client, upstream_port, policy, wait).await {
                *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
            }
        });
        Ok(Self {
            socket,
            refusal,
            task,
        })
    }

    /// After sqlx failed to connect through the relay: why the relay closed the link, if it
    /// refused it or failed on the server's side (waits for the relay to end, so its reason
    /// is never missed; it ends as soon as sqlx's side is gone).
    pub(crate) async fn refusal(self, wait: Duration) -> Option<ReadError> {
        let Self { refusal, task, .. } = self;
        if tokio::time::timeout(wait, task).await.is_err() {
            return None;
        }
        refusal.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// A new folder only this user may enter (mode 0700), under the temporary folder (or
/// `/tmp` when that path is too long for a Unix socket's name).
fn private_folder() -> io::Result<std::path::PathBuf> {
    use std::hash::BuildHasher as _;
    use std::os::unix::fs::DirBuilderExt as _;
    let mut base = std::env::temp_dir();
    if base.as_os_str().len() > 64 {
        base = std::path::PathBuf::from("/tmp");
    }
    let nonce = std::collections::hash_map::RandomState::new()
        .hash_one((std::process::id(), std::time::SystemTime::now()));
    let folder = base.join(format!(
        "daft-doris-guard-{}-{nonce:016x}",
        std::process::id()
    ));
    std::fs::DirBuilder::new().mode(0o700).create(&folder)?;
    Ok(folder)
}

/// The first connection whose peer is this process (connections from anyone else are
/// closed unanswered); `None` when accepting fails.
async fn accept_own(listener: &UnixListener) -> Option<tokio::net::UnixStream> {
    let own = i32::try_from(std::process::id()).ok()?;
    loop {
        let (stream, _) = listener.accept().await.ok()?;
        let ours = stream
            .peer_cred()
            .ok()
            .and_then(|cred| cred.pid())
            .is_some_and(|pid| pid == own);
        if ours {
            return Some(stream);
        }
    }
}

/// What the relay allows on one link.
struct Policy {
    mode: SslMode,
    tls: Option<Arc<rustls::ClientConfig>>,
    /// The server is authenticated (TLS verified against the user's CA): full
    /// authentication may proceed.
    verified: bool,
    pinned_key: Option<Vec<u8>>,
    /// The server's host: where the relay connects, and the TLS server name.
    host: String,
}

impl Policy {
    fn of(endpoint: &MySqlEndpoint) -> Result<Self, ReadError> {
        let tls = match endpoint.ssl_mode {
            SslMode::Disabled => None,
            mode => Some(Arc::new(tls_config(
                mode,
                endpoint.ssl_ca_pem.as_deref(),
                endpoint.client_identity.as_ref(),
            )?)),
        };
        if let Some(pem) = &endpoint.server_public_key_pem
            && !pem.starts_with(b"-----BEGIN PUBLIC KEY-----")
        {
            return Err(ReadError::Config(
                "server_public_key must be a PEM public key (-----BEGIN PUBLIC KEY-----)".into(),
            ));
        }
        Ok(Self {
            mode: endpoint.ssl_mode,
            tls,
            verified: endpoint.ssl_mode == SslMode::VerifyCa,
            pinned_key: endpoint.server_public_key_pem.clone(),
            host: endpoint.host.clone(),
        })
    }
}

/// The TLS client of a guarded link: `verify_ca` checks the chain against the user's CA
/// alone (the host name is not checked); `preferred` and `required` check nothing (the
/// handshake's signatures still are), which is why the guard counts them unverified.
/// `identity` is presented when the server asks for a client certificate.
fn tls_config(
    mode: SslMode,
    ca_pem: Option<&[u8]>,
    identity: Option<&doris_connection::ClientIdentity>,
) -> Result<rustls::ClientConfig, ReadError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| ReadError::Config(format!("TLS for the MySQL link: {e}")))?;
    let verifier: Arc<dyn ServerCertVerifier> = if mode == SslMode::VerifyCa {
        let pem = ca_pem.ok_or_else(|| {
            ReadError::Config(
                "ssl_mode verify_ca needs the CA that signed the server's certificate (ssl_ca): \
                 it checks the chain against that CA alone"
                    .into(),
            )
        })?;
        let mut roots = RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|_| {
                ReadError::Config("ssl_ca holds no readable PEM certificate".into())
            })?;
            roots.add(cert).map_err(|_| {
                ReadError::Config("ssl_ca holds a certificate rustls refuses".into())
            })?;
        }
        let chain =
            rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| ReadError::Config(format!("ssl_ca: {e}")))?;
        Arc::new(ChainOnly(chain))
    } else {
        Arc::new(Unverified(provider))
    };
    let builder = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    match identity {
        None => Ok(builder.with_no_client_auth()),
        Some(identity) => {
            let (certs, key) = identity
                .to_der()
                .map_err(|e| ReadError::Config(format!("the MySQL link's TLS: {e}")))?;
            builder.with_client_auth_cert(certs, key).map_err(|e| {
                ReadError::Config(format!(
                    "the MySQL link's TLS: the client certificate and key cannot be used \
                     together: {e}"
                ))
            })
        }
    }
}

/// Verifies the chain against the user's CA, not the name (`verify_ca`).
#[derive(Debug)]
struct ChainOnly(Arc<rustls::client::WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        // The chain is checked before the name: a name error means the chain verified.
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// Accepts any certificate (`preferred`, `required`: encrypted, not authenticated).
#[derive(Debug)]
struct Unverified(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// Either side of the relay's server link: plain TCP or TLS over it.
trait Wire: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Wire for T {}

fn refused(what: &str) -> ReadError {
    ReadError::Auth(format!(
        "{what}; over a link whose server is not verified that would hand the password to \
         whoever answers: connect with ssl_mode verify_ca or verify_identity, or pin the \
         server's public key"
    ))
}

/// Authenticates (within `wait`: a relay whose sqlx side gave up never lingers), then
/// copies.
async fn relay(
    client: tokio::net::UnixStream,
    port: u16,
    policy: Policy,
    wait: Duration,
) -> Result<(), ReadError> {
    let shown = format!("{}:{port}", policy.host);
    let (client, server) = tokio::time::timeout(wait, authenticate(client, port, policy))
        .await
        .map_err(|_| {
            ReadError::Timeout(format!(
                "connecting to {shown} took longer than {} s",
                wait.as_secs()
            ))
        })??;
    pipe(client, server).await
}

/// The connection phase, packet by packet, with the server at the policy's host and
/// `port`: returns both sides once the server's OK (or ERR) reached sqlx.
async fn authenticate(
    mut client: tokio::net::UnixStream,
    port: u16,
    policy: Policy,
) -> Result<(Box<dyn Wire>, Box<dyn Wire>), ReadError> {
    let host = policy.host.as_str();
    let transport = |e: io::Error| ReadError::Transport(format!("{host}:{port}: {e}"));
    let mut server = TcpStream::connect((host, port)).await.map_err(transport)?;
    server.set_nodelay(true).map_err(transport)?;

    // The greeting: read field by field and written to sqlx from the fields read, so sqlx
    // reads exactly what was judged. An error greeting (too many connections, a host not
    // allowed) goes to sqlx as it is, and the exchange ends there; anything else the guard
    // cannot read (another protocol, a malformed greeting) is refused, and nothing of
    // sqlx's goes to the server.
    let (seq, greeting) = read_packet(&mut server).await.map_err(transport)?;
    if greeting.first() == Some(&0xFF) {
        write_packet(&mut client, seq, &greeting)
            .await
            .map_err(transport)?;
        return Err(ReadError::Transport(format!(
            "the server at {host}:{port} refused the connection: {}",
            error_text(&greeting)
        )));
    }
    let Some(parsed) = Greeting::parse(&greeting) else {
        return Err(ReadError::Transport(format!(
            "the server at {host}:{port} sent a greeting that is not MySQL protocol 10 \
             (first byte 0x{:02x}); nothing was sent to it",
            greeting.first().copied().unwrap_or_default()
        )));
    };
    if let Some(plugin) = &parsed.plugin {
        check_plugin(plugin, policy.verified)?;
    }
    write_packet(&mut client, seq, &parsed.encode())
        .await
        .map_err(transport)?;

    // sqlx's handshake response (sqlx speaks plain TLS-less MySQL to the relay).
    let (seq, mut response) = read_packet(&mut client).await.map_err(transport)?;
    let use_tls = match policy.mode {
        SslMode::Disabled => false,
        SslMode::Preferred => parsed.capabilities & CLIENT_SSL != 0,
        _ => {
            if parsed.capabilities & CLIENT_SSL == 0 {
                return Err(ReadError::Transport(format!(
                    "the server at {host}:{port} offers no TLS, which ssl_mode {} requires",
                    policy.mode.name()
                )));
            }
            true
        }
    };
    let (mut server, offset): (Box<dyn Wire>, u8) = if use_tls && response.len() >= 32 {
        let flags =
            u32::from_le_bytes([response[0], response[1], response[2], response[3]]) | CLIENT_SSL;
        response[..4].copy_from_slice(&flags.to_le_bytes());
        write_packet(&mut server, seq, &response[..32])
            .await
            .map_err(transport)?;
        let name = ServerName::try_from(policy.host.clone()).map_err(|_| {
            ReadError::Config(format!("{} is not a valid TLS server name", policy.host))
        })?;
        let Some(config) = policy.tls.clone() else {
            return Err(ReadError::Config("no TLS settings for a TLS link".into()));
        };
        let connector = tokio_rustls::TlsConnector::from(config);
        let tls = connector
            .connect(name, server)
            .await
            .map_err(|e| ReadError::Transport(format!("TLS with {host}:{port} failed: {e}")))?;
        (Box::new(tls), 1)
    } else if use_tls {
        return Err(ReadError::Transport(
            "a malformed handshake response".into(),
        ));
    } else {
        (Box::new(server), 0)
    };
    write_packet(&mut server, seq.wrapping_add(offset), &response)
        .await
        .map_err(transport)?;

    // The exchange, one server packet at a time; each that expects an answer gets sqlx's.
    let mut awaiting_key = false;
    loop {
        let (seq, mut packet) = read_packet(&mut server).await.map_err(transport)?;
        let to_client = seq.wrapping_sub(offset);
        let answer_follows = match packet.first() {
            // OK or ERR: the exchange is over.
            None | Some(0x00) | Some(0xFF) => {
                write_packet(&mut client, to_client, &packet)
                    .await
                    .map_err(transport)?;
                break;
            }
            Some(0xFE) => {
                let plugin = c_string(&packet[1..]);
                check_plugin(&plugin, policy.verified)?;
                true
            }
            Some(0x01) if packet.len() == 2 && packet[1] == 0x03 => false,
            Some(0x01) if packet.len() == 2 && packet[1] == 0x04 => {
                if !policy.verified && policy.pinned_key.is_none() {
                    return Err(refused(
                        "the server asked for caching_sha2_password full authentication, which \
                         sends the password encrypted to a key the server supplies",
                    ));
                }
                awaiting_key = true;
                true
            }
            Some(0x01) if awaiting_key => {
                // The server's public key, answering sqlx's request: the pinned key
                // replaces it.
                if let Some(pinned) = &policy.pinned_key {
                    packet = std::iter::once(0x01)
                        .chain(pinned.iter().copied())
                        .collect();
                }
                awaiting_key = false;
                true
            }
            Some(_) if policy.verified => true,
            Some(kind) => {
                return Err(refused(&format!(
                    "the server sent an authentication packet 0x{kind:02x} the guard does not know"
                )));
            }
        };
        write_packet(&mut client, to_client, &packet)
            .await
            .map_err(transport)?;
        if answer_follows {
            let (seq, answer) = read_packet(&mut client).await.map_err(transport)?;
            write_packet(&mut server, seq.wrapping_add(offset), &answer)
                .await
                .map_err(transport)?;
        }
    }
    Ok((Box::new(client), server))
}

/// Copies both ways until either side closes; then both close.
async fn pipe(client: Box<dyn Wire>, server: Box<dyn Wire>) -> Result<(), ReadError> {
    let (client_read, mut client_write) = tokio::io::split(client);
    let (server_read, mut server_write) = tokio::io::split(server);
    let mut from_client = BufReader::with_capacity(64 * 1024, client_read);
    let mut from_server = BufReader::with_capacity(64 * 1024, server_read);
    tokio::select! {
        _ = tokio::io::copy_buf(&mut from_client, &mut server_write) => {}
        _ = tokio::io::copy_buf(&mut from_server, &mut client_write) => {}
    }
    Ok(())
}

fn check_plugin(plugin: &str, verified: bool) -> Result<(), ReadError> {
    if plugin.is_empty() || SAFE_PLUGINS.contains(&plugin) || verified {
        return Ok(());
    }
    Err(refused(&format!(
        "the server asks for the {} authentication plugin",
        if plugin.len() <= 64 && plugin.bytes().all(|b| b.is_ascii_graphic()) {
            plugin
        } else {
            "an unknown"
        }
    )))
}

/// An ERR packet's message, printable and at most 200 characters.
fn error_text(packet: &[u8]) -> String {
    let rest = packet.get(3..).unwrap_or_default();
    let rest = match rest.first() {
        Some(b'#') => rest.get(6..).unwrap_or_default(),
        _ => rest,
    };
    String::from_utf8_lossy(rest)
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect()
}

fn c_string(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

async fn read_packet<R: AsyncRead + Unpin + ?Sized>(r: &mut R) -> io::Result<(u8, Vec<u8>)> {
    let mut header = [0u8; 4];
    r.read_exact(&mut header).await?;
    let len = usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
    if len > MAX_AUTH_PACKET {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "an authentication packet over 64 KiB",
        ));
    }
    let mut payload = vec![0u8; len];
    r.read_exact(&mut payload).await?;
    Ok((header[3], payload))
}

async fn write_packet<W: AsyncWrite + Unpin + ?Sized>(
    w: &mut W,
    seq: u8,
    payload: &[u8],
) -> io::Result<()> {
    let len = payload.len() as u32;
    let mut framed = Vec::with_capacity(payload.len() + 4);
    framed.extend_from_slice(&len.to_le_bytes()[..3]);
    framed.push(seq);
    framed.extend_from_slice(payload);
    w.write_all(&framed).await?;
    w.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plugins_that_reveal_nothing_pass_an_unverified_link() {
        for safe in ["mysql_native_password", "caching_sha2_password", ""] {
            assert!(check_plugin(safe, false).is_ok());
        }
        for risky in ["mysql_clear_password", "sha256_password", "dialog"] {
            let e = check_plugin(risky, false).unwrap_err();
            assert!(
                matches!(e, ReadError::Auth(_)) && e.to_string().contains(risky),
                "{e}"
            );
            assert!(check_plugin(risky, true).is_ok());
        }
        let e = check_plugin("\u{1b}[31mred", false).unwrap_err();
        assert!(e.to_string().contains("an unknown"), "{e}");
    }

    /// Another process that reaches the socket first is closed unanswered; the relay serves
    /// this process's connection; the folder is the user's alone.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_relay_serves_only_its_own_process() {
        use std::os::unix::fs::PermissionsExt as _;
        let folder = private_folder().unwrap();
        let mode = std::fs::metadata(&folder).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let socket = folder.join("s");
        let listener = UnixListener::bind(&socket).unwrap();
        let accepted = tokio::spawn(async move { accept_own(&listener).await });
        let path = socket.clone();
        let other = tokio::task::spawn_blocking(move || {
            std::process::Command::new("python3")
                .args([
                    "-c",
                    "import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); \
                     print('closed' if s.recv(16) == b'' else 'served')",
                ])
                .arg(&path)
                .output()
        })
        .await
        .unwrap()
        .unwrap();
        assert_eq!(String::from_utf8_lossy(&other.stdout).trim(), "closed");
        let _ours = tokio::net::UnixStream::connect(&socket).await.unwrap();
        let served = accepted.await.unwrap().unwrap();
        let pid = served.peer_cred().unwrap().pid().unwrap();
        assert_eq!(pid, i32::try_from(std::process::id()).unwrap());
        std::fs::remove_dir_all(&folder).unwrap();
    }
}
