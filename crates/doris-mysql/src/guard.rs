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
//! Anything else closes both sides and the connect fails with [`MySqlError::Auth`] naming
//! what the server asked for. The exchange is a state machine (module `exchange`): each
//! state names the packets the server may send and the answer the client may give, so an
//! OK ends the exchange only where an OK may come, a key is only ever the pinned one, and
//! anything a state does not allow is refused before it reaches the other side. `verify_ca` here checks the certificate chain against the
//! user's CA alone (not the web PKI roots: any public certificate for any name would
//! pass a check that skips the host name); `verify_identity` checks the chain against the
//! web PKI roots and the user's CA, and the host name (whatever the server asks for then
//! goes to the server the user named). A link without a password has nothing to reveal:
//! any plugin may be asked for.
//!
//! After the server's OK the relay copies bytes both ways until either side closes, and
//! counts the server's packets as it copies: a packet larger than the link's cap
//! ([`MySqlEndpoint::max_packet_bytes`], MySQL's `max_allowed_packet`) cuts the link
//! before its payload reaches sqlx, which would otherwise join the parts of a multi-part
//! packet without limit (a hostile server's one row could exhaust a worker's memory). The
//! cut's reason is kept ([`CutReason`]) for the error the caller sees.
//!
//! Every link goes through the guard.

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

use crate::connect::MySqlEndpoint;
use crate::error::MySqlError;
use crate::greeting::{CLIENT_SSL, Greeting};

mod exchange;

use exchange::{Exchange, Relay, check_plugin};

/// The largest packet the authentication exchange may hold (a greeting, a switch, an RSA
/// key): anything larger is not authentication.
const MAX_AUTH_PACKET: usize = 64 * 1024;

/// Why the relay cut an established link, kept for the error of the statement that lost
/// it (sqlx itself only sees the link close).
#[derive(Debug, Clone, Default)]
pub struct CutReason(Arc<Mutex<Option<String>>>);

impl CutReason {
    fn set(&self, why: String) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
    }

    /// `e`, or the relay's reason when it cut the link (the reason is kept before the link
    /// closes, so sqlx never sees the close first).
    pub fn explain(&self, e: sqlx::Error) -> MySqlError {
        match self.0.lock().unwrap_or_else(|p| p.into_inner()).clone() {
            Some(why) => MySqlError::Transport(why),
            None => MySqlError::from_sqlx(e),
        }
    }
}

/// A relay started for one connection: sqlx connects to its Unix socket, `socket`, in a
/// folder only this user may enter, and the relay serves the first connection that comes
/// from this very process (its peer credentials name this process id), so no other local
/// process, of this user or another, can take the client's place.
pub(crate) struct Guard {
    /// The Unix socket the relay accepts one connection on.
    pub(crate) socket: std::path::PathBuf,
    refusal: Arc<Mutex<Option<MySqlError>>>,
    /// Why the relay cut the link once established.
    pub(crate) cut: CutReason,
    task: tokio::task::JoinHandle<()>,
}

impl Guard {
    /// Binds the socket and starts the relay, which accepts one connection of this process
    /// (within the connect timeout) and serves it until either side closes.
    pub(crate) async fn start(endpoint: &MySqlEndpoint) -> Result<Self, MySqlError> {
        let policy = Policy::of(endpoint)?;
        let bind_error =
            |e: io::Error| MySqlError::Transport(format!("the MySQL guard could not bind: {e}"));
        let folder = private_folder().map_err(bind_error)?;
        let socket = folder.join("s");
        let listener = UnixListener::bind(&socket).map_err(bind_error)?;
        let refusal = Arc::new(Mutex::new(None));
        let slot = refusal.clone();
        let cut = CutReason::default();
        let cut_slot = cut.clone();
        let upstream_port = endpoint.port;
        let wait = endpoint.connect_timeout;
        let task = tokio::spawn(async move {
            let accepted = tokio::time::timeout(wait, accept_own(&listener)).await;
            drop(listener);
            let _ = std::fs::remove_dir_all(&folder);
            let Ok(Some(client)) = accepted else {
                return;
            };
            if let Err(e) = relay(client, upstream_port, policy, wait, &cut_slot).await {
                *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
            }
        });
        Ok(Self {
            socket,
            refusal,
            cut,
            task,
        })
    }

