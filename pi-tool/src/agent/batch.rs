//! One tool batch: the tool calls of one assistant message (conformance/SEMANTICS.md §1.3–§1.7).
//!
//! * **Mode.** Sequential if the loop says so or if any call names a tool whose
//!   execution mode is sequential and that is not declared read-only; parallel
//!   otherwise. (Pi has no read-only declaration: a read-only tool never forcing its
//!   batch to run sequentially is pi-tool's addition, docs/differences-from-pi.md.)
//! * **Prepare** (per call, in source order, after its `tool_execution_start`): lookup
//!   (`Tool <name> not found`), `prepare_arguments`, schema validation, then
//!   `before_tool_call` with its abort checks. A failure is an immediate error result
//!   (its end is emitted at once); it never reaches `after_tool_call`.
//! * **Execute.** Parallel: every prepared call is started in source order, each up to
//!   its first suspension; ends come in completion order; the toolResult messages
//!   follow in source order once all calls settled. Sequential: prepare, execute and
//!   finalize each call before the next, and stop after a call if the run was aborted.
//! * **Finalize.** `after_tool_call` merges its replacements into the result.
//! * **Terminate.** The batch ends the run only if every finalized result has
//!   `terminate: true`.
//!
//! Where pi-tool does better than Pi (docs/differences-from-pi.md): a panicking tool or
//! hook becomes an error result, a per-tool timeout ends a stuck call, a parallel batch
//! may be bounded by a concurrency limit, and calls Pi would leave without a result after
//! an abort get an `Operation aborted` result instead of being orphaned.

use std::any::Any;
use std::borrow::Cow;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use serde_json::Value;
use tracing::Instrument;

use super::checkpoint::BatchAt;
use super::config::{AgentEventSink, LoopConfig};
use super::driver::{Driver, DriverEvent, YieldOnce};
use super::event::AgentEvent;
use super::hooks::{
    AfterToolCallContext, BLOCKED_MESSAGE, BeforeToolCallContext, BeforeToolCallResult, merge_after,
};
use super::limits::{self, RunCalls};
use super::marks;
use super::nested::{self, NestedRequest};
use super::nested_audit::{NestedAudit, NestedVerdict};
use super::policy::RunPolicy;
use super::suspend::{ResumeBatch, Resumed, Saving, SuspendedBatch};
use super::widen;
use crate::model::Context;
use crate::model::{AssistantMessage, ToolCall, ToolResultMessage};
use pi_tool_core::AbortSignal;
use pi_tool_core::JsonDetails;
use pi_tool_core::JsonToolResult;
use pi_tool_core::ToolExecutionMode;
use pi_tool_core::concurrency::{Lease, Scheduler};
use pi_tool_core::context::ExtensionContext;
use pi_tool_core::{ABORTED_MESSAGE, ToolError, ToolErrorKind};
use pi_tool_core::{AgentTool, ToolInvocation};
use pi_tool_core::{CallFailure, CallScope, CallSpan, NestedCall};

/// The driver of a batch: each call's outcome, and nested calls as requests.
type BatchDriver<'a> = Driver<'a, (JsonToolResult, Option<CallFailure>), NestedRequest>;

/// The tool results of one batch and whether it ends the run, or the batch stopped at
/// a call that waits for a decision (a run with a store suspends).
pub(crate) struct BatchOutcome {
    pub(crate) messages: Vec<Arc<ToolResultMessage>>,
    pub(crate) terminate: bool,
    pub(crate) suspended: Option<SuspendedBatch>,
}

impl BatchOutcome {
    fn suspended(batch: SuspendedBatch) -> Self {
        BatchOutcome {
            messages: Vec::new(),
            terminate: false,
            suspended: Some(batch),
        }
    }
}

/// A nested call running in a slot of the batch's driver.
struct NestedSlot {
    call: ToolCall,
    parent: Arc<str>,
    reply: futures::channel::oneshot::Sender<nested::Reply>,
}

struct Finalized {
    result: JsonToolResult,
    is_error: bool,
    /// Added by pi-tool for a call Pi would orphan; not part of Pi's terminate rule.
    synthesized: bool,
}

enum Preparation<'c> {
    /// An error result, with its `error.type`.
    Immediate(JsonToolResult, CallFailure),
    Prepared {
        tool: Arc<dyn AgentTool>,
        /// Borrowed from the call unless preparation, coercion or a hook changed them.
        args: Cow<'c, Value>,
    },
    /// A hook asked for a decision and the run has a store to wait in.
    Ask {
        tool: Arc<dyn AgentTool>,
        args: Cow<'c, Value>,
        request: super::hooks::ApprovalRequest,
    },
}

