//! The JSON-level shape of Pi's tools around the typed tools: `details: undefined` (a
//! typed `None`) is no `details` key, not `null`; `edit`'s `prepareArguments`; and the
//! arguments converted as TypeBox converts them (Pi builds these schemas with TypeBox, so
//! pi-ai runs `Value.Convert` on them before its own coercion).

use std::borrow::Cow;
use std::sync::Arc;

use pi_tool_core::schema::ToolSchema;
use pi_tool_core::{
    AgentTool, JsonToolResult, OnUpdate, ToolError, ToolInvocation, ToolSpec, Value, async_trait,
};

struct PiShaped {
    inner: Arc<dyn AgentTool>,
    /// The inner spec with the TypeBox-converting copy of its schema.
    spec: ToolSpec,
    prepare_edit: bool,
}

pub(crate) fn pi_shaped(inner: Arc<dyn AgentTool>, prepare_edit: bool) -> Arc<dyn AgentTool> {
    let mut spec = inner.spec().clone();
    let schema = ToolSchema::from_json(spec.parameters.json().clone()).with_typebox_convert();
    spec.parameters = Arc::new(schema);
    Arc::new(PiShaped {
        inner,
        spec,
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
        &self.spec
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
                OnUpdate::new(move |update: JsonToolResult| outer.send(undefined_details(update)));
        }
        self.inner.execute(call).await.map(undefined_details)
    }
}
