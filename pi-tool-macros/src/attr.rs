//! Parsing of the `#[pi_tool(key = value, ...)]` and `#[pi_tools(...)]` arguments into a
//! list of keyed values.
//!
//! Parsing is deliberately loose (any `key = expr` list); what each key may hold is
//! decoded in `keys.rs` (and `krate.rs` for `#[pi_tools]`), so that every mistake gets its own targeted message instead of
//! a generic "expected string literal" from the parser.

use proc_macro2::TokenStream;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Expr, Ident, Token};

/// One `key = value` pair as written; `value` is `None` for a bare `key`, which the
/// caller reports (an unknown bare key deserves "unknown key", a known one "needs a value").
pub struct Arg {
    pub key: Ident,
    pub value: Option<Expr>,
}

/// Parses an attribute's arguments. `syntax_help` is the fix shown when they are not a
/// comma-separated `key = value` list.
pub fn parse_args(tokens: TokenStream, syntax_help: &str) -> (Vec<Arg>, Vec<syn::Error>) {
    let parser = |input: ParseStream| -> syn::Result<Vec<Arg>> {
        let mut args = Vec::new();
        while !input.is_empty() {
            let key: Ident = input.call(syn::ext::IdentExt::parse_any)?;
            if input.peek(Token![=]) {
                input.parse::<Token![=]>()?;
                let value: Expr = input.parse()?;
                args.push(Arg {
                    key,
                    value: Some(value),
                });
            } else {
                args.push(Arg { key, value: None });
                // Skip whatever follows the bare key up to the next comma.
                while !input.is_empty() && !input.peek(Token![,]) {
                    input.parse::<proc_macro2::TokenTree>()?;
                }
            }
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        Ok(args)
    };
    match parser.parse2(tokens) {
        Ok(args) => (args, Vec::new()),
        Err(error) => (
            Vec::new(),
            vec![crate::error::error(error.span(), &error, syntax_help)],
        ),
    }
}

/// The fix for a `#[pi_tool(...)]` argument list that does not parse.
pub const PI_TOOL_SYNTAX: &str = "#[pi_tool] takes `key = value` pairs separated by commas, for example #[pi_tool(name = \"get_weather\")]";

/// The arguments of a `#[pi_tool(...)]` attribute found on a method inside `#[pi_tools]`.
pub fn attribute_tokens(attr: &syn::Attribute) -> syn::Result<TokenStream> {
    match &attr.meta {
        syn::Meta::Path(_) => Ok(TokenStream::new()),
        syn::Meta::List(list) => Ok(list.tokens.clone()),
        syn::Meta::NameValue(nv) => Err(syn::Error::new(
            nv.eq_token.span(),
            "expected #[pi_tool] or #[pi_tool(key = value, ...)]",
        )),
    }
}

/// Whether an attribute is `#[pi_tool]` (bare or through a path ending in it).
pub fn is_pi_tool(attr: &syn::Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|s| s.ident == "pi_tool")
}

/// The argument of the `#[pi_tool(...)]` that `#[pi_tools]` puts on an empty item for each
/// of its methods' `#[pi_tool]` attributes (see [`import_uses`]); `#[pi_tool]` expands such
/// an item to nothing.
pub const IMPORT_USE: &str = "__pi_tools_uses_the_import";

/// Whether `#[pi_tool(args)]` is the item [`import_uses`] emits.
pub fn is_import_use(args: &TokenStream) -> bool {
    let mut tokens = args.clone().into_iter();
    matches!(
        (tokens.next(), tokens.next()),
        (Some(proc_macro2::TokenTree::Ident(ident)), None) if ident == IMPORT_USE
    )
}

/// For each `#[pi_tool]` path a `#[pi_tools]` block strips from its methods, an empty
/// item under that path as written, so that rustc resolves it where the user wrote it:
/// a `use pi_tool::pi_tool;` that only the block's methods name is then used (no
/// `unused import` warning, which `cargo fix` would act on). A block whose module does not
/// import `pi_tool` (the attribute inside `#[pi_tools]` needs no import) resolves the path
/// through the glob of `<krate>::__private::<entry>`, which an explicit import shadows.
pub fn import_uses(paths: &[syn::Path], krate: &syn::Path, entry: &str) -> TokenStream {
    if paths.is_empty() {
        return TokenStream::new();
    }
    let module = syn::Ident::new(entry, proc_macro2::Span::call_site());
    let mark = syn::Ident::new(IMPORT_USE, proc_macro2::Span::call_site());
    let uses = paths.iter().map(|path| {
        quote::quote! {
            #[#path(#mark)]
            const _: () = ();
        }
    });
    quote::quote! {
        #[allow(unused_imports)]
        use #krate::__private::#module::*;
        #(#uses)*
    }
}
