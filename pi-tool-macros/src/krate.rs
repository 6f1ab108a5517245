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

use syn::parse::Parser;
use syn::{Expr, Lit, LitStr, Path};

use crate::attr::Arg;
use crate::error::{error, error_at};

/// The crate whose macro is expanding: `pi_tool`, or `pi_tool_core` for a tool pack that
/// depends on the core alone. A proc macro cannot see the path it was invoked through,
/// so each crate re-exports its own entry point, which passes its `Home` down the
/// pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Home {
    /// `pi_tool::pi_tool` and friends.
    PiTool,
    /// `pi_tool_core::pi_tool` and friends.
    Core,
}

impl Home {
    /// Where generated code finds pi-tool when no `crate` key is given.
    pub fn path(self) -> Path {
        match self {
            Home::PiTool => syn::parse_quote!(::pi_tool),
            Home::Core => syn::parse_quote!(::pi_tool_core),
        }
    }

    /// The module of `__private` whose glob brings this crate's `#[pi_tool]` (see
    /// `attr::import_uses`).
    pub fn attribute_module(self) -> &'static str {
        match self {
            Home::PiTool => "pi_tool_attribute",
            Home::Core => "core_pi_tool_attribute",
        }
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
