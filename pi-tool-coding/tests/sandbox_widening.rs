//! Asking to widen the sandbox (issue 32): the confined pack's `bash` through the agent,
//! in the kernel sandbox, with `RunPolicy::widen_sandbox` set to an approval policy whose
//! UI answers as each test says. Every effect is checked by the host after the run: the
//! file outside the root exists or not, a listener got a connection or not.
//!
//! Under `CI` a kernel that cannot enforce the sandbox fails the test; elsewhere it is
//! reported and the test returns.

use std::collections::VecDeque;
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pi_tool::agent::{Agent, AgentOptions, ApprovalPolicy, RunPolicy};
use pi_tool::context::ExtensionUi;
use pi_tool::model::{AssistantContent, Message};
use pi_tool::testing::{FauxModel, FauxTurn};
use pi_tool::{async_trait, json};

#[path = "support/sandbox_dirs.rs"]
mod sandbox_dirs;
use sandbox_dirs::{Dirs, sandbox_dirs};

/// Answers each question with the next scripted answer (then no), and keeps them.
#[derive(Default)]
struct Ui {
    answers: Mutex<VecDeque<bool>>,
    asked: Mutex<Vec<(String, String)>>,
}

#[async_trait]
impl ExtensionUi for Ui {
    async fn confirm(&self, title: &str, message: &str) -> bool {
        self.asked
            .lock()
            .unwrap()
            .push((title.to_owned(), message.to_owned()));
        self.answers.lock().unwrap().pop_front().unwrap_or(false)
    }
}

struct Fixture {
    base: PathBuf,
    root: PathBuf,
    outside: PathBuf,
}

impl Fixture {
    fn new(name: &str) -> Option<Fixture> {
        let Dirs {
            base,
            root,
            outside,
        } = sandbox_dirs("pi-widen", name)?;
        Some(Fixture {
            base,
            root,
            outside,
        })
    }

    fn o(&self, name: &str) -> PathBuf {
        self.outside.join(name)
    }

    /// Runs one `bash` call per command, one turn each, through an agent whose policy
    /// asks `ui` to widen (or has no widening hook when `ui` is `None`); the texts the
    /// model read.
    async fn run(&self, commands: &[String], ui: Option<Arc<Ui>>) -> Vec<String> {
        let mut turns: Vec<FauxTurn> = commands
            .iter()
            .enumerate()
            .map(|(i, command)| {
                FauxTurn::new(vec![AssistantContent::tool_call(
                    format!("call_{i}"),
                    "bash",
                    json!({ "command": command, "timeout": 20 }),
                )])
            })
            .collect();
        turns.push(FauxTurn::text("done"));
        let mut policy = RunPolicy::new();
        if let Some(ui) = ui {
            policy = policy.widen_sandbox(Arc::new(ApprovalPolicy::new().ui(ui)));
        }
        let agent = Agent::new(
            AgentOptions::new(Arc::new(FauxModel::new(turns)))
                .model(FauxModel::model())
                .tools(pi_tool_coding::pack_confined(&self.root).tools())
                .policy(policy),
        );
        agent.prompt("go").await.unwrap();
        agent
            .messages()
            .iter()
            .filter_map(Message::as_tool_result)
            .map(|r| {
                r.content
                    .iter()
                    .filter_map(|c| c.as_text())
                    .collect::<String>()
            })
            .collect()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

fn ui(answers: &[bool]) -> Arc<Ui> {
    Arc::new(Ui {
        answers: Mutex::new(answers.iter().copied().collect()),
        asked: Mutex::default(),
    })
}

fn asked(ui: &Ui) -> Vec<(String, String)> {
    ui.asked.lock().unwrap().clone()
}

#[tokio::test]
async fn an_approved_widening_runs_the_call_again_once_with_the_path_writable() {
    let Some(f) = Fixture::new("approved") else {
        return;
    };
    let target = f.o("out.txt");
    // A partial effect inside the root before the refusal: the re-run repeats it.
    let command = format!(
        "echo run >> log.txt; echo hello > {} && echo wrote it",
        target.display()
    );
    let ui = ui(&[true]);
    let texts = f.run(&[command], Some(ui.clone())).await;

    let asked = asked(&ui);
    assert_eq!(asked.len(), 1, "{asked:?}");
    let (title, message) = &asked[0];
    assert_eq!(title, "Widen the sandbox of bash?");
    assert!(
        message.contains(&format!(
            "- the sandbox refused a write outside the project root: {}",
            target.display()
        )),
        "{message}"
    );
    assert!(
        message.contains(&format!("- make {} writable", f.outside.display())),
        "{message}"
    );
    assert!(message.contains("may already have changed files inside the project root"));
    assert!(
        message.contains("bash is not declared idempotent"),
        "{message}"
    );

    // The host sees the file the re-run wrote, and the root's log shows both runs.
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hello\n");
    assert_eq!(
        std::fs::read_to_string(f.root.join("log.txt")).unwrap(),
        "run\nrun\n"
    );
    // The model reads the re-run's output, and that it is one.
    assert_eq!(texts.len(), 1);
    assert!(texts[0].starts_with("wrote it"), "{}", texts[0]);
    assert!(!texts[0].contains("Read-only file system"), "{}", texts[0]);
    assert!(
        texts[0].contains("[sandbox] Approved for this call only: make"),
        "{}",
        texts[0]
    );
}

#[tokio::test]
async fn a_denied_widening_leaves_the_violation_the_model_read_before() {
    let Some(f) = Fixture::new("denied") else {
        return;
    };
    let target = f.o("out.txt");
    let command = format!("echo hello > {} && echo wrote it", target.display());
    let ui = ui(&[false]);
    let asked_text = f
        .run(std::slice::from_ref(&command), Some(ui.clone()))
        .await;
    assert_eq!(asked(&ui).len(), 1);
    assert!(!target.exists());
    assert!(
        asked_text[0].contains(&format!(
            "[sandbox] the sandbox refused a write outside the project root: {}",
            target.display()
        )),
        "{}",
        asked_text[0]
    );
    // Exactly what the model reads with no widening hook at all.
    let without_hook = f.run(&[command], None).await;
    assert_eq!(asked_text, without_hook);
    assert!(!target.exists());
}

#[tokio::test]
async fn an_approval_widens_its_own_call_and_no_later_one() {
    let Some(f) = Fixture::new("once") else {
        return;
    };
    let (first, second) = (f.o("first.txt"), f.o("second.txt"));
    let commands = [
        format!("echo one > {}", first.display()),
        format!("echo two > {}", second.display()),
    ];
    // Yes to the first call's question; the second call asks again, and hears no.
    let ui = ui(&[true, false]);
    let texts = f.run(&commands, Some(ui.clone())).await;
    assert_eq!(asked(&ui).len(), 2);
    assert_eq!(std::fs::read_to_string(&first).unwrap(), "one\n");
    assert!(!second.exists());
    assert!(
        texts[1].contains("[sandbox] the sandbox refused a write outside the project root"),
        "{}",
        texts[1]
    );
}

#[tokio::test]
async fn a_refusal_past_the_rule_is_not_asked_about() {
    let Some(f) = Fixture::new("rule") else {
        return;
    };
    // Its nearest existing directory is `/`, which is never widened; a Unix socket no
    // profile allows; then a write that may be asked about, the only question.
    let marker = format!("/pi-widen-rule-{}", std::process::id());
    let allowed = f.o("allowed.txt");
    let commands = [
        format!("mkdir {marker}"),
        "python3 -c 'import socket; socket.socket(socket.AF_UNIX)'".to_owned(),
        format!("echo ok > {}", allowed.display()),
    ];
    let ui = ui(&[true, true, true]);
    let texts = f.run(&commands, Some(ui.clone())).await;
    let asked = asked(&ui);
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0]
            .1
            .contains(&format!("- make {} writable", f.outside.display())),
        "{}",
        asked[0].1
    );
    assert!(!std::path::Path::new(&marker).exists());
    assert!(texts[0].contains("[sandbox]"), "{}", texts[0]);
    assert!(
        texts[1].contains("[sandbox] the sandbox refused a Unix socket"),
        "{}",
        texts[1]
    );
    assert_eq!(std::fs::read_to_string(&allowed).unwrap(), "ok\n");
}

