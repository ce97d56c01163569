//! `sql_mode` as Doris keeps it (`SqlModeHelper`): a set of flags, set by names or by
//! number (`encode`), answered as the names joined by commas in the case-insensitive order
//! of its table (`decode`). `ANSI` and `TRADITIONAL` bring their parts with them.

/// Doris's flags and their bits.
const FLAGS: &[(&str, u64)] = &[
    ("DEFAULT", 1),
    ("PIPES_AS_CONCAT", 2),
    ("ANSI_QUOTES", 4),
    ("IGNORE_SPACE", 8),
    ("NOT_USED", 16),
    ("ONLY_FULL_GROUP_BY", 32),
    ("NO_UNSIGNED_SUBTRACTION", 64),
    ("NO_DIR_IN_CREATE", 128),
    ("ANSI", 1 << 18),
    ("NO_AUTO_VALUE_ON_ZERO", 1 << 19),
    ("NO_BACKSLASH_ESCAPES", 1 << 20),
    ("STRICT_TRANS_TABLES", 1 << 21),
    ("STRICT_ALL_TABLES", 1 << 22),
    ("NO_ZERO_IN_DATE", 1 << 23),
    ("NO_ZERO_DATE", 1 << 24),
    ("INVALID_DATES", 1 << 25),
    ("ERROR_FOR_DIVISION_BY_ZERO", 1 << 26),
    ("TRADITIONAL", 1 << 27),
    ("HIGH_NOT_PRECEDENCE", 1 << 29),
    ("NO_ENGINE_SUBSTITUTION", 1 << 30),
    ("PAD_CHAR_TO_FULL_LENGTH", 1 << 31),
    ("TIME_TRUNCATE_FRACTIONAL", 1 << 32),
    ("REAL_AS_FLOAT", 1 << 34),
];

fn bit(name: &str) -> u64 {
    FLAGS
        .iter()
        .find(|(flag, _)| *flag == name)
        .map_or(0, |(_, bit)| *bit)
}

fn allowed() -> u64 {
    FLAGS.iter().fold(0, |all, (_, bit)| all | bit)
}

/// The parts a combined flag brings.
fn expand(bits: u64) -> u64 {
    let mut out = bits;
    if bits & bit("ANSI") != 0 {
        out |= [
            "REAL_AS_FLOAT",
            "PIPES_AS_CONCAT",
            "ANSI_QUOTES",
            "IGNORE_SPACE",
            "ONLY_FULL_GROUP_BY",
        ]
        .iter()
        .fold(0, |all, name| all | bit(name));
    }
    if bits & bit("TRADITIONAL") != 0 {
        out |= [
            "STRICT_TRANS_TABLES",
            "STRICT_ALL_TABLES",
            "NO_ZERO_IN_DATE",
            "NO_ZERO_DATE",
            "ERROR_FOR_DIVISION_BY_ZERO",
            "NO_ENGINE_SUBSTITUTION",
        ]
        .iter()
        .fold(0, |all, name| all | bit(name));
    }
    out
}

/// The bits of a `SET sql_mode` value (names joined by commas, any case, or numbers), or
/// the part Doris names in its refusal.
pub(super) fn encode(text: &str) -> Result<u64, String> {
    let mut bits = 0;
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let code = if part.bytes().all(|b| b.is_ascii_digit()) {
            expand(part.parse::<u64>().map_err(|_| part.to_owned())?)
        } else {
            let code = expand(bit(&part.to_ascii_uppercase()));
            if code == 0 {
                return Err(part.to_owned());
            }
            code
        };
        bits |= code;
        if bits & !allowed() != 0 {
            return Err(part.to_owned());
        }
    }
    Ok(bits)
}

/// The names of `bits`, as `SELECT @@sql_mode` answers.
pub(super) fn decode(bits: u64) -> String {
    let mut names: Vec<&str> = FLAGS
        .iter()
        .filter(|(_, bit)| bits & bit != 0)
        .map(|(name, _)| *name)
        .collect();
    names.sort_by_key(|name| name.to_ascii_uppercase());
    names.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_read_back_as_doris_names_them() {
        assert_eq!(decode(encode("").unwrap()), "");
        assert_eq!(
            decode(encode("only_full_group_by, NO_BACKSLASH_ESCAPES").unwrap()),
            "NO_BACKSLASH_ESCAPES,ONLY_FULL_GROUP_BY"
        );
        // A number is the bits; `ANSI` brings its parts.
        assert_eq!(
            decode(encode("1048608").unwrap()),
            "NO_BACKSLASH_ESCAPES,ONLY_FULL_GROUP_BY"
        );
        assert_eq!(
            decode(encode("ANSI").unwrap()),
            "ANSI,ANSI_QUOTES,IGNORE_SPACE,ONLY_FULL_GROUP_BY,PIPES_AS_CONCAT,REAL_AS_FLOAT"
        );
        assert_eq!(encode("ONLY_FULL_GROUP_BY,NOPE"), Err("NOPE".into()));
        assert_eq!(
            encode(&(1u64 << 40).to_string()),
            Err((1u64 << 40).to_string())
        );
    }
}
