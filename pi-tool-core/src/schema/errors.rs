//! The failure path: every error TypeBox reports for a value, in TypeBox's order, and Pi's
//! text for them.
//!
//! This walk mirrors TypeBox 1.3's `Error*` functions (`schema/engine/*.ts`) one to one,
//! including their quirks: the `type` error does not stop the other keywords; `anyOf`/`oneOf`
//! list every failing branch's errors before their own line (`oneOf` only when no branch
//! passed); `additionalProperties`, `propertyNames` and `unevaluated*` report one line for the
//! object and swallow the nested errors; `allOf` has no line of its own; `if` keeps the
//! errors of a failing `else` but not of a failing `then`. TypeBox stops after
//! [`MAX_ERRORS`] errors.
//!
//! It only runs after the fast check failed, so it may allocate freely.

use serde_json::{Map, Value};

use super::check::{self, Checker, Eval, MAX_FRAMES, first_duplicates, is_declared, type_matches};
use super::compile::{Compiled, Dependency, Items, Keywords, Node, NodeId, TypeKeyword};
use crate::js;

/// TypeBox's `Settings.maxErrors`: later errors are dropped.
pub(crate) const MAX_ERRORS: usize = 8;

/// One validation error: where (a JSON-pointer-like instance path) and what.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Failure {
    pub(crate) path: String,
    pub(crate) kind: Kind,
}

/// What failed, with the parameters of TypeBox's message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    Boolean,
    Type {
        names: Vec<String>,
        is_array: bool,
    },
    Required(Vec<String>),
    AdditionalProperties,
    /// `additionalProperties` of a map schemars generates for integer keys
    /// (`HashMap<u32, V>`: `patternProperties` `^\d+$` or `^-?\d+$`, nothing else
    /// allowed): the keys that are not integers, said so. TypeBox's own integer records
    /// use another pattern, so Pi's schemas keep TypeBox's text.
    IntegerKeys {
        names: Vec<String>,
        signed: bool,
    },
    Dependencies {
        property: String,
        dependencies: Vec<String>,
    },
    PropertyNames(Vec<String>),
    MinProperties(f64),
    MaxProperties(f64),
    Contains,
    MaxItems(f64),
    MinItems(f64),
    UniqueItems,
    MaxLength(f64),
    MinLength(f64),
    Format(String),
    Pattern(String),
    Compare {
        op: &'static str,
        limit: f64,
    },
    MultipleOf(f64),
    Const,
    Enum,
    If {
        failing: &'static str,
    },
    Not,
    AnyOf,
    OneOf,
    UnevaluatedItems,
    UnevaluatedProperties,
    /// The schema recursed past [`MAX_FRAMES`] (no TypeBox equivalent: it overflows its stack).
    TooDeep,
}