#[tokio::test]
async fn the_network_is_turned_on_for_the_one_approved_call() {
    let Some(f) = Fixture::new("network") else {
        return;
    };
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let command = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo ping >&3 && echo sent");
    let ui = ui(&[true]);
    let texts = f.run(&[command], Some(ui.clone())).await;
    let asked = asked(&ui);
    assert_eq!(asked.len(), 1);
    assert!(
        asked[0]
            .1
            .contains("- the sandbox refused a network connection"),
        "{}",
        asked[0].1
    );
    assert!(
        asked[0].1.contains("- turn the network on"),
        "{}",
        asked[0].1
    );
    assert!(texts[0].starts_with("sent"), "{}", texts[0]);
    // The host's listener got the re-run's connection.
    let deadline = Instant::now() + Duration::from_secs(5);
    let connected = loop {
        match listener.accept() {
            Ok(_) => break true,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break false,
        }
    };
    assert!(connected);
}

/// In a session (`BashSandbox::Cwd`: the session's cwd is the root), the policy given to
/// `AgentSessionBuilder::policy` asks as the agent's does.
#[tokio::test]
async fn a_session_asks_through_its_run_policy() {
    use pi_tool::session::AgentSession;
    use pi_tool_coding::{BashSandbox, CodingOptions, CodingTools};
    let Some(f) = Fixture::new("session") else {
        return;
    };
    let target = f.o("from-session.txt");
    let model = FauxModel::new(vec![
        FauxTurn::new(vec![AssistantContent::tool_call(
            "c1",
            "bash",
            json!({ "command": format!("echo hi > {}", target.display()) }),
        )]),
        FauxTurn::text("done"),
    ]);
    let tools = Arc::new(CodingTools::new(
        CodingOptions::default().sandbox(BashSandbox::Cwd),
    ));
    let ui = ui(&[true]);
    let session = AgentSession::builder(Arc::new(model))
        .builtin_tools(tools.builtin_tools(), pi_tool_coding::CODING_TOOL_NAMES)
        .cwd(&f.root)
        .policy(RunPolicy::new().widen_sandbox(Arc::new(ApprovalPolicy::new().ui(ui.clone()))))
        .build()
        .unwrap();
    session.prompt("go").await.unwrap();
    assert_eq!(asked(&ui).len(), 1);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hi\n");
}
