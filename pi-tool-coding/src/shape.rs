//! The JSON-level shape of Pi's results around the typed tools: `details: undefined` (a
//! typed `None`) is no `details` key, not `null`; and `edit`'s `prepareArguments`.

use std::borrow::Cow;
use std::sync::Arc;

use pi_tool_core::{
    AgentTool, JsonToolResult, OnUpdate, ToolError, ToolInvocation, ToolSpec, Value, async_trait,
};

struct PiShaped {
    inner: Arc<dyn AgentTool>,
    prepare_edit: bool,
}

pub(crate) fn pi_shaped(inner: Arc<dyn AgentTool>, prepare_edit: bool) -> Arc<dyn AgentTool> {
    Arc::new(PiShaped {
        inner,
        prepare_edit,
    })
}

fn undefined_details(mut result: JsonToolResult) -> JsonToolResult {
    if result
        .details
        .as_ref()
        .is_some_and(|d| d.as_value().is_null())
    {
        result.details = None;
    }
    result
}

#[async_trait]
impl AgentTool for PiShaped {
    fn spec(&self) -> &ToolSpec {
        self.inner.spec()
    }

    fn prepare_arguments<'a>(&self, arguments: &'a Value) -> Result<Cow<'a, Value>, ToolError> {
        if self.prepare_edit {
            return Ok(crate::edit::prepare_arguments(arguments));
        }
        self.inner.prepare_arguments(arguments)
    }

    async fn execute(&self, mut call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        let outer = std::mem::take(&mut call.on_update);
        if outer.is_listening() {
            call.on_update =
                OnUpdate::new(move |update: JsonToolResult| outer.call(undefined_details(update)));
        }
        self.inner.execute(call).await.map(undefined_details)
    }
}
