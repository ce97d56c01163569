//! `cargo xtask tested-by`: every test a document names still exists.
//!
//! A promise in the docs ("never", "exactly once", …) links to the test that tries to break
//! it with a *Tested by* line (docs/testing.md). A renamed or deleted test would leave the
//! line pointing at nothing, so this check reads README.md, `docs/*.md` and every crate's
//! README and resolves what those lines name:
//!
//! - in the text after each "tested by" (to the end of its paragraph, list item or table row),
//!   every backticked test-like name (lowercase `snake_case` with at least three
//!   underscores) and every backticked path (`…/x.rs`, `.py`, `.md`, `.txt`, `.toml`);
//! - in every table row, backticked names with at least four underscores (the tables of
//!   docs/testing.md name a test per promise);
//! - anywhere in a document, every backticked `test_…` name.
//!
//! A `test_…` name must be a pytest test (`def test_…`); another name that is a function
//! must be a test (a Rust `fn` under a `#[test]`-like attribute or inside `proptest!`, a
//! Python `def test_…`), and a name that is no function must at least appear in code outside
//! comments (Doris configuration names such as `label_keep_max_second` are cited beside
//! tests); a path must be a file of the repository (whole, or as a suffix, so `src/ident.rs`
//! in a crate's README resolves).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::run::root;

/// Folders never read: build output, VCS data and fuzz inputs.
const SKIPPED_FOLDERS: [&str; 6] = [
    ".git",
    "target",
    "seeds",
    "__pycache__",
    ".venv",
    "node_modules",
];

/// Runs the check over the checkout and prints how many references resolved.
pub(crate) fn tested_by() -> Result<(), String> {
    println!("==> tested-by: the tests the docs name exist");
    let root = root();
    let mut files = Vec::new();
    walk(&root, &root, &mut files)?;
    let sources = Sources::read(&root, &files);
    let mut docs = vec![PathBuf::from("README.md")];
    for file in &files {
        let text = file.to_string_lossy();
        let is_doc =
            (text.starts_with("docs/") && text.ends_with(".md") && !text[5..].contains('/'))
                || (text.starts_with("crates/")
                    && text.ends_with("/README.md")
                    && text.matches('/').count() == 2);
        if is_doc {
            docs.push(file.clone());
        }
    }
    docs.sort();
    let mut checked = 0;
    let mut missing = Vec::new();
    for doc in &docs {
        let text = std::fs::read_to_string(root.join(doc))
            .map_err(|e| format!("tested-by: cannot read {}: {e}", doc.display()))?;
        for reference in references(&text) {
            checked += 1;
            if !sources.resolves(&reference, &files) {
                missing.push(format!("{}: `{}`", doc.display(), reference.text()));
            }
        }
    }
    println!(
        "    {checked} references in {} documents, {} missing",
        docs.len(),
        missing.len()
    );
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "documents name tests or files that do not exist: {}",
            missing.join("; ")
        ))
    }
}

/// What a document names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Reference {
    /// A pytest name: must be defined.
    PythonTest(String),
    /// A test-like Rust or Python name: defined, or at least present in source.
    Name(String),
    /// A repository file.
    Path(String),
}

impl Reference {
    fn text(&self) -> &str {
        match self {
            Self::PythonTest(s) | Self::Name(s) | Self::Path(s) => s,
        }
    }
}

/// The references of one document, deduplicated.
fn references(text: &str) -> BTreeSet<Reference> {
    let mut found = BTreeSet::new();
    for window in tested_by_windows(text) {
        for token in backticked(window) {
            if token.starts_with("test_") && is_snake(token) {
                found.insert(Reference::PythonTest(token.to_owned()));
            } else if is_snake(token) && token.matches('_').count() >= 3 {
                found.insert(Reference::Name(token.to_owned()));
            } else if is_path(token) {
                found.insert(Reference::Path(token.to_owned()));
            }
        }
    }
    for row in text.lines().filter(|line| line.starts_with('|')) {
        for token in backticked(row) {
            if is_snake(token) && token.matches('_').count() >= 4 && !token.starts_with("test_") {
                found.insert(Reference::Name(token.to_owned()));
            }
        }
    }
    for token in backticked(text) {
        if token.starts_with("test_") && is_snake(token) {
            found.insert(Reference::PythonTest(token.to_owned()));
        }
    }
    found
}

