//! Durable runs: approvals that bind to what will run, a run that waits for them across
//! restarts, calls that run at most once, and a hash-chained audit log
//! (docs/durable-runs.md).
//!
//! * [`approval_digest`]: SHA-256 over the RFC 8785 canonical JSON ([`canonicalize`]) of
//!   the tool, its schema's digest, its declared effects, the run, the call and the
//!   validated arguments. A decision names it; the call runs only if the digest
//!   computed again from what is about to run is the same.
//! * [`DurableStore`]: where suspended runs, approvals, call markers and the audit log
//!   live. The backends are in the `pi-tool-store` crate (SQLite, PostgreSQL).
//! * The audit chain ([`verify_chain`], [`export_jsonl`]): each record holds the hash of
//!   the one before.
//!
//! This module names no part of the agent: the agent's suspend and resume use it.

mod audit;
mod digest;
mod jcs;
mod store;

pub use audit::{
    AuditEvent, AuditKind, AuditRecord, BadRecord, ChainReport, GENESIS, chain_hash, export_jsonl,
    next_record, verify_chain,
};
pub use digest::{approval_digest, approval_digest_of, effects_value, schema_digest, sha256_hex};
pub use jcs::canonicalize;
pub use store::{
    ApprovalRow, CallMark, ClaimedRun, Decision, DurableStore, PendingApproval, Refusal,
    StoreError, StoredDecision, Verdict, now_ms,
};
