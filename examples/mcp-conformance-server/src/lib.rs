//! The fixture server of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`), written the way a pi-tool user writes a server:
//! every tool the suite calls is a `#[pi_tool]` function, and the resources, templates,
//! prompts and completions are pi-tool-mcp's [`ResourcePack`], [`PromptPack`] and
//! [`Completions`].
//!
//! Names and answers are the ones the suite's scenarios check
//! (`src/scenarios/server/*.ts` in the suite's repository, and its reference server
//! `examples/servers/typescript/everything-server.ts`).

// Sampling, roots and logging are deprecated by SEP-2577 (MCP 2026-07-28), which still
// has them; the suite calls them at both revisions.
#![allow(deprecated)]

use std::time::Duration;

use pi_tool::pack::ToolPack;
use pi_tool::{
    AbortSignal, AgentToolResult, Content, NoDetails, OnUpdate, ToolError, pi_tool, tool_pack,
};
use pi_tool_mcp::rmcp::model::{
    ContentBlock, Prompt, PromptArgument, PromptMessage, Resource, ResourceContents,
    ResourceTemplate, Role,
};
use pi_tool_mcp::rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    InputRequests, LoggingLevel,
};
use pi_tool_mcp::{CallingClient, Completions, PackServer, PromptError, PromptPack, ResourcePack};
use serde_json::json;

/// A 1×1 red PNG, the suite's test image.
pub const TEST_IMAGE_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// A minimal WAV file, the suite's test audio.
pub const TEST_AUDIO_BASE64: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// Tests simple text content response.
#[pi_tool(read_only)]
pub async fn test_simple_text() -> Result<String, ToolError> {
    Ok("This is a simple text response for testing.".to_owned())
}

/// Tests image content response.
#[pi_tool(read_only)]
pub async fn test_image_content() -> Result<AgentToolResult<NoDetails>, ToolError> {
    Ok(AgentToolResult::new(
        vec![Content::image(TEST_IMAGE_BASE64, "image/png")],
        NoDetails,
    ))
}

/// Tests audio content response.
#[pi_tool(read_only)]
pub async fn test_audio_content() -> Result<AgentToolResult<NoDetails>, ToolError> {
    Ok(AgentToolResult::new(
        vec![Content::audio(TEST_AUDIO_BASE64, "audio/wav")],
        NoDetails,
    ))
}

/// Tests embedded resource content response.
#[pi_tool(read_only)]
pub async fn test_embedded_resource() -> Result<AgentToolResult<NoDetails>, ToolError> {
    Ok(AgentToolResult::new(
        vec![Content::resource_text(
            "test://embedded-resource",
            Some("text/plain".to_owned()),
            "This is an embedded resource content.",
        )],
        NoDetails,
    ))
}

/// Tests response with multiple content types (text, image, resource).
#[pi_tool(read_only)]
pub async fn test_multiple_content_types() -> Result<AgentToolResult<NoDetails>, ToolError> {
    Ok(AgentToolResult::new(
        vec![
            Content::text("Multiple content types test:"),
            Content::image(TEST_IMAGE_BASE64, "image/png"),
            Content::resource_text(
                "test://mixed-content-resource",
                Some("application/json".to_owned()),
                serde_json::json!({"test": "data", "value": 123}).to_string(),
            ),
        ],
        NoDetails,
    ))
}

/// Tests tool that reports progress notifications: three updates (steps 0, 50 and 100
/// of 100), 50 ms apart, before the result.
#[pi_tool(read_only)]
pub async fn test_tool_with_progress(
    signal: AbortSignal,
    on_update: OnUpdate<NoDetails>,
) -> Result<String, ToolError> {
    for step in [0, 50, 100] {
        if step > 0 {
            signal.sleep(Duration::from_millis(50)).await?;
        }
        on_update.send(AgentToolResult::text(
            format!("Completed step {step} of 100"),
            NoDetails,
        ));
    }
    Ok("Progress test completed".to_owned())
}

/// Tests error response handling.
#[pi_tool(read_only)]
pub async fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::new(
        "This tool intentionally returns an error for testing",
    ))
}

