//! The FE MySQL face (query port), in the Doris 2.x/3.x profile docs/emulator.md describes:
//! handshake v10 as `5.7.99` with charset 33, a 20-byte scramble and
//! `mysql_native_password`; an AuthSwitch when the client answers with another plugin;
//! 1045 on a bad password; capabilities without DEPRECATE_EOF (classic EOF packets) unless
//! the `DorisProfile::mysql_deprecate_eof` switch selects Doris master's behaviour;
//! COM_QUERY text results with Doris's column definitions; server-side prepared statements
//! with binary rows ([`prepared`], profile switch); Doris's errors for the commands it does
//! not handle (COM_STMT_FETCH, COM_STMT_SEND_LONG_DATA, …).

#[cfg(feature = "sql")]
mod delete;
pub mod full_authentication;
#[cfg(feature = "sql")]
mod insert;
pub mod prepared;
pub(crate) mod query;
#[cfg(feature = "sql")]
pub mod select;
pub mod show;
#[cfg(feature = "sql")]
mod text_rows;
#[cfg(feature = "sql")]
pub mod transaction;
pub mod wire;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use mysql_common::constants::{CapabilityFlags, StatusFlags};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{AuthPlugin, AuthSwitchRequest, HandshakePacket, HandshakeResponse};
use mysql_common::proto::MySerialize;
use rand::Rng;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use crate::Shared;
use crate::auth::access_denied;
use wire::PacketIo;

/// Doris 2.x/3.x `MysqlCapability.DEFAULT_CAPABILITY`; with `deprecate_eof` (Doris master)
/// also CLIENT_DEPRECATE_EOF.
fn server_capabilities(deprecate_eof: bool, tls: bool) -> CapabilityFlags {
    let base = CapabilityFlags::CLIENT_PROTOCOL_41
        | CapabilityFlags::CLIENT_CONNECT_WITH_DB
        | CapabilityFlags::CLIENT_SECURE_CONNECTION
        | CapabilityFlags::CLIENT_PLUGIN_AUTH
        | CapabilityFlags::CLIENT_CONNECT_ATTRS
        | CapabilityFlags::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
        | CapabilityFlags::CLIENT_LOCAL_FILES
        | CapabilityFlags::CLIENT_LONG_FLAG;
    let base = if tls {
        base | CapabilityFlags::CLIENT_SSL
    } else {
        base
    };
    if deprecate_eof {
        base | CapabilityFlags::CLIENT_DEPRECATE_EOF
    } else {
        base
    }
}

/// Reads one packet straight from the socket, exactly its length (nothing more is taken
/// from the stream: after an SSLRequest the next bytes are the client's TLS hello).
async fn read_unbuffered(stream: &mut TcpStream) -> std::io::Result<Option<(u8, Vec<u8>)>> {
    use tokio::io::AsyncReadExt as _;
    let mut header = [0u8; 4];
    match stream.read_exact(&mut header).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
    let mut payload = vec![0u8; len];
    stream.read_exact(&mut payload).await?;
    Ok(Some((header[3], payload)))
}

static CONNECTION_IDS: AtomicU32 = AtomicU32::new(0);

/// Accepts connections until `stop` turns true.
pub async fn serve(listener: TcpListener, shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            _ = stop.wait_for(|s| *s) => return,
            accepted = listener.accept() => {
                let Ok((stream, peer)) = accepted else { continue };
                let shared = shared.clone();
                tokio::spawn(async move {
                    let _open = shared.wire.mysql_connections.enter();
                    let _ = session(stream, peer, shared.clone()).await;
                });
            }
        }
    }
}

/// A 20-byte scramble of printable characters (no NUL, which would end the field).
fn scramble() -> [u8; 20] {
    let mut rng = rand::rng();
    std::array::from_fn(|_| rng.random_range(33u8..=126))
}

