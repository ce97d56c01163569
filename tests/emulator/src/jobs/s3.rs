//! The emulator's stand-in for object storage: `s3://bucket/key` is the file
//! `<s3 root>/bucket/key`. The S3 table function lists the keys its URI glob matches in
//! lexicographic (byte) order, as Doris's S3 source does.

use std::path::{Path, PathBuf};

/// One object: its key within the bucket, its path on disk and its size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    /// Key within the bucket (`/`-separated).
    pub key: String,
    /// Where the emulator reads it.
    pub path: PathBuf,
    /// Size in bytes.
    pub size: u64,
}

/// `s3://bucket/pattern` split into the bucket and the key pattern.
pub fn split_uri(uri: &str) -> Result<(String, String), String> {
    let rest = ["s3://", "s3a://", "s3n://"]
        .iter()
        .find_map(|scheme| {
            uri.get(..scheme.len())
                .filter(|p| p.eq_ignore_ascii_case(scheme))
                .map(|_| &uri[scheme.len()..])
        })
        .ok_or_else(|| "the S3 uri must start with s3://".to_owned())?;
    let (bucket, pattern) = rest
        .split_once('/')
        .ok_or_else(|| "the S3 uri names no object after the bucket".to_owned())?;
    if bucket.is_empty() || pattern.is_empty() {
        return Err("the S3 uri needs a bucket and a key pattern".into());
    }
    Ok((bucket.to_owned(), pattern.to_owned()))
}

/// Every object of `bucket` under `root` whose key matches `pattern`, sorted by key.
pub fn list(root: &Path, bucket: &str, pattern: &str) -> Result<Vec<Object>, String> {
    let base = root.join(bucket);
    if !base.is_dir() {
        return Err(format!("the bucket {bucket} does not exist"));
    }
    let mut out = Vec::new();
    let mut pending = vec![(base, String::new())];
    while let Some((dir, prefix)) = pending.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("cannot list {bucket}: {e}"))?;
        for entry in entries.flatten() {
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            let key = format!("{prefix}{name}");
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                pending.push((entry.path(), format!("{key}/")));
            } else if glob_match(pattern, &key) {
                let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
                out.push(Object {
                    key,
                    path: entry.path(),
                    size,
                });
            }
        }
    }
    out.sort_by(|a, b| a.key.as_bytes().cmp(b.key.as_bytes()));
    Ok(out)
}

/// Matches a key against a glob: `*` (any run without `/`), `?` (one character but `/`),
/// `[a-z]` / `[!a-z]` (one character of a set), `{a,b}` (alternatives); `\` escapes.
pub fn glob_match(pattern: &str, key: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let key: Vec<char> = key.chars().collect();
    matches(&pattern, &key)
}

fn matches(p: &[char], k: &[char]) -> bool {
    let Some(&first) = p.first() else {
        return k.is_empty();
    };
    match first {
        '*' => (0..=k.len())
            .take_while(|&n| n == 0 || k[n - 1] != '/')
            .any(|n| matches(&p[1..], &k[n..])),
        '?' => k.first().is_some_and(|c| *c != '/') && matches(&p[1..], &k[1..]),
        '[' => match (class_end(p), k.first()) {
            (Some(end), Some(c)) => in_class(&p[1..end], *c) && matches(&p[end + 1..], &k[1..]),
            (Some(_), None) => false,
            (None, _) => k.first() == Some(&'[') && matches(&p[1..], &k[1..]),
        },
        '{' => match brace_end(p) {
            Some(end) => split_alternatives(&p[1..end]).iter().any(|alt| {
                let mut joined = alt.clone();
                joined.extend_from_slice(&p[end + 1..]);
                matches(&joined, k)
            }),
            None => k.first() == Some(&'{') && matches(&p[1..], &k[1..]),
        },
        '\\' if p.len() > 1 => k.first() == Some(&p[1]) && matches(&p[2..], &k[1..]),
        c => k.first() == Some(&c) && matches(&p[1..], &k[1..]),
    }
}

fn class_end(p: &[char]) -> Option<usize> {
    let start = if p.get(1) == Some(&'!') { 2 } else { 1 };
    (start + 1..p.len()).find(|&i| p[i] == ']')
}

fn in_class(set: &[char], c: char) -> bool {
    let (negated, set) = match set.first() {
        Some('!') => (true, &set[1..]),
        _ => (false, set),
    };
    let mut found = false;
    let mut i = 0;
    while i < set.len() {
        if i + 2 < set.len() && set[i + 1] == '-' {
            found |= set[i] <= c && c <= set[i + 2];
            i += 3;
        } else {
            found |= set[i] == c;
            i += 1;
        }
    }
    found != negated
}

fn brace_end(p: &[char]) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in p.iter().enumerate() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

fn split_alternatives(inner: &[char]) -> Vec<Vec<char>> {
    let mut out = vec![Vec::new()];
    let mut depth = 0;
    for &c in inner {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(Vec::new());
                continue;
            }
            _ => {}
        }
        if let Some(last) = out.last_mut() {
            last.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_like_the_s3_source() {
        assert!(glob_match("in/example_[0-1].csv", "in/example_1.csv"));
        assert!(!glob_match("in/example_[0-1].csv", "in/example_2.csv"));
        assert!(glob_match("in/*.csv", "in/a.csv"));
        assert!(!glob_match("in/*.csv", "in/sub/a.csv"));
        assert!(glob_match("in/*/*.csv", "in/sub/a.csv"));
        assert!(glob_match("in/part-?.{csv,json}", "in/part-7.json"));
        assert!(!glob_match("in/part-?.{csv,json}", "in/part-7.parquet"));
        assert!(glob_match("in/[!a]*", "in/b"));
        assert!(!glob_match("in/[!a]*", "in/a"));
        assert!(glob_match("in/exact.csv", "in/exact.csv"));
        assert!(!glob_match("in/exact.csv", "in/exact.csv2"));
    }

    #[test]
    fn uris_split_into_bucket_and_pattern() {
        assert_eq!(
            split_uri("s3://bkt/in/*.csv").unwrap(),
            ("bkt".to_owned(), "in/*.csv".to_owned())
        );
        assert!(split_uri("hdfs://x/y").is_err());
        assert!(split_uri("s3://bucket").is_err());
    }

    #[test]
    fn listing_is_lexicographic_and_recursive() {
        let root = std::env::temp_dir().join(format!("emu-s3-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(root.join("b/in/sub")).unwrap();
        for name in [
            "in/b.csv",
            "in/a.csv",
            "in/sub/c.csv",
            "in/B.csv",
            "in/x.txt",
        ] {
            std::fs::write(root.join("b").join(name), "1\n").unwrap();
        }
        let keys: Vec<String> = list(&root, "b", "in/*.csv")
            .unwrap()
            .into_iter()
            .map(|o| o.key)
            .collect();
        assert_eq!(keys, ["in/B.csv", "in/a.csv", "in/b.csv"]);
        assert!(list(&root, "missing", "*").is_err());
        std::fs::remove_dir_all(root).unwrap();
    }
}
