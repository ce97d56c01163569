//! The MySQL connection phase after the client's handshake response, as a state machine the
//! guard drives one packet at a time.
//!
//! Every state names what the server may send next and what the client may answer; a
//! packet that state does not allow is refused, before any of it reaches the other side.
//! On a link that carries a password to a server nobody verified the allowed paths are:
//!
//! ```text
//! Scrambled(native)  --OK/ERR-->  done
//! Scrambled(sha2)    --OK/ERR-->  done
//!                    --01 03-->   FastAuthOk  --OK/ERR--> done
//!                    --01 04-->   FullAuthAsked (pinned key only)
//!                                   client: exactly 02 (a key request) --> KeyAsked
//! KeyAsked           --01 <key>-> (the pinned key relayed instead) PasswordSent
//!                    --ERR-->     done
//! PasswordSent       --OK/ERR-->  done
//! Scrambled(any)     --FE switch to a plugin that reveals nothing (once)--> Scrambled(new)
//! ```
//!
//! An OK is the end only where an OK may come: a server that answers the key request with
//! `0x00` and a key of its own (sqlx reads a key after the first byte without checking it)
//! is refused, not taken as the end of the exchange. Every server packet must also carry
//! the sequence id that follows the client's last one.
//!
//! On a verified link (TLS verified against the user's CA or the web PKI with the host
//! name) or one without a password, the server is who the user named or there is nothing to
//! reveal: packets the machine does not know are relayed with the client's answer, as any
//! plugin's exchange needs; a pinned key still replaces the server's after a key request.

use crate::error::MySqlError;

/// The plugins whose exchange reveals nothing of the password but a scramble.
pub(super) const SAFE_PLUGINS: [&str; 2] = ["mysql_native_password", "caching_sha2_password"];

/// The authentication plugin a scramble was made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Plugin {
    /// `mysql_native_password` (also a greeting that names no plugin).
    Native,
    /// `caching_sha2_password`.
    CachingSha2,
    /// Any other plugin (only ever on a verified link).
    Other,
}

impl Plugin {
    fn named(name: &str) -> Self {
        match name {
            "" | "mysql_native_password" => Self::Native,
            "caching_sha2_password" => Self::CachingSha2,
            _ => Self::Other,
        }
    }
}

/// Where the exchange stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
    /// The client's scramble for `plugin` (its handshake response, or its answer to a
    /// switch) is with the server; `switched` once the server switched plugins.
    Scrambled { plugin: Plugin, switched: bool },
    /// A switch was relayed: the client's scramble for `plugin` is due.
    SwitchAnswerDue { plugin: Plugin },
    /// `caching_sha2_password` fast authentication succeeded: OK or ERR only.
    FastAuthOk,
    /// The server asked for full authentication: the client's answer is due.
    FullAuthAsked,
    /// The client asked for the server's key: the key or ERR only.
    KeyAsked,
    /// The key was relayed: the client's encrypted password is due.
    PasswordDue,
    /// The password left encrypted to the pinned key (or, verified, to the server's): OK
    /// or ERR only.
    PasswordSent,
    /// A verified link's packet the machine does not know was relayed: the client's answer
    /// is due, then anything may follow.
    Free,
    /// The server's OK or ERR reached the client.
    Done,
}

/// What the guard does with a server packet the machine allowed.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Relay {
    /// Relay `packet` to the client; the exchange is over.
    Finish(Vec<u8>),
    /// Relay `packet` to the client and wait for nothing.
    Pass(Vec<u8>),
    /// Relay `packet` to the client, then judge the client's answer ([`Exchange::client`]).
    AskClient(Vec<u8>),
}

/// One link's connection phase.
#[derive(Debug)]
pub(super) struct Exchange {
    stage: Stage,
    /// The server is verified, or the link carries no password.
    verified: bool,
    pinned_key: Option<Vec<u8>>,
    /// The sequence id the server's next packet must carry.
    next_seq: u8,
}

/// Why the guard refused a step, in the words [`MySqlError::Auth`] carries.
pub(super) fn refused(what: &str) -> MySqlError {
    MySqlError::Auth(format!(
        "{what}; over a link whose server is not verified that would hand the password to \
         whoever answers: connect with ssl_mode verify_ca or verify_identity, or pin the \
         server's public key"
    ))
}