impl Kind {
    /// TypeBox's `en_US` locale text.
    pub(crate) fn message(&self) -> String {
        let n = js::format_f64;
        match self {
            Kind::Boolean => "schema is false".to_owned(),
            Kind::Type { names, is_array } => {
                if *is_array {
                    format!("must be either {}", names.join(" or "))
                } else {
                    format!("must be {}", names.join(""))
                }
            }
            Kind::Required(names) => format!("must have required properties {}", names.join(", ")),
            Kind::AdditionalProperties => "must not have additional properties".to_owned(),
            Kind::IntegerKeys { names, signed } => {
                let (what, whats) = if *signed {
                    ("an integer", "integers")
                } else {
                    ("an integer 0 or greater", "integers 0 or greater")
                };
                match names.as_slice() {
                    [name] => format!(
                        "property name {name} is not {what}: the keys of this map are {whats}"
                    ),
                    _ => format!(
                        "property names {} are not {whats}: the keys of this map are {whats}",
                        names.join(", ")
                    ),
                }
            }
            Kind::Dependencies {
                property,
                dependencies,
            } => format!(
                "must have properties {} when property {property} is present",
                dependencies.join(", ")
            ),
            Kind::PropertyNames(names) => {
                format!("property names {} are invalid", names.join(", "))
            }
            Kind::MinProperties(l) => format!("must not have fewer than {} properties", n(*l)),
            Kind::MaxProperties(l) => format!("must not have more than {} properties", n(*l)),
            Kind::Contains => "must contain at least 1 valid item".to_owned(),
            Kind::MaxItems(l) => format!("must not have more than {} items", n(*l)),
            Kind::MinItems(l) => format!("must not have fewer than {} items", n(*l)),
            Kind::UniqueItems => "must not have duplicate items".to_owned(),
            Kind::MaxLength(l) => format!("must not have more than {} characters", n(*l)),
            Kind::MinLength(l) => format!("must not have fewer than {} characters", n(*l)),
            Kind::Format(f) => format!("must match format \"{f}\""),
            Kind::Pattern(p) => format!("must match pattern \"{p}\""),
            Kind::Compare { op, limit } => format!("must be {op} {}", n(*limit)),
            Kind::MultipleOf(m) => format!("must be multiple of {}", n(*m)),
            Kind::Const => "must be equal to constant".to_owned(),
            Kind::Enum => "must be equal to one of the allowed values".to_owned(),
            Kind::If { failing } => format!("must match \"{failing}\" schema"),
            Kind::Not => "must not be valid".to_owned(),
            Kind::AnyOf => "must match a schema in anyOf".to_owned(),
            Kind::OneOf => "must match exactly one schema in oneOf".to_owned(),
            Kind::UnevaluatedItems => "must not have unevaluated items".to_owned(),
            Kind::UnevaluatedProperties => "must not have unevaluated properties".to_owned(),
            Kind::TooDeep => {
                format!("must not nest schema evaluation deeper than {MAX_FRAMES} levels")
            }
        }
    }
}

impl Failure {
    /// Pi's `formatValidationPath`: `/a/b` → `a.b`, empty → `root`; a `required` error points
    /// at its first missing property.
    pub(crate) fn pi_path(&self) -> String {
        let base = self
            .path
            .strip_prefix('/')
            .unwrap_or(&self.path)
            .replace('/', ".");
        if let Kind::Required(names) = &self.kind
            && let Some(first) = names.first().filter(|f| !f.is_empty())
        {
            return if base.is_empty() {
                first.clone()
            } else {
                format!("{base}.{first}")
            };
        }
        if base.is_empty() {
            "root".to_owned()
        } else {
            base
        }
    }

    /// One line of Pi's message: `  - <path>: <message>`.
    pub(crate) fn pi_line(&self) -> String {
        format!("  - {}: {}", self.pi_path(), self.kind.message())
    }
}

/// Every error for `value` against the root of `compiled`, capped at [`MAX_ERRORS`].
pub(crate) fn collect(compiled: &Compiled, value: &Value) -> Vec<Failure> {
    let walker = Walker {
        check: Checker {
            c: compiled,
            track: compiled.tracks_evaluated,
        },
    };
    let mut out = Vec::new();
    walker.schema(0, "", value, &mut Eval::default(), &mut out, 0);
    out.truncate(MAX_ERRORS);
    out
}

struct Walker<'c> {
    check: Checker<'c>,
}

fn push(out: &mut Vec<Failure>, path: &str, kind: Kind) -> bool {
    out.push(Failure {
        path: path.to_owned(),
        kind,
    });
    false
}

fn type_error(t: &TypeKeyword) -> Kind {
    Kind::Type {
        names: t.names.clone(),
        is_array: t.is_array,
    }
}

