//! The typed picture of one tool function, built from syn's syntax tree.
//!
//! Building it never fails: everything the function says is recorded (including what is
//! wrong with it, as `Role::Invalid` or a missing value) and `check.rs` decides what is an
//! error. That keeps each rule, and its message, in one place.

use proc_macro2::Span;
use syn::{FnArg, GenericArgument, Ident, Pat, PathArguments, ReturnType, Signature, Type};

/// What an argument of the tool function receives, by its type (Pi's positional roles).
pub enum Role {
    /// `&str`: the tool call id.
    CallId,
    /// Any other type: the deserialised params.
    Params,
    /// `AbortSignal`.
    Signal,
    /// `OnUpdate<D>` with its details type.
    OnUpdate(Type),
    /// `ExtensionContext`.
    Context,
    /// A role type taken in a form the generated code cannot supply; `what` names it.
    ByReference { what: &'static str },
    /// `OnUpdate` without its details type.
    BareOnUpdate,
}

impl Role {
    /// The role's place in Pi's positional order: call id, params, signal, on_update, ctx.
    pub fn position(&self) -> usize {
        match self {
            Role::CallId => 0,
            Role::Params | Role::ByReference { .. } => 1,
            Role::Signal => 2,
            Role::OnUpdate(_) | Role::BareOnUpdate => 3,
            Role::Context => 4,
        }
    }

    /// The role's name in messages.
    pub fn describe(&self) -> &'static str {
        match self {
            Role::CallId => "call id (`&str`)",
            Role::Params | Role::ByReference { .. } => "params",
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
}

/// The `self` argument, when there is one.
pub struct Receiver {
    pub span_tokens: FnArg,
    /// `&self` (the only form a `#[pi_tools]` method may take).
    pub is_shared_ref: bool,
}

/// One tool function (free or method) as the macro sees it.
pub struct ToolFn {
    pub sig: Signature,
    pub ident: Ident,
    pub receiver: Option<Receiver>,
    pub args: Vec<Arg>,
    /// The declared return type, or the span where it is missing.
    pub output: Result<Type, Span>,
}

impl ToolFn {
    pub fn from_signature(sig: &Signature) -> ToolFn {
        let mut receiver = None;
        let mut args = Vec::new();
        for input in &sig.inputs {
            match input {
                FnArg::Receiver(r) => {
                    let is_shared_ref = matches!(
                        &r.kind,
                        syn::ReceiverKind::Reference(_, _, None)
                    ) && r.mutability.is_none();
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
                    });
                }
            }
        }
        let output = match &sig.output {
            ReturnType::Type(_, ty) => Ok((**ty).clone()),
            ReturnType::Default => Err(sig.paren_token.span.close()),
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

    /// Whether the function takes an `ExtensionContext` (and so is a definition).
    pub fn needs_context(&self) -> bool {
        self.args.iter().any(|a| matches!(a.role, Role::Context))
    }
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
                    Some(d) => Role::OnUpdate(d),
                    None => Role::BareOnUpdate,
                }
            }
            _ => Role::Params,
        },
    }
}
