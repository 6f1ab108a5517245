//! The model a call runs under (pi-ai's `Model` descriptor): which model, through which
//! API and provider, with its limits and prices.
//!
//! It is plain data, and the one piece of pi-ai's layer that the tool contract names: a
//! tool reads it as Pi's `ctx.model` (`ExtensionContext::model`). Keeping it here, rather
//! than with the messages and the stream in `pi_tool::model`, lets a tool pack see
//! `ctx.model` while depending on the core alone; `pi_tool::model` re-exports it beside the
//! rest of the layer.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A model descriptor (Pi's `Model`): which model, through which API and provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Model {
    /// The provider's model id.
    pub id: String,
    /// A display name.
    pub name: String,
    /// The API it is called through.
    pub api: String,
    /// The provider.
    pub provider: String,
    /// The endpoint.
    #[serde(default)]
    pub base_url: String,
    /// Whether it reasons.
    #[serde(default)]
    pub reasoning: bool,
    /// Accepted input kinds (`text`, `image`).
    #[serde(default)]
    pub input: Vec<String>,
    /// Context window in tokens.
    #[serde(default)]
    pub context_window: u64,
    /// Output limit in tokens.
    #[serde(default)]
    pub max_tokens: u64,
    /// Prices in US dollars per million tokens; usage costs are computed from them.
    #[serde(default)]
    pub cost: ModelCost,
    /// Extra HTTP headers sent with every request to this model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<BTreeMap<String, String>>,
    /// Compatibility switches of the model's wire API (pi-ai's `compat`), as pi-ai's model
    /// data has them. Each provider reads the switches of its own API into a typed struct
    /// (for example `pi_tool::providers::OpenAiCompletionsCompat`);
    /// keys it does not know are ignored, as in pi-ai.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compat: Option<serde_json::Value>,
    /// Provider-specific names of Pi's thinking levels (pi-ai's `thinkingLevelMap`); `null`
    /// marks a level the model does not support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level_map: Option<serde_json::Map<String, serde_json::Value>>,
    /// Default sampling parameters merged into the request body (pi-ai's
    /// `samplingParams`; OpenAI-compatible APIs only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling_params: Option<serde_json::Map<String, serde_json::Value>>,
}

/// A model's prices in US dollars per million tokens (pi-ai's `ModelCost`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ModelCost {
    /// Input tokens.
    #[serde(default)]
    pub input: f64,
    /// Output tokens.
    #[serde(default)]
    pub output: f64,
    /// Tokens read from the provider's prompt cache.
    #[serde(default)]
    pub cache_read: f64,
    /// Tokens written to the provider's prompt cache.
    #[serde(default)]
    pub cache_write: f64,
    /// Request-wide price tiers: the highest threshold below the request's input applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tiers: Option<Vec<ModelCostTier>>,
}

/// A price tier of a [`ModelCost`] (pi-ai's `ModelCostTier`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ModelCostTier {
    /// The tier applies to requests whose input tokens exceed this count.
    pub input_tokens_above: u64,
    /// Input tokens.
    #[serde(default)]
    pub input: f64,
    /// Output tokens.
    #[serde(default)]
    pub output: f64,
    /// Cache reads.
    #[serde(default)]
    pub cache_read: f64,
    /// Cache writes.
    #[serde(default)]
    pub cache_write: f64,
}

impl Model {
    /// A descriptor with the given id, API and provider, everything else empty.
    pub fn new(id: impl Into<String>, api: impl Into<String>, provider: impl Into<String>) -> Self {
        let id = id.into();
        Model {
            name: id.clone(),
            id,
            api: api.into(),
            provider: provider.into(),
            base_url: String::new(),
            reasoning: false,
            input: vec!["text".to_owned()],
            context_window: 0,
            max_tokens: 0,
            cost: ModelCost::default(),
            headers: None,
            compat: None,
            thinking_level_map: None,
            sampling_params: None,
        }
    }
}

