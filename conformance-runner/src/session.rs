//! The `session` driver (FORMAT.md §7): runs a session scenario on pi-tool's
//! `AgentSession` with data-described custom tools, inline extensions and handlers.
//!
//! Where the session refuses to build (duplicate tool names, a deliberate difference
//! from Pi), the output is `{"id", "error"}` with the session's message, which names the
//! tool and both owners.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use pi_tool::context::{ExtensionContext, ExtensionUi, Mode};
use pi_tool::model::Message;
use pi_tool::session::{
    AgentSession, ExtensionApi, FnExtension, NoTools, SessionError, SessionEvent, ToolCallDecision,
    ToolCallEvent, ToolCallHandler, ToolResultEvent, ToolResultHandler, ToolResultPatch,
};
use pi_tool::testing::FauxModel;
use pi_tool::{AgentTool, JsonToolResult, ToolError, ToolInvocation, ToolSpec};
use serde_json::{Map, Value, json};

use crate::data::{apply_ops, first_rule, rule_content, truthy};
use crate::record::{normalise_message, summarise_message};
use crate::tools::{Aborter, DataTool, Host};

/// FORMAT.md §7.4: the tool sections of a system prompt, or nulls for a prompt without
/// them (a custom prompt).
pub fn prompt_view(prompt: &str) -> Value {
    fn section(lines: &[&str], title: &str) -> Option<Vec<String>> {
        let start = lines.iter().position(|l| *l == title)? + 1;
        Some(
            lines[start..]
                .iter()
                .take_while(|l| !l.is_empty() && !l.starts_with("Current working directory:"))
                .map(|l| (*l).to_owned())
                .collect(),
        )
    }
    let lines: Vec<&str> = prompt.split('\n').collect();
    json!({
        "availableTools": section(&lines, "Available tools:"),
        "guidelines": section(&lines, "Guidelines:"),
    })
}

/// Who may run the `setActiveTools` / `registerTool` steps of a tool.
#[derive(Clone)]
enum Owner {
    /// A custom tool: the session itself (set once it is built).
    Custom(Arc<Mutex<Option<AgentSession>>>),
    /// An extension tool: its extension's handle.
    Extension(ExtensionApi),
}

/// A session tool (FORMAT.md §7.2): a data tool with prompt metadata and the extra steps.
struct SessionTool {
    tool: DataTool,
    owner: Owner,
    host: Arc<Host>,
}

impl SessionTool {
    fn new(def: &Value, host: &Arc<Host>, owner: Owner) -> Self {
        let mut tool = DataTool::new(def.clone(), host.clone());
        let spec = tool.spec_mut();
        spec.prompt_snippet = def
            .get("promptSnippet")
            .and_then(Value::as_str)
            .map(str::to_owned);
        spec.prompt_guidelines = def
            .get("promptGuidelines")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        SessionTool {
            tool,
            owner,
            host: host.clone(),
        }
    }

    fn active_tools(&self) -> Result<Vec<String>, SessionError> {
        match &self.owner {
            Owner::Extension(api) => api.active_tool_names(),
            Owner::Custom(session) => Ok(lock(session)
                .as_ref()
                .map(AgentSession::active_tool_names)
                .unwrap_or_default()),
        }
    }

    fn set_active_tools(&self, names: Vec<String>) -> Result<(), SessionError> {
        match &self.owner {
            Owner::Extension(api) => api.set_active_tools(names).map(drop),
            Owner::Custom(session) => match lock(session).as_ref() {
                Some(s) => s.set_active_tools(names).map(drop),
                None => Err(SessionError::NotInitialized),
            },
        }
    }