/// The client of the call, which every asking tool below needs.
fn client() -> Result<CallingClient, ToolError> {
    CallingClient::current().ok_or_else(|| ToolError::new("not called over MCP"))
}

/// A form elicitation from its JSON (`message`, `requestedSchema`).
fn form(message: &str, schema: serde_json::Value) -> Result<ElicitRequestParams, ToolError> {
    serde_json::from_value(json!({"mode": "form", "message": message, "requestedSchema": schema}))
        .map_err(|error| ToolError::new(format!("bad elicitation: {error}")))
}

/// A one-message sampling request.
fn sampling(text: &str, max_tokens: u32) -> Result<CreateMessageRequestParams, ToolError> {
    serde_json::from_value(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": max_tokens,
    }))
    .map_err(|error| ToolError::new(format!("bad sampling request: {error}")))
}

/// An elicitation of one string field.
fn ask_string(message: &str, field: &str) -> Result<ElicitRequestParams, ToolError> {
    form(
        message,
        json!({"type": "object", "properties": {field: {"type": "string"}}, "required": [field]}),
    )
}

/// The text a model wrote, from a sampling answer.
fn sampled_text(answer: &CreateMessageResult) -> String {
    // One content block or several: the text of the first that has one.
    let content = serde_json::to_value(&answer.message.content).unwrap_or_default();
    let blocks = match content {
        serde_json::Value::Array(blocks) => blocks,
        block => vec![block],
    };
    blocks
        .iter()
        .find_map(|block| block.get("text").and_then(|text| text.as_str()))
        .unwrap_or_default()
        .to_owned()
}

/// The accepted content of an elicitation, as JSON.
fn elicited(answer: &ElicitResult) -> String {
    format!(
        "action={}, content={}",
        serde_json::to_value(&answer.action).unwrap_or_default(),
        serde_json::to_value(&answer.content).unwrap_or_default()
    )
}

/// What `test_sampling` sends the client's model.
#[pi_tool::params]
pub struct SamplingParams {
    /// The prompt to send to the LLM.
    pub prompt: String,
}

/// Tests server-initiated sampling (LLM completion request).
#[pi_tool(read_only)]
pub async fn test_sampling(params: SamplingParams) -> Result<String, ToolError> {
    let answer = client()?
        .create_message("sampling", sampling(&params.prompt, 100)?)
        .await?;
    Ok(format!("LLM response: {}", sampled_text(&answer)))
}

/// What `test_elicitation` shows the user.
#[pi_tool::params]
pub struct ElicitationParams {
    /// The message to show the user.
    pub message: String,
}

/// Tests server-initiated elicitation (user input request).
#[pi_tool(read_only)]
pub async fn test_elicitation(params: ElicitationParams) -> Result<String, ToolError> {
    let request = form(
        &params.message,
        json!({
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        }),
    )?;
    let answer = client()?.elicit("elicitation", request).await?;
    Ok(format!("User response: {}", elicited(&answer)))
}

/// Tests elicitation with default values for every primitive type (SEP-1034).
#[pi_tool(read_only)]
pub async fn test_elicitation_sep1034_defaults() -> Result<String, ToolError> {
    let request = form(
        "Please review and update the form fields with defaults",
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {
                    "type": "string",
                    "description": "User status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {"type": "boolean", "description": "Verification status", "default": true},
            },
            "required": [],
        }),
    )?;
    let answer = client()?.elicit("defaults", request).await?;
    Ok(format!("Elicitation completed: {}", elicited(&answer)))
}

