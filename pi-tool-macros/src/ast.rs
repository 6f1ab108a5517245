//! The typed picture of one tool function, built from syn's syntax tree.
//!
//! Building it never fails: everything the function says is recorded (including what is
//! wrong with it, as `Role::Invalid` or a missing value) and `check.rs` decides what is an
//! error. That keeps each rule, and its message, in one place.

use proc_macro2::Span;
use syn::{FnArg, GenericArgument, Ident, Pat, PathArguments, ReturnType, Signature, Type};

/// Where the function stands.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A free function (or a method without `#[pi_tools]` on its impl).
    Free,
    /// A method of a `#[pi_tools]` impl block.
    Method,
}

/// What an argument of the tool function receives, by its type (Pi's positional roles).
pub enum Role {
    /// `&str`, named as the call id or in its place (see [`is_call_id`]).
    CallId,
    /// A `&str` that is not the call id: an argument the model was meant to send.
    Text,
    /// Any other type: the deserialised params.
    Params,
    /// `AbortSignal`.
    Signal,
    /// `OnUpdate<D>` with its details type.
    OnUpdate(Box<Type>),
    /// `ExtensionContext`.
    Context,
    /// A role type taken in a form the generated code cannot supply; `what` names it.
    ByReference { what: &'static str },
    /// `OnUpdate` without its details type.
    BareOnUpdate,
    /// A role type inside `Option`, `Box`, `Arc` or `Rc` (`Option<AbortSignal>`): `what`
    /// names the role type, `wrapper` the type around it.
    Wrapped { what: &'static str, wrapper: String },
}

impl Role {
    /// The role's place in Pi's positional order: call id, params, signal, on_update, ctx.
    pub fn position(&self) -> usize {
        match self {
            Role::CallId => 0,
            Role::Params | Role::Text | Role::ByReference { .. } | Role::Wrapped { .. } => 1,
            Role::Signal => 2,
            Role::OnUpdate(_) | Role::BareOnUpdate => 3,
            Role::Context => 4,
        }
    }

    /// The role's name in messages.
    pub fn describe(&self) -> &'static str {
        match self {
            Role::CallId => "call id (`&str`)",
            Role::Params | Role::Text | Role::ByReference { .. } | Role::Wrapped { .. } => "params",
            Role::Signal => "`AbortSignal`",
            Role::OnUpdate(_) | Role::BareOnUpdate => "`OnUpdate<D>`",
            Role::Context => "`ExtensionContext`",
        }
    }
}

/// One typed argument of the tool function.
pub struct Arg {
    pub role: Role,
    pub ty: Type,
    /// The argument as written (`text: &str`), for errors about the whole argument.
    pub written: syn::PatType,
}

/// The `self` argument, when there is one.
pub struct Receiver {
    pub span_tokens: FnArg,
    /// `&self` (the only form a `#[pi_tools]` method may take).
    pub is_shared_ref: bool,
}

/// What the return type says about the tool's details, read from syntax where it can be.
///
/// Reading `Result<AgentToolResult<D>, E>` and `Result<String, E>` directly (instead of
/// through a trait) means a wrong details or error type is reported once, on the user's
/// tokens; only aliases (`io::Result<T>`, `type R = ...`) go through `ToolReturn`.
pub enum Success {
    /// `AgentToolResult<D>`: the details are `D`.
    Details(Box<Type>),
    /// `String` or `&str`: no details.
    Text,
    /// `Json<T>`: a structured result; the details are `T`, the output schema `T`'s.
    Json(Box<Type>),
    /// A type the macro cannot read (an alias): the trait decides.
    Unknown,
    /// A type that is never a tool result (`u32`, `bool`, `()`, `Vec<_>`, ...).
    Invalid(Box<Type>),
}

/// The return type, analysed.
pub enum Output {
    /// No `-> ...`: the span where it is missing.
    Missing(Span),
    /// A type whose name does not end in `Result`.
    NotResult(Box<Type>),
    /// `...Result<...>`.
    Result {
        ty: Box<Type>,
        success: Success,
        /// The error type, when written out (`Result<T, E>`).
        error: Option<Box<Type>>,
    },
}

/// One tool function (free or method) as the macro sees it.
pub struct ToolFn {
    pub sig: Signature,
    pub ident: Ident,
    pub receiver: Option<Receiver>,
    pub args: Vec<Arg>,
    /// The declared return type, analysed.
    pub output: Output,
}

impl ToolFn {
    pub fn from_signature(sig: &Signature) -> ToolFn {
        let mut receiver = None;
        let mut args = Vec::new();
        for input in &sig.inputs {
            match input {
                FnArg::Receiver(r) => {
                    let is_shared_ref = matches!(&r.kind, syn::ReceiverKind::Reference(_, _, None))
                        && r.mutability.is_none();
                    receiver = Some(Receiver {
                        span_tokens: input.clone(),
                        is_shared_ref,
                    });
                }
                FnArg::Typed(pat_type) => {
                    // `self: Arc<Self>` etc. arrive as typed args in some syn versions.
                    if is_self_pat(&pat_type.pat) {
                        receiver = Some(Receiver {
                            span_tokens: input.clone(),
                            is_shared_ref: false,
                        });
                        continue;
                    }
                    args.push(Arg {
                        role: classify(&pat_type.ty),
                        ty: (*pat_type.ty).clone(),
                        written: pat_type.clone(),
                    });
                }
            }
        }
        for index in 0..args.len() {
            if matches!(args[index].role, Role::CallId) && !is_call_id(&args, index) {
                args[index].role = Role::Text;
            }
        }
        let output = match &sig.output {
            ReturnType::Type(_, ty) => analyse_output(ty),
            ReturnType::Default => Output::Missing(sig.paren_token.span.close()),
        };
        ToolFn {
            sig: sig.clone(),
            ident: sig.ident.clone(),
            receiver,
            args,
            output,
        }
    }