impl Walker<'_> {
    fn track(&self) -> bool {
        self.check.track
    }

    fn nodes(&self) -> &[Node] {
        &self.check.c.nodes
    }

    /// For a map schemars generates for integer keys (`patternProperties` of its integer
    /// patterns only, no `properties`, `additionalProperties: false`): whether negative
    /// keys are allowed. `None` for every other object schema.
    fn integer_keys(&self, k: &Keywords, ap: NodeId) -> Option<bool> {
        if k.properties.as_ref().is_some_and(|p| !p.is_empty())
            || !matches!(self.nodes()[ap as usize], Node::Bool(false))
        {
            return None;
        }
        let mut signed = None;
        for (pattern, _) in k.pattern_properties.as_ref()? {
            match pattern.source.as_str() {
                r"^\d+$" => signed = Some(signed.unwrap_or(false)),
                r"^-?\d+$" => signed = Some(true),
                _ => return None,
            }
        }
        signed
    }

    /// A child value in a fresh evaluation scope (`ErrorSchemaPushStack`), errors to `out`.
    fn child(
        &self,
        id: NodeId,
        path: &str,
        v: &Value,
        out: &mut Vec<Failure>,
        depth: usize,
    ) -> bool {
        self.schema(id, path, v, &mut Eval::default(), out, depth + 1)
    }

    fn schema<'v>(
        &self,
        id: NodeId,
        path: &str,
        v: &'v Value,
        ev: &mut Eval<'v>,
        out: &mut Vec<Failure>,
        depth: usize,
    ) -> bool {
        if depth > MAX_FRAMES {
            return push(out, path, Kind::TooDeep);
        }
        let k = match &self.nodes()[id as usize] {
            Node::Bool(true) => return true,
            Node::Bool(false) => return push(out, path, Kind::Boolean),
            Node::Schema(k) => k,
        };
        let mut ok = true;
        if let Some(t) = &k.types
            && !type_matches(t.mask, v)
        {
            ok = push(out, path, type_error(t));
        }
        let group = match v {
            Value::Object(map) => self.object(k, path, v, map, ev, out, depth),
            Value::Array(items) => self.array(k, path, items, ev, out, depth),
            Value::String(s) => string(k, path, s, out),
            Value::Number(n) => number(k, path, js::as_f64(n), out),
            _ => true,
        };
        let in_place = self.in_place(k, path, v, ev, out, depth);
        ok && group && in_place
    }

    #[allow(clippy::too_many_arguments)]
    fn object<'v>(
        &self,
        k: &Keywords,
        path: &str,
        v: &'v Value,
        map: &'v Map<String, Value>,
        ev: &mut Eval<'v>,
        out: &mut Vec<Failure>,
        depth: usize,
    ) -> bool {
        let track = self.track();
        let mut ok = true;
        if let Some(req) = &k.required {
            let missing: Vec<String> = req
                .iter()
                .filter(|r| !map.contains_key(*r))
                .cloned()
                .collect();
            if !missing.is_empty() {
                ok = push(out, path, Kind::Required(missing));
            }
        }
        if let Some(ap) = k.additional_properties {
            let mut extra = Vec::new();
            for (key, val) in map {
                if is_declared(k, key) {
                    continue;
                }
                let mut swallowed = Vec::new();
                if self.child(ap, &format!("{path}/{key}"), val, &mut swallowed, depth) {
                    ev.add_key(track, key);
                } else {
                    extra.push(key.clone());
                }
            }
            if !extra.is_empty() {
                let kind = match self.integer_keys(k, ap) {
                    Some(signed) => Kind::IntegerKeys {
                        names: extra,
                        signed,
                    },
                    None => Kind::AdditionalProperties,
                };
                ok = push(out, path, kind);
            }
        }
        if !map.is_empty() {
            if let Some(deps) = &k.dependencies {
                for (name, dep) in deps {
                    if !map.contains_key(name) {
                        continue;
                    }
                    match dep {
                        Dependency::Names(names) => {
                            // `Array.every`: stops at the first missing name.
                            if names.iter().any(|n| !map.contains_key(n)) {
                                ok = push(
                                    out,
                                    path,
                                    Kind::Dependencies {
                                        property: name.clone(),
                                        dependencies: names.clone(),
                                    },
                                );
                            }
                        }
                        Dependency::Schema(id) => {
                            ok &= self.schema(*id, path, v, ev, out, depth + 1);
                        }
                    }
                }
            }
            if let Some(deps) = &k.dependent_required {
                for (name, names) in deps {
                    if !map.contains_key(name) {
                        continue;
                    }
                    for n in names {
                        if !map.contains_key(n) {
                            ok = push(
                                out,
                                path,
                                Kind::Dependencies {
                                    property: name.clone(),
                                    dependencies: names.clone(),
                                },
                            );
                        }
                    }
                }
            }
            if let Some(ds) = &k.dependent_schemas {
                for (name, id) in ds {
                    if map.contains_key(name) {
                        ok &= self.schema(*id, path, v, ev, out, depth + 1);
                    }
                }
            }
        }
        if let Some(pp) = &k.pattern_properties {
            for (pat, id) in pp {
                for (key, val) in map {
                    if pat.regex.is_match(key) {
                        if self.child(*id, &format!("{path}/{key}"), val, out, depth) {
                            ev.add_key(track, key);
                        } else {
                            ok = false;
                        }
                    }
                }
            }
        }
        if let Some(props) = &k.properties {
            for (name, id) in props {
                if let Some((key, val)) = map.get_key_value(name) {
                    if self.child(*id, &format!("{path}/{key}"), val, out, depth) {
                        ev.add_key(track, key);
                    } else {
                        ok = false;
                    }
                }
            }
        }
        if let Some(pn) = k.property_names {
            let bad: Vec<String> = map
                .keys()
                .filter(|key| {
                    let mut swallowed = Vec::new();
                    !self.child(
                        pn,
                        &format!("{path}/{key}"),
                        &Value::String((*key).clone()),
                        &mut swallowed,
                        depth,
                    )
                })
                .cloned()
                .collect();
            if !bad.is_empty() {
                ok = push(out, path, Kind::PropertyNames(bad));
            }
        }
        let n = map.len() as f64;
        if let Some(m) = k.min_properties
            && n < m
        {
            ok = push(out, path, Kind::MinProperties(m));
        }
        if let Some(m) = k.max_properties
            && n > m
        {
            ok = push(out, path, Kind::MaxProperties(m));
        }
        ok
    }

    fn array<'v>(
        &self,
        k: &Keywords,
        path: &str,
        items: &'v [Value],
        ev: &mut Eval<'v>,
        out: &mut Vec<Failure>,
        depth: usize,
    ) -> bool {
        let track = self.track();
        let len = items.len();
        let mut ok = true;
        if let (Some(ai), Some(Items::Sized(sized))) = (k.additional_items, &k.items) {
            // `Array.every`: stops at the first failing item.
            for (i, item) in items.iter().enumerate().skip(sized.len()) {
                if !self.child(ai, &format!("{path}/{i}"), item, out, depth) {
                    ok = false;
                    break;
                }
                ev.add_index(track, i);
            }
        }
        let count = |id: NodeId| {
            items
                .iter()
                .filter(|item| self.check.schema(id, item, &mut Eval::default(), depth + 1))
                .count() as f64
        };
        if let Some(c) = k.contains
            && k.min_contains != Some(0.0)
            && (len == 0 || count(c) == 0.0)
        {
            ok = push(out, path, Kind::Contains);
        }
        match &k.items {
            Some(Items::Unsized(id)) => {
                let offset = k.prefix_items.as_ref().map_or(0, Vec::len);
                for (i, item) in items.iter().enumerate().skip(offset) {
                    if self.child(*id, &format!("{path}/{i}"), item, out, depth) {
                        ev.add_index(track, i);
                    } else {
                        ok = false;
                    }
                }
            }
            Some(Items::Sized(ids)) => {
                for (i, id) in ids.iter().enumerate().take(len) {
                    if self.child(*id, &format!("{path}/{i}"), &items[i], out, depth) {
                        ev.add_index(track, i);
                    } else {
                        ok = false;
                    }
                }
            }
            None => {}
        }
        if let (Some(c), Some(max)) = (k.contains, k.max_contains)
            && count(c) > max
        {
            ok = push(out, path, Kind::Contains);
        }
        let n = len as f64;
        if let Some(m) = k.max_items
            && n > m
        {
            ok = push(out, path, Kind::MaxItems(m));
        }
        if let (Some(c), Some(min)) = (k.contains, k.min_contains)
            && count(c) < min
        {
            ok = push(out, path, Kind::Contains);
        }
        if let Some(m) = k.min_items
            && n < m
        {
            ok = push(out, path, Kind::MinItems(m));
        }
        if let Some(prefix) = &k.prefix_items
            && len > 0
        {
            for (i, id) in prefix.iter().enumerate().take(len) {
                if self.child(*id, &format!("{path}/{i}"), &items[i], out, depth) {
                    ev.add_index(track, i);
                } else {
                    ok = false;
                }
            }
        }
        if k.unique_items && !first_duplicates(items).is_empty() {
            ok = push(out, path, Kind::UniqueItems);
        }
        ok
    }

    /// Every branch of a combinator (`allOf`, `anyOf`, `oneOf`), each in its own scope:
    /// the scopes of the branches that passed, and the errors of those that failed.
    fn branches<'v>(
        &self,
        ids: &[NodeId],
        path: &str,
        v: &'v Value,
        depth: usize,
    ) -> (Vec<Eval<'v>>, Vec<Vec<Failure>>) {
        let mut passed = Vec::new();
        let mut failed = Vec::new();
        for id in ids {
            let mut next = Eval::default();
            let mut errs = Vec::new();
            if self.schema(*id, path, v, &mut next, &mut errs, depth + 1) {
                passed.push(next);
            } else {
                failed.push(errs);
            }
        }
        (passed, failed)
    }

    fn in_place<'v>(
        &self,
        k: &Keywords,
        path: &str,
        v: &'v Value,
        ev: &mut Eval<'v>,
        out: &mut Vec<Failure>,
        depth: usize,
    ) -> bool {
        let mut ok = true;
        if let Some(r) = k.reference {
            let mut next = Eval::default();
            let mut errs = Vec::new();
            if self.schema(r, path, v, &mut next, &mut errs, depth + 1) {
                ev.merge(next);
            } else {
                out.append(&mut errs);
                ok = false;
            }
        }
        if let Some(c) = &k.constant
            && !js::deep_equal(v, c)
        {
            ok = push(out, path, Kind::Const);
        }
        if let Some(e) = &k.enumeration
            && !e.iter().any(|option| js::deep_equal(v, option))
        {
            ok = push(out, path, Kind::Enum);
        }
        if let Some((i, t, e)) = k.if_then_else {
            let mut true_ev = Eval::default();
            let mut discarded = Vec::new();
            let passed = if self.schema(i, path, v, &mut true_ev, &mut discarded, depth + 1) {
                let then_ok = t.is_none_or(|t| {
                    self.schema(t, path, v, &mut true_ev, &mut discarded, depth + 1)
                });
                then_ok || push(out, path, Kind::If { failing: "then" })
            } else {
                let else_ok = e.is_none_or(|e| self.schema(e, path, v, ev, out, depth + 1));
                else_ok || push(out, path, Kind::If { failing: "else" })
            };
            if passed {
                ev.merge(true_ev);
            } else {
                ok = false;
            }
        }
        if let Some(n) = k.not {
            let mut next = Eval::default();
            if self.check.schema(n, v, &mut next, depth + 1) {
                ok = push(out, path, Kind::Not);
            } else {
                ev.merge(next);
            }
        }
        if let Some(all) = &k.all_of {
            let (passed, failed) = self.branches(all, path, v, depth);
            if failed.is_empty() {
                passed.into_iter().for_each(|p| ev.merge(p));
            } else {
                failed.into_iter().for_each(|mut f| out.append(&mut f));
                ok = false;
            }
        }
        if let Some(any) = &k.any_of {
            let (passed, failed) = self.branches(any, path, v, depth);
            if passed.is_empty() {
                failed.into_iter().for_each(|mut f| out.append(&mut f));
                ok = push(out, path, Kind::AnyOf);
            } else {
                passed.into_iter().for_each(|p| ev.merge(p));
            }
        }
        if let Some(one) = &k.one_of {
            let (passed, failed) = self.branches(one, path, v, depth);
            if passed.len() == 1 {
                passed.into_iter().for_each(|p| ev.merge(p));
            } else {
                if passed.is_empty() {
                    failed.into_iter().for_each(|mut f| out.append(&mut f));
                }
                ok = push(out, path, Kind::OneOf);
            }
        }
        if let (Some(u), Value::Array(items)) = (k.unevaluated_items, v) {
            let mut bad = false;
            for (i, item) in items.iter().enumerate() {
                let mut swallowed = Vec::new();
                if ev.indices.contains(&i)
                    || self.schema(
                        u,
                        path,
                        item,
                        &mut Eval::default(),
                        &mut swallowed,
                        depth + 1,
                    )
                {
                    ev.add_index(self.track(), i);
                } else {
                    bad = true;
                }
            }
            if bad {
                ok = push(out, path, Kind::UnevaluatedItems);
            }
        }
        if let Some(u) = k.unevaluated_properties {
            let mut bad = false;
            match v {
                Value::Object(map) => {
                    for (key, val) in map {
                        let mut swallowed = Vec::new();
                        if ev.keys.contains(&key.as_str())
                            || self.schema(
                                u,
                                path,
                                val,
                                &mut Eval::default(),
                                &mut swallowed,
                                depth + 1,
                            )
                        {
                            ev.add_key(self.track(), key);
                        } else {
                            bad = true;
                        }
                    }
                }
                Value::Array(items) => {
                    bad = !items
                        .iter()
                        .all(|item| self.check.schema(u, item, &mut Eval::default(), depth + 1));
                }
                _ => {}
            }
            if bad {
                ok = push(out, path, Kind::UnevaluatedProperties);
            }
        }
        ok
    }
}

