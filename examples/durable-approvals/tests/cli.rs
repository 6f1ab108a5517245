//! The example's contract, as processes, on SQLite and PostgreSQL: suspend, approve,
//! resume in a new process, the call runs once; a process killed with SIGKILL while the
//! call runs leaves a call that is never run again; wrong digests, second decisions and
//! expired approvals are refused with a one-line reason; two resumers, one execution;
//! `audit verify` finds an edited record.

// The fresh-database helper of pi-tool-store's tests.
#[path = "../../../pi-tool-store/tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "durable-approvals-{tag}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Cli {
    store: String,
    data: PathBuf,
}

impl Cli {
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_durable-approvals"));
        command
            .args(["--store", &self.store, "--dir"])
            .arg(&self.data)
            .args(args);
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    fn json(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
    }

    fn ledger(&self) -> Vec<String> {
        std::fs::read_to_string(self.data.join("ledger.txt"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn refused(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(!out.status.success(), "{args:?} was not refused");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
        stderr
    }
}

fn digest(suspended: &Value) -> String {
    assert_eq!(suspended["status"], "suspended", "{suspended}");
    suspended["pending"][0]["digest"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn approve_then_resume_runs_once_and_bad_decisions_are_refused(cli: Cli) {
    let s = cli.json(&["run", "r1", "transfer", r#"{"to": "bob", "amount": "7"}"#]);
    let d = digest(&s);
    assert_eq!(s["pending"][0]["call"], "call-1");
    assert_eq!(s["pending"][0]["tool"], "transfer");
    assert!(cli.ledger().is_empty());
    let pending = String::from_utf8(cli.run(&["pending"]).stdout).unwrap();
    assert_eq!(pending.lines().count(), 1, "{pending}");

    let wrong = "0".repeat(64);
    assert!(
        cli.refused(&["approve", "r1", "call-1", &wrong])
            .contains("digest")
    );
    assert!(
        cli.refused(&["approve", "r1", "call-9", &d])
            .contains("no pending approval")
    );
    // Resuming before the decision: still waiting.
    assert_eq!(digest(&cli.json(&["resume", "r1"])), d);
    assert!(
        cli.run(&["approve", "r1", "call-1", &d, "--by", "ana"])
            .status
            .success()
    );
    assert!(
        cli.refused(&["approve", "r1", "call-1", &d])
            .contains("decided already")
    );

    let done = cli.json(&["resume", "r1"]);
    assert_eq!(done["status"], "finished", "{done}");
    assert_eq!(done["final"], "The tool said: moved 7 to bob");
    assert_eq!(cli.ledger(), ["bob 7"]);
    assert!(cli.refused(&["resume", "r1"]).contains("finished"));
    assert_eq!(cli.ledger(), ["bob 7"]);

    // Expired: a question that stands 0 seconds.
    let s = cli.json(&[
        "--approval-ttl",
        "0",
        "run",
        "r2",
        "transfer",
        r#"{"to": "eve", "amount": 1}"#,
    ]);
    std::thread::sleep(Duration::from_millis(5));
    assert!(
        cli.refused(&["approve", "r2", "call-1", &digest(&s)])
            .contains("expired")
    );
    let done = cli.json(&["resume", "r2"]);
    assert_eq!(
        done["final"],
        "The tool failed: The approval of transfer expired before anyone decided"
    );

    // Denied, with a reason the model reads.
    let s = cli.json(&["run", "r3", "transfer", r#"{"to": "mallory", "amount": 9}"#]);
    assert!(
        cli.run(&[
            "deny",
            "r3",
            "call-1",
            &digest(&s),
            "--reason",
            "unknown payee"
        ])
        .status
        .success()
    );
    let done = cli.json(&["resume", "r3"]);
    assert_eq!(
        done["final"],
        "The tool failed: User denied transfer: unknown payee"
    );
    assert_eq!(cli.ledger(), ["bob 7"]);

    let verify = cli.json(&["audit", "verify"]);
    assert_eq!(verify["ok"], true, "{verify}");
    let export = String::from_utf8(cli.run(&["audit", "export"]).stdout).unwrap();
    assert_eq!(
        export.lines().count() as u64,
        verify["records"].as_u64().unwrap()
    );
}

async fn killed_while_the_call_runs_it_never_runs_again(cli: Cli) {
    let s = cli.json(&[
        "run",
        "k1",
        "transfer",
        r#"{"to": "carol", "amount": 5, "hold_ms": 60000}"#,
    ]);
    assert!(
        cli.run(&["approve", "k1", "call-1", &digest(&s)])
            .status
            .success()
    );
    let mut child = cli
        .command(&["resume", "k1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while cli.ledger().is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the call never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // The claim came before the ledger line: its lease ends within 5 s of now.
    let seen = start.elapsed();
    // SIGKILL: no destructor, no rollback, nothing written after this point.
    child.kill().unwrap();
    child.wait().unwrap();
    // While its lease (5 s, from the claim) runs, the run is taken.
    assert!(cli.refused(&["resume", "k1"]).contains("taken"));
    while start.elapsed() < seen + Duration::from_millis(5200) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let done = cli.json(&["resume", "k1"]);
    assert_eq!(done["status"], "finished", "{done}");
    let text = done["final"].as_str().unwrap();
    assert!(
        text.contains("was interrupted") && text.contains("may have run"),
        "{text}"
    );
    assert_eq!(cli.ledger(), ["carol 5"], "the call ran once");
    assert_eq!(cli.json(&["audit", "verify"])["ok"], true);
}

async fn two_resumers_one_execution(cli: Cli) {
    let s = cli.json(&[
        "run",
        "t1",
        "transfer",
        r#"{"to": "dave", "amount": 3, "hold_ms": 300}"#,
    ]);
    assert!(
        cli.run(&["approve", "t1", "call-1", &digest(&s)])
            .status
            .success()
    );
    let a = cli
        .command(&["resume", "t1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let b = cli
        .command(&["resume", "t1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let ok = [&a, &b].iter().filter(|o| o.status.success()).count();
    let taken = [&a, &b]
        .iter()
        .filter(|o| String::from_utf8_lossy(&o.stderr).contains("taken"))
        .count();
    assert_eq!((ok, taken), (1, 1), "{a:?} {b:?}");
    assert_eq!(cli.ledger(), ["dave 3"]);
}

async fn an_edited_audit_record_is_found(cli: Cli, edit: impl AsyncFnOnce(&str)) {
    let s = cli.json(&["run", "a1", "transfer", r#"{"to": "frank", "amount": 2}"#]);
    assert!(
        cli.run(&["approve", "a1", "call-1", &digest(&s), "--by", "ana"])
            .status
            .success()
    );
    cli.json(&["resume", "a1"]);
    edit("UPDATE audit SET body = replace(body, '\"ana\"', '\"bob\"') WHERE body LIKE '%\"ana\"%'")
        .await;
    let out = cli.run(&["audit", "verify"]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], false);
    assert_eq!(
        report["first_bad"], 3,
        "requested, suspended, then the edited decision: {report}"
    );
}

fn sqlite(dir: &Path) -> Cli {
    Cli {
        store: format!("sqlite:{}", dir.join("store.db").display()),
        data: dir.join("data"),
    }
}

macro_rules! on_both {
    ($($test:ident),*) => {
        mod on_sqlite {
            $(
                #[tokio::test]
                async fn $test() {
                    let dir = super::Scratch::new(stringify!($test));
                    super::$test(super::sqlite(&dir.0)).await;
                }
            )*
        }
        mod on_postgres {
            $(
                #[tokio::test]
                async fn $test() {
                    let dir = super::Scratch::new(stringify!($test));
                    if let Some(url) = super::common::postgres_url(stringify!($test)).await {
                        super::$test(super::Cli { store: url, data: dir.0.join("data") }).await;
                    }
                }
            )*
        }
    };
}

on_both!(
    approve_then_resume_runs_once_and_bad_decisions_are_refused,
    killed_while_the_call_runs_it_never_runs_again,
    two_resumers_one_execution
);

#[tokio::test]
async fn an_edited_audit_record_is_found_on_sqlite() {
    let dir = Scratch::new("edit");
    let cli = sqlite(&dir.0);
    let path = dir.0.join("store.db");
    an_edited_audit_record_is_found(cli, async |sql: &str| {
        let conn = rusqlite::Connection::open(&path).unwrap();
        assert_eq!(conn.execute(sql, []).unwrap(), 1);
    })
    .await;
}

#[tokio::test]
async fn an_edited_audit_record_is_found_on_postgres() {
    let dir = Scratch::new("edit-pg");
    let Some(url) = common::postgres_url("an_edited_audit_record_is_found").await else {
        return;
    };
    let cli = Cli {
        store: url.clone(),
        data: dir.0.join("data"),
    };
    an_edited_audit_record_is_found(cli, async |sql: &str| {
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        let task = tokio::spawn(connection);
        assert_eq!(client.execute(sql, &[]).await.unwrap(), 1);
        drop(client);
        let _ = task.await;
    })
    .await;
}
