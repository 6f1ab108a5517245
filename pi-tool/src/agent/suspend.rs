//! Suspending a run that waits for a decision, and taking it up again
//! (docs/durable-runs.md).
//!
//! With a store ([`DurableRuns`]), a call whose `before_tool_call` answer is
//! [`Ask`](super::BeforeToolCallResult::Ask) stops its batch at that call: the run saves
//! what it needs to continue (the transcript, the calls of the batch before it, each
//! prepared call's validated arguments, the asked call's arguments and digest) with one
//! pending approval, and returns [`RunOutcome::Suspended`] without `turn_end` or
//! `agent_end`. [`Agent::resume_run`](super::Agent::resume_run), in any process, loads
//! it, applies the decision and goes on from that call, so the events and the transcript
//! are those of the same run waiting in memory. A batch stops at its first question (as
//! a run waiting in memory would), so a batch with two questions suspends twice.
//!
//! **Exactly once.** Every call the resumed batch executes is marked started in the store
//! before `execute` (using up its approval in the same transaction) and finished after,
//! with its result (`marks.rs`), and so is every nested call those calls make, with
//! its own records in the audit log (`nested_audit.rs`). Resuming again after a crash
//! replays a finished call's result and never re-runs a started one: the model reads
//! that it was interrupted and may have run, unless the tool declares itself
//! idempotent, in which case it runs again. The later batches of a resumed run are
//! durable too (`checkpoint.rs`): before one executes, the run saves a checkpoint of this
//! same shape in place of its state, and its calls are marked, so a resume after a crash
//! continues from the latest batch and no call of any turn runs twice.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::hooks::ApprovalRequest;
use super::marks::{Marker, redacted, redacted_text};
use super::nested_audit::NestedAudit;
use super::policy::RunPolicy;
use crate::durable::{
    ApprovalRow, AuditEvent, AuditKind, CallMark, ClaimedRun, DurableStore, PendingApproval,
    StoreError, Verdict, approval_digest, now_ms,
};
use crate::model::{Context, Message, ToolCall, ToolResultMessage};
use pi_tool_core::{AgentTool, CallFailure, CallSpan, JsonToolResult};

/// How long a question stands when neither the request nor the policy says.
pub const DEFAULT_APPROVAL_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// How long a resumed run is held by its process before another may take it (a process
/// that died holds it no longer than this).
pub const DEFAULT_LEASE: Duration = Duration::from_secs(5 * 60);

/// The version of the saved state this build writes and reads.
pub(super) const STATE_FORMAT: u32 = 1;

/// The error text of a stored call whose kind does not fit its batch (an edited state).
pub(super) const MISMATCHED_STATE: &str =
    "The stored state of this call does not match its batch; it was not run";

/// Where an agent's runs wait for decisions: the store, the default lifetime of a
/// question, and the lease of a resumed run ([`AgentOptions::durable`](super::AgentOptions::durable)).
#[derive(Clone)]
pub struct DurableRuns {
    pub(crate) store: Arc<dyn DurableStore>,
    pub(crate) approval_ttl: Duration,
    pub(crate) lease: Duration,
}

impl std::fmt::Debug for DurableRuns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DurableRuns")
            .field("approval_ttl", &self.approval_ttl)
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

impl DurableRuns {
    /// Runs that suspend into `store`, with questions standing 24 hours and a lease of 5
    /// minutes.
    pub fn new(store: Arc<dyn DurableStore>) -> Self {
        DurableRuns {
            store,
            approval_ttl: DEFAULT_APPROVAL_TTL,
            lease: DEFAULT_LEASE,
        }
    }

    /// How long a question stands when its [`ApprovalRequest`] does not say.
    #[must_use]
    pub fn approval_ttl(mut self, ttl: Duration) -> Self {
        self.approval_ttl = ttl;
        self
    }

    /// How long a resumed run is held before another process may take it over; each
    /// checkpoint of a later batch renews it. Longer than any batch of the run takes; a
    /// process that died holds its run for at most this long.
    #[must_use]
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn DurableStore> {
        &self.store
    }
}