struct Batch<'a> {
    context: &'a Context,
    assistant: &'a AssistantMessage,
    config: &'a LoopConfig,
    signal: &'a AbortSignal,
    /// The context of calls whose tools have a reach, made once per batch (a session's
    /// tools replace it with their own and keep the scope).
    linked: std::sync::OnceLock<ExtensionContext>,
    /// The run's calls so far, and this turn's (direct and nested).
    run_calls: &'a RunCalls,
    turn_calls: std::sync::atomic::AtomicU32,
    /// The concurrency classes' scheduler, if the policy limits any.
    classes: Option<Arc<Scheduler>>,
    /// A resumed batch's nested calls leave records and marks here (`None` in every
    /// other batch: no store query).
    nested_audit: Option<NestedAudit>,
    /// A later batch of a run with a record in the store: where it stands in its run,
    /// for the checkpoint it saves before its calls execute.
    checkpoint: Option<BatchAt<'a>>,
}

/// What a call brings to its execution besides itself: where its nested calls go, the
/// room it takes in its concurrency class, and, for a nested call, the call itself.
struct Link<'n> {
    scope: Option<Arc<CallScope>>,
    lease: Option<Arc<Lease>>,
    nested: Option<&'n NestedCall>,
}

/// The error result the loop builds (Pi's `createErrorToolResult`): one text block,
/// `details: {}`.
fn error_result(message: impl Into<String>) -> JsonToolResult {
    JsonToolResult::error(message)
}

/// `error.type` of an aborted call.
const ABORTED: CallFailure = CallFailure::of(ToolErrorKind::Aborted);
/// `error.type` of a call an `after_tool_call` hook turned into an error.
const TOOL_ERROR: CallFailure = CallFailure::of(ToolErrorKind::Failed);
/// `error.type` of a hook that panicked.
const PANIC: CallFailure = CallFailure::of(ToolErrorKind::Panicked);

fn aborted_preparation<'c>() -> Preparation<'c> {
    Preparation::Immediate(error_result(ABORTED_MESSAGE), ABORTED)
}

fn panic_text(panic: &(dyn Any + Send)) -> String {
    pi_tool_core::__runtime::panic_text(panic, "unknown panic payload")
}

/// Pi's `failToolCallsFromTruncatedMessage`: a `length` stop fails every call.
pub(crate) async fn fail_truncated(
    calls: &[&ToolCall],
    policy: &RunPolicy,
    sink: &mut dyn AgentEventSink,
) -> BatchOutcome {
    let mut messages = Vec::with_capacity(calls.len());
    for call in calls {
        let span = policy.call.span(&call.name, &call.id, &call.arguments);
        emit_start(sink, call).await;
        let result = error_result(format!(
            "Tool call \"{}\" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments.",
            call.name
        ));
        let result = policy
            .call
            .finish(&span, result, Some(CallFailure::TRUNCATED));
        messages.push(finish(sink, call, result, true).await);
    }
    BatchOutcome {
        messages,
        terminate: false,
        suspended: None,
    }
}

async fn emit_start(sink: &mut dyn AgentEventSink, call: &ToolCall) {
    sink.emit(AgentEvent::ToolExecutionStart {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: call.arguments.clone(),
        parent_tool_call_id: None,
    })
    .await;
}

async fn emit_end(
    sink: &mut dyn AgentEventSink,
    call: &ToolCall,
    result: &JsonToolResult,
    is_error: bool,
) {
    emit_end_of(sink, call, result, is_error, None).await;
}

async fn emit_end_of(
    sink: &mut dyn AgentEventSink,
    call: &ToolCall,
    result: &JsonToolResult,
    is_error: bool,
    parent_tool_call_id: Option<Arc<str>>,
) {
    sink.emit(AgentEvent::ToolExecutionEnd {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        result: result.clone(),
        is_error,
        parent_tool_call_id,
    })
    .await;
}

async fn emit_result_message(sink: &mut dyn AgentEventSink, message: &Arc<ToolResultMessage>) {
    sink.emit(AgentEvent::MessageStart {
        message: message.clone().into(),
    })
    .await;
    sink.emit(AgentEvent::MessageEnd {
        message: message.clone().into(),
    })
    .await;
}

/// End event, then the toolResult message (sequential order).
async fn finish(
    sink: &mut dyn AgentEventSink,
    call: &ToolCall,
    mut result: JsonToolResult,
    is_error: bool,
) -> Arc<ToolResultMessage> {
    emit_end(sink, call, &result, is_error).await;
    let message = Arc::new(ToolResultMessage::take_from_result(
        call,
        &mut result,
        is_error,
    ));
    emit_result_message(sink, &message).await;
    message
}

fn terminates(finalized: &[&Finalized]) -> bool {
    !finalized.is_empty() && finalized.iter().all(|f| f.result.terminate == Some(true))
}

