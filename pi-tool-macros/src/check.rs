//! Every rule the macro enforces, each with its own message, its span on the user's
//! tokens, and the fix. Errors are collected, not returned early, so that a function with
//! two independent mistakes shows both at once; a function with one mistake shows one.
//!
//! Type-level rules (the params type implements `Deserialize + JsonSchema`, the return type
//! is a tool result, `OnUpdate<D>` matches the details, the future is `Send`) cannot be
//! checked on syntax; `expand.rs` emits assertions for them, spanned on the same tokens.

use proc_macro2::Span;
use syn::{Attribute, Expr, Lit};

use crate::ast::{Output, Role, Success, ToolFn};
use crate::attr::Arg;
use crate::doc::{self, Doc};
use crate::names;

/// The keys `#[pi_tool]` understands (`crate` only on a free function: a `#[pi_tools]`
/// block takes it once for all its methods).
pub const KEYS: &[&str] = &[
    "name",
    "label",
    "description",
    "execution_mode",
    "prompt_snippet",
    "prompt_guidelines",
    "timeout",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "title",
    "crate",
];

/// The effect flags: a bare key means `true`; `key = true | false` is also accepted (to
/// declare, say, `open_world = false`). See `pi_tool::ToolAnnotations`.
pub const FLAGS: &[&str] = &["read_only", "destructive", "idempotent", "open_world"];

const NAME_RULE: &str = "tool names match ^[A-Za-z_][A-Za-z0-9_-]{0,63}$ (the names every major model provider accepts)";

/// The validated metadata of one tool.
pub struct Spec {
    pub name: String,
    /// Where the name was given (the `name` value, or the function's name).
    pub name_span: Span,
    pub label: String,
    pub description: Description,
    /// `Sequential` or `Parallel`.
    pub execution_mode: Option<&'static str>,
    pub timeout_ms: Option<u64>,
    pub prompt_snippet: Option<String>,
    pub prompt_guidelines: Vec<String>,
    /// The declared effects, in [`FLAGS`] order (`None`: not declared).
    pub effects: [Option<bool>; 4],
    /// The `title` annotation.
    pub title: Option<String>,
    /// The `crate = "..."` path of a free function (`None`: `::pi_tool`).
    pub krate: Option<syn::Path>,
}

/// Where the description comes from.
pub enum Description {
    Given(String),
    Doc(Doc),
}

/// Where the function stands.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A free function (or a method without `#[pi_tools]` on its impl).
    Free,
    /// A method of a `#[pi_tools]` impl block.
    Method,
}

/// An error with a `help:` line.
pub fn error(
    span: Span,
    message: impl std::fmt::Display,
    help: impl std::fmt::Display,
) -> syn::Error {
    syn::Error::new(span, format!("{message}\n\nhelp: {help}"))
}

/// An error spanning all of `tokens` (start to end), with a `help:` line. syn's
/// `Spanned::span` would keep only the first token on stable Rust.
pub fn error_at(
    tokens: impl quote::ToTokens,
    message: impl std::fmt::Display,
    help: impl std::fmt::Display,
) -> syn::Error {
    syn::Error::new_spanned(tokens, format!("{message}\n\nhelp: {help}"))
}