/// How a durable run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RunOutcome {
    /// The run finished (as `prompt` would).
    Finished {
        /// The run.
        run_id: String,
    },
    /// The run waits in the store for these decisions.
    Suspended(Suspension),
}

/// A run waiting for decisions.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Suspension {
    /// The run.
    pub run_id: String,
    /// What it waits for.
    pub pending: Vec<PendingApproval>,
}

/// One call of a suspended batch, as saved.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "camelCase", deny_unknown_fields)]
pub(super) enum SavedCall {
    /// Parallel batch: refused at preparation, its end emitted.
    Settled {
        call: String,
        result: JsonToolResult,
    },
    /// Parallel batch: prepared, not executed.
    Prepared {
        call: String,
        args: Value,
        digest: String,
        approval: Option<String>,
    },
    /// Sequential batch: finished, its message emitted.
    Done {
        call: String,
        message: ToolResultMessage,
        terminate: Option<bool>,
    },
    /// The call the run waits for.
    Asked {
        call: String,
        args: Value,
        digest: String,
    },
}

impl SavedCall {
    fn call(&self) -> &str {
        match self {
            SavedCall::Settled { call, .. }
            | SavedCall::Prepared { call, .. }
            | SavedCall::Done { call, .. }
            | SavedCall::Asked { call, .. } => call,
        }
    }
}

/// What a suspended run saves, and a checkpoint of a later batch (`checkpoint.rs`): the
/// same shape, whose last call is prepared instead of asked.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct SavedRun {
    pub(super) format: u32,
    pub(super) run_id: String,
    /// The transcript, ending with the assistant message of the suspended batch.
    pub(super) messages: Vec<Message>,
    /// The messages this run added so far (what `agent_end` lists).
    pub(super) new_messages: Vec<Message>,
    pub(super) turn: u64,
    pub(super) sequential: bool,
    pub(super) calls: Vec<SavedCall>,
    /// The calls the run and the suspended turn had made (`RunLimits`), direct and
    /// nested; a state saved before they were kept reads as zero.
    #[serde(default)]
    pub(super) calls_made: CallsMade,
}

/// How many calls a run, and its current turn, had made when it suspended: a resumed run
/// counts on from them against its `RunLimits`, instead of from zero.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CallsMade {
    pub(crate) run: u32,
    pub(crate) turn: u32,
}

/// A call of the batch being run, kept in case a later call suspends it.
pub(crate) enum Saving {
    Settled(JsonToolResult),
    Prepared(Arc<dyn AgentTool>, Value, Option<String>),
    Done(Arc<ToolResultMessage>, Option<bool>),
}

/// A batch that stopped at a question.
pub(crate) struct SuspendedBatch {
    sequential: bool,
    saved: Vec<Saving>,
    call_id: String,
    tool: Arc<dyn AgentTool>,
    args: Value,
    digest: String,
    request: ApprovalRequest,
    /// The calls its turn had made (the run's are the loop's).
    turn_calls: u32,
}

impl SuspendedBatch {
    /// The batch stops at `call`, whose digest goes into its span as `pending`.
    pub(super) fn new(
        durable: Option<&RunDurability>,
        sequential: bool,
        saved: Vec<Saving>,
        (call, span): (&ToolCall, &CallSpan),
        tool: Arc<dyn AgentTool>,
        (args, request): (Value, ApprovalRequest),
        turn_calls: u32,
    ) -> Self {
        let run_id = durable.map_or("", |d| d.run_id.as_str());
        let digest = approval_digest(&*tool, run_id, &call.id, &args);
        span.record_approval(&digest, "pending");
        SuspendedBatch {
            sequential,
            saved,
            call_id: call.id.to_string(),
            tool,
            args,
            digest,
            request,
            turn_calls,
        }
    }
}

/// What a call of a resumed batch does now.
pub(super) enum Resumed {
    /// Sequential: finished before the suspension, its events emitted then.
    Done {
        message: ToolResultMessage,
        terminate: Option<bool>,
    },
    /// Parallel: refused before the suspension, its end emitted then.
    Settled(JsonToolResult),
    /// Refused now (denied, expired, changed since it was approved, tool gone).
    Refused(JsonToolResult, CallFailure),
    /// Runs now.
    Run {
        tool: Arc<dyn AgentTool>,
        args: Value,
    },
}

