//! Provider schema profiles: the wire schema each model API accepts, derived from the
//! canonical (normalised) parameter schema.
//!
//! # The model
//!
//! A tool's [`ToolSchema`](crate::schema::ToolSchema) holds one canonical schema (schemars output
//! after [`normalize`]): it is what arguments are validated
//! against. Each provider accepts a different subset of JSON Schema, and a schema it
//! rejects fails the *whole request* (every tool), so what is sent is derived per
//! provider by pure `Value → Value` passes, a [`Profile`]:
//!
//! | profile | for | in short |
//! |---|---|---|
//! | [`Profile::Mcp`] | MCP `tools/list` `inputSchema` | portable 2020-12: `oneOf`→`anyOf`, `const`→`enum`; hosts forward it verbatim to any of the below; `x-*` extensions kept, `x-mcp-header` declarations checked (an error, left out, when MCP clients would refuse them) |
//! | [`Profile::Anthropic`] | Messages `input_schema` | 2020-12, `oneOf`→`anyOf` |
//! | [`Profile::AnthropicStrict`] | `strict: true` tools | closed objects, no recursion/maps/`Value`, unsupported keywords described |
//! | [`Profile::OpenAi`] | Chat/Responses, `strict: false` | tuples as `items`, `$ref` siblings wrapped |
//! | [`Profile::OpenAiStrict`] | `strict: true` | every property required (optional ones nullable), closed objects, subset keywords |
//! | [`Profile::Gemini`] | `parametersJsonSchema` | Gemini's JSON Schema subset |
//! | [`Profile::GeminiOpenApi`] | `parameters` (OpenAPI proto) | allow-list only (any other key is a 400), `nullable`, no `$ref` |
//! | [`Profile::Ollama`] | Ollama / local servers | the few keywords their templates render; the rest as words |
//!
//! Every profile first runs [`normalize`] (a no-op on a
//! canonical schema), so a hand-written JSON Schema is handled the same way.
//! Each returns an [`Outcome`]: the wire schema, warnings, errors (non-empty ⇒ the
//! provider would reject the tool in that mode) and a [`ReverseMap`] that undoes on the
//! model's arguments what the wire schema added (OpenAI strict's injected `null`s).
//! Keywords a provider does not support are not silently dropped: they move into the
//! description (`minLength: 1`, `format: uri`), so the model still reads them, while
//! the canonical schema still enforces them.
//!
//! # What the profiles deliberately do not do
//!
//! * Maps (`HashMap<String, T>`), free-form objects (`serde_json::Map`, flattened maps)
//!   and `serde_json::Value` fields cannot be expressed under `openai-strict`,
//!   `anthropic-strict` or `gemini-openapi`: they are errors (and [`export`] falls back to
//!   the non-strict profile), not silently rewritten. Use a struct, a `Vec` of key/value
//!   structs, or a `String` holding JSON.
//! * Recursion under `anthropic-strict` and `gemini-openapi` is an error; `gemini` allows
//!   it only through optional properties; `ollama` expands each recursive type once and
//!   describes the rest in words.
//! * `#[serde(alias)]` names are invisible to every schema.
//! * Root unions that cannot be merged into one object (N5) are errors everywhere.
//!
//! [`export`] builds each provider's tool list JSON; [`assert_portable`] is a test
//! helper that fails when a provider would reject one of your tools; [`verify`]
//! re-checks a wire schema against a profile's rules.

mod allow;
mod checks;
mod export;
mod passes;
mod portable;
mod reverse;
mod strict;

use std::fmt;

use serde_json::Value;

use crate::schema::normalize;

pub use checks::Budget;
pub use export::{ApiShape, Export, ExportedTool, SpecSource, export};
pub use portable::{assert_portable, portability_report, verify};
pub use reverse::ReverseMap;

/// A provider's schema dialect (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Profile {
    /// MCP `inputSchema`, portable across the hosts that forward it.
    Mcp,
    /// Anthropic Messages `input_schema`.
    Anthropic,
    /// Anthropic strict tool use (`strict: true`).
    AnthropicStrict,
    /// OpenAI Chat Completions / Responses with `strict: false`.
    OpenAi,
    /// OpenAI Structured Outputs function calling (`strict: true`).
    OpenAiStrict,
    /// Gemini `parametersJsonSchema`.
    Gemini,
    /// Gemini `parameters` (OpenAPI 3.0 subset; Live API and older SDK paths).
    GeminiOpenApi,
    /// Ollama and other local OpenAI-compatible servers.
    Ollama,
}

