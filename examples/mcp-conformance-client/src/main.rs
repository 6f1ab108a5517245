//! `mcp-conformance-client [OPTIONS...] URL`: the client the official MCP conformance
//! suite (`@modelcontextprotocol/conformance client --command ...`) runs once per
//! scenario. It is pi-tool-mcp's [`McpToolset`] and nothing else: it connects to the
//! scenario's server at `URL` (the suite appends it as the last argument), lists the
//! tools, and calls them through pi-tool-core's call path (`CallPolicy::call`), as an
//! agent would.
//!
//! The suite tells it what to do through the environment:
//! - `MCP_CONFORMANCE_SCENARIO`: the scenario's name (logged only: every scenario gets
//!   the same client, so what passes is what `McpToolset` does for any server);
//! - `MCP_CONFORMANCE_PROTOCOL_VERSION`: `2026-07-28` selects the stateless revision
//!   (`server/discover`, per-request `_meta`), a dated revision up to `2025-11-25` the
//!   `initialize` handshake; unset, the client negotiates ([`Revision::Auto`]);
//! - `MCP_CONFORMANCE_CONTEXT`: JSON; its `toolCalls` (`[{name, arguments}]`) are the
//!   calls to make. Without them every listed tool is called once, with a placeholder
//!   for each required argument (the scenario's server checks what arrives).
//!
//! A server that answers 401 gets OAuth 2.1 ([`OAuth`]): redirect URI
//! `http://localhost:3000/callback`, the suite's client ID metadata document URL, the
//! `client_id`/`client_secret` of the context when it gives them (pre-registration),
//! and a [`HeadlessAuthorizer`] (the suite's authorization server grants without a user).
//!
//! Elicitation requests are accepted with the defaults of the requested form (SEP-1034:
//! a client pre-fills a form with its defaults; a user accepting it unchanged sends
//! them). The exit status is 0 when the client connected and made its calls (a call
//! that ends in an error result still counts: that is the server's answer), 1 when it
//! could not connect or list.

use std::process::ExitCode;
use std::sync::Arc;

use pi_tool_core::{
    AbortController, AgentTool, CallPolicy, OnUpdate, ToolInvocation, Value, async_trait,
};
use pi_tool_mcp::client::{
    HeadlessAuthorizer, InputHandler, InputRequest, InputResponse, McpServer, McpToolset, OAuth,
    Revision,
};
use serde_json::Map;

#[tokio::main]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: mcp-conformance-client URL (the suite appends the server's URL)");
        return ExitCode::FAILURE;
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").ok();
    let context = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(context) => context,
            Err(error) => {
                eprintln!("MCP_CONFORMANCE_CONTEXT is not JSON: {error}");
                return ExitCode::FAILURE;
            }
        },
        Err(_) => Value::Null,
    };
    eprintln!(
        "scenario {scenario:?}, revision {}, server {url}",
        version.as_deref().unwrap_or("negotiated")
    );
    match run(&url, version.as_deref(), &context).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}

/// Where the suite's authorization server sends the user back (never fetched: the
/// headless authorizer reads the redirect).
const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// The client ID metadata document the suite's authorization server accepts.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The revision the suite asks for.
fn revision(version: Option<&str>) -> Revision {
    match version {
        None => Revision::Auto,
        // Dated revisions compare as strings; the stateless lifecycle starts at 2026-07-28.
        Some(version) if version >= "2026-07-28" => Revision::Stateless,
        Some(_) => Revision::Initialize,
    }
}

