//! SELECT on the MySQL face (DataFusion underneath), checked with the `mariadb` client and
//! sqlx's text protocol: values in Doris's text forms, `TABLET(...)` restricting the scan,
//! privileges, and a result stream cut by a fault.

// Test code: a failed unwrap is a failed test, with the value in the message.
#![allow(clippy::unwrap_used)]

use std::process::Command;
use std::str::FromStr;
use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, Int64Array, ListArray, StringArray,
    TimestampMillisecondArray,
};
use arrow::datatypes::Int32Type;
use arrow::record_batch::RecordBatch;
use doris_emulator::faults::Fault;
use doris_emulator::{Emulator, EmulatorConfig};
use futures::TryStreamExt;
use sqlx::mysql::{MySqlConnectOptions, MySqlConnection};
use sqlx::{Column, Connection, Row, TypeInfo};

const DDL: &str = "
CREATE DATABASE demo;
CREATE TABLE demo.t (
  `id` BIGINT NOT NULL,
  `name` VARCHAR(20) NULL,
  `amount` DECIMAL(20, 6) NULL,
  `ts` DATETIME(3) NULL,
  `d` DATE NULL,
  `ok` BOOLEAN NULL,
  `big` LARGEINT NULL,
  `tags` ARRAY<INT> NULL
) DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 4;
CREATE USER 'bob'@'%' IDENTIFIED BY 'pw';
GRANT LOAD_PRIV ON demo.t TO 'bob'@'%';
";

async fn emulator(rows: i64) -> Emulator {
    let e = Emulator::start(EmulatorConfig::default()).await.unwrap();
    e.execute(None, DDL).unwrap();
    let table = e.shared().catalog.table("demo", "t").unwrap();
    let ids: Vec<i64> = (0..rows).collect();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids.clone())),
        Arc::new(StringArray::from_iter(
            ids.iter().map(|i| (i % 3 != 0).then(|| format!("n{i}"))),
        )),
        Arc::new(
            Decimal128Array::from_iter(ids.iter().map(|i| Some(i128::from(*i) * 1_500_000)))
                .with_precision_and_scale(20, 6)
                .unwrap(),
        ),
        Arc::new(TimestampMillisecondArray::from_iter(
            ids.iter().map(|i| Some(1_706_702_400_123 + i)),
        )),
        Arc::new(Date32Array::from_iter(
            ids.iter().map(|i| Some(19_753 + *i as i32)),
        )),
        Arc::new(BooleanArray::from_iter(
            ids.iter().map(|i| Some(i % 2 == 0)),
        )),
        Arc::new(StringArray::from_iter(ids.iter().map(|i| {
            Some(format!(
                "170141183460469231731687303715884105{:03}",
                i % 1000
            ))
        }))),
        Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(
            ids.iter().map(|i| Some(vec![Some(*i as i32), None])),
        )),
    ];
    let batch = RecordBatch::try_new(table.arrow_schema.clone(), columns).unwrap();
    e.commit_rows("demo", "t", vec![batch]).unwrap();
    e
}

