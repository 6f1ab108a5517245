//! The low-level agent loop (Pi's `runAgentLoop` / `runAgentLoopContinue`).
//!
//! One run: emit `agent_start` and `turn_start`, the prompt messages, then turns until
//! the model stops calling tools. Each turn asks the model for one assistant message
//! (streamed into `message_start` / `message_update` / `message_end`), runs its tool
//! calls as one batch ([`super::batch`]), and emits `turn_end`. Dispatch looks at the
//! tool-call blocks, not at the stop reason; an `error`/`aborted` message ends the run
//! at once; a `length` stop fails every call of the message with Pi's truncation text.
//! After a batch the model is called again unless every result asked to terminate —
//! also after an abort (the model then sees the aborted signal).
//!
//! Steering messages are injected before the next model call; follow-up messages
//! restart the loop when it would otherwise stop. [`LoopConfig::prepare_next_turn`]
//! may swap the context, model or thinking level between turns.

use std::sync::Arc;

use futures::StreamExt;
use tracing::Instrument;

use super::batch::{execute_tool_calls, fail_truncated};
use super::checkpoint::BatchAt;
use super::config::{AgentEventSink, LoopConfig, MessageSource};
use super::event::AgentEvent;
use super::hooks::CompletedTurn;
use super::limits::RunCalls;
use super::suspend::SuspendedBatch;
use super::telemetry;
use crate::model::{AssistantMessage, Message, StopReason, ToolCall, ToolResultMessage};
use crate::model::{AssistantMessageEvent, Context, StreamFn, StreamOptions, ThinkingLevel};
use pi_tool_core::AbortSignal;

/// Text of the error message when a stream ends without `done` or `error`.
const NO_FINAL_MESSAGE: &str = "The model stream ended without a final message";

/// Runs the loop with new prompt messages (Pi's `runAgentLoop`). Returns the messages
/// this run added: the prompts, the assistant messages and the tool results.
///
/// The run is an `invoke_agent` span, each turn a `turn` span inside it
/// (the agent's telemetry).
pub async fn run_agent_loop(
    prompts: Vec<Message>,
    context: Context,
    config: &LoopConfig,
    sink: &mut dyn AgentEventSink,
    signal: &AbortSignal,
    stream_fn: &dyn StreamFn,
) -> Vec<Message> {
    run_new(prompts, context, config, sink, signal, stream_fn)
        .instrument(telemetry::agent_span(&config.model))
        .await
}

async fn run_new(
    prompts: Vec<Message>,
    mut context: Context,
    config: &LoopConfig,
    sink: &mut dyn AgentEventSink,
    signal: &AbortSignal,
    stream_fn: &dyn StreamFn,
) -> Vec<Message> {
    context.messages.extend(prompts.iter().cloned());
    sink.emit(AgentEvent::AgentStart).await;
    sink.emit(AgentEvent::TurnStart).await;
    for prompt in &prompts {
        sink.emit(AgentEvent::MessageStart {
            message: prompt.clone(),
        })
        .await;
        sink.emit(AgentEvent::MessageEnd {
            message: prompt.clone(),
        })
        .await;
    }
    let mut new_messages = prompts;
    run_loop(
        context,
        &mut new_messages,
        config,
        sink,
        signal,
        stream_fn,
        None,
    )
    .await;
    new_messages
}

/// Continues from the current transcript without a new message (Pi's
/// `runAgentLoopContinue`). The last message must not be an assistant message.
pub async fn run_agent_loop_continue(
    context: Context,
    config: &LoopConfig,
    sink: &mut dyn AgentEventSink,
    signal: &AbortSignal,
    stream_fn: &dyn StreamFn,
) -> Result<Vec<Message>, ContinueError> {
    match context.messages.last() {
        None => return Err(ContinueError::NoMessages),
        Some(Message::Assistant(_)) => return Err(ContinueError::LastIsAssistant),
        Some(_) => {}
    }
    let run = async {
        sink.emit(AgentEvent::AgentStart).await;
        sink.emit(AgentEvent::TurnStart).await;
        let mut new_messages = Vec::new();
        run_loop(
            context,
            &mut new_messages,
            config,
            sink,
            signal,
            stream_fn,
            None,
        )
        .await;
        new_messages
    };
    Ok(run.instrument(telemetry::agent_span(&config.model)).await)
}

/// Why a run cannot continue.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContinueError {
    /// The transcript is empty.
    NoMessages,
    /// The transcript ends with an assistant message.
    LastIsAssistant,
}

impl std::fmt::Display for ContinueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ContinueError::NoMessages => f.write_str("Cannot continue: no messages in context"),
            ContinueError::LastIsAssistant => {
                f.write_str("Cannot continue from message role: assistant")
            }
        }
    }
}

impl std::error::Error for ContinueError {}

