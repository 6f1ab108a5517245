//! Every rule the macro enforces on what a tool says, each with its own message, its span
//! on the user's tokens, and the fix. The values it checks arrive decoded (`keys.rs`). Errors are collected, not returned early, so that a function with
//! two independent mistakes shows both at once; a function with one mistake shows one.
//!
//! Type-level rules (the params type implements `Deserialize + JsonSchema`, the return type
//! is a tool result, `OnUpdate<D>` matches the details, the future is `Send`) cannot be
//! checked on syntax; `expand.rs` emits assertions for them, spanned on the same tokens.

use proc_macro2::Span;
use syn::Attribute;

use crate::ast::{Output, Place, Role, Success, ToolFn};
use crate::attr::Arg;
use crate::doc::{self, Doc};
use crate::error::{error, error_at};
use crate::keys::{self, Keys};
use crate::names;

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
    /// `Forbidden`, `Optional` or `Required`.
    pub task_support: Option<&'static str>,
    pub timeout_ms: Option<u64>,
    pub prompt_snippet: Option<String>,
    pub prompt_guidelines: Vec<String>,
    /// The tools it may call through its context.
    pub reaches: Vec<String>,
    /// The concurrency class and its weight.
    pub concurrency: Option<(String, u32)>,
    /// The declared effects, in `keys::FLAGS` order (`None`: not declared).
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

/// Checks the attribute arguments and the function; returns the spec or every error.
pub fn check(
    args: Vec<Arg>,
    attrs: &[Attribute],
    tool: &ToolFn,
    place: Place,
    errors: &mut Vec<syn::Error>,
) -> Option<Spec> {
    let before = errors.len();
    let keys = keys::decode(args, place, errors);
    check_values(&keys, errors);
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
    check_reaches(&name, &keys.reaches, errors);
    if errors.len() > before {
        return None;
    }
    Some(Spec {
        name,
        name_span,
        label,
        description,
        execution_mode: keys.execution_mode,
        task_support: keys.task_support,
        timeout_ms: keys.timeout_ms,
        prompt_snippet: keys.prompt_snippet.map(|(text, _)| text),
        prompt_guidelines: keys.prompt_guidelines,
        reaches: keys.reaches.into_iter().map(|(name, _)| name).collect(),
        concurrency: keys.concurrency.map(|(name, weight, _)| (name, weight)),
        effects: keys.effects.map(|e| e.map(|(value, _)| value)),
        title: keys.title.map(|(text, _)| text),
        krate: keys.krate,
    })
}

/// What the decoded values may say: a snippet and a title are one line, a title is not
/// empty, and the effects agree.
fn check_values(keys: &Keys, errors: &mut Vec<syn::Error>) {
    if let Some((text, span)) = &keys.prompt_snippet
        && text.contains('\n')
    {
        errors.push(error(
            *span,
            "`prompt_snippet` is one line of the system prompt's tool list",
            "move longer guidance into `prompt_guidelines = [\"...\", \"...\"]`",
        ));
    }
    if let Some((text, span)) = &keys.title {
        if text.trim().is_empty() {
            errors.push(error(
                *span,
                "the title is empty",
                "remove `title`, or write a short human title such as `title = \"Get weather\"`",
            ));
        } else if text.contains('\n') {
            errors.push(error(
                *span,
                "the title spans more than one line",
                "keep `title` to a short label; the description says the rest",
            ));
        }
    }
    check_effects(&keys.effects, errors);
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
        let why = if bad == '.' {
            " (MCP allows `.`, model providers do not)"
        } else {
            ""
        };
        errors.push(error(
            span,
            format!("the tool name `{name}` contains `{bad}`{why}"),
            format!(
                "{NAME_RULE}; {how}, for example `{}`",
                names::sanitise(name)
            ),
        ));
    }
}