impl Profile {
    /// Every profile, in the order of the module docs.
    pub const ALL: [Profile; 8] = [
        Profile::Mcp,
        Profile::Anthropic,
        Profile::AnthropicStrict,
        Profile::OpenAi,
        Profile::OpenAiStrict,
        Profile::Gemini,
        Profile::GeminiOpenApi,
        Profile::Ollama,
    ];

    /// The profile's name: `mcp`, `anthropic-strict`, `gemini-openapi` …
    pub fn name(self) -> &'static str {
        match self {
            Profile::Mcp => "mcp",
            Profile::Anthropic => "anthropic",
            Profile::AnthropicStrict => "anthropic-strict",
            Profile::OpenAi => "openai",
            Profile::OpenAiStrict => "openai-strict",
            Profile::Gemini => "gemini",
            Profile::GeminiOpenApi => "gemini-openapi",
            Profile::Ollama => "ollama",
        }
    }

    /// The profile a tool falls back to when this one rejects it (strict → non-strict,
    /// `gemini-openapi` → `gemini`).
    pub fn fallback(self) -> Option<Profile> {
        match self {
            Profile::AnthropicStrict => Some(Profile::Anthropic),
            Profile::OpenAiStrict => Some(Profile::OpenAi),
            Profile::GeminiOpenApi => Some(Profile::Gemini),
            _ => None,
        }
    }

    /// Derives this provider's wire schema from a canonical (normalised) schema.
    pub fn apply(self, schema: &Value) -> Outcome {
        match self {
            Profile::Mcp => mcp(schema),
            Profile::Anthropic => anthropic(schema),
            Profile::AnthropicStrict => anthropic_strict(schema),
            Profile::OpenAi => openai(schema),
            Profile::OpenAiStrict => openai_strict(schema),
            Profile::Gemini => gemini(schema),
            Profile::GeminiOpenApi => gemini_openapi(schema),
            Profile::Ollama => ollama(schema),
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A profile's result for one schema.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Outcome {
    /// The schema to send.
    pub schema: Value,
    /// What was lost or approximated (a map described in words, recursion cut …).
    pub warnings: Vec<Diagnostic>,
    /// Why the provider would reject this schema in this mode; empty when it is fine.
    pub errors: Vec<Diagnostic>,
    /// What to undo on the model's arguments before validation.
    pub reverse: ReverseMap,
    /// Sizes providers limit.
    pub budget: Budget,
}

impl Outcome {
    /// True when the provider accepts the schema in this mode.
    pub fn is_ok(&self) -> bool {
        self.errors.is_empty()
    }
}

/// One error or warning of a profile: where in the schema, and what. `Display` gives
/// the line a user reads (`parameter tags: ...`); it serialises as that line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pointer: String,
    line: String,
}

impl Diagnostic {
    pub(crate) fn new(pointer: &str, message: &str) -> Self {
        Diagnostic {
            pointer: pointer.to_owned(),
            line: format!("{} {message}", where_(pointer)),
        }
    }

    /// A diagnostic about the request as a whole rather than one schema node.
    pub(crate) fn request(line: String) -> Self {
        Diagnostic {
            pointer: String::new(),
            line,
        }
    }

    /// The JSON pointer of the schema node it is about (empty: the whole schema).
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// The line a user reads.
    pub fn as_str(&self) -> &str {
        &self.line
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.line)
    }
}

impl serde::Serialize for Diagnostic {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.line)
    }
}

/// Messages collected while a profile runs.
pub(crate) struct Ctx {
    pub(crate) warnings: Vec<Diagnostic>,
    pub(crate) errors: Vec<Diagnostic>,
    pub(crate) reverse: ReverseMap,
}

impl Ctx {
    fn new() -> Ctx {
        Ctx {
            warnings: Vec::new(),
            errors: Vec::new(),
            reverse: ReverseMap::default(),
        }
    }

    pub(crate) fn error(&mut self, pointer: &str, message: &str) {
        let diagnostic = Diagnostic::new(pointer, message);
        if !self.errors.contains(&diagnostic) {
            self.errors.push(diagnostic);
        }
    }

    pub(crate) fn warn(&mut self, pointer: &str, message: &str) {
        let diagnostic = Diagnostic::new(pointer, message);
        if !self.warnings.contains(&diagnostic) {
            self.warnings.push(diagnostic);
        }
    }

    fn finish(self, schema: Value) -> Outcome {
        let budget = Budget::of(&schema);
        Outcome {
            schema,
            warnings: self.warnings,
            errors: self.errors,
            reverse: self.reverse,
            budget,
        }
    }
}

