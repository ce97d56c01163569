//! One HTTP/1.1 PUT that honours `Expect: 100-continue`.
//!
//! hyper's client does not wait for `100 Continue` (hyperium/hyper#2565), and reqwest
//! cannot either, so this module drives hyper's connection-level client itself and holds
//! the body back: a [`Sniffer`] under the connection watches the first status line the
//! server sends. `HTTP/1.x 100` opens the gate and the body starts to stream; any other
//! status is the final answer, which arrives without a single body byte having been sent
//! (a 307 from the FE, or a BE refusing the label, the table or the credentials).
//!
//! Each exchange uses its own connection: a request whose body was never sent cannot be
//! followed by another one on the same connection.
//!
//! An exchange has three waits, each with its own limit ([`Waits`]): connecting (TCP and
//! TLS), the body's upload, which may take as long as it needs while the connection keeps
//! taking bytes, and the answer (to the headers, and after the last body byte).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Request, StatusCode, header};
use http_body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use url::Url;

use crate::config::host_port;

/// Bytes per body chunk handed to hyper.
pub(crate) const CHUNK_BYTES: usize = 256 * 1024;

/// A connection error, with whether any body byte had been handed over.
#[derive(Debug)]
pub(crate) struct WireError {
    /// Body bytes sent before the failure (0: the request certainly did not load).
    pub body_bytes_sent: u64,
    /// What happened (no secrets: URLs here carry no userinfo).
    pub detail: String,
}

/// The answer to one exchange.
#[derive(Debug)]
pub(crate) struct Exchange {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// Body bytes handed to the connection.
    pub body_bytes_sent: u64,
}

/// Writes body chunks from a blocking encoder into the request.
pub(crate) struct ChunkSink {
    tx: mpsc::Sender<Bytes>,
    buf: Vec<u8>,
    disconnected: Arc<std::sync::atomic::AtomicBool>,
    /// Body bytes handed to the request (taken by the connection or waiting for it).
    offered: Arc<AtomicU64>,
}

impl ChunkSink {
    fn new(
        tx: mpsc::Sender<Bytes>,
        disconnected: Arc<std::sync::atomic::AtomicBool>,
        offered: Arc<AtomicU64>,
    ) -> Self {
        Self {
            tx,
            buf: Vec::with_capacity(CHUNK_BYTES),
            disconnected,
            offered,
        }
    }

    fn send_buffered(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::replace(
            &mut self.buf,
            Vec::with_capacity(CHUNK_BYTES),
        ));
        self.offered
            .fetch_add(chunk.len() as u64, Ordering::Relaxed);
        self.tx.blocking_send(chunk).map_err(|_| {
            self.disconnected.store(true, Ordering::Release);
            io::Error::new(io::ErrorKind::BrokenPipe, "the connection is gone")
        })
    }

    /// Sends what is buffered; the body ends when the sink is dropped.
    pub(crate) fn finish(mut self) -> io::Result<()> {
        self.send_buffered()
    }
}