/// The text after each "tested by": to the end of its table row when the line is one, else
/// to the end of its paragraph.
fn tested_by_windows(text: &str) -> Vec<&str> {
    let lower = text.to_ascii_lowercase();
    let mut windows = Vec::new();
    let mut from = 0;
    while let Some(at) = lower[from..].find("tested by").map(|i| i + from) {
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let end = if text[line_start..].starts_with('|') {
            text[at..].find('\n').map_or(text.len(), |i| i + at)
        } else {
            // The end of the paragraph, or of its list item.
            ["\n\n", "\n- ", "\n* ", "\n|"]
                .iter()
                .filter_map(|stop| text[at..].find(stop))
                .min()
                .map_or(text.len(), |i| i + at)
        };
        windows.push(&text[at..end]);
        from = at + "tested by".len();
    }
    windows
}

/// Backticked spans that stay on one line.
fn backticked(text: &str) -> impl Iterator<Item = &str> {
    text.split('`')
        .enumerate()
        .filter(|(i, part)| i % 2 == 1 && !part.contains('\n') && !part.is_empty())
        .map(|(_, part)| part)
}

fn is_snake(token: &str) -> bool {
    token.starts_with(|c: char| c.is_ascii_lowercase())
        && token
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn is_path(token: &str) -> bool {
    token.contains('/')
        && !token.contains(' ')
        && [".rs", ".py", ".md", ".txt", ".toml"]
            .iter()
            .any(|ext| token.ends_with(ext))
}

/// The functions defined in the repository's Rust and Python files, which of them are
/// tests, and the words of their code outside comments.
#[derive(Default)]
struct Sources {
    defined: BTreeSet<String>,
    tests: BTreeSet<String>,
    words: BTreeSet<String>,
}

impl Sources {
    fn read(root: &Path, files: &[PathBuf]) -> Self {
        let mut sources = Self::default();
        for file in files {
            let language = match file.extension().and_then(|e| e.to_str()) {
                Some("rs") => Language::Rust,
                Some("py") => Language::Python,
                _ => continue,
            };
            if let Ok(text) = std::fs::read_to_string(root.join(file)) {
                sources.add(&text, language);
            }
        }
        sources
    }

    fn add(&mut self, text: &str, language: Language) {
        // A Rust test: `fn` after an attribute naming a test (`#[test]`, `#[tokio::test(…)]`)
        // with only attributes or doc comments between, or any `fn` inside `proptest!`.
        let mut test_attribute = false;
        let mut in_attribute = false;
        let mut in_proptest = false;
        let mut depth = 0i64;
        let mut proptest_depth = 0i64;
        for line in text.lines() {
            let code = strip_comment(line, language);
            let trimmed = code.trim();
            // A multi-line attribute: its inner lines keep what its first line said.
            let attribute_line = in_attribute || trimmed.starts_with("#[");
            in_attribute = attribute_line && !trimmed.ends_with(']');
            if trimmed.starts_with("proptest!") || trimmed.starts_with("proptest::proptest!") {
                in_proptest = true;
                proptest_depth = depth;
            }
            if trimmed.starts_with("#[") && trimmed.contains("test") {
                test_attribute = true;
            }
            let words: Vec<&str> = code
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| !w.is_empty())
                .collect();
            for pair in words.windows(2) {
                if pair[0] == "fn" || pair[0] == "def" {
                    let name = pair[1].to_owned();
                    let python_test = pair[0] == "def" && name.starts_with("test_");
                    if python_test || (pair[0] == "fn" && (test_attribute || in_proptest)) {
                        self.tests.insert(name.clone());
                    }
                    self.defined.insert(name);
                    test_attribute = false;
                }
            }
            if !(trimmed.is_empty() || attribute_line || words.contains(&"fn")) {
                test_attribute = false;
            }
            depth += code.matches('{').count() as i64 - code.matches('}').count() as i64;
            if in_proptest && depth <= proptest_depth && trimmed.ends_with('}') {
                in_proptest = false;
            }
            self.words.extend(words.into_iter().map(str::to_owned));
        }
    }

    fn resolves(&self, reference: &Reference, files: &[PathBuf]) -> bool {
        match reference {
            Reference::PythonTest(name) => self.tests.contains(name),
            Reference::Name(name) if self.defined.contains(name) => self.tests.contains(name),
            Reference::Name(name) => self.words.contains(name),
            Reference::Path(path) => files.iter().any(|file| {
                let file = file.to_string_lossy();
                file == path.as_str() || file.ends_with(&format!("/{path}"))
            }),
        }
    }
}

