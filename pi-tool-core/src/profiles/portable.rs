//! Checking wire schemas: [`verify`] re-checks a profile's rules on its output (an
//! independent second look, not a re-run of the passes), and [`assert_portable`] fails a
//! test when a provider would reject one of your tools.

use serde_json::{Map, Value};

use super::allow::{self, Allow};
use super::checks::{
    ANTHROPIC_MAX_OPTIONAL, ANTHROPIC_MAX_STRICT_TOOLS, ANTHROPIC_MAX_UNIONS, cyclic_edges,
};
use super::export::{ApiShape, SpecSource};
use super::{Profile, where_};
use crate::schema::MAX_DEPTH;
use crate::schema::keywords::{Step, for_each_child, types_of};

/// The rules a wire schema for `profile` must satisfy that `wire` breaks (empty when it
/// satisfies all): root shape, allowed keywords and formats, and per provider: closed
/// objects and all-required properties (strict), no `$ref` siblings, no tuples, no
/// recursion where it cannot be expressed, string-only enums (Gemini OpenAPI) ….
pub fn verify(profile: Profile, wire: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(root) = wire.as_object() else {
        return vec!["the schema is not a JSON object".to_owned()];
    };
    if types_of(root) != ["object"] {
        problems.push("the root is not `type: \"object\"`".to_owned());
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if root.contains_key(key) {
            problems.push(format!("root-level `{key}`"));
        }
    }
    if matches!(profile, Profile::AnthropicStrict | Profile::GeminiOpenApi)
        && !cyclic_edges(wire).is_empty()
    {
        problems.push("recursive `$ref`".to_owned());
    }
    let mut pointer = String::new();
    node(profile, root, &mut pointer, 0, &mut problems);
    problems
}

fn rules(profile: Profile) -> &'static Allow {
    match profile {
        Profile::Mcp => &allow::MCP,
        Profile::Anthropic | Profile::OpenAi => &allow::FULL,
        Profile::AnthropicStrict => &allow::ANTHROPIC_STRICT,
        Profile::OpenAiStrict => &allow::OPENAI_STRICT,
        Profile::Gemini => &allow::GEMINI,
        Profile::GeminiOpenApi => &allow::GEMINI_OPENAPI,
        Profile::Ollama => &allow::OLLAMA,
    }
}

fn node(
    profile: Profile,
    m: &Map<String, Value>,
    pointer: &mut String,
    depth: usize,
    problems: &mut Vec<String>,
) {
    if depth > MAX_DEPTH {
        problems.push(format!("{} nests too deep", where_(pointer)));
        return;
    }
    let mut bad = |what: String| problems.push(format!("{} {what}", where_(pointer)));
    let allow = rules(profile);
    for k in m.keys() {
        let k = k.as_str();
        let allowed = k == "description"
            || (k.starts_with("x-") && allow.keep_extensions)
            || (allow.keep.contains(&k) && !allow.drop.contains(&k));
        if !allowed {
            bad(format!(
                "has keyword `{k}`, which {profile} does not accept"
            ));
        }
    }
    if let (Some(formats), Some(f)) = (allow.formats, m.get("format").and_then(Value::as_str))
        && !formats.contains(&f)
    {
        bad(format!("has format `{f}`, which {profile} does not accept"));
    }
    let strict = matches!(profile, Profile::AnthropicStrict | Profile::OpenAiStrict);
    let no_one_of = profile != Profile::OpenAi;
    let no_const = matches!(
        profile,
        Profile::Mcp | Profile::Gemini | Profile::GeminiOpenApi | Profile::Ollama
    );
    let no_tuples = matches!(
        profile,
        Profile::OpenAi
            | Profile::OpenAiStrict
            | Profile::AnthropicStrict
            | Profile::GeminiOpenApi
            | Profile::Ollama
    );
    if no_one_of && m.contains_key("oneOf") {
        bad("has `oneOf`".into());
    }
    if no_const && m.contains_key("const") {
        bad("has `const`".into());
    }
    if no_tuples && m.contains_key("prefixItems") {
        bad("has `prefixItems`".into());
    }
    let types = types_of(m);
    let is_object = types.contains(&"object") || m.contains_key("properties");
    if matches!(profile, Profile::OpenAi | Profile::OpenAiStrict)
        && types.contains(&"array")
        && !m.contains_key("items")
    {
        bad("is an array without `items`".into());
    }
    let shaped = ["type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const"]
        .iter()
        .any(|k| m.contains_key(*k));
    if (strict || profile == Profile::GeminiOpenApi) && !shaped {
        bad("is untyped".into());
    }
    if strict && is_object {
        if m.get("additionalProperties") != Some(&Value::Bool(false)) {
            bad("is an object without `additionalProperties: false`".into());
        }
        if !m.get("properties").is_some_and(Value::is_object) {
            bad("is an object without `properties`".into());
        }
    }
    let names: Vec<&str> = m
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let required: Vec<&str> = m
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if profile == Profile::OpenAiStrict && is_object && names != required {
        bad("does not list every property in `required`, in order".into());
    }
    if matches!(profile, Profile::Gemini | Profile::GeminiOpenApi)
        && let Some(r) = required.iter().find(|r| !names.contains(r))
    {
        bad(format!("requires `{r}`, which is not a declared property"));
    }
    if let Some(Value::String(_)) = m.get("$ref") {
        let extra: Vec<&String> = m.keys().filter(|k| *k != "$ref").collect();
        let ok = match profile {
            Profile::OpenAi | Profile::OpenAiStrict | Profile::AnthropicStrict => extra.is_empty(),
            Profile::Gemini => extra
                .iter()
                .all(|k| matches!(k.as_str(), "description" | "default")),
            _ => true,
        };
        if !ok {
            bad("has keywords beside `$ref`".into());
        }
    }
    if profile == Profile::AnthropicStrict {
        if matches!(m.get("type"), Some(Value::Array(_))) {
            bad("has a `type` array".into());
        }
        if m.get("minItems")
            .and_then(Value::as_u64)
            .is_some_and(|n| n > 1)
        {
            bad("has `minItems` above 1".into());
        }
    }
    if profile == Profile::GeminiOpenApi {
        if matches!(m.get("type"), Some(Value::Array(_))) {
            bad("has a `type` array".into());
        }
        if let Some(Value::Array(values)) = m.get("enum")
            && !values.iter().all(Value::is_string)
        {
            bad("has a non-string `enum`".into());
        }
        if !pointer.is_empty() && types.contains(&"object") && names.is_empty() {
            bad("is an object without properties".into());
        }
    }
    for_each_child(m, |step, child| {
        let len = pointer.len();
        step.push_pointer(pointer);
        match child {
            Value::Object(c) => node(profile, c, pointer, depth + 1, problems),
            Value::Bool(_) if matches!(step, Step::Key("additionalProperties")) => {}
            _ => problems.push(format!("{} is not a schema object", where_(pointer))),
        }
        pointer.truncate(len);
    });
}

