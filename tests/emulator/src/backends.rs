//! Simulated BEs: how many there are, which tablets each holds, and the bandwidth that
//! bounds each one.
//!
//! A real cluster's read speed is bounded per BE: its disks scan the tablets it holds and
//! its network carries the results it sinks. On one machine the emulator serves every BE
//! from one process, so to show how split reads scale with the number of BEs (the client
//! not being the bottleneck), each simulated BE gets a token bucket that paces the result
//! bytes it sends ([`EmulatorConfig::be_bandwidth`](crate::EmulatorConfig::be_bandwidth)).
//!
//! The model, kept small on purpose:
//!
//! - Tablet `i` of a table (in creation order) lives on BE `i mod N`; `_query_plan` reports
//!   it there (`routings`: the BE's thrift port, one per BE).
//! - Each query's result is sunk by **one** BE, as Doris's coordinator places the result
//!   sink of a query: the least busy BE among those holding the tablets it scans (every BE
//!   for a query without `TABLET(…)`). Flight endpoints of the query name that BE's Flight
//!   port; a MySQL result is relayed by the FE but paced by that BE.
//! - A BE's bucket paces every byte its sunk results put on the wire (MySQL packets,
//!   Flight data frames), shared by all of its concurrent streams.
//!
//! So a single-task read of a whole table is bounded by one BE, and a read split into
//! tasks by tablet can use every BE at once: the speed-up a split read gets from N BEs.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The BE thrift port Doris reports in `_query_plan` routings; BE `i` reports this plus `i`.
pub const BE_THRIFT_PORT: u16 = 9060;

/// The simulated BEs of one emulator.
#[derive(Debug)]
pub struct Backends {
    bes: Vec<Backend>,
}

#[derive(Debug)]
struct Backend {
    /// Result streams this BE sinks now.
    sinking: AtomicUsize,
    /// Result bytes this BE has sent so far.
    sent: AtomicU64,
    /// Bytes per second, or `None` for no limit.
    rate: Option<u64>,
    /// When the bucket is next free: a stream that spends `n` bytes reserves
    /// `n / rate` seconds from `max(now, free_at)`.
    free_at: Mutex<Instant>,
}

impl Backends {
    /// `count` BEs (at least one), each limited to `bytes_per_second` (`None`: no limit).
    pub fn new(count: usize, bytes_per_second: Option<u64>) -> Self {
        let rate = bytes_per_second.filter(|r| *r > 0);
        let bes = (0..count.max(1))
            .map(|_| Backend {
                sinking: AtomicUsize::new(0),
                sent: AtomicU64::new(0),
                rate,
                free_at: Mutex::new(Instant::now()),
            })
            .collect();
        Self { bes }
    }

    /// How many BEs there are.
    pub fn count(&self) -> usize {
        self.bes.len()
    }

    /// Result bytes BE `be` has sent so far (MySQL packets and Flight frames of the
    /// queries it sank), for tests; 0 for a BE that does not exist.
    pub fn bytes_sent(&self, be: usize) -> u64 {
        self.bes
            .get(be)
            .map_or(0, |b| b.sent.load(Ordering::SeqCst))
    }

    /// The BE holding tablet number `tablet_index` of its table.
    pub fn of_tablet(&self, tablet_index: usize) -> usize {
        tablet_index % self.bes.len()
    }

    /// Places a query's result sink on the least busy BE among `holders` (BE indexes; empty
    /// or all out of range: every BE). Ties go to the lowest index.
    pub fn sink(self: &Arc<Self>, holders: &[usize]) -> Sink {
        let candidates: Vec<usize> = holders
            .iter()
            .copied()
            .filter(|b| *b < self.bes.len())
            .collect();
        let all: Vec<usize> = (0..self.bes.len()).collect();
        let candidates = if candidates.is_empty() {
            &all
        } else {
            &candidates
        };
        let chosen = candidates
            .iter()
            .copied()
            .min_by_key(|b| (self.bes[*b].sinking.load(Ordering::SeqCst), *b))
            .unwrap_or(0);
        self.bes[chosen].sinking.fetch_add(1, Ordering::SeqCst);
        Sink {
            backends: self.clone(),
            be: chosen,
        }
    }
}

/// A result stream sunk by one BE; dropping it ends the stream's claim on the BE.
#[derive(Debug)]
pub struct Sink {
    backends: Arc<Backends>,
    be: usize,
}

impl Sink {
    /// The BE this stream is sunk by.
    pub fn backend(&self) -> usize {
        self.be
    }

    /// How long the stream must wait before `bytes` more may leave, by its BE's bucket
    /// (zero without a limit). Reserves the time at once, so concurrent streams of one BE
    /// share its bandwidth.
    pub fn reserve(&self, bytes: u64) -> Duration {
        let be = &self.backends.bes[self.be];
        be.sent.fetch_add(bytes, Ordering::SeqCst);
        let Some(rate) = be.rate else {
            return Duration::ZERO;
        };
        let cost = Duration::from_secs_f64(bytes as f64 / rate as f64);
        let now = Instant::now();
        let Ok(mut free_at) = be.free_at.lock() else {
            return Duration::ZERO;
        };
        let start = (*free_at).max(now);
        *free_at = start + cost;
        *free_at - now
    }

    /// Waits until `bytes` more may leave (see [`Sink::reserve`]).
    pub async fn spend(&self, bytes: u64) {
        let wait = self.reserve(bytes);
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        self.backends.bes[self.be]
            .sinking
            .fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tablets_are_dealt_over_the_backends_in_turn() {
        let b = Backends::new(3, None);
        let owners: Vec<usize> = (0..7).map(|i| b.of_tablet(i)).collect();
        assert_eq!(owners, [0, 1, 2, 0, 1, 2, 0]);
        assert_eq!(Backends::new(0, None).count(), 1);
    }

    #[test]
    fn sinks_go_to_the_least_busy_holder_and_are_released_on_drop() {
        let b = Arc::new(Backends::new(4, None));
        let first = b.sink(&[]);
        let second = b.sink(&[]);
        assert_eq!((first.backend(), second.backend()), (0, 1));
        // Only BEs 0 and 1 hold the tablets: both are busy once, the lower index wins.
        let third = b.sink(&[1, 0]);
        assert_eq!(third.backend(), 0);
        drop(first);
        drop(third);
        assert_eq!(b.sink(&[0, 1]).backend(), 0);
        // Out-of-range holders mean "any BE".
        assert_eq!(b.sink(&[9]).backend(), 0);
    }

    #[test]
    fn one_backend_shares_its_rate_between_its_streams() {
        let b = Arc::new(Backends::new(2, Some(1_000_000)));
        let (s1, s2) = (b.sink(&[0]), b.sink(&[0]));
        assert_eq!((s1.backend(), s2.backend()), (0, 0));
        let w1 = s1.reserve(500_000);
        let w2 = s2.reserve(500_000);
        // Half a second each, one after the other on the same bucket.
        assert!(w1 <= Duration::from_millis(500), "{w1:?}");
        assert!(w2 >= Duration::from_millis(990), "{w2:?}");
        // Another BE's bucket is untouched.
        let other = b.sink(&[1]);
        assert!(other.reserve(500_000) <= Duration::from_millis(500));
        assert_eq!(
            (b.bytes_sent(0), b.bytes_sent(1), b.bytes_sent(7)),
            (1_000_000, 500_000, 0)
        );
        // No limit: no wait.
        let free = Arc::new(Backends::new(1, None)).sink(&[]);
        assert_eq!(free.reserve(1 << 40), Duration::ZERO);
    }
}