/// The session state a connection carries between statements.
#[derive(Debug, Clone)]
pub struct Session {
    /// Connection id.
    pub id: u32,
    /// User name.
    pub user: String,
    /// Client address.
    pub peer: SocketAddr,
    /// Current database.
    pub database: Option<String>,
    /// `time_zone` session variable.
    pub time_zone: String,
    /// `sql_mode` session variable.
    pub sql_mode: String,
    /// `enable_unique_key_partial_update`: an INSERT into a merge-on-write UNIQUE table
    /// changes only the columns it names.
    pub partial_update: bool,
    /// `enable_insert_strict` (default on) and `insert_max_filter_ratio` (default 1.0):
    /// how an INSERT treats rows it must filter.
    pub insert_filter: InsertFilter,
    /// The explicit transaction the session is in (`BEGIN` … `COMMIT`).
    #[cfg(feature = "sql")]
    pub txn: Option<transaction::ExplicitTxn>,
    /// The emulated release's `@@version_comment`.
    pub version_comment: String,
    /// Who the client says it is (its `_client_name` connection attribute; `unnamed`
    /// without one), for the [`crate::wire_log`].
    pub client: String,
}

/// How an INSERT treats rows it must filter (Doris's `enable_insert_strict` and
/// `insert_max_filter_ratio` session variables).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InsertFilter {
    /// Any filtered row fails the statement.
    pub strict: bool,
    /// Without strict mode, the largest share of filtered rows an INSERT may have.
    pub max_filter_ratio: f64,
}

impl Default for InsertFilter {
    fn default() -> Self {
        Self {
            strict: true,
            max_filter_ratio: 1.0,
        }
    }
}