/// The batch a resumed run takes up.
pub(crate) struct ResumeBatch {
    store: Arc<dyn DurableStore>,
    run_id: String,
    calls: Vec<SavedCall>,
    approvals: HashMap<String, ApprovalRow>,
    /// Every call's marker, direct and nested (`call_1/2`), as the claim found them.
    marks: Arc<HashMap<String, CallMark>>,
    /// Calls that run under an approval: the digest they use up.
    approved: HashMap<String, String>,
    /// The calls made before the suspension.
    calls_made: CallsMade,
}

fn refused(text: String) -> Resumed {
    Resumed::Refused(JsonToolResult::error(text), CallFailure::BLOCKED)
}

fn changed(tool: &str) -> String {
    format!(
        "{tool} was not run: what would run is not what was approved (its arguments, schema or declared effects changed since; the approval digest does not match)"
    )
}

impl ResumeBatch {
    /// A later batch of a run that has a record: nothing saved, nothing marked yet (its
    /// checkpoint forgets the markers of the batches before), so its calls are prepared
    /// as usual and marked as they execute.
    pub(super) fn later(store: Arc<dyn DurableStore>, run_id: String) -> Self {
        ResumeBatch {
            store,
            run_id,
            calls: Vec::new(),
            approvals: HashMap::new(),
            marks: Arc::default(),
            approved: HashMap::new(),
            calls_made: CallsMade::default(),
        }
    }

    /// What call `index` of the resumed batch does, or `None` for a call the suspension
    /// did not reach (it is prepared as usual). The approval's digest and decision go
    /// into the call's `span`.
    pub(super) fn entry(
        &mut self,
        index: usize,
        call: &ToolCall,
        context: &Context,
        span: &CallSpan,
    ) -> Option<Resumed> {
        let saved = self.calls.get(index)?;
        if saved.call() != &*call.id {
            return Some(refused(MISMATCHED_STATE.to_owned()));
        }
        let tool = || context.find_tool(&call.name).cloned();
        let not_found = || {
            Resumed::Refused(
                JsonToolResult::error(format!("Tool {} not found", call.name)),
                CallFailure::NOT_FOUND,
            )
        };
        Some(match saved {
            SavedCall::Settled { result, .. } => Resumed::Settled(result.clone()),
            SavedCall::Done {
                message, terminate, ..
            } => Resumed::Done {
                message: message.clone(),
                terminate: *terminate,
            },
            SavedCall::Prepared {
                args,
                digest,
                approval,
                ..
            } => {
                let Some(tool) = tool() else {
                    return Some(not_found());
                };
                if approval_digest(&*tool, &self.run_id, &call.id, args) != *digest {
                    return Some(refused(changed(&call.name)));
                }
                if let Some(approval) = approval {
                    span.record_approval(approval, "approve");
                    self.approved.insert(call.id.to_string(), approval.clone());
                }
                Resumed::Run {
                    tool,
                    args: args.clone(),
                }
            }
            SavedCall::Asked { args, digest, .. } => {
                let Some(tool) = tool() else {
                    return Some(not_found());
                };
                let Some(row) = self.approvals.get(&*call.id) else {
                    return Some(refused(MISMATCHED_STATE.to_owned()));
                };
                let decision = match &row.decision {
                    None => "expired",
                    Some(d) if d.verdict == Verdict::Approve => "approve",
                    Some(_) => "deny",
                };
                span.record_approval(&row.approval.digest, decision);
                match &row.decision {
                    Some(decision) if decision.verdict == Verdict::Approve => {
                        let now = approval_digest(&*tool, &self.run_id, &call.id, args);
                        if now != row.approval.digest || *digest != row.approval.digest {
                            span.record_approval(&row.approval.digest, "changed");
                            return Some(refused(changed(&call.name)));
                        }
                        self.approved.insert(call.id.to_string(), now);
                        Resumed::Run {
                            tool,
                            args: args.clone(),
                        }
                    }
                    Some(decision) => refused(match &decision.reason {
                        Some(reason) if !reason.is_empty() => {
                            format!("User denied {}: {reason}", call.name)
                        }
                        _ => format!("User denied {}", call.name),
                    }),
                    None => refused(format!(
                        "The approval of {} expired before anyone decided",
                        call.name
                    )),
                }
            }
        })
    }

