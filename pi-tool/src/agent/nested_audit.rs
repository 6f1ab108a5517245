//! The audit records and exactly-once marks of nested calls in a durable run
//! (docs/durable-runs.md, "Nested calls").
//!
//! A nested call is in the log exactly when its outer call is: the calls a resumed batch
//! and the later batches of a resumed run execute are marked, and so are the nested calls
//! they make, at any depth. A nested
//! call can never suspend (its outer call is in the middle of its execution), so its
//! decision is taken at once, by the run's policy: `requested` (the tool, the arguments
//! through the call policy's redactor, the digest once the arguments are validated) and
//! `decided` (`by: "policy"`; `approve` when the checks and `before_tool_call` let it
//! run, `deny` with the reason the outer tool reads when they refuse it, and
//! `asked: true` when the hook asked for a decision nobody can wait for) go in together;
//! a call that runs then gets `started` and `finished` marks of its own
//! ([`Marker`](super::marks::Marker)). Every record names the outer call as `parent`.
//!
//! A run that never suspended never builds one of these: a run without approvals pays
//! nothing.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::marks::{Marker, redacted, redacted_text};
use super::policy::RunPolicy;
use crate::durable::{
    AuditEvent, AuditKind, CallMark, DurableStore, StoreError, approval_digest, now_ms,
};
use crate::model::ToolCall;
use pi_tool_core::AgentTool;

/// Who decides a nested call: the run's policy (its checks and its hook), never a person.
const BY_POLICY: &str = "policy";

/// The durable side of the nested calls of one resumed batch.
pub(crate) struct NestedAudit {
    store: Arc<dyn DurableStore>,
    run_id: String,
    marks: Arc<HashMap<String, CallMark>>,
}

/// What the run's policy answered for one nested call.
pub(super) enum NestedVerdict<'a> {
    /// It runs, with these validated arguments.
    Allowed {
        tool: &'a dyn AgentTool,
        args: &'a Value,
    },
    /// It does not run; the outer tool reads `reason`. `asked`: the hook asked for a
    /// decision, which a nested call cannot wait for.
    Refused { reason: &'a str, asked: bool },
}

impl NestedAudit {
    pub(super) fn new(
        store: Arc<dyn DurableStore>,
        run_id: String,
        marks: Arc<HashMap<String, CallMark>>,
    ) -> Self {
        NestedAudit {
            store,
            run_id,
            marks,
        }
    }

    /// Writes the `requested` and `decided` records of the nested call `call` of
    /// `parent`. An allowed call gets its marker, or the store's error: a call whose
    /// request is not in the log does not run.
    pub(super) async fn decide(
        &self,
        policy: &RunPolicy,
        (call, parent): (&ToolCall, &Arc<str>),
        verdict: NestedVerdict<'_>,
    ) -> Result<Option<Marker>, StoreError> {
        let now = now_ms();
        let event = |kind| {
            AuditEvent::new(kind, &self.run_id, now)
                .with("call", &*call.id)
                .with("parent", &**parent)
                .with("tool", &*call.name)
        };
        let (requested, decided, marker) = match verdict {
            NestedVerdict::Allowed { tool, args } => {
                let digest = approval_digest(tool, &self.run_id, &call.id, args);
                let marker = Marker::new(
                    (self.store.clone(), &self.run_id),
                    &call.id,
                    tool,
                    &self.marks,
                )
                .nested(parent.clone(), digest.clone());
                (
                    event(AuditKind::Requested)
                        .with("arguments", redacted(args, policy))
                        .with("digest", digest.clone()),
                    event(AuditKind::Decided)
                        .with("digest", digest)
                        .with("verdict", "approve"),
                    Some(marker),
                )
            }
            NestedVerdict::Refused { reason, asked } => {
                let mut decided = event(AuditKind::Decided)
                    .with("verdict", "deny")
                    .with("reason", redacted_text(reason, policy));
                if asked {
                    decided = decided.with("asked", true);
                }
                (
                    event(AuditKind::Requested)
                        .with("arguments", redacted(&call.arguments, policy)),
                    decided,
                    None,
                )
            }
        };
        let decided = decided.with("by", BY_POLICY);
        match self.store.append_audit(&[requested, decided]).await {
            Ok(()) => Ok(marker),
            Err(error) if marker.is_some() => Err(error),
            Err(error) => {
                // It does not run either way; the log misses its refusal.
                tracing::warn!(%error, call = %call.id, "the audit records of a refused nested call were not written");
                Ok(None)
            }
        }
    }
}
