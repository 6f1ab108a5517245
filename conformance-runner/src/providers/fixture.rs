//! Provider fixtures (`conformance/providers/FORMAT.md` §1): finding and reading them,
//! and turning their model, context and options into pi-tool's types.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use pi_tool::ToolInvocation;
use pi_tool::model::{
    ApiKey, CacheRetention, Context, Message, Model, StreamOptions, ThinkingLevel, ToolChoice,
};
use pi_tool::schema::ToolSchema;
use pi_tool::{AgentTool, JsonToolResult, ToolError, ToolSpec};
use serde_json::{Map, Value, json};

/// The key the recorder passes when a fixture's options name none (FORMAT.md §1.3).
pub const DEFAULT_API_KEY: &str = "sk-test-0123456789abcdef";

/// One fixture file: `<api>/<name>.json`.
#[derive(Debug, Clone)]
pub struct Fixture {
    /// The wire API (the folder name, equal to the file's `api`).
    pub api: String,
    /// The file name without `.json`.
    pub name: String,
    /// The file's JSON.
    pub json: Value,
}

impl Fixture {
    /// `<api>/<name>`.
    pub fn id(&self) -> String {
        format!("{}/{}", self.api, self.name)
    }

    /// Reads a fixture file; its folder names its API.
    pub fn load(path: &Path) -> Result<Fixture, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let json: Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .ok_or_else(|| format!("{}: no file name", path.display()))?
            .to_owned();
        let api = path
            .parent()
            .and_then(Path::file_name)
            .and_then(|s| s.to_str())
            .ok_or_else(|| format!("{}: no API folder", path.display()))?
            .to_owned();
        match json.get("api").and_then(Value::as_str) {
            Some(a) if a == api => Ok(Fixture { api, name, json }),
            other => Err(format!(
                "{}: api field {other:?} does not match its folder {api}",
                path.display()
            )),
        }
    }

    fn section(&self, key: &str) -> Result<Map<String, Value>, String> {
        match self.json.get(key) {
            None | Some(Value::Null) => Ok(Map::new()),
            Some(Value::Object(map)) => Ok(map.clone()),
            Some(other) => Err(format!("`{key}` is not an object: {other}")),
        }
    }

    /// Which pi-ai function the recorder called (`streamSimple` unless `entry` says).
    pub fn entry(&self) -> &str {
        self.json
            .get("entry")
            .and_then(Value::as_str)
            .unwrap_or("streamSimple")
    }
}

/// Every `<api>/<name>.json` under `dir`, sorted by API, then name (the recorder's order).
pub fn fixture_files(dir: &Path) -> Vec<PathBuf> {
    let mut apis: Vec<PathBuf> = read_dir_sorted(dir)
        .into_iter()
        .filter(|p| p.is_dir())
        .collect();
    apis.sort();
    apis.iter()
        .flat_map(|api| {
            read_dir_sorted(api)
                .into_iter()
                .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "json"))
        })
        .collect()
}

fn read_dir_sorted(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    entries
}

/// pi-ai's recorder's `DEFAULT_MODELS[api]` (FORMAT.md §1.1).
pub fn default_model(api: &str) -> Option<Value> {
    let model = match api {
        "anthropic-messages" => json!({
            "id": "claude-sonnet-4-5",
            "name": "Claude Sonnet 4.5",
            "api": "anthropic-messages",
            "provider": "anthropic",
            "baseUrl": "{{origin}}",
            "reasoning": true,
            "input": ["text", "image"],
            "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
            "contextWindow": 200000,
            "maxTokens": 64000,
        }),
        "openai-completions" => json!({
            "id": "gpt-4o-mini",
            "name": "GPT-4o mini",
            "api": "openai-completions",
            "provider": "openai",
            "baseUrl": "{{origin}}/v1",
            "reasoning": false,
            "input": ["text", "image"],
            "cost": {"input": 0.15, "output": 0.6, "cacheRead": 0.075, "cacheWrite": 0},
            "contextWindow": 128000,
            "maxTokens": 16384,
        }),
        "openai-responses" => json!({
            "id": "gpt-5-mini",
            "name": "GPT-5 Mini",
            "api": "openai-responses",
            "provider": "openai",
            "baseUrl": "{{origin}}/v1",
            "reasoning": true,
            "input": ["text", "image"],
            "cost": {"input": 0.25, "output": 2, "cacheRead": 0.025, "cacheWrite": 0},
            "contextWindow": 400000,
            "maxTokens": 128000,
        }),
        _ => return None,
    };
    Some(model)
}