    fn extra_step(
        &self,
        step: &Value,
        tool_call_id: &str,
        ctx: &ExtensionContext,
    ) -> Option<Result<(), ToolError>> {
        if let Some(change) = step.get("setActiveTools") {
            let names = |key: &str| -> Vec<String> {
                change
                    .get(key)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            };
            let outcome = self.active_tools().and_then(|current| {
                let next = if change.get("set").is_some() {
                    names("set")
                } else if change.get("add").is_some() {
                    current.into_iter().chain(names("add")).collect()
                } else {
                    let remove = names("remove");
                    current
                        .into_iter()
                        .filter(|n| !remove.contains(n))
                        .collect()
                };
                self.set_active_tools(next)
            });
            return Some(outcome.map_err(|e| ToolError::new(e.to_string())));
        }
        if let Some(def) = step.get("registerTool") {
            let Owner::Extension(api) = &self.owner else {
                return Some(Err(ToolError::new(
                    "registerTool is a step of extension tools only",
                )));
            };
            let tool = SessionTool::new(def, &self.host, self.owner.clone());
            let outcome = api.register_tool(Arc::new(tool) as Arc<dyn AgentTool>);
            return Some(outcome.map_err(|e| ToolError::new(e.to_string())));
        }
        if truthy(step.get("recordContext")) {
            self.host.recorder.harness(
                "context",
                json!({"toolCallId": tool_call_id, "hasUI": ctx.has_ui(), "mode": ctx.mode().as_str()}),
            );
            return Some(Ok(()));
        }
        None
    }
}

#[async_trait]
impl AgentTool for SessionTool {
    fn spec(&self) -> &ToolSpec {
        pi_tool::AgentTool::spec(&self.tool)
    }

    fn prepare_arguments<'a>(
        &self,
        arguments: &'a Value,
    ) -> Result<std::borrow::Cow<'a, Value>, ToolError> {
        pi_tool::AgentTool::prepare_arguments(&self.tool, arguments)
    }

    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        let tool_call_id = call.id;
        let params = call.params;
        let signal = call.signal;
        let on_update = call.on_update;
        let ctx = call.context.unwrap_or_else(ExtensionContext::detached);
        let id = tool_call_id.to_owned();
        let extra = move |step: &Value| self.extra_step(step, &id, &ctx);
        self.tool
            .run_steps(tool_call_id, params, signal, on_update, &extra)
            .await
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One `handlers` entry of an extension (FORMAT.md §7.3).
struct RuleHandler {
    extension: String,
    index: usize,
    rules: Vec<Value>,
    host: Arc<Host>,
}

impl RuleHandler {
    fn record(&self, event: &str, id: &str, name: &str, ctx: &ExtensionContext, extra: Value) {
        let mut fields = json!({
            "extension": self.extension,
            "handler": self.index,
            "event": event,
            "toolCallId": id,
            "toolName": name,
            "hasUI": ctx.has_ui(),
            "mode": ctx.mode().as_str(),
        });
        if let (Some(map), Value::Object(extra)) = (fields.as_object_mut(), extra) {
            map.extend(extra);
        }
        self.host.recorder.harness("handler", fields);
    }
}

#[async_trait]
impl ToolCallHandler for RuleHandler {
    async fn on_tool_call(
        &self,
        event: &mut ToolCallEvent,
        ctx: &ExtensionContext,
    ) -> Result<ToolCallDecision, ToolError> {
        let (id, name) = (event.tool_call_id.clone(), event.tool_name.clone());
        self.record("tool_call", &id, &name, ctx, json!({"input": event.input}));
        let Some(rule) = first_rule(&self.rules, &id, &name) else {
            return Ok(ToolCallDecision::Allow);
        };
        if let Some(ops) = rule.get("mutateInput").and_then(Value::as_array)
            && let Some(input) = event.input.as_object_mut()
        {
            apply_ops(input, ops).map_err(ToolError::new)?;
        }
        if let Some(message) = rule.get("throw") {
            return Err(ToolError::new(message.as_str().unwrap_or_default()));
        }
        let Some(ret) = rule.get("return") else {
            return Ok(ToolCallDecision::Allow);
        };
        Ok(ToolCallDecision::from_pi(
            truthy(ret.get("block")),
            ret.get("reason").and_then(Value::as_str).map(str::to_owned),
            ret.get("terminate") == Some(&Value::Bool(true)),
        ))
    }
}

