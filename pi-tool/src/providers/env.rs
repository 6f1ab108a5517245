//! API keys from the environment, as pi-ai's `getEnvApiKey` finds them: one variable
//! per provider (`OPENAI_API_KEY`, `GROQ_API_KEY`, ...), and for `anthropic` the OAuth
//! token before the API key.

use crate::model::{ApiKey, Model, StreamOptions};

/// The environment variables pi-ai reads for `provider`, in pi-ai's order.
pub(crate) fn api_key_env_vars(provider: &str) -> &'static [&'static str] {
    match provider {
        "github-copilot" => &["COPILOT_GITHUB_TOKEN"],
        // ANTHROPIC_AUTH_TOKEN is a bearer token for a proxy; pi-ai skips it as the key.
        "anthropic" => &["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"],
        "ant-ling" => &["ANT_LING_API_KEY"],
        "qwen-token-plan" | "qwen-token-plan-individual" => &["QWEN_TOKEN_PLAN_API_KEY"],
        "qwen-token-plan-cn" => &["QWEN_TOKEN_PLAN_CN_API_KEY"],
        "openai" => &["OPENAI_API_KEY"],
        "azure-openai-responses" => &["AZURE_OPENAI_API_KEY"],
        "nvidia" => &["NVIDIA_API_KEY"],
        "deepseek" => &["DEEPSEEK_API_KEY"],
        "google" => &["GEMINI_API_KEY"],
        "google-vertex" => &["GOOGLE_CLOUD_API_KEY"],
        "groq" => &["GROQ_API_KEY"],
        "cerebras" => &["CEREBRAS_API_KEY"],
        "xai" => &["XAI_API_KEY"],
        "radius" => &["RADIUS_API_KEY"],
        "openrouter" => &["OPENROUTER_API_KEY"],
        "vercel-ai-gateway" => &["AI_GATEWAY_API_KEY"],
        "zai" => &["ZAI_API_KEY"],
        "zai-coding-cn" => &["ZAI_CODING_CN_API_KEY"],
        "mistral" => &["MISTRAL_API_KEY"],
        "minimax" => &["MINIMAX_API_KEY"],
        "minimax-cn" => &["MINIMAX_CN_API_KEY"],
        "moonshotai" | "moonshotai-cn" => &["MOONSHOT_API_KEY"],
        "huggingface" => &["HF_TOKEN"],
        "fireworks" => &["FIREWORKS_API_KEY"],
        "together" => &["TOGETHER_API_KEY"],
        "baseten" => &["BASETEN_API_KEY"],
        "opencode" | "opencode-go" => &["OPENCODE_API_KEY"],
        "kimi-coding" => &["KIMI_API_KEY"],
        "cloudflare-workers-ai" | "cloudflare-ai-gateway" => &["CLOUDFLARE_API_KEY"],
        "xiaomi" => &["XIAOMI_API_KEY"],
        "xiaomi-token-plan-cn" => &["XIAOMI_TOKEN_PLAN_CN_API_KEY"],
        "xiaomi-token-plan-ams" => &["XIAOMI_TOKEN_PLAN_AMS_API_KEY"],
        "xiaomi-token-plan-sgp" => &["XIAOMI_TOKEN_PLAN_SGP_API_KEY"],
        _ => &[],
    }
}

/// The key for `provider` from the environment: the first of its variables that is set
/// and not empty.
pub fn env_api_key(provider: &str) -> Option<ApiKey> {
    api_key_env_vars(provider)
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
        .map(ApiKey::from)
}

/// The request's key: the options' key, else the provider's environment variable.
/// The error names the variables to set, never a value.
pub(crate) fn resolve_api_key(model: &Model, options: &StreamOptions) -> Result<ApiKey, String> {
    if let Some(key) = options.api_key.clone().filter(|k| !k.expose().is_empty()) {
        return Ok(key);
    }
    env_api_key(&model.provider).ok_or_else(|| {
        let vars = api_key_env_vars(&model.provider);
        if vars.is_empty() {
            format!("No API key for provider: {}", model.provider)
        } else {
            format!(
                "No API key for provider: {} (set {} or pass StreamOptions::api_key)",
                model.provider,
                vars.join(" or ")
            )
        }
    })
}
