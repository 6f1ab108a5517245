//! The `crate = "..."` key: the path through which generated code reaches pi-tool.
//!
//! Generated code names `::pi_tool::__private::...`, which resolves only when the user's
//! crate calls its dependency `pi_tool`. A crate that renames it
//! (`pt = { package = "pi-tool", ... }`) or reaches it through a re-export says where it
//! is, as with `#[serde(crate = "...")]`: `#[pi_tool(crate = "pt")]` on a free function,
//! `#[pi_tools(crate = "pt")]` on an impl block (its methods inherit it; the key is the
//! only argument `#[pi_tools]` takes).
//!
//! The value is a string holding a module-style path (`"pt"`, `"::pt"`,
//! `"my::reexport::pi_tool"`). Its tokens keep the string's span, so a path that does not
//! resolve is reported by rustc on the user's string.

use proc_macro2::TokenStream;
use syn::parse::Parser;
use syn::{Expr, Lit, LitStr, Path};

use crate::attr::Arg;
use crate::error::{error, error_at};
use crate::keys::KEYS;
use crate::names;

thread_local! {
    /// The crate whose re-export of the macro is expanding: `pi_tool`, or `pi_tool_core`
    /// for a tool pack that depends on the core alone. A proc macro cannot see the path it
    /// was invoked through, so each crate re-exports its own entry point ([`Home`]).
    static HOME: std::cell::Cell<Home> = const { std::cell::Cell::new(Home::PiTool) };
}

/// Which crate's re-export of a macro is expanding.
#[derive(Clone, Copy)]
pub enum Home {
    /// `pi_tool::pi_tool` and friends.
    PiTool,
    /// `pi_tool_core::pi_tool` and friends.
    Core,
}

/// Runs one expansion with `home` as the default crate path.
pub fn expanding_from<T>(home: Home, expand: impl FnOnce() -> T) -> T {
    let before = HOME.with(|h| h.replace(home));
    let out = expand();
    HOME.with(|h| h.set(before));
    out
}

/// Where generated code finds pi-tool when no `crate` key is given: the crate whose
/// re-export of the macro is expanding.
pub fn default_path() -> Path {
    match HOME.with(std::cell::Cell::get) {
        Home::PiTool => syn::parse_quote!(::pi_tool),
        Home::Core => syn::parse_quote!(::pi_tool_core),
    }
}

/// The path a valid `crate = "..."` argument gives, if any (for the fallback, which must
/// name pi-tool even when other arguments are wrong; the key's own errors are reported by
/// the check).
pub fn given(args: &[Arg]) -> Option<Path> {
    let value = args.iter().find(|a| a.key == "crate")?.value.as_ref()?;
    path(value, &mut Vec::new())
}

/// The path in a `crate = "..."` value, or an error on the value that shows the fix.
pub fn path(value: &Expr, errors: &mut Vec<syn::Error>) -> Option<Path> {
    let Expr::Lit(syn::ExprLit {
        lit: Lit::Str(lit), ..
    }) = value
    else {
        errors.push(error_at(
            value,
            "`crate` takes a string literal",
            "write the path your code uses for pi-tool in quotes, as with serde: `crate = \"pt\"`",
        ));
        return None;
    };
    match lit.parse_with(Path::parse_mod_style) {
        Ok(path) => Some(path),
        Err(_) => {
            errors.push(bad_path(lit));
            None
        }
    }
}

fn bad_path(lit: &LitStr) -> syn::Error {
    let text = lit.value();
    const HOW: &str = "write the path your code uses for pi-tool: its name in [dependencies] (`crate = \"pt\"`), or a re-export (`crate = \"my::reexport::pi_tool\"`)";
    if text.trim().is_empty() {
        return error(lit.span(), "the `crate` path is empty", HOW);
    }
    // `"pi-tool"`: the package name, where Rust code spells the crate with `_`.
    let underscored = text.replace('-', "_");
    let help = if text.contains('-') && Path::parse_mod_style.parse_str(&underscored).is_ok() {
        format!("Rust code spells a crate name with `_` for `-`: write `crate = \"{underscored}\"`")
    } else {
        HOW.to_owned()
    };
    error(
        lit.span(),
        format!("`\"{text}\"` is not a path to a crate"),
        help,
    )
}

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
    let mut krate = None;
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
        krate = path(&value, &mut errors);
    }
    (krate, errors)
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
