//! The pack through its JSON-level tools, on real directories: the differences from Pi
//! that `docs/differences-from-pi.md` §22 lists, and hostile input (issue 21's "Bad
//! input"): each is a clear error or a bounded result, nothing lost, nothing left running.

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pi_tool::context::ExtensionContext;
use pi_tool::{
    AbortController, AbortSignal, JsonToolResult, OnUpdate, ToolError, ToolInvocation, Value, json,
};

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        Dir::new_in(&std::env::temp_dir(), name)
    }

    fn new_in(base: &Path, name: &str) -> Dir {
        let path = base.join(format!("pi-tool-coding-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Dir(std::fs::canonicalize(path).unwrap())
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn call_with(
    tool: &str,
    args: Value,
    cwd: &Path,
    signal: AbortSignal,
    updates: Option<Arc<Mutex<Vec<JsonToolResult>>>>,
) -> Result<JsonToolResult, ToolError> {
    let pack = pi_tool_coding::pack();
    let tool = pack.get(tool).expect("tool");
    let args = tool.check_arguments(&args)?.into_owned();
    let on_update = match updates {
        Some(sink) => OnUpdate::new(move |u| sink.lock().unwrap().push(u)),
        None => OnUpdate::none(),
    };
    let call = ToolInvocation::new("t", &args, signal, on_update)
        .with_context(ExtensionContext::builder(cwd).build());
    tool.execute(call).await
}

async fn call(tool: &str, args: Value, cwd: &Path) -> Result<JsonToolResult, ToolError> {
    call_with(tool, args, cwd, AbortSignal::never(), None).await
}

fn text(r: &JsonToolResult) -> String {
    r.text_content()
}

#[tokio::test]
async fn a_path_with_nul_is_a_clear_error() {
    let dir = Dir::new("nul");
    let err = call("read", json!({"path": "a\u{0}b"}), &dir.0)
        .await
        .unwrap_err();
    assert!(
        err.message().contains("without null bytes"),
        "{}",
        err.message()
    );
    let err = call("write", json!({"path": "a\u{0}b", "content": "x"}), &dir.0)
        .await
        .unwrap_err();
    assert!(
        err.message().contains("without null bytes"),
        "{}",
        err.message()
    );
    let err = call(
        "edit",
        json!({"path": "a\u{0}b", "edits": [{"oldText": "a", "newText": "b"}]}),
        &dir.0,
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Could not edit file: a\u{0}b. Error code: ERR_INVALID_ARG_VALUE."
    );
    assert_eq!(
        std::fs::read_dir(&dir.0).unwrap().count(),
        0,
        "nothing written"
    );
}

#[tokio::test]
async fn very_long_paths_are_node_errors() {
    let dir = Dir::new("long");
    let name = "a".repeat(300);
    let err = call("read", json!({"path": name}), &dir.0)
        .await
        .unwrap_err();
    assert!(
        err.message()
            .starts_with("ENAMETOOLONG: name too long, access '"),
        "{}",
        err.message()
    );
    let deep = "d/".repeat(3000) + "f.txt";
    let err = call("write", json!({"path": deep, "content": "x"}), &dir.0)
        .await
        .unwrap_err();
    assert!(
        err.message()
            .starts_with("ENAMETOOLONG: name too long, mkdir '"),
        "{}",
        err.message()
    );
}

#[tokio::test]
async fn symlink_loops_are_errors_and_walks_skip_them() {
    let dir = Dir::new("loop");
    symlink("loop2", dir.0.join("loop1")).unwrap();
    symlink("loop1", dir.0.join("loop2")).unwrap();
    std::fs::write(dir.0.join("f.txt"), "needle\n").unwrap();
    let err = call("read", json!({"path": "loop1"}), &dir.0)
        .await
        .unwrap_err();
    // Node's `access` finds no file behind a loop: existence checks fail first.
    assert!(
        err.message()
            .starts_with("ELOOP: too many symbolic links encountered, access"),
        "{}",
        err.message()
    );
    let found = call("grep", json!({"pattern": "needle"}), &dir.0)
        .await
        .unwrap();
    assert_eq!(text(&found), "f.txt:1: needle");
    let listed = call("ls", json!({}), &dir.0).await.unwrap();
    assert_eq!(text(&listed), "f.txt");
    let found = call("find", json!({"pattern": "*"}), &dir.0).await.unwrap();
    assert_eq!(text(&found), "f.txt\nloop1\nloop2");
}

#[tokio::test]
async fn binary_files_read_as_text_and_are_skipped_by_grep_walks() {
    let dir = Dir::new("binary");
    std::fs::write(dir.0.join("b.bin"), b"needle\x00\xff\xfe\n").unwrap();
    let read = call("read", json!({"path": "b.bin"}), &dir.0)
        .await
        .unwrap();
    assert_eq!(text(&read), "needle\u{0}\u{FFFD}\u{FFFD}\n");
    let grep = call("grep", json!({"pattern": "needle"}), &dir.0)
        .await
        .unwrap();
    assert_eq!(text(&grep), "No matches found");
}

#[tokio::test]
async fn bash_returns_when_the_shell_exits_though_a_background_child_holds_its_pipes() {
    let dir = Dir::new("bg");
    let started = Instant::now();
    let result = call(
        "bash",
        json!({"command": "sleep 30 & echo $! > pid; echo done"}),
        &dir.0,
    )
    .await
    .unwrap();
    assert_eq!(text(&result), "done\n");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the call waited for the background child"
    );
    // As in Pi, a child started in the background is the command's business and keeps
    // running; it is in the shell's process group, which an abort would have killed.
    let pid: i32 = std::fs::read_to_string(dir.0.join("pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: signal 0 only checks the process exists; SIGKILL ends the test's child.
    unsafe {
        assert_eq!(libc::kill(pid, 0), 0);
        libc::kill(pid, libc::SIGKILL);
    }
}

#[tokio::test]
async fn bash_abort_kills_the_whole_process_group() {
    let dir = Dir::new("abort");
    let controller = AbortController::new();
    let signal = controller.signal();
    let cwd = dir.0.clone();
    let task = tokio::spawn(async move {
        call_with(
            "bash",
            json!({"command": "sleep 30 & echo $! > pid; wait"}),
            &cwd,
            signal,
            None,
        )
        .await
    });
    let pid_file = dir.0.join("pid");
    for _ in 0..100 {
        if std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n')) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    controller.abort();
    let err = task.await.unwrap().unwrap_err();
    assert_eq!(err.message(), "Command aborted");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let mut gone = false;
    for _ in 0..100 {
        // SAFETY: signal 0 only checks the process exists.
        if unsafe { libc::kill(pid, 0) } != 0 {
            gone = true;
            break;
        }
        // A killed child stays a zombie until init reaps it; /proc says which.
        if std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z")) {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(gone, "the background child survived the abort");
}

#[tokio::test]
async fn bash_hides_the_session_variables() {
    let dir = Dir::new("env");
    let result = call("bash", json!({"command": "echo ${PI_SESSION_ID:-none}; case \"$PATH\" in */agent/bin:*) echo bin;; esac"}), &dir.0).await.unwrap();
    assert_eq!(text(&result), "none\nbin\n");
}

#[tokio::test]
async fn edit_with_empty_old_text_changes_nothing() {
    let dir = Dir::new("empty-old");
    std::fs::write(dir.0.join("f.txt"), "abc\n").unwrap();
    let err = call(
        "edit",
        json!({"path": "f.txt", "edits": [{"oldText": "", "newText": "x"}]}),
        &dir.0,
    )
    .await
    .unwrap_err();
    assert_eq!(err.message(), "oldText must not be empty in f.txt.");
    assert_eq!(
        std::fs::read_to_string(dir.0.join("f.txt")).unwrap(),
        "abc\n"
    );
}

#[tokio::test]
async fn catastrophic_patterns_are_bounded() {
    let dir = Dir::new("regex");
    std::fs::write(dir.0.join("f.txt"), "a".repeat(10_000) + "\n").unwrap();
    // Backtracking engines take exponential time here; ripgrep's regex is linear.
    let started = Instant::now();
    let result = call("grep", json!({"pattern": "(a*)*b"}), &dir.0)
        .await
        .unwrap();
    assert_eq!(text(&result), "No matches found");
    assert!(started.elapsed() < Duration::from_secs(10));
    // A pattern whose automaton would be huge is refused, not built.
    let err = call("grep", json!({"pattern": "(\\w{1000}){1000}"}), &dir.0)
        .await
        .unwrap_err();
    assert!(err.message().starts_with("rg: "), "{}", err.message());
}

#[tokio::test]
async fn huge_directories_keep_the_limits() {
    // A real million: ls reads and sorts every entry, as Pi's readdirSync does, and find
    // walks them all; only the output is bounded. tmpfs, where there is one, makes the
    // million entries cheap to create and remove.
    let shm = Path::new("/dev/shm");
    let base = if shm.is_dir() && tempfile_ok(shm) {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let dir = Dir::new_in(&base, "huge");
    const ENTRIES: usize = 1_000_000;
    let seed = dir.0.join("seed");
    std::fs::write(&seed, b"").unwrap();
    // Hard links: one syscall per entry, where creating a file is two.
    std::thread::scope(|s| {
        for part in 0..2 {
            let (dir, seed) = (&dir.0, &seed);
            s.spawn(move || {
                for i in (part..ENTRIES).step_by(2) {
                    std::fs::hard_link(seed, dir.join(format!("f{i:07}.txt"))).unwrap();
                }
            });
        }
    });
    std::fs::remove_file(&seed).unwrap();

    let started = Instant::now();
    let listed = call("ls", json!({}), &dir.0).await.unwrap();
    let ls_time = started.elapsed();
    let t = text(&listed);
    assert_eq!(t.lines().filter(|l| l.starts_with('f')).count(), 500);
    // Sorted, so the first 500 of a million, whatever order the directory holds them in.
    assert!(
        t.starts_with("f0000000.txt\nf0000001.txt\n"),
        "{}",
        &t[..80]
    );
    assert!(
        t.ends_with("[500 entries limit reached. Use limit=1000 for more]"),
        "{}",
        &t[t.len() - 80..]
    );
    assert!(t.len() < 16 * 1024, "ls output of {} bytes", t.len());

    let started = Instant::now();
    let found = call("find", json!({"pattern": "*.txt"}), &dir.0)
        .await
        .unwrap();
    let find_time = started.elapsed();
    let t = text(&found);
    assert_eq!(t.lines().filter(|l| l.starts_with('f')).count(), 1000);
    // The first thousand in path order: deterministic, where fd's pick is not (§22).
    assert!(t.starts_with("f0000000.txt\nf0000001.txt\n"));
    assert!(t.contains("[1000 results limit reached. Use limit=2000 for more, or refine pattern]"));
    assert!(t.len() < 32 * 1024, "find output of {} bytes", t.len());

    // An abort stops the walk: the call ends with Pi's abort error, not a full listing.
    let controller = AbortController::new();
    let signal = controller.signal();
    let walk = tokio::spawn({
        let dir = dir.0.clone();
        async move { call_with("find", json!({"pattern": "*.md"}), &dir, signal, None).await }
    });
    tokio::time::sleep(Duration::from_millis(5)).await;
    controller.abort();
    let aborted = tokio::time::timeout(Duration::from_secs(60), walk)
        .await
        .expect("an aborted find ends")
        .unwrap();
    assert_eq!(aborted.unwrap_err().to_string(), "Operation aborted");
    eprintln!("1,000,000 entries: ls {ls_time:?}, find {find_time:?}");
}

fn tempfile_ok(dir: &Path) -> bool {
    let probe = dir.join(format!("pi-tool-coding-probe-{}", std::process::id()));
    let ok = std::fs::write(&probe, b"").is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}

#[tokio::test]
async fn files_are_replaced_whole_through_links_keeping_their_mode() {
    let dir = Dir::new("replace");
    std::fs::write(dir.0.join("target.txt"), "old\n").unwrap();
    std::fs::set_permissions(
        dir.0.join("target.txt"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    symlink("target.txt", dir.0.join("link.txt")).unwrap();
    call(
        "write",
        json!({"path": "link.txt", "content": "new\n"}),
        &dir.0,
    )
    .await
    .unwrap();
    assert!(
        std::fs::symlink_metadata(dir.0.join("link.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(dir.0.join("target.txt")).unwrap(),
        "new\n"
    );
    let mode = std::fs::metadata(dir.0.join("target.txt"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
    call(
        "edit",
        json!({"path": "link.txt", "edits": [{"oldText": "new", "newText": "newer"}]}),
        &dir.0,
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.0.join("target.txt")).unwrap(),
        "newer\n"
    );
    // No temporary file is left next to the target.
    let names: Vec<String> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[tokio::test]
async fn an_abandoned_write_leaves_the_old_file_or_the_new_one() {
    let dir = Dir::new("abandon");
    let old = "o".repeat(1 << 20);
    let new = "n".repeat(8 << 20);
    std::fs::write(dir.0.join("f.txt"), &old).unwrap();
    for delay in [0u64, 1, 2, 5] {
        let cwd = dir.0.clone();
        let content = new.clone();
        let task = tokio::spawn(async move {
            call("write", json!({"path": "f.txt", "content": content}), &cwd).await
        });
        tokio::time::sleep(Duration::from_millis(delay)).await;
        task.abort();
        let _ = task.await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = std::fs::read_to_string(dir.0.join("f.txt")).unwrap();
        assert!(now == old || now == new, "a mix of {} bytes", now.len());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_file_is_mutated_by_one_call_at_a_time() {
    let dir = Dir::new("queue");
    std::fs::write(dir.0.join("f.txt"), "start\n").unwrap();
    let mut tasks = Vec::new();
    for i in 0..8 {
        let cwd = dir.0.clone();
        tasks.push(tokio::spawn(async move {
            // Each edit inserts its line after `start`: two edits reading the same old
            // text and both writing would lose a line.
            call(
                "edit",
                json!({"path": "f.txt", "edits": [{"oldText": "start\n", "newText": format!("start\n{i}\n")}]}),
                &cwd,
            )
            .await
            .unwrap();
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let text = std::fs::read_to_string(dir.0.join("f.txt")).unwrap();
    let mut lines: Vec<&str> = text.lines().skip(1).collect();
    lines.sort_unstable();
    assert_eq!(lines, ["0", "1", "2", "3", "4", "5", "6", "7"]);
}

#[tokio::test]
async fn grep_limits_pick_the_first_matches_in_path_order() {
    let dir = Dir::new("grep-order");
    // Searched on several threads; the answer must still be the sorted walk's.
    for i in (0..60).rev() {
        let sub = dir.0.join(format!("d{}", i % 7));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join(format!("f{i:02}.txt")), "hit a\nmiss\nhit b\n").unwrap();
    }
    let result = call("grep", json!({"pattern": "hit", "limit": 5}), &dir.0)
        .await
        .unwrap();
    assert_eq!(
        text(&result),
        "d0/f00.txt:1: hit a\nd0/f00.txt:3: hit b\nd0/f07.txt:1: hit a\nd0/f07.txt:3: hit b\nd0/f14.txt:1: hit a\n\n[5 matches limit reached. Use limit=10 for more, or refine pattern]"
    );
}

#[tokio::test]
async fn find_in_a_missing_directory_or_a_file_fails_with_fds_two_lines() {
    let dir = Dir::new("find-not-a-dir");
    std::fs::write(dir.0.join("file.txt"), "x").unwrap();
    for path in ["missing", "file.txt"] {
        let error = call("find", json!({"pattern": "*", "path": path}), &dir.0)
            .await
            .unwrap_err();
        let absolute = dir.0.join(path);
        assert_eq!(
            error.message(),
            format!(
                "[fd error]: Search path '{}' is not a directory.\n[fd error]: No valid search paths given.",
                absolute.display()
            )
        );
    }
}

#[tokio::test]
async fn the_confined_pack_refuses_paths_outside_its_root_and_runs_in_it() {
    let dir = Dir::new("confined");
    std::fs::create_dir_all(dir.0.join("root")).unwrap();
    std::fs::write(dir.0.join("secret.txt"), "secret").unwrap();
    std::fs::write(dir.0.join("root/notes.txt"), "notes").unwrap();
    let root = dir.0.join("root");
    let pack = pi_tool_coding::pack_confined(&root);
    assert_eq!(
        pack.names().collect::<Vec<_>>(),
        ["read", "bash", "edit", "write", "grep", "find", "ls"]
    );
    let read = pack.get("read").unwrap();
    let run = |path: &str| {
        let args = json!({ "path": path });
        let read = read.clone();
        async move {
            let args = read.check_arguments(&args)?.into_owned();
            // No context: the root is the call's directory.
            let call = ToolInvocation::new("t", &args, AbortSignal::never(), OnUpdate::none());
            read.execute(call).await
        }
    };
    assert_eq!(text(&run("notes.txt").await.unwrap()), "notes");
    for outside in [
        "../secret.txt",
        &*dir.0.join("secret.txt").to_string_lossy(),
    ] {
        let error = run(outside).await.unwrap_err();
        assert_eq!(error.message(), pi_tool_coding::OUTSIDE_ROOT, "{outside}");
    }
    let write = pack.get("write").unwrap();
    let args = json!({"path": "../escaped.txt", "content": "x"});
    let args = write.check_arguments(&args).unwrap().into_owned();
    let call = ToolInvocation::new("t", &args, AbortSignal::never(), OnUpdate::none());
    assert!(write.execute(call).await.is_err());
    assert!(!dir.0.join("escaped.txt").exists());
}
