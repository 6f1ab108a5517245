//! The pack as a session's built-ins (issue 21 §4): Pi's registry, default active tools
//! and prompt lines, paths resolved against the session's cwd, and `powershell` as Pi has
//! it off Windows.

use std::path::PathBuf;
use std::sync::Arc;

use pi_tool::model::{AssistantContent, Message};
use pi_tool::session::{AgentSession, ToolSource};
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{Value, json};

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let path = std::env::temp_dir().join(format!(
            "pi-tool-coding-session-{name}-{}",
            std::process::id()
        ));
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

fn call(id: &str, name: &str, args: Value) -> FauxTurn {
    FauxTurn::new(vec![AssistantContent::tool_call(id, name, args)])
}

fn results(session: &AgentSession) -> Vec<(String, bool)> {
    session
        .agent()
        .messages()
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some((
                r.content
                    .iter()
                    .filter_map(|c| c.as_text())
                    .collect::<String>(),
                r.is_error,
            )),
            _ => None,
        })
        .collect()
}

#[test]
fn the_builtins_are_pis_registry_with_pis_default_active_tools() {
    let pack = pi_tool_coding::builtin_tools();
    assert_eq!(
        pack.names().collect::<Vec<_>>(),
        [
            "read",
            "bash",
            "powershell",
            "edit",
            "write",
            "grep",
            "find",
            "ls"
        ]
    );
    let session = AgentSession::builder(Arc::new(FauxModel::default()))
        .builtin_tools(pack, pi_tool_coding::CODING_TOOL_NAMES)
        .build()
        .unwrap();
    assert_eq!(
        session.active_tool_names(),
        ["read", "bash", "edit", "write"]
    );
    assert!(
        session
            .all_tools()
            .iter()
            .all(|t| t.source == ToolSource::Builtin)
    );
    let prompt = session.system_prompt();
    assert!(prompt.contains(
        "Available tools:\n- read: Read file contents\n- bash: Execute bash commands (ls, grep, find, etc.)\n- edit:"
    ));
    assert!(prompt.contains(
        "Guidelines:\n- Use bash for file operations like ls, rg, find\n- Use read to examine files instead of cat or sed.\n"
    ));
}

#[tokio::test]
async fn builtins_work_in_the_sessions_directory() {
    let dir = Dir::new("cwd");
    std::fs::write(dir.0.join("notes.txt"), "one\ntwo\n").unwrap();
    let model = FauxModel::new(vec![
        call("c1", "read", json!({"path": "notes.txt"})),
        call(
            "c2",
            "write",
            json!({"path": "sub/new.txt", "content": "hi"}),
        ),
        call("c3", "bash", json!({"command": "pwd"})),
        call("c4", "powershell", json!({"command": "Get-Location"})),
    ]);
    let session = AgentSession::builder(Arc::new(model))
        .builtin_tools(
            pi_tool_coding::builtin_tools(),
            pi_tool_coding::CODING_TOOL_NAMES,
        )
        .tools(["read", "write", "bash", "powershell"])
        .cwd(&dir.0)
        .build()
        .unwrap();
    session.prompt("go").await.unwrap();
    let results = results(&session);
    assert_eq!(results[0], ("one\ntwo\n".to_owned(), false));
    assert_eq!(
        results[1],
        ("Successfully wrote to sub/new.txt".to_owned(), false)
    );
    assert_eq!(
        std::fs::read_to_string(dir.0.join("sub/new.txt")).unwrap(),
        "hi"
    );
    assert_eq!(results[2], (format!("{}\n", dir.0.display()), false));
    assert_eq!(
        results[3],
        (
            "The powershell tool is only available on Windows.".to_owned(),
            true
        )
    );
}

/// `CodingOptions::sandbox(BashSandbox::Cwd)` in a session: the session's cwd is the
/// sandbox's root. A write inside it lands; one outside is refused by the kernel and told
/// to the model as what it is.
#[tokio::test]
async fn a_sandboxed_bash_in_a_session_is_confined_to_its_cwd() {
    use pi_tool_coding::{BashSandbox, CodingOptions, CodingTools};
    let dir = Dir::new("sandboxed");
    std::fs::create_dir_all(dir.0.join("root")).unwrap();
    let root = dir.0.join("root");
    if let Err(error) = pi_tool::safety::Sandbox::for_root(&root).check() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set and the kernel cannot enforce the sandbox: {error}"
        );
        eprintln!("NOT RUN: the kernel cannot enforce the sandbox: {error}");
        return;
    }
    let outside = dir.0.join("outside.txt");
    let model = FauxModel::new(vec![
        call(
            "c1",
            "bash",
            json!({"command": "echo in > inside.txt && cat inside.txt"}),
        ),
        call(
            "c2",
            "bash",
            json!({"command": format!("echo out > {}", outside.display())}),
        ),
    ]);
    let tools = Arc::new(CodingTools::new(
        CodingOptions::default().sandbox(BashSandbox::Cwd),
    ));
    let session = AgentSession::builder(Arc::new(model))
        .builtin_tools(tools.builtin_tools(), pi_tool_coding::CODING_TOOL_NAMES)
        .cwd(&root)
        .build()
        .unwrap();
    session.prompt("go").await.unwrap();
    let results = results(&session);
    assert_eq!(results[0], ("in\n".to_owned(), false));
    assert!(root.join("inside.txt").exists());
    assert!(!outside.exists());
    assert!(results[1].1);
    assert!(
        results[1].0.contains(&format!(
            "[sandbox] the sandbox refused a write outside the project root: {}",
            outside.display()
        )),
        "{}",
        results[1].0
    );
}
