//! Tools and hooks built from scenario data (FORMAT.md §3.1–§3.7).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use pi_tool::agent::{
    AbortHandle, AfterToolCall, AfterToolCallContext, AfterToolCallResult, BeforeToolCall,
    BeforeToolCallContext, BeforeToolCallResult,
};
use pi_tool::schema::ToolSchema;
use pi_tool::{
    AbortController, AbortSignal, AgentTool, JsonDetails, JsonToolResult, OnUpdate, ToolError,
    ToolExecutionMode, ToolSpec,
};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::data::{apply_ops, deep_equal, first_rule, render, render_text, rule_content, truthy};
use crate::record::Recorder;
use pi_tool::ToolInvocation;

/// How a run aborts: the agent's handle, or the loop driver's controller.
#[derive(Clone)]
pub enum Aborter {
    /// `agent.abort()`.
    Agent(AbortHandle),
    /// The loop's own controller.
    Controller(AbortController),
}

/// What tools and hooks share with the runner: the recorder, the abort action and the
/// late-update timers.
#[derive(Default)]
pub struct Host {
    /// The run's record.
    pub recorder: Recorder,
    aborter: Mutex<Option<Aborter>>,
    late_timers: Mutex<Vec<JoinHandle<()>>>,
}

impl Host {
    /// Installs the abort action.
    pub fn set_aborter(&self, aborter: Aborter) {
        *self.aborter.lock().unwrap_or_else(|p| p.into_inner()) = Some(aborter);
    }

    /// Records `harness:abort` with `source`, then aborts the run.
    pub fn abort(&self, source: &str) {
        self.recorder.harness("abort", json!({"source": source}));
        let aborter = self
            .aborter
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        match aborter {
            Some(Aborter::Agent(handle)) => handle.abort(),
            Some(Aborter::Controller(controller)) => controller.abort(),
            None => {}
        }
    }

    /// Waits until every late-update timer has fired.
    pub async fn wait_late_timers(&self) {
        loop {
            let timers: Vec<JoinHandle<()>> =
                std::mem::take(&mut *self.late_timers.lock().unwrap_or_else(|p| p.into_inner()));
            if timers.is_empty() {
                return;
            }
            for t in timers {
                let _ = t.await;
            }
        }
    }
}

/// A tool described as data.
pub struct DataTool {
    spec: ToolSpec,
    def: Value,
    host: Arc<Host>,
}

impl DataTool {
    /// Builds the tool of a tool object.
    pub fn new(def: Value, host: Arc<Host>) -> Self {
        let name = def
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let description = def
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let parameters = def.get("parameters").cloned().unwrap_or_else(|| json!({}));
        let mut spec = ToolSpec::new(
            name.clone(),
            description,
            Arc::new(ToolSchema::from_json(parameters)),
        );
        spec.label = def
            .get("label")
            .and_then(Value::as_str)
            .unwrap_or(&name)
            .to_owned();
        spec.execution_mode = def
            .get("executionMode")
            .and_then(Value::as_str)
            .and_then(|m| m.parse::<ToolExecutionMode>().ok());
        DataTool { spec, def, host }
    }

    fn steps(&self, tool_call_id: &str, params: &Value) -> Vec<Value> {
        let cases = self.def.get("cases").and_then(Value::as_array);
        for case in cases.into_iter().flatten() {
            let when = case.get("when");
            if let Some(id) = when.and_then(|w| w.get("toolCallId"))
                && id.as_str() != Some(tool_call_id)
            {
                continue;
            }
            if let Some(args) = when.and_then(|w| w.get("args")).and_then(Value::as_object) {
                let Some(params) = params.as_object() else {
                    continue;
                };
                if !args
                    .iter()
                    .all(|(k, v)| params.get(k).is_some_and(|p| deep_equal(p, v)))
                {
                    continue;
                }
            }
            return case
                .get("behaviour")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
        }
        self.def
            .get("behaviour")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    }
}

fn to_result(value: Value) -> Result<JsonToolResult, ToolError> {
    JsonToolResult::from_json(value)
        .map_err(|e| ToolError::new(format!("untyped result cannot be represented: {e}")))
}

async fn sleep_step(ms: f64, signal: Option<&AbortSignal>, message: &str) -> Result<(), ToolError> {
    let duration = Duration::from_secs_f64(ms.max(0.0) / 1000.0);
    let Some(signal) = signal else {
        tokio::time::sleep(duration).await;
        return Ok(());
    };
    if signal.is_aborted() {
        return Err(ToolError::new(message));
    }
    tokio::select! {
        biased;
        () = signal.aborted() => Err(ToolError::new(message)),
        () = tokio::time::sleep(duration) => Ok(()),
    }
}

#[async_trait]
impl AgentTool for DataTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare_arguments<'a>(
        &self,
        arguments: &'a Value,
    ) -> Result<std::borrow::Cow<'a, Value>, ToolError> {
        let Some(ops) = self.def.get("prepareArguments").and_then(Value::as_array) else {
            return Ok(std::borrow::Cow::Borrowed(arguments));
        };
        match arguments {
            Value::Object(object) => {
                let mut copy = object.clone();
                apply_ops(&mut copy, ops).map_err(ToolError::new)?;
                Ok(std::borrow::Cow::Owned(Value::Object(copy)))
            }
            other => Ok(std::borrow::Cow::Borrowed(other)),
        }
    }

    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        let tool_call_id = call.id;
        let params = call.params;
        let signal = call.signal;
        let on_update = call.on_update;
        self.run_steps(tool_call_id, params, signal, on_update, &|_| None)
            .await
    }
}

