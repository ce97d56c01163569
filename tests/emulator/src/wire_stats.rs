//! What crossed the emulator's faces: HTTP requests, MySQL connections and result rows.
//!
//! Tests read these to assert what a client did on the wire, not only what it reported:
//! how many requests a load took (one redirect, then the BE), whether an early-closed read
//! let its connection go before the result was drained.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Which HTTP face a request arrived on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpFace {
    /// The FE HTTP port (8030).
    Fe,
    /// The BE HTTP port (8040).
    Be,
}

/// One HTTP request as the emulator received it (method and path; never headers or body).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpRequest {
    /// The face it arrived on.
    pub face: HttpFace,
    /// `GET`, `PUT`, ...
    pub method: String,
    /// The path, without the query string.
    pub path: String,
}

/// How many of something are open now, the most that were open at once, and how many were
/// ever opened.
#[derive(Debug, Default, Clone)]
pub struct Gauge(Arc<GaugeCounts>);

#[derive(Debug, Default)]
struct GaugeCounts {
    now: AtomicUsize,
    peak: AtomicUsize,
    total: AtomicUsize,
}

impl Gauge {
    /// Counts one more until the returned guard is dropped.
    pub fn enter(&self) -> GaugeGuard {
        self.0.total.fetch_add(1, Ordering::SeqCst);
        let now = self.0.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.0.peak.fetch_max(now, Ordering::SeqCst);
        GaugeGuard(self.0.clone())
    }

    /// How many are open now.
    pub fn now(&self) -> usize {
        self.0.now.load(Ordering::SeqCst)
    }

    /// The most that were open at once.
    pub fn peak(&self) -> usize {
        self.0.peak.load(Ordering::SeqCst)
    }

    /// How many were ever opened.
    pub fn total(&self) -> usize {
        self.0.total.load(Ordering::SeqCst)
    }

    /// Starts a new peak from how many are open now (to measure one operation's peak).
    pub fn reset_peak(&self) {
        self.0
            .peak
            .store(self.0.now.load(Ordering::SeqCst), Ordering::SeqCst);
    }

    /// `{"now": …, "peak": …, "total": …}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({"now": self.now(), "peak": self.peak(), "total": self.total()})
    }
}

/// Keeps one entry of a [`Gauge`] counted (owned, so a `'static` stream can hold it).
#[derive(Debug)]
pub struct GaugeGuard(Arc<GaugeCounts>);

impl Drop for GaugeGuard {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Counters of what crossed the faces, shared by every connection.
#[derive(Debug, Default)]
pub struct WireStats {
    http_requests: Mutex<Vec<HttpRequest>>,
    /// MySQL sessions, from accept until the socket closes (`total`: sessions ever opened).
    pub mysql_connections: Gauge,
    /// Flight `DoGet` result streams, from the call until the server drops the stream
    /// (at its end, or when the client cancels it).
    pub flight_streams: Gauge,
    /// Stream Loads the BE is receiving or applying (from the request to the response).
    pub be_loads: Gauge,
    mysql_rows_sent: AtomicU64,
    mysql_tls_sessions: AtomicU64,
    mysql_passwords_revealed: AtomicU64,
}

impl WireStats {
    /// Records an HTTP request.
    pub fn record_http(&self, face: HttpFace, method: &str, path: &str) {
        self.http_requests
            .lock()
            .expect("request log poisoned")
            .push(HttpRequest {
                face,
                method: method.to_owned(),
                path: path.to_owned(),
            });
    }

    /// Every HTTP request received so far, in arrival order.
    pub fn http_requests(&self) -> Vec<HttpRequest> {
        self.http_requests
            .lock()
            .expect("request log poisoned")
            .clone()
    }

    /// Adds `rows` result rows written to a MySQL connection.
    pub fn add_mysql_rows(&self, rows: u64) {
        self.mysql_rows_sent.fetch_add(rows, Ordering::SeqCst);
    }

    /// Result rows written to MySQL connections so far (written to the socket, which may
    /// still buffer them).
    pub fn mysql_rows_sent(&self) -> u64 {
        self.mysql_rows_sent.load(Ordering::SeqCst)
    }
    /// Counts a MySQL session that negotiated TLS (its SSLRequest and handshake done).
    pub fn add_mysql_tls_session(&self) {
        self.mysql_tls_sessions.fetch_add(1, Ordering::SeqCst);
    }

    /// MySQL sessions that negotiated TLS so far: proof, on the wire, that a client
    /// encrypted its link.
    pub fn mysql_tls_sessions(&self) -> u64 {
        self.mysql_tls_sessions.load(Ordering::SeqCst)
    }

    /// Counts a password the MySQL face learned in full authentication (sent in clear, or
    /// encrypted to the emulator's key and decrypted).
    pub fn add_mysql_password_revealed(&self) {
        self.mysql_passwords_revealed.fetch_add(1, Ordering::SeqCst);
    }

    /// Passwords clients revealed to the MySQL face in full authentication
    /// ([`crate::faults::Fault::Sha2FullAuth`]): what a server that asks for them would
    /// hold.
    pub fn mysql_passwords_revealed(&self) -> u64 {
        self.mysql_passwords_revealed.load(Ordering::SeqCst)
    }

    /// The gauges and counters as JSON (`GET /_emulator/wire` serves it): MySQL sessions,
    /// Flight `DoGet` streams and BE loads (`now`, `peak`), rows sent over MySQL.
    pub fn report(&self) -> serde_json::Value {
        serde_json::json!({
            "mysql_connections": self.mysql_connections.to_json(),
            "flight_streams": self.flight_streams.to_json(),
            "be_loads": self.be_loads.to_json(),
            "mysql_rows_sent": self.mysql_rows_sent(),
            "mysql_tls_sessions": self.mysql_tls_sessions(),
            "mysql_passwords_revealed": self.mysql_passwords_revealed(),
        })
    }

    /// Starts new peaks for every gauge (`DELETE /_emulator/wire`).
    pub fn reset_peaks(&self) {
        self.mysql_connections.reset_peak();
        self.flight_streams.reset_peak();
        self.be_loads.reset_peak();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gauge_counts_while_its_guards_live_and_keeps_its_peak() {
        let gauge = Gauge::default();
        let first = gauge.enter();
        let second = gauge.enter();
        assert_eq!((gauge.now(), gauge.peak()), (2, 2));
        drop(first);
        assert_eq!((gauge.now(), gauge.peak()), (1, 2));
        drop(second);
        let _third = gauge.enter();
        assert_eq!((gauge.now(), gauge.peak()), (1, 2));
        gauge.reset_peak();
        assert_eq!((gauge.now(), gauge.peak()), (1, 1));
        let _fourth = gauge.enter();
        assert_eq!(
            gauge.to_json(),
            serde_json::json!({"now": 2, "peak": 2, "total": 4})
        );
    }

    #[test]
    fn requests_are_kept_in_arrival_order() {
        let stats = WireStats::default();
        stats.record_http(HttpFace::Fe, "PUT", "/api/d/t/_stream_load");
        stats.record_http(HttpFace::Be, "PUT", "/api/d/t/_stream_load");
        let faces: Vec<HttpFace> = stats.http_requests().iter().map(|r| r.face).collect();
        assert_eq!(faces, [HttpFace::Fe, HttpFace::Be]);
    }
}