/// Tests elicitation with the five kinds of enum schema (SEP-1330).
#[pi_tool(read_only)]
pub async fn test_elicitation_sep1330_enums() -> Result<String, ToolError> {
    let request = form(
        "Please select options from the enum fields",
        json!({
            "type": "object",
            "properties": {
                "untitledSingle": {
                    "type": "string",
                    "description": "Select one option",
                    "enum": ["option1", "option2", "option3"],
                },
                "titledSingle": {
                    "type": "string",
                    "description": "Select one option with titles",
                    "oneOf": [
                        {"const": "value1", "title": "First Option"},
                        {"const": "value2", "title": "Second Option"},
                        {"const": "value3", "title": "Third Option"},
                    ],
                },
                "legacyEnum": {
                    "type": "string",
                    "description": "Select one option (legacy)",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array",
                    "description": "Select multiple options",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                },
                "titledMulti": {
                    "type": "array",
                    "description": "Select multiple options with titles",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"},
                    ]},
                },
            },
            "required": [],
        }),
    )?;
    let answer = client()?.elicit("enums", request).await?;
    Ok(format!("Elicitation completed: {}", elicited(&answer)))
}

/// Tests an input-required result with one elicitation (SEP-2322).
#[pi_tool(read_only)]
pub async fn test_input_required_result_elicitation() -> Result<String, ToolError> {
    let answer = client()?
        .elicit("user_name", ask_string("What is your name?", "name")?)
        .await?;
    let name = answer
        .content
        .as_ref()
        .and_then(|content| content.get("name"))
        .and_then(|name| name.as_str())
        .unwrap_or("stranger");
    Ok(format!("Hello, {name}!"))
}

/// Tests an input-required result with one sampling request (SEP-2322).
#[pi_tool(read_only)]
pub async fn test_input_required_result_sampling() -> Result<String, ToolError> {
    let answer = client()?
        .create_message(
            "capital_question",
            sampling("What is the capital of France?", 100)?,
        )
        .await?;
    Ok(format!("The model said: {}", sampled_text(&answer)))
}

/// Tests an input-required result with a roots request (SEP-2322).
#[pi_tool(read_only)]
pub async fn test_input_required_result_list_roots() -> Result<String, ToolError> {
    let roots = client()?.list_roots("client_roots").await?;
    let uris: Vec<&str> = roots.roots.iter().map(|root| root.uri.as_str()).collect();
    Ok(format!("Client roots: {}", uris.join(", ")))
}

/// Tests the round trip of `requestState` (SEP-2322): the server checks the state
/// before the tool runs again, so an answer read here came with a valid state.
#[pi_tool(read_only)]
pub async fn test_input_required_result_request_state() -> Result<String, ToolError> {
    let request = form(
        "Please confirm",
        json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}),
    )?;
    let answer = client()?.elicit("confirm", request).await?;
    Ok(format!("state-ok: {}", elicited(&answer)))
}

/// Tests several input requests of different kinds in one result (SEP-2322).
#[pi_tool(read_only)]
pub async fn test_input_required_result_multiple_inputs() -> Result<String, ToolError> {
    let requests = [
        (
            "user_name",
            json!({"method": "elicitation/create", "params": {
                "mode": "form",
                "message": "What is your name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
            }}),
        ),
        (
            "greeting",
            json!({"method": "sampling/createMessage", "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": "Generate a greeting"}}],
                "maxTokens": 50,
            }}),
        ),
        ("client_roots", json!({"method": "roots/list"})),
    ];
    let mut asked = InputRequests::new();
    for (key, request) in requests {
        let request = serde_json::from_value(request)
            .map_err(|error| ToolError::new(format!("bad input request: {error}")))?;
        asked.insert(key.to_owned(), request);
    }
    let answers = client()?.ask(asked).await?;
    Ok(format!(
        "All inputs received: {}",
        answers.keys().cloned().collect::<Vec<_>>().join(", ")
    ))
}

/// Tests three rounds, each with new `requestState` (SEP-2322).
#[pi_tool(read_only)]
pub async fn test_input_required_result_multi_round() -> Result<String, ToolError> {
    let client = client()?;
    let name = client
        .elicit("step1", ask_string("Step 1: What is your name?", "name")?)
        .await?;
    let color = client
        .elicit(
            "step2",
            ask_string("Step 2: What is your favorite color?", "color")?,
        )
        .await?;
    Ok(format!(
        "Completed: {} / {}",
        elicited(&name),
        elicited(&color)
    ))
}

