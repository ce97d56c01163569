//! The project's Python: its virtual environment, the package built into it, ruff and pytest.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::run::{root, step, without_run_env};

/// The project's Python: `DAFT_DORIS_PYTHON`, else the venv `.ci/run` creates.
pub(crate) fn python() -> Result<PathBuf, String> {
    let python = std::env::var("DAFT_DORIS_PYTHON").map_or_else(
        |_| PathBuf::from("/var/tmp/daft-doris-venv/bin/python"),
        PathBuf::from,
    );
    if python.exists() {
        Ok(python)
    } else {
        Err(format!(
            "no Python environment at {}: run `bash .ci/run` once (it creates the venv) or set DAFT_DORIS_PYTHON",
            python.display()
        ))
    }
}

/// The Python sources ruff checks.
pub(crate) const PYTHON_SOURCES: [&str; 2] = ["tests/python", "crates/daft-doris-py"];

/// Builds the `daft_doris` package (debug profile, via maturin) into the project's venv.
pub(crate) fn install_python_package(python: &Path) -> Result<(), String> {
    maturin_develop(python, None)
}

/// `maturin develop` of daft_doris into the project's venv: debug in the shared build
/// folder, or release in `release` (its own folder).
pub(crate) fn maturin_develop(python: &Path, release: Option<&str>) -> Result<(), String> {
    let venv = python
        .parent()
        .and_then(Path::parent)
        .ok_or("the project's Python is not inside a virtual environment")?;
    let mut develop = Command::new(python);
    without_run_env(&mut develop);
    develop.env("CARGO_TARGET_DIR", crate::run::shared_target());
    develop
        .current_dir(root().join("crates/daft-doris-py"))
        .env("VIRTUAL_ENV", venv)
        .args(["-m", "maturin", "develop", "--quiet"]);
    let name = match release {
        Some(folder) => {
            develop.env("CARGO_TARGET_DIR", folder).arg("--release");
            "bench: release build of daft_doris into the venv"
        }
        None => "maturin develop (daft_doris into the venv)",
    };
    step(name, develop)
}

/// ruff, then the pytest suite; returns pytest's passed and failed counts.
///
/// `beside` runs on another thread while pytest runs (after the package is built, so a
/// cargo command there does not wait for maturin's lock).
pub(crate) fn python_tests_beside(
    beside: impl FnOnce() -> Result<(), String> + Send + 'static,
) -> Result<(u64, u64), String> {
    let python = python()?;
    let mut lint = Command::new(&python);
    lint.current_dir(root())
        .args(["-m", "ruff", "check"])
        .args(PYTHON_SOURCES);
    step("ruff check", lint)?;
    let mut format = Command::new(&python);
    format
        .current_dir(root())
        .args(["-m", "ruff", "format", "--check"])
        .args(PYTHON_SOURCES);
    step("ruff format --check", format)?;
    install_python_package(&python)?;
    let beside = std::thread::spawn(beside);
    let tested = pytest(&python, &["tests/python"], "python tests", PYTEST_WORKERS);
    let done = beside
        .join()
        .unwrap_or_else(|_| Err("the step beside pytest panicked".into()));
    let counts = tested?;
    done?;
    Ok(counts)
}

/// How many pytest processes run the project venv's suite (pytest-xdist, whole files to
/// each): its tests mostly wait on emulators and servers, so two share 2 cores well.
const PYTEST_WORKERS: usize = 2;

/// Runs pytest on `paths` with `python`, on `workers` processes when more than one (each
/// file on one of them, so a file's module fixtures are made once); returns its passed and
/// failed counts (a failure is an error after the counts are printed).
fn pytest(python: &Path, paths: &[&str], name: &str, workers: usize) -> Result<(u64, u64), String> {
    // Where `cargo()` builds (`$CARGO_TARGET_DIR`, else the shared folder), not `./target`.
    let target = crate::run::shared_target();
    let mut pytest = Command::new(python);
    pytest
        .current_dir(root())
        .env("DORIS_EMULATOR_BIN", target.join("debug/doris-emulator"))
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"]);
    if workers > 1 {
        pytest.args(["-n", &workers.to_string(), "--dist", "loadfile"]);
    }
    pytest.args(paths);
    println!("==> {name}");
    let started = Instant::now();
    let out = pytest
        .output()
        .map_err(|e| format!("{name}: could not start: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    print!("{text}");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    crate::run::finished(name, started);
    // pytest's summary: "3 passed in 0.4s" or "1 failed, 2 passed in 0.5s".
    let summary = text.lines().last().unwrap_or_default();
    let count = |word: &str| {
        summary
            .split([',', ' '])
            .collect::<Vec<_>>()
            .windows(2)
            .find(|w| w[1] == word)
            .and_then(|w| w[0].parse::<u64>().ok())
            .unwrap_or(0)
    };
    let (passed, failed) = (
        count("passed"),
        count("failed") + count("errors") + count("error"),
    );
    if !out.status.success() {
        return Err(format!("{name} failed: {passed} passed, {failed} failed"));
    }
    Ok((passed, failed))
}

/// The other Pythons the API, read and write tests run on, where the machine has them.
const OTHER_PYTHONS: [&str; 2] = ["3.12", "3.13"];

/// The tests they run: the public API end to end (reads, writes, logs).
const OTHER_PYTHON_TESTS: [&str; 5] = [
    "tests/python/test_read_doris.py",
    "tests/python/test_read_options.py",
    "tests/python/test_write_doris.py",
    "tests/python/test_write_atomic.py",
    "tests/python/test_logging.py",
];

/// `python<version>`: on PATH (Debian's packages), else the newest pyenv install of it.
fn interpreter(version: &str) -> Option<PathBuf> {
    let exe = format!("python{version}");
    if Command::new(&exe)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return Some(PathBuf::from(exe));
    }
    let pyenv = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pyenv")))?;
    let prefix = format!("{version}.");
    let mut found: Vec<PathBuf> = std::fs::read_dir(pyenv.join("versions"))
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path().join("bin").join(&exe))
        .filter(|p| p.exists())
        .collect();
    found.sort();
    found.pop()
}

