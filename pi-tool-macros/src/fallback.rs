//! What the macro emits when the tool is wrong: the user's item unchanged, the errors, and
//! an empty stand-in for each tool struct.
//!
//! Re-emitting the item keeps the rest of the crate compiling against the function, so one
//! mistake gives one error instead of a cascade of "cannot find function". The stand-in
//! struct (same name and visibility, no trait impls) does the same for code that names the
//! tool (`GetWeather.into_agent_tool()` then reports a missing trait impl on the tool, not
//! an unknown name). The stand-in allows dead code: it exists only to quiet cascades.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Ident, Visibility};

/// The stand-in for a tool struct that could not be generated.
pub fn stub(vis: &Visibility, ident: &Ident) -> TokenStream {
    quote! {
        #[allow(dead_code)]
        #[doc(hidden)]
        #vis struct #ident;
    }
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