fn mariadb(e: &Emulator, user: &str, sql: &str) -> (String, String) {
    let out = Command::new("mariadb")
        .args(["-h127.0.0.1", "--skip-ssl", "--batch", "--raw"])
        .arg(format!("-P{}", e.query_addr().port()))
        .arg(format!("-u{user}"))
        .arg(if user == "root" {
            "--password="
        } else {
            "--password=pw"
        })
        .args(["-e", sql])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

async fn connect(e: &Emulator) -> MySqlConnection {
    let options = MySqlConnectOptions::from_str(&format!(
        "mysql://root@127.0.0.1:{}/demo",
        e.query_addr().port()
    ))
    .unwrap()
    .pipes_as_concat(false)
    .no_engine_substitution(false)
    .timezone(None)
    .set_names(false);
    MySqlConnection::connect_with(&options).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_client_reads_values_in_doris_text_forms() {
    let e = emulator(5).await;
    let (out, err) = mariadb(
        &e,
        "root",
        "SELECT id, name, amount, ts, d, ok, big, tags FROM demo.t WHERE id >= 2 ORDER BY id",
    );
    assert_eq!(err, "");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "id\tname\tamount\tts\td\tok\tbig\ttags");
    assert_eq!(
        lines[1],
        "2\tn2\t3.000000\t2024-01-31 12:00:00.125\t2024-02-02\t1\t170141183460469231731687303715884105002\t[2, null]"
    );
    assert_eq!(lines[2].split('\t').nth(1), Some("NULL"));
    assert_eq!(lines.len(), 4);
    let (out, _) = mariadb(&e, "root", "SELECT count(*) AS n, sum(amount) FROM demo.t");
    assert_eq!(out.lines().nth(1), Some("5\t15.000000"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tablet_hints_restrict_the_scan_to_those_tablets() {
    let e = emulator(1000).await;
    let table = e.shared().catalog.table("demo", "t").unwrap();
    let per_tablet = table.rows_per_tablet().unwrap();
    let mut conn = connect(&e).await;
    let mut total = 0;
    for (tablet, expected) in table.tablets.iter().zip(&per_tablet) {
        let sql = format!(
            "SELECT `id` FROM `demo`.`t` TABLET({}) WHERE `id` >= 0",
            tablet.id
        );
        let rows = sqlx::raw_sql(&sql).fetch_all(&mut conn).await.unwrap();
        assert_eq!(rows.len(), *expected, "tablet {}", tablet.id);
        total += rows.len();
    }
    assert_eq!(total, 1000);
    let two = format!(
        "SELECT count(*) FROM demo.t TABLET({}, {})",
        table.tablets[0].id, table.tablets[1].id
    );
    let row = sqlx::raw_sql(&two).fetch_one(&mut conn).await.unwrap();
    let n: &str = row.try_get_unchecked::<&str, _>(0).unwrap_or("?");
    assert_eq!(n, (per_tablet[0] + per_tablet[1]).to_string());
    let bad = sqlx::raw_sql("SELECT id FROM demo.t TABLET(1)")
        .fetch_all(&mut conn)
        .await
        .unwrap_err();
    assert!(bad.to_string().contains("tablet 1 does not exist"), "{bad}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn column_definitions_follow_doris() {
    let e = emulator(3).await;
    let mut conn = connect(&e).await;
    let row = sqlx::raw_sql(
        "SELECT id, name, amount, ts, d, ok, big, tags, count(*) OVER () AS c FROM t LIMIT 1",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    let types: Vec<String> = row
        .columns()
        .iter()
        .map(|c| c.type_info().name().to_owned())
        .collect();
    assert_eq!(
        types,
        [
            "BIGINT", "CHAR", "DECIMAL", "DATETIME", "DATE", "TINYINT", "CHAR", "CHAR", "BIGINT"
        ],
        "{types:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn select_needs_select_privilege_and_an_existing_table() {
    let e = emulator(1).await;
    let (_, err) = mariadb(&e, "bob", "SELECT * FROM demo.t");
    assert!(
        err.contains("ERROR 1105") && err.contains("SELECT command denied to user 'bob'"),
        "{err}"
    );
    let (_, err) = mariadb(&e, "root", "SELECT * FROM demo.nope");
    assert!(
        err.contains("Table [nope] does not exist in database [demo]."),
        "{err}"
    );
}

/// Functions over table columns answer as Doris's do (a filter on `from_base64`, as a
/// client that keeps quoting out of its SQL writes it; `concat` NULL when one argument is
/// NULL; `length` in bytes), and a function the emulator does not run is refused by name
/// in Doris's error shape, not answered with DataFusion's meaning.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_functions_read_the_sessions_time_zone() {
    let e = emulator(1).await;
    // Doris's default zone (the FE's), then a zone the session sets, by offset and by name;
    // `unix_timestamp` reads a local time in the same zone.
    let (out, err) = mariadb(
        &e,
        "root",
        "SELECT from_unixtime(0), unix_timestamp('1970-01-01 08:00:00'); \
         SET time_zone = '+00:00'; SELECT from_unixtime(0), unix_timestamp('1970-01-01 08:00:00'); \
         SET time_zone = 'America/New_York'; SELECT from_unixtime(1700000000, '%H:%i')",
    );
    assert_eq!(err, "");
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| !l.contains("from_unixtime"))
        .collect();
    assert_eq!(
        rows,
        [
            "1970-01-01 08:00:00\t0",
            "1970-01-01 00:00:00\t28800",
            "17:13"
        ],
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn division_and_remainder_answer_as_doris() {
    let e = emulator(6).await;
    // Whole numbers divide into a DOUBLE; a zero divisor answers NULL; DIV divides whole
    // numbers; `mod` is `%`, `pmod` Doris's `(x % y + y) % y` (its manual's -13, 5 is 2);
    // a filter on a quotient sees the fraction (ids 0…5: id / 2 > 1.5 is 4, 5).
    let (out, err) = mariadb(
        &e,
        "root",
        "SELECT 5 / 2 AS a, 1 / 3 AS b, 5 / 0 AS c, 7 % 0 AS d, 7 % 3 AS e, 7 DIV 2 AS f, \
         -7 DIV 2 AS g, 7 DIV 0 AS h, 1.5 / 0 AS i, mod(-13, 5) AS j, pmod(-13, 5) AS k, \
         pmod(13, -5) AS l, pmod(13, 0) AS m; \
         SELECT id FROM demo.t WHERE id / 2 > 1.5 AND id % 0 IS NULL ORDER BY id",
    );
    assert_eq!(err, "");
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with("a\t") && *l != "id")
        .collect();
    assert_eq!(
        rows,
        [
            "2.5\t0.3333333333333333\tNULL\tNULL\t1\t3\t-3\tNULL\tNULL\t-3\t2\t-2\tNULL",
            "4",
            "5"
        ],
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn now_is_the_local_time_in_the_sessions_zone() {
    let e = emulator(1).await;
    // Seconds from `now()` read back in the session's zone to the clock's, and the minutes
    // from UTC's clock to the session's: 8 hours in Doris's default zone, -5 in the zone
    // set (a second may tick between the calls); `now(p)` keeps `p` digits.
    let query = "SELECT unix_timestamp(now()) - unix_timestamp(), \
                 timestampdiff(MINUTE, utc_timestamp(), now(6)), \
                 datediff(curdate(), CURRENT_DATE), now(), now(3), CURRENT_TIMESTAMP";
    let (out, err) = mariadb(
        &e,
        "root",
        &format!("{query}; SET time_zone = '-05:00'; {query}"),
    );
    assert_eq!(err, "");
    let rows: Vec<Vec<&str>> = out
        .lines()
        .filter(|l| !l.contains("unix_timestamp"))
        .map(|l| l.split('\t').collect())
        .collect();
    assert_eq!(rows.len(), 2, "{out}");
    for (row, hours) in rows.iter().zip([8i64, -5]) {
        let number = |i: usize| row[i].parse::<i64>().unwrap();
        assert!(number(0).abs() <= 1, "{out}");
        assert!((number(1) - hours * 60).abs() <= 1, "{out}");
        assert_eq!(number(2), 0, "{out}");
        assert_eq!(
            [row[3].len(), row[4].len(), row[5].len()],
            [19, 23, 19],
            "{out}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn datetime_text_that_names_its_zone_reads_in_the_sessions_zone() {
    let e = emulator(1).await;
    let (out, err) = mariadb(
        &e,
        "root",
        "CREATE DATABASE z; CREATE TABLE z.e (id INT, at DATETIME) DUPLICATE KEY(id) \
         DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ('replication_num' = '1'); \
         INSERT INTO z.e VALUES (1, '2024-01-01 08:00:00'), (2, '2024-01-01 09:00:00'); \
         SELECT id FROM z.e WHERE at = '2024-01-01 00:00:00 UTC'; \
         SELECT id FROM z.e WHERE at IN ('2024-01-01 02:00:00+01:00', '2024-01-01T01:00:00Z'); \
         SELECT id FROM z.e WHERE at = TIMESTAMP '2024-01-01 01:00:00+01:00'; \
         SELECT CAST('2024-01-01 00:00:00.125Z' AS DATETIME(3)) AS c, \
         days_add('2023-12-31 23:00:00 America/New_York', 1) AS d; \
         SET time_zone = '+00:00'; \
         SELECT id FROM z.e WHERE at BETWEEN '2024-01-01 09:00:00+01:00' AND '2024-01-01 17:00:00 CST'",
    );
    assert_eq!(err, "");
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with("id") && !l.starts_with("c\t"))
        .collect();
    assert_eq!(
        rows,
        [
            "1",
            "2",
            "1",
            "2024-01-01 08:00:00.125\t2024-01-02 12:00:00",
            "1",
            "2",
        ],
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doris_functions_run_over_columns_and_others_are_refused_by_name() {
    let e = emulator(6).await;
    let (out, err) = mariadb(
        &e,
        "root",
        "SELECT id FROM demo.t WHERE name = from_base64('bjQ=') OR name = from_base64(to_base64('n5')) ORDER BY id",
    );
    assert_eq!(err, "");
    assert_eq!(out, "id\n4\n5\n");
    let (out, err) = mariadb(
        &e,
        "root",
        "SELECT concat(name, '!'), length(concat(name, '\u{00e9}')), substr(name, -1) FROM demo.t WHERE id IN (3, 4) ORDER BY id",
    );
    assert_eq!(err, "");
    assert_eq!(
        out.lines().skip(1).collect::<Vec<_>>(),
        ["NULL\tNULL\tNULL", "n4!\t4\t4"]
    );
    let (_, err) = mariadb(&e, "root", "SELECT to_hex(id) FROM demo.t");
    assert!(
        err.contains("ERROR 1105")
            && err.contains(
                "errCode = 2, detailMessage = the Doris emulator does not run the function 'to_hex'"
            ),
        "{err}"
    );
    let (_, err) = mariadb(&e, "root", "SELECT locate('a') FROM demo.t");
    assert!(
        err.contains("Can not found function 'locate' which has 1 arity"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn date_functions_run_over_date_and_datetime_columns_as_doris_types_them() {
    // `d` is 2024-01-31 plus the id in days, `ts` 2024-01-31 12:00:00.123 plus the id in
    // milliseconds (a DATETIME(3)): a DATE stays a DATE under day and month arithmetic
    // and becomes a DATETIME under hours; a DATETIME keeps its precision; a month that
    // has no such day ends on its last one.
    let e = emulator(3).await;
    let (out, err) = mariadb(
        &e,
        "root",
        "SELECT id, date_add(d, INTERVAL 1 MONTH), months_add(ts, 1), date(ts), hours_add(d, 1), \
         dayname(d), date_format(ts, '%Y/%m/%d %H:%i:%s.%f') FROM demo.t \
         WHERE year(d) = 2024 AND month(d) = 2 AND datediff(d, ts) > 0 ORDER BY id",
    );
    assert_eq!(err, "");
    assert_eq!(
        out.lines().skip(1).collect::<Vec<_>>(),
        [
            "1\t2024-03-01\t2024-02-29 12:00:00.124\t2024-01-31\t2024-02-01 01:00:00\tThursday\t2024/01/31 12:00:00.124000",
            "2\t2024-03-02\t2024-02-29 12:00:00.125\t2024-01-31\t2024-02-02 01:00:00\tFriday\t2024/01/31 12:00:00.125000",
        ]
    );
    // EXTRACT runs as the function Doris computes the field with (MySQL's week mode 0).
    let (out, err) = mariadb(
        &e,
        "root",
        "SELECT extract(week FROM d), extract(microsecond FROM ts) FROM demo.t WHERE id = 1",
    );
    assert_eq!(err, "");
    assert_eq!(out.lines().nth(1), Some("4\t124000"));
    let (_, err) = mariadb(&e, "root", "SELECT extract(epoch FROM d) FROM demo.t");
    assert!(err.contains("does not run the function 'extract'"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_result_stream_is_an_error_not_a_short_result() {
    let e = emulator(500).await;
    e.faults().arm(Fault::CutResultStream { rows: 100 }, 1);
    let mut conn = connect(&e).await;
    let mut stream = sqlx::raw_sql("SELECT id FROM t").fetch(&mut conn);
    let mut seen = 0;
    let outcome = loop {
        match stream.try_next().await {
            Ok(Some(_)) => seen += 1,
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    assert!(
        outcome.is_err(),
        "the stream ended cleanly after {seen} rows"
    );
    assert_eq!(seen, 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_values_and_insert_select_commit_like_a_load() {
    let e = emulator(3).await;
    let (_, err) = mariadb(
        &e,
        "root",
        "INSERT INTO demo.t (id, name, amount, ts, d) VALUES (100, 'x', 1.5, '2024-03-01 10:00:00.5', '2024-03-01'), (101, NULL, NULL, NULL, NULL)",
    );
    assert_eq!(err, "");
    let (out, _) = mariadb(
        &e,
        "root",
        "SELECT id, name, amount, ts, d FROM demo.t WHERE id >= 100 ORDER BY id",
    );
    assert_eq!(
        out.lines().skip(1).collect::<Vec<_>>(),
        [
            "100\tx\t1.500000\t2024-03-01 10:00:00.500\t2024-03-01",
            "101\tNULL\tNULL\tNULL\tNULL"
        ]
    );
    let (_, err) = mariadb(
        &e,
        "root",
        "USE demo; INSERT INTO t SELECT * FROM t WHERE id < 2",
    );
    assert_eq!(err, "");
    let (out, _) = mariadb(&e, "root", "SELECT count(*) FROM demo.t");
    assert_eq!(out.lines().nth(1), Some("7"));
    // Strict: a NULL in the NOT NULL key fails the whole statement, nothing is written.
    let (_, err) = mariadb(
        &e,
        "root",
        "INSERT INTO demo.t (id, name) VALUES (200, 'a'), (NULL, 'b')",
    );
    assert!(
        err.contains("Insert has filtered data in strict mode"),
        "{err}"
    );
    let (_, err) = mariadb(&e, "root", "INSERT INTO demo.t (id, name) VALUES (1)");
    assert!(
        err.contains("Column count doesn't match value count"),
        "{err}"
    );
    let (out, _) = mariadb(&e, "root", "SELECT count(*) FROM demo.t");
    assert_eq!(out.lines().nth(1), Some("7"));
    // bob may load into demo.t but not read it.
    let (_, err) = mariadb(&e, "bob", "INSERT INTO demo.t (id) VALUES (300)");
    assert_eq!(err, "");
    let (_, err) = mariadb(&e, "bob", "INSERT INTO demo.t SELECT * FROM demo.t");
    assert!(err.contains("SELECT command denied"), "{err}");
}

/// Doris refuses `=`, `<=>`, `<`, … over MAP and STRUCT values and JSON columns
/// (`ComparisonPredicate.checkLegalityBeforeTypeCoercion`); ARRAY compares. The atomic
/// overwrite's check leaves such columns out (`doris_write::staging::null_safe_comparable`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn complex_values_are_not_compared() {
    let e = Emulator::start(EmulatorConfig::default()).await.unwrap();
    e.execute(
        None,
        "CREATE DATABASE demo;
         CREATE TABLE demo.c (`id` BIGINT NOT NULL, `m` MAP<STRING, INT> NULL,
           `s` STRUCT<a: INT> NULL, `j` JSON NULL, `l` ARRAY<INT> NULL)
           DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1;",
    )
    .unwrap();
    let mut conn = connect(&e).await;
    for (sql, kind) in [
        ("SELECT id FROM demo.c WHERE m <=> m", "complex"),
        ("SELECT id FROM demo.c WHERE s = s", "complex"),
        ("SELECT id FROM demo.c WHERE j <=> j", "json"),
        (
            "SELECT COUNT(*) FROM demo.c a WHERE NOT EXISTS \
             (SELECT 1 FROM demo.c b WHERE a.m <=> b.m)",
            "complex",
        ),
    ] {
        let refused = sqlx::raw_sql(sql).fetch_all(&mut conn).await.unwrap_err();
        let text = refused.to_string();
        assert!(
            text.contains(&format!(
                "comparison predicate could not contains {kind} type"
            )),
            "{sql}: {text}"
        );
    }
    let arrays = sqlx::raw_sql("SELECT id FROM demo.c WHERE l <=> l AND id = 1")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert!(arrays.is_empty());
}