/// Checks the attribute arguments and the function; returns the spec or every error.
pub fn check(
    args: Vec<Arg>,
    attrs: &[Attribute],
    tool: &ToolFn,
    place: Place,
    errors: &mut Vec<syn::Error>,
) -> Option<Spec> {
    let before = errors.len();
    let keys = check_keys(args, place, errors);
    check_signature(tool, place, errors);

    let fn_name = tool.ident.to_string();
    let fn_name = fn_name.strip_prefix("r#").unwrap_or(&fn_name).to_owned();
    let (name, name_span) = match &keys.name {
        Some((name, span)) => {
            check_name(name, *span, false, errors);
            (name.clone(), *span)
        }
        None => {
            check_name(&fn_name, tool.ident.span(), true, errors);
            (fn_name, tool.ident.span())
        }
    };
    let label = match keys.label {
        Some((label, span)) => {
            if label.trim().is_empty() {
                errors.push(error(
                    span,
                    "the label is empty",
                    format!(
                        "remove `label` to use the default `{}`, or write a label for UIs",
                        names::humanise(&name)
                    ),
                ));
            }
            label
        }
        None => names::humanise(&name),
    };
    let description = match keys.description {
        Some((text, span)) => {
            if text.trim().is_empty() {
                errors.push(error(
                    span,
                    "the description is empty",
                    "the model chooses tools by their description: say what the tool does and when to call it",
                ));
            }
            Description::Given(text)
        }
        None => {
            let doc = doc::from_attrs(attrs);
            if doc.is_empty() {
                errors.push(error(
                    tool.ident.span(),
                    format!("the tool `{name}` has no description"),
                    "add a doc comment (`/// What it does and when to call it.`) or `description = \"...\"` to #[pi_tool]; the model chooses tools by their description",
                ));
            }
            Description::Doc(doc)
        }
    };
    if errors.len() > before {
        return None;
    }
    Some(Spec {
        name,
        name_span,
        label,
        description,
        execution_mode: keys.execution_mode,
        timeout_ms: keys.timeout_ms,
        prompt_snippet: keys.prompt_snippet,
        prompt_guidelines: keys.prompt_guidelines,
        effects: keys.effects.map(|e| e.map(|(value, _)| value)),
        title: keys.title,
        krate: keys.krate,
    })
}

#[derive(Default)]
struct Keys {
    name: Option<(String, Span)>,
    label: Option<(String, Span)>,
    description: Option<(String, Span)>,
    execution_mode: Option<&'static str>,
    timeout_ms: Option<u64>,
    prompt_snippet: Option<String>,
    prompt_guidelines: Vec<String>,
    /// Each flag's value and the span of its key.
    effects: [Option<(bool, Span)>; 4],
    title: Option<String>,
    krate: Option<syn::Path>,
}