    /// After sqlx failed to connect through the relay: why the relay closed the link, if it
    /// refused it or failed on the server's side (waits for the relay to end, so its reason
    /// is never missed; it ends as soon as sqlx's side is gone).
    pub(crate) async fn refusal(self, wait: Duration) -> Option<MySqlError> {
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
    /// The server is authenticated (TLS verified against the user's CA, or the web PKI and
    /// the host name), or the link carries no password: whatever the server asks for may
    /// proceed.
    verified: bool,
    pinned_key: Option<Vec<u8>>,
    /// The server's host: where the relay connects, and the TLS server name.
    host: String,
    /// The largest packet the server may send once authenticated.
    max_packet: usize,
}

impl Policy {
    fn of(endpoint: &MySqlEndpoint) -> Result<Self, MySqlError> {
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
            return Err(MySqlError::Config(
                "server_public_key must be a PEM public key (-----BEGIN PUBLIC KEY-----)".into(),
            ));
        }
        Ok(Self {
            mode: endpoint.ssl_mode,
            tls,
            verified: matches!(
                endpoint.ssl_mode,
                SslMode::VerifyCa | SslMode::VerifyIdentity
            ) || !endpoint.credentials.has_password(),
            pinned_key: endpoint.server_public_key_pem.clone(),
            host: endpoint.host.clone(),
            max_packet: endpoint.max_packet_bytes,
        })
    }
}

/// The TLS client of a guarded link: `verify_ca` checks the chain against the user's CA
/// alone (the host name is not checked); `verify_identity` the chain against the web PKI
/// roots and the user's CA, and the host name; `preferred` and `required` check nothing
/// (the handshake's signatures still are), which is why the guard counts them unverified.
/// `identity` is presented when the server asks for a client certificate.
fn tls_config(
    mode: SslMode,
    ca_pem: Option<&[u8]>,
    identity: Option<&doris_connection::ClientIdentity>,
) -> Result<rustls::ClientConfig, MySqlError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| MySqlError::Config(format!("TLS for the MySQL link: {e}")))?;
    let verifier: Arc<dyn ServerCertVerifier> = if mode == SslMode::VerifyIdentity {
        let mut roots = RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        if let Some(pem) = ca_pem {
            add_pem_roots(&mut roots, pem)?;
        }
        rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .map_err(|e| MySqlError::Config(format!("ssl_ca: {e}")))?
    } else if mode == SslMode::VerifyCa {
        let pem = ca_pem.ok_or_else(|| {
            MySqlError::Config(
                "ssl_mode verify_ca needs the CA that signed the server's certificate (ssl_ca): \
                 it checks the chain against that CA alone"
                    .into(),
            )
        })?;
        let mut roots = RootCertStore::empty();
        add_pem_roots(&mut roots, pem)?;
        let chain =
            rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| MySqlError::Config(format!("ssl_ca: {e}")))?;
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
                .map_err(|e| MySqlError::Config(format!("the MySQL link's TLS: {e}")))?;
            builder.with_client_auth_cert(certs, key).map_err(|e| {
                MySqlError::Config(format!(
                    "the MySQL link's TLS: the client certificate and key cannot be used \
                     together: {e}"
                ))
            })
        }
    }
}

