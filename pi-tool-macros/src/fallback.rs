//! What the macro emits when the tool is wrong: the user's item unchanged, the errors, and
//! a stand-in for each tool struct.
//!
//! Re-emitting the item keeps the rest of the crate compiling against the function, so one
//! mistake gives one error instead of a cascade of "cannot find function". The stand-in
//! does the same for code that names the tool: a struct of the same name and visibility
//! that is a tool (a `Tool` with no params and no details), so that
//! `GetWeather.into_agent_tool()`, `GetWeather::NAME` or a pack listing `GetWeather` compile
//! and the only error left is the one on the attribute, as thiserror's fallback impls do.
//! A `#[pi_tools]` block also gets its accessors (`{method}_tool()`, `tools()`).
//! The stand-in never runs: the crate does not compile while the error stands.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Ident, Path, Type, Visibility};

/// The stand-in for a tool struct that could not be generated. Its name is the struct's
/// (a valid tool name, distinct per tool, so pack checks stay quiet).
pub fn stub(vis: &Visibility, ident: &Ident, krate: &Path) -> TokenStream {
    let p = quote!(#krate::__private);
    let name = ident.to_string();
    quote! {
        #[allow(dead_code)]
        #[doc(hidden)]
        #[derive(Debug)]
        #vis struct #ident;

        impl #p::Tool for #ident {
            type Params = #p::NoParams;
            type Details = #p::NoDetails;
            const NAME: &'static str = #name;
            const LABEL: &'static str = #name;
            const DESCRIPTION: &'static str = #name;

            fn execute(
                &self,
                _: #p::ToolInvocation<'_, #p::NoParams, #p::NoDetails>,
            ) -> impl #p::Future<
                Output = #p::Result<#p::AgentToolResult<#p::NoDetails>, #p::ToolError>,
            > + #p::Send {
                ::core::future::ready(#p::Result::Err(#p::ToolError::new(#name)))
            }
        }

        #[diagnostic::do_not_recommend]
        impl #p::UnitItem for #ident {
            const VALUE: Self = #ident;
        }
    }
}

/// Stand-ins for a `#[pi_tools]` block's accessors (`{method}_tool()`, `tools()`), returning the stand-in structs and no tools.
pub fn accessors(
    self_ty: &Type,
    methods: &[(Ident, Visibility, Ident)],
    krate: &Path,
) -> TokenStream {
    let p = quote!(#krate::__private);
    let each = methods.iter().map(|(method, vis, ident)| {
        let accessor = format_ident!("{}_tool", method.to_string().trim_start_matches("r#"));
        quote! {
            #[allow(dead_code)]
            #[doc(hidden)]
            #vis fn #accessor(self: &#p::Arc<Self>) -> #ident {
                #ident
            }
        }
    });
    // The stand-ins' names, so that a pack listing the block checks quietly.
    let names: Vec<String> = methods
        .iter()
        .map(|(_, _, ident)| ident.to_string())
        .collect();
    let pack_item = crate::expand::pack_item(self_ty, names.iter().map(String::as_str), krate);
    quote! {
        #[allow(dead_code)]
        impl #self_ty {
            #(#each)*

            #[doc(hidden)]
            pub fn tools(self: &#p::Arc<Self>) -> #p::Vec<#p::Arc<dyn #p::AgentTool>> {
                #p::Vec::new()
            }

        }

        #pack_item
    }
}

/// A tool function whose params type is written with a lifetime (`WordCountParams<'_>`),
/// as the fallback emits it: `#[pi_tool::params]` emits that type without its lifetime
/// parameters, so the signature as written would add rustc's errors to the one on the
/// lifetime. The lifetime arguments are left out, and the function is made a plain `fn`
/// (where a type that keeps its lifetime parameters may elide them) whose body is still
/// type-checked, as an `async` block of the declared output type, so that what it uses
/// stays used.
pub fn without_params_lifetimes(sig: &mut syn::Signature, block: &mut syn::Block) {
    crate::ast::strip_params_lifetimes(sig);
    sig.asyncness = None;
    let output = match &sig.output {
        syn::ReturnType::Default => quote!(()),
        syn::ReturnType::Type(_, ty) => quote!(#ty),
    };
    let body = &*block;
    *block = syn::parse_quote! {{
        fn __typed<F: ::core::future::Future<Output = R>, R>(_: F) {}
        __typed::<_, #output>(async move #body);
        loop {}
    }};
}

/// The item as written, the stand-ins, and every error.
pub fn emit(item: TokenStream, stubs: TokenStream, errors: Vec<syn::Error>) -> TokenStream {
    let errors = errors.into_iter().map(|e| e.into_compile_error());
    quote! {
        #item
        #stubs
        #(#errors)*
    }
}
