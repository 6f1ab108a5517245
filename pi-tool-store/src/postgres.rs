//! The PostgreSQL backend, for replicas that share runs, approvals and the audit log.
//! Every method is one transaction on one connection (tokio-postgres). A claim is one
//! conditional `UPDATE` (PostgreSQL's row lock makes a second claimer wait and then see
//! the row taken); a decision and the use of an approval read their row `FOR UPDATE`;
//! appends to the audit chain take a transaction-scoped advisory lock, so one writer at
//! a time computes the next hash.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tokio_postgres::{Client, NoTls, Transaction};

use pi_tool::durable::{
    ApprovalRow, AuditEvent, AuditRecord, CallMark, ClaimedRun, Decision, DurableStore,
    PendingApproval, Refusal, StoreError, StoredDecision, next_record, now_ms,
};

use crate::SCHEMA_VERSION;
use crate::rows::{check_decision, check_use, json, verdict};

/// The advisory lock key of the audit chain's head (`pi-tool audit` as an integer).
const AUDIT_LOCK: i64 = 0x7069_746f_6f6c_6175;
/// The advisory lock key of migrations.
const MIGRATE_LOCK: i64 = 0x7069_746f_6f6c_6d69;

const MIGRATIONS: &[&str] = &[
    // 1: runs, approvals, call markers, the audit log.
    "CREATE TABLE runs (
        run_id TEXT PRIMARY KEY,
        status TEXT NOT NULL,
        state TEXT NOT NULL,
        lease_until BIGINT,
        updated_at BIGINT NOT NULL
    );
    CREATE TABLE approvals (
        run_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        digest TEXT NOT NULL,
        title TEXT NOT NULL,
        message TEXT NOT NULL,
        requested_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        verdict TEXT,
        decided_by TEXT,
        reason TEXT,
        decided_at BIGINT,
        used_at BIGINT,
        PRIMARY KEY (run_id, call_id)
    );
    CREATE TABLE calls (
        run_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        started_at BIGINT NOT NULL,
        finished_at BIGINT,
        message TEXT,
        PRIMARY KEY (run_id, call_id)
    );
    CREATE TABLE audit (
        seq BIGINT PRIMARY KEY,
        prev TEXT NOT NULL,
        hash TEXT NOT NULL,
        body TEXT NOT NULL
    );",
    // 2: MCP tasks (pi-tool-mcp's TaskStore) and the processes that run them.
    "CREATE TABLE mcp_tasks (
        task_id TEXT PRIMARY KEY,
        state TEXT NOT NULL,
        owner TEXT NOT NULL,
        expires_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
    );
    CREATE TABLE mcp_task_owners (
        owner TEXT PRIMARY KEY,
        seen_at BIGINT NOT NULL,
        stale_after BIGINT NOT NULL
    );",
];

/// A durable store on a PostgreSQL server. Cheap to clone; clones share the connection.
#[derive(Clone)]
pub struct PostgresStore {
    client: std::sync::Arc<tokio::sync::Mutex<Client>>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore").finish_non_exhaustive()
    }
}

pub(crate) fn backend(error: tokio_postgres::Error) -> StoreError {
    // tokio-postgres's Display names the failure, not the connection string.
    StoreError::Backend(format!("postgres: {error}"))
}

/// Runs `$body` (an `async` block's body returning `Result<T, StoreError>`) in one
/// transaction on the store's connection, committing when it is `Ok`.
macro_rules! in_tx {
    ($store:ident, |$tx:ident| $body:block) => {{
        let mut client = $store.client.lock().await;
        let owned = client.transaction().await.map_err(backend)?;
        let value = {
            let $tx = &owned;
            async move $body.await?
        };
        owned.commit().await.map_err(backend)?;
        Ok(value)
    }};
}

impl PostgresStore {
    /// Connects to `url` (`postgres://user@host:port/db`) and migrates the schema.
    pub async fn connect(url: &str) -> Result<PostgresStore, StoreError> {
        let (mut client, connection) =
            tokio_postgres::connect(url, NoTls).await.map_err(backend)?;
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing_warn(&error);
            }
        });
        migrate(&mut client).await?;
        Ok(PostgresStore {
            client: std::sync::Arc::new(tokio::sync::Mutex::new(client)),
        })
    }

    /// The connection (for the MCP task store, which runs single statements).
    #[cfg(feature = "mcp")]
    pub(crate) fn client(&self) -> &std::sync::Arc<tokio::sync::Mutex<Client>> {
        &self.client
    }

    /// Runs one SQL statement, for tests that edit stored state as an attacker would.
    #[doc(hidden)]
    pub async fn execute_raw(&self, sql: &str) -> Result<u64, StoreError> {
        let client = self.client.lock().await;
        client.execute(sql, &[]).await.map_err(backend)
    }
}

