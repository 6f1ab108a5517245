//! MCP tasks on the durable stores: [`SqlTaskStore`] is `pi-tool-mcp`'s `TaskStore` over
//! a [`SqliteStore`](crate::SqliteStore) or a [`PostgresStore`](crate::PostgresStore), so
//! a task created on one replica is polled on another and a finished task survives a
//! restart.
//!
//! Each task store is an owner: it writes a heartbeat row every `heartbeat` while it
//! lives, and each task it saves names it. A task still `working` whose owner's
//! heartbeat is older than three beats belongs to a process that died, and `tasks/get`
//! reads it `failed` ([`ORPHANED_TASK_MESSAGE`](pi_tool_mcp::ORPHANED_TASK_MESSAGE)).
//!
//! A task that has ended (`completed`, `failed`, `cancelled`) keeps that state: a save
//! replaces a row only while its state has not ended, in one statement. `tasks/cancel`
//! answered by a replica that does not run the task writes `cancelled`; the replica
//! that runs it reads its running tasks back once a beat
//! ([`cancel_check_interval`](TaskStore::cancel_check_interval)) and aborts the tool.

use std::hash::{BuildHasher, RandomState};
use std::time::Duration;

use async_trait::async_trait;
use pi_tool::durable::{StoreError, now_ms};
use pi_tool_mcp::{TaskStore, TaskStoreError};
use serde_json::Value;

#[cfg(feature = "postgres")]
use crate::PostgresStore;
#[cfg(feature = "sqlite")]
use crate::SqliteStore;

#[derive(Clone)]
enum Backend {
    #[cfg(feature = "sqlite")]
    Sqlite(SqliteStore),
    #[cfg(feature = "postgres")]
    Postgres(PostgresStore),
}

/// `pi-tool-mcp`'s [`TaskStore`] on a durable store (see the module docs). Give it to
/// `PackServer::with_task_store`; the heartbeat stops when it is dropped.
pub struct SqlTaskStore {
    backend: Backend,
    owner: String,
    heartbeat_every: Duration,
    stale_after: Duration,
    heartbeat: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for SqlTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlTaskStore")
            .field("owner", &self.owner)
            .finish_non_exhaustive()
    }
}

impl Drop for SqlTaskStore {
    fn drop(&mut self) {
        self.heartbeat.abort();
    }
}

fn owner_id() -> String {
    let a = RandomState::new().hash_one(std::process::id());
    let b = RandomState::new().hash_one(now_ms());
    format!("{a:016x}{b:016x}")
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX / 4)
}

fn task_error(error: StoreError) -> TaskStoreError {
    TaskStoreError(error.to_string())
}

impl SqlTaskStore {
    /// Tasks in this SQLite store, beating every `heartbeat` (a task of this store reads
    /// `failed` elsewhere three beats after the store stopped; 2 s is a fair default).
    #[cfg(feature = "sqlite")]
    pub async fn sqlite(store: SqliteStore, heartbeat: Duration) -> Result<Self, StoreError> {
        Self::start(Backend::Sqlite(store), heartbeat).await
    }

    /// Tasks in this PostgreSQL store, beating every `heartbeat`.
    #[cfg(feature = "postgres")]
    pub async fn postgres(store: PostgresStore, heartbeat: Duration) -> Result<Self, StoreError> {
        Self::start(Backend::Postgres(store), heartbeat).await
    }

    async fn start(backend: Backend, heartbeat: Duration) -> Result<Self, StoreError> {
        let owner = owner_id();
        let stale_after = heartbeat * 3;
        beat(&backend, &owner, stale_after).await?;
        let task = {
            let (backend, owner) = (backend.clone(), owner.clone());
            tokio::spawn(async move {
                let mut every = tokio::time::interval(heartbeat);
                every.tick().await;
                loop {
                    every.tick().await;
                    if let Err(error) = beat(&backend, &owner, stale_after).await {
                        tracing::warn!(%error, "an MCP task store's heartbeat was not written");
                    }
                }
            })
        };
        Ok(SqlTaskStore {
            backend,
            owner,
            heartbeat_every: heartbeat,
            stale_after,
            heartbeat: task,
        })
    }
}

async fn beat(backend: &Backend, owner: &str, stale_after: Duration) -> Result<(), StoreError> {
    let (owner, now, stale) = (owner.to_owned(), now_ms(), millis(stale_after));
    match backend {
        #[cfg(feature = "sqlite")]
        Backend::Sqlite(store) => {
            store
                .write(move |tx| {
                    tx.execute(
                    "INSERT INTO mcp_task_owners (owner, seen_at, stale_after) VALUES (?1, ?2, ?3)
                         ON CONFLICT (owner) DO UPDATE SET seen_at = excluded.seen_at",
                    rusqlite::params![owner, now, stale],
                )
                .map(drop)
                .map_err(crate::sqlite::backend)
                })
                .await
        }
        #[cfg(feature = "postgres")]
        Backend::Postgres(store) => {
            let client = store.client().lock().await;
            client
                .execute(
                    "INSERT INTO mcp_task_owners (owner, seen_at, stale_after) VALUES ($1, $2, $3)
                     ON CONFLICT (owner) DO UPDATE SET seen_at = excluded.seen_at",
                    &[&owner, &now, &stale],
                )
                .await
                .map(drop)
                .map_err(crate::postgres::backend)
        }
    }
}

