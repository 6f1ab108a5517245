//! The cost of the kernel sandbox per call, side by side in one run: `bash -c true`
//! through `safety::Command` unsandboxed, inside `Sandbox::for_root`, and through
//! `bwrap` (bubblewrap) doing the same confinement (a read-only tree with the root and a
//! private directory writable, new user, mount, PID, network and IPC namespaces, a new
//! `/proc`), each started by the same runner. `bench/sandbox/run.sh` builds and runs it.
//!
//! ```text
//! cargo run --release -p pi-tool-core --example sandbox_overhead -- [CALLS]
//! ```

use std::time::{Duration, Instant};

use pi_tool_core::AbortSignal;
use pi_tool_core::safety::{Command, Sandbox};

fn summary(name: &str, mut times: Vec<Duration>) -> f64 {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let median = ms(times[times.len() / 2]);
    let p90 = ms(times[times.len() * 9 / 10]);
    let mean = times.iter().map(|&d| ms(d)).sum::<f64>() / times.len() as f64;
    println!(
        "{name:<12} median {median:7.3} ms   mean {mean:7.3} ms   p90 {p90:7.3} ms   min {:7.3} ms",
        ms(times[0])
    );
    median
}

/// One run to its end; its wall time.
async fn once(command: Command, signal: &AbortSignal) -> Result<Duration, String> {
    let started = Instant::now();
    command
        .run(signal)
        .await
        .and_then(|out| out.error_if_failed())
        .map_err(|error| error.message().to_owned())?;
    Ok(started.elapsed())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let calls: usize = std::env::args()
        .nth(1)
        .map(|n| n.parse())
        .transpose()?
        .unwrap_or(200);
    let root = std::env::temp_dir().join(format!("pi-sandbox-bench-{}", std::process::id()));
    std::fs::create_dir_all(&root)?;
    let root = std::fs::canonicalize(root)?;
    let sandbox = Sandbox::for_root(&root);
    sandbox.check()?;
    let bwrap = std::process::Command::new("bwrap")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    let plain = || Command::new("bash").args(["-c", "true"]).current_dir(&root);
    let sandboxed = || plain().sandbox(sandbox.clone());
    let private = root.join("private");
    std::fs::create_dir_all(&private)?;
    let root_s = root.to_string_lossy().into_owned();
    let private_s = private.to_string_lossy().into_owned();
    let wrapped = || {
        Command::new("bwrap")
            .args(["--unshare-all", "--die-with-parent", "--new-session"])
            .args(["--ro-bind", "/", "/"])
            .args(["--dev", "/dev", "--proc", "/proc"])
            .args(["--bind", &root_s, &root_s, "--bind", &private_s, &private_s])
            .args([
                "--setenv", "TMPDIR", &private_s, "--setenv", "HOME", &private_s,
            ])
            .args(["--chdir", &root_s, "bash", "-c", "true"])
            .current_dir(&root)
    };
    let signal = AbortSignal::never();
    // Warm up each (page cache, the sandbox's one probe of the kernel).
    for _ in 0..10 {
        once(plain(), &signal).await?;
        once(sandboxed(), &signal).await?;
        if bwrap {
            once(wrapped(), &signal).await?;
        }
    }
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    // Interleaved, so that load on the machine falls on all three alike.
    for _ in 0..calls {
        a.push(once(plain(), &signal).await?);
        b.push(once(sandboxed(), &signal).await?);
        if bwrap {
            c.push(once(wrapped(), &signal).await?);
        }
    }
    println!("bash -c true, {calls} calls each, interleaved");
    let unsandboxed = summary("unsandboxed", a);
    let ours = summary("sandboxed", b);
    println!(
        "overhead of the sandbox (medians): {:.3} ms",
        ours - unsandboxed
    );
    if bwrap {
        let theirs = summary("bwrap", c);
        println!(
            "bwrap's overhead (medians): {:.3} ms; sandboxed / bwrap: {:.2}",
            theirs - unsandboxed,
            ours / theirs
        );
    } else {
        println!("bwrap: not installed (apt-get install bubblewrap)");
    }
    let _ = std::fs::remove_dir_all(&root);
    Ok(())
}
