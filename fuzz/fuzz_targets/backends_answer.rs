//! Any `/api/backends` answer (a server's bytes, hostile or not) either fails with a typed
//! error or gives hosts that print and parse back as themselves: the form in which the
//! redirect and Flight allowlists compare them.
#![no_main]

use doris_connection::{HostPort, parse_backends};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|body: &[u8]| {
    if let Ok(hosts) = parse_backends(body) {
        for host in hosts {
            let text = host.to_string();
            assert_eq!(HostPort::parse(&text).as_ref(), Some(&host), "{text:?}");
        }
    }
});
