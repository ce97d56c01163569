//! The loop that runs streaming jobs: for each RUNNING (or PENDING) job whose poll is due,
//! list the source's files after the offset, take the next batch (`s3.max_batch_files`,
//! `s3.max_batch_bytes`), load it in one transaction and move the offset with it; with
//! nothing new, wait `max_interval`. A failed task aborts its transaction, leaves the offset
//! and pauses the job with `ErrorMsg`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use tokio::sync::watch;

use super::{Job, Statistic, Status, Task, now_text, s3};
use crate::Shared;
use crate::load::{Decoded, LoadOptions, decode, parse_options};

/// How long the runner sleeps at most before looking at the jobs again.
const IDLE_CHECK: Duration = Duration::from_millis(500);

/// Load options from the S3 table function's properties (`format`, `column_separator`,
/// `line_delimiter`, `strip_outer_array`, `compress_type`, …; credentials and `uri` are not
/// load options).
pub fn load_options(source: &[(String, String)]) -> Result<LoadOptions, String> {
    let mut headers = HeaderMap::new();
    for (key, value) in source {
        if key == "uri" || key.starts_with("s3.") || key == "provider" {
            continue;
        }
        let name = HeaderName::from_bytes(key.as_bytes())
            .map_err(|_| format!("invalid S3 property name {key}"))?;
        let value = HeaderValue::from_str(value)
            .map_err(|_| format!("the value of the S3 property {key} is not valid"))?;
        headers.insert(name, value);
    }
    parse_options(&headers)
}

/// Starts the runner on the current Tokio runtime; the task returns once `stop` is set.
pub fn spawn(shared: Arc<Shared>, stop: watch::Receiver<bool>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(run(shared, stop))
}

async fn run(shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    loop {
        if *stop.borrow() {
            return;
        }
        let (due, next) = due_jobs(&shared);
        for (name, generation) in due {
            run_task(&shared, &name, generation).await;
        }
        let wait = next
            .map(|t| t.saturating_duration_since(Instant::now()))
            .unwrap_or(IDLE_CHECK)
            .min(IDLE_CHECK);
        tokio::select! {
            _ = stop.changed() => {}
            _ = shared.jobs.wait(wait) => {}
        }
    }
}

/// Jobs whose poll is due (with their generation), and the earliest poll after now.
fn due_jobs(shared: &Shared) -> (Vec<(String, u64)>, Option<Instant>) {
    let now = Instant::now();
    let mut jobs = shared.jobs.lock();
    let mut due = Vec::new();
    let mut next: Option<Instant> = None;
    let mut ids = Vec::new();
    for job in jobs.by_name.values_mut() {
        if job.status == Status::Paused {
            continue;
        }
        match job.next_poll {
            Some(at) if at > now => next = Some(next.map_or(at, |n| n.min(at))),
            _ => {
                job.status = Status::Running;
                if job.current.is_none() {
                    ids.push(job.name.clone());
                }
                due.push((job.name.clone(), job.generation));
            }
        }
    }
    for name in ids {
        let id = jobs.next_id();
        if let Some(job) = jobs.by_name.get_mut(&name) {
            job.current = Some(Task {
                id,
                label: format!("label_{}_{id}", job.id),
                status: "RUNNING".into(),
                error_msg: String::new(),
                create_time: now_text(),
                start_time: String::new(),
                finish_time: String::new(),
                statistic: Statistic::default(),
                running_offset: "{}".into(),
            });
        }
    }
    (due, next)
}

/// What a task needs from its job, copied out of the registry.
struct Plan {
    job: Job,
    root: std::path::PathBuf,
}

