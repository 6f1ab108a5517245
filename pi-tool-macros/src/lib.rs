//! The `#[pi_tool]` and `#[pi_tools]` attribute macros of
//! [pi-tool](https://docs.rs/pi-tool). Use them through `pi_tool::pi_tool` and
//! `pi_tool::pi_tools`; the crate documentation of `pi_tool` explains the forms, and
//! every macro error says how to fix it.
//!
//! The pipeline, as in serde_derive: `attr` parses the attribute arguments into keyed
//! expressions, `keys` decodes each value, `ast` reads the function into a typed picture,
//! `check` applies every rule (all errors collected, each built by `error` and spanned on
//! the user's tokens), `expand` generates the code, and `fallback` emits the original item
//! plus the errors when something is wrong. `free` runs that pipeline for `#[pi_tool]`,
//! `block` for the methods of a `#[pi_tools]` impl block. `doc` turns rustdoc into the
//! model-facing description. `krate` handles the `crate = "..."` key (the path to a
//! renamed pi-tool) and the default path of each entry point (`pi_tool` or
//! `pi_tool_core`); `only_crate` parses the arguments of the attributes whose only key it
//! is (`#[pi_tools]`, `#[params]`, `#[output]`). `params` is `#[params]` and
//! `#[output]`, which derive what a params or output type needs in one line. `pack` is
//! what `tool_pack!` forwards to: the pack of its items and the check of their names.

mod ast;
mod attr;
mod block;
mod check;
mod doc;
mod error;
mod expand;
mod fallback;
mod free;
mod keys;
mod krate;
mod names;
mod only_crate;
mod pack;
mod params;
mod tool_name_repair;

use proc_macro::TokenStream;

use krate::Home;

#[doc = include_str!("../docs/pi_tool.md")]
#[proc_macro_attribute]
pub fn pi_tool(args: TokenStream, input: TokenStream) -> TokenStream {
    free::expand(args.into(), input.into(), Home::PiTool).into()
}

#[doc = include_str!("../docs/pi_tools.md")]
#[proc_macro_attribute]
pub fn pi_tools(args: TokenStream, input: TokenStream) -> TokenStream {
    block::expand(args.into(), input.into(), Home::PiTool).into()
}

#[doc = include_str!("../docs/params.md")]
#[proc_macro_attribute]
pub fn params(args: TokenStream, input: TokenStream) -> TokenStream {
    params::expand(
        args.into(),
        input.into(),
        params::Kind::Params,
        Home::PiTool,
    )
    .into()
}

#[doc = include_str!("../docs/output.md")]
#[proc_macro_attribute]
pub fn output(args: TokenStream, input: TokenStream) -> TokenStream {
    params::expand(
        args.into(),
        input.into(),
        params::Kind::Output,
        Home::PiTool,
    )
    .into()
}

/// The items of `pi_tool_core::tool_pack!`, which forwards here as
/// `tool_pack_items!($crate; ITEMS)`; see that macro.
#[doc(hidden)]
#[proc_macro]
pub fn tool_pack_items(input: TokenStream) -> TokenStream {
    pack::expand(input.into()).into()
}

// The same four macros for a tool pack that depends on `pi-tool-core` alone, which
// re-exports them as `pi_tool_core::{pi_tool, pi_tools, params, output}`: their generated
// code names `::pi_tool_core`. A proc macro cannot see the path it was called through,
// so the crate each entry point serves is its argument to the pipeline.

/// `pi_tool_core::pi_tool`, the same attribute as `pi_tool::pi_tool` for a pack that
/// depends on `pi-tool-core` alone: its generated code names `::pi_tool_core` (unless a
/// `crate = "..."` key says otherwise).
#[doc = ""]
#[doc = include_str!("../docs/pi_tool.md")]
#[proc_macro_attribute]
pub fn core_pi_tool(args: TokenStream, input: TokenStream) -> TokenStream {
    free::expand(args.into(), input.into(), Home::Core).into()
}

/// `pi_tool_core::pi_tools`, the same attribute as `pi_tool::pi_tools` for a pack that
/// depends on `pi-tool-core` alone: its generated code names `::pi_tool_core` (unless a
/// `crate = "..."` key says otherwise).
#[doc = ""]
#[doc = include_str!("../docs/pi_tools.md")]
#[proc_macro_attribute]
pub fn core_pi_tools(args: TokenStream, input: TokenStream) -> TokenStream {
    block::expand(args.into(), input.into(), Home::Core).into()
}

/// `pi_tool_core::params`, the same attribute as `pi_tool::params` for a pack that
/// depends on `pi-tool-core` alone: its generated code names `::pi_tool_core` (unless a
/// `crate = "..."` key says otherwise).
#[doc = ""]
#[doc = include_str!("../docs/params.md")]
#[proc_macro_attribute]
pub fn core_params(args: TokenStream, input: TokenStream) -> TokenStream {
    params::expand(args.into(), input.into(), params::Kind::Params, Home::Core).into()
}

/// `pi_tool_core::output`, the same attribute as `pi_tool::output` for a pack that
/// depends on `pi-tool-core` alone: its generated code names `::pi_tool_core` (unless a
/// `crate = "..."` key says otherwise).
#[doc = ""]
#[doc = include_str!("../docs/output.md")]
#[proc_macro_attribute]
pub fn core_output(args: TokenStream, input: TokenStream) -> TokenStream {
    params::expand(args.into(), input.into(), params::Kind::Output, Home::Core).into()
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
        free_from(crate::krate::Home::PiTool, args)
    }

    fn free_from(
        home: crate::krate::Home,
        args: proc_macro2::TokenStream,
    ) -> proc_macro2::TokenStream {
        crate::free::expand(
            args,
            quote! {
                /// Included docs go through `trim_doc`, which the generated code also names.
                #[doc = concat!("Adds.")]
                pub async fn add(params: Params) -> Result<String, ToolError> {
                    Ok(String::new())
                }
            },
            home,
        )
    }

    fn block(args: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
        block_from(crate::krate::Home::PiTool, args)
    }

    fn block_from(
        home: crate::krate::Home,
        args: proc_macro2::TokenStream,
    ) -> proc_macro2::TokenStream {
        crate::block::expand(
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
            home,
        )
    }

    #[test]
    fn the_cores_reexports_name_the_core() {
        let home = crate::krate::Home::Core;
        let one = free_from(home, quote!());
        let many = block_from(home, quote!());
        assert!(all_through(&one, ":: pi_tool_core"), "{one}");
        assert!(all_through(&many, ":: pi_tool_core"), "{many}");
        // The key still wins over the entry point.
        let keyed = free_from(home, quote!(crate = "pt"));
        assert!(all_through(&keyed, "pt"), "{keyed}");
        assert!(all_through(&free(quote!()), ":: pi_tool"));
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
