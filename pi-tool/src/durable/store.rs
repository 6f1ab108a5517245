//! The store a durable run keeps its state in: [`DurableStore`], and what crosses it.
//!
//! The trait is the runtime's; the backends (SQLite, PostgreSQL) live in the
//! `pi-tool-store` crate, so that neither `pi-tool` nor a pack author's build compiles a
//! database client. Every method is one transaction: a store never holds half of a
//! decision, a suspension or a call marker.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use super::audit::{AuditEvent, AuditKind, AuditRecord};

/// A decision a suspended run waits for, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PendingApproval {
    /// The run.
    pub run_id: String,
    /// The call (the model's tool-call id).
    pub call_id: String,
    /// The tool it calls.
    pub tool: String,
    /// What a decision must name ([`approval_digest`](super::approval_digest)).
    pub digest: String,
    /// The question's title.
    pub title: String,
    /// The question.
    pub message: String,
    /// When it was asked (Unix milliseconds).
    pub requested_at_ms: i64,
    /// When it expires (Unix milliseconds): a decision after it is refused.
    pub expires_at_ms: i64,
}

impl PendingApproval {
    /// A pending approval with these parts.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        run_id: impl Into<String>,
        call_id: impl Into<String>,
        tool: impl Into<String>,
        digest: impl Into<String>,
        title: impl Into<String>,
        message: impl Into<String>,
        requested_at_ms: i64,
        expires_at_ms: i64,
    ) -> Self {
        PendingApproval {
            run_id: run_id.into(),
            call_id: call_id.into(),
            tool: tool.into(),
            digest: digest.into(),
            title: title.into(),
            message: message.into(),
            requested_at_ms,
            expires_at_ms,
        }
    }
}

/// Approve or deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The call may run (once).
    Approve,
    /// The call does not run; the model reads the reason.
    Deny,
}

impl Verdict {
    /// `approve` or `deny`, as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Approve => "approve",
            Verdict::Deny => "deny",
        }
    }

    /// Reads the stored text.
    pub fn parse(text: &str) -> Option<Verdict> {
        match text {
            "approve" => Some(Verdict::Approve),
            "deny" => Some(Verdict::Deny),
            _ => None,
        }
    }
}

/// A decision on one pending approval.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Decision {
    /// The run.
    pub run_id: String,
    /// The call.
    pub call_id: String,
    /// The digest the person saw; it must be the pending approval's.
    pub digest: String,
    /// Approve or deny.
    pub verdict: Verdict,
    /// Who decided.
    pub by: Option<String>,
    /// Why (a denial's reason reaches the model).
    pub reason: Option<String>,
    /// When (Unix milliseconds).
    pub at_ms: i64,
}

impl Decision {
    /// A decision on the approval of `call_id` in `run_id`, naming `digest`, now.
    pub fn new(
        run_id: impl Into<String>,
        call_id: impl Into<String>,
        digest: impl Into<String>,
        verdict: Verdict,
    ) -> Self {
        Decision {
            run_id: run_id.into(),
            call_id: call_id.into(),
            digest: digest.into(),
            verdict,
            by: None,
            reason: None,
            at_ms: now_ms(),
        }
    }

    /// Who decided.
    #[must_use]
    pub fn by(mut self, by: impl Into<String>) -> Self {
        self.by = Some(by.into());
        self
    }

    /// Why.
    #[must_use]
    pub fn reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    /// Decided at `at_ms` (Unix milliseconds) instead of now.
    #[must_use]
    pub fn at(mut self, at_ms: i64) -> Self {
        self.at_ms = at_ms;
        self
    }

    /// The audit record of this decision (`decided`: call, digest, verdict, by, reason).
    pub fn audit_event(&self) -> AuditEvent {
        let mut event = AuditEvent::new(AuditKind::Decided, &self.run_id, self.at_ms)
            .with("call", self.call_id.clone())
            .with("digest", self.digest.clone())
            .with("verdict", self.verdict.as_str());
        if let Some(by) = &self.by {
            event = event.with("by", by.clone());
        }
        if let Some(reason) = &self.reason {
            event = event.with("reason", reason.clone());
        }
        event
    }
}

