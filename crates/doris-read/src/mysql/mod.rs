//! The MySQL-protocol transport: text protocol only (COM_QUERY), no server-side prepare,
//! no cursor fetch.

pub mod connect;
mod greeting;
mod guard;
pub mod session;
pub mod stream;