#[async_trait]
impl ToolResultHandler for RuleHandler {
    async fn on_tool_result(
        &self,
        event: &ToolResultEvent,
        ctx: &ExtensionContext,
    ) -> Result<ToolResultPatch, ToolError> {
        let (id, name) = (&event.tool_call_id, &event.tool_name);
        let mut extra = Map::new();
        extra.insert("input".into(), event.input.clone());
        extra.insert(
            "content".into(),
            serde_json::to_value(&event.content).unwrap_or(Value::Null),
        );
        if let Some(details) = &event.details {
            extra.insert("details".into(), details.as_value().clone());
        }
        extra.insert("isError".into(), Value::Bool(event.is_error));
        if let Some(usage) = &event.usage {
            extra.insert("usage".into(), usage.clone());
        }
        self.record("tool_result", id, name, ctx, Value::Object(extra));
        let Some(rule) = first_rule(&self.rules, id, name) else {
            return Ok(ToolResultPatch::default());
        };
        if let Some(message) = rule.get("throw") {
            return Err(ToolError::new(message.as_str().unwrap_or_default()));
        }
        let Some(ret) = rule.get("return") else {
            return Ok(ToolResultPatch::default());
        };
        let content = rule_content(ret, "tool_result")?;
        Ok(ToolResultPatch {
            content,
            details: ret.get("details").cloned(),
            is_error: ret.get("isError").and_then(Value::as_bool),
            usage: ret.get("usage").cloned(),
        })
    }
}

/// The UI a `bindExtensions` with `uiContext: true` binds: every method is a no-op, but
/// a UI is bound (`hasUI` true).
struct NoopUi;

impl ExtensionUi for NoopUi {}

fn strings(v: Option<&Value>) -> Option<Vec<String>> {
    v.and_then(Value::as_array).map(|a| {
        a.iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    })
}

fn registry_snapshot(session: &AgentSession) -> Value {
    let all: Vec<Value> = session
        .all_tools()
        .iter()
        .map(|t| json!({"name": t.name(), "source": t.source.as_pi_str(), "path": t.source_path()}))
        .collect();
    json!({
        "activeTools": session.active_tool_names(),
        "allTools": all,
        "systemPrompt": prompt_view(&session.system_prompt()),
    })
}

fn extension(def: &Value, host: &Arc<Host>) -> impl pi_tool::session::Extension + use<> {
    let name = def
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let def = def.clone();
    let host = host.clone();
    FnExtension::new(name.clone(), move |api: &ExtensionApi| {
        for tool in def
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let tool = SessionTool::new(tool, &host, Owner::Extension(api.clone()));
            api.register_tool(Arc::new(tool) as Arc<dyn AgentTool>)?;
        }
        let handlers = def.get("handlers").and_then(Value::as_array);
        for (index, h) in handlers.into_iter().flatten().enumerate() {
            let handler = RuleHandler {
                extension: name.clone(),
                index,
                rules: h
                    .get("rules")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default(),
                host: host.clone(),
            };
            match h.get("event").and_then(Value::as_str) {
                Some("tool_call") => api.on_tool_call(handler)?,
                Some("tool_result") => api.on_tool_result(handler)?,
                other => {
                    return Err(SessionError::Extension {
                        owner: api.owner().clone(),
                        message: format!("unsupported handler event {other:?}"),
                    });
                }
            }
        }
        Ok(())
    })
}

