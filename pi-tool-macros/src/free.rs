//! The `#[pi_tool]` pipeline on a free function (or a lone method): read the function,
//! check it, then expand it into its tool, or fall back to the function as written plus a
//! stand-in and the errors.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::{Place, ToolFn};
use crate::error::{error, first_token_span};
use crate::{attr, check, expand, fallback, krate};

/// The expansion of `#[pi_tool(args)]` on `input`, through `home` unless a `crate` key
/// says otherwise.
pub fn expand(args: TokenStream, input: TokenStream, home: krate::Home) -> TokenStream {
    if attr::is_import_use(&args) {
        return TokenStream::new();
    }
    let item: syn::ItemFn = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(_) => {
            let err = error(
                first_token_span(&input),
                "#[pi_tool] goes on an `async fn`",
                "write #[pi_tool] above `async fn name(params: Params) -> Result<T, ToolError>`; for the methods of an impl block, put #[pi_tools] on the block",
            );
            return fallback::emit(input, TokenStream::new(), vec![err]);
        }
    };
    let (args, mut errors) = attr::parse_args(args, attr::PI_TOOL_SYNTAX);
    let stub_krate = krate::given(&args).unwrap_or_else(|| home.path());
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
            let krate = spec.krate.clone().unwrap_or_else(|| home.path());
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
                TokenStream::new()
            };
            let input = if check::borrows_in_params(&tool) {
                let mut item = item;
                fallback::without_params_lifetimes(&mut item.sig, &mut item.block);
                quote!(#item)
            } else {
                input
            };
            fallback::emit(input, stub, errors)
        }
    }
}
