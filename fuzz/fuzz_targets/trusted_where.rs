//! For any fragment the scanner accepts, binding every marker succeeds and the bound text
//! scans again cleanly with no markers left: binding never breaks the quoting structure.
#![no_main]

use std::collections::BTreeMap;

use doris_sql::{FragmentPiece, Literal, Param, bind_trusted_where, scan_fragment};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let Ok(pieces) = scan_fragment(text) else { return };
    let params: BTreeMap<String, Param> = pieces
        .iter()
        .filter_map(|p| match p {
            FragmentPiece::Marker(name) => Some(((*name).to_owned(), Param::from(Literal::String("v'\\:x".into())))),
            FragmentPiece::Text(_) => None,
        })
        .collect();
    match bind_trusted_where(text, &params) {
        Ok(bound) => {
            let again = scan_fragment(bound.sql())
                .unwrap_or_else(|e| panic!("bound text does not scan: {e}"));
            assert!(again.iter().all(|p| matches!(p, FragmentPiece::Text(_))), "a marker survived binding");
        }
        // Only an all-comment or blank fragment may fail once every marker has a value.
        Err(e) => assert!(e.to_string().contains("empty"), "{e}"),
    }
});