/// `the schema` / `/properties/tags` → the field the model knows: `parameter tags`.
pub(crate) fn where_(pointer: &str) -> String {
    if pointer.is_empty() {
        return "the schema".to_owned();
    }
    let mut field = String::new();
    let mut segments = pointer.split('/').skip(1).peekable();
    while let Some(seg) = segments.next() {
        match seg {
            "properties" => {
                if let Some(name) = segments.next() {
                    if !field.is_empty() {
                        field.push('.');
                    }
                    field.push_str(&name.replace("~1", "/").replace("~0", "~"));
                }
            }
            "items" | "additionalProperties" => field.push_str("[]"),
            "$defs" => {
                if let Some(name) = segments.next() {
                    field = name.replace("~1", "/").replace("~0", "~");
                }
            }
            _ => {}
        }
    }
    if field.is_empty() {
        format!("`{pointer}`")
    } else {
        format!("`{field}` ({pointer})")
    }
}

/// Every profile starts from the canonical form: [`normalize`] is a no-op on a schema
/// that is already normalised (what [`ToolSchema`](crate::schema::ToolSchema) holds) and makes
/// any other JSON Schema (hand-written, or raw schemars output) safe for the passes.
fn start(schema: &Value) -> (Value, Ctx) {
    let mut ctx = Ctx::new();
    match normalize(schema.clone()) {
        Ok(n) => {
            ctx.warnings
                .extend(n.warnings.into_iter().map(Diagnostic::request));
            (n.schema, ctx)
        }
        Err(e) => {
            ctx.error("", &e.to_string());
            (schema.clone(), ctx)
        }
    }
}

type Pass = fn(&mut serde_json::Map<String, Value>, &str, &mut Ctx);

fn run(schema: &mut Value, ctx: &mut Ctx, pass: Pass) {
    passes::each_node(schema, ctx, &mut |m, p, c| pass(m, p, c));
}

fn allow(schema: &mut Value, ctx: &mut Ctx, rules: &allow::Allow) {
    passes::each_node(schema, ctx, &mut |m, p, c| rules.apply(m, p, c));
}

/// `mcp`: the portable schema for MCP `inputSchema`.
pub fn mcp(schema: &Value) -> Outcome {
    let (mut s, mut ctx) = start(schema);
    checks::check_root(&s, &mut ctx);
    run(&mut s, &mut ctx, passes::one_of_to_any_of);
    run(&mut s, &mut ctx, passes::const_to_enum);
    allow(&mut s, &mut ctx, &allow::MCP);
    run(&mut s, &mut ctx, passes::drop_additional_true);
    checks::mcp_param_headers(&mut s, &mut ctx);
    checks::mcp_no_params(&mut s);
    ctx.finish(s)
}

/// `mcp`, for a schema listed as declared
/// ([`ToolSchema::declared`](crate::schema::ToolSchema::declared)): nothing is normalised,
/// resolved or dropped (`$schema`, `$defs`/`$ref`, `$anchor`, `allOf`/`anyOf`,
/// `if`/`then`/`else` stay as written, and a `$ref` is never dereferenced), only MCP's
/// own rules are applied as [`mcp`] applies them: `x-mcp-header` declarations are checked
/// (an error, left out, when MCP clients would refuse them), and a schema without
/// parameters is listed as `{"type": "object", "additionalProperties": false}`.
///
/// ```
/// use pi_tool_core::json;
///
/// let declared = json!({
///     "$schema": "https://json-schema.org/draft/2020-12/schema",
///     "type": "object",
///     "$defs": {"id": {"type": "string"}},
///     "properties": {"id": {"$ref": "#/$defs/id"}},
///     "if": {"required": ["id"]}, "then": {}, "else": {}
/// });
/// let outcome = pi_tool_core::profiles::mcp_declared(&declared);
/// assert_eq!(outcome.schema, declared);
/// assert!(outcome.errors.is_empty());
/// ```
pub fn mcp_declared(schema: &Value) -> Outcome {
    let mut ctx = Ctx::new();
    let mut s = schema.clone();
    if !s.is_object() {
        ctx.error("", "the schema is not a JSON object");
    }
    checks::mcp_param_headers(&mut s, &mut ctx);
    checks::mcp_no_params(&mut s);
    ctx.finish(s)
}

/// `anthropic`: Messages `input_schema` without strict mode.
pub fn anthropic(schema: &Value) -> Outcome {
    let (mut s, mut ctx) = start(schema);
    checks::check_root(&s, &mut ctx);
    run(&mut s, &mut ctx, passes::one_of_to_any_of);
    allow(&mut s, &mut ctx, &allow::FULL);
    run(&mut s, &mut ctx, passes::drop_additional_true);
    ctx.finish(s)
}