/// The keys of pi-ai's `Model` that [`Model`] holds; a fixture key outside them is
/// reported (it could change the request).
const MODEL_KEYS: &[&str] = &[
    "id",
    "name",
    "api",
    "provider",
    "baseUrl",
    "reasoning",
    "input",
    "cost",
    "contextWindow",
    "maxTokens",
    "headers",
    "compat",
    "thinkingLevelMap",
    "samplingParams",
];

/// `{...DEFAULT_MODELS[api], ...fixture.model}` with `api` forced and `{{origin}}`
/// replaced (FORMAT.md §1.1), as pi-ai's JSON. Keys [`Model`] cannot hold are added to
/// `notes`.
pub fn model_json(
    fixture: &Fixture,
    origin: &str,
    notes: &mut Vec<String>,
) -> Result<Map<String, Value>, String> {
    let Some(Value::Object(mut model)) = default_model(&fixture.api) else {
        return Err(format!("no default model for api {}", fixture.api));
    };
    for (key, value) in fixture.section("model")? {
        if !MODEL_KEYS.contains(&key.as_str()) {
            notes.push(format!(
                "model key `{key}` has no field in pi_tool::model::Model (ignored)"
            ));
        }
        model.insert(key, value);
    }
    model.insert("api".to_owned(), Value::String(fixture.api.clone()));
    if let Some(Value::String(base)) = model.get_mut("baseUrl") {
        *base = base.replace("{{origin}}", origin);
    }
    Ok(model)
}

/// [`model_json`] as a pi-tool [`Model`].
pub fn build_model(
    fixture: &Fixture,
    origin: &str,
    notes: &mut Vec<String>,
) -> Result<Model, String> {
    let model = model_json(fixture, origin, notes)?;
    serde_json::from_value(Value::Object(model)).map_err(|e| format!("model: {e}"))
}

/// The fixture's context as a pi-tool [`Context`] (FORMAT.md §1.2). Keys [`Context`]
/// has no place for are added to `notes`.
pub fn build_context(fixture: &Fixture, notes: &mut Vec<String>) -> Result<Context, String> {
    let context = fixture.section("context")?;
    let system_prompt = match context.get("systemPrompt") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => return Err(format!("context.systemPrompt is not a string: {other}")),
    };
    let mut messages = Vec::new();
    let empty = Vec::new();
    let raw_messages = match context.get("messages") {
        None => &empty,
        Some(Value::Array(items)) => items,
        Some(other) => return Err(format!("context.messages is not an array: {other}")),
    };
    for (i, raw) in raw_messages.iter().enumerate() {
        messages.push(message(raw, i)?);
    }
    let mut tools: Vec<Arc<dyn AgentTool>> = Vec::new();
    if let Some(raw_tools) = context.get("tools") {
        let Value::Array(raw_tools) = raw_tools else {
            return Err(format!("context.tools is not an array: {raw_tools}"));
        };
        for raw in raw_tools {
            tools.push(Arc::new(FixtureTool::new(raw)?));
        }
    }
    for key in context.keys() {
        if !["systemPrompt", "messages", "tools"].contains(&key.as_str()) {
            notes.push(format!(
                "context key `{key}` is not part of Context (ignored)"
            ));
        }
    }
    Ok(Context {
        system_prompt,
        messages,
        tools,
    })
}

/// One pi `Message`, read by [`Message`]'s own deserialiser (pi's JSON: a user message's
/// content may be a string or blocks). A form it cannot read fails the fixture.
fn message(raw: &Value, index: usize) -> Result<Message, String> {
    serde_json::from_value::<Message>(raw.clone()).map_err(|e| {
        format!("context.messages[{index}]: pi_tool::model::Message cannot read it: {e}")
    })
}

