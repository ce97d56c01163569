//! Rendered literals evaluated by a real MySQL-protocol server come back unchanged.
//!
//! `SELECT <literal>` through COM_QUERY on MariaDB: any string (quotes, backslashes, NUL,
//! newlines, non-ASCII; and under `NO_BACKSLASH_ESCAPES` no string leaves its literal), and the other literal kinds whose text form MariaDB shares with
//! Doris (integers, LARGEINT, decimals, binary, dates, datetimes, times).

// Test code: a failed unwrap is a failed test, with the value in the message.
#![allow(clippy::unwrap_used)]

use daft_doris_integration_tests::mariadb::mariadb;
use doris_sql::{Date, DateTime, Decimal, Literal, Time};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// Strings biased towards the characters that break naive escaping.
fn tricky_string() -> impl Strategy<Value = String> {
    let special = prop::sample::select(vec![
        "'", "\"", "\\", "\0", "\n", "\r", "\t", "\u{1a}", "`", "%", "_", "''", "\\'", "é", "🐢",
        "--", "/*", ";", " ", "a", "Z",
    ]);
    prop_oneof![
        any::<String>(),
        prop::collection::vec(special, 0..12).prop_map(|parts| parts.concat()),
    ]
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

#[test]
fn any_string_literal_round_trips_through_mariadb() {
    let db = mariadb();
    runner(1000)
        .run(&tricky_string(), |s| {
            let sql = format!("SELECT {}", Literal::String(s.clone()).to_sql().unwrap());
            prop_assert_eq!(db.query_cell(&sql), Some(s.into_bytes()));
            Ok(())
        })
        .unwrap();
}

/// Under `NO_BACKSLASH_ESCAPES` (a mode Doris's parser knows too) a backslash is an
/// ordinary character, so a quote escaped as `\'` would end the literal and the rest of
/// the value would be read as SQL. Quotes are doubled instead, and a value holding a
/// backslash or NUL goes as `from_base64('…')`: every rendered string stays one value in
/// this mode — the statement yields exactly its two columns, the marker intact — and reads
/// back unchanged, as it does in the default mode.
#[test]
fn no_string_literal_leaves_its_quotes_under_no_backslash_escapes() {
    let db = mariadb();
    db.execute("SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'");
    runner(1000)
        .run(&tricky_string(), |s| {
            let literal = Literal::String(s.clone()).to_sql().unwrap();
            let sql = format!("SELECT {literal} AS v, 4242 AS marker");
            let rows = db.query(&sql);
            prop_assert!(
                rows.is_ok(),
                "{:?} broke the statement: {:?}",
                s,
                rows.err()
            );
            let rows = rows.unwrap();
            prop_assert_eq!(rows.len(), 1);
            prop_assert_eq!(rows[0].len(), 2, "{:?} left its literal", s);
            prop_assert_eq!(rows[0][1].as_deref(), Some(&b"4242"[..]));
            prop_assert_eq!(rows[0][0].clone(), Some(s.into_bytes()));
            Ok(())
        })
        .unwrap();
}

#[test]
fn binary_literals_round_trip_through_mariadb() {
    let db = mariadb();
    runner(200)
        .run(&prop::collection::vec(any::<u8>(), 0..64), |bytes| {
            let sql = format!(
                "SELECT {}",
                Literal::Binary(bytes.clone()).to_sql().unwrap()
            );
            let got = db.query_cell(&sql);
            prop_assert_eq!(got, Some(bytes));
            Ok(())
        })
        .unwrap();
}

#[test]
fn numeric_literals_round_trip_through_mariadb() {
    let db = mariadb();
    let numbers = prop_oneof![
        any::<i64>().prop_map(Literal::Int64),
        any::<i128>().prop_map(Literal::LargeInt),
        any::<i8>().prop_map(Literal::Int8),
        // MariaDB's DECIMAL holds 65 digits, fewer than Doris's 76.
        ("-?[0-9]{1,30}", "[0-9]{0,30}").prop_map(|(i, f)| {
            let text = if f.is_empty() { i } else { format!("{i}.{f}") };
            Literal::Decimal(text.parse::<Decimal>().unwrap())
        }),
    ];
    runner(500)
        .run(&numbers, |lit| {
            let sql = format!("SELECT {}", lit.to_sql().unwrap());
            let text = String::from_utf8(db.query_cell(&sql).unwrap()).unwrap();
            let expected = match &lit {
                Literal::Int64(v) => v.to_string(),
                Literal::LargeInt(v) => v.to_string(),
                Literal::Int8(v) => v.to_string(),
                Literal::Decimal(d) => d.to_string(),
                _ => unreachable!(),
            };
            prop_assert_eq!(text, expected);
            Ok(())
        })
        .unwrap();
}

#[test]
fn temporal_literals_round_trip_through_mariadb() {
    let db = mariadb();
    // MariaDB's DATE starts at 1000-01-01 where Doris's starts at 0000-01-01. Every day of
    // every month: month ends and leap days (Feb 29 of 2000 and 2024, never of 1900) half
    // the time.
    let day = prop_oneof![1u8..=31, 28u8..=31];
    let date = (1000u16..=9999, 1u8..=12, day)
        .prop_filter_map("no such day", |(y, m, d)| Date::new(y, m, d).ok());
    let leap_days = prop::sample::select(vec![(2000u16, 29u8), (2024, 29), (1996, 29)])
        .prop_map(|(y, d)| Date::new(y, 2, d).unwrap());
    assert!(Date::new(1900, 2, 29).is_err() && Date::new(2023, 4, 31).is_err());
    let date = prop_oneof![3 => date, 1 => leap_days];
    let temporal = prop_oneof![
        date.clone().prop_map(Literal::Date),
        (date, 0u8..24, 0u8..60, 0u8..60, 0u32..1_000_000, 0u8..=6).prop_map(
            |(d, h, mi, s, micros, p)| {
                let step = 10u32.pow(6 - u32::from(p));
                Literal::DateTime(DateTime::new(d, (h, mi, s), micros / step * step, p).unwrap())
            }
        ),
        (
            any::<bool>(),
            0u16..=838,
            0u8..60,
            0u8..60,
            0u32..1_000_000,
            0u8..=6
        )
            .prop_map(|(neg, h, mi, s, micros, p)| {
                let step = 10u32.pow(6 - u32::from(p));
                Literal::Time(Time::new(neg, (h, mi, s), micros / step * step, p).unwrap())
            }),
    ];
    runner(500)
        .run(&temporal, |lit| {
            let sql = format!("SELECT {}", lit.to_sql().unwrap());
            let text = String::from_utf8(db.query_cell(&sql).unwrap()).unwrap();
            let expected = match &lit {
                Literal::Date(d) => d.to_string(),
                Literal::DateTime(dt) => dt.to_string(),
                Literal::Time(t) => t.to_string(),
                _ => unreachable!(),
            };
            prop_assert_eq!(text, expected);
            Ok(())
        })
        .unwrap();
}
