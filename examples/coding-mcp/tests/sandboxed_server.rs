//! A stdio MCP server started inside the kernel sandbox (`McpServer::sandbox`): the
//! unconfined `coding-mcp` (Pi's tools take any path, its `bash` is Pi's) as a server
//! nobody vetted, confined from outside. Each attempt is checked by the host after the
//! call: no file outside the root, the outside file unchanged, no connection, the victim
//! alive, and no process left after the server is closed.
//!
//! Under `CI` a kernel that cannot enforce the sandbox fails the test; elsewhere it is
//! reported and the test returns.

use std::net::TcpListener;
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use pi_tool::safety::Sandbox;
use pi_tool::testing::call_tool;
use pi_tool::{AgentTool, Value, json};
use pi_tool_mcp::client::{McpServer, McpToolset};

const CODING_MCP: &str = env!("CARGO_BIN_EXE_coding-mcp");

struct Dirs {
    base: PathBuf,
    root: PathBuf,
    outside: PathBuf,
}

impl Dirs {
    fn new() -> Dirs {
        let base =
            std::env::temp_dir().join(format!("coding-mcp-sandboxed-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("root")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        let base = std::fs::canonicalize(base).unwrap();
        std::fs::write(base.join("outside/victim.txt"), "victim\n").unwrap();
        std::fs::write(base.join("outside/secret.txt"), "server-secret-9931\n").unwrap();
        Dirs {
            root: base.join("root"),
            outside: base.join("outside"),
            base,
        }
    }

    fn o(&self, name: &str) -> String {
        self.outside.join(name).display().to_string()
    }
}

impl Drop for Dirs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

fn tool(toolset: &McpToolset, name: &str) -> Arc<dyn AgentTool> {
    toolset
        .tools()
        .into_iter()
        .find(|tool| tool.name() == format!("mcp__coding__{name}"))
        .unwrap_or_else(|| panic!("the server offers {name}"))
}

/// The result's text, or the error's.
async fn run(tool: &Arc<dyn AgentTool>, args: Value) -> String {
    let call = call_tool(tool.clone(), args).await;
    match call.outcome() {
        Ok(_) => call.text(),
        Err(error) => error.message().to_owned(),
    }
}

fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(bytes) = std::fs::read(entry.path().join("cmdline")) {
            let line = String::from_utf8_lossy(&bytes).replace('\0', " ");
            if line.contains(marker) {
                found.push(line);
            }
        }
    }
    found
}

#[tokio::test]
async fn a_sandboxed_stdio_server_cannot_reach_outside_its_root() {
    let dirs = Dirs::new();
    let binary_dir = Path::new(CODING_MCP).parent().unwrap();
    let sandbox = Sandbox::for_root(&dirs.root).allow_read(binary_dir);
    if let Err(error) = sandbox.check() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set and the kernel cannot enforce the sandbox: {error}"
        );
        eprintln!("NOT RUN: the kernel cannot enforce the sandbox: {error}");
        return;
    }
    let root = dirs.root.display().to_string();
    let toolset = McpToolset::connect(
        McpServer::stdio("coding", CODING_MCP, ["--root", root.as_str()])
            .sandbox(sandbox)
            .call_timeout(Some(Duration::from_secs(20)))
            .shutdown_grace(Duration::from_millis(300)),
    )
    .await
    .expect("the sandboxed server starts");
    let server_pid = toolset.server_pid().expect("a child");
    let bash = tool(&toolset, "bash");
    let write = tool(&toolset, "write");
    let read = tool(&toolset, "read");
    let victim = dirs.outside.join("victim.txt");
    let before = std::fs::metadata(&victim).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let unix_path = dirs.outside.join("host.sock");
    let unix = UnixListener::bind(&unix_path).unwrap();
    unix.set_nonblocking(true).unwrap();
    let mut host_victim = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let marker = format!("4242.{}", std::process::id());

    // Inside the root: the server works.
    let made = run(&write, json!({"path": "made.txt", "content": "made\n"})).await;
    assert!(made.contains("Successfully"), "{made}");
    assert_eq!(
        std::fs::read_to_string(dirs.root.join("made.txt")).unwrap(),
        "made\n"
    );
    assert!(
        run(&bash, json!({"command": "cat made.txt"}))
            .await
            .contains("made")
    );

    let mut texts = Vec::new();
    // The server's own file tools, unconfined by their text, confined by the kernel.
    texts.push(
        run(
            &write,
            json!({"path": dirs.o("by-write.txt"), "content": "x"}),
        )
        .await,
    );
    texts.push(
        run(
            &write,
            json!({"path": "../outside/victim.txt", "content": "pwned"}),
        )
        .await,
    );
    texts.push(run(&read, json!({"path": dirs.o("secret.txt")})).await);
    let edit = tool(&toolset, "edit");
    texts.push(
        run(
            &edit,
            json!({"path": victim.display().to_string(), "edits": [{"oldText": "victim", "newText": "pwned"}]}),
        )
        .await,
    );
    // Its bash (Pi's, unsandboxed by the server itself) inherits the sandbox.
    for command in [
        format!("echo x > {}", dirs.o("by-bash")),
        format!(
            "chmod 600 {0}; touch -d 2020-01-01 {0}; rm -f {0}",
            victim.display()
        ),
        format!("cat {}", dirs.o("secret.txt")),
        format!("echo hi > /dev/tcp/127.0.0.1/{port}"),
        format!(
            "python3 -c \"import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect('{}')\"",
            unix_path.display()
        ),
        format!("kill -9 {}", host_victim.id()),
        format!("kill -9 {server_pid}"),
        format!("setsid sleep {marker} > /dev/null 2>&1 & echo started"),
    ] {
        texts.push(run(&bash, json!({"command": command})).await);
    }
    let all = texts.join("\n---\n");
    assert!(!Path::new(&dirs.o("by-write.txt")).exists(), "{all}");
    assert!(!Path::new(&dirs.o("by-bash")).exists(), "{all}");
    let after = std::fs::metadata(&victim).expect("the victim file exists");
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "victim\n",
        "{all}"
    );
    assert_eq!(after.mode(), before.mode(), "{all}");
    assert_eq!(after.mtime(), before.mtime(), "{all}");
    assert!(!all.contains("server-secret-9931"), "{all}");
    assert!(
        listener.accept().is_err(),
        "a connection got through: {all}"
    );
    assert!(
        unix.accept().is_err(),
        "a Unix connection got through: {all}"
    );
    assert!(
        host_victim.try_wait().unwrap().is_none(),
        "the victim was killed: {all}"
    );
    // The server's background process lives as long as the server, no longer.
    toolset.close().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let survivors = processes_with(&marker);
    assert!(survivors.is_empty(), "outlived the server: {survivors:?}");
    let _ = host_victim.kill();
    let _ = host_victim.wait();
}
