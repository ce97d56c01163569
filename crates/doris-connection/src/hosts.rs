//! Which servers a client may follow the FE to: one allowlist shared by Stream Load
//! redirects (the FE's 307 to a BE) and Flight SQL `DoGet` locations (the BE each result
//! endpoint names), and the parser of the FE's `/api/backends` answer that feeds it.
//!
//! Both places follow an address the FE hands out and send credentials (Basic auth, a
//! bearer token) to it, so both take the same policy: an address is followed when it is
//! listed explicitly, or is one of the BEs the FE itself reports, or (off by default) is on
//! the FE's own host. See `docs/security.md`, "Where credentials go".

/// A host and port an address may point to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HostPort {
    /// Host name or IP literal, compared case-insensitively (IPv6 without brackets).
    pub host: String,
    /// Port.
    pub port: u16,
}

impl HostPort {
    /// `host:port`.
    pub fn new(host: impl Into<String>, port: u16) -> Self {
        Self {
            host: host.into(),
            port,
        }
    }

    /// Splits `host:port` or `[v6]:port` (no scheme).
    pub fn parse(text: &str) -> Option<Self> {
        let (host, port) = text.rsplit_once(':')?;
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        if host.is_empty() || host.contains(['/', '@', ' ']) {
            return None;
        }
        Some(Self::new(host, port.parse().ok()?))
    }

    /// Whether this is `host:port` (host compared case-insensitively).
    pub fn matches(&self, host: &str, port: u16) -> bool {
        self.port == port && self.host.eq_ignore_ascii_case(host)
    }
}

/// `host:port`, or `[v6]:port` (what [`HostPort::parse`] reads back).
impl std::fmt::Display for HostPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// Where the FE may send a client (a Stream Load 307, a Flight `DoGet` location).
///
/// An address is allowed when its host and port are in [`Self::targets`], or it is one of
/// the BEs the FE itself reports at `/api/backends` (when [`Self::reported_backends`] is
/// on, the default), or it is the FE's own host with any port (only when
/// [`Self::fe_host_any_port`] is on).
#[derive(Debug, Clone)]
pub struct AddressAllowlist {
    /// Explicitly allowed addresses (e.g. public endpoints behind a NAT).
    pub targets: Vec<HostPort>,
    /// Allow the alive BEs listed by the FE's `/api/backends` (fetched once, refreshed once
    /// when an address is not found).
    pub reported_backends: bool,
    /// Allow any port on the FE's host (off by default).
    pub fe_host_any_port: bool,
}

impl Default for AddressAllowlist {
    fn default() -> Self {
        Self {
            targets: Vec::new(),
            reported_backends: true,
            fe_host_any_port: false,
        }
    }
}

impl AddressAllowlist {
    /// The Stream Load redirect allowlist of the reference connector 1.1, given its
    /// `redirect_hosts` and `redirect_ports`: a redirect may go to the FE's host or one of
    /// `hosts`, on one of `ports` (every pair; the FE's host is implicitly listed, its own
    /// port is not). The BEs the FE reports at `/api/backends` are trusted as well when
    /// `trust_reported` says so; left `None`, only when neither list is given, where 1.1
    /// refused every redirect (so 1.1 code that lists its targets keeps exactly 1.1's
    /// rule, and code that lists none can still load through an FE).
    ///
    /// ```
    /// use doris_connection::{AddressAllowlist, HostPort};
    ///
    /// // 1.1's rule: the FE's host and the listed hosts, on the listed ports only.
    /// let listed = AddressAllowlist::redirects("fe", &["be1".into()], &[8040], None);
    /// assert!(listed.allows("fe", 8040, "fe", &[]));
    /// assert!(listed.allows("be1", 8040, "fe", &[]));
    /// assert!(!listed.allows("be2", 8040, "fe", &[HostPort::new("be2", 8040)]));
    ///
    /// // Nothing listed: the BEs the FE reports.
    /// let open = AddressAllowlist::redirects("fe", &[], &[], None);
    /// assert!(open.allows("be2", 8040, "fe", &[HostPort::new("be2", 8040)]));
    /// ```
    pub fn redirects(
        fe_host: &str,
        hosts: &[String],
        ports: &[u16],
        trust_reported: Option<bool>,
    ) -> Self {
        let mut listed: Vec<&str> = vec![fe_host];
        for host in hosts {
            if !listed.iter().any(|h| h.eq_ignore_ascii_case(host)) {
                listed.push(host);
            }
        }
        let targets = listed
            .iter()
            .flat_map(|h| ports.iter().map(|p| HostPort::new(*h, *p)))
            .collect();
        Self {
            targets,
            reported_backends: trust_reported.unwrap_or(hosts.is_empty() && ports.is_empty()),
            fe_host_any_port: false,
        }
    }

