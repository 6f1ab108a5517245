//! Code generation: the tool struct and its trait impls, and the `#[pi_tools]` accessors.
//!
//! Everything generated names `::pi_tool::__private::...` (or `<crate>::__private::...` with
//! a `crate = "..."` key), so a user crate needs no direct dependency on serde_json or
//! schemars. Type-level rules are checked by the trait impls
//! themselves (their associated-type bounds are spanned on the user's params and return
//! types) and by helper functions of `__private` spanned on the user's tokens, whose names
//! say the rule (`tool_future_must_be_send`), so that rustc's notes read as the fix.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Type, Visibility};

use crate::ast::{Output, Role, Success, ToolFn};
use crate::check::{Description, Spec};
use crate::doc::Piece;

/// How the generated `execute` reaches the user's function.
pub enum Target<'a> {
    /// A free function: `get_weather(...)`.
    Free,
    /// A `#[pi_tools]` method: `<Db>::find_user(&self.state, ...)`.
    Method { self_ty: &'a Type },
}

/// The tool struct and its `Tool` impl.
pub fn tool(
    tool: &ToolFn,
    spec: &Spec,
    vis: &Visibility,
    struct_ident: &Ident,
    target: Target<'_>,
    krate: &syn::Path,
) -> TokenStream {
    let p = quote!(#krate::__private);
    let fn_ident = &tool.ident;
    let Output::Result {
        ty: ret,
        success,
        error,
    } = &tool.output
    else {
        return TokenStream::new();
    };
    let name = &spec.name;
    let label = &spec.label;
    let description = description_tokens(&spec.description, &p);

    // The user's own tokens, as in the bounds' check below.
    let params_ty = match tool.params() {
        Some(ty) => quote!(#ty),
        None => quote!(#p::NoParams),
    };
    // Read from syntax where possible, so a problem with the details type is reported
    // on the user's `D`; aliases go through `ToolReturn`, spanned on the return type.
    let details = match success {
        Success::Details(d) => quote!(#d),
        Success::Text => quote!(#p::NoDetails),
        Success::Json(t) => quote!(#t),
        Success::Unknown | Success::Invalid(_) => {
            quote_spanned!(ret.span()=> <#ret as #p::ToolReturn>::Details)
        }
    };
    // The conversion of the user's error type, spanned on it: `E: Into<ToolError>`.
    let convert_span = error.as_ref().map_or_else(|| ret.span(), |e| e.span());
    let convert = quote_spanned!(convert_span=> #p::tool_output(__output));

    let execution_mode = spec.execution_mode.map(|mode| {
        let mode = Ident::new(mode, Span::call_site());
        quote!(const EXECUTION_MODE: #p::Option<#p::ToolExecutionMode> = #p::Some(#p::ToolExecutionMode::#mode);)
    });
    let task_support = spec.task_support.map(|support| {
        let support = Ident::new(support, Span::call_site());
        quote!(const TASK_SUPPORT: #p::Option<#p::TaskSupport> = #p::Some(#p::TaskSupport::#support);)
    });
    let timeout = spec.timeout_ms.map(|ms| {
        quote!(const TIMEOUT: #p::Option<#p::Duration> = #p::Some(#p::Duration::from_millis(#ms));)
    });
    let snippet = spec
        .prompt_snippet
        .as_ref()
        .map(|s| quote!(const PROMPT_SNIPPET: #p::Option<&'static str> = #p::Some(#s);));
    let guidelines = (!spec.prompt_guidelines.is_empty()).then(|| {
        let lines = &spec.prompt_guidelines;
        quote!(const PROMPT_GUIDELINES: &'static [&'static str] = &[#(#lines),*];)
    });
    let reaches = (!spec.reaches.is_empty()).then(|| {
        let names = &spec.reaches;
        quote!(const REACHES: &'static [&'static str] = &[#(#names),*];)
    });
    let concurrency = spec.concurrency.as_ref().map(|(class, weight)| {
        quote!(const CONCURRENCY: #p::Option<#p::ConcurrencyClass> = #p::Some(#p::ConcurrencyClass::new(#class, #weight));)
    });
    let annotations = (spec.effects.iter().any(Option::is_some) || spec.title.is_some()).then(|| {
        let [read_only, destructive, idempotent, open_world] = spec.effects.map(|e| match e {
            Some(v) => quote!(#p::Some(#v)),
            None => quote!(#p::None),
        });
        let title = match &spec.title {
            Some(t) => quote!(#p::Some(#t)),
            None => quote!(#p::None),
        };
        quote!(const ANNOTATIONS: #p::ToolAnnotations = #p::ToolAnnotations::declared(#read_only, #destructive, #idempotent, #open_world, #title);)
    });

    // A structured result's schema, its check spanned on the user's `T`: a `T` without
    // `Serialize` is reported as `bounds::ToolDetails` on `type Details`, once; a `T` with
    // it but without `JsonSchema`, as `bounds::ToolOutput` here (`bounds::OutputProbe`).
    let output_schema = match success {
        Success::Json(t) => {
            // The path stays in the `use`, with its own span, so that a wrong
            // `crate = "..."` is still reported once, on the attribute.
            let probe = spanned_probe(t);
            Some(quote! {
                fn output_schema() -> #p::Option<#p::Arc<#p::OutputSchema>> {
                    use #p::{
                        CheckOutputSchema as _, OutputProbe as __OutputProbe,
                        SkipOutputSchema as _,
                    };
                    #probe
                }
            })
        }
        _ => None,
    };

    // The call of the user's function, its arguments in the user's order. The call id is
    // the invocation's `&str`: `Tool::execute`'s `impl Future` captures both of its
    // lifetimes, so the user's future may borrow it as well as `&self`.
    let call_args = tool.args.iter().map(|arg| match &arg.role {
        Role::CallId => quote!(__call_id),
        Role::Params => quote!(__params),
        Role::Signal => quote!(__signal),
        Role::Context => quote!(__ctx),
        Role::OnUpdate(_) => quote!(__on_update),
        Role::Text | Role::ByReference { .. } | Role::BareOnUpdate | Role::Wrapped { .. } => {
            quote!()
        }
    });
    // `OnUpdate<D>` must be the tool's own details type: checked by a bound spanned on
    // the user's `OnUpdate<D>`, with `SameDetails`' message.
    let update_check = tool.args.iter().find_map(|arg| match &arg.role {
        Role::OnUpdate(d) => {
            let span = arg.ty.span();
            Some(quote_spanned! {span=>
                let __on_update = #p::on_update_argument::<#d, <Self as #p::Tool>::Details>(__on_update);
            })
        }
        _ => None,
    });
    let call = match target {
        Target::Free => quote!(#fn_ident(#(#call_args),*)),
        Target::Method { self_ty } => quote!(<#self_ty>::#fn_ident(&*self.state, #(#call_args),*)),
    };
    // The future is checked for `Send` through one token spanned on the function's name,
    // so rustc reports "future returned by `name` is not `Send`" there, once.
    let future_ident = Ident::new("__future", fn_ident.span());
    let send_check = quote_spanned!(fn_ident.span()=> #p::tool_future_must_be_send);
    // No async block: the user's future is built here and mapped, so the call's future
    // is the user's plus a closure (`tool_future_must_be_send` says why).
    let body = quote! {
        #update_check
        let #future_ident = #call;
        #send_check(#future_ident, |__output| #convert)
    };
    let output = quote!(impl #p::Future<Output = #p::Result<#p::AgentToolResult<Self::Details>, #p::ToolError>> + #p::Send);
    let context = tool
        .needs_context()
        .then(|| quote!(let __ctx = #p::context_or_detached(__context);));
    let execute = quote! {
        fn execute(
            &self,
            __call: #p::ToolInvocation<'_, Self::Params, Self::Details>,
        ) -> #output {
            let #p::ToolInvocation {
                id: __call_id, params: __params, signal: __signal, on_update: __on_update,
                context: __context, ..
            } = __call;
            #context
            #body
        }
    };
    let struct_doc = format!(
        "The `{name}` tool, generated by `#[pi_tool]` from `{fn_ident}`.\n\n\
         Turn it into what hosts hold with `into_agent_tool()`."
    );
    let struct_name = struct_ident.to_string();
    // A unit struct: its name is its value, so it needs no `Clone`, `Copy` or `Default`.
    // `Debug` is written out, not derived: the derive adds `#[inline]` impls per tool, each
    // encoded in the crate's metadata, which a one-tool edit of a large pack re-encodes
    // (`bench/compile-time/README.md`). Through `::core`, as `derive` does, so
    // that a wrong `crate = "..."` path is reported once, on the attribute.
    let struct_def = match target {
        Target::Free => quote! {
            #[doc = #struct_doc]
            #vis struct #struct_ident;

            impl ::core::fmt::Debug for #struct_ident {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    f.write_str(#struct_name)
                }
            }

            // `tool_pack![GetWeather]` reads the value through the type, so that a
            // `#[pi_tools]` state listed without its state gets the core's error.
            #[diagnostic::do_not_recommend]
            impl #p::UnitItem for #struct_ident {
                const VALUE: Self = #struct_ident;
            }
        },
        Target::Method { self_ty } => {
            let new_doc = format!("The `{name}` tool over shared state.");
            quote! {
                #[doc = #struct_doc]
                #[derive(Clone)]
                #vis struct #struct_ident {
                    state: #p::Arc<#self_ty>,
                }

                impl #p::fmt::Debug for #struct_ident {
                    fn fmt(&self, f: &mut #p::fmt::Formatter<'_>) -> #p::fmt::Result {
                        f.debug_struct(#struct_name).finish_non_exhaustive()
                    }
                }

                impl #struct_ident {
                    #[doc = #new_doc]
                    // A private state type stays private: the tool is reachable only
                    // where the state is.
                    #[allow(private_interfaces)]
                    #vis fn new(state: #p::Arc<#self_ty>) -> Self {
                        #struct_ident { state }
                    }
                }
            }
        }
    };

    // The runtime's name rule, run at compile time: `check` gives the friendly message,
    // this keeps the rule itself in one place (pi-tool's `check_tool_name`).
    let name_rule = quote_spanned!(spec.name_span=> const _: () = #p::assert_tool_name(#name););
    quote! {
        #struct_def

        #name_rule

        // The trait's bounds on `Params` and `Details` (`bounds::ToolParams`,
        // `bounds::ToolDetails`) are the checks of the user's types: `type Params = ...` is
        // the user's own tokens, so a type that is not one is one error there.
        const _: () = {
            impl #p::Tool for #struct_ident {
                type Params = #params_ty;
                type Details = #details;
                const NAME: &'static str = #name;
                const LABEL: &'static str = #label;
                const DESCRIPTION: &'static str = #description;
                #execution_mode
                #task_support
                #timeout
                #snippet
                #guidelines
                #reaches
                #concurrency
                #annotations
                #output_schema

                #execute
            }
        };
    }
}

fn description_tokens(description: &Description, p: &TokenStream) -> TokenStream {
    match description {
        Description::Given(text) => quote!(#text),
        Description::Doc(doc) => {
            if doc.pieces.iter().all(|p| matches!(p, Piece::Text(_))) {
                let text: String = doc
                    .pieces
                    .iter()
                    .map(|p| match p {
                        Piece::Text(t) => t.as_str(),
                        Piece::Expr(_) => "",
                    })
                    .collect();
                let text = text.trim();
                quote!(#text)
            } else {
                let pieces = doc.pieces.iter().map(|p| match p {
                    Piece::Text(t) => quote!(#t),
                    Piece::Expr(e) => quote!(#e),
                });
                quote!(#p::trim_doc(#p::concat!(#(#pieces),*)))
            }
        }
    }
}

/// The name of a `#[pi_tools]` method's tool struct: `find_user` -> `FindUserTool`.
pub fn method_struct_ident(method: &Ident) -> Ident {
    format_ident!("{}Tool", crate::names::upper_camel(&method.to_string()))
}

/// The name of a free function's tool struct: `get_weather` -> `GetWeather`.
pub fn fn_struct_ident(function: &Ident) -> Ident {
    Ident::new(
        &crate::names::upper_camel(&function.to_string()),
        function.span(),
    )
}

/// The visibility of a `#[pi_tools]` method's tool struct and accessor: `pub`, as
/// `tools()` is, for a method written without one (the method is the tool's body, the
/// accessor its interface, and tests in `tests/` call it); a method's own `pub(...)`
/// keeps the tool as restricted as the method.
pub fn tool_visibility(method: &Visibility) -> Visibility {
    match method {
        Visibility::Inherited => syn::parse_quote!(pub),
        restricted => restricted.clone(),
    }
}

/// One tool of a `#[pi_tools]` block, for the accessors.
pub struct MethodTool<'a> {
    pub method: &'a Ident,
    pub vis: &'a Visibility,
    pub struct_ident: Ident,
    pub name: &'a str,
}

/// The accessors `#[pi_tools]` adds to the impl block: one per tool, plus `tools()`.
pub fn accessors(self_ty: &Type, tools: &[MethodTool<'_>], krate: &syn::Path) -> TokenStream {
    let p = quote!(#krate::__private);
    let each = tools.iter().map(|t| {
        let accessor = format_ident!("{}_tool", t.method.to_string().trim_start_matches("r#"));
        let ident = &t.struct_ident;
        let vis = t.vis;
        let doc = format!("The `{}` tool, sharing this state.", t.name);
        quote! {
            #[doc = #doc]
            #vis fn #accessor(self: &#p::Arc<Self>) -> #ident {
                #ident::new(#p::Arc::clone(self))
            }
        }
    });
    let names = tools
        .iter()
        .map(|t| t.name)
        .collect::<Vec<_>>()
        .join("`, `");
    let items = tools.iter().map(|t| {
        let ident = &t.struct_ident;
        quote!(#p::IntoAgentTool::into_agent_tool(#ident::new(#p::Arc::clone(self))))
    });
    let doc =
        format!("Every tool of this block (`{names}`) as an `AgentTool`, sharing this state.");
    let pack_item = pack_item(self_ty, tools.iter().map(|t| t.name), krate);
    quote! {
        impl #self_ty {
            #(#each)*

            #[doc = #doc]
            pub fn tools(self: &#p::Arc<Self>) -> #p::Vec<#p::Arc<dyn #p::AgentTool>> {
                #p::Vec::from([#(#items),*])
            }
        }

        #pack_item
    }
}

/// The block as an item of `tool_pack!` (`State = state`, from a `State` or an
/// `Arc<State>`): its names for the pack's compile-time check, and its `tools()`.
/// `do_not_recommend` keeps these impls out of the "other types implement" list of an
/// error about another item.
pub fn pack_item<'a>(
    self_ty: &Type,
    names: impl Iterator<Item = &'a str>,
    krate: &syn::Path,
) -> TokenStream {
    let p = quote!(#krate::__private);
    let names: Vec<&str> = names.collect();
    quote! {
        #[diagnostic::do_not_recommend]
        impl #p::PackItem for #self_ty {
            const NAMES: &'static [&'static str] = &[#(#names),*];

            fn __tools(value: Self) -> #p::Vec<#p::Arc<dyn #p::AgentTool>> {
                #p::Arc::new(value).tools()
            }
        }

        #[diagnostic::do_not_recommend]
        impl #p::PackItem<#p::Arc<#self_ty>> for #self_ty {
            const NAMES: &'static [&'static str] = &[#(#names),*];

            fn __tools(value: #p::Arc<Self>) -> #p::Vec<#p::Arc<dyn #p::AgentTool>> {
                value.tools()
            }
        }
    }
}

/// `(&&__OutputProbe::<ty>::NEW).__output_schema()`, every token spanned on `ty`'s first
/// token but the closing ones, on its last: rustc reports the method's bound there.
fn spanned_probe(ty: &Type) -> TokenStream {
    let tokens: Vec<proc_macro2::TokenTree> = quote!(#ty).into_iter().collect();
    let first = tokens.first().map_or_else(Span::call_site, |t| t.span());
    let last = match tokens.last() {
        Some(proc_macro2::TokenTree::Group(g)) => g.span_close(),
        Some(t) => t.span(),
        None => first,
    };
    let probe = Ident::new("__OutputProbe", first);
    let method = Ident::new("__output_schema", first);
    let close = quote_spanned!(last=> >::NEW);
    let receiver = quote_spanned!(first=> (&&#probe::<#ty #close));
    quote_spanned!(first=> #receiver.#method())
}

/// `_: <name><ty>` for a check's signature, its tokens spanned so that the type as a whole
/// has exactly the span of `ty` as the user wrote it: `name` (a `use`d alias of the check)
/// sits on `ty`'s first token and the closing `>` on its last. The path to pi-tool stays in
/// the `use`, with its own span, so that a wrong `crate = "..."` is still reported once.
pub fn spanned_check(name: &str, ty: &Type) -> TokenStream {
    let tokens: Vec<proc_macro2::TokenTree> = quote!(#ty).into_iter().collect();
    let first = tokens.first().map_or_else(Span::call_site, |t| t.span());
    let last = match tokens.last() {
        Some(proc_macro2::TokenTree::Group(g)) => g.span_close(),
        Some(t) => t.span(),
        None => first,
    };
    let name = Ident::new(name, first);
    let close = quote_spanned!(last=> >);
    quote_spanned!(first=> _: #name<#ty #close)
}