async fn session(
    mut stream: TcpStream,
    peer: SocketAddr,
    shared: Arc<Shared>,
) -> std::io::Result<()> {
    use tokio::io::AsyncWriteExt as _;
    stream.set_nodelay(true)?;
    let acceptor = shared
        .tls_config
        .get()
        .cloned()
        .flatten()
        .map(tokio_rustls::TlsAcceptor::from);
    let capabilities = server_capabilities(
        shared.config.profile.mysql_deprecate_eof,
        acceptor.is_some(),
    );
    let id = CONNECTION_IDS.fetch_add(1, Ordering::Relaxed) + 1;
    let plugin: &[u8] = match shared.faults.take(crate::faults::Point::MysqlGreeting) {
        Some(f @ crate::faults::Fault::ClearPasswordGreeting) => {
            shared.faults.record(&f, None, None, false);
            b"mysql_clear_password"
        }
        _ => b"mysql_native_password",
    };
    let salt = scramble();
    // Part 2 of the scramble is 12 bytes and its NUL terminator (data length 21).
    let mut salt_2 = salt[8..].to_vec();
    salt_2.push(0);
    let mut greeting = Vec::new();
    HandshakePacket::new(
        10,
        &b"5.7.99"[..],
        id,
        <[u8; 8]>::try_from(&salt[..8]).unwrap_or_default(),
        Some(salt_2),
        capabilities,
        33,
        StatusFlags::empty(),
        Some(plugin),
    )
    .serialize(&mut greeting);
    let mut framed = Vec::with_capacity(greeting.len() + 4);
    framed.extend_from_slice(&(greeting.len() as u32).to_le_bytes()[..3]);
    framed.push(0);
    framed.extend_from_slice(&greeting);
    stream.write_all(&framed).await?;
    stream.flush().await?;

    let Some((seq, first)) = read_unbuffered(&mut stream).await? else {
        return Ok(());
    };
    let ssl_request = first.len() == 32
        && u32::from_le_bytes([first[0], first[1], first[2], first[3]])
            & CapabilityFlags::CLIENT_SSL.bits()
            != 0;
    let (mut io, mut packet) = match (ssl_request, acceptor) {
        // SSLRequest: TLS from here on; the real handshake response follows over it.
        (true, Some(acceptor)) => {
            let tls = acceptor.accept(stream).await?;
            shared.wire.add_mysql_tls_session();
            let (r, w) = tokio::io::split(tls);
            let mut io = PacketIo::new(r, w);
            io.set_seq(seq.wrapping_add(1));
            match io.read().await? {
                Some(p) => (io, p),
                None => return Ok(()),
            }
        }
        (true, None) => return Ok(()),
        (false, _) => {
            let (r, w) = stream.into_split();
            let mut io = PacketIo::new(r, w);
            io.set_seq(seq.wrapping_add(1));
            (io, first)
        }
    };
    // Only flags both sides advertise are in force (clients such as the mariadb CLI set
    // CONNECT_ATTRS without sending attributes to a server that never offered it).
    if packet.len() >= 4 {
        let client = u32::from_le_bytes([packet[0], packet[1], packet[2], packet[3]]);
        let negotiated = client & capabilities.bits();
        packet[..4].copy_from_slice(&negotiated.to_le_bytes());
        io.set_deprecate_eof(negotiated & CapabilityFlags::CLIENT_DEPRECATE_EOF.bits() != 0);
    }
    let response: HandshakeResponse<'_> = match ParseBuf(&packet).parse(()) {
        Ok(r) => r,
        Err(_) => {
            io.error(1043, b"08S01", "Bad handshake").await?;
            return Ok(());
        }
    };
    let user = String::from_utf8_lossy(response.user()).into_owned();
    let client = response
        .connect_attributes()
        .and_then(|attrs| attrs.get("_client_name").cloned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "unnamed".to_owned());
    let database = response
        .db_name()
        .filter(|d| !d.is_empty())
        .map(|d| String::from_utf8_lossy(d).into_owned());
    let native = matches!(
        response.auth_plugin(),
        None | Some(AuthPlugin::MysqlNativePassword)
    );
    let (authenticated, sent_password) = if let Some(f @ crate::faults::Fault::Sha2FullAuth) =
        shared.faults.take(crate::faults::Point::MysqlAuth)
    {
        shared.faults.record(&f, None, None, false);
        let Some(revealed) = full_authentication::ask(&mut io, &salt).await? else {
            return Ok(());
        };
        if revealed.is_some() {
            shared.wire.add_mysql_password_revealed();
        }
        let expected = shared.users.password(&user).map(String::into_bytes);
        (revealed.is_some() && revealed == expected, true)
    } else {
        let token = if native {
            response.scramble_buf().to_vec()
        } else {
            // The client offered another plugin (e.g. caching_sha2_password): switch it to
            // mysql_native_password, as the Doris FE does.
            let mut switch = Vec::new();
            let mut data = salt.to_vec();
            data.push(0);
            AuthSwitchRequest::new(&b"mysql_native_password"[..], data).serialize(&mut switch);
            io.write(&switch).await?;
            io.flush().await?;
            match io.read().await? {
                Some(p) => p,
                None => return Ok(()),
            }
        };
        let authenticated = shared.users.password(&user).is_some_and(|password| {
            let expected = mysql_common::auth::plugins::mysql_native_password::scramble_native(
                &salt,
                password.as_bytes(),
            );
            match expected {
                Some(e) => token == e,
                None => token.is_empty(),
            }
        });
        (authenticated, !token.is_empty())
    };
    if !authenticated {
        let message = access_denied(&user, &peer.ip().to_string(), sent_password);
        io.error(1045, b"28000", &message).await?;
        return Ok(());
    }
    if let Some(db) = &database
        && shared.catalog.has_database(db).unwrap_or(false)
        && !shared.users.has_any(&user, db, None)
    {
        let message = format!(
            "Access denied for user '{user}'@'{}' to database '{db}'",
            peer.ip()
        );
        io.error(1044, b"42000", &message).await?;
        return Ok(());
    }
    if let Some(db) = &database
        && !shared.catalog.has_database(db).unwrap_or(false)
    {
        io.error(1049, b"42000", &format!("Unknown database '{db}'"))
            .await?;
        return Ok(());
    }
    io.ok(0).await?;

    let mut state = Session {
        id,
        user,
        peer,
        database,
        time_zone: shared.config.time_zone.clone(),
        sql_mode: shared
            .global_sql_mode
            .lock()
            .map(|mode| mode.clone())
            .unwrap_or_default(),
        partial_update: false,
        insert_filter: InsertFilter::default(),
        #[cfg(feature = "sql")]
        txn: None,
        version_comment: shared.config.profile.version_comment(),
        client,
    };
    let served = commands(&shared, &mut state, &mut io).await;
    #[cfg(feature = "sql")]
    transaction::end_of_session(&shared, &mut state);
    served
}