#[async_trait]
impl TaskStore for SqlTaskStore {
    // The row is replaced in the statement that checks it has not ended, so that a
    // cancellation one replica writes and the end the owner writes cannot interleave.
    async fn save(&self, task_id: &str, state: Value, ttl: Duration) -> Result<(), TaskStoreError> {
        let (task_id, state, owner) = (task_id.to_owned(), state.to_string(), self.owner.clone());
        let now = now_ms();
        let expires = now.saturating_add(millis(ttl));
        let saved = match &self.backend {
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(store) => {
                store
                    .write(move |tx| {
                        tx.execute(
                            "INSERT INTO mcp_tasks (task_id, state, owner, expires_at, updated_at)
                             VALUES (?1, ?2, ?3, ?4, ?5)
                             ON CONFLICT (task_id) DO UPDATE SET state = excluded.state,
                                owner = excluded.owner, expires_at = excluded.expires_at,
                                updated_at = excluded.updated_at
                             WHERE COALESCE(json_extract(mcp_tasks.state, '$.status'), '')
                                    NOT IN ('completed', 'failed', 'cancelled')
                                OR mcp_tasks.expires_at <= excluded.updated_at",
                            rusqlite::params![task_id, state, owner, expires, now],
                        )
                        .map(drop)
                        .map_err(crate::sqlite::backend)
                    })
                    .await
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(store) => {
                let client = store.client().lock().await;
                client
                    .execute(
                        "INSERT INTO mcp_tasks (task_id, state, owner, expires_at, updated_at)
                         VALUES ($1, $2, $3, $4, $5)
                         ON CONFLICT (task_id) DO UPDATE SET state = excluded.state,
                            owner = excluded.owner, expires_at = excluded.expires_at,
                            updated_at = excluded.updated_at
                         WHERE COALESCE(mcp_tasks.state::jsonb ->> 'status', '')
                                NOT IN ('completed', 'failed', 'cancelled')
                            OR mcp_tasks.expires_at <= excluded.updated_at",
                        &[&task_id, &state, &owner, &expires, &now],
                    )
                    .await
                    .map(drop)
                    .map_err(crate::postgres::backend)
            }
        };
        saved.map_err(task_error)
    }

    async fn load(&self, task_id: &str) -> Result<Option<Value>, TaskStoreError> {
        let (task_id, now) = (task_id.to_owned(), now_ms());
        let text: Option<String> = match &self.backend {
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(store) => {
                use rusqlite::OptionalExtension;
                store
                    .write(move |tx| {
                        tx.query_row(
                            "SELECT state FROM mcp_tasks WHERE task_id = ?1 AND expires_at > ?2",
                            rusqlite::params![task_id, now],
                            |row| row.get(0),
                        )
                        .optional()
                        .map_err(crate::sqlite::backend)
                    })
                    .await
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(store) => {
                let client = store.client().lock().await;
                client
                    .query_opt(
                        "SELECT state FROM mcp_tasks WHERE task_id = $1 AND expires_at > $2",
                        &[&task_id, &now],
                    )
                    .await
                    .map(|row| row.map(|row| row.get(0)))
                    .map_err(crate::postgres::backend)
            }
        }
        .map_err(task_error)?;
        text.map(|text| {
            serde_json::from_str(&text)
                .map_err(|e| TaskStoreError(format!("a stored task is not JSON: {e}")))
        })
        .transpose()
    }

    async fn orphaned(&self, task_id: &str) -> Result<bool, TaskStoreError> {
        let (task_id, now) = (task_id.to_owned(), now_ms());
        // No owner row, or one whose last beat is older than its staleness.
        let alive: Option<bool> = match &self.backend {
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(store) => {
                use rusqlite::OptionalExtension;
                store
                    .write(move |tx| {
                        tx.query_row(
                            "SELECT o.seen_at + o.stale_after >= ?2 FROM mcp_tasks t
                             LEFT JOIN mcp_task_owners o ON o.owner = t.owner
                             WHERE t.task_id = ?1",
                            rusqlite::params![task_id, now],
                            |row| row.get::<_, Option<bool>>(0),
                        )
                        .optional()
                        .map(Option::flatten)
                        .map_err(crate::sqlite::backend)
                    })
                    .await
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(store) => {
                let client = store.client().lock().await;
                client
                    .query_opt(
                        "SELECT o.seen_at + o.stale_after >= $2 FROM mcp_tasks t
                         LEFT JOIN mcp_task_owners o ON o.owner = t.owner
                         WHERE t.task_id = $1",
                        &[&task_id, &now],
                    )
                    .await
                    .map(|row| row.and_then(|row| row.get::<_, Option<bool>>(0)))
                    .map_err(crate::postgres::backend)
            }
        }
        .map_err(task_error)?;
        Ok(alive != Some(true))
    }

    fn cancel_check_interval(&self) -> Option<Duration> {
        Some(self.heartbeat_every)
    }
}

impl SqlTaskStore {
    /// This store's owner id (what its tasks' rows name).
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// After how long without a heartbeat this store's tasks read `failed`.
    pub fn stale_after(&self) -> Duration {
        self.stale_after
    }
}
