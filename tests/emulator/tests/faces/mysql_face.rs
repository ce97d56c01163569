//! The FE MySQL face, checked with clients nobody here wrote: the `mariadb` command-line
//! client and sqlx (whose default connect statement Doris rejects).

// Test code: a failed unwrap is a failed test, with the value in the message.
#![allow(clippy::unwrap_used)]

use std::process::Command;

use crate::common;
#[path = "mysql_face/transactions.rs"]
mod transactions;

use doris_emulator::{DorisProfile, Emulator, EmulatorConfig};
use doris_sql::{DescRow, DorisType, KeyModel, parse_describe, parse_show_create};
use sqlx::mysql::MySqlConnection;
use sqlx::{Connection, Row};

const DDL: &str = "
CREATE DATABASE demo;
CREATE TABLE demo.orders (
  `id` BIGINT NOT NULL COMMENT 'pk',
  `region` VARCHAR(20) NOT NULL,
  `amount` DECIMAL(20, 6) NULL DEFAULT \"0\",
  `ts` DATETIME(3) NULL,
  `tags` ARRAY<TEXT> NULL,
  `seq` INT NULL
) UNIQUE KEY(`id`, `region`)
PARTITION BY RANGE(`id`) (PARTITION p0 VALUES LESS THAN (\"100\"), PARTITION p1 VALUES LESS THAN (MAXVALUE))
DISTRIBUTED BY HASH(`id`) BUCKETS 4
PROPERTIES (\"enable_unique_key_merge_on_write\" = \"true\", \"function_column.sequence_col\" = \"seq\");
CREATE TABLE demo.visits (
  `city` VARCHAR(20) NOT NULL,
  `n` BIGINT SUM NULL DEFAULT \"0\",
  `last` DATETIME REPLACE NULL
) AGGREGATE KEY(`city`) DISTRIBUTED BY RANDOM BUCKETS 2;
CREATE USER 'alice'@'%' IDENTIFIED BY 'pw';
GRANT SELECT_PRIV ON demo.* TO 'alice'@'%';
";

async fn emulator() -> Emulator {
    let e = Emulator::start(EmulatorConfig::default()).await.unwrap();
    e.execute(None, DDL).unwrap();
    e
}

fn mariadb(e: &Emulator, user: &str, password: &str, sql: &str) -> (String, String) {
    let out = Command::new("mariadb")
        .args(["-h127.0.0.1", "--skip-ssl", "--batch", "--raw"])
        .arg(format!("-P{}", e.query_addr().port()))
        .arg(format!("-u{user}"))
        .arg(format!("--password={password}"))
        .args(["-e", sql])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_client_reads_metadata_in_doris_shapes() {
    let e = emulator().await;
    let (out, err) = mariadb(
        &e,
        "alice",
        "pw",
        "SELECT @@version_comment; SHOW DATABASES; SHOW TABLES FROM demo",
    );
    assert!(err.is_empty(), "{err}");
    assert_eq!(
        out,
        "@@version_comment\nDoris version doris-4.1.0-emulator\nDatabase\ninformation_schema\ndemo\nTables_in_demo\norders\nvisits\n"
    );

    // SHOW CREATE TABLE parses back, with doris-sql, into the table that was created.
    let (out, _) = mariadb(&e, "root", "", "SHOW CREATE TABLE demo.orders");
    let ddl = out.lines().skip(1).collect::<Vec<_>>().join("\n");
    let ddl = ddl.strip_prefix("orders\t").unwrap().replace("\\n", "\n");
    let shown = parse_show_create(&ddl).unwrap_or_else(|err| panic!("{err}\n{ddl}"));
    let created = e.shared().catalog.table("demo", "orders").unwrap();
    assert_eq!(shown.columns, created.schema.columns);
    assert_eq!(shown.key_model, Some(KeyModel::Unique));
    assert!(shown.merge_on_write);
    assert_eq!(shown.key_columns, vec!["id", "region"]);
    assert_eq!(shown.partitioning, created.schema.partitioning);
    assert_eq!(shown.distribution, created.schema.distribution);
    assert_eq!(shown.property("function_column.sequence_col"), Some("seq"));
    assert!(
        ddl.contains("  `amount` decimal(20,6) NULL DEFAULT \"0\",\n"),
        "{ddl}"
    );

    // DESC: six columns, Yes/No, true/false, NULL default, Extra per key model.
    let (out, _) = mariadb(&e, "root", "", "USE demo; DESC visits");
    let rows: Vec<DescRow> = out
        .lines()
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            DescRow {
                field: c[0].into(),
                type_text: c[1].into(),
                null: c[2].into(),
                key: c[3].into(),
                default: (c[4] != "NULL").then(|| c[4].to_owned()),
                extra: c[5].into(),
            }
        })
        .collect();
    assert_eq!(
        out.lines().next().unwrap(),
        "Field\tType\tNull\tKey\tDefault\tExtra"
    );
    assert_eq!(rows[0].null, "No");
    assert_eq!(rows[0].key, "true");
    assert_eq!(rows[1].extra, "SUM");
    assert_eq!(rows[1].default.as_deref(), Some("0"));
    assert_eq!(rows[2].extra, "REPLACE");
    let parsed = parse_describe(&rows).unwrap();
    assert_eq!(parsed[2].ty, DorisType::DateTime { precision: 0 });
    e.shared()
        .catalog
        .table("demo", "visits")
        .unwrap()
        .schema
        .reconcile(&parsed)
        .unwrap();
}

/// What a SQLAlchemy dialect for Doris (pydoris) reflects with, in the shapes Doris's FE
/// gives (ShowExecutor): `SHOW COLUMNS` with `YES`/`NO` (not `DESC`'s `Yes`/`true`) and the
/// declared aggregation as `Extra`, `SHOW FULL TABLES` with each table's kind, and a query
/// of `information_schema` refused by name (the emulator keeps no system tables), not
/// answered as a missing table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_statements_answer_in_doris_shapes() {
    let e = emulator().await;
    let (out, err) = mariadb(&e, "root", "", "SHOW COLUMNS FROM demo.visits");
    assert!(err.is_empty(), "{err}");
    assert_eq!(
        out,
        "Field\tType\tNull\tKey\tDefault\tExtra\n\
         city\tvarchar(20)\tNO\tYES\tNULL\t\n\
         n\tbigint\tYES\tNO\t0\tSUM\n\
         last\tdatetime\tYES\tNO\tNULL\tREPLACE\n"
    );
    let (out, err) = mariadb(&e, "root", "", "SHOW FULL TABLES FROM demo");
    assert!(err.is_empty(), "{err}");
    assert_eq!(
        out,
        "Tables_in_demo\tTable_type\norders\tBASE TABLE\nvisits\tBASE TABLE\n"
    );
    // information_schema.tables as Doris's FE lists table status: the tables a user may
    // see, Doris's fixed values, the row count, the comment.
    e.execute(
        None,
        "CREATE DATABASE other; CREATE TABLE other.secret (`k` INT NOT NULL) \
         DUPLICATE KEY(`k`) DISTRIBUTED BY HASH(`k`) BUCKETS 1 COMMENT 'kept apart';",
    )
    .unwrap();
    let (_, err) = mariadb(
        &e,
        "root",
        "",
        "INSERT INTO demo.visits VALUES ('oslo', 2, NULL)",
    );
    assert!(err.is_empty(), "{err}");
    let (out, err) = mariadb(
        &e,
        "root",
        "",
        "SELECT table_catalog, table_schema, table_name, table_type, engine, table_rows, \
         table_collation, table_comment, version, create_time IS NULL \
         FROM information_schema.TABLES ORDER BY table_schema, table_name",
    );
    assert!(err.is_empty(), "{err}");
    let rows: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(
        rows,
        [
            "internal\tdemo\torders\tBASE TABLE\tDoris\t0\tutf-8\t\tNULL\t0",
            "internal\tdemo\tvisits\tBASE TABLE\tDoris\t1\tutf-8\t\tNULL\t0",
            "internal\tother\tsecret\tBASE TABLE\tDoris\t0\tutf-8\tkept apart\tNULL\t0",
        ],
        "{out}"
    );
    // A user sees the tables it holds a privilege on (pydoris's `has_table` query).
    let has_table = |user: &str, password: &str, db: &str, table: &str| {
        let sql = format!(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '{db}' AND table_name = '{table}'"
        );
        let (out, err) = mariadb(&e, user, password, &sql);
        assert!(err.is_empty(), "{err}");
        out.lines().nth(1).unwrap_or_default().to_owned()
    };
    assert_eq!(has_table("alice", "pw", "demo", "orders"), "1");
    assert_eq!(has_table("alice", "pw", "other", "secret"), "0");
    assert_eq!(has_table("root", "", "other", "secret"), "1");
    assert_eq!(has_table("root", "", "demo", "missing"), "0");
    // The other system tables are refused by name, not answered empty.
    let (_, err) = mariadb(&e, "root", "", "SELECT * FROM information_schema.columns");
    assert!(
        err.contains("ERROR 1105")
            && err
                .contains("the Doris emulator does not run queries on information_schema.columns"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn older_type_spellings_are_a_switch_and_still_parse() {
    for (spelling, amount, id) in [
        (
            doris_sql::Spelling::Upper,
            "`amount` DECIMAL(20, 6) NULL",
            "BIGINT",
        ),
        (
            doris_sql::Spelling::Legacy,
            "`amount` decimal(20, 6) NULL",
            "bigint(20)",
        ),
    ] {
        let e = Emulator::start(EmulatorConfig {
            profile: DorisProfile {
                type_spelling: spelling,
                ..DorisProfile::default()
            },
            ..EmulatorConfig::default()
        })
        .await
        .unwrap();
        e.execute(None, DDL).unwrap();
        let (out, _) = mariadb(&e, "root", "", "SHOW CREATE TABLE demo.orders");
        let ddl = out.lines().skip(1).collect::<Vec<_>>().join("\n");
        let ddl = ddl.strip_prefix("orders\t").unwrap().replace("\\n", "\n");
        assert!(ddl.contains(amount), "{spelling:?}: {ddl}");
        let shown = parse_show_create(&ddl).unwrap_or_else(|err| panic!("{err}\n{ddl}"));
        let created = e.shared().catalog.table("demo", "orders").unwrap();
        assert_eq!(shown.columns, created.schema.columns, "{spelling:?}");
        let (out, _) = mariadb(&e, "root", "", "DESC demo.orders");
        let first = out.lines().nth(1).unwrap();
        assert_eq!(first.split('\t').nth(1), Some(id), "{spelling:?}: {out}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_deprecate_eof_switch_is_negotiated_and_clients_still_read_results() {
    use tokio::io::AsyncReadExt as _;
    for on in [false, true] {
        let e = Emulator::start(EmulatorConfig {
            profile: DorisProfile {
                mysql_deprecate_eof: on,
                ..DorisProfile::default()
            },
            ..EmulatorConfig::default()
        })
        .await
        .unwrap();
        e.execute(None, DDL).unwrap();
        // The greeting's capability flags: CLIENT_DEPRECATE_EOF (1 << 24) only when switched on.
        let mut raw = tokio::net::TcpStream::connect(e.query_addr())
            .await
            .unwrap();
        let mut greeting = vec![0u8; 4096];
        let n = raw.read(&mut greeting).await.unwrap();
        let payload = &greeting[4..n];
        let version_end = 1 + payload[1..].iter().position(|b| *b == 0).unwrap();
        let at = version_end + 1 + 4 + 8 + 1;
        let low = u32::from(u16::from_le_bytes([payload[at], payload[at + 1]]));
        let high = u32::from(u16::from_le_bytes([payload[at + 5], payload[at + 6]]));
        assert_eq!((low | high << 16) & (1 << 24) != 0, on);
        // sqlx asks for DEPRECATE_EOF: text and prepared results must still frame correctly.
        let url = format!("mysql://root@127.0.0.1:{}/demo", e.query_addr().port());
        let options = common::doris_safe_sqlx(&url);
        let mut conn = MySqlConnection::connect_with(&options).await.unwrap();
        sqlx::raw_sql("INSERT INTO orders (id, region, seq) VALUES (1, 'eu', 1), (2, 'us', 2)")
            .execute(&mut conn)
            .await
            .unwrap();
        for (sql, expected) in [("SELECT id FROM orders ORDER BY id", 2), ("DESC orders", 6)] {
            let rows = sqlx::raw_sql(sql).fetch_all(&mut conn).await.unwrap();
            assert_eq!(rows.len(), expected, "deprecate_eof={on}: {sql}");
        }
        let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM orders WHERE seq >= ? ORDER BY id")
            .bind(1i32)
            .fetch_all(&mut conn)
            .await
            .unwrap();
        assert_eq!(ids, [1, 2], "deprecate_eof={on}");
        // And the mariadb client, whatever it negotiates.
        let (out, err) = mariadb(
            &e,
            "root",
            "",
            "SELECT id, region FROM demo.orders ORDER BY id",
        );
        assert!(err.is_empty(), "{err}");
        assert_eq!(out, "id\tregion\n1\teu\n2\tus\n", "deprecate_eof={on}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_columns_are_json_or_string_by_switch() {
    use sqlx::{Column, TypeInfo};
    for (json_as_string, expected) in [(false, "JSON"), (true, "CHAR")] {
        let e = Emulator::start(EmulatorConfig {
            profile: DorisProfile {
                json_as_string,
                ..DorisProfile::default()
            },
            ..EmulatorConfig::default()
        })
        .await
        .unwrap();
        e.execute(
            None,
            "CREATE DATABASE j; CREATE TABLE j.t (`k` INT NOT NULL, `doc` JSON NULL) \
             DUPLICATE KEY(`k`) DISTRIBUTED BY HASH(`k`) BUCKETS 1;",
        )
        .unwrap();
        let url = format!("mysql://root@127.0.0.1:{}/j", e.query_addr().port());
        let options = common::doris_safe_sqlx(&url);
        let mut conn = MySqlConnection::connect_with(&options).await.unwrap();
        sqlx::raw_sql("INSERT INTO t VALUES (1, '{\"a\": 1}')")
            .execute(&mut conn)
            .await
            .unwrap();
        let row = sqlx::raw_sql("SELECT doc FROM t")
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert_eq!(row.columns()[0].type_info().name(), expected);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_client_errors_match_doris() {
    let e = emulator().await;
    let (_, err) = mariadb(&e, "alice", "wrong", "SELECT 1");
    assert!(
        err.contains(
            "ERROR 1045 (28000): Access denied for user 'alice@127.0.0.1' (using password: YES)"
        ),
        "{err}"
    );
    let (_, err) = mariadb(
        &e,
        "root",
        "",
        "SET sql_mode=(SELECT CONCAT(@@sql_mode, ',PIPES_AS_CONCAT'))",
    );
    assert!(
        err.contains("ERROR 1105 (HY000) at line 1: errCode = 2, detailMessage = Set statement does't support non-constant expr."),
        "{err}"
    );
    let (_, err) = mariadb(&e, "root", "", "SET no_such_variable = 1");
    assert!(
        err.contains("ERROR 1193 (HY000) at line 1: Unknown system variable 'no_such_variable'"),
        "{err}"
    );
    let (_, err) = mariadb(&e, "root", "", "USE nope");
    assert!(
        err.contains("ERROR 1049 (42000) at line 1: Unknown database 'nope'"),
        "{err}"
    );
    let (_, err) = mariadb(&e, "root", "", "DESC demo.nope");
    assert!(
        err.contains("detailMessage = Table [nope] does not exist in database [demo]."),
        "{err}"
    );
    let (_, err) = mariadb(&e, "root", "", "CREATE DATABASE demo");
    assert!(err.contains("ERROR 1007"), "{err}");
    let (out, err) = mariadb(
        &e,
        "root",
        "",
        "SET time_zone = '+00:00', NAMES utf8mb4 COLLATE utf8mb4_unicode_ci; SELECT @@time_zone",
    );
    assert!(err.is_empty(), "{err}");
    assert_eq!(out, "@@time_zone\n+00:00\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlx_default_options_fail_as_on_doris_and_the_workaround_works() {
    let e = emulator().await;
    let url = format!("mysql://root@127.0.0.1:{}/demo", e.query_addr().port());
    // sqlx's connect statement sets sql_mode with a subquery, which Doris rejects.
    let err = MySqlConnection::connect(&url)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("Set statement does't support non-constant expr."),
        "{err}"
    );
    // The Doris-safe options send no statement on connect.
    let options = common::doris_safe_sqlx(&url);
    let mut conn = MySqlConnection::connect_with(&options).await.unwrap();
    sqlx::raw_sql("SET time_zone = '+00:00'")
        .execute(&mut conn)
        .await
        .unwrap();
    let rows = sqlx::raw_sql("DESC orders")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    assert_eq!(rows.len(), 6);
    let field: String = rows[3].try_get(0).unwrap();
    assert_eq!(field, "ts");
    let ty: String = rows[3].try_get(1).unwrap();
    assert_eq!(ty, "datetime(3)");
    // sqlx::query always prepares on the server (tests/prepared.rs has the details).
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM orders")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(n, 0);
    let bad = format!(
        "mysql://alice:nope@127.0.0.1:{}/demo",
        e.query_addr().port()
    );
    let err = MySqlConnection::connect_with(&common::doris_safe_sqlx(&bad))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("1045") && err.contains("Access denied for user 'alice@127.0.0.1'"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backend_public_endpoint_drives_redirect_policy_public() {
    let e = emulator().await;
    let (out, err) = mariadb(&e, "root", "", "SHOW BACKENDS");
    assert!(err.is_empty(), "{err}");
    assert!(
        out.starts_with("BackendId\tHost\tHeartbeatPort\tBePort\tHttpPort"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "\t127.0.0.1\t9050\t9060\t{}\t",
            e.be_http_addr().port()
        )),
        "{out}"
    );
    // Doris refuses a public endpoint without a location tag.
    let (_, err) = mariadb(
        &e,
        "root",
        "",
        "ALTER SYSTEM MODIFY BACKEND '127.0.0.1:9050' SET ('tag.public_endpoint' = 'public.example:18040')",
    );
    assert!(err.contains("ERROR 1105"), "{err}");
    let (_, err) = mariadb(
        &e,
        "root",
        "",
        "ALTER SYSTEM MODIFY BACKEND '127.0.0.1:9050' SET ('tag.location' = 'default', 'tag.public_endpoint' = 'public.example:18040')",
    );
    assert!(err.is_empty(), "{err}");
    let (out, _) = mariadb(&e, "root", "", "SHOW BACKENDS");
    assert!(out.contains("public.example:18040"), "{out}");
    let location = |policy: &str| {
        let file = std::env::temp_dir().join(format!("backend-policy-{}.csv", std::process::id()));
        std::fs::write(&file, "1\n").unwrap();
        let out = Command::new("curl")
            .args([
                "-sS",
                "-o",
                "/dev/null",
                "-D",
                "-",
                "-u",
                "root:",
                "-H",
                "Expect:100-continue",
                "-H",
                &format!("redirect-policy:{policy}"),
                "-T",
            ])
            .arg(&file)
            .arg(format!(
                "http://{}/api/demo/visits/_stream_load",
                e.fe_http_addr()
            ))
            .output()
            .unwrap();
        let head = String::from_utf8(out.stdout).unwrap().to_ascii_lowercase();
        head.lines()
            .find_map(|l| l.strip_prefix("location: ").map(|v| v.trim().to_owned()))
            .unwrap()
    };
    assert_eq!(
        location("public"),
        "http://root:@public.example:18040/api/demo/visits/_stream_load?"
    );
    assert!(location("private").starts_with("http://root:@127.0.0.1:"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn privileges_are_checked_on_every_face() {
    let e = emulator().await;
    let root = |sql: &str| {
        let (_, err) = mariadb(&e, "root", "", sql);
        assert!(err.is_empty(), "{sql}: {err}");
    };
    root("CREATE USER 'bob'@'%' IDENTIFIED BY 'b'");
    let bob = |sql: &str| mariadb(&e, "bob", "b", sql);
    let (out, _) = bob("SHOW DATABASES");
    assert_eq!(
        out, "Database\ninformation_schema\n",
        "no privilege, no database listed"
    );
    let (_, err) = bob("USE demo");
    assert!(err.contains("ERROR 1044 (42000) at line 1: Access denied for user 'bob'@'127.0.0.1' to database 'demo'"), "{err}");
    let (_, err) = bob("DESC demo.orders");
    assert!(
        err.contains("DESCRIBE command denied to user 'bob'@'127.0.0.1' for table 'demo.orders'"),
        "{err}"
    );
    let (_, err) =
        bob("CREATE TABLE demo.x (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1");
    assert!(
        err.contains("ERROR 1227") && err.contains("(CREATE) privilege(s)"),
        "{err}"
    );
    // Doris checks DROP_PRIV before the table's existence: IF EXISTS does not bypass it.
    let (_, err) = bob("DROP TABLE IF EXISTS demo.never_made");
    assert!(
        err.contains("ERROR 1227") && err.contains("(DROP) privilege(s)"),
        "{err}"
    );
    root("GRANT CREATE_PRIV, DROP_PRIV ON demo.* TO 'bob'@'%'");
    let (_, err) =
        bob("CREATE TABLE demo.x (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1");
    assert!(err.is_empty(), "{err}");
    let (_, err) = bob("DROP TABLE demo.x");
    assert!(err.is_empty(), "{err}");
    root("REVOKE CREATE_PRIV, DROP_PRIV ON demo.* FROM 'bob'@'%'");
    let (_, err) = bob("GRANT SELECT_PRIV ON *.* TO 'bob'@'%'");
    assert!(err.contains("(GRANT) privilege(s)"), "{err}");

    root("GRANT SELECT_PRIV ON demo.orders TO 'bob'@'%'");
    let (out, err) = bob("DESC demo.orders");
    assert!(err.is_empty() && out.starts_with("Field\tType"), "{err}");
    let (out, _) = bob("SHOW TABLES FROM demo");
    assert_eq!(out, "Tables_in_demo\norders\n", "only the granted table");

    // Stream Load needs LOAD_PRIV (checked when the BE begins the transaction).
    let file = std::env::temp_dir().join(format!("privileges-{}.csv", std::process::id()));
    std::fs::write(&file, "boston\t1\t\\N\n").unwrap();
    let load = || {
        let url = format!("http://{}/api/demo/visits/_stream_load", e.fe_http_addr());
        let out = common::curl_stream_load(&url, &file.to_string_lossy(), "bob:b", &[]);
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let denied = load();
    assert_eq!(denied["Status"], "Fail");
    assert_eq!(
        denied["Message"],
        "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Access denied; you need (at least one of) the (LOAD) privilege(s) for this operation"
    );
    root("GRANT LOAD_PRIV ON demo.* TO 'bob'@'%'");
    assert_eq!(load()["Status"], "Success");

    // _query_plan needs SELECT_PRIV on the table.
    let plan = |table: &str| {
        let out = Command::new("curl")
            .args(["-sS", "-u", "bob:b", "-X", "POST", "-d"])
            .arg(format!("{{\"sql\": \"SELECT * FROM demo.{table}\"}}"))
            .arg(format!(
                "http://{}/api/demo/{table}/_query_plan",
                e.fe_http_addr()
            ))
            .output()
            .unwrap();
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    assert_eq!(plan("orders")["code"], 0);
    // As Doris's handler answers it: inside a `code 0` envelope, `status` "1", not the 401
    // of bad credentials.
    let refused = plan("visits");
    assert_eq!(refused["code"], 0);
    assert_eq!(refused["data"]["status"], "1");
    assert!(
        refused["data"]["exception"]
            .as_str()
            .unwrap()
            .contains("(SELECT) privilege(s)")
    );

    // Any privilege on the table allows SHOW CREATE TABLE: LOAD on demo.* still does.
    root("REVOKE SELECT_PRIV ON demo.orders FROM 'bob'@'%'");
    let (_, err) = bob("SHOW CREATE TABLE demo.orders");
    assert!(err.is_empty(), "{err}");
    root("REVOKE LOAD_PRIV ON demo.* FROM 'bob'@'%'");
    let (_, err) = bob("SHOW CREATE TABLE demo.orders");
    assert!(err.contains("SHOW CREATE TABLE command denied"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn if_takes_its_then_branch_only_where_the_condition_is_true() {
    // Doris's `if` (DataFusion has none): the else branch for false and for NULL, both
    // branches in their common type; any other count of arguments is refused as Doris
    // refuses it.
    let e = emulator().await;
    let (_, err) = mariadb(
        &e,
        "root",
        "",
        "INSERT INTO demo.visits VALUES ('a', 1, NULL), ('b', 3, NULL), ('c', NULL, NULL)",
    );
    assert!(err.is_empty(), "{err}");
    let (out, err) = mariadb(
        &e,
        "root",
        "",
        "SELECT city, if(n > 1, 'many', 'few'), if(n IS NULL, 0, n * 2) FROM demo.visits ORDER BY city",
    );
    assert!(err.is_empty(), "{err}");
    assert_eq!(
        out.lines().skip(1).collect::<Vec<_>>(),
        ["a\tfew\t2", "b\tmany\t6", "c\tfew\t0"],
        "{out}"
    );
    let (out, err) = mariadb(
        &e,
        "root",
        "",
        "SELECT if(NULL, 1, 2.5), if(1 = 1, 'x', NULL)",
    );
    assert!(err.is_empty(), "{err}");
    assert_eq!(out.lines().nth(1), Some("2.5\tx"), "{out}");
    let (_, err) = mariadb(&e, "root", "", "SELECT if(1 = 1, 'x')");
    assert!(
        err.contains("Can not found function 'if' which has 2 arity."),
        "{err}"
    );
}
