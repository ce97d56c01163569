//! A load's three waits, each with its own limit: the upload may take as long as it needs
//! while the BE keeps reading, a BE that stops reading is given up after
//! `upload_stall_timeout`, and a BE that does not answer after the last body byte after
//! `answer_timeout`.
//!
//! The BE here is a loopback server whose pace the test sets (the emulator reads a body as
//! fast as it can): it answers `100 Continue`, reads the chunked body in 1 MiB steps with
//! pauses, then answers a successful load.

use std::net::SocketAddr;
use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::common::*;

/// How the BE reads the body and answers.
#[derive(Clone, Copy)]
struct Pace {
    /// 1 MiB reads each followed by `pause`, before the rest is read at full speed.
    slow_steps: u32,
    pause: Duration,
    /// The wait after the last body byte before the answer.
    answer_after: Duration,
}

/// A BE that reads every load's body at `pace` and answers it as a load of `rows` rows.
async fn paced_be(rows: usize, pace: Pace) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(serve(socket, rows, pace));
        }
    });
    addr
}

async fn serve(mut socket: tokio::net::TcpStream, rows: usize, pace: Pace) {
    // The head, up to its blank line (the client sends nothing more before `100`).
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if socket.read(&mut byte).await.unwrap_or(0) == 0 {
            return;
        }
        head.push(byte[0]);
    }
    if socket
        .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
        .await
        .is_err()
    {
        return;
    }
    // The chunked body ends with `0\r\n\r\n`.
    let mut buf = vec![0u8; 64 * 1024];
    let mut tail: Vec<u8> = Vec::new();
    let mut step_read = 0usize;
    let mut steps_left = pace.slow_steps;
    loop {
        let Ok(n) = socket.read(&mut buf).await else {
            return;
        };
        if n == 0 {
            return;
        }
        tail.extend_from_slice(&buf[..n]);
        let keep = tail.len().saturating_sub(5);
        tail.drain(..keep);
        if tail == b"0\r\n\r\n" {
            break;
        }
        step_read += n;
        if steps_left > 0 && step_read >= 1 << 20 {
            tokio::time::sleep(pace.pause).await;
            (step_read, steps_left) = (0, steps_left - 1);
        }
    }
    tokio::time::sleep(pace.answer_after).await;
    let body = format!(
        r#"{{"TxnId": 7, "Label": "paced", "Status": "Success", "Message": "OK", "NumberTotalRows": {rows}, "NumberLoadedRows": {rows}, "NumberFilteredRows": 0, "NumberUnselectedRows": 0}}"#
    );
    let answer = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = socket.write_all(answer.as_bytes()).await;
}

/// `rows` rows of 8 KiB each: 64 MiB for 8,192 rows, more than the loopback socket
/// buffers can hold (here at most 4 MiB sent and 32 MiB received), so the client's
/// progress follows the BE's reads.
fn wide_rows(rows: usize) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("pad", DataType::Utf8, false),
    ]));
    let pad = "x".repeat(8 * 1024);
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from_iter_values(0..rows as i64)),
            Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
                pad.as_str(),
                rows,
            ))),
        ],
    )
    .unwrap()
}

/// Loads `rows` wide rows straight to the BE at `addr` (one attempt) with the given waits;
/// the outcome and how long it took.
async fn load_paced(
    addr: SocketAddr,
    rows: usize,
    answer: Duration,
    upload_stall: Duration,
) -> (Result<LoadReport, StreamLoadError>, Duration) {
    let url: url::Url = format!("http://{addr}").parse().unwrap();
    let mut config = ClientConfig::new(url.clone(), Credentials::new("root", ""));
    config.route = Route::Backends(vec![url]);
    config.retry.max_attempts = 1;
    config.answer_timeout = answer;
    config.upload_stall_timeout = upload_stall;
    let client = StreamLoadClient::new(config).unwrap();
    let batch = wide_rows(rows);
    let started = Instant::now();
    let outcome = client
        .load(
            "d",
            "t",
            &LoadOptions::default(),
            Some(Label::new("paced").unwrap()),
            batch.schema(),
            vec![batch],
        )
        .await;
    (outcome, started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_that_keeps_moving_may_outlast_the_answer_timeout() {
    // The BE reads 1 MiB every 50 ms: the 64 MiB upload takes over 3.2 s, beyond the
    // 2.5 s answer timeout, and the load still succeeds (one limit for the whole exchange
    // failed it). The answer limit counts from the last byte the connection took, and the
    // BE drains what the socket buffers still hold (at most ~37 MiB, 1.9 s) within it.
    let pace = Pace {
        slow_steps: u32::MAX,
        pause: Duration::from_millis(50),
        answer_after: Duration::ZERO,
    };
    let addr = paced_be(8_192, pace).await;
    let (outcome, took) = load_paced(
        addr,
        8_192,
        Duration::from_millis(2_500),
        Duration::from_secs(1),
    )
    .await;
    let report = outcome.unwrap();
    assert_eq!(report.status, LoadStatus::Success);
    assert_eq!(report.rows, 8_192);
    assert_eq!(report.attempts, 1);
    assert!(took >= Duration::from_millis(3_200), "{took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_be_that_stops_reading_fails_the_load_after_the_stall_timeout() {
    // The BE reads 1 MiB, then nothing for 20 s: the upload stalls, and the load fails
    // after the 500 ms stall limit (not the 60 s answer limit), as an outcome that is not
    // known (body bytes were sent), naming the stall.
    let pace = Pace {
        slow_steps: 1,
        pause: Duration::from_secs(20),
        answer_after: Duration::ZERO,
    };
    let addr = paced_be(8_192, pace).await;
    let (outcome, took) = load_paced(
        addr,
        8_192,
        Duration::from_secs(60),
        Duration::from_millis(500),
    )
    .await;
    let e = outcome.unwrap_err();
    assert!(matches!(e, StreamLoadError::Ambiguous { .. }), "{e}");
    assert!(e.to_string().contains("made no progress for 500 ms"), "{e}");
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_be_that_does_not_answer_after_the_body_fails_the_load_after_the_answer_timeout() {
    // The body is read at once; the answer would come after 20 s. The load fails after
    // the 700 ms answer limit (the stall limit of 60 s never applies after the body).
    let pace = Pace {
        slow_steps: 0,
        pause: Duration::ZERO,
        answer_after: Duration::from_secs(20),
    };
    let addr = paced_be(64, pace).await;
    let (outcome, took) = load_paced(
        addr,
        64,
        Duration::from_millis(700),
        Duration::from_secs(60),
    )
    .await;
    let e = outcome.unwrap_err();
    assert!(matches!(e, StreamLoadError::Ambiguous { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("no answer within 700 ms of the last body byte"),
        "{e}"
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
}
