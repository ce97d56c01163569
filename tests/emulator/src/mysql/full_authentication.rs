//! `caching_sha2_password` full authentication, as a MySQL 8 server asks for it when its
//! cache holds no entry for the user ([`crate::faults::Fault::Sha2FullAuth`]): the client
//! sends the password in clear over TLS, or asks for the server's RSA public key and sends
//! the password, XORed with the nonce, encrypted to it (OAEP, SHA-1).
//!
//! The key pair in `keys/` was made for these tests (`openssl genpkey -algorithm RSA`);
//! `other_public.pem` is a second key whose private half was thrown away: a client that
//! pins it encrypts to a key nobody here can read.

use rsa::pkcs8::DecodePrivateKey as _;
use rsa::{Oaep, RsaPrivateKey};

use super::wire::PacketIo;

/// The public key the face sends a client that asks (`0x02`).
pub const SERVER_PUBLIC_KEY_PEM: &str = include_str!("keys/server_public.pem");
/// A public key whose private half nobody holds.
pub const OTHER_PUBLIC_KEY_PEM: &str = include_str!("keys/other_public.pem");
const SERVER_PRIVATE_KEY_PEM: &str = include_str!("keys/server_private.pem");

/// Switches the client to `caching_sha2_password`, takes its scramble, asks for full
/// authentication and returns what it revealed: `None` when the client hung up,
/// `Some(None)` when it sent nothing readable, `Some(Some(password))` otherwise.
pub(crate) async fn ask(
    io: &mut PacketIo,
    nonce: &[u8; 20],
) -> std::io::Result<Option<Option<Vec<u8>>>> {
    use mysql_common::packets::AuthSwitchRequest;
    use mysql_common::proto::MySerialize as _;
    let mut switch = Vec::new();
    let mut data = nonce.to_vec();
    data.push(0);
    AuthSwitchRequest::new(&b"caching_sha2_password"[..], data).serialize(&mut switch);
    io.write(&switch).await?;
    io.flush().await?;
    if io.read().await?.is_none() {
        return Ok(None);
    }
    // 0x01 0x04: "perform full authentication".
    io.write(&[0x01, 0x04]).await?;
    io.flush().await?;
    let Some(answer) = io.read().await? else {
        return Ok(None);
    };
    if answer != [0x02] {
        // The password itself (a client does this over TLS): NUL-terminated.
        return Ok(Some(Some(without_nul(answer))));
    }
    let mut key = vec![0x01];
    key.extend_from_slice(SERVER_PUBLIC_KEY_PEM.as_bytes());
    io.write(&key).await?;
    io.flush().await?;
    let Some(encrypted) = io.read().await? else {
        return Ok(None);
    };
    Ok(Some(decrypt(&encrypted, nonce)))
}

/// The password in `encrypted`, if it was encrypted to the server's key.
fn decrypt(encrypted: &[u8], nonce: &[u8; 20]) -> Option<Vec<u8>> {
    let key = RsaPrivateKey::from_pkcs8_pem(SERVER_PRIVATE_KEY_PEM).ok()?;
    let mut plain = key.decrypt(Oaep::new::<sha1::Sha1>(), encrypted).ok()?;
    for (i, byte) in plain.iter_mut().enumerate() {
        *byte ^= nonce[i % nonce.len()];
    }
    Some(without_nul(plain))
}

fn without_nul(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.last() == Some(&0) {
        bytes.pop();
    }
    bytes
}
