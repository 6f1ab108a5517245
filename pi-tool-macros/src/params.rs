//! `#[pi_tool::params]` and `#[pi_tool::output]`: a tool's params or output type in one
//! line. Each adds the two derives the type needs (`Deserialize` + `JsonSchema` for params,
//! `Serialize` + `JsonSchema` for output), with the crate paths that make them resolve
//! through pi-tool, so the user's crate needs no serde or schemars dependency and no
//! `#[schemars(crate = ...)]` line. `#[serde(...)]` and `#[schemars(...)]` attributes on
//! the item keep working, because the derives register them as helpers.
//!
//! A params type is read from the model's JSON into owned values, so the fields of one
//! are checked for what JSON cannot give: a borrowed field (`&'a str`), and a map whose
//! keys cannot be read from a JSON object's string keys (`HashMap<(u32, u32), _>`).
//! A field of a type the attribute does not know is read through pi-tool's
//! `ParamsFieldOf`, so that a type without derives is one error ([`route_fields`]).

use proc_macro2::TokenStream;
use quote::quote;
use syn::{GenericArgument, Path, PathArguments, Type};

use crate::error::{error, error_at};
use crate::{krate, only_crate};

/// Which of the two attributes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `#[pi_tool::params]`: `Deserialize` + `JsonSchema`.
    Params,
    /// `#[pi_tool::output]`: `Serialize` + `JsonSchema`.
    Output,
}

impl Kind {
    fn attribute(self) -> &'static str {
        match self {
            Kind::Params => "params",
            Kind::Output => "output",
        }
    }
}

