//! doris-read's transports against the Doris emulator, as one test binary (each module
//! would otherwise link the emulator, DataFusion included, into a binary of its own):
//! the MySQL and Flight SQL transports, the MySQL link's authentication, split reads.
//! (`statement_logging.rs` stays apart: it installs a process-wide log subscriber.)

mod flight_transport;
mod mysql_auth;
mod mysql_transport;
mod split;
