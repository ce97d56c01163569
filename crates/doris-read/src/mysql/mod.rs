//! The MySQL-protocol transport's rows: text protocol only (COM_QUERY), no server-side
//! prepare, no cursor fetch, over a link of `doris-mysql` (its connect options, guard and
//! caps).

pub mod stream;