fn check_keys(args: Vec<Arg>, place: Place, errors: &mut Vec<syn::Error>) -> Keys {
    let mut keys = Keys::default();
    let mut seen: Vec<String> = Vec::new();
    for Arg { key, value } in args {
        let key_name = key.to_string();
        if let Some(index) = FLAGS.iter().position(|f| *f == key_name) {
            if seen.contains(&key_name) {
                errors.push(error(
                    key.span(),
                    format!("`{key_name}` is given twice"),
                    format!("remove one of the `{key_name}` entries"),
                ));
                continue;
            }
            seen.push(key_name.clone());
            if let Some(flag) = flag_value(&key_name, value.as_ref(), errors) {
                keys.effects[index] = Some((flag, key.span()));
            }
            continue;
        }
        let Some(value) = value else {
            errors.push(error(
                key.span(),
                format!("`{key_name}` needs a value"),
                format!("write `{key_name} = \"...\"`; #[pi_tool] takes `key = value` pairs"),
            ));
            continue;
        };
        if !KEYS.contains(&key_name.as_str()) {
            errors.push(error(
                key.span(),
                format!("unknown key `{key_name}`"),
                unknown_key_help(&key_name, place),
            ));
            continue;
        }
        if key_name == "crate" && place == Place::Method {
            let written = match &value {
                Expr::Lit(lit) if matches!(lit.lit, Lit::Str(_)) => quote::quote!(#lit).to_string(),
                _ => "\"...\"".to_owned(),
            };
            errors.push(error(
                key.span(),
                "`crate` goes on #[pi_tools], not on one of its methods",
                format!("write #[pi_tools(crate = {written})] above the impl block: every tool of the block reaches pi-tool through that one path"),
            ));
            continue;
        }
        if seen.contains(&key_name) {
            errors.push(error(
                key.span(),
                format!("`{key_name}` is given twice"),
                format!("remove one of the `{key_name} = ...` entries"),
            ));
            continue;
        }
        seen.push(key_name.clone());
        if key_name == "prompt_guidelines" {
            keys.prompt_guidelines = string_array(&value, errors);
            continue;
        }
        if key_name == "crate" {
            keys.krate = crate::krate::path(&value, errors);
            continue;
        }
        let Some((text, span)) = string_value(&key_name, &value, errors) else {
            continue;
        };
        match key_name.as_str() {
            "name" => keys.name = Some((text, span)),
            "label" => keys.label = Some((text, span)),
            "description" => keys.description = Some((text, span)),
            "execution_mode" => {
                keys.execution_mode = match text.as_str() {
                    "sequential" => Some("Sequential"),
                    "parallel" => Some("Parallel"),
                    other => {
                        let help = match names::closest(other, &["sequential", "parallel"]) {
                            Some(s) => format!("did you mean `\"{s}\"`?"),
                            None => "write `execution_mode = \"parallel\"` or `execution_mode = \"sequential\"`".to_owned(),
                        };
                        errors.push(error(
                            span,
                            format!("unknown execution mode `\"{other}\"`: expected `\"sequential\"` or `\"parallel\"`"),
                            help,
                        ));
                        None
                    }
                }
            }
            "prompt_snippet" => {
                if text.contains('\n') {
                    errors.push(error(
                        span,
                        "`prompt_snippet` is one line of the system prompt's tool list",
                        "move longer guidance into `prompt_guidelines = [\"...\", \"...\"]`",
                    ));
                }
                keys.prompt_snippet = Some(text);
            }
            "title" => {
                if text.trim().is_empty() {
                    errors.push(error(
                        span,
                        "the title is empty",
                        "remove `title`, or write a short human title such as `title = \"Get weather\"`",
                    ));
                } else if text.contains('\n') {
                    errors.push(error(
                        span,
                        "the title spans more than one line",
                        "keep `title` to a short label; the description says the rest",
                    ));
                }
                keys.title = Some(text);
            }
            "timeout" => match parse_duration_ms(&text) {
                Ok(ms) => keys.timeout_ms = Some(ms),
                Err(why) => errors.push(error(
                    span,
                    format!("invalid timeout `\"{text}\"`: {why}"),
                    "write a whole number with a unit: `\"500ms\"`, `\"30s\"`, `\"2m\"` or `\"1h\"`",
                )),
            },
            _ => {}
        }
    }
    check_effects(&keys.effects, errors);
    keys
}

/// A flag's value: bare (`read_only`) is `true`; `read_only = true | false` is the literal.
fn flag_value(key: &str, value: Option<&Expr>, errors: &mut Vec<syn::Error>) -> Option<bool> {
    match value {
        None => Some(true),
        Some(Expr::Lit(lit)) if matches!(lit.lit, Lit::Bool(_)) => match &lit.lit {
            Lit::Bool(b) => Some(b.value),
            _ => None,
        },
        Some(other) => {
            errors.push(error_at(
                other,
                format!("`{key}` is a flag"),
                format!("write `{key}` alone (it means `{key} = true`), or `{key} = false`"),
            ));
            None
        }
    }
}

/// MCP's rule: `destructive` and `idempotent` mean something only for a tool that is not
/// read-only. A read-only tool changes nothing, so it is idempotent and never destructive;
/// saying either next to `read_only` is a contradiction or noise, and both are errors.
fn check_effects(effects: &[Option<(bool, Span)>; 4], errors: &mut Vec<syn::Error>) {
    let Some((true, _)) = effects[0] else {
        return;
    };
    if let Some((value, span)) = effects[1] {
        let (message, help) = if value {
            (
                "a tool cannot be both `read_only` and `destructive`",
                "remove `read_only` if the tool changes or deletes anything; otherwise remove `destructive`",
            )
        } else {
            (
                "`destructive = false` says nothing on a `read_only` tool",
                "remove `destructive = false`: a read-only tool is never destructive",
            )
        };
        errors.push(error(span, message, help));
    }
    if let Some((_, span)) = effects[2] {
        errors.push(error(
            span,
            "`idempotent` says nothing on a `read_only` tool",
            "remove `idempotent`: a read-only tool changes nothing, so calling it again is always safe (MCP reads `idempotentHint` only when `readOnlyHint` is false)",
        ));
    }
}

/// The fix for an unknown `#[pi_tool]` key: the closest key, or the list of keys.
fn unknown_key_help(key: &str, place: Place) -> String {
    match names::closest(key, KEYS) {
        Some("crate") if place == Place::Method => {
            "did you mean `crate`? It goes on the block: #[pi_tools(crate = \"...\")]".to_owned()
        }
        Some(suggestion) => format!("did you mean `{suggestion}`?"),
        None => format!(
            "the keys are {}",
            KEYS.iter()
                .filter(|k| place == Place::Free || **k != "crate")
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A string literal value, or an error that shows how to write one.
fn string_value(key: &str, value: &Expr, errors: &mut Vec<syn::Error>) -> Option<(String, Span)> {
    if let Expr::Lit(lit) = value
        && let Lit::Str(s) = &lit.lit
    {
        return Some((s.value(), s.span()));
    }
    let example = match key {
        "name" => "name = \"get_weather\"",
        "label" => "label = \"Get weather\"",
        "description" => "description = \"What the tool does and when to call it.\"",
        "execution_mode" => "execution_mode = \"parallel\"",
        "prompt_snippet" => "prompt_snippet = \"One line for the tool list\"",
        "title" => "title = \"Get weather\"",
        _ => "timeout = \"30s\"",
    };
    errors.push(error_at(
        value,
        format!("`{key}` takes a string literal"),
        format!("write `{example}`"),
    ));
    None
}

fn string_array(value: &Expr, errors: &mut Vec<syn::Error>) -> Vec<String> {
    let Expr::Array(array) = value else {
        errors.push(error_at(
            value,
            "`prompt_guidelines` takes an array of string literals",
            "write `prompt_guidelines = [\"Use for ...\", \"Never ...\"]`",
        ));
        return Vec::new();
    };
    let mut out = Vec::new();
    for elem in &array.elems {
        if let Expr::Lit(lit) = elem
            && let Lit::Str(s) = &lit.lit
        {
            out.push(s.value());
        } else {
            errors.push(error_at(
                elem,
                "each of `prompt_guidelines` must be a string literal",
                "write `prompt_guidelines = [\"Use for ...\", \"Never ...\"]`",
            ));
        }
    }
    out
}

/// `"500ms"`, `"30s"`, `"2m"`, `"1h"` -> milliseconds.
pub fn parse_duration_ms(text: &str) -> Result<u64, String> {
    let digits = text.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 {
        return Err("it does not start with a number".to_owned());
    }
    let (number, unit) = text.split_at(digits);
    let number: u64 = number
        .parse()
        .map_err(|_| "the number is too large".to_owned())?;
    let factor = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "" => return Err("the unit is missing".to_owned()),
        other => return Err(format!("unknown unit `{other}`")),
    };
    let ms = number
        .checked_mul(factor)
        .ok_or_else(|| "the duration is too large".to_owned())?;
    if ms == 0 {
        return Err("a zero timeout would fail every call".to_owned());
    }
    Ok(ms)
}

fn check_name(name: &str, span: Span, from_fn: bool, errors: &mut Vec<syn::Error>) {
    let how = if from_fn {
        "set a valid name with #[pi_tool(name = \"...\")]"
    } else {
        "use only ASCII letters, digits, `_` and `-`"
    };
    if name.is_empty() {
        errors.push(error(
            span,
            "the tool name is empty",
            format!("{NAME_RULE}; for example `name = \"get_weather\"`"),
        ));
        return;
    }
    let len = name.chars().count();
    if len > 64 {
        errors.push(error(
            span,
            format!("the tool name is {len} characters long; the limit is 64"),
            format!(
                "{NAME_RULE}; shorten it{}",
                if from_fn {
                    " with #[pi_tool(name = \"...\")]"
                } else {
                    ""
                }
            ),
        ));
        return;
    }
    let first = name.chars().next().unwrap_or('_');
    if first.is_ascii_digit() || first == '-' {
        errors.push(error(
            span,
            format!("the tool name `{name}` starts with `{first}`"),
            format!("{NAME_RULE}; try `{}`", names::sanitise(name)),
        ));
        return;
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        errors.push(error(
            span,
            format!("the tool name `{name}` contains `{bad}`"),
            format!(
                "{NAME_RULE}; {how}, for example `{}`",
                names::sanitise(name)
            ),
        ));
    }
}

fn check_signature(tool: &ToolFn, place: Place, errors: &mut Vec<syn::Error>) {
    let sig = &tool.sig;
    if sig.asyncness.is_none() {
        errors.push(error(
            sig.fn_token.span,
            "a tool function must be `async`",
            format!("write `async fn {}(...)`", tool.ident),
        ));
    }
    if let syn::Safety::Unsafe(u) = &sig.safety {
        errors.push(error(
            u.span,
            "a tool function cannot be `unsafe`: the model decides when it runs",
            "remove `unsafe` and keep the unsafe block inside the function",
        ));
    }
    if let Some(abi) = &sig.abi {
        errors.push(error_at(
            abi,
            "a tool function cannot be `extern`",
            "remove the ABI",
        ));
    }
    if let Some(v) = &sig.variadic {
        errors.push(error_at(
            v,
            "a tool function cannot be variadic",
            "remove `...`",
        ));
    }
    let type_params: Vec<_> = sig
        .generics
        .params
        .iter()
        .filter(|p| !matches!(p, syn::GenericParam::Lifetime(_)))
        .collect();
    if let Some(first) = type_params.first() {
        errors.push(error_at(
            first,
            "a tool function cannot be generic",
            "the model's arguments need one concrete params type: replace the type parameter with a concrete type",
        ));
    } else if let Some(w) = &sig.generics.where_clause {
        errors.push(error_at(
            w,
            "a tool function cannot have a `where` clause",
            "use concrete types",
        ));
    }

    match (&tool.receiver, place) {
        (Some(r), Place::Free) => errors.push(error_at(
            &r.span_tokens,
            "`self` in a #[pi_tool] function outside #[pi_tools]",
            "put #[pi_tools] on the impl block: its #[pi_tool] methods become tools sharing `&self` behind an `Arc`",
        )),
        (Some(r), Place::Method) if !r.is_shared_ref => errors.push(error_at(
            &r.span_tokens,
            "a #[pi_tools] method takes `&self`",
            "tools share their state behind an `Arc` and may run concurrently: take `&self` and use interior mutability (a `Mutex`, an atomic) for changes",
        )),
        (None, Place::Method) => errors.push(error(
            tool.ident.span(),
            "a #[pi_tool] method in #[pi_tools] takes `&self`",
            "add `&self` as the first argument, or move the function out of the impl block and use #[pi_tool] on it alone",
        )),
        _ => {}
    }

    match &tool.output {
        Output::Missing(span) => errors.push(error(
            *span,
            "a tool function returns `Result<T, E>`",
            "add a return type, for example `-> Result<String, ToolError>` or `-> Result<AgentToolResult<Details>, ToolError>`",
        )),
        Output::NotResult(ty) => errors.push(error_at(
            ty,
            format!("a tool function returns `Result<T, E>`, not `{}`", quote::quote!(#ty).to_string().replace(" < ", "<").replace(" >", ">").replace(" ,", ",")),
            "return `Result<AgentToolResult<D>, ToolError>` or `Result<String, ToolError>` and wrap the value in `Ok(...)`; errors become error results the model reads",
        )),
        Output::Result { success: Success::Invalid(ok), .. } => errors.push(error_at(
            ok,
            format!("`{}` is not a tool result", quote::quote!(#ok).to_string().replace(" < ", "<").replace(" >", ">").replace(" ,", ",")),
            "return `AgentToolResult<D>` (text for the model plus typed details), or a `String` for the model to read: `Ok(value.to_string())`",
        )),
        Output::Result { .. } => {}
    }

    let mut params_seen: Option<&syn::Type> = None;
    let mut last_position = 0usize;
    let mut last_role = "";
    let mut seen_roles: Vec<usize> = Vec::new();
    for arg in &tool.args {
        if let syn::Type::ImplTrait(_) = &arg.ty {
            errors.push(error_at(
                &arg.ty,
                "a tool function cannot take `impl Trait`",
                "the model's arguments need one concrete params type",
            ));
            continue;
        }
        match &arg.role {
            Role::CallId => {
                if let syn::Type::Reference(r) = &arg.ty
                    && r.lifetime.as_ref().is_some_and(|l| l.ident == "static")
                {
                    errors.push(error_at(
                        &arg.ty,
                        "the call id is borrowed for the call only, not `'static`",
                        "take `&str` (or `String::from` it inside the function to keep it)",
                    ));
                    continue;
                }
            }
            Role::ByReference { what: "params" } => {
                errors.push(error_at(
                    &arg.ty,
                    "the params argument is taken by value",
                    "remove the `&`: the tool owns its deserialised params",
                ));
                continue;
            }
            Role::ByReference { what } => {
                errors.push(error_at(
                    &arg.ty,
                    format!("`{what}` is taken by value"),
                    format!("remove the `&`: `{what}` is cheap to clone"),
                ));
                continue;
            }
            // rustc reports the missing generic itself (see `ToolFn::defers_to_rustc`).
            Role::BareOnUpdate => continue,
            Role::Params => {
                if let Some(first) = params_seen {
                    errors.push(error_at(
                        &arg.ty,
                        format!(
                            "a tool takes one params argument, and `{}` already is it",
                            quote::quote!(#first).to_string().replace(' ', "")
                        ),
                        "put all fields into one params struct; the other arguments are recognised by type: `&str` (call id), `AbortSignal`, `OnUpdate<D>`, `ExtensionContext`",
                    ));
                    continue;
                }
                params_seen = Some(&arg.ty);
            }
            _ => {}
        }
        let position = arg.role.position();
        if seen_roles.contains(&position) {
            errors.push(error_at(
                &arg.ty,
                format!("a second {} argument", arg.role.describe()),
                "each role appears at most once: remove this argument",
            ));
            continue;
        }
        if position < last_position {
            errors.push(error_at(
                &arg.ty,
                format!("the {} argument comes after the {} argument", arg.role.describe(), last_role),
                "arguments follow Pi's order: call id (`&str`), params, `AbortSignal`, `OnUpdate<D>`, `ExtensionContext`; leave out the ones you do not need",
            ));
            continue;
        }
        seen_roles.push(position);
        last_position = position;
        last_role = arg.role.describe();
    }
}

#[cfg(test)]
mod tests {
    use super::parse_duration_ms;

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ms("500ms"), Ok(500));
        assert_eq!(parse_duration_ms("30s"), Ok(30_000));
        assert_eq!(parse_duration_ms("2m"), Ok(120_000));
        assert_eq!(parse_duration_ms("1h"), Ok(3_600_000));
        assert!(parse_duration_ms("0s").is_err());
        assert!(
            parse_duration_ms("30")
                .unwrap_err()
                .contains("unit is missing")
        );
        assert!(
            parse_duration_ms("30 s")
                .unwrap_err()
                .contains("unknown unit")
        );
        assert!(parse_duration_ms("s").is_err());
        assert!(parse_duration_ms("99999999999999999999h").is_err());
        assert!(
            parse_duration_ms("9999999999999999h")
                .unwrap_err()
                .contains("too large")
        );
    }
}
