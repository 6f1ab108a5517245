//! Decoding of `#[pi_tool(...)]` values: each key's expression becomes the Rust value it
//! stands for (a string, a flag, a list of strings, a duration, an execution mode, a
//! path), or an error saying how that key is written.
//!
//! Only the form of each value is decided here (and which keys exist, once each);
//! what a well-formed value may say (a valid name, a one-line title, effects that agree)
//! is the job of `check.rs`.

use proc_macro2::Span;
use syn::{Expr, Lit};

use crate::ast::Place;
use crate::attr::Arg;
use crate::error::{error, error_at};
use crate::names;

/// The keys `#[pi_tool]` understands (`crate` only on a free function: a `#[pi_tools]`
/// block takes it once for all its methods).
pub const KEYS: &[&str] = &[
    "name",
    "label",
    "description",
    "execution_mode",
    "task_support",
    "prompt_snippet",
    "prompt_guidelines",
    "reaches",
    "concurrency",
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

/// The decoded keys, each with the span of what the user wrote where a rule may need it.
#[derive(Default)]
pub struct Keys {
    pub name: Option<(String, Span)>,
    pub label: Option<(String, Span)>,
    pub description: Option<(String, Span)>,
    /// `Sequential` or `Parallel`.
    pub execution_mode: Option<&'static str>,
    /// `Forbidden`, `Optional` or `Required`.
    pub task_support: Option<&'static str>,
    pub timeout_ms: Option<u64>,
    pub prompt_snippet: Option<(String, Span)>,
    pub prompt_guidelines: Vec<String>,
    /// The tools it may call through its context, each with its literal's span.
    pub reaches: Vec<(String, Span)>,
    /// The concurrency class, its weight and the class name's span.
    pub concurrency: Option<(String, u32, Span)>,
    /// Each flag's value and the span of its key, in [`FLAGS`] order.
    pub effects: [Option<(bool, Span)>; 4],
    pub title: Option<(String, Span)>,
    pub krate: Option<syn::Path>,
}

/// Decodes the arguments of one `#[pi_tool(...)]`; a key that cannot be decoded is left
/// out of the result, with its error in `errors`.
pub fn decode(args: Vec<Arg>, place: Place, errors: &mut Vec<syn::Error>) -> Keys {
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
            keys.prompt_guidelines = string_array(&key_name, &value, errors)
                .into_iter()
                .map(|(text, _)| text)
                .collect();
            continue;
        }
        if key_name == "reaches" {
            keys.reaches = string_array(&key_name, &value, errors);
            continue;
        }
        if key_name == "concurrency" {
            keys.concurrency = concurrency(&value, errors);
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
            "prompt_snippet" => keys.prompt_snippet = Some((text, span)),
            "title" => keys.title = Some((text, span)),
            "execution_mode" => keys.execution_mode = execution_mode(&text, span, errors),
            "task_support" => keys.task_support = task_support(&text, span, errors),
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
    keys
}

/// `"sequential"` / `"parallel"` -> the `ToolExecutionMode` variant's name.
fn execution_mode(text: &str, span: Span, errors: &mut Vec<syn::Error>) -> Option<&'static str> {
    match text {
        "sequential" => Some("Sequential"),
        "parallel" => Some("Parallel"),
        other => {
            let help = match names::closest(other, &["sequential", "parallel"]) {
                Some(s) => format!("did you mean `\"{s}\"`?"),
                None => {
                    "write `execution_mode = \"parallel\"` or `execution_mode = \"sequential\"`"
                        .to_owned()
                }
            };
            errors.push(error(
                span,
                format!(
                    "unknown execution mode `\"{other}\"`: expected `\"sequential\"` or `\"parallel\"`"
                ),
                help,
            ));
            None
        }
    }
}

/// `"forbidden"` / `"optional"` / `"required"` -> the `TaskSupport` variant's name.
fn task_support(text: &str, span: Span, errors: &mut Vec<syn::Error>) -> Option<&'static str> {
    const VALUES: &[&str] = &["forbidden", "optional", "required"];
    match text {
        "forbidden" => Some("Forbidden"),
        "optional" => Some("Optional"),
        "required" => Some("Required"),
        other => {
            let help = match names::closest(other, VALUES) {
                Some(s) => format!("did you mean `\"{s}\"`?"),
                None => "write `task_support = \"optional\"` (it may run as an MCP task), \
                         `\"required\"` (only as a task) or `\"forbidden\"`"
                    .to_owned(),
            };
            errors.push(error(
                span,
                format!(
                    "unknown task support `\"{other}\"`: expected `\"optional\"`, `\"required\"` or `\"forbidden\"`"
                ),
                help,
            ));
            None
        }
    }
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
        "task_support" => "task_support = \"optional\"",
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

