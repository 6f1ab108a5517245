//! Tool lists in each provider's request JSON.
//!
//! | shape | one entry |
//! |---|---|
//! | [`ApiShape::AnthropicMessages`] | `{name, description, input_schema, strict?}` |
//! | [`ApiShape::OpenAiChat`] | `{type: "function", function: {name, description, parameters, strict}}` |
//! | [`ApiShape::OpenAiResponses`] | `{type: "function", name, description, parameters, strict}` (`strict` always sent: the API defaults it to `true`) |
//! | [`ApiShape::Gemini`] | a `functionDeclarations` entry `{name, description, parametersJsonSchema \| parameters}`; no-parameter tools omit both |
//! | [`ApiShape::Mcp`] | a `tools/list` entry `{name, title?, description, inputSchema, annotations?}` |
//!
//! Declared effects ([`ToolAnnotations`](crate::ToolAnnotations)) have a slot only in
//! MCP's shape (`annotations`, only what was declared); the provider APIs have none, so
//! their entries are unchanged.
//! | [`ApiShape::Ollama`] | `{type: "function", function: {name, description, parameters}}` |
//!
//! A tool the profile rejects falls back when the profile has a fallback (strict →
//! non-strict, `gemini-openapi` → `gemini`) and is otherwise left out; both are
//! reported. [`Export::into_result`] turns any of that into an error, for hosts that
//! would rather fail at registration.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::checks::{ANTHROPIC_MAX_OPTIONAL, ANTHROPIC_MAX_STRICT_TOOLS, ANTHROPIC_MAX_UNIONS};
use super::{Diagnostic, Outcome, Profile, ReverseMap};
use crate::{AgentTool, ToolSpec};

/// Anything that has a [`ToolSpec`]: specs, `Arc<dyn AgentTool>`.
pub trait SpecSource {
    /// The tool's spec.
    fn tool_spec(&self) -> &ToolSpec;
}

impl SpecSource for ToolSpec {
    fn tool_spec(&self) -> &ToolSpec {
        self
    }
}

impl SpecSource for Arc<dyn AgentTool> {
    fn tool_spec(&self) -> &ToolSpec {
        self.spec()
    }
}

impl SpecSource for Box<dyn AgentTool> {
    fn tool_spec(&self) -> &ToolSpec {
        self.spec()
    }
}

impl<S: SpecSource + ?Sized> SpecSource for &S {
    fn tool_spec(&self) -> &ToolSpec {
        (**self).tool_spec()
    }
}

/// The request format a tool list is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ApiShape {
    /// Anthropic Messages `tools`.
    AnthropicMessages,
    /// OpenAI Chat Completions `tools`.
    OpenAiChat,
    /// OpenAI Responses `tools` (flat function entries).
    OpenAiResponses,
    /// Gemini `functionDeclarations` (wrap as `{"tools": [{"functionDeclarations": …}]}`).
    Gemini,
    /// MCP `tools/list` result `tools`.
    Mcp,
    /// Ollama `/api/chat` `tools`.
    Ollama,
}

impl ApiShape {
    /// The usual shape for a profile (OpenAI profiles default to Chat Completions).
    pub fn default_for(profile: Profile) -> ApiShape {
        match profile {
            Profile::Mcp => ApiShape::Mcp,
            Profile::Anthropic | Profile::AnthropicStrict => ApiShape::AnthropicMessages,
            Profile::OpenAi | Profile::OpenAiStrict => ApiShape::OpenAiChat,
            Profile::Gemini | Profile::GeminiOpenApi => ApiShape::Gemini,
            Profile::Ollama => ApiShape::Ollama,
        }
    }

    /// Why the provider would reject `name`, if it would.
    pub fn check_name(self, name: &str) -> Option<String> {
        let (max, extra, first_letter): (usize, &str, bool) = match self {
            ApiShape::AnthropicMessages
            | ApiShape::OpenAiChat
            | ApiShape::OpenAiResponses
            | ApiShape::Ollama => (64, "_-", false),
            ApiShape::Gemini => (64, "_.:-", true),
            ApiShape::Mcp => (128, "_.-", false),
        };
        let chars_ok = name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || extra.contains(c));
        let first_ok = !first_letter
            || name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        let len = name.chars().count();
        if len == 0 || len > max || !chars_ok || !first_ok {
            let start = if first_letter {
                ", starting with a letter or `_`"
            } else {
                ""
            };
            return Some(format!(
                "tool name `{name}` is not accepted: use 1–{max} characters of A–Z, a–z, 0–9 \
                 and `{extra}`{start}"
            ));
        }
        None
    }
}

/// One exported tool.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ExportedTool {
    /// The tool's name.
    pub name: String,
    /// The profile actually used (the fallback, if the requested one rejected it).
    pub profile: Profile,
    /// The entry in the provider's format.
    pub json: Value,
    /// The profile's result for the tool's schema.
    pub outcome: Outcome,
}

/// A tool list for one provider, with what had to give.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Export {
    /// The exported tools, in input order.
    pub tools: Vec<ExportedTool>,
    /// Tools left out, with the reasons.
    pub rejected: Vec<(String, Vec<Diagnostic>)>,
    /// Tools sent with the fallback profile, with the reasons.
    pub fell_back: Vec<(String, Vec<Diagnostic>)>,
}

impl Export {
    /// The tool list as the provider expects it (a JSON array).
    pub fn to_json(&self) -> Value {
        Value::Array(self.tools.iter().map(|t| t.json.clone()).collect())
    }

    /// The reverse map for a tool's arguments (OpenAI strict's injected `null`s).
    pub fn reverse(&self, tool_name: &str) -> Option<&ReverseMap> {
        self.tools
            .iter()
            .find(|t| t.name == tool_name)
            .map(|t| &t.outcome.reverse)
    }