/// Takes up a suspended run in the turn it stopped in (`context` ends with that turn's
/// assistant message): runs the rest of its batch, then goes on as the run would have.
/// Emits neither `agent_start` nor the events emitted before the suspension.
pub(crate) async fn resume_agent_loop(
    context: Context,
    mut new_messages: Vec<Message>,
    turns: u64,
    config: &LoopConfig,
    sink: &mut dyn AgentEventSink,
    signal: &AbortSignal,
    stream_fn: &dyn StreamFn,
) -> Vec<Message> {
    let message = match context.messages.last() {
        Some(Message::Assistant(message)) => message.clone(),
        _ => return new_messages,
    };
    let resume = Some((message, turns));
    run_loop(
        context,
        &mut new_messages,
        config,
        sink,
        signal,
        stream_fn,
        resume,
    )
    .instrument(telemetry::agent_span(&config.model))
    .await;
    new_messages
}

fn poll(source: &Option<MessageSource>) -> Vec<Message> {
    source.as_ref().map(|f| f()).unwrap_or_default()
}

struct LastTurn {
    message: Arc<AssistantMessage>,
    tool_results: Vec<Arc<ToolResultMessage>>,
}

/// `resume`: the assistant message of the turn a suspended run stopped in, and the
/// number of that turn; the loop starts by finishing it.
async fn run_loop(
    mut context: Context,
    new_messages: &mut Vec<Message>,
    initial_config: &LoopConfig,
    sink: &mut dyn AgentEventSink,
    signal: &AbortSignal,
    stream_fn: &dyn StreamFn,
    mut resume: Option<(Arc<AssistantMessage>, u64)>,
) {
    let mut config = std::borrow::Cow::Borrowed(initial_config);
    // The run's count of tool calls, direct and nested, across its turns; a resumed run
    // counts on from the calls it had made when it suspended.
    let run_calls = RunCalls::starting_at(
        initial_config
            .durable
            .as_ref()
            .and_then(|durable| durable.calls_made())
            .map_or(0, |made| made.run),
    );
    let mut last_turn: Option<LastTurn> = None;
    let mut turns = resume.as_ref().map_or(0, |(_, turn)| *turn);
    // A resumed run polled its steering queue before it stopped.
    let mut pending = match resume {
        Some(_) => Vec::new(),
        None => poll(&config.steering_messages),
    };
    loop {
        let mut has_more_tool_calls = true;
        while has_more_tool_calls || !pending.is_empty() {
            let turn = if let Some((message, _)) = resume.take() {
                finish_turn(
                    &mut context,
                    new_messages,
                    message,
                    (&config, &run_calls, turns),
                    sink,
                    signal,
                )
                .instrument(telemetry::turn_span(turns))
                .await
            } else {
                if let Some(last) = &last_turn {
                    if let Some(hook) = &config.prepare_next_turn {
                        let hook = hook.clone();
                        let next = hook
                            .prepare_next_turn(
                                CompletedTurn {
                                    message: &last.message,
                                    tool_results: &last.tool_results,
                                    context: &context,
                                    new_messages,
                                },
                                signal,
                            )
                            .await;
                        if let Some(next) = next {
                            if let Some(c) = next.context {
                                context = c;
                            }
                            if next.model.is_some() || next.thinking_level.is_some() {
                                let c = config.to_mut();
                                if let Some(model) = next.model {
                                    c.model = model;
                                }
                                if let Some(level) = next.thinking_level {
                                    c.reasoning = (level != ThinkingLevel::Off).then_some(level);
                                }
                            }
                        }
                    }
                    if pending.is_empty() {
                        pending = poll(&config.steering_messages);
                    }
                    sink.emit(AgentEvent::TurnStart).await;
                }
                turns += 1;
                run_turn(
                    &mut context,
                    new_messages,
                    &mut pending,
                    (&config, &run_calls, turns),
                    sink,
                    signal,
                    stream_fn,
                )
                .instrument(telemetry::turn_span(turns))
                .await
            };
            let (turn, has_more) = match turn {
                Turn::Next(turn, has_more) => (turn, has_more),
                Turn::Failed => {
                    sink.emit(AgentEvent::AgentEnd {
                        messages: new_messages.clone(),
                    })
                    .await;
                    return;
                }
                // The run waits in the store: no `turn_end`, no `agent_end` until it is
                // resumed.
                Turn::Suspended(batch) => {
                    if let Some(durable) = &config.durable {
                        durable
                            .save(
                                &config.policy,
                                &context,
                                new_messages,
                                (turns, run_calls.made()),
                                batch,
                            )
                            .await;
                    }
                    return;
                }
            };
            has_more_tool_calls = has_more;
            last_turn = Some(turn);
            pending = poll(&config.steering_messages);
        }
        let follow_ups = poll(&config.follow_up_messages);
        if follow_ups.is_empty() {
            break;
        }
        pending = follow_ups;
    }
    sink.emit(AgentEvent::AgentEnd {
        messages: new_messages.clone(),
    })
    .await;
}

/// How a turn ended.
enum Turn {
    /// The model's message failed: the run ends.
    Failed,
    /// The turn, and whether the model is called again.
    Next(LastTurn, bool),
    /// A call needs a decision and the run has a store: the run suspends.
    Suspended(SuspendedBatch),
}

