//! How every macro error is built: a message, then a `help:` line with the fix, spanned on
//! the user's tokens. One place, so that every rule's error reads the same way.

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};

/// An error with a `help:` line.
pub fn error(
    span: Span,
    message: impl std::fmt::Display,
    help: impl std::fmt::Display,
) -> syn::Error {
    syn::Error::new(span, format!("{message}\n\nhelp: {help}"))
}

/// An error spanning all of `tokens` (start to end), with a `help:` line. syn's
/// `Spanned::span` would keep only the first token on stable Rust.
pub fn error_at(
    tokens: impl quote::ToTokens,
    message: impl std::fmt::Display,
    help: impl std::fmt::Display,
) -> syn::Error {
    syn::Error::new_spanned(tokens, format!("{message}\n\nhelp: {help}"))
}

/// The span of the item's first token after its attributes (`pub`, `struct`, `fn`, ...),
/// where an error about the item as a whole goes.
pub fn first_token_span(tokens: &TokenStream) -> Span {
    let mut iter = tokens.clone().into_iter().peekable();
    while let Some(token) = iter.next() {
        let is_attr_start = matches!(&token, TokenTree::Punct(p) if p.as_char() == '#')
            && matches!(iter.peek(), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Bracket);
        if is_attr_start {
            iter.next();
            continue;
        }
        return token.span();
    }
    Span::call_site()
}
