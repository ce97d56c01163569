//! The server's greeting (MySQL protocol 10, `Protocol::HandshakeV10`), read field by field
//! and written again from the fields read, so that what the client behind the guard sees is
//! exactly what the guard judged: no byte the guard did not parse reaches it, and two parsers
//! can never disagree about which authentication plugin the server named.

/// `CLIENT_SSL`: the greeting offers TLS; an SSLRequest asks for it.
pub(crate) const CLIENT_SSL: u32 = 0x0000_0800;
/// `CLIENT_SECURE_CONNECTION`: the greeting's nonce has a second part.
pub(crate) const CLIENT_SECURE_CONNECTION: u32 = 0x0000_8000;
/// `CLIENT_PLUGIN_AUTH`: the greeting names its authentication plugin.
pub(crate) const CLIENT_PLUGIN_AUTH: u32 = 0x0008_0000;

/// A protocol-10 greeting, every field kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Greeting {
    /// The server's version text (without its NUL).
    pub(crate) server_version: Vec<u8>,
    /// The connection id.
    pub(crate) connection_id: [u8; 4],
    /// The nonce's first eight bytes.
    pub(crate) nonce_1: [u8; 8],
    /// The filler byte after them, as sent.
    pub(crate) filler: u8,
    /// The capability flags (both halves).
    pub(crate) capabilities: u32,
    /// Whether the greeting stopped after the lower capability flags (a pre-4.1 server).
    pub(crate) short: bool,
    /// The character set.
    pub(crate) charset: u8,
    /// The status flags.
    pub(crate) status: u16,
    /// The nonce's length byte as sent.
    pub(crate) nonce_length: u8,
    /// The reserved ten bytes as sent.
    pub(crate) reserved: [u8; 10],
    /// The nonce's second part (with `CLIENT_SECURE_CONNECTION`), without its NUL.
    pub(crate) nonce_2: Option<Vec<u8>>,
    /// The authentication plugin (with `CLIENT_PLUGIN_AUTH`).
    pub(crate) plugin: Option<String>,
}

impl Greeting {
    /// Reads a protocol-10 greeting; `None` for anything else (an error packet, another
    /// protocol, a cut or malformed one, a plugin name that is not UTF-8, bytes after the
    /// plugin name).
    pub(crate) fn parse(p: &[u8]) -> Option<Self> {
        let mut r = Reader { p, at: 0 };
        if r.byte()? != 10 {
            return None;
        }
        let server_version = r.until_nul()?.to_vec();
        let connection_id = r.array::<4>()?;
        let nonce_1 = r.array::<8>()?;
        let filler = r.byte()?;
        let lower = u16::from_le_bytes(r.array::<2>()?);
        if r.done() {
            return Some(Self {
                server_version,
                connection_id,
                nonce_1,
                filler,
                capabilities: u32::from(lower),
                short: true,
                charset: 0,
                status: 0,
                nonce_length: 0,
                reserved: [0; 10],
                nonce_2: None,
                plugin: None,
            });
        }
        let charset = r.byte()?;
        let status = u16::from_le_bytes(r.array::<2>()?);
        let upper = u16::from_le_bytes(r.array::<2>()?);
        let capabilities = u32::from(lower) | (u32::from(upper) << 16);
        let nonce_length = r.byte()?;
        let reserved = r.array::<10>()?;
        let nonce_2 = if capabilities & CLIENT_SECURE_CONNECTION != 0 {
            // As MySQL clients read it: max(length - 9, 12) bytes, then a NUL.
            let len = usize::from(nonce_length).saturating_sub(9).max(12);
            let part = r.take(len)?.to_vec();
            if r.byte()? != 0 {
                return None;
            }
            Some(part)
        } else {
            None
        };
        // A plugin flag with nothing after the nonce names no plugin.
        let plugin = if capabilities & CLIENT_PLUGIN_AUTH != 0 && !r.done() {
            Some(String::from_utf8(r.until_nul()?.to_vec()).ok()?)
        } else {
            None
        };
        r.done().then_some(Self {
            server_version,
            connection_id,
            nonce_1,
            filler,
            capabilities,
            short: false,
            charset,
            status,
            nonce_length,
            reserved,
            nonce_2,
            plugin,
        })
    }

