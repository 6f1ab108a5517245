//! The arguments of an attribute whose only key is `crate = "..."`: `#[pi_tools(...)]`,
//! `#[params(...)]` and `#[output(...)]`. The value itself is decoded by `krate`; here,
//! the list around it, and the error for any other key (a method's key put on the
//! block, or a typo).

use proc_macro2::TokenStream;
use syn::Path;

use crate::attr::Arg;
use crate::error::error;
use crate::keys::KEYS;
use crate::{krate, names};

/// The arguments of `#[pi_tools(...)]`: nothing, or `crate = "..."`.
pub fn block_args(tokens: TokenStream) -> (Option<Path>, Vec<syn::Error>) {
    crate_only_args(
        tokens,
        "#[pi_tools] takes one key, `crate = \"...\"` (for a renamed pi-tool dependency), for example #[pi_tools(crate = \"pt\")]",
        block_key_error,
    )
}

/// The arguments of an attribute whose only key is `crate = "..."` (`#[pi_tools]`,
/// `#[params]`); `other_key` words the error for any other key.
pub fn crate_only_args(
    tokens: TokenStream,
    syntax_help: &str,
    other_key: fn(&syn::Ident, &str) -> syn::Error,
) -> (Option<Path>, Vec<syn::Error>) {
    let (args, mut errors) = crate::attr::parse_args(tokens, syntax_help);
    let mut found = None;
    let mut seen = false;
    for Arg { key, value } in args {
        let key_name = key.to_string();
        if key_name != "crate" {
            errors.push(other_key(&key, &key_name));
            continue;
        }
        let Some(value) = value else {
            errors.push(error(
                key.span(),
                "`crate` needs a value",
                "write `crate = \"pt\"`: the path your code uses for pi-tool",
            ));
            continue;
        };
        if seen {
            errors.push(error(
                key.span(),
                "`crate` is given twice",
                "remove one of the `crate = ...` entries",
            ));
            continue;
        }
        seen = true;
        found = krate::path(&value, &mut errors);
    }
    (found, errors)
}

/// Any key but `crate` on `#[pi_tools]`: a method's key put on the block, or a typo.
fn block_key_error(key: &syn::Ident, key_name: &str) -> syn::Error {
    if KEYS.contains(&key_name) {
        return error(
            key.span(),
            format!("`{key_name}` goes on a method's #[pi_tool(...)], not on #[pi_tools]"),
            format!(
                "#[pi_tools] takes only `crate = \"...\"`; write #[pi_tool({key_name} = ...)] above the tool method"
            ),
        );
    }
    let help = match names::closest(key_name, KEYS) {
        Some("crate") => "did you mean `crate`?".to_owned(),
        Some(suggestion) => format!(
            "did you mean `{suggestion}`? It goes on each method's #[pi_tool(...)]; #[pi_tools] takes only `crate = \"...\"`"
        ),
        None => "#[pi_tools] takes only `crate = \"...\"` (the path to a renamed pi-tool dependency); the tool keys go on each method's #[pi_tool(...)]".to_owned(),
    };
    error(
        key.span(),
        format!("unknown key `{key_name}` for #[pi_tools]"),
        help,
    )
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::block_args;

    fn messages(tokens: proc_macro2::TokenStream) -> Vec<String> {
        block_args(tokens).1.iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn block_arguments() {
        let (path, errors) = block_args(quote!(crate = "my::reexport::pi_tool"));
        assert!(errors.is_empty());
        let path = path.expect("a path");
        assert_eq!(quote!(#path).to_string(), "my :: reexport :: pi_tool");
        assert!(block_args(quote!()).0.is_none());

        let bare = messages(quote!(crate));
        assert!(bare[0].starts_with("`crate` needs a value"), "{bare:?}");
        let twice = messages(quote!(crate = "a", crate = "b"));
        assert!(twice[0].starts_with("`crate` is given twice"), "{twice:?}");
        let typo = messages(quote!(exec_mode = "parallel"));
        assert!(typo[0].contains("did you mean `execution_mode`? It goes on each method's"));
        let unknown = messages(quote!(colour));
        assert!(unknown[0].starts_with("unknown key `colour` for #[pi_tools]"));
        assert!(unknown[0].contains("takes only `crate = \"...\"`"));
        let empty = messages(quote!(crate = ""));
        assert!(
            empty[0].starts_with("the `crate` path is empty"),
            "{empty:?}"
        );
        let generic = messages(quote!(crate = "pt<T>"));
        assert!(generic[0].starts_with("`\"pt<T>\"` is not a path to a crate"));
        let syntax = messages(quote!(crate = ));
        assert!(
            syntax[0].contains("#[pi_tools] takes one key"),
            "{syntax:?}"
        );
    }
}