/// A decision as stored beside its approval.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredDecision {
    /// Approve or deny.
    pub verdict: Verdict,
    /// Who decided.
    pub by: Option<String>,
    /// Why.
    pub reason: Option<String>,
    /// When (Unix milliseconds).
    pub at_ms: i64,
    /// Whether an approval was used by a call that started.
    pub used: bool,
}

impl StoredDecision {
    /// A stored decision with these parts.
    pub fn new(
        verdict: Verdict,
        by: Option<String>,
        reason: Option<String>,
        at_ms: i64,
        used: bool,
    ) -> Self {
        StoredDecision {
            verdict,
            by,
            reason,
            at_ms,
            used,
        }
    }
}

/// A pending approval and its decision, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApprovalRow {
    /// The approval.
    pub approval: PendingApproval,
    /// Its decision (`None`: not decided yet).
    pub decision: Option<StoredDecision>,
}

impl ApprovalRow {
    /// A row.
    pub fn new(approval: PendingApproval, decision: Option<StoredDecision>) -> Self {
        ApprovalRow { approval, decision }
    }
}

/// A call's exactly-once marker.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CallMark {
    /// The call.
    pub call_id: String,
    /// `None`: started and not finished (the process may have died while it ran).
    /// `Some`: the finished call's tool-result message, as JSON.
    pub finished: Option<Value>,
}

impl CallMark {
    /// A marker.
    pub fn new(call_id: impl Into<String>, finished: Option<Value>) -> Self {
        CallMark {
            call_id: call_id.into(),
            finished,
        }
    }
}

/// A suspended run taken up by one process.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ClaimedRun {
    /// The run.
    pub run_id: String,
    /// What the agent saved when it suspended (opaque to the store).
    pub state: Value,
    /// Its approvals, with their decisions.
    pub approvals: Vec<ApprovalRow>,
    /// Its calls' markers.
    pub calls: Vec<CallMark>,
}

impl ClaimedRun {
    /// A claimed run.
    pub fn new(
        run_id: impl Into<String>,
        state: Value,
        approvals: Vec<ApprovalRow>,
        calls: Vec<CallMark>,
    ) -> Self {
        ClaimedRun {
            run_id: run_id.into(),
            state,
            approvals,
            calls,
        }
    }
}

/// Why a decision was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// No pending approval for this run and call.
    Unknown,
    /// The digest is not the pending approval's.
    WrongDigest,
    /// It was decided already (a decision is single-use).
    AlreadyDecided,
    /// It expired before the decision.
    Expired,
    /// The approval was used already by a call that started.
    AlreadyUsed,
    /// The approval was denied, so no call can use it.
    Denied,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refusal::Unknown => "no pending approval for this run and call",
            Refusal::WrongDigest => "the digest is not the pending approval's",
            Refusal::AlreadyDecided => "the approval was decided already",
            Refusal::Expired => "the approval expired",
            Refusal::AlreadyUsed => "the approval was used already",
            Refusal::Denied => "the approval was denied",
        })
    }
}

/// What can go wrong with a store. Its texts name runs, calls and digests, never
/// arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreError {
    /// Another process holds the run (it is being resumed, or runs).
    RunTaken {
        /// The run.
        run_id: String,
    },
    /// No suspended run of this id.
    UnknownRun {
        /// The run.
        run_id: String,
    },
    /// The run finished already.
    RunFinished {
        /// The run.
        run_id: String,
    },
    /// A decision, or the use of an approval, was refused.
    Refused(Refusal),
    /// The call's marker exists already: it started before.
    CallStarted {
        /// The call.
        call_id: String,
    },
    /// The store was written by a newer version of the schema than this build reads.
    NewerSchema {
        /// The schema version found.
        found: i64,
        /// The newest version this build reads.
        supported: i64,
    },
    /// Stored data that cannot be read (an edited or corrupt row), saying which.
    Corrupt(String),
    /// The database failed (connection, I/O, SQL).
    Backend(String),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::RunTaken { run_id } => {
                write!(
                    f,
                    "run {run_id} is taken: another process is resuming or running it"
                )
            }
            StoreError::UnknownRun { run_id } => write!(f, "no suspended run {run_id}"),
            StoreError::RunFinished { run_id } => write!(f, "run {run_id} has finished"),
            StoreError::Refused(refusal) => write!(f, "refused: {refusal}"),
            StoreError::CallStarted { call_id } => write!(f, "call {call_id} started before"),
            StoreError::NewerSchema { found, supported } => write!(
                f,
                "the store was written by a newer version (schema {found}; this build reads up to {supported}): refusing to read it"
            ),
            StoreError::Corrupt(what) => write!(f, "the store holds unreadable data: {what}"),
            StoreError::Backend(what) => write!(f, "the store failed: {what}"),
        }
    }
}