/// Serves the commands of an authenticated session until it ends.
async fn commands(
    shared: &Arc<Shared>,
    state: &mut Session,
    io: &mut PacketIo,
) -> std::io::Result<()> {
    let mut statements = prepared::Statements::default();
    while let Some(packet) = io.read().await? {
        let Some((&command, body)) = packet.split_first() else {
            continue;
        };
        match command {
            0x01 => return Ok(()), // COM_QUIT
            0x02 => {
                let db = String::from_utf8_lossy(body).into_owned();
                let exists = shared.catalog.has_database(&db).unwrap_or(false);
                if exists && !shared.users.has_any(&state.user, &db, None) {
                    let (code, sqlstate, message) = query::database_denied(state, &db);
                    io.error(code, sqlstate, &message).await?;
                } else if exists {
                    state.database = Some(db);
                    io.ok(0).await?;
                } else {
                    io.error(1049, b"42000", &format!("Unknown database '{db}'"))
                        .await?;
                }
            }
            0x03 => {
                let sql = String::from_utf8_lossy(body).into_owned();
                if let Some(log) = &shared.wire_log {
                    log.record_sql(&state.client, "mysql", &sql);
                }
                if let Some(fault) = dropped_statement(shared, &sql) {
                    // The answer is lost and the statement never runs: the session ends
                    // here (and with it any transaction it had open).
                    shared.faults.record(&fault, None, None, false);
                    return Ok(());
                }
                query::run(shared, state, &sql, query::Protocol::Text, io).await?;
            }
            0x0e => io.ok(0).await?, // COM_PING
            0x16 => {
                let sql = String::from_utf8_lossy(body).into_owned();
                if let Some(log) = &shared.wire_log {
                    log.record_sql(&state.client, "mysql-prepare", &sql);
                }
                prepared::prepare(shared, state, &mut statements, &sql, io).await?;
            }
            0x17 => prepared::execute(shared, state, &mut statements, body, io).await?,
            0x19 => prepared::close(&mut statements, body),
            0x1a => prepared::reset(&statements, body, io).await?,
            code => {
                // Doris: a command MysqlCommand knows but the dispatcher does not handle gets
                // `Unsupported command(<NAME>)`; an unknown code `Unknown command(<n>)`.
                let message = match command_name(code) {
                    Some(name) => format!("Unsupported command({name})"),
                    None => format!("Unknown command({})", code as i8),
                };
                io.error(1047, b"08S01", &message).await?;
            }
        }
    }
    Ok(())
}

/// The armed `DropStatement` fault whose prefix `sql` starts with (and whose `containing`
/// text it holds), taken.
fn dropped_statement(shared: &Shared, sql: &str) -> Option<crate::faults::Fault> {
    let text = sql.trim_start();
    shared
        .faults
        .take_where(crate::faults::Point::MysqlStatement, |fault| {
            matches!(fault, crate::faults::Fault::DropStatement { prefix, containing }
                if text.len() >= prefix.len()
                    && text.is_char_boundary(prefix.len())
                    && text[..prefix.len()].eq_ignore_ascii_case(prefix)
                    && containing.as_deref().is_none_or(|c| text.contains(c)))
        })
}

/// The name Doris's `MysqlCommand` gives a command code (`COM_…`), for its error texts.
fn command_name(code: u8) -> Option<&'static str> {
    const NAMES: [&str; 32] = [
        "COM_SLEEP",
        "COM_QUIT",
        "COM_INIT_DB",
        "COM_QUERY",
        "COM_FIELD_LIST",
        "COM_CREATE_DB",
        "COM_DROP_DB",
        "COM_REFRESH",
        "COM_SHUTDOWN",
        "COM_STATISTICS",
        "COM_PROCESS_INFO",
        "COM_CONNECT",
        "COM_PROCESS_KILL",
        "COM_DEBUG",
        "COM_PING",
        "COM_TIME",
        "COM_DELAYED_INSERT",
        "COM_CHANGE_USER",
        "COM_BINLOG_DUMP",
        "COM_TABLE_DUMP",
        "COM_CONNECT_OUT",
        "COM_REGISTER_SLAVE",
        "COM_STMT_PREPARE",
        "COM_STMT_EXECUTE",
        "COM_STMT_SEND_LONG_DATA",
        "COM_STMT_CLOSE",
        "COM_STMT_RESET",
        "COM_SET_OPTION",
        "COM_STMT_FETCH",
        "COM_DAEMON",
        "COM_BINLOG_DUMP_GTID",
        "COM_RESET_CONNECTION",
    ];
    NAMES.get(usize::from(code)).copied()
}