/// Tests that a tampered `requestState` is refused (SEP-2322): the server refuses it
/// with -32602 before this tool runs again.
#[pi_tool(read_only)]
pub async fn test_input_required_result_tampered_state() -> Result<String, ToolError> {
    let request = form(
        "Please confirm",
        json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}),
    )?;
    let answer = client()?.elicit("confirm", request).await?;
    Ok(format!("Confirmed: {}", elicited(&answer)))
}

/// Tests that input requests follow the client's capabilities (SEP-2322): asks the
/// user when the client can elicit, its model otherwise.
#[pi_tool(read_only)]
pub async fn test_input_required_result_capabilities() -> Result<String, ToolError> {
    let client = client()?;
    if client.can_elicit() {
        let answer = client
            .elicit("user_name", ask_string("What is your name?", "name")?)
            .await?;
        return Ok(format!("Elicited: {}", elicited(&answer)));
    }
    let answer = client
        .create_message("greeting", sampling("Generate a greeting", 50)?)
        .await?;
    Ok(format!("Sampled: {}", sampled_text(&answer)))
}

/// Needs the client's `sampling` capability: called without it, the request is
/// refused with -32021 (MCP 2026-07-28, SEP-2575).
#[pi_tool(read_only)]
pub async fn test_missing_capability() -> Result<String, ToolError> {
    let answer = client()?
        .create_message("sampling", sampling("Say hello", 20)?)
        .await?;
    Ok(format!("LLM response: {}", sampled_text(&answer)))
}

/// Tests log messages sent while a tool runs: three at `info`, 50 ms apart.
#[pi_tool(read_only)]
pub async fn test_tool_with_logging(signal: AbortSignal) -> Result<String, ToolError> {
    let client = client()?;
    for (i, text) in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            signal.sleep(Duration::from_millis(50)).await?;
        }
        client
            .log(
                LoggingLevel::Info,
                Some("test_tool_with_logging"),
                json!(text),
            )
            .await;
    }
    Ok("Tool with logging executed successfully".to_owned())
}

/// Logs one message at `info` (MCP 2026-07-28's check that nothing is logged to a
/// request that did not ask for a log level).
#[pi_tool(read_only)]
pub async fn test_logging_tool() -> Result<String, ToolError> {
    client()?
        .log(
            LoggingLevel::Info,
            Some("test_logging_tool"),
            json!("Logging tool ran"),
        )
        .await;
    Ok("Logged".to_owned())
}

/// Asks the user through elicitation (MCP 2026-07-28's check that a call's response
/// stream never carries a request: it answers with an input-required result instead).
#[pi_tool(read_only)]
pub async fn test_streaming_elicitation() -> Result<String, ToolError> {
    let answer = client()?
        .elicit("streaming", ask_string("What is your name?", "name")?)
        .await?;
    Ok(format!("Elicited: {}", elicited(&answer)))
}

/// Whom `greet` greets.
#[pi_tool::params]
pub struct CustomHeaderParams {
    /// The region to route the call to; clients mirror it into the `Mcp-Param-Region`
    /// HTTP header (MCP 2026-07-28, SEP-2243), which the server checks against it.
    #[schemars(extend("x-mcp-header" = "Region"))]
    pub region: String,
}

/// Tests `x-mcp-header` parameters: echoes the region the call was routed by.
#[pi_tool(read_only)]
pub async fn test_custom_headers(params: CustomHeaderParams) -> Result<String, ToolError> {
    Ok(format!("Region: {}", params.region))
}

#[pi_tool::params]
pub struct GreetParams {
    /// The name to greet.
    pub name: String,
}

/// Greets someone (a plain tool, never a task).
#[pi_tool(read_only)]
pub async fn greet(params: GreetParams) -> Result<String, ToolError> {
    Ok(format!("Hello, {}!", params.name))
}

/// How long `slow_compute` works.
#[pi_tool::params]
pub struct SlowComputeParams {
    /// Seconds to work (0 answers at once).
    pub seconds: f64,
    /// A label the result repeats.
    #[serde(default)]
    pub label: Option<String>,
}