    /// Why an address this allowlist refused was refused (for an error message).
    pub fn refusal_reason(&self) -> &'static str {
        if self.reported_backends {
            "not an allowed target (neither configured nor a BE the FE reports)"
        } else {
            "not an allowed target: not among the configured redirect targets, and the BEs \
             the FE reports are not trusted by this allowlist"
        }
    }

    /// Whether `host:port` is allowed, given the FE host and the BEs the FE reported (each
    /// with the port of the service being followed).
    pub fn allows(&self, host: &str, port: u16, fe_host: &str, reported: &[HostPort]) -> bool {
        self.targets.iter().any(|t| t.matches(host, port))
            || (self.reported_backends && reported.iter().any(|t| t.matches(host, port)))
            || (self.fe_host_any_port && host.eq_ignore_ascii_case(fe_host))
    }

    /// Like [`Self::allows`] for a service whose port the FE does not report (Flight SQL:
    /// `/api/backends` lists each BE's HTTP port only): a reported BE's host is allowed on
    /// any port.
    pub fn allows_on_reported_host(
        &self,
        host: &str,
        port: u16,
        fe_host: &str,
        reported: &[HostPort],
    ) -> bool {
        self.allows(host, port, fe_host, &[])
            || (self.reported_backends
                && reported.iter().any(|t| t.host.eq_ignore_ascii_case(host)))
    }
}

/// Why an `/api/backends` answer gave no list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackendsAnswerError {
    /// The FE refused the credentials (`code: 401`); its message is kept.
    #[error("the FE refused the credentials: {0}")]
    Unauthorized(String),
    /// The answer is not the FE's JSON envelope with `data.backends`.
    #[error("/api/backends answer is {0}")]
    Malformed(&'static str),
}

impl BackendsAnswerError {
    /// [`Authentication`](doris_sql::ErrorKind::Authentication) for refused credentials,
    /// [`Transport`](doris_sql::ErrorKind::Transport) for an answer that is not a list.
    pub fn kind(&self) -> doris_sql::ErrorKind {
        match self {
            Self::Unauthorized(_) => doris_sql::ErrorKind::Authentication,
            Self::Malformed(_) => doris_sql::ErrorKind::Transport,
        }
    }
}

