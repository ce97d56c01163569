//! The crate's `tracing` events, through the `tracing_logs` example's subscriber: a load's
//! INFO line carries its label, transaction id, status and rows; the attempt is at DEBUG.
//! (That no line holds the password: `tests/python/test_logging.py`, with one set.)

use std::io::Write;
use std::sync::{Arc, Mutex};

#[allow(dead_code)]
#[path = "../../examples/tracing_logs.rs"]
mod example;

use crate::common::{Emulator, EmulatorConfig};

/// Lines written by the subscriber, shared with the test.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl Write for Lines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A process-wide subscriber that wants no event but keeps every callsite asking.
///
/// tracing caches each callsite's interest across the process: a callsite first reached by
/// another test's thread while no subscriber of this test was registered yet can be cached
/// as "never" (a race between that registration and `set_default`'s rebuild), and this
/// test's subscriber would then not see the event. With this global subscriber every
/// callsite stays "sometimes", so each event asks the thread's own subscriber.
struct AskEveryTime;

impl tracing::Subscriber for AskEveryTime {
    fn register_callsite(
        &self,
        _: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        tracing::subscriber::Interest::sometimes()
    }
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        false
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

// One thread: the subscriber set for this test sees every event of the load.
#[tokio::test(flavor = "current_thread")]
async fn a_load_logs_one_info_line_with_its_label_and_status() {
    static GLOBAL: std::sync::Once = std::sync::Once::new();
    GLOBAL.call_once(|| {
        let _ = tracing::subscriber::set_global_default(AskEveryTime);
    });
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    emulator
        .execute(
            None,
            "CREATE DATABASE demo; CREATE TABLE demo.events (`id` BIGINT NOT NULL, \
             `name` VARCHAR(16) NULL) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1",
        )
        .unwrap();
    let lines = Lines::default();
    let writer = lines.clone();
    let _guard = tracing::subscriber::set_default(example::subscriber(move || writer.clone()));
    let report = example::load(emulator.fe_http_addr().port()).await.unwrap();
    let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
    let label = report.label.clone().unwrap();
    let info: Vec<&str> = text.lines().filter(|l| l.contains(" INFO ")).collect();
    assert_eq!(info.len(), 1, "{text}");
    for field in [
        format!("label={label}"),
        format!("txn_id={}", report.txn_id),
        "status=Success".into(),
        "rows=3".into(),
    ] {
        assert!(info[0].contains(&field), "{field} missing: {text}");
    }
    assert!(
        text.lines().any(|l| l.contains(" DEBUG ")
            && l.contains("stream load attempt")
            && l.contains("attempt=1")),
        "{text}"
    );
}
