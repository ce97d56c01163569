//! The resources: this process's and the emulator's file descriptors, threads and RSS and
//! the emulator's open sessions, sampled every `SAMPLE_EVERY`; their peaks over a part of
//! the run; the samples as CSV and as a chart.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::{Context, SAMPLE_EVERY};

/// One resource sample.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sample {
    pub(crate) seconds: f64,
    pub(crate) values: Vec<(&'static str, f64)>,
}

/// `Threads`, `VmRSS` (MiB) and open file descriptors of process `pid`.
pub(crate) fn process(pid: &str) -> (f64, f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| -> f64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    };
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count() as f64)
        .unwrap_or(0.0);
    (field("Threads:"), field("VmRSS:") / 1024.0, fds)
}

pub(crate) async fn sample(ctx: &Context, emulator_pid: u32, started: Instant) -> Sample {
    let (threads, rss, fds) = process("self");
    let (e_threads, e_rss, e_fds) = process(&emulator_pid.to_string());
    let wire = ctx
        .admin(reqwest::Method::GET, "/_emulator/wire", None)
        .await;
    let now = |k: &str| wire[k]["now"].as_f64().unwrap_or(0.0);
    Sample {
        seconds: started.elapsed().as_secs_f64(),
        values: vec![
            ("client_fds", fds),
            ("client_threads", threads),
            ("client_rss_mib", rss),
            ("emulator_fds", e_fds),
            ("emulator_threads", e_threads),
            ("emulator_rss_mib", e_rss),
            ("mysql_sessions", now("mysql_connections")),
            (
                "flight_sessions",
                wire["flight_sessions"].as_f64().unwrap_or(0.0),
            ),
            ("flight_streams", now("flight_streams")),
            ("be_loads", now("be_loads")),
        ],
    }
}

pub(crate) async fn sampling(
    ctx: Arc<Context>,
    pid: u32,
    started: Instant,
    out: Arc<Mutex<Vec<Sample>>>,
) {
    while !ctx.stop.load(Ordering::SeqCst) {
        let s = sample(&ctx, pid, started).await;
        out.lock().unwrap().push(s);
        tokio::time::sleep(SAMPLE_EVERY).await;
    }
}

/// The highest value of `metric` over the samples in `[from, to)` of the run (fractions).
pub(crate) fn peak(samples: &[Sample], metric: &str, from: f64, to: f64) -> f64 {
    let end = samples.last().map_or(0.0, |s| s.seconds);
    samples
        .iter()
        .filter(|s| s.seconds >= from * end && s.seconds < to * end)
        .filter_map(|s| s.values.iter().find(|(k, _)| *k == metric).map(|(_, v)| *v))
        .fold(0.0, f64::max)
}

/// The growth limits: a resource may not end higher than it was in the run's second
/// quarter by more than this (absolute, and for memory also relative).
pub(crate) const FLAT: &[(&str, f64, f64)] = &[
    ("client_fds", 16.0, 1.0),
    ("client_threads", 8.0, 1.0),
    ("client_rss_mib", 48.0, 1.5),
    ("emulator_fds", 16.0, 1.0),
    ("emulator_threads", 8.0, 1.0),
    ("mysql_sessions", 8.0, 1.0),
    ("flight_sessions", 2.0, 1.0),
    ("flight_streams", 8.0, 1.0),
];

pub(crate) fn svg(samples: &[Sample]) -> String {
    let (w, h, pad) = (900.0, 60.0, 4.0);
    let end = samples.last().map_or(1.0, |s| s.seconds.max(1.0));
    let metrics: Vec<&str> = samples
        .first()
        .map(|s| s.values.iter().map(|(k, _)| *k).collect())
        .unwrap_or_default();
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"11\">\n",
        w + 200.0,
        (h + 20.0) * metrics.len() as f64
    );
    for (row, metric) in metrics.iter().enumerate() {
        let top = row as f64 * (h + 20.0);
        let values: Vec<(f64, f64)> = samples
            .iter()
            .filter_map(|s| {
                s.values
                    .iter()
                    .find(|(k, _)| k == metric)
                    .map(|(_, v)| (s.seconds, *v))
            })
            .collect();
        let max = values.iter().map(|(_, v)| *v).fold(1.0, f64::max);
        let points: Vec<String> = values
            .iter()
            .map(|(t, v)| {
                format!(
                    "{:.1},{:.1}",
                    t / end * w,
                    top + pad + (h - 2.0 * pad) * (1.0 - v / max)
                )
            })
            .collect();
        out.push_str(&format!(
            "<text x=\"{}\" y=\"{}\">{metric} (max {max:.0})</text>\n<polyline fill=\"none\" stroke=\"#1f77b4\" points=\"{}\"/>\n",
            w + 10.0,
            top + h / 2.0,
            points.join(" ")
        ));
    }
    out.push_str("</svg>\n");
    out
}

/// Writes `samples` into `out` as `soak.csv` (one column per metric) and `soak.svg`.
pub(crate) fn write_samples(out: &std::path::Path, samples: &[Sample]) {
    let mut csv = String::from("seconds");
    if let Some(first) = samples.first() {
        for (k, _) in &first.values {
            csv.push(',');
            csv.push_str(k);
        }
    }
    csv.push('\n');
    for s in samples {
        csv.push_str(&format!("{:.1}", s.seconds));
        for (_, v) in &s.values {
            csv.push_str(&format!(",{v}"));
        }
        csv.push('\n');
    }
    std::fs::write(out.join("soak.csv"), csv).unwrap();
    std::fs::write(out.join("soak.svg"), svg(samples)).unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_is_measured_between_the_second_and_the_last_quarter() {
        let samples: Vec<Sample> = (0..100)
            .map(|i| Sample {
                seconds: f64::from(i),
                values: vec![("client_fds", f64::from(20 + i / 10))],
            })
            .collect();
        assert_eq!(peak(&samples, "client_fds", 0.25, 0.5), 24.0);
        assert_eq!(peak(&samples, "client_fds", 0.75, 1.01), 29.0);
    }
}
