//! The calling client as a tool's UI: the context a [`PackServer`](crate::PackServer)
//! gives each call, whose `confirm`/`select`/`input` become elicitations.

use std::sync::Arc;

use pi_tool_core::async_trait;
use pi_tool_core::context::{ExtensionContext, ExtensionUi, NotifyLevel};
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use serde_json::{Value, json};

use super::CallingClient;

/// The context of a call over MCP: [`ExtensionContext::detached`]'s, with the calling
/// client as its UI when the client declared `elicitation`.
pub(crate) fn mcp_context() -> ExtensionContext {
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let builder = ExtensionContext::builder(cwd);
    match CallingClient::current() {
        Some(client) if client.can_elicit() => builder.ui(Arc::new(ClientUi(client))).build(),
        _ => builder.build(),
    }
}

/// The calling client as a tool's UI, through `elicitation/create`.
struct ClientUi(CallingClient);

impl ClientUi {
    /// Asks for one field; its value when the user accepted.
    async fn ask(&self, message: String, field: &str, schema: Value) -> Option<Value> {
        let schema = json!({
            "type": "object",
            "properties": { field: schema },
            "required": [field],
        });
        let requested_schema = serde_json::from_value::<ElicitationSchema>(schema).ok()?;
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema,
        };
        let key = self.0.next_ui_key();
        let result = self.0.elicit(&key, params).await.ok()?;
        match result.action {
            ElicitationAction::Accept => result.content?.get(field).cloned(),
            _ => None,
        }
    }
}

fn message(title: &str, detail: &str) -> String {
    if detail.is_empty() {
        title.to_owned()
    } else {
        format!("{title}\n\n{detail}")
    }
}

#[async_trait]
impl ExtensionUi for ClientUi {
    async fn confirm(&self, title: &str, message_text: &str) -> bool {
        let answer = self
            .ask(
                message(title, message_text),
                "confirm",
                json!({"type": "boolean", "title": title}),
            )
            .await;
        answer.and_then(|value| value.as_bool()).unwrap_or(false)
    }

    async fn select(&self, title: &str, options: &[String]) -> Option<String> {
        let answer = self
            .ask(
                title.to_owned(),
                "selection",
                json!({"type": "string", "title": title, "enum": options}),
            )
            .await?;
        answer
            .as_str()
            .filter(|chosen| options.iter().any(|option| option == chosen))
            .map(str::to_owned)
    }

    async fn input(&self, title: &str, placeholder: Option<&str>) -> Option<String> {
        let mut schema = json!({"type": "string", "title": title});
        if let Some(placeholder) = placeholder {
            schema["description"] = Value::from(placeholder);
        }
        let answer = self.ask(title.to_owned(), "value", schema).await?;
        answer.as_str().map(str::to_owned)
    }

    fn notify(&self, message: &str, level: NotifyLevel) {
        let _ = (message, level);
    }
}
