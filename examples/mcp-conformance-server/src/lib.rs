//! The fixture server of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`), written the way a pi-tool user writes a server:
//! every tool the suite calls is a `#[pi_tool]` function, and the resources, templates,
//! prompts and completions are pi-tool-mcp's [`ResourcePack`], [`PromptPack`] and
//! [`Completions`].
//!
//! Names and answers are the ones the suite's scenarios check
//! (`src/scenarios/server/*.ts` in the suite's repository, and its reference server
//! `examples/servers/typescript/everything-server.ts`).

use std::time::Duration;

use pi_tool::pack::ToolPack;
use pi_tool::{
    AbortSignal, AgentToolResult, Content, NoDetails, OnUpdate, ToolError, pi_tool, tool_pack,
};
use pi_tool_mcp::rmcp::model::{
    ContentBlock, Prompt, PromptArgument, PromptMessage, Resource, ResourceContents,
    ResourceTemplate, Role,
};
use pi_tool_mcp::{Completions, PackServer, PromptPack, ResourcePack};

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
        on_update.call(AgentToolResult::text(
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
pub fn server() -> PackServer {
    PackServer::new(tools())
        .with_server_info("mcp-conformance-server", env!("CARGO_PKG_VERSION"))
        .with_resources(resources())
        .with_prompts(prompts())
        .with_completions(Completions::none())
}