/// Runs the tool calls of `assistant` (Pi's `executeToolCalls`), the batch `at` of its
/// run.
pub(crate) async fn execute_tool_calls(
    context: &Context,
    assistant: &AssistantMessage,
    (config, run_calls, at): (&LoopConfig, &RunCalls, BatchAt<'_>),
    signal: &AbortSignal,
    sink: &mut dyn AgentEventSink,
) -> BatchOutcome {
    let calls: Vec<&ToolCall> = assistant.tool_calls().collect();
    let resumed = config.durable.as_ref().and_then(|d| d.take_resume());
    // After the batch a run resumed in, a run with a record checkpoints each batch and
    // marks its calls (checkpoint.rs); the resumed batch is its suspension's already.
    let (resumed, checkpoint) = match resumed {
        Some(resumed) => (Some(resumed), None),
        None => match config.durable.as_ref().and_then(|d| d.later_batch()) {
            Some(later) => (Some(later), Some(at)),
            None => (None, None),
        },
    };
    let batch = Batch {
        context,
        assistant,
        config,
        signal,
        linked: std::sync::OnceLock::new(),
        run_calls,
        // A resumed run's first batch counts on from the calls its turn had made.
        turn_calls: std::sync::atomic::AtomicU32::new(
            resumed
                .as_ref()
                .map_or(0, |resumed| resumed.calls_made().turn),
        ),
        classes: Scheduler::new(&config.policy.concurrency),
        nested_audit: resumed.as_ref().map(ResumeBatch::nested_audit),
        checkpoint,
    };
    let sequential = config.policy.tool_execution == ToolExecutionMode::Sequential
        || calls.iter().any(|call| {
            context.find_tool(&call.name).is_some_and(|tool| {
                let spec = tool.spec();
                spec.execution_mode == Some(ToolExecutionMode::Sequential)
                    && !spec.annotations.is_read_only()
            })
        });
    if sequential {
        batch.sequential(&calls, resumed, sink).await
    } else {
        batch.parallel(&calls, resumed, sink).await
    }
}

impl<'a> Batch<'a> {
    /// Pi's `prepareToolCall`: [`Self::prepare_call`] inside the call's `span`; an
    /// immediate error result is finished by the call policy (redacted, budgeted,
    /// recorded) at once.
    async fn prepare<'c>(&self, call: &'c ToolCall, span: &CallSpan) -> Preparation<'c> {
        // `instrument` moves the future into a wrapper: a copy per call that a run with
        // no subscriber should not pay.
        let prepared = if span.span().is_disabled() {
            self.prepare_call(call, None).await
        } else {
            self.prepare_call(call, None)
                .instrument(span.span().clone())
                .await
        };
        match prepared {
            Preparation::Immediate(result, failure) => {
                let result = self.config.policy.call.finish(span, result, Some(failure));
                Preparation::Immediate(result, failure)
            }
            prepared => prepared,
        }
    }

    /// `nested`: the call a tool made through its context (its signal and parent).
    async fn prepare_call<'c>(
        &self,
        call: &'c ToolCall,
        nested: Option<&NestedCall>,
    ) -> Preparation<'c> {
        if let Err(text) = limits::admit(
            &self.config.policy.limits,
            self.run_calls,
            &self.turn_calls,
            &call.name,
        ) {
            return Preparation::Immediate(error_result(text), CallFailure::LIMIT);
        }
        let Some(tool) = self.context.find_tool(&call.name) else {
            return Preparation::Immediate(
                error_result(format!("Tool {} not found", call.name)),
                CallFailure::NOT_FOUND,
            );
        };
        let tool = tool.clone();
        let attempt = AssertUnwindSafe(self.try_prepare(call, tool, nested))
            .catch_unwind()
            .await;
        match attempt {
            Ok(Ok(preparation)) => preparation,
            Ok(Err(error)) => {
                Preparation::Immediate(error_result(error.message()), CallFailure::of(error.kind()))
            }
            // check_contained caught the tool's own panics: this one is the hook's.
            Err(panic) => Preparation::Immediate(
                error_result(format!(
                    "before_tool_call panicked: {}",
                    panic_text(&*panic)
                )),
                PANIC,
            ),
        }
    }

    async fn try_prepare<'c>(
        &self,
        call: &'c ToolCall,
        tool: Arc<dyn AgentTool>,
        nested: Option<&NestedCall>,
    ) -> Result<Preparation<'c>, ToolError> {
        let signal = nested.map_or(self.signal, |n| &n.signal);
        // Pi gives the tool its own copy (`structuredClone` before validation); a borrow
        // cannot change the model's arguments, so the copy is made only when a step below
        // changes them (`prepare_arguments`, coercion, a `before_tool_call` hook).
        let mut args = self.config.policy.call.check(&*tool, &call.arguments)?;
        if let Some(hook) = &self.config.policy.before_tool_call {
            let decision = hook
                .before_tool_call(
                    BeforeToolCallContext {
                        assistant_message: self.assistant,
                        tool_call: call,
                        args: args.to_mut(),
                        context: self.context,
                        parent_tool_call_id: nested.map(|n| &*n.parent_id),
                    },
                    signal,
                )
                .await?;
            if signal.is_aborted() {
                return Ok(aborted_preparation());
            }
            match decision {
                BeforeToolCallResult::Allow => {}
                BeforeToolCallResult::Block { reason, terminate } => {
                    let reason = reason
                        .filter(|r| !r.is_empty())
                        .unwrap_or_else(|| BLOCKED_MESSAGE.to_owned());
                    let mut result = error_result(reason);
                    if terminate {
                        result.terminate = Some(true);
                    }
                    return Ok(Preparation::Immediate(result, CallFailure::BLOCKED));
                }
                // With a store the run suspends until the decision is there; without one
                // nothing can wait for it: the call is blocked, saying why. A nested call
                // never waits for one (its outer call is mid-execution): `run_nested`
                // blocks it, and its audit record says it asked.
                BeforeToolCallResult::Ask(request) => {
                    if self.config.durable.is_some() || nested.is_some() {
                        return Ok(Preparation::Ask {
                            tool,
                            args,
                            request,
                        });
                    }
                    let result = error_result(request.unanswered(&call.name));
                    return Ok(Preparation::Immediate(result, CallFailure::BLOCKED));
                }
            }
        }
        if signal.is_aborted() {
            return Ok(aborted_preparation());
        }
        Ok(Preparation::Prepared { tool, args })
    }

    /// Execute and finalize one prepared call (Pi's `executePreparedToolCall` +
    /// `finalizeExecutedToolCall`; with `check_abort`, the parallel thunk's abort check).
    /// Its failure (`None`: a success) goes with the result to [`Self::drive`], where the
    /// call policy finishes both (redaction, budget, span).
    async fn execute_call(
        &self,
        call: &ToolCall,
        tool: Arc<dyn AgentTool>,
        args: Cow<'_, Value>,
        on_update: pi_tool_core::OnUpdate<Option<JsonDetails>>,
        check_abort: bool,
        Link {
            scope,
            lease,
            nested,
        }: Link<'_>,
    ) -> (JsonToolResult, Option<CallFailure>) {
        let signal = nested.map_or(self.signal, |n| &n.signal);
        if check_abort && signal.is_aborted() {
            return (error_result(ABORTED_MESSAGE), Some(ABORTED));
        }
        // Its room in its concurrency class, for as long as it executes; an abort while
        // it waits for the room is an abort of the call.
        if let Some(lease) = &lease
            && lease.take(signal).await.is_err()
        {
            return (error_result(ABORTED_MESSAGE), Some(ABORTED));
        }
        let invocation = || {
            let invocation =
                ToolInvocation::new(&call.id, &*args, signal.clone(), on_update.clone());
            match &scope {
                Some(scope) => {
                    invocation.with_context(self.linked_context().with_call_scope(scope.clone()))
                }
                None => invocation,
            }
        };
        let outcome = match &self.config.policy.widen_sandbox {
            None => self.config.policy.call.execute(&*tool, invocation()).await,
            // Opt-in: a refusal of the call's sandbox may be widened for one re-run.
            Some(hook) => {
                let call = widen::WideningCall {
                    call,
                    args: &args,
                    annotations: &tool.spec().annotations,
                    parent_tool_call_id: nested.map(|n| &*n.parent_id),
                    signal,
                };
                widen::execute(&**hook, call, || {
                    self.config.policy.call.execute(&*tool, invocation())
                })
                .await
            }
        };
        if let Some(lease) = &lease {
            lease.give_back();
        }
        on_update.close();
        YieldOnce::new().await;
        let (result, error_type) = match outcome {
            Ok(result) => (result, None),
            Err(error) => (
                error_result(error.message()),
                Some(CallFailure::of(error.kind())),
            ),
        };
        let is_error = error_type.is_some();
        match &self.config.policy.after_tool_call {
            Some(hook) => {
                let ctx = AfterToolCallContext {
                    assistant_message: self.assistant,
                    tool_call: call,
                    args: &args,
                    result: &result,
                    is_error,
                    context: self.context,
                    parent_tool_call_id: nested.map(|n| &*n.parent_id),
                };
                let after = AssertUnwindSafe(hook.after_tool_call(ctx, signal))
                    .catch_unwind()
                    .await;
                match after {
                    Ok(Ok(replacement)) => {
                        // The hook may turn a failure into a success or the reverse.
                        let (result, is_error) = merge_after(result, is_error, replacement);
                        let error_type = is_error.then(|| error_type.unwrap_or(TOOL_ERROR));
                        (result, error_type)
                    }
                    Ok(Err(error)) => (
                        error_result(error.message()),
                        Some(CallFailure::of(error.kind())),
                    ),
                    Err(panic) => (
                        error_result(format!("after_tool_call panicked: {}", panic_text(&*panic))),
                        Some(PANIC),
                    ),
                }
            }
            _ => (result, error_type),
        }
    }

    /// The context of a call whose tool has a reach: linked to this run (its signal),
    /// made once per batch.
    fn linked_context(&self) -> ExtensionContext {
        self.linked
            .get_or_init(|| {
                let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
                ExtensionContext::builder(cwd)
                    .signal(self.signal.clone())
                    .build()
            })
            .clone()
    }

    /// What a call of `tool` taking the driver's slot `slot` brings to its execution:
    /// where its nested calls go (`None` for a tool without a reach: it makes none, and
    /// pays nothing) and its room in its class (`None` when no class is limited).
    fn link_for<'n>(
        &self,
        (inbox, slot): (super::driver::Inbox<NestedRequest>, usize),
        tool: &Arc<dyn AgentTool>,
        call: &ToolCall,
        nested: Option<&'n NestedCall>,
    ) -> Link<'n> {
        let lease = self
            .classes
            .as_ref()
            .map(|classes| Lease::new(classes, tool.spec()));
        let reaches = &tool.spec().reaches;
        let scope = (!reaches.is_empty()).then(|| {
            nested::scope(
                (inbox, slot),
                self.config.policy.max_call_depth,
                reaches,
                (call, nested),
                lease.clone(),
                self.signal,
            )
        });
        Link {
            scope,
            lease,
            nested,
        }
    }

    /// A nested call, start to end, through the steps of a direct one: prepare (lookup,
    /// check, `before_tool_call`), then execute and `after_tool_call`. The driver's
    /// `Done` finishes it as it finishes every call.
    async fn run_nested(
        &self,
        call: ToolCall,
        nested: NestedCall,
        on_update: pi_tool_core::OnUpdate<Option<JsonDetails>>,
        slot: (super::driver::Inbox<NestedRequest>, usize),
    ) -> (JsonToolResult, Option<CallFailure>) {
        let prepared = self.prepare_call(&call, Some(&nested)).await;
        // A nested call of a marked call is marked too, with its decision in the log.
        let audit = self
            .nested_audit
            .as_ref()
            .map(|audit| (audit, (&call, &nested.parent_id)));
        let policy = &self.config.policy;
        match prepared {
            Preparation::Immediate(result, failure) => {
                if let Some((audit, call)) = audit {
                    let reason = result.text_content();
                    let verdict = NestedVerdict::Refused {
                        reason: &reason,
                        asked: false,
                    };
                    let _ = audit.decide(policy, call, verdict).await;
                }
                (result, Some(failure))
            }
            // A nested call never suspends: nothing waits for its question.
            Preparation::Ask { request, .. } => {
                let result = error_result(request.unanswered(&call.name));
                if let Some((audit, call)) = audit {
                    let reason = result.text_content();
                    let verdict = NestedVerdict::Refused {
                        reason: &reason,
                        asked: true,
                    };
                    let _ = audit.decide(policy, call, verdict).await;
                }
                (result, Some(CallFailure::BLOCKED))
            }
            Preparation::Prepared { tool, args } => {
                let marker = match audit {
                    None => None,
                    Some((audit, call)) => {
                        let verdict = NestedVerdict::Allowed {
                            tool: &*tool,
                            args: &args,
                        };
                        match audit.decide(policy, call, verdict).await {
                            Ok(marker) => marker,
                            Err(error) => return marks::not_run(tool.name(), &error),
                        }
                    }
                };
                let link = self.link_for(slot, &tool, &call, Some(&nested));
                let run = self.execute_call(&call, tool, args, on_update, true, link);
                match marker {
                    Some(marker) => marker.run(run).await,
                    None => run.await,
                }
            }
        }
    }

    /// Starts a nested call as a call of this batch: its start event, its span (a child
    /// of the outer call's), its slot, started at once (it never waits for the batch's
    /// limit: its outer call holds a place already).
    async fn start_nested<'d>(
        &'d self,
        driver: &mut BatchDriver<'d>,
        request: NestedRequest,
        sink: &mut dyn AgentEventSink,
    ) -> (usize, NestedSlot) {
        let NestedRequest {
            call: nested_call,
            parent_slot,
            reply,
        } = request;
        let call = nested::tool_call(&nested_call);
        let policy = &self.config.policy.call;
        let span = match driver.span(parent_slot) {
            Some(parent) => parent
                .span()
                .in_scope(|| policy.span(&call.name, &call.id, &call.arguments)),
            None => policy.span(&call.name, &call.id, &call.arguments),
        };
        let parent = nested_call.parent_id.clone();
        sink.emit(nested::start_event(&call, &parent)).await;
        let on_update = driver.on_update_for_next();
        let future = self.run_nested(
            call.clone(),
            nested_call,
            on_update,
            (driver.inbox(), driver.next_slot()),
        );
        let slot = driver.push(Box::pin(future), span);
        driver.start(slot);
        (
            slot,
            NestedSlot {
                call,
                parent,
                reply,
            },
        )
    }

    /// Drives the calls pushed into `driver` from slot `first` on, emitting their
    /// updates (also into their spans) and ends. `calls[slot]` is the call of each slot;
    /// `limit` bounds how many run at once. Nested calls the calls make join as slots of
    /// their own, outside the limit, and their outcome goes back to the outer call.
    async fn drive<'d>(
        &'d self,
        driver: &mut BatchDriver<'d>,
        first: usize,
        calls: &[&ToolCall],
        limit: usize,
        sink: &mut dyn AgentEventSink,
        mut on_done: impl FnMut(usize, JsonToolResult, bool),
    ) {
        let total = driver.len();
        let limit = first.saturating_add(limit);
        let mut started = first;
        while started < total && started < limit {
            driver.start(started);
            started += 1;
        }
        let mut nested_slots: HashMap<usize, NestedSlot> = HashMap::new();
        while let Some(event) = driver.next().await {
            match event {
                DriverEvent::Update(slot, partial_result) => {
                    let (call, parent) = match nested_slots.get(&slot) {
                        Some(n) => (&n.call, Some(n.parent.clone())),
                        None => (calls[slot], None),
                    };
                    if let Some(span) = driver.span(slot) {
                        span.record_update(&partial_result, &self.config.policy.call);
                    }
                    sink.emit(AgentEvent::ToolExecutionUpdate {
                        tool_call_id: call.id.clone(),
                        tool_name: call.name.clone(),
                        args: call.arguments.clone(),
                        partial_result,
                        parent_tool_call_id: parent,
                    })
                    .await;
                }
                DriverEvent::Request(request) => {
                    let (slot, nested) = self.start_nested(driver, request, sink).await;
                    nested_slots.insert(slot, nested);
                }
                DriverEvent::Done(slot, (result, error_type), span) => {
                    // What the model reads; the span ends here, with the call.
                    let result = self.config.policy.call.finish(&span, result, error_type);
                    drop(span);
                    let is_error = error_type.is_some();
                    if let Some(nested) = nested_slots.remove(&slot) {
                        emit_end_of(sink, &nested.call, &result, is_error, Some(nested.parent))
                            .await;
                        // The outer call may have stopped waiting (timed out, aborted).
                        let _ = nested.reply.send(nested::reply(result, error_type));
                        continue;
                    }
                    emit_end(sink, calls[slot], &result, is_error).await;
                    on_done(slot, result, is_error);
                    if started < total {
                        driver.start(started);
                        started += 1;
                    }
                }
            }
        }
    }

    /// A later sequential batch's checkpoint (checkpoint.rs): `saved` and the call about
    /// to run; `Ok` at once for every other batch.
    async fn save_checkpoint(
        &self,
        saved: &mut Vec<Saving>,
        (tool, args): (&Arc<dyn AgentTool>, &Cow<'_, Value>),
    ) -> Result<(), crate::durable::StoreError> {
        if self.checkpoint.is_none() {
            return Ok(());
        }
        saved.push(Saving::Prepared(
            tool.clone(),
            args.clone().into_owned(),
            None,
        ));
        let outcome = self.store_checkpoint(true, saved).await;
        saved.pop();
        outcome
    }

    /// A later batch's checkpoint of `saved` (a parallel batch: every call, prepared or
    /// refused); `Ok` at once for every other batch.
    async fn store_checkpoint(
        &self,
        sequential: bool,
        saved: &[Saving],
    ) -> Result<(), crate::durable::StoreError> {
        let (Some(at), Some(durable)) = (self.checkpoint, self.config.durable.as_ref()) else {
            return Ok(());
        };
        let made = super::suspend::CallsMade {
            run: self.run_calls.made(),
            turn: self.turn_calls.load(std::sync::atomic::Ordering::Relaxed),
        };
        durable
            .checkpoint(self.context, at, (sequential, made), saved)
            .await
    }

    /// Pi's `executeToolCallsSequential`, without orphans.
    async fn sequential(
        &self,
        calls: &[&ToolCall],
        mut resumed: Option<ResumeBatch>,
        sink: &mut dyn AgentEventSink,
    ) -> BatchOutcome {
        let mut finalized = Vec::with_capacity(calls.len());
        let mut messages = Vec::with_capacity(calls.len());
        // One driver for the whole batch: its queues are reused call after call.
        let mut driver = Driver::new();
        let mut slot_calls: Vec<&ToolCall> = Vec::with_capacity(calls.len());
        // A run with a store keeps what it needs to suspend at a later call of this batch;
        // a resumed batch takes up its calls where the suspension left them.
        let durable = self.config.durable.is_some();
        let mut saved: Vec<Saving> = Vec::new();
        for (index, call) in calls.iter().enumerate() {
            let span = self
                .config
                .policy
                .call
                .span(&call.name, &call.id, &call.arguments);
            let resumed_call = match &mut resumed {
                Some(resumed) => resumed.entry(index, call, self.context, &span),
                None => None,
            };
            let preparation = match resumed_call {
                // Finished before the suspension: its events were emitted then.
                Some(Resumed::Done { message, terminate }) => {
                    let message = Arc::new(message);
                    saved.push(Saving::Done(message.clone(), terminate));
                    let mut result = error_result("");
                    result.terminate = terminate;
                    messages.push(message.clone());
                    finalized.push(Finalized {
                        result,
                        is_error: message.is_error,
                        synthesized: false,
                    });
                    continue;
                }
                Some(Resumed::Settled(result)) => {
                    Preparation::Immediate(result, CallFailure::BLOCKED)
                }
                Some(Resumed::Refused(result, failure)) => Preparation::Immediate(
                    self.config.policy.call.finish(&span, result, Some(failure)),
                    failure,
                ),
                Some(Resumed::Run { tool, args }) => Preparation::Prepared {
                    tool,
                    args: Cow::Owned(args),
                },
                None => {
                    emit_start(sink, call).await;
                    self.prepare(call, &span).await
                }
            };
            let (result, is_error) = match preparation {
                Preparation::Immediate(result, _) => {
                    drop(span);
                    emit_end(sink, call, &result, true).await;
                    (result, true)
                }
                Preparation::Ask {
                    tool,
                    args,
                    request,
                } => {
                    return BatchOutcome::suspended(SuspendedBatch::new(
                        self.config.durable.as_deref(),
                        true,
                        saved,
                        (call, &span),
                        tool,
                        (args.into_owned(), request),
                        self.turn_calls.load(std::sync::atomic::Ordering::Relaxed),
                    ));
                }
                Preparation::Prepared { tool, args } => {
                    // The call about to run is the last of the checkpoint.
                    let saved_before = self.save_checkpoint(&mut saved, (&tool, &args)).await;
                    let on_update = driver.on_update_for_next();
                    let link =
                        self.link_for((driver.inbox(), driver.next_slot()), &tool, call, None);
                    let task = match (&resumed, saved_before) {
                        (_, Err(error)) => {
                            let refused = marks::not_run(tool.name(), &error);
                            Box::pin(async move { refused }) as super::driver::SlotFuture<'_, _>
                        }
                        (Some(resumed), Ok(())) => {
                            let marker = resumed.marker(call, &*tool);
                            let run = self.execute_call(call, tool, args, on_update, false, link);
                            Box::pin(marker.run(run))
                        }
                        (None, Ok(())) => {
                            Box::pin(self.execute_call(call, tool, args, on_update, false, link))
                        }
                    };
                    let slot = driver.push(task, span);
                    // Nested calls of earlier calls took slots too; `drive` looks up
                    // only this one in `slot_calls`.
                    slot_calls.resize(slot, call);
                    slot_calls.push(call);
                    let mut outcome = None;
                    self.drive(
                        &mut driver,
                        slot,
                        &slot_calls,
                        1,
                        sink,
                        |_, result, is_error| {
                            outcome = Some((result, is_error));
                        },
                    )
                    .await;
                    // The driver returns only after the call finished.
                    outcome.unwrap_or_else(|| (error_result(ABORTED_MESSAGE), true))
                }
            };
            let mut result = result;
            // The message takes the result's content; `finalized` needs only `terminate`.
            let message = Arc::new(ToolResultMessage::take_from_result(
                call,
                &mut result,
                is_error,
            ));
            emit_result_message(sink, &message).await;
            if durable {
                saved.push(Saving::Done(message.clone(), result.terminate));
            }
            messages.push(message);
            finalized.push(Finalized {
                result,
                is_error,
                synthesized: false,
            });
            if self.signal.is_aborted() {
                self.abort_rest(&calls[index + 1..], sink, &mut finalized, &mut messages)
                    .await;
                break;
            }
        }
        let pi_finalized: Vec<&Finalized> = finalized.iter().filter(|f| !f.synthesized).collect();
        BatchOutcome {
            terminate: terminates(&pi_finalized),
            messages,
            suspended: None,
        }
    }

    /// pi-tool's fix for Pi's orphaned calls in a sequential batch: each remaining call
    /// gets what an immediate `Operation aborted` result gets.
    async fn abort_rest(
        &self,
        rest: &[&ToolCall],
        sink: &mut dyn AgentEventSink,
        finalized: &mut Vec<Finalized>,
        messages: &mut Vec<Arc<ToolResultMessage>>,
    ) {
        for call in rest {
            let span = self
                .config
                .policy
                .call
                .span(&call.name, &call.id, &call.arguments);
            emit_start(sink, call).await;
            let result =
                self.config
                    .policy
                    .call
                    .finish(&span, error_result(ABORTED_MESSAGE), Some(ABORTED));
            drop(span);
            messages.push(finish(sink, call, result.clone(), true).await);
            finalized.push(Finalized {
                result,
                is_error: true,
                synthesized: true,
            });
        }
    }

    /// Pi's `executeToolCallsParallel`, without orphans, optionally bounded.
    async fn parallel(
        &self,
        calls: &[&ToolCall],
        mut resumed: Option<ResumeBatch>,
        sink: &mut dyn AgentEventSink,
    ) -> BatchOutcome {
        let mut finalized: Vec<Option<Finalized>> = Vec::with_capacity(calls.len());
        finalized.resize_with(calls.len(), || None);
        let mut driver = Driver::new();
        let mut slot_calls: Vec<&ToolCall> = Vec::new();
        let mut slot_index: Vec<usize> = Vec::new();
        let mut stopped_after = None;
        // As in `sequential`: what a suspension needs, and a resumed batch's calls.
        let durable = self.config.durable.is_some();
        let mut saved: Vec<Saving> = Vec::new();
        // The prepared calls, pushed into the driver once the batch is prepared.
        let mut prepared = Vec::new();
        for (index, call) in calls.iter().enumerate() {
            let span = self
                .config
                .policy
                .call
                .span(&call.name, &call.id, &call.arguments);
            let resumed_call = match &mut resumed {
                Some(resumed) => resumed.entry(index, call, self.context, &span),
                None => None,
            };
            let preparation = match resumed_call {
                // Its end was emitted before the suspension.
                Some(Resumed::Settled(result)) => {
                    saved.push(Saving::Settled(result.clone()));
                    finalized[index] = Some(Finalized {
                        result,
                        is_error: true,
                        synthesized: false,
                    });
                    continue;
                }
                // A finished call of a sequential batch cannot be in a parallel one.
                Some(Resumed::Done { .. }) => Preparation::Immediate(
                    error_result(super::suspend::MISMATCHED_STATE),
                    CallFailure::BLOCKED,
                ),
                Some(Resumed::Refused(result, failure)) => Preparation::Immediate(
                    self.config.policy.call.finish(&span, result, Some(failure)),
                    failure,
                ),
                Some(Resumed::Run { tool, args }) => Preparation::Prepared {
                    tool,
                    args: Cow::Owned(args),
                },
                None => {
                    emit_start(sink, call).await;
                    self.prepare(call, &span).await
                }
            };
            match preparation {
                Preparation::Immediate(result, _) => {
                    drop(span);
                    emit_end(sink, call, &result, true).await;
                    if durable {
                        saved.push(Saving::Settled(result.clone()));
                    }
                    finalized[index] = Some(Finalized {
                        result,
                        is_error: true,
                        synthesized: false,
                    });
                }
                Preparation::Ask {
                    tool,
                    args,
                    request,
                } => {
                    return BatchOutcome::suspended(SuspendedBatch::new(
                        self.config.durable.as_deref(),
                        false,
                        saved,
                        (call, &span),
                        tool,
                        (args.into_owned(), request),
                        self.turn_calls.load(std::sync::atomic::Ordering::Relaxed),
                    ));
                }
                Preparation::Prepared { tool, args } => {
                    if durable {
                        let approval = resumed.as_ref().and_then(|r| r.approval_of(&call.id));
                        saved.push(Saving::Prepared(
                            tool.clone(),
                            args.clone().into_owned(),
                            approval,
                        ));
                    }
                    prepared.push((index, call, span, tool, args));
                }
            }
            if self.signal.is_aborted() {
                stopped_after = Some(index + 1);
                break;
            }
        }
        // Nothing has executed yet: a later batch saves its checkpoint first, and runs
        // nothing it could not save.
        let checkpointed = match prepared.is_empty() {
            true => Ok(()),
            false => self.store_checkpoint(false, &saved).await,
        };
        for (index, call, span, tool, args) in prepared {
            let on_update = driver.on_update_for_next();
            let link = self.link_for((driver.inbox(), driver.next_slot()), &tool, call, None);
            let task = match (&resumed, &checkpointed) {
                (_, Err(error)) => {
                    let refused = marks::not_run(tool.name(), error);
                    Box::pin(async move { refused }) as super::driver::SlotFuture<'_, _>
                }
                (Some(resumed), Ok(())) => {
                    let marker = resumed.marker(call, &*tool);
                    let run = self.execute_call(call, tool, args, on_update, true, link);
                    Box::pin(marker.run(run))
                }
                (None, Ok(())) => {
                    Box::pin(self.execute_call(call, tool, args, on_update, true, link))
                }
            };
            driver.push(task, span);
            slot_calls.push(call);
            slot_index.push(index);
        }
        if let Some(first) = stopped_after {
            // Pi drops the calls it has not prepared yet; pi-tool answers them.
            for (offset, call) in calls[first..].iter().enumerate() {
                let span = self
                    .config
                    .policy
                    .call
                    .span(&call.name, &call.id, &call.arguments);
                emit_start(sink, call).await;
                let result = self.config.policy.call.finish(
                    &span,
                    error_result(ABORTED_MESSAGE),
                    Some(ABORTED),
                );
                drop(span);
                emit_end(sink, call, &result, true).await;
                finalized[first + offset] = Some(Finalized {
                    result,
                    is_error: true,
                    synthesized: true,
                });
            }
        }
        let limit = self
            .config
            .policy
            .max_concurrency
            .map_or(usize::MAX, std::num::NonZeroUsize::get);
        self.drive(
            &mut driver,
            0,
            &slot_calls,
            limit,
            sink,
            |slot, result, is_error| {
                finalized[slot_index[slot]] = Some(Finalized {
                    result,
                    is_error,
                    synthesized: false,
                });
            },
        )
        .await;
        let mut messages = Vec::with_capacity(calls.len());
        for (call, f) in calls.iter().zip(&mut finalized) {
            if let Some(f) = f {
                // The message takes the result's content; `finalized` needs only `terminate`.
                let message = Arc::new(ToolResultMessage::take_from_result(
                    call,
                    &mut f.result,
                    f.is_error,
                ));
                emit_result_message(sink, &message).await;
                messages.push(message);
            }
        }
        let pi_finalized: Vec<&Finalized> = finalized
            .iter()
            .flatten()
            .filter(|f| !f.synthesized)
            .collect();
        BatchOutcome {
            terminate: terminates(&pi_finalized),
            messages,
            suspended: None,
        }
    }
}