/// Runs a `driver: "session"` scenario; returns the output value (FORMAT.md §7.6).
pub async fn run_session_layer(s: &Value) -> Value {
    let id = s.get("id").cloned().unwrap_or(Value::Null);
    let host = Arc::new(Host::default());
    let recorder = host.recorder.clone();
    let config = s.get("config").cloned().unwrap_or_else(|| json!({}));
    let cfg = s.get("session").cloned().unwrap_or_else(|| json!({}));
    let prompt = config
        .get("prompt")
        .and_then(Value::as_str)
        .unwrap_or("What's the weather?")
        .to_owned();
    let faux = crate::scenario::scripted_model(s, &recorder, prompt_view);

    let slot: Arc<Mutex<Option<AgentSession>>> = Arc::default();
    // Pi's runner works in a fresh empty directory (`<tmp>/pi-conformance-*/work`), which
    // is what a built-in such as `ls` would see; no output may name it.
    let root = std::env::temp_dir().join(format!(
        "pi-tool-conformance-{}-{}",
        std::process::id(),
        NEXT_ROOT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let cwd = root.join("work");
    if let Err(error) = std::fs::create_dir_all(&cwd) {
        return json!({"id": id, "error": format!("cannot create {}: {error}", cwd.display())});
    }
    let output = run_in(id, host, recorder, cfg, prompt, faux, slot, &cwd).await;
    let _ = std::fs::remove_dir_all(&root);
    output
}

/// Numbers the scenario directories of one process.
static NEXT_ROOT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

#[allow(clippy::too_many_arguments)]
async fn run_in(
    id: Value,
    host: Arc<Host>,
    recorder: crate::record::Recorder,
    cfg: Value,
    prompt: String,
    faux: FauxModel,
    slot: Arc<Mutex<Option<AgentSession>>>,
    cwd: &std::path::Path,
) -> Value {
    // Pi's session always has its built-in coding tools: the scenarios' registries list
    // them, and `noTools` / `tools` / `excludeTools` decide which exist and are active.
    let mut builder = AgentSession::builder(Arc::new(faux))
        .model(FauxModel::model())
        .cwd(cwd)
        .builtin_tools(
            pi_tool_coding::builtin_tools(),
            pi_tool_coding::CODING_TOOL_NAMES,
        );
    for ext in cfg
        .get("extensions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        builder = builder.extension(extension(ext, &host));
    }
    for tool in cfg
        .get("customTools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let tool = SessionTool::new(tool, &host, Owner::Custom(slot.clone()));
        builder = builder.custom_tool(Arc::new(tool) as Arc<dyn AgentTool>);
    }
    if let Some(tools) = strings(cfg.get("tools")) {
        builder = builder.tools(tools);
    }
    match cfg.get("noTools").and_then(Value::as_str) {
        Some("all") => builder = builder.no_tools(NoTools::All),
        Some("builtin") => builder = builder.no_tools(NoTools::Builtin),
        _ => {}
    }
    if let Some(exclude) = strings(cfg.get("excludeTools")) {
        builder = builder.exclude_tools(exclude);
    }
    if let Some(custom) = cfg.get("systemPrompt").and_then(Value::as_str) {
        builder = builder.system_prompt(custom);
    }
    for extra in strings(cfg.get("appendSystemPrompt")).unwrap_or_default() {
        builder = builder.append_system_prompt(extra);
    }
    let session = match builder.build() {
        Ok(session) => session,
        Err(error) => return json!({"id": id, "error": error.to_string()}),
    };
    *lock(&slot) = Some(session.clone());
    host.set_aborter(Aborter::Agent(session.agent().abort_handle()));
    let event_recorder = recorder.clone();
    session.subscribe(move |event| {
        if let SessionEvent::Agent(event) = event {
            event_recorder.event(event);
        }
    });

    let mut registry = Map::new();
    registry.insert("initial".into(), registry_snapshot(&session));
    if let Some(bind) = cfg.get("bindExtensions") {
        let mode = bind
            .get("mode")
            .and_then(Value::as_str)
            .and_then(|m| m.parse::<Mode>().ok())
            .unwrap_or_default();
        let ui = truthy(bind.get("uiContext")).then(|| Arc::new(NoopUi) as Arc<dyn ExtensionUi>);
        session.bind_ui(mode, ui);
        let error_recorder = recorder.clone();
        session.subscribe(move |event| {
            if let SessionEvent::ExtensionError(e) = event {
                error_recorder.harness(
                    "extension_error",
                    json!({"extensionPath": e.extension_path, "event": e.event, "error": e.error}),
                );
            }
        });
    }
    if let Some(names) = strings(cfg.get("setActiveTools")) {
        if let Err(error) = session.set_active_tools(names) {
            tracing::warn!("setActiveTools failed: {error}");
        }
        registry.insert("beforePrompt".into(), registry_snapshot(&session));
    }

    let mut final_ = Map::new();
    if let Err(error) = session.prompt(prompt).await {
        final_.insert("promptError".into(), Value::String(error.to_string()));
    }
    host.wait_late_timers().await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    registry.insert("afterRun".into(), registry_snapshot(&session));
    let transcript: Vec<Message> = session.agent().messages();
    if let Some(error) = session.agent().error_message() {
        final_.insert("errorMessage".into(), Value::String(error));
    }
    final_.insert(
        "messages".into(),
        Value::Array(transcript.iter().map(summarise_message).collect()),
    );
    let tool_results: Vec<Value> = transcript
        .iter()
        .filter(|m| matches!(m, Message::ToolResult(_)))
        .map(normalise_message)
        .collect();
    // Break the session <-> custom tool cycle.
    lock(&slot).take();
    session.dispose();
    json!({
        "id": id,
        "events": recorder.entries(),
        "toolResults": tool_results,
        "final": Value::Object(final_),
        "extensionErrors": [],
        "registry": Value::Object(registry),
    })
}