/// `anthropic-strict`: strict tool use (constrained decoding).
pub fn anthropic_strict(schema: &Value) -> Outcome {
    let (mut s, mut ctx) = start(schema);
    checks::check_root(&s, &mut ctx);
    checks::forbid_recursion(
        &s,
        &mut ctx,
        "Anthropic strict mode cannot express recursion",
    );
    run(&mut s, &mut ctx, passes::one_of_to_any_of);
    run(&mut s, &mut ctx, passes::tuple_to_items);
    run(&mut s, &mut ctx, passes::drop_default_null);
    run(&mut s, &mut ctx, passes::type_array_to_any_of);
    run(&mut s, &mut ctx, strict::untyped_check);
    strict::strict_objects(&mut s, false, &mut ctx);
    allow(&mut s, &mut ctx, &allow::ANTHROPIC_STRICT);
    let budget = Budget::of(&s);
    checks::anthropic_limits(&budget, &mut ctx);
    ctx.finish(s)
}

/// `openai`: Chat Completions / Responses with `strict: false`.
pub fn openai(schema: &Value) -> Outcome {
    let (mut s, mut ctx) = start(schema);
    checks::check_root(&s, &mut ctx);
    run(&mut s, &mut ctx, passes::tuple_to_items);
    run(&mut s, &mut ctx, passes::ref_siblings_any_of);
    allow(&mut s, &mut ctx, &allow::FULL);
    run(&mut s, &mut ctx, passes::drop_additional_true);
    ctx.finish(s)
}

/// `openai-strict`: Structured Outputs function calling (`strict: true`).
pub fn openai_strict(schema: &Value) -> Outcome {
    let (mut s, mut ctx) = start(schema);
    checks::check_root(&s, &mut ctx);
    run(&mut s, &mut ctx, passes::tuple_to_items);
    run(&mut s, &mut ctx, passes::one_of_to_any_of);
    run(&mut s, &mut ctx, passes::ref_siblings_any_of);
    run(&mut s, &mut ctx, strict::untyped_check);
    strict::strict_objects(&mut s, true, &mut ctx);
    run(&mut s, &mut ctx, passes::lookaround_pattern_to_description);
    allow(&mut s, &mut ctx, &allow::OPENAI_STRICT);
    let budget = Budget::of(&s);
    checks::openai_limits(&budget, &mut ctx);
    ctx.finish(s)
}

/// `gemini`: `parametersJsonSchema` (preferred for Gemini).
pub fn gemini(schema: &Value) -> Outcome {
    let (mut s, mut ctx) = start(schema);
    checks::check_root(&s, &mut ctx);
    checks::gemini_recursion(&s, &mut ctx);
    run(&mut s, &mut ctx, passes::one_of_to_any_of);
    run(&mut s, &mut ctx, passes::const_to_enum);
    run(&mut s, &mut ctx, passes::ref_siblings_description_only);
    allow(&mut s, &mut ctx, &allow::GEMINI);
    run(&mut s, &mut ctx, passes::required_only_declared);
    run(&mut s, &mut ctx, passes::drop_additional_true);
    ctx.finish(s)
}

/// `gemini-openapi`: `parameters` (OpenAPI 3.0 proto; any unknown key fails the request).
pub fn gemini_openapi(schema: &Value) -> Outcome {
    let (mut s, mut ctx) = start(schema);
    checks::check_root(&s, &mut ctx);
    checks::forbid_recursion(&s, &mut ctx, "Gemini's OpenAPI schema has no `$ref`");
    run(&mut s, &mut ctx, passes::one_of_to_any_of);
    run(&mut s, &mut ctx, passes::const_to_enum);
    run(&mut s, &mut ctx, passes::tuple_to_items);
    run(&mut s, &mut ctx, strict::untyped_check);
    run(&mut s, &mut ctx, passes::nullable);
    run(&mut s, &mut ctx, passes::enum_strings);
    run(&mut s, &mut ctx, passes::drop_additional_properties);
    run(&mut s, &mut ctx, passes::examples_to_example);
    allow(&mut s, &mut ctx, &allow::GEMINI_OPENAPI);
    run(&mut s, &mut ctx, passes::objects_have_properties);
    run(&mut s, &mut ctx, passes::property_ordering);
    run(&mut s, &mut ctx, passes::required_only_declared);
    ctx.finish(s)
}

/// `ollama`: Ollama and other local OpenAI-compatible servers.
pub fn ollama(schema: &Value) -> Outcome {
    let (mut s, mut ctx) = start(schema);
    checks::check_root(&s, &mut ctx);
    checks::cut_recursion(&mut s, &mut ctx);
    run(&mut s, &mut ctx, passes::one_of_to_any_of);
    run(&mut s, &mut ctx, passes::const_to_enum);
    run(&mut s, &mut ctx, passes::tuple_to_items);
    allow(&mut s, &mut ctx, &allow::OLLAMA);
    ctx.finish(s)
}
