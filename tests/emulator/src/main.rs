//! `doris-emulator`: serve the Doris emulator until SIGINT/SIGTERM.
//!
//! ```text
//! doris-emulator [--host 127.0.0.1] [--advertise-host H] [--fe-http-port 8030]
//!                [--be-http-port 8040] [--query-port 9030] [--fe-flight-port 8070]
//!                [--be-flight-port 8050] [--flight-session-cap N] [--init-sql FILE]...
//!                [--root-password P] [--s3-root DIR] [--data-dir DIR]
//!                [--mysql-prepare server-side|point-query-only]
//!                [--type-spelling lower|upper|legacy] [--mysql-deprecate-eof on|off]
//!                [--label-exists-text current|legacy] [--json-column-type json|string]
//!                [--unicode-names on|off]
//!                [--label-num-threshold N] [--label-keep-max-second S] [--tls-dir DIR]
//!                [--tls-client-auth none|required] [--backends N] [--be-bandwidth BYTES_PER_SECOND[K|M|G]]
//! ```
//! `--backends N` simulates N BEs (tablets dealt over them, one BE Flight port each, BE `i`
//! on `--be-flight-port + i`); `--be-bandwidth 8M` paces each BE's query results to
//! 8 MiB/s (see the library's `backends` module), for scaling benchmarks.
//! `--tls-dir DIR` serves the FE and BE HTTP faces over TLS (and offers TLS on the MySQL face) with a certificate made
//! at start for the host, the advertised host and `localhost`, signed by a new test CA
//! written to `DIR/ca.pem` (clients trust that file); `DIR/other-ca.pem` is a second CA
//! that signed nothing here (for wrong-CA tests); `DIR/client.pem` and
//! `DIR/client-key.pem` are a client certificate the test CA signed and its key.
//! `--tls-client-auth required` (with `--tls-dir`) makes every TLS face (HTTP, MySQL,
//! Flight) ask each client for a certificate the test CA signed (mutual TLS).
//! `--label-num-threshold N` and `--label-keep-max-second S` are Doris's FE settings of the
//! same names: how many finished transactions a database remembers, and for how long (a
//! label forgotten by either can be used again).
//! `--mysql-prepare point-query-only` answers COM_STMT_PREPARE as Doris 2.0–2.1.2 did;
//! `--type-spelling upper` spells types in DESC / SHOW CREATE TABLE as 2.1.0–2.1.5 did
//! (`BIGINT`, `DECIMAL(20, 6)`), `legacy` as 1.x/2.0 did (`bigint(20)`);
//! `--mysql-deprecate-eof on` negotiates CLIENT_DEPRECATE_EOF as Doris master does;
//! `--label-exists-text legacy` words `Label Already Exists` without the txn id;
//! `--unicode-names on` is `enable_unicode_name_support` (names in any script);
//! `--json-column-type string` describes JSON result columns as STRING, as older releases.
//! `--time-zone ZONE` is the global `time_zone` sessions start in (default `Asia/Shanghai`,
//! Doris's usual one): Flight results write DATETIME values in it.
//! `--s3-root DIR` makes `s3://bucket/key` the file `DIR/bucket/key` (streaming jobs);
//! `--data-dir DIR` keeps the catalog, the data and the jobs across restarts (the
//! `--init-sql` files run only when `DIR` holds no state yet).
//! Port 0 picks a free port. On start it prints one JSON line with every bound port.

use std::process::ExitCode;

use doris_emulator::{Emulator, EmulatorConfig};

fn usage() -> ExitCode {
    eprintln!(
        "usage: doris-emulator [--host H] [--advertise-host H] [--fe-http-port P] \
         [--be-http-port P] [--query-port P] [--fe-flight-port P] [--be-flight-port P] \
         [--flight-session-cap N] [--init-sql FILE]... [--root-password P] \
         [--s3-root DIR] [--data-dir DIR] [--mysql-prepare server-side|point-query-only] \
         [--type-spelling lower|upper|legacy] [--mysql-deprecate-eof on|off] \
         [--label-exists-text current|legacy] [--json-column-type json|string] \
         [--unicode-names on|off] \
         [--label-num-threshold N] [--label-keep-max-second S] [--tls-dir DIR] [--tls-client-auth none|required] \
         [--backends N] [--be-bandwidth BYTES_PER_SECOND[K|M|G]] [--doris-version 2.1|3.0|3.1|4.0|4.1|X.Y.Z] \
         [--time-zone ZONE]"
    );
    ExitCode::from(2)
}