/// The expansion: the derives, then the item as written. On a bad argument the derives
/// are still added (with the default path), so that uses of the type add no error. A
/// params type with a borrowed field is emitted with owned fields in its place (and no
/// lifetime parameters), so that its uses compile and the one error is on the field.
pub fn expand(args: TokenStream, input: TokenStream, kind: Kind, home: krate::Home) -> TokenStream {
    let attribute = kind.attribute();
    let syntax_help = format!(
        "#[{attribute}] takes nothing, or `crate = \"...\"` for a renamed pi-tool dependency, for example #[pi_tool::{attribute}(crate = \"pt\")]"
    );
    let key_error = match kind {
        Kind::Params => params_key_error as fn(&syn::Ident, &str) -> syn::Error,
        Kind::Output => output_key_error,
    };
    let (krate, mut errors) = only_crate::crate_only_args(args, &syntax_help, key_error);
    let krate = krate.unwrap_or_else(|| home.path());
    let mut item: syn::Item = match syn::parse2(input.clone()) {
        Ok(item @ (syn::Item::Struct(_) | syn::Item::Enum(_))) => item,
        _ => {
            let help = match kind {
                Kind::Params => {
                    "put #[pi_tool::params] above the type of the tool's params argument: `struct WeatherParams { city: String }`"
                }
                Kind::Output => {
                    "put #[pi_tool::output] above the type a tool returns as `Json<T>`: `struct Forecast { celsius: i32 }`"
                }
            };
            errors.push(error(
                crate::error::first_token_span(&input),
                format!("#[{attribute}] goes on a struct or an enum"),
                help,
            ));
            let errors = errors.into_iter().map(|e| e.to_compile_error());
            return quote! { #(#errors)* #input };
        }
    };
    join_field_docs(&mut item);
    if kind == Kind::Params
        && let Some(error) = tuple_struct(&item)
    {
        errors.push(error);
    }
    let field_checks = if kind == Kind::Params {
        check_fields(&mut item, &mut errors, &krate);
        route_fields(&mut item, &krate);
        field_checks(&item, &krate)
    } else {
        TokenStream::new()
    };
    let derives = derives(&krate, kind);
    let errors = errors.into_iter().map(|e| e.to_compile_error());
    quote! {
        #(#errors)*
        #derives
        #item
        #field_checks
    }
}

/// A tuple struct as params (`struct Query(pub String);`): it derives, but serde reads
/// it from what its one field is read from (a string, not the JSON object a model sends
/// as a tool's arguments), so every call would fail. The error is on the fields, with
/// the struct written with a named field.
fn tuple_struct(item: &syn::Item) -> Option<syn::Error> {
    let syn::Item::Struct(s) = item else {
        return None;
    };
    let syn::Fields::Unnamed(fields) = &s.fields else {
        return None;
    };
    let ident = s.ident.to_string();
    let stem = ident.strip_suffix("Params").unwrap_or(&ident);
    let field = match crate::names::snake(stem) {
        name if name.is_empty() || syn::parse_str::<syn::Ident>(&name).is_err() => {
            "value".to_owned()
        }
        name => name,
    };
    let ty = fields
        .unnamed
        .first()
        .map(|f| {
            let ty = &f.ty;
            tidy(&quote!(#ty).to_string())
        })
        .unwrap_or_else(|| "String".to_owned());
    Some(error_at(
        fields,
        "a params type is a struct with named fields: a model sends a tool's arguments as a JSON object",
        format!(
            "name the field, and the model sends `{{\"{field}\": ...}}`: `struct {ident} {{ {field}: {ty} }}`"
        ),
    ))
}

/// Each field's type checked against pi-tool's `ParamsField`, in a signature spanned on
/// the field's type: rustc checks it before the derives' code, so a field type that serde
/// or schemars cannot handle (`std::time::Instant`) reads as one error with the fix, and
/// the derives' own errors on the same tokens are not reported again. Left out: fields
/// whose serde or schemars attributes change how they are read (`with`, `skip`, ...),
/// fields that name `Self`, and generic types, whose fields' bounds are the derives'
/// business.
fn field_checks(item: &syn::Item, krate: &Path) -> TokenStream {
    let (generics, fields): (&syn::Generics, Vec<&syn::Field>) = match item {
        syn::Item::Struct(s) => (&s.generics, s.fields.iter().collect()),
        syn::Item::Enum(e) => (
            &e.generics,
            e.variants.iter().flat_map(|v| v.fields.iter()).collect(),
        ),
        _ => return TokenStream::new(),
    };
    if !generics.params.is_empty() {
        return TokenStream::new();
    }
    let checks: Vec<TokenStream> = fields
        .into_iter()
        .filter(|field| !field.attrs.iter().any(changes_how_it_is_read))
        // `Self` means nothing in a free function's signature.
        .filter(|field| !mentions_self(&field.ty))
        .map(|field| crate::expand::spanned_check("__IsParamsField", &field.ty))
        .collect();
    if checks.is_empty() {
        return TokenStream::new();
    }
    quote! {
        const _: () = {
            use #krate::__private::IsParamsField as __IsParamsField;
            // One argument per field: a params type may have many.
            #[allow(dead_code, clippy::too_many_arguments)]
            fn __params_fields(#(#checks),*) {}
        };
    }
}

/// The fields of a params struct whose type pi-tool does not know (`location: Location`),
/// read and described through `ParamsField`'s hidden functions:
/// `#[serde(deserialize_with = "<T as ParamsField>::__deserialize")]` and
/// `#[schemars(schema_with = "<T as ParamsField>::__schema")]`, spanned on the field's
/// type. They do what the derives do without them (`T::deserialize`,
/// `subschema_for::<T>()`), so the params are read and described as before; what changes
/// is that a `T` without `Deserialize` or `JsonSchema` fails one bound,
/// `T: ParamsField`, at the same tokens in the three places the derives name it, which
/// rustc reports once, instead of three serde errors and one schemars error.
///
/// Left as written: fields with a serde, schemars or validation attribute of their own,
/// `Option<T>` fields (serde and schemars treat a missing `Option` field apart, which a
/// `deserialize_with` would change), types pi-tool knows (`String`, numbers, std
/// collections of those), and the fields of tuple structs, tuple variants and generic
/// types.
fn route_fields(item: &mut syn::Item, krate: &Path) {
    let fields: Vec<&mut syn::Field> = match item {
        syn::Item::Struct(s) if s.generics.params.is_empty() => match &mut s.fields {
            syn::Fields::Named(fields) => fields.named.iter_mut().collect(),
            _ => return,
        },
        // The named fields of struct variants, which serde and schemars read as a
        // struct's.
        syn::Item::Enum(e) if e.generics.params.is_empty() => e
            .variants
            .iter_mut()
            .filter_map(|v| match &mut v.fields {
                syn::Fields::Named(fields) => Some(fields.named.iter_mut()),
                _ => None,
            })
            .flatten()
            .collect(),
        _ => return,
    };
    for field in fields {
        let has_own_attributes = field.attrs.iter().any(|attr| {
            ["serde", "schemars", "validate", "garde"]
                .iter()
                .any(|name| attr.path().is_ident(name))
        });
        if has_own_attributes || mentions_self(&field.ty) || !is_unknown_type(&field.ty) {
            continue;
        }
        let ty = &field.ty;
        let span = crate::error::first_token_span(&quote!(#ty));
        let path = format!("{}::field", quote!(#krate::__private::ParamsFieldOf::<#ty>));
        let deserialize = syn::LitStr::new(&path, span);
        let schema = syn::LitStr::new(&path, span);
        field
            .attrs
            .push(syn::parse_quote_spanned!(span=> #[serde(deserialize_with = #deserialize)]));
        field
            .attrs
            .push(syn::parse_quote_spanned!(span=> #[schemars(schema_with = #schema)]));
    }
}

/// A type that names something pi-tool does not know as a JSON value: a path whose last
/// segment, or a type argument of it, is not a primitive or a std type both serde and
/// schemars support. A type that names `Option` anywhere (`Box<Option<T>>`) is left as
/// written: schemars and serde treat a missing `Option` apart ([`route_fields`]).
fn is_unknown_type(ty: &Type) -> bool {
    const KNOWN: &[&str] = &[
        "String", "str", "bool", "char", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16",
        "u32", "u64", "u128", "usize", "f32", "f64", "Vec", "VecDeque", "HashMap", "BTreeMap",
        "HashSet", "BTreeSet", "IndexMap", "IndexSet", "Box", "Arc", "Rc", "Cow", "PathBuf",
        "Value", "Map", "Number",
    ];
    fn unknown(ty: &Type) -> bool {
        match ty {
            Type::Group(g) => unknown(&g.elem),
            Type::Paren(p) => unknown(&p.elem),
            Type::Path(p) if p.qself.is_none() => {
                let Some(last) = p.path.segments.last() else {
                    return false;
                };
                !KNOWN.contains(&last.ident.to_string().as_str())
                    || type_arguments(&p.path).any(unknown)
            }
            _ => false,
        }
    }
    !mentions(ty, "Option") && unknown(ty)
}

/// Whether `ty` names `ident` anywhere (`Option` in `Box<Option<T>>`).
fn mentions(ty: &Type, ident: &str) -> bool {
    fn any(tokens: TokenStream, ident: &str) -> bool {
        tokens.into_iter().any(|token| match token {
            proc_macro2::TokenTree::Ident(i) => i == ident,
            proc_macro2::TokenTree::Group(group) => any(group.stream(), ident),
            _ => false,
        })
    }
    any(quote!(#ty), ident)
}

fn mentions_self(ty: &Type) -> bool {
    mentions(ty, "Self")
}

/// A `#[serde(...)]` or `#[schemars(...)]` attribute that reads the field another way
/// than through its type (`with`, `deserialize_with`, `skip`, `flatten`, ...).
fn changes_how_it_is_read(attr: &syn::Attribute) -> bool {
    if !(attr.path().is_ident("serde") || attr.path().is_ident("schemars")) {
        return false;
    }
    let syn::Meta::List(list) = &attr.meta else {
        return false;
    };
    let text = list.tokens.to_string();
    ["with", "skip", "flatten"]
        .iter()
        .any(|word| text.contains(word))
}

fn derives(krate: &Path, kind: Kind) -> TokenStream {
    let serde_path = quote!(#krate::__private::serde)
        .to_string()
        .replace(' ', "");
    let schemars_path = quote!(#krate::__private::schemars)
        .to_string()
        .replace(' ', "");
    let serde_derive = match kind {
        Kind::Params => quote!(#krate::__private::serde::Deserialize),
        Kind::Output => quote!(#krate::__private::serde::Serialize),
    };
    quote! {
        #[derive(#serde_derive, #krate::__private::schemars::JsonSchema)]
        #[serde(crate = #serde_path)]
        #[schemars(crate = #schemars_path)]
    }
}

/// The fields' types of a params struct or enum, checked; a borrowed one is reported and
/// replaced by its owned form, and the item's lifetime parameters are dropped with it. A
/// field holding an `Instant` is reported and left out of the derives (the error stops
/// the build, so the value it would read is never needed), so that the derives add no
/// error of their own.
fn check_fields(item: &mut syn::Item, errors: &mut Vec<syn::Error>, krate: &Path) {
    let (generics, fields): (&mut syn::Generics, Vec<&mut syn::Field>) = match item {
        syn::Item::Struct(s) => (&mut s.generics, s.fields.iter_mut().collect()),
        syn::Item::Enum(e) => (
            &mut e.generics,
            e.variants
                .iter_mut()
                .flat_map(|v| v.fields.iter_mut())
                .collect(),
        ),
        _ => return,
    };
    let mut borrowed = false;
    for field in fields {
        if let Some(key) = unreadable_map_key(&field.ty) {
            errors.push(error_at(
                key,
                format!(
                    "a map keyed by `{}` cannot be read from JSON: the keys of a JSON object are strings",
                    tidy(&quote!(#key).to_string())
                ),
                "key the map by `String`, an integer type, `char`, `bool` or an enum of unit variants (serde reads those from a string key), or send a list of entries instead: `Vec<Entry>` with `#[pi_tool::params] struct Entry { ... }`",
            ));
        }
        if let Some(instant) = find_instant(&field.ty) {
            errors.push(error_at(
                instant,
                format!(
                    "a params field cannot be `{}`: a point in time of this process cannot be sent as JSON",
                    tidy(&quote!(#instant).to_string())
                ),
                "use a type the model can send as JSON: a timestamp such as `u64` seconds since the Unix epoch, or an RFC 3339 `String`",
            ));
            let never = quote!(#krate::__private::never_read)
                .to_string()
                .replace(' ', "");
            field
                .attrs
                .push(syn::parse_quote!(#[serde(skip_deserializing, default = #never)]));
            field.attrs.push(syn::parse_quote!(#[schemars(skip)]));
            continue;
        }
        if borrowed {
            continue;
        }
        if let Some(reference) = find_reference(&field.ty) {
            errors.push(error_at(
                reference,
                format!(
                    "a params type cannot borrow: `{}` would borrow from the model's arguments, which pi-tool reads into owned values",
                    tidy(&quote!(#reference).to_string())
                ),
                "use owned types: `String` for `&str`, `Vec<T>` for `&[T]`, `T` for `&T`, and remove the lifetime parameter from the type",
            ));
            borrowed = true;
        }
    }
    if borrowed {
        for field in match item {
            syn::Item::Struct(s) => s.fields.iter_mut().collect::<Vec<_>>(),
            syn::Item::Enum(e) => e
                .variants
                .iter_mut()
                .flat_map(|v| v.fields.iter_mut())
                .collect(),
            _ => Vec::new(),
        } {
            own(&mut field.ty);
        }
    } else if let Some(lifetime) = generics.lifetimes().next() {
        errors.push(error_at(
            lifetime,
            "a params type cannot borrow: pi-tool reads the model's arguments into owned values",
            "remove the lifetime parameter and use owned types: `String` for `&str`, `Vec<T>` for `&[T]`",
        ));
        borrowed = true;
    }
    if borrowed {
        let generics = match item {
            syn::Item::Struct(s) => &mut s.generics,
            syn::Item::Enum(e) => &mut e.generics,
            _ => return,
        };
        generics.params = std::mem::take(&mut generics.params)
            .into_iter()
            .filter(|p| !matches!(p, syn::GenericParam::Lifetime(_)))
            .collect();
    }
}

/// The first reference type in `ty` (`&'a str` in `Option<&'a str>`).
fn find_reference(ty: &Type) -> Option<&Type> {
    match ty {
        Type::Reference(_) => Some(ty),
        Type::Array(a) => find_reference(&a.elem),
        Type::Slice(s) => find_reference(&s.elem),
        Type::Group(g) => find_reference(&g.elem),
        Type::Paren(p) => find_reference(&p.elem),
        Type::Tuple(t) => t.elems.iter().find_map(find_reference),
        Type::Path(p) => type_arguments(&p.path).find_map(find_reference),
        _ => None,
    }
}

/// The first `Instant` (`std::time::Instant`, `tokio::time::Instant`, ...) in `ty`: a
/// monotonic clock reading, which neither serde nor schemars can read or describe.
fn find_instant(ty: &Type) -> Option<&Type> {
    match ty {
        Type::Array(a) => find_instant(&a.elem),
        Type::Slice(s) => find_instant(&s.elem),
        Type::Group(g) => find_instant(&g.elem),
        Type::Paren(p) => find_instant(&p.elem),
        Type::Tuple(t) => t.elems.iter().find_map(find_instant),
        Type::Reference(r) => find_instant(&r.elem),
        Type::Path(p) => {
            if p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.ident == "Instant") {
                return Some(ty);
            }
            type_arguments(&p.path).find_map(find_instant)
        }
        _ => None,
    }
}

/// `ty` with every reference replaced by its owned form: `&str` -> `String`, `&[T]` ->
/// `Vec<T>`, `&T` -> `T`.
fn own(ty: &mut Type) {
    match ty {
        Type::Reference(r) => {
            let mut inner = (*r.elem).clone();
            own(&mut inner);
            *ty = match inner {
                Type::Path(p) if p.qself.is_none() && p.path.is_ident("str") => {
                    syn::parse_quote!(::std::string::String)
                }
                Type::Slice(s) => {
                    let elem = s.elem;
                    syn::parse_quote!(::std::vec::Vec<#elem>)
                }
                other => other,
            };
        }
        Type::Array(a) => own(&mut a.elem),
        Type::Slice(s) => own(&mut s.elem),
        Type::Group(g) => own(&mut g.elem),
        Type::Paren(p) => own(&mut p.elem),
        Type::Tuple(t) => t.elems.iter_mut().for_each(own),
        Type::Path(p) => {
            for segment in &mut p.path.segments {
                if let PathArguments::AngleBracketed(args) = &mut segment.arguments {
                    args.args = std::mem::take(&mut args.args)
                        .into_iter()
                        .filter(|a| !matches!(a, GenericArgument::Lifetime(_)))
                        .map(|mut a| {
                            if let GenericArgument::Type(t) = &mut a {
                                own(t);
                            }
                            a
                        })
                        .collect();
                }
            }
        }
        _ => {}
    }
}

/// The key type of a map in `ty` (at any depth) that no JSON object key can be read into:
/// a tuple, an array, a slice, a reference or `()`.
fn unreadable_map_key(ty: &Type) -> Option<&Type> {
    match ty {
        Type::Array(a) => unreadable_map_key(&a.elem),
        Type::Slice(s) => unreadable_map_key(&s.elem),
        Type::Group(g) => unreadable_map_key(&g.elem),
        Type::Paren(p) => unreadable_map_key(&p.elem),
        Type::Tuple(t) => t.elems.iter().find_map(unreadable_map_key),
        Type::Reference(r) => unreadable_map_key(&r.elem),
        Type::Path(p) => {
            let is_map = p.path.segments.last().is_some_and(|s| {
                matches!(
                    s.ident.to_string().as_str(),
                    "HashMap" | "BTreeMap" | "IndexMap"
                )
            });
            if is_map
                && let Some(key) = type_arguments(&p.path).next()
                && matches!(
                    key,
                    Type::Tuple(_) | Type::Array(_) | Type::Slice(_) | Type::Reference(_)
                )
                && !matches!(key, Type::Reference(r) if matches!(&*r.elem, Type::Path(p) if p.path.is_ident("str")))
            {
                return Some(key);
            }
            type_arguments(&p.path).find_map(unreadable_map_key)
        }
        _ => None,
    }
}

/// The type arguments of every segment of a path (`HashMap<K, V>` -> `K`, `V`).
fn type_arguments(path: &Path) -> impl Iterator<Item = &Type> {
    path.segments
        .iter()
        .filter_map(|s| match &s.arguments {
            PathArguments::AngleBracketed(a) => Some(a.args.iter()),
            _ => None,
        })
        .flatten()
        .filter_map(|a| match a {
            GenericArgument::Type(t) => Some(t),
            _ => None,
        })
}

/// `& 'a str` -> `&'a str`, `(u32 , u32)` -> `(u32, u32)`: a type as the user wrote it.
fn tidy(text: &str) -> String {
    text.replace("& ", "&")
        .replace(" :: ", "::")
        .replace(":: ", "::")
        .replace(" ,", ",")
        .replace("( ", "(")
        .replace(" )", ")")
        .replace(" < ", "<")
        .replace(" <", "<")
        .replace("< ", "<")
        .replace(" >", ">")
}

fn params_key_error(key: &syn::Ident, key_name: &str) -> syn::Error {
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

fn output_key_error(key: &syn::Ident, key_name: &str) -> syn::Error {
    error(
        key.span(),
        format!("unknown key `{key_name}` for #[output]"),
        "#[output] takes only `crate = \"...\"`; serde or schemars options go in #[serde(...)] / #[schemars(...)] below",
    )
}

/// Field and variant doc comments joined as a tool's doc comment is (`doc.rs`): soft-wrapped
/// lines become one line, paragraphs, lists and code blocks keep their breaks. schemars
/// keeps every source line break in a property's description; a description the model
/// reads should not depend on where the author's editor wrapped it.
fn join_field_docs(item: &mut syn::Item) {
    match item {
        syn::Item::Struct(s) => s.fields.iter_mut().for_each(|f| join_docs(&mut f.attrs)),
        syn::Item::Enum(e) => {
            for variant in &mut e.variants {
                join_docs(&mut variant.attrs);
                variant
                    .fields
                    .iter_mut()
                    .for_each(|f| join_docs(&mut f.attrs));
            }
        }
        _ => {}
    }
}

/// Replaces the literal `#[doc = "..."]` attributes by one with the rendered text; docs
/// with a macro (`#[doc = include_str!(..)]`) are left as written.
fn join_docs(attrs: &mut Vec<syn::Attribute>) {
    let mut lines = Vec::new();
    let mut first = None;
    for (index, attr) in attrs.iter().enumerate() {
        if !attr.path().is_ident("doc") {
            continue;
        }
        let syn::Meta::NameValue(nv) = &attr.meta else {
            return;
        };
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(text),
            ..
        }) = &nv.value
        else {
            return;
        };
        first.get_or_insert(index);
        for line in text.value().split('\n') {
            lines.push(line.strip_prefix(' ').unwrap_or(line).to_owned());
        }
    }
    let Some(first) = first else {
        return;
    };
    if lines.len() < 2 {
        return;
    }
    let text = crate::doc::render(&lines);
    let span = syn::spanned::Spanned::span(&attrs[first]);
    let joined: syn::Attribute = syn::parse_quote_spanned!(span=> #[doc = #text]);
    let mut index = 0;
    attrs.retain(|attr| {
        let keep = index < first || !attr.path().is_ident("doc");
        index += 1;
        keep
    });
    attrs.insert(first, joined);
}