    /// True when every tool was exported with the requested profile.
    pub fn is_clean(&self) -> bool {
        self.rejected.is_empty() && self.fell_back.is_empty()
    }

    /// A readable account of rejected and fallen-back tools (empty when clean).
    pub fn report(&self) -> String {
        let mut out = String::new();
        for (name, reasons) in &self.rejected {
            out.push_str(&format!("tool `{name}` left out:\n"));
            for r in reasons {
                out.push_str(&format!("  - {r}\n"));
            }
        }
        for (name, reasons) in &self.fell_back {
            out.push_str(&format!("tool `{name}` sent without the requested mode:\n"));
            for r in reasons {
                out.push_str(&format!("  - {r}\n"));
            }
        }
        out
    }

    /// The tool list, or the report when any tool was left out or fell back.
    pub fn into_result(self) -> Result<Value, String> {
        if self.is_clean() {
            Ok(self.to_json())
        } else {
            Err(self.report())
        }
    }
}

/// Exports `tools` for `profile` in `shape` (see the module docs).
pub fn export<S: SpecSource>(tools: &[S], profile: Profile, shape: ApiShape) -> Export {
    let mut out = Export::default();
    let mut strict_count = 0usize;
    let mut optional = 0usize;
    let mut unions = 0usize;
    for tool in tools {
        let spec = tool.tool_spec();
        if let Some(problem) = shape.check_name(&spec.name) {
            out.rejected
                .push((spec.name.clone(), vec![Diagnostic::request(problem)]));
            continue;
        }
        if let Some(e) = spec.parameters.error() {
            out.rejected
                .push((spec.name.clone(), vec![Diagnostic::request(e.to_string())]));
            continue;
        }
        let mut used = profile;
        let mut outcome = profile.apply(spec.parameters.json());
        if outcome.is_ok() && profile == Profile::AnthropicStrict {
            // Anthropic limits strict tools per request: tools past the budget go
            // non-strict instead of failing the whole request.
            let b = outcome.budget;
            let fits = strict_count < ANTHROPIC_MAX_STRICT_TOOLS
                && optional + b.optional_properties <= ANTHROPIC_MAX_OPTIONAL
                && unions + b.union_properties <= ANTHROPIC_MAX_UNIONS;
            if fits {
                strict_count += 1;
                optional += b.optional_properties;
                unions += b.union_properties;
            } else {
                outcome.errors.push(super::Diagnostic::request(format!(
                    "the request's strict-mode budget ({ANTHROPIC_MAX_STRICT_TOOLS} tools, \
                     {ANTHROPIC_MAX_OPTIONAL} optional properties, {ANTHROPIC_MAX_UNIONS} \
                     union properties) is used up by the tools before it"
                )));
            }
        }
        if !outcome.is_ok() {
            let reasons = outcome.errors.clone();
            match profile
                .fallback()
                .map(|f| (f, f.apply(spec.parameters.json())))
            {
                Some((fallback, o)) if o.is_ok() => {
                    out.fell_back.push((spec.name.clone(), reasons));
                    used = fallback;
                    outcome = o;
                }
                _ => {
                    out.rejected.push((spec.name.clone(), reasons));
                    continue;
                }
            }
        }
        let json = entry(shape, used, spec, &outcome.schema);
        out.tools.push(ExportedTool {
            name: spec.name.clone(),
            profile: used,
            json,
            outcome,
        });
    }
    out
}

fn description(spec: &ToolSpec) -> String {
    if spec.description.trim().is_empty() {
        spec.parameters
            .root_description()
            .unwrap_or_default()
            .to_owned()
    } else {
        spec.description.clone()
    }
}

fn has_parameters(schema: &Value) -> bool {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty())
        || schema
            .get("additionalProperties")
            .is_some_and(|a| a != &Value::Bool(false))
}

/// One tool entry in the provider's format.
fn entry(shape: ApiShape, profile: Profile, spec: &ToolSpec, schema: &Value) -> Value {
    let name = spec.name.clone();
    let description = description(spec);
    match shape {
        ApiShape::AnthropicMessages => {
            let mut m = Map::new();
            m.insert("name".into(), name.into());
            m.insert("description".into(), description.into());
            m.insert("input_schema".into(), schema.clone());
            if profile == Profile::AnthropicStrict {
                m.insert("strict".into(), true.into());
            }
            Value::Object(m)
        }
        ApiShape::OpenAiChat => json!({
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": schema,
                "strict": profile == Profile::OpenAiStrict,
            }
        }),
        ApiShape::OpenAiResponses => json!({
            "type": "function",
            "name": name,
            "description": description,
            "parameters": schema,
            "strict": profile == Profile::OpenAiStrict,
        }),
        ApiShape::Gemini => {
            let mut m = Map::new();
            m.insert("name".into(), name.into());
            m.insert("description".into(), description.into());
            if has_parameters(schema) {
                let field = if profile == Profile::GeminiOpenApi {
                    "parameters"
                } else {
                    "parametersJsonSchema"
                };
                m.insert(field.into(), schema.clone());
            }
            Value::Object(m)
        }
        ApiShape::Mcp => {
            let mut m = Map::new();
            m.insert("name".into(), name.into());
            if spec.label != spec.name && !spec.label.is_empty() {
                m.insert("title".into(), spec.label.clone().into());
            }
            m.insert("description".into(), description.into());
            m.insert("inputSchema".into(), schema.clone());
            if let Some(annotations) = spec.annotations.mcp_json() {
                m.insert("annotations".into(), annotations);
            }
            Value::Object(m)
        }
        ApiShape::Ollama => json!({
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": schema,
            }
        }),
    }
}