/// Adds the certificates of the user's `ssl_ca` (PEM) to `roots`.
fn add_pem_roots(roots: &mut RootCertStore, pem: &[u8]) -> Result<(), MySqlError> {
    for cert in CertificateDer::pem_slice_iter(pem) {
        let cert = cert
            .map_err(|_| MySqlError::Config("ssl_ca holds no readable PEM certificate".into()))?;
        roots
            .add(cert)
            .map_err(|_| MySqlError::Config("ssl_ca holds a certificate rustls refuses".into()))?;
    }
    Ok(())
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

/// Authenticates (within `wait`: a relay whose sqlx side gave up never lingers), then
/// copies, cutting the link at the first server packet over the policy's cap (its reason
/// kept in `cut` before the link closes).
async fn relay(
    client: tokio::net::UnixStream,
    port: u16,
    policy: Policy,
    wait: Duration,
    cut: &CutReason,
) -> Result<(), MySqlError> {
    let shown = format!("{}:{port}", policy.host);
    let max_packet = policy.max_packet;
    let (client, server) = tokio::time::timeout(wait, authenticate(client, port, policy))
        .await
        .map_err(|_| {
            MySqlError::Timeout(format!(
                "connecting to {shown} took longer than {} s",
                wait.as_secs()
            ))
        })??;
    pipe(client, server, max_packet, cut).await
}

/// The connection phase, packet by packet, with the server at the policy's host and
/// `port`: returns both sides once the server's OK (or ERR) reached sqlx.
async fn authenticate(
    mut client: tokio::net::UnixStream,
    port: u16,
    policy: Policy,
) -> Result<(Box<dyn Wire>, Box<dyn Wire>), MySqlError> {
    let host = policy.host.as_str();
    let transport = |e: io::Error| MySqlError::Transport(format!("{host}:{port}: {e}"));
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
        return Err(MySqlError::Transport(format!(
            "the server at {host}:{port} refused the connection: {}",
            error_text(&greeting)
        )));
    }
    let Some(parsed) = Greeting::parse(&greeting) else {
        return Err(MySqlError::Transport(format!(
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
                return Err(MySqlError::Transport(format!(
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
            MySqlError::Config(format!("{} is not a valid TLS server name", policy.host))
        })?;
        let Some(config) = policy.tls.clone() else {
            return Err(MySqlError::Config("no TLS settings for a TLS link".into()));
        };
        let connector = tokio_rustls::TlsConnector::from(config);
        let tls = connector
            .connect(name, server)
            .await
            .map_err(|e| MySqlError::Transport(format!("TLS with {host}:{port} failed: {e}")))?;
        (Box::new(tls), 1)
    } else if use_tls {
        return Err(MySqlError::Transport(
            "a malformed handshake response".into(),
        ));
    } else {
        (Box::new(server), 0)
    };
    write_packet(&mut server, seq.wrapping_add(offset), &response)
        .await
        .map_err(transport)?;

    // The exchange, one server packet at a time, each judged by the state machine
    // (`exchange`) before any of it reaches sqlx; each answer sqlx owes is judged before
    // it reaches the server.
    let mut exchange = Exchange::new(
        parsed.plugin.as_deref(),
        policy.verified,
        policy.pinned_key.clone(),
        seq.wrapping_add(offset),
    );
    loop {
        let (seq, packet) = read_packet(&mut server).await.map_err(transport)?;
        let to_client = seq.wrapping_sub(offset);
        let (packet, answer_due, last) = match exchange.server(seq, packet)? {
            Relay::Finish(packet) => (packet, false, true),
            Relay::Pass(packet) => (packet, false, false),
            Relay::AskClient(packet) => (packet, true, false),
        };
        write_packet(&mut client, to_client, &packet)
            .await
            .map_err(transport)?;
        if last {
            break;
        }
        if answer_due {
            let (seq, answer) = read_packet(&mut client).await.map_err(transport)?;
            let to_server = seq.wrapping_add(offset);
            exchange.client(to_server, &answer)?;
            write_packet(&mut server, to_server, &answer)
                .await
                .map_err(transport)?;
        }
    }
    Ok((Box::new(client), server))
}

/// Copies both ways until either side closes or the server sends a packet over
/// `max_packet`; then both close (after the reason is kept in `cut`).
async fn pipe(
    client: Box<dyn Wire>,
    server: Box<dyn Wire>,
    max_packet: usize,
    cut: &CutReason,
) -> Result<(), MySqlError> {
    let (client_read, mut client_write) = tokio::io::split(client);
    let (mut server_read, mut server_write) = tokio::io::split(server);
    let mut from_client = BufReader::with_capacity(64 * 1024, client_read);
    tokio::select! {
        _ = tokio::io::copy_buf(&mut from_client, &mut server_write) => {}
        copied = copy_packets(&mut server_read, &mut client_write, max_packet) => {
            if let Err(PacketsEnd::OverCap(size)) = copied {
                cut.set(format!(
                    "the server sent a MySQL packet of at least {size} bytes, over the link's \
                     cap of {max_packet} (max_allowed_packet); the link was closed before it \
                     was read"
                ));
            }
        }
    }
    Ok(())
}

/// How copying the server's packets ended early.
#[derive(Debug, PartialEq, Eq)]
enum PacketsEnd {
    /// A side closed or failed.
    Closed,
    /// A packet (its parts joined) was announced at this many bytes, over the cap.
    OverCap(usize),
}

/// Copies the server's bytes to sqlx as they come, checking each packet's announced size
/// against `max_packet` before any of a packet over it is passed on.
async fn copy_packets<R, W>(from: &mut R, to: &mut W, max_packet: usize) -> Result<(), PacketsEnd>
where
    R: AsyncRead + Unpin + ?Sized,
    W: AsyncWrite + Unpin + ?Sized,
{
    let mut sizes = PacketSizes::new(max_packet);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = from.read(&mut buf).await.map_err(|_| PacketsEnd::Closed)?;
        if n == 0 {
            return Ok(());
        }
        let allowed = sizes.feed(&buf[..n]);
        to.write_all(&buf[..allowed])
            .await
            .map_err(|_| PacketsEnd::Closed)?;
        if allowed < n {
            return Err(PacketsEnd::OverCap(sizes.announced));
        }
    }
}

/// The MySQL packet framing of a byte stream, followed across reads: each part is a 3-byte
/// little-endian length and a sequence byte, then the payload; a part of the largest length
/// (`0xFFFFFF`) continues in the next, and the parts of one packet count together.
#[derive(Debug)]
struct PacketSizes {
    cap: usize,
    header: [u8; 4],
    header_len: usize,
    /// Payload bytes of the current part not yet seen.
    remaining: usize,
    /// The size of the packet so far, its parts joined.
    announced: usize,
    /// The last part had the largest length: the next part belongs to the same packet.
    continues: bool,
}

/// The length of a part that another part follows.
const FULL_PART: usize = 0xFF_FFFF;

impl PacketSizes {
    fn new(cap: usize) -> Self {
        Self {
            cap,
            header: [0; 4],
            header_len: 0,
            remaining: 0,
            announced: 0,
            continues: false,
        }
    }

    /// Follows `bytes`; returns how many of them may pass: all, or those before the header
    /// of the part that takes a packet over the cap (then `announced` is its size).
    fn feed(&mut self, bytes: &[u8]) -> usize {
        let mut at = 0;
        while at < bytes.len() {
            if self.remaining > 0 {
                let take = self.remaining.min(bytes.len() - at);
                self.remaining -= take;
                at += take;
                continue;
            }
            self.header[self.header_len] = bytes[at];
            self.header_len += 1;
            at += 1;
            if self.header_len < 4 {
                continue;
            }
            self.header_len = 0;
            let part = usize::from(self.header[0])
                | usize::from(self.header[1]) << 8
                | usize::from(self.header[2]) << 16;
            self.announced = if self.continues {
                self.announced.saturating_add(part)
            } else {
                part
            };
            self.continues = part == FULL_PART;
            if self.announced > self.cap {
                // The header's bytes read in an earlier call already passed.
                return at.saturating_sub(4);
            }
            self.remaining = part;
        }
        at
    }
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

    /// Packets framed as MySQL frames them: `sizes` in parts, each part's header then its
    /// payload; returns the stream and where the first packet over `cap` starts its
    /// offending part (or the stream's length).
    fn framed(sizes: &[usize], cap: usize) -> (Vec<u8>, usize) {
        let mut out = Vec::new();
        let mut cut = None;
        for &size in sizes {
            let mut rest = size;
            let mut joined = 0;
            loop {
                let part = rest.min(FULL_PART);
                joined += part;
                if joined > cap && cut.is_none() {
                    cut = Some(out.len());
                }
                out.extend_from_slice(&(part as u32).to_le_bytes()[..3]);
                out.push(0);
                out.resize(out.len() + part, b'x');
                rest -= part;
                if part < FULL_PART {
                    break;
                }
            }
        }
        let len = out.len();
        (out, cut.unwrap_or(len))
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
        /// However the stream is cut into reads, every byte before the part that takes a
        /// packet over the cap passes and none after it.
        #[test]
        fn packet_sizes_stop_at_the_first_part_over_the_cap(
            sizes in proptest::collection::vec(
                proptest::prop_oneof![0usize..300, proptest::prelude::Just(FULL_PART), proptest::prelude::Just(FULL_PART + 7)],
                1..5,
            ),
            cap in proptest::prop_oneof![0usize..400, proptest::prelude::Just(FULL_PART), proptest::prelude::Just(2 * FULL_PART)],
            reads in proptest::collection::vec(1usize..70_000, 1..40),
        ) {
            let (stream, expected) = framed(&sizes, cap);
            let mut sizes_seen = PacketSizes::new(cap);
            let mut passed = 0;
            let mut at = 0;
            let mut reads = reads.into_iter().cycle();
            while at < stream.len() {
                let n = reads.next().unwrap_or(1).min(stream.len() - at);
                let allowed = sizes_seen.feed(&stream[at..at + n]);
                passed += allowed;
                at += n;
                if allowed < n {
                    break;
                }
            }
            // A header split across reads lets its first bytes through; nothing of its
            // payload.
            proptest::prop_assert!(
                passed <= expected && expected - passed <= 3,
                "passed {passed}, expected {expected}"
            );
            if expected == stream.len() {
                proptest::prop_assert_eq!(passed, stream.len());
            }
        }
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
