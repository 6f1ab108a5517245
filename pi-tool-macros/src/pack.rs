//! `tool_pack!`'s items: the pack they build and the check that no two of them share a
//! tool name, each item's checks spanned on the user's own tokens for that item.
//!
//! `pi_tool_core::tool_pack!` is a `macro_rules!` that forwards here with `$crate`
//! first (`tool_pack_items!($crate; ITEMS)`), so the generated paths reach the core
//! whichever crate re-exports the macro and whatever the user calls the dependency.
//!
//! An item is a type, or `Type = value`: a `#[pi_tool]` tool (`GetWeather`, or
//! `GetForecastTool = almanac.get_forecast_tool()`), or a `#[pi_tools]` block with its state
//! (`Almanac = almanac`, an `Almanac` or an `Arc<Almanac>`), which brings every tool of
//! the block. What an item with a value brings is the core's `pack::PackItem<V>` for the
//! item type and the value's type `V`; an item named alone must be a `#[pi_tool]` tool,
//! and what it brings is the core's `pack::UnitItem`, which `#[pi_tool]` implements on its
//! unit struct.
//!
//! The duplicate check: for each item after the first, one constant
//! `<Item as NameNotRepeated<{ repeats(&[earlier items' NAMES], Item's NAMES) }>>::OK`.
//! Its const argument is a non-generic constant expression, which stable Rust evaluates
//! in a const-generic position, and `NameNotRepeated<true>` has no impl, so a repeated
//! name is one error whose text is the trait's `on_unimplemented`, spanned on the item's
//! type as the user wrote it (rustc reports a qualified path's failed trait on its self
//! type), with no "evaluation panicked" or "required by a bound" framing. A type that is
//! not an item fails `PackItem` with the same text and span in the check and in the
//! push, which rustc reports once.

use proc_macro2::{TokenStream, TokenTree};
use quote::quote;
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Expr, Token, Type};

use crate::error::error_at;

/// One item: a type, and the value it is built from when that is not the type itself.
struct Item {
    ty: Type,
    value: Option<Expr>,
}

impl Parse for Item {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let ty: Type = input.parse()?;
        let value = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            Some(input.parse()?)
        } else {
            None
        };
        Ok(Item { ty, value })
    }
}

/// The expansion of `tool_pack_items!(KRATE; ITEMS)`.
pub fn expand(input: TokenStream) -> TokenStream {
    let mut tokens = input.into_iter();
    let mut krate = TokenStream::new();
    for token in tokens.by_ref() {
        if matches!(&token, TokenTree::Punct(p) if p.as_char() == ';') {
            break;
        }
        krate.extend([token]);
    }
    let items = match Punctuated::<Item, Token![,]>::parse_terminated.parse2(tokens.collect()) {
        Ok(items) => items,
        Err(error) => {
            let message = error.to_string();
            let error = syn::Error::new(
                error.span(),
                format!(
                    "{message}\n\nhelp: `tool_pack!` lists its tools separated by commas: a #[pi_tool] tool (`GetWeather`), a tool with state (`GetForecastTool = almanac.get_forecast_tool()`) or a #[pi_tools] block with its state (`Almanac = almanac`)"
                ),
            );
            return error.into_compile_error();
        }
    };

    let pack = quote!(#krate::pack);
    let mut checks = TokenStream::new();
    let mut earlier: Vec<TokenStream> = Vec::new();
    let mut pushes = Vec::new();
    for item in &items {
        let ty = &item.ty;
        // An item with a value goes through `PackItem<V>`; one named alone must be a
        // #[pi_tool] tool's unit struct and goes through `UnitItem` only, so that a type
        // that is not one (a #[pi_tools] block's state) is one error on the user's token,
        // not rustc's "expected value, found struct".
        let (names, push) = match &item.value {
            Some(value) => (
                quote!(<#ty as #pack::PackItem>::NAMES),
                quote!(<#ty as #pack::PackItem<_>>::__tools(#value)),
            ),
            None => match ty {
                Type::Path(path) if path.qself.is_none() => (
                    quote!(<#path as #pack::UnitItem>::NAMES),
                    quote!(<#path as #pack::UnitItem>::__tools()),
                ),
                _ => {
                    return error_at(
                        ty,
                        "this `tool_pack!` item needs a value",
                        "write `Type = value`: the tool, or the #[pi_tools] block's state",
                    )
                    .into_compile_error();
                }
            },
        };
        if !earlier.is_empty() {
            checks.extend(quote! {
                const _: () = <#ty as #pack::NameNotRepeated<{
                    #pack::repeats(&[#(#earlier),*], #names)
                }>>::OK;
            });
        }
        earlier.push(names);
        pushes.push(push);
    }
    quote! {{
        #checks
        #pack::pack_of(
            #pack::ToolOwner::module(::core::env!("CARGO_PKG_NAME"), ::core::module_path!()),
            ::std::vec![#(#pushes),*],
        )
    }}
}

#[cfg(test)]
mod tests {
    use quote::quote;

    #[test]
    fn one_check_per_item_after_the_first_against_every_earlier_item() {
        let out = super::expand(quote!(krate; A, B = b, C = make()));
        let text = out.to_string();
        assert_eq!(text.matches("NameNotRepeated").count(), 2, "{text}");
        assert!(text.contains(
            "< C as krate :: pack :: NameNotRepeated < { krate :: pack :: repeats (& [< A as krate :: pack :: UnitItem > :: NAMES , < B as krate :: pack :: PackItem > :: NAMES] , < C as krate :: pack :: PackItem > :: NAMES) } >> :: OK"
        ), "{text}");
        assert!(
            text.contains("< A as krate :: pack :: UnitItem > :: __tools ()"),
            "{text}"
        );
        assert!(text.contains("< B as krate :: pack :: PackItem < _ >> :: __tools (b)"));
        assert!(text.contains("__tools (make ())"));
    }

    #[test]
    fn an_empty_pack_and_a_trailing_comma() {
        let empty = super::expand(quote!(krate;)).to_string();
        assert!(empty.contains("pack_of"), "{empty}");
        assert!(!empty.contains("compile_error"), "{empty}");
        let trailing = super::expand(quote!(krate; A, B,)).to_string();
        assert!(!trailing.contains("compile_error"), "{trailing}");
    }

    #[test]
    fn a_type_that_is_not_a_value_needs_one() {
        let out = super::expand(quote!(krate; &A)).to_string();
        assert!(out.contains("needs a value"), "{out}");
        let bad = super::expand(quote!(krate; A B)).to_string();
        assert!(bad.contains("separated by commas"), "{bad}");
    }
}