/// Refuses a plugin that would reveal the password to an unverified server.
pub(super) fn check_plugin(plugin: &str, verified: bool) -> Result<(), MySqlError> {
    if plugin.is_empty() || SAFE_PLUGINS.contains(&plugin) || verified {
        return Ok(());
    }
    Err(refused(&format!(
        "the server asks for the {} authentication plugin",
        shown_name(plugin)
    )))
}

/// A plugin name fit for an error: printable and short, or "an unknown".
fn shown_name(plugin: &str) -> &str {
    if plugin.len() <= 64 && plugin.bytes().all(|b| b.is_ascii_graphic()) {
        plugin
    } else {
        "an unknown"
    }
}

fn c_string(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// A short name of a packet for an error (its first byte).
fn kind(packet: &[u8]) -> String {
    match packet.first() {
        None => "an empty packet".into(),
        Some(b) => format!("a packet 0x{b:02x}"),
    }
}

impl Exchange {
    /// The exchange after the client's handshake response, made for the greeting's
    /// `plugin`, with `response_seq` the sequence id that response travelled with.
    pub(super) fn new(
        plugin: Option<&str>,
        verified: bool,
        pinned_key: Option<Vec<u8>>,
        response_seq: u8,
    ) -> Self {
        Self {
            stage: Stage::Scrambled {
                plugin: Plugin::named(plugin.unwrap_or_default()),
                switched: false,
            },
            verified,
            pinned_key,
            next_seq: response_seq.wrapping_add(1),
        }
    }

    /// Where the exchange stands.
    #[cfg(test)]
    pub(super) fn stage(&self) -> Stage {
        self.stage
    }

    /// Judges the server's packet `packet`, sent with sequence id `seq`.
    pub(super) fn server(&mut self, seq: u8, packet: Vec<u8>) -> Result<Relay, MySqlError> {
        if seq != self.next_seq {
            return Err(MySqlError::Auth(format!(
                "the server sent an authentication packet out of sequence (id {seq} where \
                 {} was due); the link was closed",
                self.next_seq
            )));
        }
        self.next_seq = seq.wrapping_add(1);
        let first = packet.first().copied();
        if first == Some(0xFF) {
            self.stage = Stage::Done;
            return Ok(Relay::Finish(packet));
        }
        let relay = match (self.stage, first) {
            (
                Stage::Scrambled { .. } | Stage::FastAuthOk | Stage::PasswordSent | Stage::Free,
                Some(0x00),
            ) => {
                self.stage = Stage::Done;
                Relay::Finish(packet)
            }
            (Stage::Scrambled { switched, .. }, Some(0xFE)) => {
                let plugin = c_string(&packet[1..]);
                if switched && !self.verified {
                    return Err(refused("the server switched authentication plugins twice"));
                }
                if plugin.is_empty() && !self.verified {
                    return Err(refused(
                        "the server switched to an unnamed (pre-4.1) authentication plugin",
                    ));
                }
                check_plugin(&plugin, self.verified)?;
                self.stage = Stage::SwitchAnswerDue {
                    plugin: Plugin::named(&plugin),
                };
                Relay::AskClient(packet)
            }
            (
                Stage::Scrambled {
                    plugin: Plugin::CachingSha2,
                    ..
                },
                Some(0x01),
            ) if packet == [0x01, 0x03] => {
                self.stage = Stage::FastAuthOk;
                Relay::Pass(packet)
            }
            (
                Stage::Scrambled {
                    plugin: Plugin::CachingSha2,
                    ..
                },
                Some(0x01),
            ) if packet == [0x01, 0x04] => {
                if !self.verified && self.pinned_key.is_none() {
                    return Err(refused(
                        "the server asked for caching_sha2_password full authentication, which \
                         sends the password encrypted to a key the server supplies",
                    ));
                }
                self.stage = Stage::FullAuthAsked;
                Relay::AskClient(packet)
            }
            (Stage::KeyAsked, Some(0x01)) => {
                self.stage = Stage::PasswordDue;
                match &self.pinned_key {
                    // The pinned key replaces the server's.
                    Some(pinned) => Relay::AskClient(
                        std::iter::once(0x01)
                            .chain(pinned.iter().copied())
                            .collect(),
                    ),
                    None => Relay::AskClient(packet),
                }
            }
            (Stage::KeyAsked, _) if self.pinned_key.is_some() || !self.verified => {
                return Err(refused(&format!(
                    "the server answered the request for its public key with {} that is not a \
                     key",
                    kind(&packet)
                )));
            }
            (stage, _) if self.verified && stage != Stage::Done => {
                self.stage = Stage::Free;
                Relay::AskClient(packet)
            }
            (stage, _) => {
                return Err(refused(&format!(
                    "the server sent {} the authentication exchange does not allow {}",
                    kind(&packet),
                    stage.where_text()
                )));
            }
        };
        Ok(relay)
    }

    /// Judges the client's answer (sent with sequence id `seq`) to the packet last
    /// relayed, before it goes to the server.
    pub(super) fn client(&mut self, seq: u8, answer: &[u8]) -> Result<(), MySqlError> {
        self.next_seq = seq.wrapping_add(1);
        self.stage = match self.stage {
            Stage::SwitchAnswerDue { plugin } => Stage::Scrambled {
                plugin,
                switched: true,
            },
            // sqlx, which sees a plain link to the guard, asks for the key; any other
            // answer would be the password itself.
            Stage::FullAuthAsked if answer == [0x02] => Stage::KeyAsked,
            Stage::FullAuthAsked if self.verified => Stage::PasswordSent,
            Stage::FullAuthAsked => {
                return Err(refused(
                    "the client answered full authentication with something other than a key \
                     request",
                ));
            }
            Stage::PasswordDue => Stage::PasswordSent,
            Stage::Free => Stage::Free,
            other => {
                return Err(MySqlError::Auth(format!(
                    "the client answered {} where no answer was due",
                    other.where_text()
                )));
            }
        };
        Ok(())
    }
}

impl Stage {
    fn where_text(self) -> &'static str {
        match self {
            Stage::Scrambled { .. } => "after the client's scramble",
            Stage::SwitchAnswerDue { .. } => "while the client's answer to a switch was due",
            Stage::FastAuthOk => "after fast authentication succeeded",
            Stage::FullAuthAsked => "after asking for full authentication",
            Stage::KeyAsked => "after the client asked for the server's key",
            Stage::PasswordDue => "while the client's encrypted password was due",
            Stage::PasswordSent => "after the encrypted password",
            Stage::Free => "on a verified link",
            Stage::Done => "after the exchange ended",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PINNED: &[u8] = b"-----BEGIN PUBLIC KEY-----\npinned\n-----END PUBLIC KEY-----\n";

    fn key_packet(first: u8) -> Vec<u8> {
        let mut p = vec![first];
        p.extend_from_slice(b"-----BEGIN PUBLIC KEY-----\nhostile\n-----END PUBLIC KEY-----\n");
        p
    }

    fn sha2(verified: bool, pinned: bool) -> Exchange {
        Exchange::new(
            Some("caching_sha2_password"),
            verified,
            pinned.then(|| PINNED.to_vec()),
            1,
        )
    }

    #[test]
    fn full_authentication_with_a_pinned_key_relays_the_pinned_key_and_ends_on_ok() {
        let mut x = sha2(false, true);
        assert_eq!(
            x.server(2, vec![0x01, 0x04]).unwrap(),
            Relay::AskClient(vec![0x01, 0x04])
        );
        x.client(3, &[0x02]).unwrap();
        let Relay::AskClient(sent) = x.server(4, key_packet(0x01)).unwrap() else {
            panic!("a key asks for the client's answer");
        };
        assert_eq!(&sent[1..], PINNED, "the pinned key replaces the server's");
        x.client(5, &[7; 128]).unwrap();
        assert_eq!(
            x.server(6, vec![0x00, 0, 0]).unwrap(),
            Relay::Finish(vec![0x00, 0, 0])
        );
        assert_eq!(x.stage(), Stage::Done);
    }

    /// The walk-around: `0x00` followed by the server's own key, answering the key request.
    #[test]
    fn an_ok_that_answers_the_key_request_is_refused_under_every_mode() {
        for (verified, pinned) in [(false, true), (true, true), (false, false)] {
            let mut x = sha2(verified, pinned);
            if x.server(2, vec![0x01, 0x04]).is_err() {
                assert!(!verified && !pinned, "full authentication refused unpinned");
                continue;
            }
            x.client(3, &[0x02]).unwrap();
            let e = x.server(4, key_packet(0x00)).unwrap_err();
            assert!(e.to_string().contains("not a key"), "{e}");
        }
    }

    #[test]
    fn an_ok_ends_the_exchange_only_where_an_ok_may_come() {
        let mut x = sha2(false, false);
        assert!(matches!(x.server(2, vec![0x00]).unwrap(), Relay::Finish(_)));
        let mut x = sha2(false, false);
        assert!(matches!(
            x.server(2, vec![0x01, 0x03]).unwrap(),
            Relay::Pass(_)
        ));
        assert!(matches!(x.server(3, vec![0x00]).unwrap(), Relay::Finish(_)));
        let mut x = sha2(false, false);
        x.server(2, vec![0x01, 0x03]).unwrap();
        assert!(
            x.server(3, vec![0x01, 0x04]).is_err(),
            "nothing but OK after fast auth"
        );
    }

    #[test]
    fn an_unverified_link_refuses_what_no_state_allows() {
        let mut native = Exchange::new(Some("mysql_native_password"), false, None, 1);
        assert!(
            native.server(2, vec![0x01, 0x04]).is_err(),
            "no full auth for native"
        );
        let mut x = sha2(false, false);
        assert!(x.server(2, vec![]).is_err(), "an empty packet");
        let mut x = sha2(false, false);
        assert!(
            x.server(2, vec![0x01, 0x09]).is_err(),
            "an unknown more-data packet"
        );
        let mut x = sha2(false, false);
        assert!(x.server(5, vec![0x00]).is_err(), "out of sequence");
    }

    #[test]
    fn a_switch_goes_once_to_a_plugin_that_reveals_nothing() {
        let switch = |plugin: &str| {
            let mut p = vec![0xFE];
            p.extend_from_slice(plugin.as_bytes());
            p.push(0);
            p.extend_from_slice(b"01234567890123456789\0");
            p
        };
        let mut x = Exchange::new(Some("mysql_native_password"), false, None, 1);
        assert!(matches!(
            x.server(2, switch("caching_sha2_password")).unwrap(),
            Relay::AskClient(_)
        ));
        x.client(3, &[9; 32]).unwrap();
        assert!(
            x.server(4, switch("mysql_native_password")).is_err(),
            "a second switch"
        );
        let mut x = Exchange::new(None, false, None, 1);
        assert!(x.server(2, switch("mysql_clear_password")).is_err());
        let mut x = Exchange::new(None, false, None, 1);
        assert!(x.server(2, switch("")).is_err(), "an unnamed plugin");
        let mut x = Exchange::new(None, true, None, 1);
        assert!(
            x.server(2, switch("mysql_clear_password")).is_ok(),
            "verified"
        );
    }

    #[test]
    fn an_answer_to_full_authentication_other_than_a_key_request_never_leaves() {
        let mut x = sha2(false, true);
        x.server(2, vec![0x01, 0x04]).unwrap();
        assert!(x.client(3, b"password\0").is_err());
    }

    #[test]
    fn only_plugins_that_reveal_nothing_pass_an_unverified_link() {
        for safe in ["mysql_native_password", "caching_sha2_password", ""] {
            assert!(check_plugin(safe, false).is_ok());
        }
        for risky in ["mysql_clear_password", "sha256_password", "dialog"] {
            let e = check_plugin(risky, false).unwrap_err();
            assert!(
                matches!(e, MySqlError::Auth(_)) && e.to_string().contains(risky),
                "{e}"
            );
            assert!(check_plugin(risky, true).is_ok());
        }
        let e = check_plugin("\u{1b}[31mred", false).unwrap_err();
        assert!(e.to_string().contains("an unknown"), "{e}");
    }
}
