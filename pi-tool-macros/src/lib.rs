//! The `#[pi_tool]` and `#[pi_tools]` attribute macros of
//! [pi-tool](https://docs.rs/pi-tool). Use them through `pi_tool::pi_tool` and
//! `pi_tool::pi_tools`; the crate documentation of `pi_tool` explains the forms, and
//! every macro error says how to fix it.
//!
//! The pipeline, as in serde_derive: `attr` parses the attribute arguments, `ast` reads
//! the function into a typed picture, `check` applies every rule (all errors collected,
//! each spanned on the user's tokens), `expand` generates the code, and `fallback` emits
//! the original item plus the errors when something is wrong. `doc` turns rustdoc into
//! the model-facing description. `krate` handles the `crate = "..."` key (the path to a
//! renamed pi-tool), the only argument of `#[pi_tools]`. `params` is `#[params]`, which
//! derives what a params type needs in one line.

mod ast;
mod attr;
mod check;
mod doc;
mod expand;
mod fallback;
mod krate;
mod names;
mod params;

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::quote;
use syn::spanned::Spanned;

use crate::ast::ToolFn;
use crate::check::Place;

#[doc = include_str!("../docs/pi_tool.md")]
#[proc_macro_attribute]
pub fn pi_tool(args: TokenStream, input: TokenStream) -> TokenStream {
    free_fn(args.into(), input.into()).into()
}

#[doc = include_str!("../docs/pi_tools.md")]
#[proc_macro_attribute]
pub fn pi_tools(args: TokenStream, input: TokenStream) -> TokenStream {
    impl_block(args.into(), input.into()).into()
}

#[doc = include_str!("../docs/params.md")]
#[proc_macro_attribute]
pub fn params(args: TokenStream, input: TokenStream) -> TokenStream {
    params::expand(args.into(), input.into()).into()
}

/// The span of the item's first token after its attributes (`pub`, `struct`, `fn`, ...).
fn first_token_span(tokens: &TokenStream2) -> proc_macro2::Span {
    let mut iter = tokens.clone().into_iter().peekable();
    while let Some(token) = iter.next() {
        let is_attr_start = matches!(&token, proc_macro2::TokenTree::Punct(p) if p.as_char() == '#')
            && matches!(iter.peek(), Some(proc_macro2::TokenTree::Group(g)) if g.delimiter() == proc_macro2::Delimiter::Bracket);
        if is_attr_start {
            iter.next();
            continue;
        }
        return token.span();
    }
    proc_macro2::Span::call_site()
}

fn free_fn(args: TokenStream2, input: TokenStream2) -> TokenStream2 {
    let item: syn::ItemFn = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(_) => {
            let error = check::error(
                first_token_span(&input),
                "#[pi_tool] goes on an `async fn`",
                "write #[pi_tool] above `async fn name(params: Params) -> Result<T, ToolError>`; for the methods of an impl block, put #[pi_tools] on the block",
            );
            return fallback::emit(input, TokenStream2::new(), vec![error]);
        }
    };
    let (args, mut errors) = attr::parse_args(args, attr::PI_TOOL_SYNTAX);
    let stub_krate = krate::given(&args).unwrap_or_else(krate::default_path);
    let tool = ToolFn::from_signature(&item.sig);
    let spec = check::check(args, &item.attrs, &tool, Place::Free, &mut errors);
    let struct_ident = expand::fn_struct_ident(&item.sig.ident);
    match spec {
        Some(_) if tool.defers_to_rustc() => fallback::emit(
            input,
            fallback::stub(&item.vis, &struct_ident, &stub_krate),
            errors,
        ),
        Some(spec) if errors.is_empty() => {
            let krate = spec.krate.clone().unwrap_or_else(krate::default_path);
            let generated = expand::tool(
                &tool,
                &spec,
                &item.vis,
                &struct_ident,
                expand::Target::Free,
                &krate,
            );
            quote!(#item #generated)
        }
        _ => {
            // A method (`&self`) sits inside an impl block, where no struct may follow.
            let stub = if tool.receiver.is_none() {
                fallback::stub(&item.vis, &struct_ident, &stub_krate)
            } else {
                TokenStream2::new()
            };
            fallback::emit(input, stub, errors)
        }
    }
}