/// Runs one task of `name` if the job is still in `generation`.
async fn run_task(shared: &Arc<Shared>, name: &str, generation: u64) {
    let Some(plan) = snapshot(shared, name, generation) else {
        return;
    };
    let listing = {
        let (root, source) = (plan.root.clone(), plan.job.source("uri").map(str::to_owned));
        tokio::task::spawn_blocking(move || {
            let uri = source.ok_or("the job has no uri")?;
            let (bucket, pattern) = s3::split_uri(&uri)?;
            s3::list(&root, &bucket, &pattern)
        })
        .await
        .unwrap_or_else(|e| Err(e.to_string()))
    };
    let objects = match listing {
        Ok(objects) => objects,
        Err(message) => return fail(shared, name, generation, message),
    };
    let end_offset = objects.last().map(|o| o.key.clone());
    let pending: Vec<s3::Object> = objects
        .into_iter()
        .filter(|o| {
            plan.job
                .offset
                .as_ref()
                .is_none_or(|off| o.key.as_bytes() > off.as_bytes())
        })
        .collect();
    let batch = take_batch(
        pending,
        plan.job.max_batch_files(),
        plan.job.max_batch_bytes(),
    );
    let (Some(first), Some(last)) = (batch.first(), batch.last()) else {
        // Nothing new: poll again after max_interval.
        let mut jobs = shared.jobs.lock();
        if let Some(job) = jobs
            .by_name
            .get_mut(name)
            .filter(|j| j.generation == generation)
        {
            job.end_offset = end_offset.or(job.end_offset.take());
            job.next_poll = Some(Instant::now() + job.max_interval());
        }
        return;
    };
    let running_offset =
        serde_json::json!({ "startFile": first.key, "endFile": last.key }).to_string();
    let label = {
        let mut jobs = shared.jobs.lock();
        let Some(job) = jobs
            .by_name
            .get_mut(name)
            .filter(|j| j.generation == generation)
        else {
            return;
        };
        job.end_offset = end_offset;
        let Some(task) = job.current.as_mut() else {
            return;
        };
        task.start_time = now_text();
        task.running_offset = running_offset;
        task.label.clone()
    };
    let last_key = last.key.clone();
    let statistic = Statistic {
        scanned_rows: 0,
        load_bytes: batch.iter().map(|o| o.size).sum(),
        file_number: batch.len() as u64,
        file_size: batch.iter().map(|o| o.size).sum(),
    };
    let decoded = {
        let (shared, job) = (shared.clone(), plan.job.clone());
        tokio::task::spawn_blocking(move || read_files(&shared, &job, &batch))
            .await
            .unwrap_or_else(|e| Err(e.to_string()))
    };
    let decoded = match decoded {
        Ok(d) => d,
        Err(message) => return fail(shared, name, generation, message),
    };
    commit(
        shared, name, generation, &label, decoded, statistic, last_key,
    );
}

fn snapshot(shared: &Shared, name: &str, generation: u64) -> Option<Plan> {
    let jobs = shared.jobs.lock();
    let job = jobs.by_name.get(name)?;
    if job.generation != generation || job.status != Status::Running {
        return None;
    }
    Some(Plan {
        job: job.clone(),
        root: shared.config.s3_root.clone()?,
    })
}

/// The next files: at most `max_files`, and no more than `max_bytes` unless one file alone
/// is larger.
fn take_batch(pending: Vec<s3::Object>, max_files: u64, max_bytes: u64) -> Vec<s3::Object> {
    let mut batch = Vec::new();
    let mut bytes = 0u64;
    for object in pending {
        if batch.len() as u64 >= max_files
            || (!batch.is_empty() && bytes.saturating_add(object.size) > max_bytes)
        {
            break;
        }
        bytes = bytes.saturating_add(object.size);
        batch.push(object);
    }
    batch
}

/// Reads and decodes the batch's files into the target table's schema, with INSERT's
/// filtering rules (`enable_insert_strict`, `insert_max_filter_ratio`).
fn read_files(shared: &Shared, job: &Job, batch: &[s3::Object]) -> Result<Decoded, String> {
    let table = shared
        .catalog
        .table(&job.database, &job.table)
        .map_err(|e| e.to_string())?;
    let mut opts = load_options(&job.source)?;
    opts.columns = job.columns.clone();
    let mut all = Decoded::default();
    for object in batch {
        let bytes = std::fs::read(&object.path)
            .map_err(|e| format!("cannot read s3 object {}: {e}", object.key))?;
        let decoded = decode(&table, &opts, Bytes::from(bytes))
            .map_err(|e| format!("failed to read {}: {e}", object.key))?;
        all.total_rows += decoded.total_rows;
        all.filtered_rows += decoded.filtered_rows;
        all.error_log.extend(decoded.error_log);
        all.batches.extend(decoded.batches);
    }
    let strict = job
        .session_var("enable_insert_strict")
        .is_none_or(|v| !v.eq_ignore_ascii_case("false"));
    let ratio: f64 = job
        .session_var("insert_max_filter_ratio")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1.0);
    let first = all.error_log.first().cloned().unwrap_or_default();
    crate::load::filtered_rows_rule(
        strict,
        ratio,
        all.filtered_rows,
        all.total_rows,
        &first,
        None,
    )?;
    Ok(all)
}

