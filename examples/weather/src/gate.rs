//! Pi's custom-tool page's permission gate: an extension that registers `get_weather` and asks
//! the user before every call.
//!
//! * no user interface (`ctx.has_ui()` is false): the call is blocked with
//!   `get_weather requires interactive approval`;
//! * the user declines: blocked with `User denied the weather lookup`;
//! * the user approves: the call runs.
//!
//! A blocked call becomes an error tool result, so the model can explain the refusal.
//! The gate reads the call's input with the tool's own params type
//! ([`ToolCallEvent::input_for`]), checked by name: calls to other tools pass untouched.

use pi_tool::context::ExtensionContext;
use pi_tool::session::{
    Extension, ExtensionApi, SessionError, ToolCallDecision, ToolCallEvent, ToolCallHandler,
};
use pi_tool::{ToolError, async_trait};

use crate::GetWeather;

/// The reason of a call blocked because no one can approve it.
pub const NEEDS_APPROVAL: &str = "get_weather requires interactive approval";
/// The reason of a call the user declined.
pub const USER_DENIED: &str = "User denied the weather lookup";

/// The permission-gate extension (`<inline:weather-gate>`).
#[derive(Debug, Clone, Copy, Default)]
pub struct WeatherGate;

impl Extension for WeatherGate {
    fn name(&self) -> &str {
        "weather-gate"
    }

    fn register(&self, api: &ExtensionApi) -> Result<(), SessionError> {
        api.register_tool(GetWeather)?;
        api.on_tool_call(AskBeforeWeather)
    }
}

/// The `tool_call` handler of the gate.
#[derive(Debug, Clone, Copy, Default)]
pub struct AskBeforeWeather;

#[async_trait]
impl ToolCallHandler for AskBeforeWeather {
    async fn on_tool_call(
        &self,
        event: &mut ToolCallEvent,
        ctx: &ExtensionContext,
    ) -> Result<ToolCallDecision, ToolError> {
        let Some(params) = event.input_for::<GetWeather>() else {
            return Ok(ToolCallDecision::Allow);
        };
        let params = params?;
        if !ctx.has_ui() {
            return Ok(ToolCallDecision::block(NEEDS_APPROVAL));
        }
        let approved = ctx
            .ui()
            .confirm(
                "Run get_weather?",
                &format!("Look up the demo weather for {}?", params.city),
            )
            .await;
        if approved {
            Ok(ToolCallDecision::Allow)
        } else {
            Ok(ToolCallDecision::block(USER_DENIED))
        }
    }
}