/// `123`, `64K`, `8M`, `1G` (binary multiples) as bytes.
fn parse_bytes(text: &str) -> Option<u64> {
    let (digits, unit) = match text.char_indices().last()? {
        (i, 'K' | 'k') => (&text[..i], 1u64 << 10),
        (i, 'M' | 'm') => (&text[..i], 1 << 20),
        (i, 'G' | 'g') => (&text[..i], 1 << 30),
        _ => (text, 1),
    };
    digits.parse::<u64>().ok()?.checked_mul(unit)
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut config = EmulatorConfig::default();
    let mut init_files = Vec::new();
    let mut advertise = None;
    let mut tls_dir: Option<std::path::PathBuf> = None;
    let mut client_auth = false;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let Some(value) = args.next() else {
            return usage();
        };
        let port = || value.parse::<u16>().ok();
        match flag.as_str() {
            "--host" => config.host = value,
            "--advertise-host" => advertise = Some(value),
            "--fe-http-port" => match port() {
                Some(p) => config.fe_http_port = p,
                None => return usage(),
            },
            "--be-http-port" => match port() {
                Some(p) => config.be_http_port = p,
                None => return usage(),
            },
            "--query-port" => match port() {
                Some(p) => config.query_port = p,
                None => return usage(),
            },
            "--fe-flight-port" => match port() {
                Some(p) => config.fe_flight_port = p,
                None => return usage(),
            },
            "--be-flight-port" => match port() {
                Some(p) => config.be_flight_port = p,
                None => return usage(),
            },
            "--backends" => match value.parse::<usize>() {
                Ok(n) if (1..=64).contains(&n) => config.backends = n,
                _ => return usage(),
            },
            "--be-bandwidth" => match parse_bytes(&value) {
                Some(n) if n > 0 => config.be_bandwidth = Some(n),
                _ => return usage(),
            },
            "--flight-session-cap" => match value.parse() {
                Ok(n) => config.flight_session_cap = n,
                Err(_) => return usage(),
            },
            "--init-sql" => init_files.push(value),
            "--root-password" => config.root_password = value,
            "--s3-root" => config.s3_root = Some(value.into()),
            "--data-dir" => config.data_dir = Some(value.into()),
            "--doris-version" => match value.parse::<doris_sql::release::DorisRelease>() {
                Ok(release) => config.profile.release = release,
                Err(_) => return usage(),
            },
            "--time-zone" => config.time_zone = value,
            "--unicode-names" => match value.as_str() {
                "on" => config.profile.unicode_names = Some(true),
                "off" => config.profile.unicode_names = Some(false),
                _ => return usage(),
            },
            "--json-column-type" => match value.as_str() {
                "json" => config.profile.json_as_string = false,
                "string" => config.profile.json_as_string = true,
                _ => return usage(),
            },
            "--label-exists-text" => match value.as_str() {
                "current" => config.profile.legacy_label_exists_text = false,
                "legacy" => config.profile.legacy_label_exists_text = true,
                _ => return usage(),
            },
            "--mysql-deprecate-eof" => match value.as_str() {
                "on" => config.profile.mysql_deprecate_eof = true,
                "off" => config.profile.mysql_deprecate_eof = false,
                _ => return usage(),
            },
            "--type-spelling" => match value.as_str() {
                "lower" => config.profile.type_spelling = doris_sql::Spelling::Lower,
                "upper" => config.profile.type_spelling = doris_sql::Spelling::Upper,
                "legacy" => config.profile.type_spelling = doris_sql::Spelling::Legacy,
                _ => return usage(),
            },
            "--label-num-threshold" => match value.parse() {
                Ok(n) => config.retention.label_num_threshold = n,
                Err(_) => return usage(),
            },
            "--label-keep-max-second" => match value.parse::<u64>() {
                Ok(s) => config.retention.label_keep_max = std::time::Duration::from_secs(s),
                Err(_) => return usage(),
            },
            "--tls-dir" => tls_dir = Some(std::path::PathBuf::from(value)),
            "--tls-client-auth" => match value.as_str() {
                "none" => client_auth = false,
                "required" => client_auth = true,
                _ => return usage(),
            },
            "--mysql-prepare" => match value.parse() {
                Ok(p) => config.profile.prepare = p,
                Err(e) => {
                    eprintln!("doris-emulator: {e}");
                    return usage();
                }
            },
            _ => return usage(),
        }
    }
    config.advertise_host = advertise.unwrap_or_else(|| config.host.clone());
    if let Some(dir) = tls_dir {
        let names = [
            config.host.as_str(),
            config.advertise_host.as_str(),
            "localhost",
        ];
        let made = doris_emulator::tls::TestCa::new(&names)
            .and_then(|ca| Ok((ca, doris_emulator::tls::TestCa::new(&["unused.invalid"])?)));
        let (ca, other) = match made {
            Ok(pair) => pair,
            Err(e) => {
                eprintln!("doris-emulator: {e}");
                return ExitCode::FAILURE;
            }
        };
        let written = std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(dir.join("ca.pem"), &ca.ca_pem))
            .and_then(|()| std::fs::write(dir.join("other-ca.pem"), &other.ca_pem))
            .and_then(|()| std::fs::write(dir.join("client.pem"), &ca.client_cert_pem))
            .and_then(|()| std::fs::write(dir.join("client-key.pem"), &ca.client_key_pem));
        if let Err(e) = written {
            eprintln!("doris-emulator: cannot write {}: {e}", dir.display());
            return ExitCode::FAILURE;
        }
        if client_auth {
            config.tls_client_ca = Some(ca.ca_pem.clone());
        }
        config.tls = Some((ca.cert_pem, ca.key_pem));
    } else if client_auth {
        eprintln!("doris-emulator: --tls-client-auth needs --tls-dir");
        return usage();
    }
    let emulator = match Emulator::start(config).await {
        Ok(e) => e,
        Err(e) => {
            eprintln!("doris-emulator: {e}");
            return ExitCode::FAILURE;
        }
    };
    let init_files = if emulator.restored() {
        Vec::new()
    } else {
        init_files
    };
    for file in init_files {
        let script = match std::fs::read_to_string(&file) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("doris-emulator: cannot read {file}: {e}");
                return ExitCode::FAILURE;
            }
        };
        if let Err(e) = emulator.execute(None, &script) {
            eprintln!("doris-emulator: {file}: {e}");
            return ExitCode::FAILURE;
        }
    }
    println!("{}", emulator.ports_json());
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("doris-emulator: {e}");
            return ExitCode::FAILURE;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    emulator.stop();
    ExitCode::SUCCESS
}