/// Commits the task: data, offset and statistics together, under the registry lock.
fn commit(
    shared: &Shared,
    name: &str,
    generation: u64,
    label: &str,
    mut decoded: Decoded,
    mut statistic: Statistic,
    last_key: String,
) {
    let mut jobs = shared.jobs.lock();
    let Some(job) = jobs.by_name.get_mut(name) else {
        return;
    };
    if job.generation != generation || job.status != Status::Running {
        return;
    }
    let result = (|| -> Result<(), (Option<i64>, String)> {
        let table = shared
            .catalog
            .table(&job.database, &job.table)
            .map_err(|e| (None, e.to_string()))?;
        let txn = shared
            .txns
            .begin(&job.database, &job.table, label)
            .map_err(|_| (None, format!("Label [{label}] has already been used.")))?;
        let (staged, unrouted) = shared
            .stage(&table, std::mem::take(&mut decoded.batches))
            .map_err(|e| (Some(txn), e.to_string()))?;
        if unrouted > 0 {
            return Err((
                Some(txn),
                "Insert has filtered data in strict mode. First error: no partition for this tuple."
                    .into(),
            ));
        }
        table
            .apply(staged)
            .map_err(|e| (Some(txn), e.to_string()))?;
        shared.txns.make_visible(txn);
        Ok(())
    })();
    match result {
        Ok(()) => {
            statistic.scanned_rows = decoded.total_rows;
            job.offset = Some(last_key);
            super::add_statistic(&mut job.statistic, &statistic);
            job.succeed_tasks += 1;
            job.next_poll = None;
            if let Some(mut task) = job.current.take() {
                task.status = "SUCCESS".into();
                task.finish_time = now_text();
                task.statistic = statistic;
                job.history.push_back(task);
                while job.history.len() > super::TASK_SHOW_COUNT {
                    job.history.pop_front();
                }
            }
            crate::persist::save_locked(shared, &jobs);
        }
        Err((txn, message)) => {
            if let Some(txn) = txn {
                shared.txns.abort(txn, &message);
            }
            drop(jobs);
            fail(shared, name, generation, message);
        }
    }
    shared.jobs.wake();
}

/// Pauses the job with `message` (the offset stays where it is).
fn fail(shared: &Shared, name: &str, generation: u64, message: String) {
    let mut jobs = shared.jobs.lock();
    if let Some(job) = jobs
        .by_name
        .get_mut(name)
        .filter(|j| j.generation == generation)
    {
        super::pause(job, Some(message));
        crate::persist::save_locked(shared, &jobs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(key: &str, size: u64) -> s3::Object {
        s3::Object {
            key: key.into(),
            path: key.into(),
            size,
        }
    }

    #[test]
    fn batches_respect_file_and_byte_bounds() {
        let files = || vec![object("a", 10), object("b", 10), object("c", 10)];
        let keys = |b: Vec<s3::Object>| b.into_iter().map(|o| o.key).collect::<Vec<_>>();
        assert_eq!(keys(take_batch(files(), 2, 1000)), ["a", "b"]);
        assert_eq!(keys(take_batch(files(), 256, 25)), ["a", "b"]);
        assert_eq!(keys(take_batch(files(), 256, 5)), ["a"]);
        assert!(take_batch(Vec::new(), 1, 1).is_empty());
    }

    #[test]
    fn s3_properties_become_load_options() {
        let opts = load_options(&[
            ("uri".into(), "s3://b/k".into()),
            ("format".into(), "csv".into()),
            ("column_separator".into(), "|".into()),
            ("s3.secret_key".into(), "x".into()),
        ])
        .unwrap();
        assert_eq!(opts.column_separator, "|");
        assert!(load_options(&[("format".into(), "orc".into())]).is_err());
    }
}