async fn run(url: &str, version: Option<&str>, context: &Value) -> Result<(), String> {
    let mut oauth = OAuth::new(REDIRECT_URI, Arc::new(HeadlessAuthorizer))
        .client_name("pi-tool conformance client")
        .client_metadata_url(CLIENT_METADATA_URL);
    if let Some(id) = context.get("client_id").and_then(Value::as_str) {
        let secret = context
            .get("client_secret")
            .and_then(Value::as_str)
            .map(str::to_owned);
        oauth = oauth.preregistered(id, secret);
    }
    let server = McpServer::http("conformance", url)
        .oauth(oauth)
        .revision(revision(version))
        // The scenario names tools by the server's names.
        .prefix("")
        .input_handler(Arc::new(FormDefaults));
    let toolset = McpToolset::connect(server)
        .await
        .map_err(|error| error.to_string())?;
    eprintln!("connected at {}", toolset.protocol_version());
    let tools = toolset.tools();
    let calls: Vec<(String, Value)> = match context.get("toolCalls").and_then(Value::as_array) {
        Some(calls) => calls
            .iter()
            .filter_map(|call| {
                let name = call.get("name")?.as_str()?.to_owned();
                let arguments = call
                    .get("arguments")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Map::new()));
                Some((name, arguments))
            })
            .collect(),
        None => tools
            .iter()
            .map(|tool| {
                let arguments = match tool.name() {
                    // `json-schema-2020-12-preservation`: hand back the focal tool's
                    // schema as the server listed it (kept as declared by McpToolset).
                    ECHO_TOOL => echo_arguments(&tools),
                    _ => placeholders(tool.spec().parameters.json()),
                };
                (tool.name().to_owned(), arguments)
            })
            .collect(),
    };
    let policy = CallPolicy::default();
    for (index, (name, arguments)) in calls.iter().enumerate() {
        let Some(tool) = tools.iter().find(|tool| tool.name() == name) else {
            eprintln!("{name}: not offered by the server");
            continue;
        };
        let id = format!("call-{index}");
        let abort = AbortController::new();
        let invocation = ToolInvocation::new(&id, arguments, abort.signal(), OnUpdate::none());
        match policy
            .call(tool.as_ref() as &dyn AgentTool, invocation)
            .await
        {
            Ok(result) => println!("{name}: {}", result.text_content()),
            Err(error) => println!("{name} failed: {error}"),
        }
    }
    toolset.close().await;
    Ok(())
}

/// The tool of the `json-schema-2020-12-preservation` scenario that echoes a schema.
const ECHO_TOOL: &str = "json_schema_echo";

/// The scenario's tool whose schema is echoed.
const FOCAL_TOOL: &str = "json_schema_2020_12_tool";

/// `{"schema": …}`: the focal tool's `inputSchema` as the server declared it.
fn echo_arguments(tools: &[Arc<dyn AgentTool>]) -> Value {
    let schema = tools
        .iter()
        .find(|tool| tool.name() == FOCAL_TOOL)
        .map(|tool| tool.spec().parameters.declared().clone())
        .unwrap_or_else(|| Value::Object(Map::new()));
    let mut arguments = Map::new();
    arguments.insert("schema".to_owned(), schema);
    Value::Object(arguments)
}

/// A value of each required property's type: what a model would fill in.
fn placeholders(schema: &Value) -> Value {
    let mut arguments = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array);
    if let (Some(properties), Some(required)) = (properties, required) {
        for name in required.iter().filter_map(Value::as_str) {
            let kind = properties
                .get(name)
                .and_then(|p| p.get("type"))
                .and_then(Value::as_str);
            let value = match kind {
                Some("number") => Value::from(1.5),
                Some("integer") => Value::from(1),
                Some("boolean") => Value::Bool(true),
                Some("array") => Value::Array(Vec::new()),
                Some("object") => Value::Object(Map::new()),
                Some("null") => Value::Null,
                _ => Value::String("test".to_owned()),
            };
            arguments.insert(name.to_owned(), value);
        }
    }
    Value::Object(arguments)
}

/// Accepts a form with its defaults, as a user who submits it unchanged does.
struct FormDefaults;

#[async_trait]
impl InputHandler for FormDefaults {
    async fn elicit(&self, request: InputRequest) -> InputResponse {
        let mut answer = Map::new();
        if let Some(properties) = request
            .schema
            .as_ref()
            .and_then(|schema| schema.get("properties"))
            .and_then(Value::as_object)
        {
            for (name, field) in properties {
                if let Some(default) = field.get("default") {
                    answer.insert(name.clone(), default.clone());
                }
            }
        }
        InputResponse::Accept(Value::Object(answer))
    }
}