impl io::Write for ChunkSink {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CHUNK_BYTES {
            self.send_buffered()?;
        }
        Ok(data.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Produces the body once the server asked for it; runs on a blocking thread.
pub(crate) type Producer<T> = Box<dyn FnOnce(ChunkSink) -> Result<T, String> + Send>;

/// What to send after the headers.
pub(crate) enum BodyPlan<T> {
    /// Announce a chunked body but never send it: for the FE, which answers 307 without
    /// reading. A `100 Continue` from it is an error (it wanted the body).
    Withhold,
    /// Stream what the producer writes, once `100 Continue` arrives.
    Stream(Producer<T>),
}

/// The limits of an exchange's waits (connecting has its own, [`Connector`]'s).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Waits {
    /// The longest wait for the server: for its answer to the headers (`100 Continue` or
    /// a final status) and, once the body is sent, for its final answer.
    pub answer: Duration,
    /// The longest the body may go without the connection taking a byte of it.
    pub upload_stall: Duration,
}

impl Waits {
    /// The same limit for every wait (requests without a body).
    pub(crate) fn answer_only(answer: Duration) -> Self {
        Self {
            answer,
            upload_stall: answer,
        }
    }
}

/// Where an exchange is, for its waits: the client waits for the server before the body
/// (`AWAITING`), the connection takes the body (`UPLOADING`), or the body is sent and the
/// client waits for the answer (`BODY_SENT`).
/// The `User-Agent` of every request the client sends (Doris's audit log shows it).
pub const USER_AGENT: &str = concat!("doris-streamload/", env!("CARGO_PKG_VERSION"));

const AWAITING: u8 = 0;
const UPLOADING: u8 = 1;
const BODY_SENT: u8 = 2;

/// The request body: chunks from the producer, counted as hyper takes them.
struct ChannelBody {
    rx: mpsc::Receiver<Bytes>,
    sent: Arc<AtomicU64>,
    failed: Arc<std::sync::atomic::AtomicBool>,
    phase: Arc<AtomicU8>,
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(chunk)) => {
                self.sent.fetch_add(chunk.len() as u64, Ordering::Relaxed);
                Poll::Ready(Some(Ok(Frame::data(chunk))))
            }
            Poll::Ready(None) if self.failed.load(Ordering::Acquire) => Poll::Ready(Some(Err(
                io::Error::other("the body could not be produced"),
            ))),
            Poll::Ready(None) => {
                self.phase.store(BODY_SENT, Ordering::Release);
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

/// Watches the first status line the server sends; `100` opens the body gate.
struct Sniffer<S> {
    inner: S,
    head: Vec<u8>,
    gate: Option<oneshot::Sender<()>>,
    received: Arc<AtomicU64>,
    /// Bytes the connection took (request head, body and its framing): the upload's
    /// progress as the server's reading lets it go on.
    written: Arc<AtomicU64>,
}

impl<S> Sniffer<S> {
    fn observe(&mut self, data: &[u8]) {
        self.received
            .fetch_add(data.len() as u64, Ordering::Relaxed);
        if self.gate.is_none() {
            return;
        }
        let want = 12usize.saturating_sub(self.head.len());
        self.head.extend_from_slice(&data[..want.min(data.len())]);
        if self.head.len() >= 12 {
            let gate = self.gate.take();
            if self.head.starts_with(b"HTTP/1.")
                && &self.head[9..12] == b"100"
                && let Some(g) = gate
            {
                let _ = g.send(());
            }
            // Any other status is the final answer: dropping the gate withholds the body.
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Sniffer<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = poll {
            let new = buf.filled()[before..].to_vec();
            self.observe(&new);
        }
        poll
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Sniffer<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = poll {
            self.written.fetch_add(n as u64, Ordering::Relaxed);
        }
        poll
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(n)) = poll {
            self.written.fetch_add(n as u64, Ordering::Relaxed);
        }
        poll
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// Plain TCP or TLS.
enum Stream {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_flush(cx),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// Connection settings shared by every exchange.
#[derive(Clone)]
pub(crate) struct Connector {
    pub tls: Arc<rustls::ClientConfig>,
    pub connect_timeout: Duration,
}

impl Connector {
    async fn connect(&self, url: &Url) -> Result<Stream, String> {
        let (host, port) = host_port(url).ok_or_else(|| format!("{url} has no host"))?;
        let tcp = tokio::time::timeout(self.connect_timeout, TcpStream::connect((&*host, port)))
            .await
            .map_err(|_| format!("connecting to {host}:{port} timed out"))?
            .map_err(|e| format!("cannot connect to {host}:{port}: {e}"))?;
        let _ = tcp.set_nodelay(true);
        if url.scheme() != "https" {
            return Ok(Stream::Plain(tcp));
        }
        let name = rustls_pki_types::ServerName::try_from(host.clone())
            .map_err(|_| format!("{host} is not a valid TLS server name"))?;
        let tls = tokio_rustls::TlsConnector::from(self.tls.clone());
        let stream = tokio::time::timeout(self.connect_timeout, tls.connect(name, tcp))
            .await
            .map_err(|_| format!("TLS handshake with {host}:{port} timed out"))?
            .map_err(|e| format!("TLS handshake with {host}:{port} failed: {e}"))?;
        Ok(Stream::Tls(Box::new(stream)))
    }

    /// PUTs to `url` with `headers` plus `Expect: 100-continue` and a chunked body that
    /// follows only a `100 Continue`. Returns the answer and the producer's result (None
    /// when the body was never asked for). `waits` bounds the waits for the server and
    /// the body's stalls, never the upload as a whole.
    pub(crate) async fn put<T: Send + 'static>(
        &self,
        url: &Url,
        mut headers: HeaderMap,
        plan: BodyPlan<T>,
        waits: Waits,
        received: Option<Arc<AtomicU64>>,
    ) -> Result<(Exchange, Option<Result<T, String>>), WireError> {
        let sent = Arc::new(AtomicU64::new(0));
        let offered = Arc::new(AtomicU64::new(0));
        let written = Arc::new(AtomicU64::new(0));
        let phase = Arc::new(AtomicU8::new(AWAITING));
        let failed = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let disconnected = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let fail = |detail: String, sent: &Arc<AtomicU64>| WireError {
            body_bytes_sent: sent.load(Ordering::Relaxed),
            detail,
        };
        let work = async {
            let stream = self.connect(url).await.map_err(|d| fail(d, &sent))?;
            let (gate_tx, gate_rx) = oneshot::channel();
            let sniffer = Sniffer {
                inner: stream,
                head: Vec::with_capacity(12),
                gate: Some(gate_tx),
                received: received.unwrap_or_default(),
                written: written.clone(),
            };
            let (mut sender, connection) =
                hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(sniffer))
                    .await
                    .map_err(|e| fail(format!("HTTP handshake failed: {e}"), &sent))?;
            let driver = tokio::spawn(connection);
            let (tx, rx) = mpsc::channel::<Bytes>(4);
            let body = ChannelBody {
                rx,
                sent: sent.clone(),
                failed: failed.clone(),
                phase: phase.clone(),
            };
            let authority = match (url.host_str(), url.port()) {
                (Some(h), Some(p)) => format!("{h}:{p}"),
                (Some(h), None) => h.to_owned(),
                _ => String::new(),
            };
            headers.insert(header::EXPECT, HeaderValue::from_static("100-continue"));
            headers.insert(header::USER_AGENT, HeaderValue::from_static(USER_AGENT));
            headers.insert(
                header::HOST,
                HeaderValue::from_str(&authority).map_err(|_| fail("bad host".into(), &sent))?,
            );
            let path = match url.query() {
                Some(q) => format!("{}?{q}", url.path()),
                None => url.path().to_owned(),
            };
            let mut request = Request::put(path)
                .body(body)
                .map_err(|e| fail(format!("cannot build the request: {e}"), &sent))?;
            *request.headers_mut() = headers;
            let failed_flag = failed.clone();
            let sink_disconnected = disconnected.clone();
            let upload_phase = phase.clone();
            let sink_offered = offered.clone();
            let producer = tokio::spawn(async move {
                // The gate opens on `100 Continue`; a final answer drops it.
                if gate_rx.await.is_err() {
                    return None;
                }
                // Unless the body already ended (an empty one).
                let _ = upload_phase.compare_exchange(
                    AWAITING,
                    UPLOADING,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                );
                match plan {
                    BodyPlan::Withhold => Some(Err(
                        "the server asked for the body (100 Continue) where a redirect was expected"
                            .to_owned(),
                    )),
                    BodyPlan::Stream(produce) => {
                        let result = tokio::task::spawn_blocking(move || {
                            let sink = ChunkSink::new(tx, sink_disconnected, sink_offered);
                            produce(sink)
                        })
                        .await
                        .unwrap_or_else(|e| Err(format!("the encoder panicked: {e}")));
                        if result.is_err() {
                            failed_flag.store(true, Ordering::Release);
                        }
                        Some(result)
                    }
                }
            });
            let response = sender.send_request(request).await;
            let response = match response {
                Ok(r) => r,
                Err(e) => {
                    let produced = producer.await.ok().flatten();
                    driver.abort();
                    if let Some(Err(encode)) = produced
                        && !disconnected.load(Ordering::Acquire)
                    {
                        return Err(fail(format!("body encoding failed: {encode}"), &sent));
                    }
                    return Err(fail(format!("connection failed: {e}"), &sent));
                }
            };
            let (parts, incoming) = response.into_parts();
            let body = read_capped(incoming, crate::response::MAX_ANSWER_BYTES)
                .await
                .map_err(|d| fail(d, &sent))?;
            // A final answer before the body leaves the producer waiting on a dropped
            // gate; it returns None at once.
            let produced = producer.await.ok().flatten();
            driver.abort();
            Ok((
                Exchange {
                    status: parts.status,
                    headers: parts.headers,
                    body,
                    body_bytes_sent: sent.load(Ordering::Relaxed),
                },
                produced,
            ))
        };
        let progress = Progress {
            phase: &phase,
            taken: &sent,
            offered: &offered,
            written: &written,
        };
        watch(work, waits, progress)
            .await
            .unwrap_or_else(|detail| Err(fail(detail, &sent)))
    }
}

/// How far an exchange got, as [`watch`] observes it.
struct Progress<'a> {
    phase: &'a AtomicU8,
    /// Body bytes hyper took from the producer.
    taken: &'a AtomicU64,
    /// Body bytes the producer handed over.
    offered: &'a AtomicU64,
    /// Bytes the connection took.
    written: &'a AtomicU64,
}

impl Progress<'_> {
    /// The phase, the bytes written, and whether the upload waits on the client itself
    /// (every body byte offered was taken: a slow encoder, not a stalled server).
    fn observe(&self) -> (u8, u64, bool) {
        let phase = self.phase.load(Ordering::Acquire);
        let idle = phase == UPLOADING
            && self.offered.load(Ordering::Relaxed) <= self.taken.load(Ordering::Relaxed);
        (phase, self.written.load(Ordering::Relaxed), idle)
    }
}

/// Runs `work` while its waits stay within `waits`: the server must take a byte of the
/// body at least every `waits.upload_stall` while bytes wait for it, and answer within
/// `waits.answer` of the request (before the body) or of the last byte the connection
/// took (after it: the last bytes may still sit in socket buffers). `Err` names the wait
/// that ran out.
async fn watch<F: std::future::Future>(
    work: F,
    waits: Waits,
    progress: Progress<'_>,
) -> Result<F::Output, String> {
    let mut work = std::pin::pin!(work);
    let mut seen = progress.observe();
    let mut since = tokio::time::Instant::now();
    loop {
        let limit = if seen.0 == UPLOADING {
            waits.upload_stall
        } else {
            waits.answer
        };
        // Checked a few times per limit: a stall is seen at most a quarter late.
        let check = (limit / 4).clamp(Duration::from_millis(5), Duration::from_secs(1));
        tokio::select! {
            output = &mut work => return Ok(output),
            () = tokio::time::sleep(check) => {}
        }
        let now = progress.observe();
        if now != seen || now.2 {
            (seen, since) = (now, tokio::time::Instant::now());
        } else if since.elapsed() >= limit {
            return Err(match seen.0 {
                UPLOADING => format!(
                    "the upload made no progress for {} (the server stopped reading the body)",
                    seconds(limit)
                ),
                BODY_SENT => format!("no answer within {} of the last body byte", seconds(limit)),
                _ => format!("no answer within {}", seconds(limit)),
            });
        }
    }
}

/// `d` for a message: whole seconds, or milliseconds under a second.
fn seconds(d: Duration) -> String {
    if d >= Duration::from_secs(1) {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// Reads a response body, refusing more than `cap` bytes.
pub(crate) async fn read_capped(
    mut body: hyper::body::Incoming,
    cap: usize,
) -> Result<Bytes, String> {
    let mut out = Vec::new();
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.map_err(|e| format!("the answer was cut off: {e}"))?;
        if let Ok(data) = frame.into_data() {
            if out.len() + data.len() > cap {
                return Err(format!("the answer is larger than {cap} bytes"));
            }
            out.extend_from_slice(&data);
        }
    }
    Ok(Bytes::from(out))
}

/// A rustls configuration: web PKI roots plus `extra_pem`, ring as the crypto provider,
/// and `identity` presented to a server that asks for a client certificate.
pub(crate) fn tls_config(
    extra_pem: Option<&[u8]>,
    identity: Option<&doris_connection::ClientIdentity>,
) -> Result<rustls::ClientConfig, String> {
    use rustls_pki_types::pem::PemObject as _;
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(pem) = extra_pem {
        let mut added = 0;
        for cert in rustls_pki_types::CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| format!("the CA bundle is not valid PEM: {e}"))?;
            roots
                .add(cert)
                .map_err(|e| format!("the CA bundle holds an unusable certificate: {e}"))?;
            added += 1;
        }
        if added == 0 {
            return Err("the CA bundle holds no certificate".into());
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots);
    let Some(identity) = identity else {
        return Ok(builder.with_no_client_auth());
    };
    let (certs, key) = identity.to_der().map_err(|e| e.to_string())?;
    builder
        .with_client_auth_cert(certs, key)
        .map_err(|e| format!("the client certificate and key cannot be used together: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffer_opens_the_gate_only_on_100() {
        let (tx, mut rx) = oneshot::channel();
        let mut s = Sniffer {
            inner: (),
            head: Vec::new(),
            gate: Some(tx),
            received: Arc::default(),
            written: Arc::default(),
        };
        s.observe(b"HTTP/1.1 1");
        assert!(rx.try_recv().is_err());
        s.observe(b"00 Continue\r\n\r\nHTTP/1.1 200 OK");
        assert!(rx.try_recv().is_ok());

        let (tx, mut rx) = oneshot::channel::<()>();
        let mut s = Sniffer {
            inner: (),
            head: Vec::new(),
            gate: Some(tx),
            received: Arc::default(),
            written: Arc::default(),
        };
        s.observe(b"HTTP/1.1 307 Temporary Redirect\r\n");
        assert!(matches!(
            rx.try_recv(),
            Err(oneshot::error::TryRecvError::Closed)
        ));
    }

    #[test]
    fn ca_bundle_must_hold_certificates() {
        assert!(tls_config(None, None).is_ok());
        assert!(tls_config(Some(b"not pem"), None).is_err());
        let no_cert = doris_connection::ClientIdentity::from_pem("", "k-secret-1");
        let e = tls_config(None, Some(&no_cert)).unwrap_err();
        assert!(!e.contains("k-secret-1"), "{e}");
        let bad_key = doris_connection::ClientIdentity::from_pem(
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
            "k-secret-2",
        );
        let e = tls_config(None, Some(&bad_key)).unwrap_err();
        assert!(!e.contains("k-secret-2"), "{e}");
    }
}
