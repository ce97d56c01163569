//! Durable state for `--data-dir`: databases, tables (DDL, ids, version and visible data)
//! and streaming jobs, written as one snapshot file after every change that Doris would
//! have logged (DDL, a visible load, a job statement, a task commit).
//!
//! A snapshot is written to a temporary file, synced and renamed over the previous one, so
//! a crash at any moment leaves either the old or the new state, never a mix. Every
//! snapshot is taken under the job registry's lock, the lock under which a streaming task
//! commits its data together with its offset: the offset on disk always belongs to the data
//! on disk (docs/streaming-jobs.md, "Behaviour to know"), which is what lets a job resume after a crash without
//! loading a file twice or skipping one.
//!
//! Not persisted: users and grants, load labels and transactions, error logs, faults,
//! Flight sessions; a running task is lost and runs again from the committed offset.
//!
//! File layout: `DORISEMU1\n`, a little-endian `u64` length and the JSON manifest, then
//! for every table in manifest order and every tablet in order a `u64` length and an Arrow
//! IPC stream of the tablet's rows (length 0 for an empty tablet).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use arrow::record_batch::RecordBatch;
use serde::{Deserialize, Serialize};

use crate::Shared;
use crate::catalog::TableIds;
use crate::error::EmulatorError;
use crate::jobs::Jobs;

const MAGIC: &[u8] = b"DORISEMU1\n";
const FILE_NAME: &str = "emulator-state.bin";

#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    next_id: u64,
    databases: Vec<DatabaseEntry>,
    jobs: Jobs,
}

#[derive(Debug, Serialize, Deserialize)]
struct DatabaseEntry {
    name: String,
    id: u64,
    tables: Vec<TableEntry>,
}

#[derive(Debug, Serialize, Deserialize)]
struct TableEntry {
    ddl: String,
    ids: TableIds,
    version: u64,
}

/// The snapshot file in `dir`.
pub fn state_file(dir: &Path) -> PathBuf {
    dir.join(FILE_NAME)
}

/// Writes a snapshot if the emulator has a data directory (errors go to stderr: a failed
/// snapshot must not fail the load that triggered it, as a full disk would on a real FE).
pub fn save(shared: &Shared) {
    if shared.config.data_dir.is_some() {
        let jobs = shared.jobs.lock();
        save_locked(shared, &jobs);
    }
}

/// [`save`] for a caller that already holds the job registry's lock.
pub fn save_locked(shared: &Shared, jobs: &Jobs) {
    let Some(dir) = &shared.config.data_dir else {
        return;
    };
    if let Err(e) = write_snapshot(shared, jobs, dir) {
        eprintln!(
            "doris-emulator: cannot write the snapshot in {}: {e}",
            dir.display()
        );
    }
}

fn write_snapshot(shared: &Shared, jobs: &Jobs, dir: &Path) -> Result<(), EmulatorError> {
    let io = |e: std::io::Error| EmulatorError::Internal(e.to_string());
    let (next_id, databases) = shared.catalog.export()?;
    let mut entries = Vec::new();
    let mut bodies: Vec<Vec<u8>> = Vec::new();
    for (name, id, tables) in databases {
        let mut table_entries = Vec::new();
        for table in tables {
            table_entries.push(TableEntry {
                ddl: crate::mysql::show::table_ddl(
                    &table,
                    doris_sql::Spelling::Lower,
                    crate::mysql::show::NameQuoting::Escaped,
                ),
                ids: TableIds::of(&table),
                version: table.version(),
            });
            for batches in table.tablet_batches()? {
                bodies.push(ipc_bytes(&table.arrow_schema, &batches)?);
            }
        }
        entries.push(DatabaseEntry {
            name,
            id,
            tables: table_entries,
        });
    }
    let manifest = Manifest {
        next_id,
        databases: entries,
        jobs: Jobs {
            next_id: jobs.next_id,
            by_name: jobs.by_name.clone(),
        },
    };
    let manifest =
        serde_json::to_vec(&manifest).map_err(|e| EmulatorError::Internal(e.to_string()))?;
    std::fs::create_dir_all(dir).map_err(io)?;
    let tmp = dir.join(format!("{FILE_NAME}.tmp"));
    {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&tmp).map_err(io)?);
        file.write_all(MAGIC).map_err(io)?;
        file.write_all(&(manifest.len() as u64).to_le_bytes())
            .map_err(io)?;
        file.write_all(&manifest).map_err(io)?;
        for body in &bodies {
            file.write_all(&(body.len() as u64).to_le_bytes())
                .map_err(io)?;
            file.write_all(body).map_err(io)?;
        }
        let file = file.into_inner().map_err(|e| io(e.into_error()))?;
        file.sync_all().map_err(io)?;
    }
    std::fs::rename(&tmp, state_file(dir)).map_err(io)?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