    /// The params type, if the function takes one.
    pub fn params(&self) -> Option<&Type> {
        self.args
            .iter()
            .find(|a| matches!(a.role, Role::Params))
            .map(|a| &a.ty)
    }

    /// Whether rustc itself rejects the function as written (`OnUpdate` without its
    /// generic, `const async fn`): then the macro adds no error of its own, so the user
    /// sees rustc's, once.
    pub fn defers_to_rustc(&self) -> bool {
        self.sig.constness.is_some()
            || self
                .args
                .iter()
                .any(|a| matches!(a.role, Role::BareOnUpdate))
    }

    /// Whether the function takes an `ExtensionContext` (and so is a definition).
    pub fn needs_context(&self) -> bool {
        self.args.iter().any(|a| matches!(a.role, Role::Context))
    }
}

/// Whether the `&str` at `index` is the call id: it is named `call_id` or `tool_call_id`
/// (leading `_`s allowed), or it stands where Pi puts `toolCallId`, first, with the params
/// argument right after it. Any other `&str` is an argument the model was meant to send,
/// which a tool receives in its params type; the rule is documented in `docs/pi_tool.md`.
fn is_call_id(args: &[Arg], index: usize) -> bool {
    let named = match &*args[index].written.pat {
        Pat::Ident(p) => {
            let name = p.ident.to_string();
            let name = name.strip_prefix("r#").unwrap_or(&name);
            matches!(name.trim_start_matches('_'), "call_id" | "tool_call_id")
        }
        _ => false,
    };
    named
        || (index == 0
            && args
                .get(1)
                .is_some_and(|next| matches!(next.role, Role::Params)))
}

fn is_self_pat(pat: &Pat) -> bool {
    matches!(pat, Pat::Ident(p) if p.ident == "self")
}

/// The last path segment of a plain path type (`pi_tool::AbortSignal` -> `AbortSignal`).
fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Group(g) => last_segment(&g.elem),
        Type::Paren(p) => last_segment(&p.elem),
        _ => None,
    }
}

fn role_name(ty: &Type) -> Option<&'static str> {
    let seg = last_segment(ty)?;
    if seg.ident == "AbortSignal" {
        Some("AbortSignal")
    } else if seg.ident == "OnUpdate" {
        Some("OnUpdate")
    } else if seg.ident == "ExtensionContext" {
        Some("ExtensionContext")
    } else {
        None
    }
}