/// Works `seconds` seconds, then answers (a task for clients that declared tasks);
/// `tasks/cancel` ends it through its abort signal.
#[pi_tool(read_only, task_support = "optional")]
pub async fn slow_compute(
    params: SlowComputeParams,
    signal: AbortSignal,
    on_update: OnUpdate<NoDetails>,
) -> Result<String, ToolError> {
    let seconds = params.seconds.clamp(0.0, 3_600.0);
    if seconds > 0.0 {
        on_update.send(AgentToolResult::text("Computing", NoDetails));
        signal.sleep(Duration::from_secs_f64(seconds)).await?;
    } else {
        // Yields once, so that even the immediate path runs as a task.
        tokio::task::yield_now().await;
    }
    Ok(format!(
        "Computed {} after {seconds} s",
        params.label.unwrap_or_default()
    ))
}

/// Fails with a tool error after about a second (a task only).
#[pi_tool(read_only, task_support = "required")]
pub async fn failing_job(signal: AbortSignal) -> Result<String, ToolError> {
    signal.sleep(Duration::from_secs(1)).await?;
    Err(ToolError::new("failing_job failed, as it always does"))
}

/// Panics, which a task reports as a protocol error (`failed`).
#[pi_tool(read_only, task_support = "required")]
pub async fn protocol_error_job(signal: AbortSignal) -> Result<String, ToolError> {
    signal.sleep(Duration::from_millis(100)).await?;
    panic!("protocol_error_job panics, as it always does")
}

/// Asks for a confirmation while running as a task, then deletes nothing.
#[pi_tool(destructive, task_support = "optional")]
pub async fn confirm_delete(signal: AbortSignal) -> Result<String, ToolError> {
    // Waits first, so the call is a task when it asks.
    signal.sleep(Duration::from_millis(10)).await?;
    let request = form(
        "Delete the file?",
        json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}),
    )?;
    let answer = client()?.elicit("confirm_delete", request).await?;
    Ok(format!("Deletion answered: {}", elicited(&answer)))
}

/// Asks two questions at once while running as a task.
#[pi_tool(read_only, task_support = "optional")]
pub async fn multi_input(signal: AbortSignal) -> Result<String, ToolError> {
    signal.sleep(Duration::from_millis(10)).await?;
    let mut asked = InputRequests::new();
    for (key, field) in [("first_name", "first"), ("last_name", "last")] {
        let request = json!({"method": "elicitation/create", "params": {
            "mode": "form",
            "message": format!("Your {field} name?"),
            "requestedSchema": {"type": "object", "properties": {field: {"type": "string"}}, "required": [field]},
        }});
        let request = serde_json::from_value(request)
            .map_err(|error| ToolError::new(format!("bad input request: {error}")))?;
        asked.insert(key.to_owned(), request);
    }
    let answers = client()?.ask(asked).await?;
    Ok(format!("Answers: {}", json!(answers)))
}

/// Asks the user's name first (an input-required round), then goes on as a task whose
/// result greets them.
#[pi_tool(read_only, task_support = "required")]
pub async fn test_tool_with_task(signal: AbortSignal) -> Result<String, ToolError> {
    let answer = client()?
        .elicit("user_name", ask_string("What is your name?", "name")?)
        .await?;
    signal.sleep(Duration::from_millis(200)).await?;
    let name = answer
        .content
        .as_ref()
        .and_then(|content| content.get("name"))
        .and_then(|name| name.as_str())
        .unwrap_or("stranger");
    Ok(format!("Hello, {name}! (from a task)"))
}

// The parameters of `json_schema_2020_12_tool`: derives whose schemars output is the
// suite's JSON Schema 2020-12 fixture as written (`$schema`, `$defs` with an `$anchor`,
// a local `$ref`, `allOf`/`anyOf`, `if`/`then`/`else`, `additionalProperties: false`).
// No doc comments, as the fixture has no descriptions; every field is optional, and
// `with`/`skip_serializing_if` keep each one's schema the plain one the suite lists
// (no `null`, no `default`). pi-tool generates without `$schema` (normalisation drops it
// anyway), so the fixture declares it; schemars adds a root `title`, which the suite
// does not mind.
#[pi_tool::params]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(
    extend(
        "$schema" = "https://json-schema.org/draft/2020-12/schema",
        "allOf" = [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if" = {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then" = {"required": ["phone"]},
        "else" = {"required": ["email"]},
    )
)]
pub struct JsonSchema202012Params {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Address")]
    pub address: Option<Address>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", extend("enum" = ["phone", "email"]))]
    pub contact_method: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub phone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub email: Option<String>,
}