    /// The calls made before the suspension (the batch's turn counts on from them).
    pub(super) fn calls_made(&self) -> CallsMade {
        self.calls_made
    }

    /// The approval a call of this batch runs under.
    pub(super) fn approval_of(&self, call_id: &str) -> Option<String> {
        self.approved.get(call_id).cloned()
    }

    /// The exactly-once marker of a call this batch executes.
    pub(super) fn marker(&self, call: &ToolCall, tool: &dyn AgentTool) -> Marker {
        Marker::new(
            (self.store.clone(), &self.run_id),
            &call.id,
            tool,
            &self.marks,
        )
        .approval(self.approved.get(&*call.id).cloned())
    }

    /// Where the nested calls of this batch's calls leave their records and marks.
    pub(super) fn nested_audit(&self) -> NestedAudit {
        NestedAudit::new(self.store.clone(), self.run_id.clone(), self.marks.clone())
    }
}

/// The durable side of one run, as the loop sees it.
pub(crate) struct RunDurability {
    pub(super) runs: DurableRuns,
    pub(super) run_id: String,
    /// The run has a record in the store (it was resumed): its later batches are
    /// checkpointed and marked. A run that never suspended has none and pays nothing.
    pub(super) recorded: bool,
    resume: Mutex<Option<ResumeBatch>>,
    outcome: Mutex<Option<Result<Suspension, StoreError>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl RunDurability {
    pub(crate) fn new(runs: DurableRuns, run_id: String, resume: Option<ResumeBatch>) -> Self {
        RunDurability {
            runs,
            run_id,
            recorded: resume.is_some(),
            resume: Mutex::new(resume),
            outcome: Mutex::new(None),
        }
    }

    /// The resumed batch, for the first batch of a resumed run.
    pub(super) fn take_resume(&self) -> Option<ResumeBatch> {
        lock(&self.resume).take()
    }

    /// The calls made before the suspension, until the resumed batch is taken up (a
    /// resumed run's count, and its first batch's, start from them).
    pub(super) fn calls_made(&self) -> Option<CallsMade> {
        lock(&self.resume).as_ref().map(|resume| resume.calls_made)
    }

    /// The suspension, if the run suspended (or failed to).
    pub(crate) fn suspension(&self) -> Option<Result<Suspension, StoreError>> {
        lock(&self.outcome).clone()
    }

    /// Saves the suspended run with its pending approval.
    pub(super) async fn save(
        &self,
        policy: &RunPolicy,
        context: &Context,
        new_messages: &[Message],
        (turn, run_calls): (u64, u32),
        batch: SuspendedBatch,
    ) {
        let outcome = self
            .try_save(policy, context, new_messages, (turn, run_calls), batch)
            .await;
        *lock(&self.outcome) = Some(outcome);
    }

    async fn try_save(
        &self,
        policy: &RunPolicy,
        context: &Context,
        new_messages: &[Message],
        (turn, run_calls): (u64, u32),
        batch: SuspendedBatch,
    ) -> Result<Suspension, StoreError> {
        let mut calls = self.saved_calls(context, &batch.saved);
        let digest = batch.digest;
        let tool = batch.tool.name().to_owned();
        let arguments = redacted(&batch.args, policy);
        calls.push(SavedCall::Asked {
            call: batch.call_id.clone(),
            args: batch.args,
            digest: digest.clone(),
        });
        let state = SavedRun {
            format: STATE_FORMAT,
            run_id: self.run_id.clone(),
            messages: context.messages.clone(),
            new_messages: new_messages.to_vec(),
            turn,
            sequential: batch.sequential,
            calls,
            calls_made: CallsMade {
                run: run_calls,
                turn: batch.turn_calls,
            },
        };
        let state = serde_json::to_value(&state).map_err(|error| {
            StoreError::Corrupt(format!("the run's state cannot be saved: {error}"))
        })?;
        let now = now_ms();
        let ttl = batch.request.expires_in.unwrap_or(self.runs.approval_ttl);
        let ttl_ms = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX / 2);
        let pending = PendingApproval::new(
            self.run_id.clone(),
            batch.call_id.clone(),
            tool.clone(),
            digest.clone(),
            redacted_text(&batch.request.title, policy),
            redacted_text(&batch.request.message, policy),
            now,
            now.saturating_add(ttl_ms),
        );
        let audit = [
            AuditEvent::new(AuditKind::Requested, &self.run_id, now)
                .with("call", batch.call_id.clone())
                .with("tool", tool)
                .with("digest", digest)
                .with("arguments", arguments)
                .with("expiresAt", pending.expires_at_ms),
            AuditEvent::new(AuditKind::Suspended, &self.run_id, now),
        ];
        self.runs
            .store
            .suspend(&self.run_id, &state, std::slice::from_ref(&pending), &audit)
            .await?;
        Ok(Suspension {
            run_id: self.run_id.clone(),
            pending: vec![pending],
        })
    }
}

