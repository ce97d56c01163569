//! The one retry schedule every request of this crate follows: exponential backoff under
//! [`RetryPolicy`], bounded by attempts and, for loads, by a total deadline.
//!
//! Whether a failure may be retried at all is decided by the caller (a load's body may have
//! landed; a 2PC operation is idempotent); this module only says when, and when to stop.

use std::time::{Duration, Instant};

use crate::config::RetryPolicy;

/// The retry schedule of one operation.
#[derive(Debug, Clone)]
pub(crate) struct Schedule {
    max_attempts: u32,
    max_backoff: Duration,
    next_backoff: Duration,
    deadline: Option<Instant>,
    attempts: u32,
}

impl Schedule {
    /// A schedule for a load: attempts, backoff and the policy's total time from `started`.
    pub(crate) fn for_load(policy: &RetryPolicy, started: Instant) -> Self {
        Self {
            deadline: Some(started + policy.max_total),
            ..Self::without_deadline(policy)
        }
    }

    /// A schedule bounded by attempts only (idempotent requests such as 2PC operations).
    pub(crate) fn without_deadline(policy: &RetryPolicy) -> Self {
        Self {
            max_attempts: policy.max_attempts.max(1),
            max_backoff: policy.max_backoff,
            next_backoff: policy.initial_backoff,
            deadline: None,
            attempts: 0,
        }
    }

    /// Counts the start of an attempt; returns its number (1 for the first).
    pub(crate) fn start_attempt(&mut self) -> u32 {
        self.attempts += 1;
        self.attempts
    }

    /// Takes back the last attempt: it was a probe of a running label, not a try.
    pub(crate) fn forget_attempt(&mut self) {
        self.attempts = self.attempts.saturating_sub(1);
    }

    /// Whether `wait` from `now` still ends before the deadline (always, without one).
    pub(crate) fn fits(&self, now: Instant, wait: Duration) -> bool {
        self.deadline.is_none_or(|d| now + wait < d)
    }

    /// The backoff before the next attempt, or `None` when the attempts or the time are
    /// used up. Each call doubles the following backoff, up to the policy's largest.
    pub(crate) fn next_delay(&mut self, now: Instant) -> Option<Duration> {
        if self.attempts >= self.max_attempts || !self.fits(now, self.next_backoff) {
            return None;
        }
        let delay = self.next_backoff;
        self.next_backoff = (self.next_backoff * 2).min(self.max_backoff);
        Some(delay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 5,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(300),
            max_total: Duration::from_secs(10),
            running_probe_interval: Duration::from_secs(1),
        }
    }

    #[test]
    fn backoff_doubles_up_to_its_cap_and_stops_after_the_last_attempt() {
        let now = Instant::now();
        let mut schedule = Schedule::without_deadline(&policy());
        let mut delays = Vec::new();
        let last = loop {
            let attempt = schedule.start_attempt();
            match schedule.next_delay(now) {
                Some(d) => delays.push(d.as_millis()),
                None => break attempt,
            }
        };
        // Five attempts, four waits between them.
        assert_eq!(delays, [100, 200, 300, 300]);
        assert_eq!(last, 5);
    }

    #[test]
    fn a_load_stops_when_the_next_wait_would_pass_its_deadline() {
        let started = Instant::now();
        let mut schedule = Schedule::for_load(&policy(), started);
        schedule.start_attempt();
        assert!(schedule.next_delay(started).is_some());
        schedule.start_attempt();
        // 9.9 s in, a 200 ms wait ends after the 10 s budget.
        let late = started + Duration::from_millis(9_900);
        assert!(schedule.next_delay(late).is_none());
        assert!(!schedule.fits(late, Duration::from_millis(200)));
        assert!(schedule.fits(late, Duration::from_millis(50)));
        // A wait must end before the deadline: ending exactly on it is too late.
        assert!(!schedule.fits(started, Duration::from_secs(10)));
        assert!(schedule.fits(started, Duration::from_secs(10) - Duration::from_nanos(1)));
        // Without a deadline only the attempts bound it.
        assert!(
            Schedule::without_deadline(&policy())
                .fits(late + Duration::from_secs(3600), Duration::MAX / 4)
        );
    }

    #[test]
    fn a_probe_is_not_counted_as_an_attempt() {
        let mut schedule = Schedule::without_deadline(&policy());
        assert_eq!(schedule.start_attempt(), 1);
        schedule.forget_attempt();
        assert_eq!(schedule.start_attempt(), 1);
        // Zero attempts allowed still means one try.
        let mut once = Schedule::without_deadline(&RetryPolicy {
            max_attempts: 0,
            ..policy()
        });
        once.start_attempt();
        assert!(once.next_delay(Instant::now()).is_none());
    }
}