fn impl_block(args: TokenStream2, input: TokenStream2) -> TokenStream2 {
    let mut item: syn::ItemImpl = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(_) => {
            let error = check::error(
                first_token_span(&input),
                "#[pi_tools] goes on an impl block",
                "write #[pi_tools] above `impl State { ... }` and #[pi_tool] above each tool method; for a free function use #[pi_tool]",
            );
            return fallback::emit(input, TokenStream2::new(), vec![error]);
        }
    };
    let (krate, mut errors) = krate::block_args(args);
    let krate = krate.unwrap_or_else(krate::default_path);
    if let Some((path, _)) = &item.trait_ {
        errors.push(check::error(
            path.span(),
            "#[pi_tools] goes on an inherent impl block, not a trait impl",
            "move the tool methods into `impl State { ... }`",
        ));
    }
    if !item.generics.params.is_empty() {
        errors.push(check::error_at(
            &item.generics,
            "a #[pi_tools] impl block cannot be generic",
            "tools share one concrete state type: use `impl State { ... }` with a concrete `State`",
        ));
    }

    struct Found {
        tool: ToolFn,
        spec: check::Spec,
        vis: syn::Visibility,
        struct_ident: syn::Ident,
    }
    let mut found: Vec<Found> = Vec::new();
    let mut stubs = TokenStream2::new();
    let mut stub_accessors: Vec<(syn::Ident, syn::Visibility, syn::Ident)> = Vec::new();
    let mut any_tool = false;
    for impl_item in &mut item.items {
        let syn::ImplItem::Fn(method) = impl_item else {
            continue;
        };
        let mut tool_attrs = Vec::new();
        method.attrs.retain(|attr| {
            if attr::is_pi_tool(attr) {
                tool_attrs.push(attr.clone());
                false
            } else {
                true
            }
        });
        let Some(first) = tool_attrs.first() else {
            continue;
        };
        any_tool = true;
        for extra in &tool_attrs[1..] {
            errors.push(check::error_at(
                extra,
                "#[pi_tool] is given twice on one method",
                "merge the keys into one #[pi_tool(...)]",
            ));
        }
        let struct_ident = expand::method_struct_ident(&method.sig.ident);
        stubs.extend(fallback::stub(&method.vis, &struct_ident, &krate));
        stub_accessors.push((
            method.sig.ident.clone(),
            method.vis.clone(),
            struct_ident.clone(),
        ));
        let tokens = match attr::attribute_tokens(first) {
            Ok(tokens) => tokens,
            Err(error) => {
                errors.push(error);
                continue;
            }
        };
        let (args, arg_errors) = attr::parse_args(tokens, attr::PI_TOOL_SYNTAX);
        errors.extend(arg_errors);
        let tool = ToolFn::from_signature(&method.sig);
        if tool.defers_to_rustc() {
            // rustc rejects the method itself; its tool is left out.
            continue;
        }
        if let Some(spec) = check::check(args, &method.attrs, &tool, Place::Method, &mut errors) {
            if let Some(other) = found.iter().find(|f| f.spec.name == spec.name) {
                errors.push(check::error(
                    spec.name_span,
                    format!(
                        "two tools of this block are named `{}` (`{}` and `{}`)",
                        spec.name, other.tool.ident, tool.ident
                    ),
                    "tool names must be unique: give one of them another `name = \"...\"`",
                ));
            }
            found.push(Found {
                tool,
                spec,
                vis: method.vis.clone(),
                struct_ident,
            });
        }
    }
    if !any_tool && errors.is_empty() {
        errors.push(check::error(
            item.impl_token.span,
            "#[pi_tools] found no #[pi_tool] method in this block",
            "mark each tool method with #[pi_tool], or remove #[pi_tools]",
        ));
    }
    if !errors.is_empty() {
        // The block's accessors too, where an inherent impl of its type can be written.
        if item.trait_.is_none() && item.generics.params.is_empty() {
            stubs.extend(fallback::accessors(&item.self_ty, &stub_accessors, &krate));
        }
        return fallback::emit(quote!(#item), stubs, errors);
    }

    let self_ty = &*item.self_ty;
    let mut generated = TokenStream2::new();
    let mut accessors = Vec::new();
    for f in &found {
        generated.extend(expand::tool(
            &f.tool,
            &f.spec,
            &f.vis,
            &f.struct_ident,
            expand::Target::Method { self_ty },
            &krate,
        ));
        accessors.push(expand::MethodTool {
            method: &f.tool.ident,
            vis: &f.vis,
            struct_ident: f.struct_ident.clone(),
            name: &f.spec.name,
        });
    }
    let accessors = expand::accessors(self_ty, &accessors, &krate);
    quote! {
        #item
        #generated
        #accessors
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    /// Whether every path of the expansion into pi-tool starts with `prefix`.
    fn all_through(tokens: &proc_macro2::TokenStream, prefix: &str) -> bool {
        let text = tokens.to_string();
        let all = text.matches(":: __private ::").count();
        all > 0 && text.matches(&format!("{prefix} :: __private ::")).count() == all
    }

    fn free(args: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
        super::free_fn(
            args,
            quote! {
                /// Included docs go through `trim_doc`, which the generated code also names.
                #[doc = concat!("Adds.")]
                pub async fn add(params: Params) -> Result<String, ToolError> {
                    Ok(String::new())
                }
            },
        )
    }

    fn block(args: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
        super::impl_block(
            args,
            quote! {
                impl Counter {
                    /// Reads.
                    #[pi_tool]
                    async fn read(&self) -> Result<String, ToolError> {
                        Ok(String::new())
                    }
                }
            },
        )
    }

    #[test]
    fn the_crate_key_replaces_every_path_to_pi_tool() {
        assert!(all_through(&free(quote!()), ":: pi_tool"));
        assert!(all_through(&block(quote!()), ":: pi_tool"));
        for (args, prefix) in [
            (quote!(crate = "pt"), "pt"),
            (quote!(crate = "::pt"), ":: pt"),
            (
                quote!(crate = "my::reexport::pi_tool"),
                "my :: reexport :: pi_tool",
            ),
        ] {
            for expanded in [free(args.clone()), block(args)] {
                assert!(
                    !expanded.to_string().contains("compile_error"),
                    "{expanded}"
                );
                assert!(all_through(&expanded, prefix), "{prefix}: {expanded}");
            }
        }
        let free = free(quote!(crate = "pt")).to_string();
        assert!(free.contains("pt :: __private :: trim_doc (pt :: __private :: concat !"));
    }
}
