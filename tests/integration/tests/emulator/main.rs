//! doris-streamload's examples run against the Doris emulator, as one test binary (each
//! module would otherwise link the emulator, DataFusion included, into a binary of its
//! own): the README's quick start, the exactly-once `atomic_write` example, and the atomic
//! write on each Doris release the emulator plays, and doris-write's `WriteRun` driven as an
//! engine's sink drives it.

mod atomic_write;
mod readme;
mod releases;
mod write_run;