/// The fixture's options as [`StreamOptions`] (FORMAT.md §1.3), and the API key in use
/// (for the request's `<key>` substitution). Options pi-tool has no field for are errors.
pub fn build_options(fixture: &Fixture) -> Result<(StreamOptions, Option<String>), String> {
    let options = fixture.section("options")?;
    let mut out = StreamOptions::default();
    let mut key = Some(DEFAULT_API_KEY.to_owned());
    for (name, value) in &options {
        let bad = || format!("options.{name}: unsupported value {value}");
        match name.as_str() {
            "apiKey" => {
                key = match value {
                    Value::Null => None,
                    Value::String(s) => Some(s.clone()),
                    _ => return Err(bad()),
                }
            }
            "reasoning" => {
                out.reasoning = match value {
                    Value::Null => None,
                    _ => Some(
                        serde_json::from_value::<ThinkingLevel>(value.clone())
                            .map_err(|_| bad())?,
                    ),
                }
            }
            "maxTokens" => out.max_tokens = Some(integer(value).ok_or_else(bad)?),
            "temperature" => out.temperature = Some(value.as_f64().ok_or_else(bad)?),
            "sessionId" => out.session_id = Some(value.as_str().ok_or_else(bad)?.to_owned()),
            "cacheRetention" => {
                out.cache_retention = Some(
                    serde_json::from_value::<CacheRetention>(value.clone()).map_err(|_| bad())?,
                )
            }
            "toolChoice" => out.tool_choice = Some(tool_choice(value).ok_or_else(bad)?),
            "headers" => {
                let Value::Object(headers) = value else {
                    return Err(bad());
                };
                for (h, v) in headers {
                    let v = match v {
                        Value::Null => None,
                        Value::String(s) => Some(s.clone()),
                        _ => return Err(bad()),
                    };
                    out.headers.insert(h.clone(), v);
                }
            }
            "metadata" => out.metadata = Some(value.as_object().ok_or_else(bad)?.clone()),
            "samplingParams" => {
                out.sampling_params = Some(value.as_object().ok_or_else(bad)?.clone())
            }
            "maxRetries" => {
                out.max_retries =
                    Some(u32::try_from(integer(value).ok_or_else(bad)?).map_err(|_| bad())?)
            }
            "timeoutMs" => {
                out.timeout = Some(std::time::Duration::from_millis(
                    integer(value).ok_or_else(bad)?,
                ))
            }
            _ => return Err(format!("options.{name}: StreamOptions has no such option")),
        }
    }
    out.api_key = key.clone().map(ApiKey::from);
    Ok((out, key))
}

/// A non-negative integer given as a JSON number (`4096` or `4096.0`).
fn integer(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 9_007_199_254_740_992.0)
            .map(|f| f as u64)
    })
}

/// pi-ai's `toolChoice` in any API's spelling.
fn tool_choice(value: &Value) -> Option<ToolChoice> {
    match value {
        Value::String(s) => match s.as_str() {
            "auto" => Some(ToolChoice::Auto),
            "none" => Some(ToolChoice::None),
            "required" | "any" => Some(ToolChoice::Required),
            _ => None,
        },
        Value::Object(o) => match o.get("type").and_then(Value::as_str) {
            Some("auto") => Some(ToolChoice::Auto),
            Some("none") => Some(ToolChoice::None),
            Some("any") | Some("required") => Some(ToolChoice::Required),
            _ => o
                .get("name")
                .or_else(|| o.get("function").and_then(|f| f.get("name")))
                .and_then(Value::as_str)
                .map(|n| ToolChoice::Tool(n.to_owned())),
        },
        _ => None,
    }
}

/// A fixture's tool: `{name, description, parameters}` with the schema as given. The
/// provider only describes it to the model; nothing in a conformance run executes it.
pub struct FixtureTool {
    spec: ToolSpec,
}

impl FixtureTool {
    /// The tool of a fixture's `context.tools[]` element.
    pub fn new(raw: &Value) -> Result<Self, String> {
        let name = raw
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("tool without a name: {raw}"))?;
        let description = raw
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let parameters = raw
            .get("parameters")
            .cloned()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
        Ok(FixtureTool {
            spec: ToolSpec::new(
                name,
                description,
                Arc::new(ToolSchema::from_json(parameters)),
            ),
        })
    }
}

