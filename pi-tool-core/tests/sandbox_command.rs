//! `safety::Command` inside a `Sandbox`: the kernel refuses what the profile does not
//! allow, checked by the host after the run. Under `CI` a kernel that cannot enforce the
//! sandbox fails the test; elsewhere it is reported and the test returns.
#![cfg(target_os = "linux")]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use pi_tool_core::AbortSignal;
use pi_tool_core::ToolAnnotations;
use pi_tool_core::ToolErrorKind;
use pi_tool_core::safety::{Command, Sandbox, ViolationKind};

struct Root(PathBuf);

impl Root {
    fn new(name: &str) -> Option<Root> {
        let dir =
            std::env::temp_dir().join(format!("pi-sandbox-cmd-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let root = Root(std::fs::canonicalize(dir).unwrap());
        if let Err(error) = Sandbox::for_root(&root.0).check() {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI is set and the kernel cannot enforce the sandbox: {error}"
            );
            eprintln!("NOT RUN: the kernel cannot enforce the sandbox: {error}");
            return None;
        }
        Some(root)
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        let _ = std::fs::remove_file(self.0.with_extension("outside"));
    }
}

#[tokio::test]
async fn a_sandboxed_command_writes_its_root_and_nothing_else() {
    let Some(root) = Root::new("write") else {
        return;
    };
    let outside = root.0.with_extension("outside");
    let script = format!(
        "echo in > inside.txt; echo out > {0}; echo $HOME $TMPDIR; echo t > $TMPDIR/t; cat $TMPDIR/t; echo $$; ls /proc | grep -c '^[0-9]'",
        outside.display()
    );
    let out = Command::new("bash")
        .args(["-c", &script])
        .current_dir(&root.0)
        .sandbox(Sandbox::for_root(&root.0))
        .run(&AbortSignal::never())
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(root.0.join("inside.txt")).unwrap(),
        "in\n"
    );
    assert!(!outside.exists());
    let lines: Vec<&str> = out.stdout.text.lines().collect();
    // A private HOME and TMPDIR, writable, gone after the run.
    let private: Vec<&str> = lines[0].split(' ').collect();
    assert!(
        private[0].ends_with("/home") && private[1].ends_with("/tmp"),
        "{lines:?}"
    );
    assert_eq!(lines[1], "t");
    assert!(
        !std::path::Path::new(private[1]).exists(),
        "the private directory stayed"
    );
    // PID 1 of its own namespace, seeing only itself and its pipeline.
    assert_eq!(lines[2], "1");
    assert!(lines[3].parse::<u32>().unwrap() <= 4, "{lines:?}");
    // The refusal, as the run reports it.
    let found = &out.sandbox_violations;
    assert_eq!(found.len(), 1, "{}", out.stderr.text);
    assert_eq!(found[0].kind, ViolationKind::Write);
    assert_eq!(found[0].path.as_deref(), Some(outside.as_path()));
}

#[tokio::test]
async fn a_read_only_tool_writes_nothing_and_an_exit_status_is_kept() {
    let Some(root) = Root::new("readonly") else {
        return;
    };
    std::fs::write(root.0.join("kept.txt"), "kept\n").unwrap();
    let sandbox = Sandbox::from_annotations(&ToolAnnotations::new().read_only(true), &root.0);
    let out = Command::new("sh")
        .args([
            "-c",
            "cat kept.txt; echo x > kept.txt; rm -f kept.txt; exit 7",
        ])
        .current_dir(&root.0)
        .sandbox(sandbox)
        .run(&AbortSignal::never())
        .await
        .unwrap();
    assert_eq!(out.stdout.text, "kept\n");
    assert_eq!(out.code(), Some(7), "the supervisor exits as PID 1 did");
    assert_eq!(
        std::fs::read_to_string(root.0.join("kept.txt")).unwrap(),
        "kept\n"
    );
    // PID 1 killed by a signal (a fault; a signal it sends itself is ignored, as for
    // any init): the same signal outside.
    let killed = Command::new("python3")
        .args(["-c", "import ctypes; ctypes.string_at(0)"])
        .current_dir(&root.0)
        .sandbox(Sandbox::for_root(&root.0))
        .run(&AbortSignal::never())
        .await
        .unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&killed.status),
        Some(libc_sigsegv()),
        "{killed:?}"
    );
}

#[tokio::test]
async fn the_wall_time_limit_kills_the_whole_namespace() {
    let Some(root) = Root::new("walltime") else {
        return;
    };
    let started = Instant::now();
    let error = Command::new("sh")
        .args(["-c", "setsid sleep 30 & sleep 30"])
        .current_dir(&root.0)
        .sandbox(Sandbox::for_root(&root.0).wall_time(Duration::from_millis(300)))
        .run(&AbortSignal::never())
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ToolErrorKind::Timeout);
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// SIGSEGV on Linux (every architecture the sandbox supports).
fn libc_sigsegv() -> i32 {
    11
}

#[tokio::test]
async fn the_output_limit_kills_a_flood() {
    let Some(root) = Root::new("output") else {
        return;
    };
    let started = Instant::now();
    let error = Command::new("yes")
        .current_dir(&root.0)
        .sandbox(Sandbox::for_root(&root.0).max_output_bytes(100_000))
        .run(&AbortSignal::never())
        .await
        .unwrap_err();
    assert_eq!(
        error.message(),
        "Command `yes` was killed after 100000 bytes of output (the sandbox's output limit)"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}