fn tracing_warn(error: &tokio_postgres::Error) {
    tracing::warn!(%error, "the PostgreSQL connection of a durable store ended");
}

async fn migrate(client: &mut Client) -> Result<(), StoreError> {
    let tx = client.transaction().await.map_err(backend)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATE_LOCK])
        .await
        .map_err(backend)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS pi_tool_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    )
    .await
    .map_err(backend)?;
    let row = tx
        .query_opt(
            "SELECT value FROM pi_tool_meta WHERE key = 'schema_version'",
            &[],
        )
        .await
        .map_err(backend)?;
    let found = match row {
        None => 0,
        Some(row) => {
            let text: String = row.get(0);
            text.parse::<i64>().map_err(|_| {
                StoreError::Corrupt(format!("schema_version is {text:?}, not a number"))
            })?
        }
    };
    if found > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    for (index, sql) in MIGRATIONS.iter().enumerate() {
        if index as i64 + 1 > found {
            tx.batch_execute(sql).await.map_err(backend)?;
        }
    }
    tx.execute(
        "INSERT INTO pi_tool_meta (key, value) VALUES ('schema_version', $1)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        &[&SCHEMA_VERSION.to_string()],
    )
    .await
    .map_err(backend)?;
    tx.commit().await.map_err(backend)
}

async fn append(tx: &Transaction<'_>, events: &[AuditEvent]) -> Result<(), StoreError> {
    if events.is_empty() {
        return Ok(());
    }
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&AUDIT_LOCK])
        .await
        .map_err(backend)?;
    let mut last: Option<(i64, String)> = tx
        .query_opt("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1", &[])
        .await
        .map_err(backend)?
        .map(|row| (row.get(0), row.get(1)));
    for event in events {
        let record = next_record(last.as_ref().map(|(s, h)| (*s, h.as_str())), event);
        tx.execute(
            "INSERT INTO audit (seq, prev, hash, body) VALUES ($1, $2, $3, $4)",
            &[&record.seq, &record.prev, &record.hash, &record.body],
        )
        .await
        .map_err(backend)?;
        last = Some((record.seq, record.hash));
    }
    Ok(())
}

async fn approval_rows(tx: &Transaction<'_>, run_id: &str) -> Result<Vec<ApprovalRow>, StoreError> {
    let rows = tx
        .query(
            "SELECT call_id, tool, digest, title, message, requested_at, expires_at,
                    verdict, decided_by, reason, decided_at, used_at
             FROM approvals WHERE run_id = $1 ORDER BY requested_at, call_id",
            &[&run_id],
        )
        .await
        .map_err(backend)?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let approval = PendingApproval::new(
            run_id,
            row.get::<_, String>(0),
            row.get::<_, String>(1),
            row.get::<_, String>(2),
            row.get::<_, String>(3),
            row.get::<_, String>(4),
            row.get(5),
            row.get(6),
        );
        let decision = match row.get::<_, Option<String>>(7) {
            None => None,
            Some(text) => Some(StoredDecision::new(
                verdict(&text, run_id, &approval.call_id)?,
                row.get(8),
                row.get(9),
                row.get::<_, Option<i64>>(10).unwrap_or(0),
                row.get::<_, Option<i64>>(11).is_some(),
            )),
        };
        out.push(ApprovalRow::new(approval, decision));
    }
    Ok(out)
}