/// Every problem providers would have with `tools` under `profiles` (empty when none):
/// unusable schemas, profile errors, rule violations found by [`verify`], names the
/// provider rejects, and Anthropic's per-request strict budget.
pub fn portability_report<S: SpecSource>(tools: &[S], profiles: &[Profile]) -> Vec<String> {
    let mut problems = Vec::new();
    for &profile in profiles {
        let shape = ApiShape::default_for(profile);
        let (mut optional, mut unions) = (0usize, 0usize);
        for tool in tools {
            let spec = tool.tool_spec();
            let name = &spec.name;
            if let Some(p) = shape.check_name(name) {
                problems.push(format!("[{profile}] {p}"));
            }
            if let Some(e) = spec.parameters.error() {
                problems.push(format!("[{profile}] tool `{name}`: {e}"));
                continue;
            }
            let outcome = profile.apply(spec.parameters.json());
            for e in &outcome.errors {
                problems.push(format!("[{profile}] tool `{name}`: {e}"));
            }
            if outcome.is_ok() {
                for v in verify(profile, &outcome.schema) {
                    problems.push(format!("[{profile}] tool `{name}` (wire schema): {v}"));
                }
            }
            optional += outcome.budget.optional_properties;
            unions += outcome.budget.union_properties;
        }
        if profile == Profile::AnthropicStrict {
            if tools.len() > ANTHROPIC_MAX_STRICT_TOOLS {
                problems.push(format!(
                    "[{profile}] {} tools; one request may hold {ANTHROPIC_MAX_STRICT_TOOLS} strict tools",
                    tools.len()
                ));
            }
            if optional > ANTHROPIC_MAX_OPTIONAL {
                problems.push(format!(
                    "[{profile}] {optional} optional properties over all tools; one request may hold {ANTHROPIC_MAX_OPTIONAL}"
                ));
            }
            if unions > ANTHROPIC_MAX_UNIONS {
                problems.push(format!(
                    "[{profile}] {unions} union properties over all tools; one request may hold {ANTHROPIC_MAX_UNIONS}"
                ));
            }
        }
    }
    problems
}

/// Panics with a readable report when any provider in `profiles` would reject any of
/// `tools` (see [`portability_report`]). Meant for `cargo test`:
///
/// ```
/// use pi_tool_core::profiles::{Profile, assert_portable};
/// use pi_tool_core::{JsonSchema, ToolSpec};
/// use pi_tool_core::schema::ToolSchema;
///
/// /// Look up the weather.
/// #[derive(JsonSchema)]
/// struct Params {
///     /// City name
///     city: String,
///     /// Days to forecast
///     days: Option<u8>,
/// }
///
/// let spec = ToolSpec::new("get_weather", "Weather for a city", ToolSchema::for_type::<Params>());
/// assert_portable(&[spec], &Profile::ALL);
/// ```
#[track_caller]
pub fn assert_portable<S: SpecSource>(tools: &[S], profiles: &[Profile]) {
    let problems = portability_report(tools, profiles);
    if !problems.is_empty() {
        panic!(
            "{} portability problem(s):\n  - {}",
            problems.len(),
            problems.join("\n  - ")
        );
    }
}
