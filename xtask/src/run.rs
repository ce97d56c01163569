//! Running steps: the workspace root, `cargo`, and steps that print their name and time.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The workspace root (the parent of this crate's folder). `cargo run` names the folder at
/// run time; the compile-time one is only a fallback, because one build folder serves
/// several checkouts (a CI clone, the developer's tree) and cargo may reuse a binary built
/// in another of them.
pub(crate) fn root() -> PathBuf {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    manifest
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The shared build folder: `$CARGO_TARGET_DIR`, or `/var/tmp/daft-doris-target` as in
/// `.ci/run`, so that `cargo xtask demo` run from a plain shell uses the build CI made.
pub(crate) fn shared_target() -> std::path::PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || "/var/tmp/daft-doris-target".into(),
        std::path::PathBuf::from,
    )
}

pub(crate) fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root())
        .env("CARGO_TARGET_DIR", shared_target());
    without_run_env(&mut cmd);
    cmd
}

/// Removes from a child's environment the variables `cargo run` set for this xtask
/// (`CARGO_MANIFEST_DIR`, `CARGO_PKG_*`, …). Cargo records some of them in the
/// fingerprints of crates that read them (ring reads `CARGO_MANIFEST_DIR`), so a build
/// started from here would otherwise differ from the same build started from a shell,
/// and each would recompile what the other built (ring, rustls and everything above
/// them) — measured: 33 s for the emulator and 26 s for the Python package after a
/// plain `cargo test`.
pub(crate) fn without_run_env(cmd: &mut Command) {
    for (key, _) in std::env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        let set_by_cargo_run = matches!(
            key,
            "CARGO_MANIFEST_DIR"
                | "CARGO_MANIFEST_PATH"
                | "CARGO_CRATE_NAME"
                | "CARGO_BIN_NAME"
                | "CARGO_PRIMARY_PACKAGE"
        ) || key.starts_with("CARGO_PKG_");
        if set_by_cargo_run {
            cmd.env_remove(key);
        }
    }
}

/// `cmd` at the lowest CPU priority (`nice -n 19`), same arguments, environment and
/// folder: for a step run beside another whose processes should keep the CPU they want.
pub(crate) fn niced(cmd: &Command) -> Command {
    let mut niced = Command::new("nice");
    niced
        .args(["-n", "19"])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => niced.env(key, value),
            None => niced.env_remove(key),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        niced.current_dir(dir);
    }
    niced
}

/// Runs one step, printing its name and duration; a failing step stops the run.
pub(crate) fn step(name: &str, mut cmd: Command) -> Result<(), String> {
    println!("==> {name}");
    let started = Instant::now();
    let status = cmd
        .status()
        .map_err(|e| format!("{name}: could not start: {e}"))?;
    finished(name, started);
    if status.success() {
        Ok(())
    } else {
        Err(format!("{name} failed ({status})"))
    }
}

/// The steps run so far in this process, with their seconds.
static TIMES: std::sync::Mutex<Vec<(String, f64)>> = std::sync::Mutex::new(Vec::new());

/// Prints a step's time and keeps it for [`print_step_times`].
pub(crate) fn finished(name: &str, started: Instant) {
    let seconds = started.elapsed().as_secs_f64();
    println!("<== {name}: {seconds:.1}s");
    if let Ok(mut times) = TIMES.lock() {
        times.push((name.to_owned(), seconds));
    }
}

/// A table of every step's time, longest first, and their total.
pub(crate) fn print_step_times() {
    let Ok(times) = TIMES.lock() else { return };
    let mut sorted: Vec<&(String, f64)> = times.iter().collect();
    sorted.sort_by(|a, b| b.1.total_cmp(&a.1));
    println!("\nstep times (s):");
    for (name, seconds) in &sorted {
        println!("{seconds:>9.1}  {name}");
    }
    let total: f64 = times.iter().map(|(_, s)| s).sum();
    println!("{total:>9.1}  total of the steps");
}

/// Runs a `cargo test` step, echoing its output and adding up its `test result:` lines.
pub(crate) fn counted_step(name: &str, mut cmd: Command) -> Result<(u64, u64), String> {
    use std::io::{BufRead, BufReader};
    println!("==> {name}");
    let started = Instant::now();
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("{name}: could not start: {e}"))?;
    let (mut passed, mut failed) = (0, 0);
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            println!("{line}");
            if let Some(rest) = line.strip_prefix("test result: ") {
                let count = |word: &str| {
                    rest.split(';')
                        .find_map(|part| part.trim().strip_suffix(word))
                        .and_then(|n| n.trim().rsplit(' ').next()?.parse::<u64>().ok())
                        .unwrap_or(0)
                };
                passed += count(" passed");
                failed += count(" failed");
            }
        }
    }
    let status = child.wait().map_err(|e| format!("{name}: {e}"))?;
    finished(name, started);
    if status.success() {
        Ok((passed, failed))
    } else {
        Err(format!(
            "{name} failed ({status}); {passed} passed, {failed} failed"
        ))
    }
}

/// The debug `doris-emulator` of the shared build, running as a child process on free
/// ports; killed when dropped.
pub(crate) struct EmulatorProcess {
    child: std::process::Child,
    /// The one JSON line it printed: every bound port.
    pub(crate) ports: String,
}

impl EmulatorProcess {
    /// Starts it with its FE HTTP, BE HTTP and MySQL ports at 0, plus `args`, and waits for
    /// its line of ports.
    pub(crate) fn start<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Result<Self, String> {
        use std::io::BufRead as _;
        let mut child = Command::new(shared_target().join("debug/doris-emulator"))
            .args([
                "--fe-http-port",
                "0",
                "--be-http-port",
                "0",
                "--query-port",
                "0",
            ])
            .args(args)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start the emulator: {e}"))?;
        let mut ports = String::new();
        let read = child
            .stdout
            .take()
            .ok_or_else(|| "no emulator output".to_owned())
            .and_then(|out| {
                std::io::BufReader::new(out)
                    .read_line(&mut ports)
                    .map_err(|e| e.to_string())
            });
        let process = Self {
            child,
            ports: ports.trim().to_owned(),
        };
        read?;
        Ok(process)
    }
}

impl Drop for EmulatorProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The seed of a randomised step: `var`'s value to replay a run, else a new one from the
/// clock (at least 1, below 2^31: libFuzzer's `-seed` is an `unsigned int`, 0 meaning
/// "choose one").
pub(crate) fn seed_from(var: &str) -> u32 {
    std::env::var(var)
        .ok()
        .and_then(|s| s.parse::<u32>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| (d.subsec_nanos() ^ d.as_secs() as u32) & 0x7fff_ffff)
                .max(1)
        })
}