#[async_trait]
impl AgentTool for FixtureTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(&self, call: ToolInvocation<'_>) -> Result<JsonToolResult, ToolError> {
        let _tool_call_id = call.id;
        let _params = call.params;
        let _signal = call.signal;
        let _on_update = call.on_update;
        // A provider fixture is one model call: the loop that would execute tools is not
        // part of it.
        Err(ToolError::new(format!(
            "{} is a provider-conformance tool and is never executed",
            self.spec.name
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(json: Value) -> Fixture {
        Fixture {
            api: json["api"].as_str().unwrap().to_owned(),
            name: "t".to_owned(),
            json,
        }
    }

    #[test]
    fn model_is_the_default_shallowly_overridden() {
        let f = fixture(json!({
            "api": "openai-completions",
            "model": {"id": "qwen", "cost": {"input": 1}, "compat": {"supportsStore": false},
                      "api": "ignored"},
        }));
        let mut notes = Vec::new();
        let m = build_model(&f, "http://127.0.0.1:9", &mut notes).unwrap();
        assert_eq!(m.id, "qwen");
        assert_eq!(m.api, "openai-completions");
        assert_eq!(m.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(m.cost.input, 1.0);
        assert_eq!(
            m.cost.output, 0.0,
            "a fixture's cost replaces the whole default"
        );
        assert_eq!(m.context_window, 128000);
        assert_eq!(m.compat, Some(json!({"supportsStore": false})));
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn options_default_key_and_fields() {
        let f = fixture(json!({"api": "anthropic-messages",
            "options": {"reasoning": "high", "maxTokens": 4096, "temperature": 0,
                        "sessionId": "s", "cacheRetention": "long"}}));
        let (o, key) = build_options(&f).unwrap();
        assert_eq!(key.as_deref(), Some(DEFAULT_API_KEY));
        assert_eq!(
            o.api_key.as_ref().map(ApiKey::expose),
            Some(DEFAULT_API_KEY)
        );
        assert_eq!(o.reasoning, Some(ThinkingLevel::High));
        assert_eq!(o.max_tokens, Some(4096));
        assert_eq!(o.temperature, Some(0.0));
        assert_eq!(o.session_id.as_deref(), Some("s"));
        assert_eq!(o.cache_retention, Some(CacheRetention::Long));
        let none = fixture(json!({"api": "anthropic-messages", "options": {"apiKey": null}}));
        assert_eq!(build_options(&none).unwrap().1, None);
        let unknown = fixture(json!({"api": "anthropic-messages", "options": {"fetch": 1}}));
        assert!(build_options(&unknown).is_err());
    }

    #[test]
    fn context_reads_every_message_form_of_the_corpus() {
        let f = fixture(json!({"api": "openai-completions", "context": {
            "systemPrompt": "sys",
            "messages": [
                {"role": "user", "content": "hi", "timestamp": 1},
                {"role": "user", "content": [{"type": "text", "text": "a"},
                    {"type": "image", "data": "AAAA", "mimeType": "image/png"}], "timestamp": 1},
                {"role": "assistant", "content": [{"type": "thinking", "thinking": "t",
                    "thinkingSignature": "sig"}, {"type": "text", "text": "x"},
                    {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}],
                 "api": "openai-completions", "provider": "openai", "model": "gpt-4o-mini",
                 "usage": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3,
                           "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                 "stopReason": "toolUse", "timestamp": 2},
                {"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
                 "content": [{"type": "text", "text": "ok"}], "isError": false, "timestamp": 3},
            ],
            "tools": [{"name": "bash", "description": "Run", "parameters": {"type": "object",
                "properties": {"command": {"type": "string"}}, "required": ["command"]}}],
        }}));
        let mut notes = Vec::new();
        let c = build_context(&f, &mut notes).unwrap();
        assert_eq!(c.system_prompt, "sys");
        assert_eq!(c.messages.len(), 4);
        assert_eq!(c.tools[0].name(), "bash");
        assert_eq!(
            c.tools[0].spec().parameters.json()["required"],
            json!(["command"])
        );
        assert!(notes.is_empty(), "{notes:?}");
        // pi-ai sends string and block content differently: the string form survives.
        let user = serde_json::to_value(&c.messages[0]).unwrap();
        assert_eq!(user["content"], json!("hi"));
        let blocks = serde_json::to_value(&c.messages[1]).unwrap();
        assert_eq!(blocks["content"][0], json!({"type": "text", "text": "a"}));
    }
}
