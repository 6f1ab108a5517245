//! The tool-name rule at run time, at its boundaries: `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`,
//! the names every major model provider accepts. MCP allows `[A-Za-z0-9_.-]{1,64}`
//! (what the conformance suite checks); pi-tool's rule is the provider-portable subset
//! of it, so a pack that serves over MCP also works with every provider. `#[pi_tool]`
//! checks the same rule at compile time (ui-tests: `name_*`, `fn_name_*`).

use std::sync::Arc;

use pi_tool_core::pack::{
    MAX_TOOL_NAME_LEN, PackError, ToolNameError, ToolOwner, ToolPack, check_tool_name,
};
use pi_tool_core::schema::ToolSchema;
use pi_tool_core::{
    AgentTool, JsonToolResult, ToolError, ToolInvocation, ToolSpec, async_trait, json,
};

struct Named(ToolSpec);

#[async_trait]
impl AgentTool for Named {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn execute(&self, _call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        Ok(JsonToolResult::text("ok", None))
    }
}

fn tool(name: &str) -> Arc<dyn AgentTool> {
    let schema = ToolSchema::from_json(json!({"type": "object", "properties": {}}));
    Arc::new(Named(ToolSpec::new(name, "A tool.", Arc::new(schema))))
}

fn push(name: &str) -> Result<(), PackError> {
    ToolPack::new().push(ToolOwner::new("names-test"), tool(name))
}

#[test]
fn sixty_four_characters_are_accepted_and_sixty_five_refused() {
    assert_eq!(MAX_TOOL_NAME_LEN, 64);
    let longest = format!("a{}", "b".repeat(63));
    assert_eq!(longest.len(), 64);
    push(&longest).expect("64 characters are a valid name");
    check_tool_name(&longest).expect("64 characters");

    let too_long = format!("{longest}c");
    let error = push(&too_long).unwrap_err();
    assert!(
        matches!(&error, PackError::InvalidName(ToolNameError::TooLong { name }) if *name == too_long),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!("tool name \"{too_long}\" is 65 characters long; providers accept at most 64")
    );
}

#[test]
fn a_prefix_that_makes_a_name_too_long_is_refused() {
    let mut pack = ToolPack::new();
    pack.push(ToolOwner::new("names-test"), tool(&"a".repeat(60)))
        .unwrap();
    let prefixed = pack.clone().prefixed("pre_").expect("64 characters");
    assert_eq!(prefixed.names().next().map(str::len), Some(64));
    let error = pack.prefixed("pref_").unwrap_err();
    assert!(
        matches!(error, PackError::InvalidName(ToolNameError::TooLong { .. })),
        "{error:?}"
    );
}

#[test]
fn a_dot_is_refused_with_the_reason() {
    let error = push("weather.get").unwrap_err();
    assert!(
        matches!(
            &error,
            PackError::InvalidName(ToolNameError::BadChar { bad: '.', .. })
        ),
        "{error:?}"
    );
    let text = error.to_string();
    assert!(
        text.starts_with("tool name \"weather.get\" contains `.`: use ASCII letters, digits")
            && text.contains("MCP allows `.` in tool names, but model providers do not"),
        "{text}"
    );
    // Other characters MCP refuses too get no MCP note.
    let text = push("get weather").unwrap_err().to_string();
    assert!(!text.contains("MCP"), "{text}");
}

#[test]
fn an_empty_name_is_refused() {
    let error = push("").unwrap_err();
    assert!(
        matches!(error, PackError::InvalidName(ToolNameError::Empty)),
        "{error:?}"
    );
    assert_eq!(error.to_string(), "a tool name cannot be empty");
}

#[test]
fn the_start_and_the_characters_follow_the_rule() {
    for good in ["a", "_", "A-b_9", "get_weather", "x-y"] {
        push(good).unwrap_or_else(|e| panic!("{good}: {e}"));
    }
    // MCP accepts these; providers do not, so neither does pi-tool.
    for bad in ["9lives", "-x", "a.b", "a/b", "a b", "é"] {
        assert!(push(bad).is_err(), "{bad}");
    }
}
