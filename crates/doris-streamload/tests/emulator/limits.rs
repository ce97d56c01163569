//! Caps on answers and what an error may carry.

use crate::common::*;

/// A one-shot HTTP server on loopback that answers every request with `body_len` bytes of
/// `{` padding (declared in Content-Length, streamed in pieces); returns its address.
async fn oversized_server(body_len: usize, requests: usize) -> std::net::SocketAddr {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        for _ in 0..requests {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let mut head = [0u8; 4096];
            let _ = socket.read(&mut head).await;
            let header = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {body_len}\r\n\r\n"
            );
            if socket.write_all(header.as_bytes()).await.is_err() {
                continue;
            }
            let piece = vec![b' '; 64 * 1024];
            let mut sent = 0;
            while sent < body_len {
                let n = piece.len().min(body_len - sent);
                if socket.write_all(&piece[..n]).await.is_err() {
                    break;
                }
                sent += n;
            }
        }
    });
    addr
}

#[tokio::test]
async fn an_oversized_backends_answer_is_refused_not_buffered() {
    let addr = oversized_server(64 << 20, 4).await;
    let config = ClientConfig::new(
        format!("http://{addr}").parse().unwrap(),
        Credentials::new("root", ""),
    );
    let client = StreamLoadClient::new(config).unwrap();
    let e = client.backends().await.unwrap_err();
    assert!(matches!(e, StreamLoadError::Malformed(_)), "{e}");
    assert!(
        e.to_string().contains("/api/backends") && e.to_string().contains("cap"),
        "{e}"
    );
}

#[tokio::test]
async fn an_oversized_two_phase_answer_is_refused() {
    let addr = oversized_server(8 << 20, 8).await;
    let mut config = ClientConfig::new(
        format!("http://{addr}").parse().unwrap(),
        Credentials::new("root", ""),
    );
    config.retry.max_attempts = 1;
    let client = StreamLoadClient::new(config).unwrap();
    let e = client.commit("d", &TxnRef::Id(7)).await.unwrap_err();
    assert!(e.to_string().contains("cap"), "{e}");
}

/// A client whose FE and only BE are the server at `addr`, trying each request `attempts`
/// times, and the error of loading ten rows under `label` through it.
async fn load_through(
    addr: std::net::SocketAddr,
    attempts: u32,
    label: &str,
) -> (StreamLoadClient, StreamLoadError) {
    let mut config = ClientConfig::new(
        format!("http://{addr}").parse().unwrap(),
        Credentials::new("root", ""),
    );
    config.route = Route::Backends(vec![format!("http://{addr}").parse().unwrap()]);
    config.retry.max_attempts = attempts;
    let client = StreamLoadClient::new(config).unwrap();
    let b = batch(0, 10);
    let e = client
        .load(
            "d",
            "t",
            &LoadOptions::default(),
            Some(Label::new(label).unwrap()),
            b.schema(),
            vec![b],
        )
        .await
        .unwrap_err();
    (client, e)
}

#[tokio::test]
async fn an_oversized_stream_load_answer_is_refused_not_buffered() {
    // A "BE" whose answer to the load runs past the 1 MiB cap: the load fails, naming the
    // cap, without reading the rest (16 MiB are offered).
    let addr = oversized_server(16 << 20, 8).await;
    let (_, e) = load_through(addr, 1, "oversized1").await;
    assert!(
        e.to_string()
            .contains(&format!("larger than {} bytes", 1 << 20)),
        "{e}"
    );
}

/// A server that answers every request at once (before any body) with `status` and `body`.
async fn answering_server(status: &'static str, body: &'static str) -> std::net::SocketAddr {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut head = [0u8; 8192];
            let _ = socket.read(&mut head).await;
            let answer = format!(
                "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(answer.as_bytes()).await;
        }
    });
    addr
}

#[tokio::test]
async fn no_error_carries_the_response_body() {
    const MARKER: &str = "Body-Marker-5e1f";
    const BODY: &str = "<html><body>Body-Marker-5e1f: proxy says no</body></html>";
    for status in ["200 OK", "502 Bad Gateway", "401 Unauthorized"] {
        let addr = answering_server(status, BODY).await;
        let (client, e) = load_through(addr, 2, "body1").await;
        let shown = format!("{e} {e:?}");
        assert!(!shown.contains(MARKER), "{status}: {shown}");
        let e = client.commit("d", &TxnRef::Id(7)).await.unwrap_err();
        let shown = format!("{e} {e:?}");
        assert!(!shown.contains(MARKER), "{status}: {shown}");
    }
}