impl std::error::Error for StoreError {}

/// Where durable runs keep what survives a restart: suspended runs, their approvals and
/// decisions, exactly-once call markers and the hash-chained audit log.
///
/// Implemented by `pi-tool-store`'s `SqliteStore` and `PostgresStore`. Each method is one
/// transaction; the audit events given to a method are appended in it, so a decision
/// and its record exist together or not at all.
#[async_trait]
pub trait DurableStore: Send + Sync + 'static {
    /// Saves a suspended run: its state (replacing an older one), its new pending
    /// approvals, status `suspended`, no owner.
    async fn suspend(
        &self,
        run_id: &str,
        state: &Value,
        pending: &[PendingApproval],
        audit: &[AuditEvent],
    ) -> Result<(), StoreError>;

    /// Takes a suspended run for this process: `suspended` → `running` with a lease of
    /// `lease`. A run whose lease ran out (its process died) can be taken again.
    /// Fails with [`StoreError::RunTaken`] when another process holds it.
    async fn claim(&self, run_id: &str, lease: Duration) -> Result<ClaimedRun, StoreError>;

    /// Replaces the state of a run this process took up (`running`) with a checkpoint
    /// taken before a later batch of it executes, renews its lease to `lease` from now,
    /// and forgets the call markers of the batches before (the checkpoint holds their
    /// results), in one transaction: a resume after a crash continues from the latest
    /// checkpoint. Fails with [`StoreError::RunTaken`] when the run is not `running`
    /// (suspended or finished meanwhile), and [`StoreError::UnknownRun`] when there is
    /// none.
    async fn checkpoint(
        &self,
        run_id: &str,
        state: &Value,
        lease: Duration,
    ) -> Result<(), StoreError>;

    /// Marks the run finished.
    async fn finish(&self, run_id: &str, audit: &[AuditEvent]) -> Result<(), StoreError>;

    /// Every undecided approval, oldest first (expired ones too: their `expires_at_ms`
    /// says so).
    async fn pending(&self) -> Result<Vec<PendingApproval>, StoreError>;

    /// Records a decision, once: refused ([`StoreError::Refused`]) for an unknown call, a
    /// wrong digest, a second decision or an expired approval.
    async fn decide(&self, decision: &Decision, audit: &AuditEvent) -> Result<(), StoreError>;

    /// Marks a call started before it executes: a call the model made, or a nested call
    /// (its id is its outer call's, `/` and a number: `call_1/2`). With `approval`, the
    /// approval of that digest is used up in the same transaction (refused if it is not
    /// an unused approval). Fails with [`StoreError::CallStarted`] if the call started
    /// before.
    async fn begin_call(
        &self,
        run_id: &str,
        call_id: &str,
        approval: Option<&str>,
        audit: &AuditEvent,
    ) -> Result<(), StoreError>;

    /// Marks a started call finished, keeping its tool-result message.
    async fn end_call(
        &self,
        run_id: &str,
        call_id: &str,
        message: &Value,
        audit: &AuditEvent,
    ) -> Result<(), StoreError>;

    /// Appends records to the audit log.
    async fn append_audit(&self, events: &[AuditEvent]) -> Result<(), StoreError>;

    /// The whole audit log in `seq` order.
    async fn audit_log(&self) -> Result<Vec<AuditRecord>, StoreError>;
}

/// Now, in Unix milliseconds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