    /// The greeting written from its fields (what the client behind the guard reads).
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut p = vec![10];
        p.extend_from_slice(&self.server_version);
        p.push(0);
        p.extend_from_slice(&self.connection_id);
        p.extend_from_slice(&self.nonce_1);
        p.push(self.filler);
        p.extend_from_slice(&(self.capabilities as u16).to_le_bytes());
        if self.short {
            return p;
        }
        p.push(self.charset);
        p.extend_from_slice(&self.status.to_le_bytes());
        p.extend_from_slice(&((self.capabilities >> 16) as u16).to_le_bytes());
        p.push(self.nonce_length);
        p.extend_from_slice(&self.reserved);
        if let Some(part) = &self.nonce_2 {
            p.extend_from_slice(part);
            p.push(0);
        }
        if let Some(plugin) = &self.plugin {
            p.extend_from_slice(plugin.as_bytes());
            p.push(0);
        }
        p
    }
}

struct Reader<'a> {
    p: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn done(&self) -> bool {
        self.at >= self.p.len()
    }

    fn byte(&mut self) -> Option<u8> {
        let b = *self.p.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let part = self.p.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(part)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    fn until_nul(&mut self) -> Option<&'a [u8]> {
        let rest = self.p.get(self.at..)?;
        let end = rest.iter().position(|&b| b == 0)?;
        self.at += end + 1;
        Some(&rest[..end])
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    /// A protocol-10 greeting as MySQL servers send it.
    pub(crate) fn greeting(capabilities: u32, plugin: &str) -> Vec<u8> {
        let mut p = vec![10];
        p.extend_from_slice(b"5.7.99\0");
        p.extend_from_slice(&7u32.to_le_bytes());
        p.extend_from_slice(b"12345678\0");
        p.extend_from_slice(&(capabilities as u16).to_le_bytes());
        p.push(33);
        p.extend_from_slice(&0u16.to_le_bytes());
        p.extend_from_slice(&((capabilities >> 16) as u16).to_le_bytes());
        p.push(21);
        p.extend_from_slice(&[0; 10]);
        p.extend_from_slice(b"123456789012\0");
        p.extend_from_slice(plugin.as_bytes());
        p.push(0);
        p
    }

    #[test]
    fn a_greeting_gives_its_fields_and_is_written_back_the_same() {
        let caps = CLIENT_SSL | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH;
        let bytes = greeting(caps, "caching_sha2_password");
        let parsed = Greeting::parse(&bytes).unwrap();
        assert_eq!(parsed.capabilities, caps);
        assert_eq!(parsed.plugin.as_deref(), Some("caching_sha2_password"));
        assert_eq!(parsed.encode(), bytes);
        // An error greeting, another protocol, a cut one, or one with bytes after the
        // plugin name is not read.
        assert_eq!(Greeting::parse(&[0xFF, 0x10, 0x04]), None);
        let mut other = bytes.clone();
        other[0] = 11;
        assert_eq!(Greeting::parse(&other), None);
        for cut in 0..bytes.len() - 1 {
            let cut = &bytes[..cut];
            if let Some(g) = Greeting::parse(cut) {
                assert_eq!(
                    g.encode(),
                    cut,
                    "a short greeting is written back as it was"
                );
            }
        }
        let mut trailing = bytes.clone();
        trailing.extend_from_slice(b"mysql_clear_password\0");
        assert_eq!(Greeting::parse(&trailing), None);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Whatever the bytes, a greeting the guard reads is written back byte for byte
        /// (so the client reads the plugin the guard judged), and reading never panics.
        #[test]
        fn what_is_read_is_what_is_written(bytes in proptest::collection::vec(any::<u8>(), 0..120)) {
            if let Some(g) = Greeting::parse(&bytes) {
                prop_assert_eq!(g.encode(), bytes);
            }
        }

        #[test]
        fn generated_greetings_round_trip(
            caps in any::<u32>(),
            plugin in "[a-z_]{0,24}",
            nonce_length in any::<u8>(),
        ) {
            let mut bytes = greeting(caps, &plugin);
            bytes[1 + 7 + 4 + 9 + 2 + 1 + 2 + 2] = nonce_length;
            if let Some(g) = Greeting::parse(&bytes) {
                prop_assert_eq!(g.encode(), bytes);
            }
        }
    }
}
