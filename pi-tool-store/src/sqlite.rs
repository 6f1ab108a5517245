//! The SQLite backend: one file, WAL, no server. rusqlite is synchronous, so every
//! transaction runs on tokio's blocking pool; `BEGIN IMMEDIATE` takes SQLite's write
//! lock at the start of each, which serialises writers across processes (the audit
//! chain's next hash, a claim) and `busy_timeout` makes a second writer wait for it.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use serde_json::Value;

use pi_tool::durable::{
    ApprovalRow, AuditEvent, AuditRecord, CallMark, ClaimedRun, Decision, DurableStore,
    PendingApproval, Refusal, StoreError, StoredDecision, next_record, now_ms,
};

use crate::SCHEMA_VERSION;
use crate::rows::{check_decision, check_use, json, verdict};

/// A durable store in one SQLite file (WAL mode). Cheap to clone; clones share the
/// connection.
#[derive(Clone)]
pub struct SqliteStore {
    conn: Arc<Mutex<Connection>>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore").finish_non_exhaustive()
    }
}

pub(crate) fn backend(error: rusqlite::Error) -> StoreError {
    StoreError::Backend(format!("sqlite: {error}"))
}

const MIGRATIONS: &[&str] = &[
    // 1: runs, approvals, call markers, the audit log.
    "CREATE TABLE runs (
        run_id TEXT PRIMARY KEY,
        status TEXT NOT NULL,
        state TEXT NOT NULL,
        lease_until INTEGER,
        updated_at INTEGER NOT NULL
    );
    CREATE TABLE approvals (
        run_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        digest TEXT NOT NULL,
        title TEXT NOT NULL,
        message TEXT NOT NULL,
        requested_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        verdict TEXT,
        decided_by TEXT,
        reason TEXT,
        decided_at INTEGER,
        used_at INTEGER,
        PRIMARY KEY (run_id, call_id)
    );
    CREATE TABLE calls (
        run_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        finished_at INTEGER,
        message TEXT,
        PRIMARY KEY (run_id, call_id)
    );
    CREATE TABLE audit (
        seq INTEGER PRIMARY KEY,
        prev TEXT NOT NULL,
        hash TEXT NOT NULL,
        body TEXT NOT NULL
    );",
    // 2: MCP tasks (pi-tool-mcp's TaskStore) and the processes that run them.
    "CREATE TABLE mcp_tasks (
        task_id TEXT PRIMARY KEY,
        state TEXT NOT NULL,
        owner TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    );
    CREATE TABLE mcp_task_owners (
        owner TEXT PRIMARY KEY,
        seen_at INTEGER NOT NULL,
        stale_after INTEGER NOT NULL
    );",
];

impl SqliteStore {
    /// Opens (or creates) the store at `path`, in WAL mode, and migrates it.
    pub async fn open(path: impl AsRef<Path>) -> Result<SqliteStore, StoreError> {
        let path = path.as_ref().to_owned();
        let conn = tokio::task::spawn_blocking(move || -> Result<Connection, StoreError> {
            let mut conn = Connection::open(&path).map_err(backend)?;
            conn.busy_timeout(Duration::from_secs(10))
                .map_err(backend)?;
            conn.pragma_update(None, "journal_mode", "WAL")
                .map_err(backend)?;
            conn.pragma_update(None, "synchronous", "NORMAL")
                .map_err(backend)?;
            migrate(&mut conn)?;
            Ok(conn)
        })
        .await
        .map_err(|e| StoreError::Backend(format!("sqlite: {e}")))??;
        Ok(SqliteStore {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction on the blocking pool; commits if it
    /// returns `Ok`.
    pub(crate) async fn write<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let conn = self.conn.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            let value = f(&tx)?;
            tx.commit().map_err(backend)?;
            Ok(value)
        })
        .await
        .map_err(|e| StoreError::Backend(format!("sqlite: {e}")))?
    }

    /// The raw connection, for tests that edit stored state as an attacker would.
    #[doc(hidden)]
    pub async fn execute_raw(&self, sql: &str) -> Result<usize, StoreError> {
        let sql = sql.to_owned();
        self.write(move |tx| tx.execute(&sql, []).map_err(backend))
            .await
    }
}

fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS pi_tool_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    )
    .map_err(backend)?;
    let found: Option<String> = tx
        .query_row(
            "SELECT value FROM pi_tool_meta WHERE key = 'schema_version'",
            [],
            |row| row.get(0),
        )
        .optional()
        .map_err(backend)?;
    let found = match found {
        None => 0,
        Some(text) => text.parse::<i64>().map_err(|_| {
            StoreError::Corrupt(format!("schema_version is {text:?}, not a number"))
        })?,
    };
    if found > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    for (index, sql) in MIGRATIONS.iter().enumerate() {
        let version = index as i64 + 1;
        if version > found {
            tx.execute_batch(sql).map_err(backend)?;
        }
    }
    tx.execute(
        "INSERT INTO pi_tool_meta (key, value) VALUES ('schema_version', ?1)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        params![SCHEMA_VERSION.to_string()],
    )
    .map_err(backend)?;
    tx.commit().map_err(backend)
}

fn append(tx: &Transaction<'_>, events: &[AuditEvent]) -> Result<(), StoreError> {
    if events.is_empty() {
        return Ok(());
    }
    let mut last: Option<(i64, String)> = tx
        .query_row(
            "SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()
        .map_err(backend)?;
    for event in events {
        let record = next_record(last.as_ref().map(|(s, h)| (*s, h.as_str())), event);
        tx.execute(
            "INSERT INTO audit (seq, prev, hash, body) VALUES (?1, ?2, ?3, ?4)",
            params![record.seq, record.prev, record.hash, record.body],
        )
        .map_err(backend)?;
        last = Some((record.seq, record.hash));
    }
    Ok(())
}

fn approval_rows(tx: &Transaction<'_>, run_id: &str) -> Result<Vec<ApprovalRow>, StoreError> {
    let mut stmt = tx
        .prepare(
            "SELECT call_id, tool, digest, title, message, requested_at, expires_at,
                    verdict, decided_by, reason, decided_at, used_at
             FROM approvals WHERE run_id = ?1 ORDER BY requested_at, call_id",
        )
        .map_err(backend)?;
    let rows = stmt
        .query_map(params![run_id], |row| {
            Ok((
                PendingApproval::new(
                    run_id,
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, String>(3)?,
                    row.get::<_, String>(4)?,
                    row.get(5)?,
                    row.get(6)?,
                ),
                row.get::<_, Option<String>>(7)?,
                row.get::<_, Option<String>>(8)?,
                row.get::<_, Option<String>>(9)?,
                row.get::<_, Option<i64>>(10)?,
                row.get::<_, Option<i64>>(11)?,
            ))
        })
        .map_err(backend)?;
    let mut out = Vec::new();
    for row in rows {
        let (approval, verdict_text, by, reason, at, used) = row.map_err(backend)?;
        let decision = match verdict_text {
            None => None,
            Some(text) => Some(StoredDecision::new(
                verdict(&text, run_id, &approval.call_id)?,
                by,
                reason,
                at.unwrap_or(0),
                used.is_some(),
            )),
        };
        out.push(ApprovalRow::new(approval, decision));
    }
    Ok(out)
}

#[async_trait]
impl DurableStore for SqliteStore {
    async fn suspend(
        &self,
        run_id: &str,
        state: &Value,
        pending: &[PendingApproval],
        audit: &[AuditEvent],
    ) -> Result<(), StoreError> {
        let (run_id, state, pending, audit) = (
            run_id.to_owned(),
            state.to_string(),
            pending.to_vec(),
            audit.to_vec(),
        );
        self.write(move |tx| {
            let now = now_ms();
            let status: Option<String> = tx
                .query_row(
                    "SELECT status FROM runs WHERE run_id = ?1",
                    params![run_id],
                    |row| row.get(0),
                )
                .optional()
                .map_err(backend)?;
            if status.as_deref() == Some("finished") {
                return Err(StoreError::RunFinished { run_id });
            }
            tx.execute(
                "INSERT INTO runs (run_id, status, state, lease_until, updated_at)
                 VALUES (?1, 'suspended', ?2, NULL, ?3)
                 ON CONFLICT (run_id) DO UPDATE SET status = 'suspended', state = excluded.state,
                    lease_until = NULL, updated_at = excluded.updated_at",
                params![run_id, state, now],
            )
            .map_err(backend)?;
            for p in &pending {
                tx.execute(
                    "INSERT INTO approvals (run_id, call_id, tool, digest, title, message,
                        requested_at, expires_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                     ON CONFLICT (run_id, call_id) DO NOTHING",
                    params![
                        p.run_id,
                        p.call_id,
                        p.tool,
                        p.digest,
                        p.title,
                        p.message,
                        p.requested_at_ms,
                        p.expires_at_ms
                    ],
                )
                .map_err(backend)?;
            }
            append(tx, &audit)
        })
        .await
    }

    async fn claim(&self, run_id: &str, lease: Duration) -> Result<ClaimedRun, StoreError> {
        let run_id = run_id.to_owned();
        let lease_ms = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX / 2);
        self.write(move |tx| {
            let now = now_ms();
            let taken = tx
                .execute(
                    "UPDATE runs SET status = 'running', lease_until = ?2, updated_at = ?3
                     WHERE run_id = ?1 AND (status = 'suspended'
                        OR (status = 'running' AND lease_until < ?3))",
                    params![run_id, now.saturating_add(lease_ms), now],
                )
                .map_err(backend)?;
            let row: Option<(String, String)> = tx
                .query_row(
                    "SELECT status, state FROM runs WHERE run_id = ?1",
                    params![run_id],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()
                .map_err(backend)?;
            let Some((status, state)) = row else {
                return Err(StoreError::UnknownRun { run_id });
            };
            if taken == 0 {
                return Err(if status == "finished" {
                    StoreError::RunFinished { run_id }
                } else {
                    StoreError::RunTaken { run_id }
                });
            }
            let state = json(&state, &format!("the state of run {run_id}"))?;
            let approvals = approval_rows(tx, &run_id)?;
            let mut stmt = tx
                .prepare("SELECT call_id, message FROM calls WHERE run_id = ?1 ORDER BY started_at")
                .map_err(backend)?;
            let marks = stmt
                .query_map(params![run_id], |row| {
                    Ok((row.get::<_, String>(0)?, row.get::<_, Option<String>>(1)?))
                })
                .map_err(backend)?;
            let mut calls = Vec::new();
            for mark in marks {
                let (call_id, message) = mark.map_err(backend)?;
                let finished = match message {
                    None => None,
                    Some(text) => Some(json(&text, &format!("the result of call {call_id}"))?),
                };
                calls.push(CallMark::new(call_id, finished));
            }
            drop(stmt);
            Ok(ClaimedRun::new(run_id, state, approvals, calls))
        })
        .await
    }

    async fn checkpoint(
        &self,
        run_id: &str,
        state: &Value,
        lease: Duration,
    ) -> Result<(), StoreError> {
        let (run_id, state) = (run_id.to_owned(), state.to_string());
        let lease_ms = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX / 2);
        self.write(move |tx| {
            let now = now_ms();
            let updated = tx
                .execute(
                    "UPDATE runs SET state = ?2, lease_until = ?3, updated_at = ?4
                     WHERE run_id = ?1 AND status = 'running'",
                    params![run_id, state, now.saturating_add(lease_ms), now],
                )
                .map_err(backend)?;
            if updated == 0 {
                let known: Option<i64> = tx
                    .query_row(
                        "SELECT 1 FROM runs WHERE run_id = ?1",
                        params![run_id],
                        |row| row.get(0),
                    )
                    .optional()
                    .map_err(backend)?;
                return Err(match known {
                    Some(_) => StoreError::RunTaken { run_id },
                    None => StoreError::UnknownRun { run_id },
                });
            }
            tx.execute("DELETE FROM calls WHERE run_id = ?1", params![run_id])
                .map_err(backend)?;
            Ok(())
        })
        .await
    }

    async fn finish(&self, run_id: &str, audit: &[AuditEvent]) -> Result<(), StoreError> {
        let (run_id, audit) = (run_id.to_owned(), audit.to_vec());
        self.write(move |tx| {
            tx.execute(
                "UPDATE runs SET status = 'finished', lease_until = NULL, updated_at = ?2
                 WHERE run_id = ?1",
                params![run_id, now_ms()],
            )
            .map_err(backend)?;
            append(tx, &audit)
        })
        .await
    }

    async fn pending(&self) -> Result<Vec<PendingApproval>, StoreError> {
        self.write(|tx| {
            let mut stmt = tx
                .prepare(
                    "SELECT a.run_id, a.call_id, a.tool, a.digest, a.title, a.message,
                            a.requested_at, a.expires_at
                     FROM approvals a JOIN runs r ON r.run_id = a.run_id
                     WHERE a.verdict IS NULL AND r.status <> 'finished'
                     ORDER BY a.requested_at, a.run_id, a.call_id",
                )
                .map_err(backend)?;
            let rows = stmt
                .query_map([], |row| {
                    Ok(PendingApproval::new(
                        row.get::<_, String>(0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, String>(2)?,
                        row.get::<_, String>(3)?,
                        row.get::<_, String>(4)?,
                        row.get::<_, String>(5)?,
                        row.get(6)?,
                        row.get(7)?,
                    ))
                })
                .map_err(backend)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(backend)
        })
        .await
    }

    async fn decide(&self, decision: &Decision, audit: &AuditEvent) -> Result<(), StoreError> {
        let (d, audit) = (decision.clone(), audit.clone());
        self.write(move |tx| {
            let row: Option<(String, i64, Option<String>)> = tx
                .query_row(
                    "SELECT digest, expires_at, verdict FROM approvals
                     WHERE run_id = ?1 AND call_id = ?2",
                    params![d.run_id, d.call_id],
                    |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
                )
                .optional()
                .map_err(backend)?;
            let Some((digest, expires_at, decided)) = row else {
                return Err(StoreError::Refused(Refusal::Unknown));
            };
            check_decision(&digest, decided.is_some(), expires_at, &d.digest, d.at_ms)?;
            tx.execute(
                "UPDATE approvals SET verdict = ?3, decided_by = ?4, reason = ?5, decided_at = ?6
                 WHERE run_id = ?1 AND call_id = ?2 AND verdict IS NULL",
                params![
                    d.run_id,
                    d.call_id,
                    d.verdict.as_str(),
                    d.by,
                    d.reason,
                    d.at_ms
                ],
            )
            .map_err(backend)?;
            append(tx, std::slice::from_ref(&audit))
        })
        .await
    }

    async fn begin_call(
        &self,
        run_id: &str,
        call_id: &str,
        approval: Option<&str>,
        audit: &AuditEvent,
    ) -> Result<(), StoreError> {
        let (run_id, call_id, approval, audit) = (
            run_id.to_owned(),
            call_id.to_owned(),
            approval.map(str::to_owned),
            audit.clone(),
        );
        self.write(move |tx| {
            let now = now_ms();
            if let Some(wanted) = &approval {
                let row: Option<(String, Option<String>, Option<i64>)> = tx
                    .query_row(
                        "SELECT digest, verdict, used_at FROM approvals
                         WHERE run_id = ?1 AND call_id = ?2",
                        params![run_id, call_id],
                        |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
                    )
                    .optional()
                    .map_err(backend)?;
                let Some((digest, verdict_text, used)) = row else {
                    return Err(StoreError::Refused(Refusal::Unknown));
                };
                let stored = match verdict_text {
                    None => None,
                    Some(text) => Some(verdict(&text, &run_id, &call_id)?),
                };
                check_use(&digest, stored, used.is_some(), wanted)?;
                tx.execute(
                    "UPDATE approvals SET used_at = ?3 WHERE run_id = ?1 AND call_id = ?2",
                    params![run_id, call_id, now],
                )
                .map_err(backend)?;
            }
            let inserted = tx
                .execute(
                    "INSERT INTO calls (run_id, call_id, started_at) VALUES (?1, ?2, ?3)
                     ON CONFLICT (run_id, call_id) DO NOTHING",
                    params![run_id, call_id, now],
                )
                .map_err(backend)?;
            if inserted == 0 {
                return Err(StoreError::CallStarted { call_id });
            }
            append(tx, std::slice::from_ref(&audit))
        })
        .await
    }

    async fn end_call(
        &self,
        run_id: &str,
        call_id: &str,
        message: &Value,
        audit: &AuditEvent,
    ) -> Result<(), StoreError> {
        let (run_id, call_id, message, audit) = (
            run_id.to_owned(),
            call_id.to_owned(),
            message.to_string(),
            audit.clone(),
        );
        self.write(move |tx| {
            tx.execute(
                "UPDATE calls SET finished_at = ?3, message = ?4 WHERE run_id = ?1 AND call_id = ?2",
                params![run_id, call_id, now_ms(), message],
            )
            .map_err(backend)?;
            append(tx, std::slice::from_ref(&audit))
        })
        .await
    }

    async fn append_audit(&self, events: &[AuditEvent]) -> Result<(), StoreError> {
        let events = events.to_vec();
        self.write(move |tx| append(tx, &events)).await
    }

    async fn audit_log(&self) -> Result<Vec<AuditRecord>, StoreError> {
        self.write(|tx| {
            let mut stmt = tx
                .prepare("SELECT seq, prev, hash, body FROM audit ORDER BY seq")
                .map_err(backend)?;
            let rows = stmt
                .query_map([], |row| {
                    Ok(AuditRecord {
                        seq: row.get(0)?,
                        prev: row.get(1)?,
                        hash: row.get(2)?,
                        body: row.get(3)?,
                    })
                })
                .map_err(backend)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(backend)
        })
        .await
    }
}
