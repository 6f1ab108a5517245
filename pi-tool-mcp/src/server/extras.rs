//! The MCP answers for what a [`PackServer`](crate::PackServer) serves beside its tools:
//! resources, prompts and completions, from the typed packs to rmcp's results and errors.

use std::collections::BTreeMap;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CacheScope, CompleteRequestParams, CompleteResult, CompletionInfo, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, ReadResourceResponse, ReadResourceResult, Reference,
};
use serde_json::{Value, json};

use super::prompts::{CompletionTarget, Completions, PromptError, PromptPack};
use super::resources::{ResourceError, ResourcePack};

/// `resources/read`: an unknown URI is -32602 with `data.uri` (SEP-2164); `hints` are the
/// caching hints of 2026-07-28, `None` at the revisions before.
pub(crate) async fn read_resource(
    resources: &ResourcePack,
    uri: &str,
    hints: Option<(u64, CacheScope)>,
) -> Result<ReadResourceResponse, McpError> {
    match resources.read(uri).await {
        Ok(contents) => {
            let mut result = ReadResourceResult::new(contents);
            if let Some((ttl, scope)) = hints {
                result = result.with_ttl_ms(ttl).with_cache_scope(scope);
            }
            Ok(result.into())
        }
        Err(error @ ResourceError::NotFound(_)) => Err(McpError::invalid_params(
            error.to_string(),
            Some(json!({ "uri": uri })),
        )),
        Err(error) => Err(McpError::internal_error(error.to_string(), None)),
    }
}

/// `prompts/get`: arguments that are not strings are refused (-32602), as MCP's
/// arguments are a map of strings.
pub(crate) async fn get_prompt(
    prompts: &PromptPack,
    request: GetPromptRequestParams,
) -> Result<GetPromptResponse, McpError> {
    let mut args = BTreeMap::new();
    for (name, value) in request.arguments.unwrap_or_default() {
        match value {
            Value::String(text) => {
                args.insert(name, text);
            }
            other => {
                return Err(McpError::invalid_params(
                    format!(
                        "Invalid params: prompt argument {name:?} must be a string, got {other}"
                    ),
                    None,
                ));
            }
        }
    }
    match prompts.get(&request.name, args).await {
        Ok(messages) => Ok(GetPromptResult::new(messages).into()),
        Err(error @ PromptError::Failed(_)) => {
            Err(McpError::internal_error(error.to_string(), None))
        }
        Err(error) => Err(McpError::invalid_params(
            error.to_string(),
            Some(json!({ "prompt": request.name })),
        )),
    }
}

/// `completion/complete`: at most 100 values, with `total` and `hasMore`.
pub(crate) fn complete(
    completions: Option<&Completions>,
    request: &CompleteRequestParams,
) -> Result<CompleteResult, McpError> {
    let Some(completions) = completions else {
        return Err(McpError::method_not_found::<
            rmcp::model::CompleteRequestMethod,
        >());
    };
    let target = match &request.r#ref {
        Reference::Prompt(prompt) => CompletionTarget::Prompt(&prompt.name),
        Reference::Resource(resource) => CompletionTarget::Resource(&resource.uri),
        _ => {
            return Err(McpError::invalid_params(
                "Invalid params: completion/complete's ref is neither ref/prompt nor ref/resource",
                None,
            ));
        }
    };
    let mut values = (completions.0)(target, &request.argument.name, &request.argument.value);
    let total = values.len();
    values.truncate(CompletionInfo::MAX_VALUES);
    let mut info = CompletionInfo::default();
    info.values = values;
    info.total = Some(u32::try_from(total).unwrap_or(u32::MAX));
    info.has_more = Some(total > CompletionInfo::MAX_VALUES);
    Ok(CompleteResult::new(info))
}