fn string(k: &Keywords, path: &str, s: &str, out: &mut Vec<Failure>) -> bool {
    let mut ok = true;
    if k.max_length.is_some() || k.min_length.is_some() {
        let len = js::string_length(s) as f64;
        if let Some(m) = k.max_length
            && len > m
        {
            ok = push(out, path, Kind::MaxLength(m));
        }
        if let Some(m) = k.min_length
            && len < m
        {
            ok = push(out, path, Kind::MinLength(m));
        }
    }
    if let Some((name, Some(f))) = &k.format
        && !f.test(s)
    {
        ok = push(out, path, Kind::Format(name.clone()));
    }
    if let Some(p) = &k.pattern
        && !p.regex.is_match(s)
    {
        ok = push(out, path, Kind::Pattern(p.source.clone()));
    }
    ok
}

fn number(k: &Keywords, path: &str, n: f64, out: &mut Vec<Failure>) -> bool {
    let mut ok = true;
    if let Some(m) = k.exclusive_maximum
        && n >= m
    {
        ok = push(out, path, Kind::Compare { op: "<", limit: m });
    }
    if let Some(m) = k.exclusive_minimum
        && n <= m
    {
        ok = push(out, path, Kind::Compare { op: ">", limit: m });
    }
    if let Some(m) = k.maximum
        && n > m
    {
        ok = push(out, path, Kind::Compare { op: "<=", limit: m });
    }
    if let Some(m) = k.minimum
        && n < m
    {
        ok = push(out, path, Kind::Compare { op: ">=", limit: m });
    }
    if let Some(m) = k.multiple_of
        && !check::is_multiple_of(n, m)
    {
        ok = push(out, path, Kind::MultipleOf(m));
    }
    ok
}