/// A step the agent layer does not know, offered to the session driver (FORMAT.md
/// §7.2): `Some(outcome)` when it handled the step.
pub type ExtraStep<'a> = &'a (dyn Fn(&Value) -> Option<Result<(), ToolError>> + Send + Sync);

impl DataTool {
    /// The tool's spec, for the session driver's prompt metadata.
    pub fn spec_mut(&mut self) -> &mut ToolSpec {
        &mut self.spec
    }

    /// Runs the tool's steps; `extra` handles the steps of other layers.
    pub async fn run_steps(
        &self,
        tool_call_id: &str,
        params: &Value,
        signal: AbortSignal,
        on_update: OnUpdate<Option<JsonDetails>>,
        extra: ExtraStep<'_>,
    ) -> Result<JsonToolResult, ToolError> {
        self.host.recorder.harness(
            "execute",
            json!({"toolCallId": tool_call_id, "toolName": self.spec.name, "args": params}),
        );
        for step in self.steps(tool_call_id, params) {
            if let Some(payload) = step.get("update") {
                match to_result(render(payload, params, tool_call_id)) {
                    Ok(update) => on_update.send(update),
                    Err(e) => tracing::warn!("{e}"),
                }
            } else if let Some(ms) = step.get("sleepMs").and_then(Value::as_f64) {
                let honour = truthy(step.get("honorAbort"));
                let message = step
                    .get("abortMessage")
                    .and_then(Value::as_str)
                    .unwrap_or("Operation aborted");
                sleep_step(ms, honour.then_some(&signal), message).await?;
            } else if let Some(payload) = step.get("lateUpdate") {
                let ms = step.get("afterMs").and_then(Value::as_f64).unwrap_or(0.0);
                let payload = render(payload, params, tool_call_id);
                let on_update = on_update.clone();
                let timer = tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_secs_f64(ms.max(0.0) / 1000.0)).await;
                    if let Ok(update) = to_result(payload) {
                        on_update.send(update);
                    }
                });
                self.host
                    .late_timers
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(timer);
            } else if step.get("abortAgent").is_some() {
                self.host.abort("tool");
            } else if let Some(value) = step.get("return") {
                return to_result(render(value, params, tool_call_id));
            } else if let Some(message) = step.get("throw") {
                let text = message.as_str().unwrap_or_default();
                return Err(ToolError::new(render_text(text, params, tool_call_id)));
            } else if let Some(outcome) = extra(&step) {
                outcome?;
            } else {
                return Err(ToolError::new(format!(
                    "step not supported by the agent layer: {step}"
                )));
            }
        }
        Err(ToolError::new(format!(
            "behaviour of {} ended without return/throw",
            self.spec.name
        )))
    }
}

/// `hooks.beforeToolCall` rules.
pub struct BeforeRules {
    /// The rules.
    pub rules: Vec<Value>,
    /// The host.
    pub host: Arc<Host>,
}

#[async_trait]
impl BeforeToolCall for BeforeRules {
    async fn before_tool_call(
        &self,
        ctx: BeforeToolCallContext<'_>,
        _signal: &AbortSignal,
    ) -> Result<BeforeToolCallResult, ToolError> {
        let call = ctx.tool_call;
        self.host.recorder.harness(
            "before_tool_call",
            json!({"toolCallId": call.id, "toolName": call.name, "args": ctx.args, "toolCallArguments": call.arguments}),
        );
        let Some(rule) = first_rule(&self.rules, &call.id, &call.name) else {
            return Ok(BeforeToolCallResult::Allow);
        };
        if let Some(ops) = rule.get("mutateArgs").and_then(Value::as_array)
            && let Some(args) = ctx.args.as_object_mut()
        {
            apply_ops(args, ops).map_err(ToolError::new)?;
        }
        if truthy(rule.get("abort")) {
            self.host.abort("before_tool_call");
        }
        if let Some(message) = rule.get("throw") {
            return Err(ToolError::new(message.as_str().unwrap_or_default()));
        }
        let Some(ret) = rule.get("return") else {
            return Ok(BeforeToolCallResult::Allow);
        };
        Ok(BeforeToolCallResult::from_pi(
            truthy(ret.get("block")),
            ret.get("reason").and_then(Value::as_str).map(str::to_owned),
            ret.get("terminate") == Some(&Value::Bool(true)),
        ))
    }
}

/// `hooks.afterToolCall` rules.
pub struct AfterRules {
    /// The rules.
    pub rules: Vec<Value>,
    /// The host.
    pub host: Arc<Host>,
}

#[async_trait]
impl AfterToolCall for AfterRules {
    async fn after_tool_call(
        &self,
        ctx: AfterToolCallContext<'_>,
        _signal: &AbortSignal,
    ) -> Result<AfterToolCallResult, ToolError> {
        let call = ctx.tool_call;
        self.host.recorder.harness(
            "after_tool_call",
            json!({"toolCallId": call.id, "toolName": call.name, "args": ctx.args,
                   "result": ctx.result.to_json(), "isError": ctx.is_error}),
        );
        let Some(rule) = first_rule(&self.rules, &call.id, &call.name) else {
            return Ok(AfterToolCallResult::default());
        };
        if truthy(rule.get("abort")) {
            self.host.abort("after_tool_call");
        }
        if let Some(message) = rule.get("throw") {
            return Err(ToolError::new(message.as_str().unwrap_or_default()));
        }
        let Some(ret) = rule.get("return") else {
            return Ok(AfterToolCallResult::default());
        };
        let content = rule_content(ret, "afterToolCall")?;
        Ok(AfterToolCallResult {
            content,
            details: ret.get("details").cloned(),
            usage: ret.get("usage").cloned(),
            terminate: ret.get("terminate").and_then(Value::as_bool),
            is_error: ret.get("isError").and_then(Value::as_bool),
        })
    }
}
