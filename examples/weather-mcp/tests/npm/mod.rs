//! Node packages for the tests that run Node, installed by the tests themselves so that
//! `cargo test --workspace` on a fresh clone runs them (no separate set-up step).
//!
//! [`installed`] runs `npm ci --prefix <dir> --no-audit --no-fund` (the folder's lock file
//! pins every package) once per test binary and folder; the tests of one binary share
//! the result. When `node` or `npm` cannot be run, the tests are skipped with a loud
//! message on a developer machine and fail under CI (`CI` set), so that a missing Node
//! cannot pass as green. A failing `npm ci` always fails the test.
//!
//! `npm ci` deletes `node_modules` before it installs. So that one test process does not
//! pull the packages from under another that is running Node from them (two `cargo test`
//! runs in one work tree), the install holds an exclusive `flock` on the folder's
//! `package-lock.json`, and the process then keeps a shared one until it exits (Unix; on
//! other systems only the in-process guard applies).

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// A folder whose packages `npm ci` installed in this process; kept (with the shared lock
/// on its `package-lock.json`) until the process exits.
struct Installed {
    dir: PathBuf,
    _lock: File,
}

/// The folder `dir` (relative to this crate) with its packages installed from its lock
/// file, or `None` after a loud message when Node is not installed on a developer
/// machine. `what` names the tests for the messages. Panics when the install fails, and
/// under CI when Node is absent.
pub fn installed(dir: &str, what: &str) -> Option<PathBuf> {
    if let Err(missing) = node_and_npm() {
        let missing = format!("{missing}; Node.js 22 (`node` and `npm` on the PATH) is needed");
        if std::env::var_os("CI").is_some() {
            panic!("{what}: {missing}");
        }
        // Straight to stderr, not `eprintln!`: the test harness captures that and shows it
        // only for failing tests, and a skip must be seen.
        let _ = writeln!(io::stderr(), "\n!!! SKIPPED {what}: {missing} !!!\n");
        return None;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    // One key (and readable messages) for `../../bridges/pi` and the like.
    let dir = dir.canonicalize().unwrap_or(dir);
    static INSTALLS: OnceLock<Mutex<HashMap<PathBuf, Result<Installed, String>>>> = OnceLock::new();
    // Held while installing: the other tests of this binary wait for the first install
    // instead of starting their own.
    let mut installs = INSTALLS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    match installs.entry(dir.clone()).or_insert_with(|| npm_ci(&dir)) {
        Ok(installed) => Some(installed.dir.clone()),
        Err(error) => panic!("{what}: {error}"),
    }
}

fn node_and_npm() -> Result<(), String> {
    for program in ["node", "npm"] {
        match Command::new(program).arg("--version").output() {
            Ok(output) if output.status.success() => {}
            Ok(output) => return Err(format!("`{program} --version` failed ({})", output.status)),
            Err(error) => return Err(format!("`{program}` cannot be run: {error}")),
        }
    }
    Ok(())
}

fn npm_ci(dir: &Path) -> Result<Installed, String> {
    let lock_file = dir.join("package-lock.json");
    let lock = File::open(&lock_file)
        .map_err(|error| format!("cannot open {}: {error}", lock_file.display()))?;
    flock::exclusive(&lock, &lock_file)?;
    let started = Instant::now();
    let output = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--prefix"])
        .arg(dir)
        .output()
        .map_err(|error| format!("`npm ci` cannot be run: {error}"))?;
    if !output.status.success() {
        return Err(failed(dir, &output));
    }
    eprintln!(
        "installed {} from its lock file (npm ci, {:.1} s)",
        dir.display(),
        started.elapsed().as_secs_f64()
    );
    flock::shared(&lock, &lock_file)?;
    Ok(Installed {
        dir: dir.to_owned(),
        _lock: lock,
    })
}

fn failed(dir: &Path, output: &Output) -> String {
    format!(
        "`npm ci --prefix {}` failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        dir.display(),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[cfg(unix)]
mod flock {
    use std::fs::File;
    use std::io;
    use std::os::fd::AsRawFd;
    use std::path::Path;

    /// Waits until no other process holds the lock, saying so when it has to wait.
    pub fn exclusive(file: &File, path: &Path) -> Result<(), String> {
        if lock(file, libc::LOCK_EX | libc::LOCK_NB).is_ok() {
            return Ok(());
        }
        eprintln!(
            "waiting for another test process that uses {}",
            path.display()
        );
        lock(file, libc::LOCK_EX).map_err(|error| format!("flock {}: {error}", path.display()))
    }

    /// Turns the exclusive lock into a shared one: other processes may read the packages
    /// but not reinstall them.
    pub fn shared(file: &File, path: &Path) -> Result<(), String> {
        lock(file, libc::LOCK_SH).map_err(|error| format!("flock {}: {error}", path.display()))
    }

    fn lock(file: &File, operation: libc::c_int) -> io::Result<()> {
        loop {
            // SAFETY: `flock` on a file descriptor that `file` owns and keeps open.
            if unsafe { libc::flock(file.as_raw_fd(), operation) } == 0 {
                return Ok(());
            }
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::Interrupted {
                return Err(error);
            }
        }
    }
}

#[cfg(not(unix))]
mod flock {
    use std::fs::File;
    use std::path::Path;

    pub fn exclusive(_file: &File, _path: &Path) -> Result<(), String> {
        Ok(())
    }

    pub fn shared(_file: &File, _path: &Path) -> Result<(), String> {
        Ok(())
    }
}