fn ipc_bytes(
    schema: &arrow::datatypes::SchemaRef,
    batches: &[RecordBatch],
) -> Result<Vec<u8>, EmulatorError> {
    if batches.iter().all(|b| b.num_rows() == 0) {
        return Ok(Vec::new());
    }
    let internal = |e: arrow::error::ArrowError| EmulatorError::Internal(e.to_string());
    let mut out = Vec::new();
    let mut writer =
        arrow::ipc::writer::StreamWriter::try_new(&mut out, schema).map_err(internal)?;
    for batch in batches {
        writer.write(batch).map_err(internal)?;
    }
    writer.finish().map_err(internal)?;
    drop(writer);
    Ok(out)
}

/// Loads the snapshot in `dir` into an empty emulator; `false` when there is none.
pub fn restore(shared: &Shared, dir: &Path) -> Result<bool, EmulatorError> {
    let path = state_file(dir);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => {
            return Err(EmulatorError::Internal(format!(
                "cannot read {}: {e}",
                path.display()
            )));
        }
    };
    let corrupt =
        || EmulatorError::Internal(format!("{} is not an emulator snapshot", path.display()));
    let mut reader = std::io::Cursor::new(bytes.as_slice());
    let mut magic = [0u8; MAGIC.len()];
    reader.read_exact(&mut magic).map_err(|_| corrupt())?;
    if magic != MAGIC {
        return Err(corrupt());
    }
    let next = |reader: &mut std::io::Cursor<&[u8]>| -> Result<Vec<u8>, EmulatorError> {
        let mut len = [0u8; 8];
        reader.read_exact(&mut len).map_err(|_| corrupt())?;
        let len = usize::try_from(u64::from_le_bytes(len)).map_err(|_| corrupt())?;
        let mut body = vec![0u8; len];
        reader.read_exact(&mut body).map_err(|_| corrupt())?;
        Ok(body)
    };
    let manifest: Manifest = serde_json::from_slice(&next(&mut reader)?).map_err(|_| corrupt())?;
    for db in &manifest.databases {
        shared.catalog.restore_database(&db.name, db.id)?;
        for table in &db.tables {
            let mut data = Vec::with_capacity(table.ids.tablets.len());
            for _ in &table.ids.tablets {
                let body = next(&mut reader)?;
                data.push(read_ipc(&body)?);
            }
            shared
                .catalog
                .restore_table(&db.name, &table.ddl, &table.ids, table.version, data)?;
        }
    }
    shared.catalog.reserve_ids(manifest.next_id)?;
    let mut jobs = manifest.jobs;
    for job in jobs.by_name.values_mut() {
        // The running task died with the process; the job goes on from its offset.
        job.current = None;
        job.next_poll = None;
    }
    shared.jobs.restore(jobs);
    Ok(true)
}

fn read_ipc(body: &[u8]) -> Result<Vec<RecordBatch>, EmulatorError> {
    if body.is_empty() {
        return Ok(Vec::new());
    }
    let reader = arrow::ipc::reader::StreamReader::try_new(std::io::Cursor::new(body), None)
        .map_err(|e| EmulatorError::Internal(e.to_string()))?;
    reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| EmulatorError::Internal(e.to_string()))
}