// The `address` definition of the fixture, with its `$anchor`.
#[pi_tool::params]
#[schemars(rename = "address", transform = without_title, extend("$anchor" = "addressDef"))]
pub struct Address {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub street: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub city: Option<String>,
}

/// schemars titles a definition with its name; the suite's `address` has none.
fn without_title(schema: &mut pi_tool::schemars::Schema) {
    schema.remove("title");
}

/// Tool with JSON Schema 2020-12 features
#[pi_tool(read_only, description = "Tool with JSON Schema 2020-12 features")]
pub async fn json_schema_2020_12_tool(params: JsonSchema202012Params) -> Result<String, ToolError> {
    let _ = params;
    Ok("ok".to_owned())
}

/// The tools the suite calls.
pub fn tools() -> ToolPack {
    tool_pack![
        TestSimpleText,
        TestImageContent,
        TestAudioContent,
        TestEmbeddedResource,
        TestMultipleContentTypes,
        TestToolWithProgress,
        TestErrorHandling,
        TestSampling,
        TestElicitation,
        TestElicitationSep1034Defaults,
        TestElicitationSep1330Enums,
        TestInputRequiredResultElicitation,
        TestInputRequiredResultSampling,
        TestInputRequiredResultListRoots,
        TestInputRequiredResultRequestState,
        TestInputRequiredResultMultipleInputs,
        TestInputRequiredResultMultiRound,
        TestInputRequiredResultTamperedState,
        TestInputRequiredResultCapabilities,
        TestMissingCapability,
        TestToolWithLogging,
        TestLoggingTool,
        TestStreamingElicitation,
        TestCustomHeaders,
        Greet,
        SlowCompute,
        FailingJob,
        ProtocolErrorJob,
        ConfirmDelete,
        MultiInput,
        TestToolWithTask,
        JsonSchema202012Tool,
    ]
}

/// The resources and the resource template the suite reads.
pub fn resources() -> ResourcePack {
    ResourcePack::new()
        .resource(
            Resource::new("test://static-text", "static-text")
                .with_title("Static Text Resource")
                .with_description("A static text resource for testing")
                .with_mime_type("text/plain"),
            || async {
                Ok(vec![ResourceContents::text(
                    "This is the content of the static text resource.",
                    "test://static-text",
                )])
            },
        )
        .resource(
            Resource::new("test://static-binary", "static-binary")
                .with_title("Static Binary Resource")
                .with_description("A static binary resource (image) for testing")
                .with_mime_type("image/png"),
            || async {
                Ok(vec![
                    ResourceContents::blob(TEST_IMAGE_BASE64, "test://static-binary")
                        .with_mime_type("image/png"),
                ])
            },
        )
        .resource(
            Resource::new("test://watched-resource", "watched-resource")
                .with_title("Watched Resource")
                .with_description("A resource clients subscribe to")
                .with_mime_type("text/plain"),
            || async {
                Ok(vec![ResourceContents::text(
                    "This resource is watched for changes.",
                    "test://watched-resource",
                )])
            },
        )
        .template(
            ResourceTemplate::new("test://template/{id}/data", "template")
                .with_title("Resource Template")
                .with_description("A resource template with parameter substitution")
                .with_mime_type("application/json"),
            |uri, vars| async move {
                let id = vars.get("id").cloned().unwrap_or_default();
                let data = serde_json::json!({
                    "id": id,
                    "templateTest": true,
                    "data": format!("Data for ID: {id}"),
                });
                Ok(vec![
                    ResourceContents::text(data.to_string(), uri)
                        .with_mime_type("application/json"),
                ])
            },
        )
}