/// The language of a source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Language {
    Rust,
    Python,
}

/// A line without its comment (`//` in Rust, `#` in Python).
fn strip_comment(line: &str, language: Language) -> &str {
    let marker = match language {
        Language::Rust => "//",
        Language::Python => "#",
    };
    line.find(marker).map_or(line, |i| &line[..i])
}

/// Every file under `dir`, relative to `root`, skipping [`SKIPPED_FOLDERS`].
fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("tested-by: cannot list {}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("tested-by: {e}"))?;
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if !SKIPPED_FOLDERS.iter().any(|s| name == *s) {
                walk(root, &path, out)?;
            }
        } else if let Ok(relative) = path.strip_prefix(root) {
            out.push(relative.to_path_buf());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        references(text)
            .into_iter()
            .map(|r| r.text().to_owned())
            .collect()
    }

    #[test]
    fn names_after_tested_by_count_to_the_end_of_the_paragraph_or_row() {
        let doc = "A promise. *Tested by* `one_two_three_four` and\n`tests/x.rs`, not `max_in` or `a b`.\n- next item `other_item_not_checked_here`\n\nLater `five_six_seven_eight` is free text.\n| a | b, tested by `row_name_is_here` |\n| `short_name` | `a_row_names_a_test` |\n";
        assert_eq!(
            names(doc),
            [
                "a_row_names_a_test",
                "one_two_three_four",
                "row_name_is_here",
                "tests/x.rs"
            ]
        );
    }

    #[test]
    fn pytest_names_are_checked_anywhere() {
        assert_eq!(names("see `test_it` or `test_x.py`"), ["test_it"]);
    }

    #[test]
    fn a_name_must_be_a_test_where_it_is_a_function_and_code_where_it_is_not() {
        let mut sources = Sources::default();
        sources.add(
            "#[test]\nfn a_test_that_exists() {}\n\n#[tokio::test(\n    flavor = \"multi_thread\"\n)]\n/// Doc.\nasync fn an_async_test_here() {}\nfn a_helper_not_a_test() {}\nproptest::proptest! {\n    #[allow(x)]\n    fn a_generated_case_test(x in 0..1) {}\n}\nfn after_the_macro_helper() {}\n// a_test_only_in_a_comment\n",
            Language::Rust,
        );
        sources.add(
            "def test_py():\n    x = label_keep_max_second // 2\n# test_only_mentioned\n",
            Language::Python,
        );
        let files = [PathBuf::from("crates/doris-sql/src/ident.rs")];
        let ok = |r: Reference| sources.resolves(&r, &files);
        assert!(ok(Reference::Name("a_test_that_exists".into())));
        assert!(ok(Reference::Name("an_async_test_here".into())));
        assert!(ok(Reference::Name("a_generated_case_test".into())));
        assert!(!ok(Reference::Name("a_helper_not_a_test".into())));
        assert!(!ok(Reference::Name("after_the_macro_helper".into())));
        assert!(ok(Reference::Name("label_keep_max_second".into())));
        assert!(!ok(Reference::Name("a_test_that_was_renamed".into())));
        assert!(!ok(Reference::Name("a_test_only_in_a_comment".into())));
        assert!(ok(Reference::PythonTest("test_py".into())));
        assert!(!ok(Reference::PythonTest("test_only_mentioned".into())));
        assert!(ok(Reference::Path("src/ident.rs".into())));
        assert!(!ok(Reference::Path("c/ident.rs".into())));
    }
}
