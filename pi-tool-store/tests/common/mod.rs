//! The two backends the tests run against: a fresh SQLite file, and a fresh database on
//! the PostgreSQL server named by `PI_TOOL_POSTGRES_URL` (scripts/postgres/pg-test).
#![allow(dead_code)]

use std::sync::atomic::{AtomicU64, Ordering};

/// The variable that names the test server.
pub const POSTGRES_URL: &str = "PI_TOOL_POSTGRES_URL";

/// A directory removed at drop.
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "pi-tool-store-{tag}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fresh SQLite store URL in `dir`.
pub fn sqlite_url(dir: &TempDir) -> String {
    format!("sqlite:{}", dir.0.join("store.db").display())
}

/// A fresh database on the test server, or `None` (said loudly) without one. Under
/// `CI` a missing server fails the test.
pub async fn postgres_url(test: &str) -> Option<String> {
    let Ok(base) = std::env::var(POSTGRES_URL) else {
        if std::env::var_os("CI").is_some() {
            panic!(
                "{POSTGRES_URL} is not set under CI: start the server with scripts/postgres/pg-test start"
            );
        }
        eprintln!(
            "!!! SKIPPED {test} on PostgreSQL: {POSTGRES_URL} is not set (scripts/postgres/pg-test start)"
        );
        return None;
    };
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = format!(
        "pitool_{}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos()
    );
    let (client, connection) = tokio_postgres::connect(&base, tokio_postgres::NoTls)
        .await
        .expect("connect to the test server");
    let task = tokio::spawn(connection);
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .expect("create a test database");
    drop(client);
    let _ = task.await;
    let (prefix, _) = base.rsplit_once('/').expect("a URL with a database path");
    Some(format!("{prefix}/{name}"))
}

use std::sync::Arc;

use pi_tool::durable::DurableStore;
use pi_tool_store::{PostgresStore, SqliteStore};

/// A store of either backend, with raw SQL for editing stored state as an attacker would.
#[derive(Clone)]
pub enum Backend {
    Sqlite(SqliteStore),
    Postgres(PostgresStore),
}

impl Backend {
    pub async fn open(url: &str) -> Backend {
        match url.strip_prefix("sqlite:") {
            Some(path) => Backend::Sqlite(SqliteStore::open(path).await.unwrap()),
            None => Backend::Postgres(PostgresStore::connect(url).await.unwrap()),
        }
    }

    pub fn store(&self) -> Arc<dyn DurableStore> {
        match self {
            Backend::Sqlite(s) => Arc::new(s.clone()),
            Backend::Postgres(s) => Arc::new(s.clone()),
        }
    }

    pub async fn raw(&self, sql: &str) -> u64 {
        match self {
            Backend::Sqlite(s) => s.execute_raw(sql).await.unwrap() as u64,
            Backend::Postgres(s) => s.execute_raw(sql).await.unwrap(),
        }
    }
}

/// Runs `$test(url)` on SQLite and on PostgreSQL (each a `#[tokio::test]`).
#[macro_export]
macro_rules! on_both_backends {
    ($($test:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    let dir = $crate::common::TempDir::new(stringify!($test));
                    super::$test($crate::common::sqlite_url(&dir)).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $test() {
                    if let Some(url) = $crate::common::postgres_url(stringify!($test)).await {
                        super::$test(url).await;
                    }
                }
            )*
        }
    };
}

/// Appends `line` to `dir/file` and syncs it: a tool's side effect that a killed process
/// cannot leave half-written, so the host can count how often the tool ran.
pub fn append(dir: &str, file: &str, line: &str) -> Result<(), pi_tool::ToolError> {
    use pi_tool::ToolError;
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(std::path::Path::new(dir).join(file))
        .map_err(|e| ToolError::new(format!("{file}: {e}")))?;
    writeln!(f, "{line}").map_err(|e| ToolError::new(format!("{file}: {e}")))?;
    f.sync_all()
        .map_err(|e| ToolError::new(format!("{file}: {e}")))
}

/// How many lines `dir/file` holds (0 when it does not exist).
pub fn lines(dir: &std::path::Path, file: &str) -> usize {
    std::fs::read_to_string(dir.join(file))
        .unwrap_or_default()
        .lines()
        .count()
}