/// The prompts the suite gets.
pub fn prompts() -> PromptPack {
    let argument = |name: &str, description: &str| {
        PromptArgument::new(name)
            .with_description(description)
            .with_required(true)
    };
    PromptPack::new()
        .prompt(
            Prompt::new(
                "test_simple_prompt",
                Some("A simple prompt without arguments"),
                None,
            )
            .with_title("Simple Test Prompt"),
            |_| async {
                Ok(vec![PromptMessage::new_text(
                    Role::User,
                    "This is a simple prompt for testing.",
                )])
            },
        )
        .prompt(
            Prompt::new(
                "test_prompt_with_arguments",
                Some("A prompt with required arguments"),
                Some(vec![
                    argument("arg1", "First test argument"),
                    argument("arg2", "Second test argument"),
                ]),
            )
            .with_title("Prompt With Arguments"),
            |args| async move {
                let arg = |name: &str| args.get(name).cloned().unwrap_or_default();
                Ok(vec![PromptMessage::new_text(
                    Role::User,
                    format!(
                        "Prompt with arguments: arg1='{}', arg2='{}'",
                        arg("arg1"),
                        arg("arg2")
                    ),
                )])
            },
        )
        .prompt(
            Prompt::new(
                "test_prompt_with_embedded_resource",
                Some("A prompt that includes an embedded resource"),
                Some(vec![argument(
                    "resourceUri",
                    "URI of the resource to embed",
                )]),
            )
            .with_title("Prompt With Embedded Resource"),
            |args| async move {
                let uri = args.get("resourceUri").cloned().unwrap_or_default();
                Ok(vec![
                    PromptMessage::new_resource(
                        Role::User,
                        uri,
                        Some("text/plain".to_owned()),
                        Some("Embedded resource content for testing.".to_owned()),
                        None,
                        None,
                        None,
                    ),
                    PromptMessage::new_text(
                        Role::User,
                        "Please process the embedded resource above.",
                    ),
                ])
            },
        )
        .prompt(
            Prompt::new(
                "test_input_required_result_prompt",
                Some("A prompt that asks the user for its context first (SEP-2322)"),
                None,
            )
            .with_title("Prompt With Input Required"),
            |_| async {
                let client = CallingClient::current()
                    .ok_or_else(|| PromptError::Failed("not served over MCP".to_owned()))?;
                let request = ask_string("What context should the prompt use?", "context")
                    .map_err(|error| PromptError::Failed(error.message().to_owned()))?;
                let answer = client
                    .elicit("user_context", request)
                    .await
                    .map_err(|error| PromptError::Failed(error.to_string()))?;
                let context = answer
                    .content
                    .as_ref()
                    .and_then(|content| content.get("context"))
                    .and_then(|context| context.as_str())
                    .unwrap_or_default()
                    .to_owned();
                Ok(vec![PromptMessage::new_text(
                    Role::User,
                    format!("Use this context: {context}"),
                )])
            },
        )
        .prompt(
            Prompt::new(
                "test_prompt_with_image",
                Some("A prompt that includes image content"),
                None,
            )
            .with_title("Prompt With Image"),
            |_| async {
                Ok(vec![
                    PromptMessage::new(
                        Role::User,
                        ContentBlock::image(TEST_IMAGE_BASE64, "image/png"),
                    ),
                    PromptMessage::new_text(Role::User, "Please analyze the image above."),
                ])
            },
        )
}

/// The fixture server: [`tools`], [`resources`], [`prompts`], and completions (none to
/// offer: the suite checks the answer's shape).
///
/// `slow_compute`, `confirm_delete` and `multi_input` may run as tasks, `failing_job`,
/// `protocol_error_job` and `test_tool_with_task` must: each declares it
/// (`#[pi_tool(task_support = "...")]`), which the server reads.
pub fn server() -> PackServer {
    let server = PackServer::new(tools());
    server
        // The suite's `json-schema-2020-12` scenario reads `$defs`, `allOf`, `if` ... of
        // `json_schema_2020_12_tool` as written.
        .list_declared_schemas()
        .with_server_info("mcp-conformance-server", env!("CARGO_PKG_VERSION"))
        .with_resources(resources())
        .with_prompts(prompts())
        .with_completions(Completions::none())
}