impl Default for Model {
    /// Pi's `DEFAULT_MODEL`: id, api and provider `unknown`.
    fn default() -> Self {
        Model::new("unknown", "unknown", "unknown")
    }
}

/// Pi's context window for a model its registry does not know (pi-coding-agent's
/// `models.json` defaults).
const CUSTOM_CONTEXT_WINDOW: u64 = 128_000;
/// Pi's output limit for such a model.
const CUSTOM_MAX_TOKENS: u64 = 16_384;

impl Model {
    /// A model Pi's registry does not know, with Pi's defaults for a custom model
    /// (pi-coding-agent's `models.json`): name = id, no reasoning, text input, zero
    /// prices, a 128 000-token context window and 16 384 output tokens. Adjust the public
    /// fields for the server at hand.
    ///
    /// `provider` selects the API key's environment variable
    /// (`pi_tool::providers::env_api_key`) and pi-ai's per-provider
    /// compatibility detection, so name a known provider (`openrouter`, `groq`, ...) when
    /// the server is one of theirs.
    ///
    /// ```
    /// use pi_tool_core::model::Model;
    ///
    /// let model = Model::custom("ollama", "openai-completions", "http://127.0.0.1:11434/v1", "qwen3:8b");
    /// assert_eq!((model.context_window, model.max_tokens), (128_000, 16_384));
    /// assert_eq!(model.name, "qwen3:8b");
    /// ```
    pub fn custom(
        provider: impl Into<String>,
        api: impl Into<String>,
        base_url: impl Into<String>,
        id: impl Into<String>,
    ) -> Self {
        let mut model = Model::new(id, api, provider);
        model.base_url = base_url.into();
        model.context_window = CUSTOM_CONTEXT_WINDOW;
        model.max_tokens = CUSTOM_MAX_TOKENS;
        model.cost = ModelCost::default();
        model
    }

    /// A model on any OpenAI-compatible server (llama.cpp's `llama-server`, Ollama, vLLM,
    /// LM Studio): API `openai-completions`, provider `openai-compatible`, and the
    /// defaults of [`Model::custom`]. `base_url` ends where pi-ai appends
    /// `/chat/completions`, usually in `/v1`.
    ///
    /// The provider name has no environment variable, so pass the key (any non-empty
    /// text for a server that needs none, as pi-ai requires one) in
    /// `StreamOptions::api_key` (`pi_tool_core::model`), or set `provider` to one
    /// whose variable you use.
    ///
    /// A small local window is no reason to shrink `context_window` to the server's
    /// `-c`: pi-ai clamps the requested output to `context_window - input - 4096`, so a
    /// 4096-token window asks for a single token.
    ///
    /// ```
    /// use pi_tool_core::model::Model;
    ///
    /// let mut model = Model::openai_compatible("http://127.0.0.1:8080/v1", "smol");
    /// model.max_tokens = 128;
    /// assert_eq!(model.api, "openai-completions");
    /// assert_eq!(model.provider, "openai-compatible");
    /// assert_eq!(model.base_url, "http://127.0.0.1:8080/v1");
    /// ```
    pub fn openai_compatible(base_url: impl Into<String>, id: impl Into<String>) -> Self {
        Model::custom("openai-compatible", "openai-completions", base_url, id)
    }
}

impl ModelCost {
    /// Prices in US dollars per million tokens, without tiers.
    pub fn new(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Self {
        ModelCost {
            input,
            output,
            cache_read,
            cache_write,
            tiers: None,
        }
    }
}

impl ModelCostTier {
    /// The prices that apply above `input_tokens_above` input tokens.
    pub fn new(
        input_tokens_above: u64,
        input: f64,
        output: f64,
        cache_read: f64,
        cache_write: f64,
    ) -> Self {
        ModelCostTier {
            input_tokens_above,
            input,
            output,
            cache_read,
            cache_write,
        }
    }
}
