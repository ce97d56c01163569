//! Users, passwords and privileges.
//!
//! `root` holds every privilege. Other users hold what `GRANT` gave them: SELECT_PRIV,
//! LOAD_PRIV, ALTER_PRIV, CREATE_PRIV and DROP_PRIV on `db.tbl`, `db.*` or `*.*`.

use std::collections::{BTreeSet, HashMap};
use std::sync::RwLock;

/// A table privilege.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Privilege {
    /// SELECT_PRIV: read data and metadata.
    Select,
    /// LOAD_PRIV: Stream Load and INSERT.
    Load,
    /// ALTER_PRIV: change a table.
    Alter,
    /// CREATE_PRIV: create a database or table.
    Create,
    /// DROP_PRIV: drop a database or table.
    Drop,
}

impl Privilege {
    /// Parses `SELECT_PRIV` / `SELECT` (case-insensitive); `ALL` is not one privilege.
    pub fn parse(word: &str) -> Option<Self> {
        match word.trim().to_ascii_uppercase().as_str() {
            "SELECT_PRIV" | "SELECT" => Some(Privilege::Select),
            "LOAD_PRIV" | "LOAD" => Some(Privilege::Load),
            "ALTER_PRIV" | "ALTER" => Some(Privilege::Alter),
            "CREATE_PRIV" | "CREATE" => Some(Privilege::Create),
            "DROP_PRIV" | "DROP" => Some(Privilege::Drop),
            _ => None,
        }
    }

    /// The name Doris's messages use (`SELECT`, `LOAD`, `ALTER`, `CREATE`, `DROP`).
    pub fn as_str(self) -> &'static str {
        match self {
            Privilege::Select => "SELECT",
            Privilege::Load => "LOAD",
            Privilege::Alter => "ALTER",
            Privilege::Create => "CREATE",
            Privilege::Drop => "DROP",
        }
    }
}

/// One grant: privileges on a database/table pattern (`*` matches everything).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Grant {
    database: String,
    table: String,
    privileges: BTreeSet<Privilege>,
}

/// Doris's text when a privilege is missing.
pub fn missing_privilege(privilege: Privilege) -> String {
    format!(
        "Access denied; you need (at least one of) the ({}) privilege(s) for this operation",
        privilege.as_str()
    )
}

/// The emulator's users: `root` (empty password unless configured) and any added later.
#[derive(Debug)]
pub struct Users {
    passwords: RwLock<HashMap<String, String>>,
    grants: RwLock<HashMap<String, Vec<Grant>>>,
}

impl Users {
    /// Users with `root` and the given password.
    pub fn new(root_password: &str) -> Self {
        Self {
            passwords: RwLock::new(HashMap::from([(
                "root".to_owned(),
                root_password.to_owned(),
            )])),
            grants: RwLock::new(HashMap::new()),
        }
    }

    /// Adds privileges on `database.table` (either may be `*`).
    pub fn grant(&self, user: &str, database: &str, table: &str, privileges: &[Privilege]) {
        if let Ok(mut g) = self.grants.write() {
            let list = g.entry(user.to_owned()).or_default();
            match list
                .iter_mut()
                .find(|x| x.database == database && x.table == table)
            {
                Some(existing) => existing.privileges.extend(privileges),
                None => list.push(Grant {
                    database: database.to_owned(),
                    table: table.to_owned(),
                    privileges: privileges.iter().copied().collect(),
                }),
            }
        }
    }

    /// Removes privileges granted on exactly `database.table`.
    pub fn revoke(&self, user: &str, database: &str, table: &str, privileges: &[Privilege]) {
        if let Ok(mut g) = self.grants.write()
            && let Some(list) = g.get_mut(user)
        {
            for x in list
                .iter_mut()
                .filter(|x| x.database == database && x.table == table)
            {
                for p in privileges {
                    x.privileges.remove(p);
                }
            }
            list.retain(|x| !x.privileges.is_empty());
        }
    }

    /// True if `user` holds `privilege` on `database.table` (`root` holds everything).
    pub fn has(&self, user: &str, database: &str, table: &str, privilege: Privilege) -> bool {
        user == "root"
            || self
                .matching(user, database, Some(table))
                .contains(&privilege)
    }

    /// True if `user` holds any privilege on the table (or, with `None`, in the database).
    pub fn has_any(&self, user: &str, database: &str, table: Option<&str>) -> bool {
        user == "root" || !self.matching(user, database, table).is_empty()
    }

    /// True if `user` holds `privilege` somewhere in `database` (2PC names no table).
    pub fn has_in_database(&self, user: &str, database: &str, privilege: Privilege) -> bool {
        user == "root" || self.matching(user, database, None).contains(&privilege)
    }

    fn matching(&self, user: &str, database: &str, table: Option<&str>) -> BTreeSet<Privilege> {
        let Ok(g) = self.grants.read() else {
            return BTreeSet::new();
        };
        g.get(user)
            .into_iter()
            .flatten()
            .filter(|x| x.database == "*" || x.database == database)
            .filter(|x| table.is_none_or(|t| x.table == "*" || x.table == t))
            .flat_map(|x| x.privileges.iter().copied())
            .collect()
    }

    /// Adds or replaces a user.
    pub fn set(&self, user: &str, password: &str) {
        if let Ok(mut p) = self.passwords.write() {
            p.insert(user.to_owned(), password.to_owned());
        }
    }

    /// Removes a user and every privilege granted to it; false if there was none.
    pub fn remove(&self, user: &str) -> bool {
        if let Ok(mut g) = self.grants.write() {
            g.remove(user);
        }
        self.passwords
            .write()
            .map(|mut p| p.remove(user).is_some())
            .unwrap_or(false)
    }

    /// The password of `user`, if the user exists.
    pub fn password(&self, user: &str) -> Option<String> {
        self.passwords
            .read()
            .ok()
            .and_then(|p| p.get(user).cloned())
    }

    /// True if `user` exists and `password` is theirs.
    pub fn check(&self, user: &str, password: &str) -> bool {
        self.passwords
            .read()
            .map(|p| p.get(user).is_some_and(|pw| pw == password))
            .unwrap_or(false)
    }
}

/// Credentials from an `Authorization: Basic …` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BasicAuth {
    /// The user name (any `default_cluster:` prefix removed).
    pub user: String,
    /// The password.
    pub password: String,
}

/// Parses an `Authorization` header value; `None` if it is not well-formed Basic auth.
/// Padding is optional: arrow-go's Flight client (under the ADBC driver) sends unpadded
/// base64, and Doris's FE accepts it.
pub fn parse_basic(value: Option<&str>) -> Option<BasicAuth> {
    use base64::Engine as _;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    let encoded = value?.strip_prefix("Basic ")?.trim();
    let decoded = LENIENT.decode(encoded).ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, password) = text.split_once(':')?;
    let user = user.strip_prefix("default_cluster:").unwrap_or(user);
    Some(BasicAuth {
        user: user.to_owned(),
        password: password.to_owned(),
    })
}

/// Doris's access-denied text.
pub fn access_denied(user: &str, host: &str, used_password: bool) -> String {
    format!(
        "Access denied for user '{user}@{host}' (using password: {})",
        if used_password { "YES" } else { "NO" }
    )
}