/// The alive BEs (`ip`, `http_port`) of an FE's `GET /api/backends?is_alive=true` answer:
/// `{"code":0,"data":{"backends":[{"ip":…,"http_port":…,"is_alive":true}]}}`. An entry whose
/// `ip` is no host name or address (empty, or holding `/`, `@` or a space) is left out: no
/// URL can name it, so no allowlist may hold it.
pub fn parse_backends(body: &[u8]) -> Result<Vec<HostPort>, BackendsAnswerError> {
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|_| BackendsAnswerError::Malformed("not JSON"))?;
    if value.get("code").and_then(serde_json::Value::as_i64) == Some(401) {
        return Err(BackendsAnswerError::Unauthorized(
            value
                .get("data")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("Unauthorized")
                .to_owned(),
        ));
    }
    let list = value
        .pointer("/data/backends")
        .and_then(serde_json::Value::as_array)
        .ok_or(BackendsAnswerError::Malformed("without data.backends"))?;
    Ok(list
        .iter()
        .filter(|b| b.get("is_alive").and_then(serde_json::Value::as_bool) != Some(false))
        .filter_map(|b| {
            let ip = b.get("ip")?.as_str()?;
            let port = u16::try_from(b.get("http_port")?.as_u64()?).ok()?;
            let host = HostPort::new(ip, port);
            // Kept only when it reads back as itself (what the allowlists compare).
            HostPort::parse(&host.to_string()).filter(|read| *read == host)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn host_ports_print_as_they_parse() {
        for (host, port, text) in [("be-1", 8040, "be-1:8040"), ("::1", 80, "[::1]:80")] {
            let hp = HostPort::new(host, port);
            assert_eq!(hp.to_string(), text);
            assert_eq!(HostPort::parse(text), Some(hp));
        }
    }

    #[test]
    fn allowlist_rules() {
        let mut list = AddressAllowlist::default();
        let reported = vec![HostPort::new("10.0.0.2", 8040)];
        assert!(list.allows("10.0.0.2", 8040, "fe", &reported));
        assert!(!list.allows("10.0.0.2", 8041, "fe", &reported));
        assert!(list.allows_on_reported_host("10.0.0.2", 8050, "fe", &reported));
        assert!(!list.allows_on_reported_host("10.0.0.3", 8050, "fe", &reported));
        assert!(!list.allows("fe", 8040, "fe", &reported));
        list.fe_host_any_port = true;
        assert!(list.allows("FE", 9999, "fe", &reported));
        list.reported_backends = false;
        assert!(!list.allows("10.0.0.2", 8040, "fe", &reported));
        assert!(!list.allows_on_reported_host("10.0.0.2", 8050, "fe", &reported));
        list.targets.push(HostPort::new("public.example", 443));
        assert!(list.allows("PUBLIC.example", 443, "fe", &[]));
        assert!(list.allows_on_reported_host("public.example", 443, "fe", &[]));
    }

    /// The reference connector 1.1's rule (its `behaviour.md`, "Redirects"): allowed iff the
    /// host is the FE's or a listed one and the port a listed one; no list of ports, no
    /// redirect.
    fn reference_allows(fe: &str, hosts: &[String], ports: &[u16], host: &str, port: u16) -> bool {
        (host.eq_ignore_ascii_case(fe) || hosts.iter().any(|h| h.eq_ignore_ascii_case(host)))
            && ports.contains(&port)
    }

    #[test]
    fn listed_redirect_targets_keep_the_reference_rule_exactly() {
        let names = ["fe", "be1", "BE2", "other"];
        let reported = vec![HostPort::new("be1", 8040), HostPort::new("other", 8040)];
        // Every subset of hosts and of ports (both non-empty or one of them given).
        for host_mask in 0..8u8 {
            for port_mask in 0..4u8 {
                let hosts: Vec<String> = ["be1", "be2", "fe"]
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| host_mask & (1 << i) != 0)
                    .map(|(_, h)| (*h).to_owned())
                    .collect();
                let ports: Vec<u16> = [8040u16, 8030]
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| port_mask & (1 << i) != 0)
                    .map(|(_, p)| *p)
                    .collect();
                let list = AddressAllowlist::redirects("fe", &hosts, &ports, None);
                let listed = !hosts.is_empty() || !ports.is_empty();
                assert_eq!(list.reported_backends, !listed, "{hosts:?} {ports:?}");
                for host in names {
                    for port in [8040u16, 8030, 9999] {
                        let allowed = list.allows(host, port, "fe", &reported);
                        let expected = if listed {
                            reference_allows("fe", &hosts, &ports, host, port)
                        } else {
                            reported.iter().any(|r| r.matches(host, port))
                        };
                        assert_eq!(allowed, expected, "{hosts:?} {ports:?} -> {host}:{port}");
                    }
                }
                // Asked for, the FE's list is trusted beside the listed targets; refused,
                // never.
                let trusting = AddressAllowlist::redirects("fe", &hosts, &ports, Some(true));
                assert!(trusting.allows("other", 8040, "fe", &reported));
                let strict = AddressAllowlist::redirects("fe", &hosts, &ports, Some(false));
                assert_eq!(
                    strict.allows("other", 8040, "fe", &reported),
                    reference_allows("fe", &hosts, &ports, "other", 8040)
                );
            }
        }
    }

    #[test]
    fn addresses_parse() {
        assert_eq!(HostPort::parse("be:8050"), Some(HostPort::new("be", 8050)));
        assert_eq!(
            HostPort::parse("[::1]:8050"),
            Some(HostPort::new("::1", 8050))
        );
        for bad in ["be", "be:", ":80", "be:99999", "u@be:80", "be/x:80"] {
            assert_eq!(HostPort::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn backends_answers() {
        let ok = br#"{"msg":"success","code":0,"data":{"backends":[{"ip":"10.0.0.2","http_port":8040,"is_alive":true},{"ip":"10.0.0.3","http_port":8040,"is_alive":false}]},"count":0}"#;
        assert_eq!(
            parse_backends(ok).unwrap(),
            vec![HostPort::new("10.0.0.2", 8040)]
        );
        assert!(matches!(
            parse_backends(br#"{"code":401,"data":"Access denied"}"#),
            Err(BackendsAnswerError::Unauthorized(m)) if m == "Access denied"
        ));
        assert!(parse_backends(b"<html>").is_err());
        assert!(parse_backends(br#"{"code":0,"data":{}}"#).is_err());
        // A hostile FE's entries that name no host are left out, the others kept.
        let odd = br#"{"code":0,"data":{"backends":[{"ip":"evil.example/x@","http_port":1},{"ip":"","http_port":2},{"ip":"a b","http_port":3},{"ip":"::1","http_port":4},{"ip":"be","http_port":70000}]}}"#;
        assert_eq!(parse_backends(odd).unwrap(), vec![HostPort::new("::1", 4)]);
    }
}
