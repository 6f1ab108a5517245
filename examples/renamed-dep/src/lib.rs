//! A tool crate that depends on pi-tool as `pt`: `#[pi_tool(crate = "pt")]` and
//! `#[schemars(crate = "pt::schemars")]` point the generated code at the renamed crate.

use pt::pack::ToolPack;
use pt::{JsonSchema, ToolError, pi_tool, tool_pack};
use serde::Deserialize;

/// Arguments of `shout`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(crate = "pt::schemars")]
pub struct ShoutParams {
    /// The text to shout.
    pub text: String,
}

/// Return the text in capital letters.
#[pi_tool(name = "shout", crate = "pt")]
pub async fn shout(params: ShoutParams) -> Result<String, ToolError> {
    Ok(params.text.to_uppercase())
}

/// This crate's tools.
pub fn pack() -> ToolPack {
    tool_pack![Shout]
}

#[cfg(test)]
mod tests {
    use pt::{AbortSignal, OnUpdate, ToolInvocation, json};

    #[tokio::test]
    async fn the_tool_works_through_the_renamed_crate() {
        let tools = super::pack().tools();
        let shout = &tools[0];
        assert_eq!(
            shout.spec().description,
            "Return the text in capital letters."
        );
        let args = json!({"text": "hi"});
        let params = shout.check_arguments(&args).unwrap();
        let result = shout
            .execute(ToolInvocation::new(
                "c",
                &params,
                AbortSignal::never(),
                OnUpdate::none(),
            ))
            .await
            .unwrap();
        assert_eq!(result.text_content(), "HI");
        assert!(shout.check_arguments(&json!({})).is_err());
    }

    #[tokio::test]
    async fn the_pack_accepts_whatever_its_schema_allows() {
        pt::testing::assert_pack_accepts_its_schema(super::pack()).await;
    }
}
