//! The `#[pi_tools]` pipeline on an impl block: each `#[pi_tool]` method is read and
//! checked as a free function is, tool names are checked unique across the block, then
//! every tool and the block's accessors (`{method}_tool()`, `tools()`) are expanded, or
//! the block falls back to itself plus stand-ins and the errors.

use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;

use crate::ast::{Place, ToolFn};
use crate::error::{error, error_at, first_token_span};
use crate::{attr, check, expand, fallback, krate, only_crate};

/// The expansion of `#[pi_tools(args)]` on `input`, through `home` unless a `crate` key
/// says otherwise.
pub fn expand(args: TokenStream, input: TokenStream, home: krate::Home) -> TokenStream {
    let mut item: syn::ItemImpl = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(_) => {
            let err = error(
                first_token_span(&input),
                "#[pi_tools] goes on an impl block",
                "write #[pi_tools] above `impl State { ... }` and #[pi_tool] above each tool method; for a free function use #[pi_tool]",
            );
            return fallback::emit(input, TokenStream::new(), vec![err]);
        }
    };
    let (krate, mut errors) = only_crate::block_args(args);
    let krate = krate.unwrap_or_else(|| home.path());
    if let Some((path, _)) = &item.trait_ {
        errors.push(error(
            path.span(),
            "#[pi_tools] goes on an inherent impl block, not a trait impl",
            "move the tool methods into `impl State { ... }`",
        ));
    }
    if !item.generics.params.is_empty() {
        errors.push(error_at(
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
    let mut stubs = TokenStream::new();
    let mut stub_accessors: Vec<(syn::Ident, syn::Visibility, syn::Ident)> = Vec::new();
    let mut any_tool = false;
    let mut tool_paths: Vec<syn::Path> = Vec::new();
    let mut tool_methods: Vec<syn::Ident> = Vec::new();
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
        tool_paths.extend(tool_attrs.iter().map(|a| a.path().clone()));
        tool_methods.push(method.sig.ident.clone());
        any_tool = true;
        for extra in &tool_attrs[1..] {
            errors.push(error_at(
                extra,
                "#[pi_tool] is given twice on one method",
                "merge the keys into one #[pi_tool(...)]",
            ));
        }
        let struct_ident = expand::method_struct_ident(&method.sig.ident);
        let vis = expand::tool_visibility(&method.vis);
        stubs.extend(fallback::stub(&vis, &struct_ident, &krate));
        stub_accessors.push((method.sig.ident.clone(), vis.clone(), struct_ident.clone()));
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
                errors.push(error(
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
                vis,
                struct_ident,
            });
        }
    }
    if !any_tool && errors.is_empty() {
        errors.push(error(
            item.impl_token.span,
            "#[pi_tools] found no #[pi_tool] method in this block",
            "mark each tool method with #[pi_tool], or remove #[pi_tools]",
        ));
    }
    if !errors.is_empty() {
        for impl_item in &mut item.items {
            if let syn::ImplItem::Fn(method) = impl_item
                && tool_methods.contains(&method.sig.ident)
                && check::borrows_in_params(&ToolFn::from_signature(&method.sig))
            {
                fallback::without_params_lifetimes(&mut method.sig, &mut method.block);
            }
        }
        // The block's accessors too, where an inherent impl of its type can be written.
        if item.trait_.is_none() && item.generics.params.is_empty() {
            stubs.extend(fallback::accessors(&item.self_ty, &stub_accessors, &krate));
        }
        stubs.extend(attr::import_uses(
            &tool_paths,
            &krate,
            home.attribute_module(),
        ));
        return fallback::emit(quote!(#item), stubs, errors);
    }

    let self_ty = &*item.self_ty;
    let mut generated = TokenStream::new();
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
    let import_uses = attr::import_uses(&tool_paths, &krate, home.attribute_module());
    quote! {
        #item
        #generated
        #accessors
        #import_uses
    }
}
