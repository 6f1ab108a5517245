//! Input a server asks for in the middle of a call (MCP's elicitation).
//!
//! Who answers, in this order: the host's [`InputHandler`]
//! ([`McpServer::input_handler`](super::McpServer::input_handler)); else the UI of the
//! session a running call of this server came with (the same `ctx.ui` a tool uses:
//! one question per field of the requested form); else nobody, and the request is
//! declined.

use std::sync::Arc;

use pi_tool_core::Value;
use pi_tool_core::async_trait;
use pi_tool_core::context::ExtensionContext;
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
use serde_json::Map;

/// What a server asked for.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct InputRequest {
    /// The server's name ([`McpServer::new`](super::McpServer)), so the user knows who asks.
    pub server: String,
    /// The server's question.
    pub message: String,
    /// The form to fill: a flat JSON Schema object of primitive fields (form mode).
    pub schema: Option<Value>,
    /// A page to send the user to (URL mode); no data comes back through the protocol.
    pub url: Option<String>,
}

/// The answer to an [`InputRequest`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum InputResponse {
    /// The user answered: the form's values (an object), or `Value::Null` for URL mode.
    Accept(Value),
    /// The user said no.
    Decline,
    /// The user dismissed the question.
    Cancel,
}

/// Answers a server's input requests for the host (a UI of its own, a policy, a test).
#[async_trait]
pub trait InputHandler: Send + Sync + 'static {
    /// Answers one request.
    async fn elicit(&self, request: InputRequest) -> InputResponse;
}

impl InputRequest {
    pub(crate) fn from_elicitation(server: &str, params: ElicitRequestParams) -> Self {
        match params {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => InputRequest {
                server: server.to_owned(),
                message,
                schema: serde_json::to_value(requested_schema).ok(),
                url: None,
            },
            ElicitRequestParams::UrlElicitationParams { message, url, .. } => InputRequest {
                server: server.to_owned(),
                message,
                schema: None,
                url: Some(url),
            },
            // A mode of a later revision: asked as a plain question, with no form.
            other => InputRequest {
                server: server.to_owned(),
                message: serde_json::to_value(&other)
                    .ok()
                    .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_owned))
                    .unwrap_or_default(),
                schema: None,
                url: None,
            },
        }
    }
}

impl InputResponse {
    pub(crate) fn into_elicit_result(self) -> ElicitResult {
        let (action, content) = match self {
            InputResponse::Accept(Value::Null) => (ElicitationAction::Accept, None),
            InputResponse::Accept(value) => (ElicitationAction::Accept, Some(value)),
            InputResponse::Decline => (ElicitationAction::Decline, None),
            InputResponse::Cancel => (ElicitationAction::Cancel, None),
        };
        match content {
            Some(content) => ElicitResult::new(action).with_content(content),
            None => ElicitResult::new(action),
        }
    }
}

/// The session's UI as an [`InputHandler`]: one question per field of the form.
pub(crate) struct UiInput(pub(crate) ExtensionContext);

#[async_trait]
impl InputHandler for UiInput {
    async fn elicit(&self, request: InputRequest) -> InputResponse {
        let ui = self.0.ui();
        let title = format!("{} asks: {}", request.server, request.message);
        if let Some(url) = &request.url {
            let go = ui
                .confirm(&title, &format!("Open {url} to answer the server?"))
                .await;
            return if go {
                InputResponse::Accept(Value::Null)
            } else {
                InputResponse::Decline
            };
        }
        let Some(Value::Object(schema)) = &request.schema else {
            return InputResponse::Decline;
        };
        let empty = Map::new();
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let mut answer = Map::new();
        for (name, field) in properties {
            let label = field
                .get("title")
                .or_else(|| field.get("description"))
                .and_then(Value::as_str)
                .unwrap_or(name);
            let question = format!("{title}\n{label}");
            let value = if let Some(options) = field.get("enum").and_then(Value::as_array) {
                let options: Vec<String> = options
                    .iter()
                    .filter_map(|o| o.as_str().map(str::to_owned))
                    .collect();
                ui.select(&question, &options).await.map(Value::String)
            } else {
                match field.get("type").and_then(Value::as_str) {
                    Some("boolean") => Some(Value::Bool(ui.confirm(&question, label).await)),
                    Some(kind @ ("number" | "integer")) => {
                        let Some(text) = ui.input(&question, None).await else {
                            return InputResponse::Cancel;
                        };
                        let parsed = if kind == "integer" {
                            text.trim().parse::<i64>().ok().map(Value::from)
                        } else {
                            text.trim().parse::<f64>().ok().map(Value::from)
                        };
                        match parsed {
                            Some(value) => Some(value),
                            None => return InputResponse::Decline,
                        }
                    }
                    _ => ui.input(&question, None).await.map(Value::String),
                }
            };
            match value {
                Some(value) => {
                    answer.insert(name.clone(), value);
                }
                None => return InputResponse::Cancel,
            }
        }
        InputResponse::Accept(Value::Object(answer))
    }
}

/// Who answers for a connection: the host's handler, else the UI of a running call.
pub(crate) fn pick(
    host: Option<&Arc<dyn InputHandler>>,
    call_context: Option<ExtensionContext>,
) -> Option<Arc<dyn InputHandler>> {
    host.cloned().or_else(|| {
        call_context
            .filter(ExtensionContext::has_ui)
            .map(|ctx| Arc::new(UiInput(ctx)) as Arc<dyn InputHandler>)
    })
}