/// The role of an argument, from its type alone.
fn classify(ty: &Type) -> Role {
    match ty {
        Type::Reference(r) => {
            if r.mutability.is_none() && last_segment(&r.elem).is_some_and(|s| s.ident == "str") {
                return Role::CallId;
            }
            match role_name(&r.elem) {
                Some("AbortSignal") => Role::ByReference {
                    what: "AbortSignal",
                },
                Some("OnUpdate") => Role::ByReference { what: "OnUpdate" },
                Some("ExtensionContext") => Role::ByReference {
                    what: "ExtensionContext",
                },
                _ => Role::ByReference { what: "params" },
            }
        }
        Type::Group(g) => classify(&g.elem),
        Type::Paren(p) => classify(&p.elem),
        _ => match role_name(ty) {
            Some("AbortSignal") => Role::Signal,
            Some("ExtensionContext") => Role::Context,
            Some("OnUpdate") => {
                let details = last_segment(ty).and_then(|seg| match &seg.arguments {
                    PathArguments::AngleBracketed(a) => a.args.iter().find_map(|g| match g {
                        GenericArgument::Type(t) => Some(t.clone()),
                        _ => None,
                    }),
                    _ => None,
                });
                match details {
                    Some(d) => Role::OnUpdate(Box::new(d)),
                    None => Role::BareOnUpdate,
                }
            }
            _ => wrapped(ty).unwrap_or(Role::Params),
        },
    }
}

/// The lifetime arguments of the function's params type left out
/// (`WordCountParams<'_>` -> `WordCountParams`); see `fallback::without_params_lifetimes`.
pub fn strip_params_lifetimes(sig: &mut Signature) {
    for input in &mut sig.inputs {
        let FnArg::Typed(arg) = input else {
            continue;
        };
        if !matches!(classify(&arg.ty), Role::Params) {
            continue;
        }
        if let Type::Path(p) = &mut *arg.ty
            && let Some(seg) = p.path.segments.last_mut()
            && let PathArguments::AngleBracketed(a) = &mut seg.arguments
        {
            a.args = std::mem::take(&mut a.args)
                .into_iter()
                .filter(|g| !matches!(g, GenericArgument::Lifetime(_)))
                .collect();
            if a.args.is_empty() {
                seg.arguments = PathArguments::None;
            }
        }
    }
}

/// `Option<AbortSignal>` and the like: a role type the generated code supplies as itself.
fn wrapped(ty: &Type) -> Option<Role> {
    let seg = last_segment(ty)?;
    let wrapper = seg.ident.to_string();
    if !["Option", "Box", "Arc", "Rc"].contains(&wrapper.as_str()) {
        return None;
    }
    let inner = generic_types(seg).into_iter().next()?;
    let what = role_name(inner)?;
    Some(Role::Wrapped { what, wrapper })
}

fn generic_types(seg: &syn::PathSegment) -> Vec<&Type> {
    match &seg.arguments {
        PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|g| match g {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn analyse_output(ty: &Type) -> Output {
    let Some(seg) = last_segment(ty) else {
        return Output::NotResult(Box::new(ty.clone()));
    };
    if !seg.ident.to_string().ends_with("Result") {
        return Output::NotResult(Box::new(ty.clone()));
    }
    let args = generic_types(seg);
    let (success, error) = match (seg.ident == "Result", args.as_slice()) {
        (true, [ok, err]) => (analyse_success(ok), Some(Box::new((*err).clone()))),
        _ => (Success::Unknown, None),
    };
    Output::Result {
        ty: Box::new(ty.clone()),
        success,
        error,
    }
}

fn analyse_success(ty: &Type) -> Success {
    if let Type::Reference(r) = ty {
        return if last_segment(&r.elem).is_some_and(|s| s.ident == "str") {
            Success::Text
        } else {
            Success::Invalid(Box::new(ty.clone()))
        };
    }
    if let Type::Tuple(_) | Type::Array(_) | Type::Slice(_) | Type::Never(_) = ty {
        return Success::Invalid(Box::new(ty.clone()));
    }
    let Some(seg) = last_segment(ty) else {
        return Success::Unknown;
    };
    let name = seg.ident.to_string();
    match name.as_str() {
        "AgentToolResult" => match generic_types(seg).as_slice() {
            [details] => Success::Details(Box::new((*details).clone())),
            _ => Success::Unknown,
        },
        "Json" => match generic_types(seg).as_slice() {
            [value] => Success::Json(Box::new((*value).clone())),
            _ => Success::Unknown,
        },
        "String" => Success::Text,
        "bool" | "char" | "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8" | "i16"
        | "i32" | "i64" | "i128" | "isize" | "f32" | "f64" | "Value" | "Vec" | "Option"
        | "HashMap" | "BTreeMap" | "Content" => Success::Invalid(Box::new(ty.clone())),
        _ => Success::Unknown,
    }
}
