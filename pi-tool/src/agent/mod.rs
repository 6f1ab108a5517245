//! The agent runtime: Pi 0.85.0's agent loop, tool batches and hooks, in Rust.
//!
//! ```text
//!  Agent (state, listeners, queues) ──► run_agent_loop ──► StreamFn (model)
//!                                          │
//!                                          └─► tool batch: prepare → execute → finalize
//!                                               (AgentTool, before/after hooks)
//! ```
//!
//! * [`Message`](crate::model::Message): the transcript in Pi's JSON shape.
//! * [`StreamFn`](crate::model::StreamFn): the model boundary (`testing::FauxModel` is a
//!   scripted one for tests).
//! * [`run_agent_loop`]: the low-level loop; [`AgentEvent`]s go to an
//!   [`AgentEventSink`].
//! * [`Agent`]: the stateful wrapper with listeners, abort, steering and follow-ups.
//! * Telemetry: `tracing` spans of runs (`invoke_agent`), turns and model requests
//!   (`chat`), with OpenTelemetry's GenAI conventions; each tool call is the call policy's
//!   `execute_tool` span ([`CallSpan`](pi_tool_core::CallSpan)).
//!
//! The semantics are Pi's, recorded in `conformance/` and checked byte for byte by the
//! `pi-tool-conformance` runner, except where pi-tool deliberately does better
//! (`docs/differences-from-pi.md`): no orphaned tool calls after an abort, listener
//! failures and tool panics do not end the run, optional concurrency limit and timeouts.

mod approval;
mod batch;
mod checkpoint;
mod config;
mod driver;
mod event;
mod hooks;
mod limits;
mod listeners;
mod marks;
mod nested;
mod nested_audit;
mod options;
mod outcome;
mod policy;
mod run;
mod stateful;
mod suspend;
mod telemetry;
mod widen;

pub use approval::{ApprovalPolicy, WithoutUi};
pub use config::{AgentEventSink, Emit, LoopConfig, MessageSource};
pub use event::AgentEvent;
pub use hooks::{
    AfterToolCall, AfterToolCallContext, AfterToolCallResult, ApprovalRequest, BLOCKED_MESSAGE,
    BeforeToolCall, BeforeToolCallContext, BeforeToolCallResult, CompletedTurn, NextTurn,
    PrepareNextTurn,
};
pub use limits::RunLimits;
pub use listeners::{AgentListener, ListenerId, ListenerResult};
pub use options::{AgentError, AgentOptions, AgentState, QueueMode};
pub use outcome::RunFailed;
pub use pi_tool_core::concurrency::ConcurrencyLimits;
pub use policy::RunPolicy;
pub use run::{ContinueError, run_agent_loop, run_agent_loop_continue};
pub use stateful::{AbortHandle, Agent};
pub use suspend::{DEFAULT_APPROVAL_TTL, DEFAULT_LEASE, DurableRuns, RunOutcome, Suspension};
pub use widen::{WidenSandbox, WidenSandboxContext};
