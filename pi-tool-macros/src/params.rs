//! `#[pi_tool::params]`: a tool's params type in one line. It adds the two derives a
//! params type needs, `Deserialize` and `JsonSchema`, with the crate paths that make them
//! resolve through pi-tool, so the user's crate needs no serde or schemars dependency and
//! no `#[schemars(crate = ...)]` line. `#[serde(...)]` and `#[schemars(...)]` attributes
//! on the item keep working, because the derives register them as helpers.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Path;

use crate::error::error;
use crate::krate;

/// The expansion: the derives, then the item as written. On a bad argument the derives
/// are still added (with the default path), so that uses of the type add no error.
pub fn expand(args: TokenStream, input: TokenStream) -> TokenStream {
    let (krate, mut errors) = krate::crate_only_args(
        args,
        "#[params] takes nothing, or `crate = \"...\"` for a renamed pi-tool dependency, for example #[pi_tool::params(crate = \"pt\")]",
        key_error,
    );
    let krate = krate.unwrap_or_else(krate::default_path);
    let item: syn::Item = match syn::parse2(input.clone()) {
        Ok(item @ (syn::Item::Struct(_) | syn::Item::Enum(_))) => item,
        _ => {
            errors.push(error(
                crate::error::first_token_span(&input),
                "#[params] goes on a struct or an enum",
                "put #[pi_tool::params] above the type of the tool's params argument: `struct WeatherParams { city: String }`",
            ));
            let errors = errors.into_iter().map(|e| e.to_compile_error());
            return quote! { #(#errors)* #input };
        }
    };
    let derives = derives(&krate);
    let errors = errors.into_iter().map(|e| e.to_compile_error());
    quote! {
        #(#errors)*
        #derives
        #item
    }
}

fn derives(krate: &Path) -> TokenStream {
    let serde_path = quote!(#krate::__private::serde)
        .to_string()
        .replace(' ', "");
    let schemars_path = quote!(#krate::__private::schemars)
        .to_string()
        .replace(' ', "");
    quote! {
        #[derive(#krate::__private::serde::Deserialize, #krate::__private::schemars::JsonSchema)]
        #[serde(crate = #serde_path)]
        #[schemars(crate = #schemars_path)]
    }
}

fn key_error(key: &syn::Ident, key_name: &str) -> syn::Error {
    let help = if crate::keys::KEYS.contains(&key_name) {
        format!(
            "`{key_name}` describes a tool: write it in #[pi_tool({key_name} = ...)] on the tool's function; #[params] takes only `crate = \"...\"`"
        )
    } else {
        "#[params] takes only `crate = \"...\"`; a field's description is its doc comment, and serde or schemars options go in #[serde(...)] / #[schemars(...)] below".to_owned()
    };
    error(
        key.span(),
        format!("unknown key `{key_name}` for #[params]"),
        help,
    )
}