const CONCURRENCY_FORMS: &str = "write `concurrency = \"browser\"` (weight 1) or `concurrency = (\"browser\", 2)` (a class name and a weight from 1 up)";

/// `"browser"` or `("browser", 2)`: a class name that is not empty, and a weight of at
/// least 1.
fn concurrency(value: &Expr, errors: &mut Vec<syn::Error>) -> Option<(String, u32, Span)> {
    let (name, weight) = match value {
        Expr::Tuple(tuple) if tuple.elems.len() == 2 => (&tuple.elems[0], Some(&tuple.elems[1])),
        Expr::Lit(_) => (value, None),
        other => {
            errors.push(error_at(
                other,
                "`concurrency` takes a class name or a (class name, weight) pair",
                CONCURRENCY_FORMS,
            ));
            return None;
        }
    };
    let name_lit = match name {
        Expr::Lit(lit) => match &lit.lit {
            Lit::Str(s) => s,
            _ => {
                errors.push(error_at(
                    name,
                    "the concurrency class is a string literal",
                    CONCURRENCY_FORMS,
                ));
                return None;
            }
        },
        other => {
            errors.push(error_at(
                other,
                "the concurrency class is a string literal",
                CONCURRENCY_FORMS,
            ));
            return None;
        }
    };
    let class = name_lit.value();
    if class.trim().is_empty() {
        errors.push(error(
            name_lit.span(),
            "the concurrency class is empty",
            CONCURRENCY_FORMS,
        ));
        return None;
    }
    let weight = match weight {
        None => 1,
        Some(expr) => {
            let parsed = match expr {
                Expr::Lit(lit) => match &lit.lit {
                    Lit::Int(i) => i.base10_parse::<u32>().ok().filter(|w| *w >= 1),
                    _ => None,
                },
                _ => None,
            };
            let Some(weight) = parsed else {
                errors.push(error_at(
                    expr,
                    "the concurrency weight is a whole number from 1 up",
                    CONCURRENCY_FORMS,
                ));
                return None;
            };
            weight
        }
    };
    Some((class, weight, name_lit.span()))
}

fn string_array(key: &str, value: &Expr, errors: &mut Vec<syn::Error>) -> Vec<(String, Span)> {
    let example = if key == "reaches" {
        "write `reaches = [\"read\", \"grep\"]` (the names of the tools it calls)"
    } else {
        "write `prompt_guidelines = [\"Use for ...\", \"Never ...\"]`"
    };
    let Expr::Array(array) = value else {
        errors.push(error_at(
            value,
            format!("`{key}` takes an array of string literals"),
            example,
        ));
        return Vec::new();
    };
    let mut out = Vec::new();
    for elem in &array.elems {
        if let Expr::Lit(lit) = elem
            && let Lit::Str(s) = &lit.lit
        {
            out.push((s.value(), s.span()));
        } else {
            errors.push(error_at(
                elem,
                format!("each of `{key}` must be a string literal"),
                example,
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

#[cfg(test)]
mod tests {
    use super::{KEYS, parse_duration_ms};

    /// The `#[pi_tool]` page on docs.rs (`docs/pi_tool.md`) has a row for every key the
    /// macro accepts, and shows every return form: a new key fails here until documented.
    #[test]
    fn every_key_and_return_form_is_documented() {
        let docs = include_str!("../docs/pi_tool.md");
        for key in KEYS {
            assert!(
                docs.contains(&format!("\n| `{key}` |")),
                "docs/pi_tool.md has no row for the key `{key}` in its Keys table"
            );
        }
        for form in [
            "| `AgentToolResult<D>` |",
            "| `String`, `&'static str` |",
            "| `Json<T>` |",
        ] {
            assert!(
                docs.contains(form),
                "docs/pi_tool.md does not show the return form {form}"
            );
        }
        for section in ["# Effects", "# The context", "**The call id rule.**"] {
            assert!(docs.contains(section), "docs/pi_tool.md has no `{section}`");
        }
    }

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
