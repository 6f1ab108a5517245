//! `coding-mcp` over stdio with hand-written JSON-RPC: the tools read the root given on
//! the command line, and `--confine` refuses a path outside it and runs `bash` in the
//! kernel sandbox (writes only inside the root).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("coding-mcp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("root")).unwrap();
    std::fs::write(dir.join("root").join("hello.txt"), "hello from the root\n").unwrap();
    std::fs::write(dir.join("secret.txt"), "outside\n").unwrap();
    std::fs::canonicalize(dir).unwrap()
}

/// Sends `requests` (after initialize) and returns one response line per request.
fn exchange(root: &Path, confine: bool, requests: &[&str]) -> Vec<String> {
    exchange_with(root, confine, &[], requests)
}

/// [`exchange`] with more command-line arguments.
fn exchange_with(root: &Path, confine: bool, extra: &[&str], requests: &[&str]) -> Vec<String> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_coding-mcp"));
    cmd.arg("--root").arg(root);
    if confine {
        cmd.arg("--confine");
    }
    cmd.args(extra);
    let mut server = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("starts");
    let mut stdin = server.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(server.stdout.take().expect("stdout"));
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"0"}}}}}}"#).unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    for r in requests {
        writeln!(stdin, "{r}").unwrap();
    }
    let mut lines = Vec::new();
    while lines.len() < requests.len() + 1 {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "closed early: {lines:?}"
        );
        lines.push(line);
    }
    drop(stdin);
    assert!(server.wait().unwrap().success());
    // Calls run concurrently: answers come in any order; put them in request order.
    let id_of = |line: &str| -> usize {
        let rest = line.split_once(r#""id":"#).map_or("", |(_, r)| r);
        rest.chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .unwrap_or(0)
    };
    lines.sort_by_key(|l| id_of(l));
    lines.remove(0);
    lines
}

#[test]
fn serves_the_root_and_confines_on_request() {
    let dir = fresh_dir("stdio");
    let root = dir.join("root");
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let read_inside = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read","arguments":{"path":"hello.txt"}}}"#;
    let read_outside = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read","arguments":{"path":"../secret.txt"}}}"#;
    let bash = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo made > made.txt; cat made.txt; echo escaped > ../escaped.txt; cat ../secret.txt"}}}"#;

    let open = exchange(&root, false, &[list, read_inside, read_outside]);
    assert!(open[0].contains(r#""name":"bash""#), "{}", open[0]);
    assert!(open[1].contains("hello from the root"), "{}", open[1]);
    assert!(
        open[2].contains("outside\\n"),
        "Pi's default: any path: {}",
        open[2]
    );

    let confined = exchange(&root, true, &[list, read_inside, read_outside, bash]);
    assert!(confined[0].contains(r#""name":"bash""#), "{}", confined[0]);
    assert!(
        confined[1].contains("hello from the root"),
        "{}",
        confined[1]
    );
    assert!(
        confined[2].contains("Path leaves the project root")
            && confined[2].contains(r#""isError":true"#),
        "{}",
        confined[2]
    );
    assert!(!confined[2].contains("outside\\n"));
    // bash ran, inside the root only: the host checks the files.
    assert!(confined[3].contains("made"), "{}", confined[3]);
    assert_eq!(
        std::fs::read_to_string(root.join("made.txt")).unwrap(),
        "made\n"
    );
    assert!(!dir.join("escaped.txt").exists(), "{}", confined[3]);
    assert!(!confined[3].contains("outside\\n"), "{}", confined[3]);
    assert!(
        confined[3].contains("the sandbox refused a write outside the project root"),
        "{}",
        confined[3]
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// `--sandbox-read DIR` widens `bash`'s sandbox: the directory is readable, not writable.
#[cfg(target_os = "linux")]
#[test]
fn the_sandbox_is_widened_on_request() {
    let dir = fresh_dir("widened");
    let root = dir.join("root");
    if let Err(error) = pi_tool::safety::Sandbox::for_root(&root).check() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set and the kernel cannot enforce the sandbox: {error}"
        );
        eprintln!("NOT RUN: the kernel cannot enforce the sandbox: {error}");
        return;
    }
    std::fs::create_dir_all(dir.join("toolchain")).unwrap();
    std::fs::write(dir.join("toolchain/version"), "toolchain 1.0\n").unwrap();
    let toolchain = dir.join("toolchain").display().to_string();
    let command = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"bash","arguments":{{"command":"cat {toolchain}/version; echo x > {toolchain}/new"}}}}}}"#
    );
    let answers = exchange_with(&root, true, &["--sandbox-read", &toolchain], &[&command]);
    assert!(answers[0].contains("toolchain 1.0"), "{}", answers[0]);
    assert!(!dir.join("toolchain/new").exists(), "{}", answers[0]);
    let closed = exchange(&root, true, &[&command]);
    assert!(!closed[0].contains("toolchain 1.0"), "{}", closed[0]);
    let _ = std::fs::remove_dir_all(dir);
}