#[async_trait]
impl DurableStore for PostgresStore {
    async fn suspend(
        &self,
        run_id: &str,
        state: &Value,
        pending: &[PendingApproval],
        audit: &[AuditEvent],
    ) -> Result<(), StoreError> {
        let state = state.to_string();
        in_tx!(self, |tx| {
            let now = now_ms();
            let status = tx
                .query_opt(
                    "SELECT status FROM runs WHERE run_id = $1 FOR UPDATE",
                    &[&run_id],
                )
                .await
                .map_err(backend)?
                .map(|row| row.get::<_, String>(0));
            if status.as_deref() == Some("finished") {
                return Err(StoreError::RunFinished {
                    run_id: run_id.to_owned(),
                });
            }
            tx.execute(
                    "INSERT INTO runs (run_id, status, state, lease_until, updated_at)
                     VALUES ($1, 'suspended', $2, NULL, $3)
                     ON CONFLICT (run_id) DO UPDATE SET status = 'suspended', state = excluded.state,
                        lease_until = NULL, updated_at = excluded.updated_at",
                    &[&run_id, &state, &now],
                )
                .await
                .map_err(backend)?;
            for p in pending {
                tx.execute(
                    "INSERT INTO approvals (run_id, call_id, tool, digest, title, message,
                            requested_at, expires_at)
                         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                         ON CONFLICT (run_id, call_id) DO NOTHING",
                    &[
                        &p.run_id,
                        &p.call_id,
                        &p.tool,
                        &p.digest,
                        &p.title,
                        &p.message,
                        &p.requested_at_ms,
                        &p.expires_at_ms,
                    ],
                )
                .await
                .map_err(backend)?;
            }
            append(tx, audit).await
        })
    }

    async fn claim(&self, run_id: &str, lease: Duration) -> Result<ClaimedRun, StoreError> {
        let lease_ms = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX / 2);
        in_tx!(self, |tx| {
            let now = now_ms();
            let taken = tx
                .execute(
                    "UPDATE runs SET status = 'running', lease_until = $2, updated_at = $3
                         WHERE run_id = $1 AND (status = 'suspended'
                            OR (status = 'running' AND lease_until < $3))",
                    &[&run_id, &now.saturating_add(lease_ms), &now],
                )
                .await
                .map_err(backend)?;
            let row = tx
                .query_opt(
                    "SELECT status, state FROM runs WHERE run_id = $1",
                    &[&run_id],
                )
                .await
                .map_err(backend)?;
            let Some(row) = row else {
                return Err(StoreError::UnknownRun {
                    run_id: run_id.to_owned(),
                });
            };
            let (status, state): (String, String) = (row.get(0), row.get(1));
            if taken == 0 {
                return Err(if status == "finished" {
                    StoreError::RunFinished {
                        run_id: run_id.to_owned(),
                    }
                } else {
                    StoreError::RunTaken {
                        run_id: run_id.to_owned(),
                    }
                });
            }
            let state = json(&state, &format!("the state of run {run_id}"))?;
            let approvals = approval_rows(tx, run_id).await?;
            let rows = tx
                .query(
                    "SELECT call_id, message FROM calls WHERE run_id = $1 ORDER BY started_at",
                    &[&run_id],
                )
                .await
                .map_err(backend)?;
            let mut calls = Vec::with_capacity(rows.len());
            for row in rows {
                let call_id: String = row.get(0);
                let finished = match row.get::<_, Option<String>>(1) {
                    None => None,
                    Some(text) => Some(json(&text, &format!("the result of call {call_id}"))?),
                };
                calls.push(CallMark::new(call_id, finished));
            }
            Ok(ClaimedRun::new(run_id, state, approvals, calls))
        })
    }

    async fn checkpoint(
        &self,
        run_id: &str,
        state: &Value,
        lease: Duration,
    ) -> Result<(), StoreError> {
        let state = state.to_string();
        let lease_ms = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX / 2);
        in_tx!(self, |tx| {
            let now = now_ms();
            let updated = tx
                .execute(
                    "UPDATE runs SET state = $2, lease_until = $3, updated_at = $4
                         WHERE run_id = $1 AND status = 'running'",
                    &[&run_id, &state, &now.saturating_add(lease_ms), &now],
                )
                .await
                .map_err(backend)?;
            if updated == 0 {
                let known = tx
                    .query_opt("SELECT 1 FROM runs WHERE run_id = $1", &[&run_id])
                    .await
                    .map_err(backend)?;
                let run_id = run_id.to_owned();
                return Err(match known {
                    Some(_) => StoreError::RunTaken { run_id },
                    None => StoreError::UnknownRun { run_id },
                });
            }
            tx.execute("DELETE FROM calls WHERE run_id = $1", &[&run_id])
                .await
                .map_err(backend)?;
            Ok(())
        })
    }

    async fn finish(&self, run_id: &str, audit: &[AuditEvent]) -> Result<(), StoreError> {
        in_tx!(self, |tx| {
            tx.execute(
                "UPDATE runs SET status = 'finished', lease_until = NULL, updated_at = $2
                     WHERE run_id = $1",
                &[&run_id, &now_ms()],
            )
            .await
            .map_err(backend)?;
            append(tx, audit).await
        })
    }

    async fn pending(&self) -> Result<Vec<PendingApproval>, StoreError> {
        in_tx!(self, |tx| {
            let rows = tx
                .query(
                    "SELECT a.run_id, a.call_id, a.tool, a.digest, a.title, a.message,
                                a.requested_at, a.expires_at
                         FROM approvals a JOIN runs r ON r.run_id = a.run_id
                         WHERE a.verdict IS NULL AND r.status <> 'finished'
                         ORDER BY a.requested_at, a.run_id, a.call_id",
                    &[],
                )
                .await
                .map_err(backend)?;
            Ok(rows
                .iter()
                .map(|row| {
                    PendingApproval::new(
                        row.get::<_, String>(0),
                        row.get::<_, String>(1),
                        row.get::<_, String>(2),
                        row.get::<_, String>(3),
                        row.get::<_, String>(4),
                        row.get::<_, String>(5),
                        row.get(6),
                        row.get(7),
                    )
                })
                .collect())
        })
    }

    async fn decide(&self, decision: &Decision, audit: &AuditEvent) -> Result<(), StoreError> {
        let d = decision;
        in_tx!(self, |tx| {
            let row = tx
                .query_opt(
                    "SELECT digest, expires_at, verdict FROM approvals
                         WHERE run_id = $1 AND call_id = $2 FOR UPDATE",
                    &[&d.run_id, &d.call_id],
                )
                .await
                .map_err(backend)?;
            let Some(row) = row else {
                return Err(StoreError::Refused(Refusal::Unknown));
            };
            let (digest, expires_at, decided): (String, i64, Option<String>) =
                (row.get(0), row.get(1), row.get(2));
            check_decision(&digest, decided.is_some(), expires_at, &d.digest, d.at_ms)?;
            tx.execute(
                "UPDATE approvals SET verdict = $3, decided_by = $4, reason = $5, decided_at = $6
                     WHERE run_id = $1 AND call_id = $2 AND verdict IS NULL",
                &[
                    &d.run_id,
                    &d.call_id,
                    &d.verdict.as_str(),
                    &d.by,
                    &d.reason,
                    &d.at_ms,
                ],
            )
            .await
            .map_err(backend)?;
            append(tx, std::slice::from_ref(audit)).await
        })
    }

    async fn begin_call(
        &self,
        run_id: &str,
        call_id: &str,
        approval: Option<&str>,
        audit: &AuditEvent,
    ) -> Result<(), StoreError> {
        in_tx!(self, |tx| {
            let now = now_ms();
            if let Some(wanted) = approval {
                let row = tx
                    .query_opt(
                        "SELECT digest, verdict, used_at FROM approvals
                             WHERE run_id = $1 AND call_id = $2 FOR UPDATE",
                        &[&run_id, &call_id],
                    )
                    .await
                    .map_err(backend)?;
                let Some(row) = row else {
                    return Err(StoreError::Refused(Refusal::Unknown));
                };
                let (digest, verdict_text, used): (String, Option<String>, Option<i64>) =
                    (row.get(0), row.get(1), row.get(2));
                let stored = match verdict_text {
                    None => None,
                    Some(text) => Some(verdict(&text, run_id, call_id)?),
                };
                check_use(&digest, stored, used.is_some(), wanted)?;
                tx.execute(
                    "UPDATE approvals SET used_at = $3 WHERE run_id = $1 AND call_id = $2",
                    &[&run_id, &call_id, &now],
                )
                .await
                .map_err(backend)?;
            }
            let inserted = tx
                .execute(
                    "INSERT INTO calls (run_id, call_id, started_at) VALUES ($1, $2, $3)
                         ON CONFLICT (run_id, call_id) DO NOTHING",
                    &[&run_id, &call_id, &now],
                )
                .await
                .map_err(backend)?;
            if inserted == 0 {
                return Err(StoreError::CallStarted {
                    call_id: call_id.to_owned(),
                });
            }
            append(tx, std::slice::from_ref(audit)).await
        })
    }

    async fn end_call(
        &self,
        run_id: &str,
        call_id: &str,
        message: &Value,
        audit: &AuditEvent,
    ) -> Result<(), StoreError> {
        let message = message.to_string();
        in_tx!(self, |tx| {
            tx.execute(
                    "UPDATE calls SET finished_at = $3, message = $4 WHERE run_id = $1 AND call_id = $2",
                    &[&run_id, &call_id, &now_ms(), &message],
                )
                .await
                .map_err(backend)?;
            append(tx, std::slice::from_ref(audit)).await
        })
    }

    async fn append_audit(&self, events: &[AuditEvent]) -> Result<(), StoreError> {
        in_tx!(self, |tx| { append(tx, events).await })
    }

    async fn audit_log(&self) -> Result<Vec<AuditRecord>, StoreError> {
        in_tx!(self, |tx| {
            let rows = tx
                .query("SELECT seq, prev, hash, body FROM audit ORDER BY seq", &[])
                .await
                .map_err(backend)?;
            Ok(rows
                .iter()
                .map(|row| AuditRecord {
                    seq: row.get(0),
                    prev: row.get(1),
                    hash: row.get(2),
                    body: row.get(3),
                })
                .collect())
        })
    }
}