impl RunDurability {
    /// The calls of the batch at the end of `context`, as saved.
    pub(super) fn saved_calls(&self, context: &Context, saved: &[Saving]) -> Vec<SavedCall> {
        let call_ids: Vec<String> = match context.messages.last() {
            Some(Message::Assistant(assistant)) => {
                assistant.tool_calls().map(|c| c.id.to_string()).collect()
            }
            _ => Vec::new(),
        };
        let mut calls = Vec::with_capacity(saved.len() + 1);
        for (index, saving) in saved.iter().enumerate() {
            let call = call_ids.get(index).cloned().unwrap_or_default();
            calls.push(match saving {
                Saving::Settled(result) => SavedCall::Settled {
                    call,
                    result: result.clone(),
                },
                Saving::Prepared(tool, args, approval) => SavedCall::Prepared {
                    digest: approval_digest(&**tool, &self.run_id, &call, args),
                    call,
                    args: args.clone(),
                    approval: approval.clone(),
                },
                Saving::Done(message, terminate) => SavedCall::Done {
                    call,
                    message: (**message).clone(),
                    terminate: *terminate,
                },
            });
        }
        calls
    }
}

/// A claimed run, read and checked: what the agent resumes.
pub(crate) struct ResumePlan {
    /// The run's context, ending with the suspended batch's assistant message.
    pub(crate) messages: Vec<Message>,
    /// The agent's transcript at the suspension: the context and the tool results the
    /// batch emitted before it (a sequential batch's finished calls).
    pub(crate) transcript: Vec<Message>,
    pub(crate) new_messages: Vec<Message>,
    pub(crate) turn: u64,
    pub(crate) batch: ResumeBatch,
}

/// What a claim found.
pub(crate) enum Claimed {
    /// A decision is still open: the run went back to waiting.
    Waiting(Suspension),
    /// Every decision is in (or expired): resume.
    Ready(Box<ResumePlan>),
}

fn corrupt(run_id: &str, what: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("the saved state of run {run_id} {what}"))
}