/// Each name of `reaches` follows the tool-name rule, once, and is not the tool itself
/// (a tool calling itself is a cycle every nested call would be refused for).
fn check_reaches(own: &str, reaches: &[(String, Span)], errors: &mut Vec<syn::Error>) {
    for (index, (name, span)) in reaches.iter().enumerate() {
        if reaches[..index].iter().any(|(earlier, _)| earlier == name) {
            errors.push(error(
                *span,
                format!("`{name}` is in `reaches` twice"),
                format!("remove one of the `\"{name}\"` entries"),
            ));
            continue;
        }
        if name == own {
            errors.push(error(
                *span,
                format!("the tool `{own}` reaches itself"),
                "remove it from `reaches`: a tool that calls itself is a cycle, and every such nested call is refused",
            ));
            continue;
        }
        check_name(name, *span, false, errors);
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
        Output::Result {
            error: Some(error_ty),
            ..
        } if is_boxed_dyn(error_ty) => errors.push(error_at(
            error_ty,
            format!(
                "a tool's error type cannot be `{}`: a boxed `dyn Error` does not convert into `ToolError`",
                quote::quote!(#error_ty).to_string().replace(" < ", "<").replace(" >", ">").replace(" ,", ",").replace(":: ", "::").replace(" ::", "::")
            ),
            "return `Result<.., ToolError>`: `?` converts any `std::error::Error + Send + Sync + 'static` into `ToolError`, as into a boxed error (and `ToolError::new(e.to_string())` takes a boxed one)",
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
            Role::Text => {
                let written = &arg.written;
                let pat = &written.pat;
                let field = match &**pat {
                    syn::Pat::Ident(p) => p.ident.to_string().trim_start_matches('_').to_owned(),
                    _ => "text".to_owned(),
                };
                let field = if field.is_empty() {
                    "text".to_owned()
                } else {
                    field
                };
                let params = format!("{}Params", names::upper_camel(&tool.ident.to_string()));
                errors.push(error_at(
                    written,
                    format!(
                        "`{}` is not the call id: the model's arguments reach a tool in one params type",
                        quote::quote!(#written).to_string().replace(" :", ":").replace("& ", "&")
                    ),
                    format!(
                        "declare `#[pi_tool::params] struct {params} {{ {field}: String }}` and take `params: {params}`; a `&str` argument is the tool call id only when it is named `call_id` (or `_call_id`, `tool_call_id`) or comes first, right before the params argument"
                    ),
                ));
                continue;
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
            Role::Wrapped { what, wrapper } => {
                let (name, how) = match *what {
                    "AbortSignal" => (
                        "signal: AbortSignal",
                        "where nothing can cancel the call, the signal never fires",
                    ),
                    "OnUpdate" => (
                        "on_update: OnUpdate<D>",
                        "where nobody listens, the updates are dropped",
                    ),
                    _ => (
                        "ctx: ExtensionContext",
                        "where no session runs the tool, the context is a detached one",
                    ),
                };
                errors.push(error_at(
                    &arg.ty,
                    format!("`{what}` is not optional: every call gets one"),
                    format!("take `{name}` without `{wrapper}<..>`: {how}"),
                ));
                continue;
            }
            // rustc reports the missing generic itself (see `ToolFn::defers_to_rustc`).
            Role::BareOnUpdate => continue,
            Role::Params => {
                if let Some(lifetime) = lifetime_in(&arg.ty) {
                    errors.push(error_at(
                        lifetime,
                        "a params type cannot borrow: pi-tool reads the model's arguments into owned values",
                        "remove the lifetime parameter from the params type and use owned fields: `String` for `&str`, `Vec<T>` for `&[T]`",
                    ));
                    continue;
                }
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

/// Whether a params argument is written with a lifetime (`WordCountParams<'_>`), which
/// `check` reports.
pub fn borrows_in_params(tool: &ToolFn) -> bool {
    tool.args
        .iter()
        .any(|arg| matches!(arg.role, Role::Params) && lifetime_in(&arg.ty).is_some())
}

/// `Box<dyn ...>`: a boxed trait object (`Box<dyn std::error::Error + Send + Sync>`).
fn is_boxed_dyn(ty: &syn::Type) -> bool {
    let syn::Type::Path(p) = ty else {
        return false;
    };
    p.path.segments.last().is_some_and(|seg| {
        seg.ident == "Box"
            && matches!(&seg.arguments, syn::PathArguments::AngleBracketed(a)
                if matches!(a.args.first(), Some(syn::GenericArgument::Type(syn::Type::TraitObject(_)))))
    })
}

/// The first lifetime argument in a type (`'a` in `Note<'a>`, `'_` in `Note<'_>`).
fn lifetime_in(ty: &syn::Type) -> Option<&syn::Lifetime> {
    match ty {
        syn::Type::Path(p) => p.path.segments.iter().find_map(|s| match &s.arguments {
            syn::PathArguments::AngleBracketed(a) => a.args.iter().find_map(|g| match g {
                syn::GenericArgument::Lifetime(l) => Some(l),
                syn::GenericArgument::Type(t) => lifetime_in(t),
                _ => None,
            }),
            _ => None,
        }),
        syn::Type::Reference(r) => r.lifetime.as_ref().or_else(|| lifetime_in(&r.elem)),
        syn::Type::Tuple(t) => t.elems.iter().find_map(lifetime_in),
        syn::Type::Array(a) => lifetime_in(&a.elem),
        syn::Type::Slice(s) => lifetime_in(&s.elem),
        syn::Type::Group(g) => lifetime_in(&g.elem),
        syn::Type::Paren(p) => lifetime_in(&p.elem),
        _ => None,
    }
}
