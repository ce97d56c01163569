//! Any text either fails with a typed error or yields a schema whose key columns are
//! columns of the table.
#![no_main]

use doris_sql::parse_show_create;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(table) = parse_show_create(text) {
        assert!(!table.columns.is_empty());
        for key in &table.key_columns {
            assert!(table.column(key).is_some(), "key {key:?} is not a column");
        }
        for c in &table.columns {
            assert_eq!(c.is_key, table.key_columns.iter().any(|k| k.eq_ignore_ascii_case(&c.name)));
        }
    }
});