/// One turn: the pending messages, the model call and its tool batch, `turn_end`.
async fn run_turn(
    context: &mut Context,
    new_messages: &mut Vec<Message>,
    pending: &mut Vec<Message>,
    (config, run_calls, turn): (&LoopConfig, &RunCalls, u64),
    sink: &mut dyn AgentEventSink,
    signal: &AbortSignal,
    stream_fn: &dyn StreamFn,
) -> Turn {
    for message in pending.drain(..) {
        sink.emit(AgentEvent::MessageStart {
            message: message.clone(),
        })
        .await;
        sink.emit(AgentEvent::MessageEnd {
            message: message.clone(),
        })
        .await;
        context.messages.push(message.clone());
        new_messages.push(message);
    }

    let chat = telemetry::chat_span(&config.model);
    let message = stream_assistant_response(context, config, sink, signal, stream_fn)
        .instrument(chat.clone())
        .await;
    telemetry::record_chat_response(&chat, &message);
    drop(chat);
    new_messages.push(Message::Assistant(message.clone()));
    if message.stop_reason.is_failure() {
        sink.emit(AgentEvent::TurnEnd {
            message: Message::Assistant(message),
            tool_results: Vec::new(),
        })
        .await;
        return Turn::Failed;
    }
    finish_turn(
        context,
        new_messages,
        message,
        (config, run_calls, turn),
        sink,
        signal,
    )
    .await
}

/// The rest of a turn once the model's message is in: its tool batch and `turn_end`.
async fn finish_turn(
    context: &mut Context,
    new_messages: &mut Vec<Message>,
    message: Arc<AssistantMessage>,
    (config, run_calls, turn): (&LoopConfig, &RunCalls, u64),
    sink: &mut dyn AgentEventSink,
    signal: &AbortSignal,
) -> Turn {
    let calls: Vec<&ToolCall> = message.tool_calls().collect();
    let mut tool_results = Vec::new();
    let mut has_more_tool_calls = false;
    if !calls.is_empty() {
        let batch = if message.stop_reason == StopReason::Length {
            fail_truncated(&calls, &config.policy, sink).await
        } else {
            let at = BatchAt { new_messages, turn };
            execute_tool_calls(context, &message, (config, run_calls, at), signal, sink).await
        };
        if let Some(suspended) = batch.suspended {
            return Turn::Suspended(suspended);
        }
        has_more_tool_calls = !batch.terminate;
        tool_results = batch.messages;
        context.messages.reserve(tool_results.len());
        new_messages.reserve(tool_results.len());
        for result in &tool_results {
            context.messages.push(Message::ToolResult(result.clone()));
            new_messages.push(Message::ToolResult(result.clone()));
        }
    }
    sink.emit(AgentEvent::TurnEnd {
        message: Message::Assistant(message.clone()),
        tool_results: tool_results.clone(),
    })
    .await;
    Turn::Next(
        LastTurn {
            message,
            tool_results,
        },
        has_more_tool_calls,
    )
}

/// Pi's `streamAssistantResponse`: one model call, streamed into events; the final
/// message is appended to the context.
async fn stream_assistant_response(
    context: &mut Context,
    config: &LoopConfig,
    sink: &mut dyn AgentEventSink,
    signal: &AbortSignal,
    stream_fn: &dyn StreamFn,
) -> Arc<AssistantMessage> {
    let options = StreamOptions {
        signal: signal.clone(),
        reasoning: config.reasoning,
        ..config.stream_options.clone()
    };
    let mut stream = stream_fn.stream(&config.model, context, options);
    let mut started = false;
    let mut final_message = None;
    while let Some(event) = stream.next().await {
        match event {
            AssistantMessageEvent::Start { partial } => {
                started = true;
                sink.emit(AgentEvent::MessageStart {
                    message: Message::Assistant(partial),
                })
                .await;
            }
            AssistantMessageEvent::Done { message, .. } => {
                final_message = Some(message);
                break;
            }
            AssistantMessageEvent::Error { error, .. } => {
                final_message = Some(error);
                break;
            }
            event => {
                if started && let Some(partial) = event.partial().cloned() {
                    sink.emit(AgentEvent::MessageUpdate {
                        message: partial,
                        assistant_message_event: event,
                    })
                    .await;
                }
            }
        }
    }
    drop(stream);
    let message = final_message.unwrap_or_else(|| {
        let mut m = AssistantMessage::empty(&config.model, StopReason::Error);
        m.error_message = Some(NO_FINAL_MESSAGE.to_owned());
        Arc::new(m)
    });
    if !started {
        sink.emit(AgentEvent::MessageStart {
            message: Message::Assistant(message.clone()),
        })
        .await;
    }
    context.messages.push(Message::Assistant(message.clone()));
    sink.emit(AgentEvent::MessageEnd {
        message: Message::Assistant(message.clone()),
    })
    .await;
    message
}