/// Reads and checks a claimed run. A state this build cannot read, or one that does not
/// fit together, is put back as it was (nothing is lost) and reported.
pub(crate) async fn take_up(
    runs: &DurableRuns,
    claimed: ClaimedRun,
) -> Result<Claimed, StoreError> {
    let run_id = claimed.run_id.clone();
    let checked = check(&claimed);
    let saved = match checked {
        Ok(saved) => saved,
        Err(error) => {
            // Put it back for a fixed build or a person to look at.
            runs.store
                .suspend(&run_id, &claimed.state, &[], &[])
                .await?;
            return Err(error);
        }
    };
    let now = now_ms();
    let mut waiting = Vec::new();
    let mut audit = Vec::new();
    for call in &saved.calls {
        let SavedCall::Asked { call, .. } = call else {
            continue;
        };
        let Some(row) = claimed
            .approvals
            .iter()
            .find(|r| r.approval.call_id == *call)
        else {
            continue;
        };
        if row.decision.is_none() {
            if now <= row.approval.expires_at_ms {
                waiting.push(row.approval.clone());
            } else {
                audit.push(
                    AuditEvent::new(AuditKind::Expired, &run_id, now)
                        .with("call", call.clone())
                        .with("tool", row.approval.tool.clone())
                        .with("digest", row.approval.digest.clone()),
                );
            }
        }
    }
    if !waiting.is_empty() {
        runs.store
            .suspend(&run_id, &claimed.state, &[], &[])
            .await?;
        return Ok(Claimed::Waiting(Suspension {
            run_id,
            pending: waiting,
        }));
    }
    audit.push(AuditEvent::new(AuditKind::Resumed, &run_id, now));
    runs.store.append_audit(&audit).await?;
    let approvals = claimed
        .approvals
        .into_iter()
        .map(|row| (row.approval.call_id.clone(), row))
        .collect();
    let marks = Arc::new(
        claimed
            .calls
            .into_iter()
            .map(|mark| (mark.call_id.clone(), mark))
            .collect(),
    );
    let mut transcript = saved.messages.clone();
    for call in &saved.calls {
        if let SavedCall::Done { message, .. } = call {
            transcript.push(Message::ToolResult(Arc::new(message.clone())));
        }
    }
    Ok(Claimed::Ready(Box::new(ResumePlan {
        transcript,
        messages: saved.messages,
        new_messages: saved.new_messages,
        turn: saved.turn,
        batch: ResumeBatch {
            store: runs.store.clone(),
            run_id,
            calls: saved.calls,
            approvals,
            marks,
            approved: HashMap::new(),
            calls_made: saved.calls_made,
        },
    })))
}

/// The saved state, if it is one this build wrote and it fits together.
fn check(claimed: &ClaimedRun) -> Result<SavedRun, StoreError> {
    let run_id = &claimed.run_id;
    let format = claimed.state.get("format").and_then(Value::as_u64);
    if format != Some(u64::from(STATE_FORMAT)) {
        return Err(corrupt(
            run_id,
            format_args!(
                "has format {:?}; this build reads format {STATE_FORMAT}",
                claimed.state.get("format")
            ),
        ));
    }
    let saved: SavedRun = serde_json::from_value(claimed.state.clone())
        .map_err(|error| corrupt(run_id, format_args!("cannot be read: {error}")))?;
    if saved.run_id != *run_id {
        return Err(corrupt(run_id, format_args!("names run {}", saved.run_id)));
    }
    let Some(Message::Assistant(assistant)) = saved.messages.last() else {
        return Err(corrupt(
            run_id,
            "does not end with the assistant message of its batch",
        ));
    };
    let call_ids: Vec<&str> = assistant.tool_calls().map(|c| &*c.id).collect();
    let fits = saved.calls.len() <= call_ids.len()
        && saved
            .calls
            .iter()
            .zip(&call_ids)
            .all(|(c, id)| c.call() == *id)
        // A suspension ends with its asked call; a checkpoint (`checkpoint.rs`) with the
        // prepared call about to run (sequential) or with the whole prepared batch.
        && saved.calls.iter().enumerate().all(|(i, c)| {
            let last = i + 1 == saved.calls.len();
            match c {
                SavedCall::Asked { .. } => last,
                SavedCall::Done { .. } => saved.sequential && !last,
                SavedCall::Prepared { .. } if saved.sequential => last,
                SavedCall::Settled { .. } | SavedCall::Prepared { .. } => !saved.sequential,
            }
        })
        && match saved.calls.last() {
            Some(SavedCall::Asked { .. } | SavedCall::Prepared { .. }) => true,
            Some(SavedCall::Settled { .. }) => !saved.sequential,
            _ => false,
        };
    if !fits {
        return Err(corrupt(run_id, "does not match the calls of its batch"));
    }
    Ok(saved)
}