/// The package's wheel (abi3: one for every Python from 3.11) in `out`, built by maturin
/// with the project's Python: from the test build (its profile and features, so nothing
/// but the binding is compiled), or `--release`. With `manylinux` (`"2_28"`, say) it is
/// linked by zig (the `ziglang` package, installed into the project's venv) against that
/// glibc, in a build folder of its own: the host's glibc (2.36 here) would tag it
/// `manylinux_2_34`. Returns its path.
pub(crate) fn build_wheel(
    out: &Path,
    release: bool,
    manylinux: Option<&str>,
) -> Result<PathBuf, String> {
    let _ = std::fs::remove_dir_all(out);
    let python = python()?;
    let mut build = Command::new(&python);
    without_run_env(&mut build);
    build
        .env("CARGO_TARGET_DIR", crate::run::shared_target())
        .current_dir(root().join("crates/daft-doris-py"))
        .args(["-m", "maturin", "build", "--quiet", "--out"])
        .arg(out);
    if release {
        build.arg("--release");
    }
    if let Some(policy) = manylinux {
        if !policy.chars().all(|c| c.is_ascii_digit() || c == '_') {
            return Err(format!(
                "--manylinux takes a policy such as 2_28, not {policy:?}"
            ));
        }
        pip_install_once(&python, &["ziglang"], "dist: install zig (ziglang)")?;
        let folder = format!("{}-zig", crate::run::shared_target().display());
        // maturin finds zig as `python -m ziglang` with the Python on `PATH`: the venv's.
        let bin = python.parent().map(Path::to_path_buf).unwrap_or_default();
        let path = std::env::var("PATH").unwrap_or_default();
        build
            .env("PATH", format!("{}:{path}", bin.display()))
            .env("CARGO_TARGET_DIR", folder)
            // zig is the linker; clippy-driver is not needed for a release artefact.
            .env("RUSTC_WORKSPACE_WRAPPER", "")
            .args(["--zig", "--compatibility"])
            .arg(format!("manylinux_{policy}"));
    }
    step("maturin build (the abi3 wheel)", build)?;
    std::fs::read_dir(out)
        .map_err(|e| format!("no wheel in {}: {e}", out.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| "maturin build made no wheel".to_owned())
}

/// `wheel` installed into a venv per other Python with
/// `tests/python/requirements-api.txt`, which runs [`OTHER_PYTHON_TESTS`]. A Python the
/// machine lacks is skipped, and said so.
pub(crate) fn other_python_tests(wheel: &Path) -> Result<(u64, u64), String> {
    let (mut passed, mut failed) = (0, 0);
    for version in OTHER_PYTHONS {
        let Some(interpreter) = interpreter(version) else {
            println!("==> Python {version}: not on this machine, its tests are skipped");
            continue;
        };
        let python = other_venv(version, &interpreter)?;
        install_requirements(
            &python,
            "tests/python/requirements-api.txt",
            &format!("Python {version}: install the test requirements"),
        )?;
        let mut install = Command::new(&python);
        install
            .args([
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "--no-deps",
                "--force-reinstall",
            ])
            .arg(wheel);
        step(&format!("Python {version}: install the wheel"), install)?;
        let (p, f) = pytest(
            &python,
            &OTHER_PYTHON_TESTS,
            &format!("python {version} tests"),
            1,
        )?;
        passed += p;
        failed += f;
    }
    Ok((passed, failed))
}

/// The Python of the virtual environment named by `env_var` (else `default`), created
/// with the first of `interpreters` that runs when it does not exist yet.
pub(crate) fn venv_python(
    env_var: &str,
    default: &str,
    interpreters: &[String],
) -> Result<PathBuf, String> {
    let venv = std::env::var(env_var).map_or_else(|_| PathBuf::from(default), PathBuf::from);
    let python = venv.join("bin/python");
    if !python.exists() {
        let base = interpreters
            .iter()
            .find(|p| Command::new(p).arg("--version").output().is_ok())
            .ok_or_else(|| format!("none of {} runs here", interpreters.join(", ")))?;
        let mut create = Command::new(base);
        create.arg("-m").arg("venv").arg(&venv);
        step(
            &format!("create the virtual environment {}", venv.display()),
            create,
        )?;
    }
    Ok(python)
}

/// What the demo needs in a venv: wheels only (`crates/daft-doris-py/examples/requirements-demo.txt`).
pub(crate) const DEMO_REQUIREMENTS: &str = "crates/daft-doris-py/examples/requirements-demo.txt";

/// The project's virtual environment with the demo's requirements (not the test suite's:
/// those compile against system libraries `.ci/run` installs), created when missing
/// (`DAFT_DORIS_VENV`, default `/var/tmp/daft-doris-venv`); returns its Python.
pub(crate) fn ensure_venv() -> Result<PathBuf, String> {
    let python = venv_python(
        "DAFT_DORIS_VENV",
        "/var/tmp/daft-doris-venv",
        &["python3.11".to_owned(), "python3".to_owned()],
    )?;
    install_requirements(
        &python,
        DEMO_REQUIREMENTS,
        "demo: install the Python requirements",
    )?;
    Ok(python)
}

/// The demo's requirements install from wheels alone (`--only-binary :all:`) into a venv
/// made anew, as on a fresh machine with only Rust and Python.
pub(crate) fn check_demo_requirements() -> Result<(), String> {
    let folder = PathBuf::from("/var/tmp/daft-doris-demo-check");
    let _ = std::fs::remove_dir_all(&folder);
    let base = ["python3.11", "python3"]
        .iter()
        .find(|p| Command::new(p).arg("--version").output().is_ok())
        .ok_or("no python3 runs here")?;
    let mut create = Command::new(base);
    create.args(["-m", "venv"]).arg(&folder);
    step("demo check: a fresh virtual environment", create)?;
    let mut install = Command::new(folder.join("bin/python"));
    install.current_dir(root()).args([
        "-m",
        "pip",
        "install",
        "-q",
        "--disable-pip-version-check",
        "--only-binary",
        ":all:",
        "-r",
        DEMO_REQUIREMENTS,
    ]);
    step(
        "demo check: its requirements install from wheels alone",
        install,
    )?;
    let _ = std::fs::remove_dir_all(&folder);
    Ok(())
}

/// `pip install -r <requirements>` (a path from the workspace root) into `python`'s venv.
pub(crate) fn install_requirements(
    python: &Path,
    requirements: &str,
    name: &str,
) -> Result<(), String> {
    pip_install_once(python, &["-r", requirements], name)
}

/// `pip install -q <args>` into `python`'s venv, once per process: an install this run
/// already made (see [`prepare_environments`]) is not asked of pip again.
pub(crate) fn pip_install_once(python: &Path, args: &[&str], name: &str) -> Result<(), String> {
    static DONE: std::sync::Mutex<Vec<(PathBuf, Vec<String>)>> = std::sync::Mutex::new(Vec::new());
    let key = (
        python.to_path_buf(),
        args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>(),
    );
    if DONE.lock().is_ok_and(|done| done.contains(&key)) {
        return Ok(());
    }
    let mut install = Command::new(python);
    install
        .current_dir(root())
        .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
        .args(args);
    step(name, install)?;
    if let Ok(mut done) = DONE.lock() {
        done.push(key);
    }
    Ok(())
}

/// Every Python environment a CI run uses after the tests' build, made ready while that
/// build compiles (pip mostly downloads and unpacks; on a fresh machine this took minutes
/// of the run): a venv per other Python with the API tests' requirements, the peers of
/// the benchmark harness, and the reference connector's venv.
pub(crate) fn prepare_environments() -> Result<(), String> {
    check_demo_requirements()?;
    for version in OTHER_PYTHONS {
        if let Some(interpreter) = interpreter(version) {
            let python = other_venv(version, &interpreter)?;
            install_requirements(
                &python,
                "tests/python/requirements-api.txt",
                &format!("Python {version}: install the test requirements"),
            )?;
        }
    }
    install_requirements(
        &python()?,
        "crates/daft-doris-py/benches/requirements.txt",
        "bench: install the peers (ConnectorX, matplotlib)",
    )?;
    crate::bench::ensure_reference_venv().map(drop)
}

/// The venv of the other Python `version`, made with `interpreter` when missing.
fn other_venv(version: &str, interpreter: &Path) -> Result<PathBuf, String> {
    venv_python(
        &format!("DAFT_DORIS_VENV_{}", version.replace('.', "_")),
        &format!("/var/tmp/daft-doris-venv-{version}"),
        &[interpreter.display().to_string()],
    )
}
