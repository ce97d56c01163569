//! No statement text reaches a log: sqlx logs every statement (at DEBUG, slow ones at
//! WARN) with its literals unless told not to, and a subscriber in the embedding service
//! would then record bound values and a streaming job's S3 credentials.
#![allow(clippy::unwrap_used)]

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use doris_emulator::{Emulator, EmulatorConfig};
use doris_read::{BatchLimits, MySqlEndpoint, Transport};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// Every event and span field, as text, with its target.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<String>>>);

struct Text<'a>(&'a mut String);

impl Visit for Text<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, " {}={value:?}", field.name());
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut line = format!("span {}:", span.metadata().target());
        span.record(&mut Text(&mut line));
        self.0.lock().unwrap().push(line);
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, values: &Record<'_>) {
        let mut line = String::from("record:");
        values.record(&mut Text(&mut line));
        self.0.lock().unwrap().push(line);
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut line = format!("event {}:", event.metadata().target());
        event.record(&mut Text(&mut line));
        self.0.lock().unwrap().push(line);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_statement_text_is_logged_by_the_mysql_client() {
    // This test binary holds this one test: the recorder sees every thread's events.
    let recorder = Recorder::default();
    let lines = recorder.0.clone();
    tracing::subscriber::set_global_default(recorder).unwrap();
    tracing::debug!(target: "probe", "recorder installed");
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    emulator
        .execute(
            None,
            "CREATE DATABASE demo; CREATE TABLE demo.t (`id` BIGINT NOT NULL, `name` VARCHAR(20) NULL) \
             DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1;",
        )
        .unwrap();
    let endpoint = MySqlEndpoint::new("127.0.0.1", emulator.query_addr().port(), "root", "");
    let schema = Arc::new(arrow::datatypes::Schema::new(vec![
        arrow::datatypes::Field::new("id", arrow::datatypes::DataType::Int64, false),
    ]));
    let mut stream = Transport::MySql(endpoint)
        .read(
            ["SELECT `id` FROM `demo`.`t` WHERE `name` = 'sk-LOGGED-LITERAL-7'"],
            schema,
            BatchLimits::default(),
        )
        .await
        .unwrap();
    let mut rows = 0;
    while let Some(batch) = stream.next_batch().await {
        rows += batch.unwrap().num_rows();
    }
    assert_eq!(rows, 0);
    let lines = lines.lock().unwrap();
    assert!(
        lines.iter().any(|l| l.contains("recorder installed")),
        "the recorder is installed and sees DEBUG events"
    );
    // sqlx's own events (target `sqlx::query`) would carry the statement's text.
    let leaked: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("sqlx") && l.contains("LOGGED-LITERAL"))
        .collect();
    assert!(leaked.is_empty(), "sqlx logged the statement: {leaked:?}");
}
