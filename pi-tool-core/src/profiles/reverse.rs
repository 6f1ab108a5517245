//! Reverse mapping: undoing, on the model's arguments, what a wire schema added.
//!
//! OpenAI strict mode requires every property to be listed in `required`; an optional
//! field is emulated by making it nullable, so the model sends `"page_size": null` where
//! it means "absent". Removing those injected `null`s before validation lets
//! `#[serde(default)]` and `Option::None` apply as the Rust type says (c.4 step 2).
//!
//! Paths are recorded per *scope*: the root, or a recursive `$defs` entry (whose values
//! can sit at any depth). A `$ref` records where its definition's paths apply again.

use std::fmt;

use serde_json::Value;

/// Nesting limit when applying the map to arguments (they come from the model).
const MAX_DEPTH: usize = 128;

/// One step of an argument path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    /// An object member.
    Key(String),
    /// A fixed array position (tuples).
    Index(usize),
    /// Every array item or map value.
    Any,
}

/// Where recorded paths start: the arguments root, or a value of a recursive definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Scope {
    Root,
    Def(String),
}

/// What a wire schema added that must be undone on the arguments (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReverseMap {
    /// (scope, path of the object member whose `null` was injected)
    nulls: Vec<(Scope, Vec<Seg>)>,
    /// (scope, path, scope of the value found there): a `$ref` in the wire schema.
    refs: Vec<(Scope, Vec<Seg>, Scope)>,
}

impl ReverseMap {
    /// True when nothing needs undoing.
    pub fn is_empty(&self) -> bool {
        self.nulls.is_empty()
    }

    pub(crate) fn record_null(&mut self, scope: &Scope, path: &[Seg]) {
        let entry = (scope.clone(), path.to_vec());
        if !self.nulls.contains(&entry) {
            self.nulls.push(entry);
        }
    }

    pub(crate) fn record_ref(&mut self, scope: &Scope, path: &[Seg], target: Scope) {
        let entry = (scope.clone(), path.to_vec(), target);
        if !self.refs.contains(&entry) {
            self.refs.push(entry);
        }
    }

    /// The recorded paths, readable: `/page_size`, `/filters/*/from`, `$defs/Node: /next`.
    pub fn paths(&self) -> Vec<String> {
        self.nulls
            .iter()
            .map(|(scope, path)| {
                let mut out = match scope {
                    Scope::Root => String::new(),
                    Scope::Def(name) => format!("$defs/{name}: "),
                };
                for seg in path {
                    out.push('/');
                    match seg {
                        Seg::Key(k) => out.push_str(k),
                        Seg::Index(i) => out.push_str(&i.to_string()),
                        Seg::Any => out.push('*'),
                    }
                }
                out
            })
            .collect()
    }

    /// Removes every recorded member whose value is `null`, so serde applies the field's
    /// default (c.4 step 2). Values of other types are left for validation to judge.
    pub fn strip_injected_nulls(&self, args: &mut Value) {
        if self.is_empty() {
            return;
        }
        self.strip_scope(&Scope::Root, args, 0);
    }

    fn strip_scope(&self, scope: &Scope, value: &mut Value, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        for (s, path) in &self.nulls {
            if s == scope
                && let Some((last, parents)) = path.split_last()
            {
                visit(value, parents, 0, &mut |parent| {
                    if let (Seg::Key(k), Value::Object(m)) = (last, parent)
                        && m.get(k).is_some_and(Value::is_null)
                    {
                        m.shift_remove(k);
                    }
                });
            }
        }
        for (s, path, target) in &self.refs {
            if s == scope && self.scope_has_work(target) {
                visit(value, path, 0, &mut |inner| {
                    self.strip_scope(target, inner, depth + 1);
                });
            }
        }
    }

    fn scope_has_work(&self, scope: &Scope) -> bool {
        self.nulls.iter().any(|(s, _)| s == scope) || self.refs.iter().any(|(s, _, _)| s == scope)
    }
}

/// Calls `f` on every value `path` reaches from `value`.
fn visit(value: &mut Value, path: &[Seg], depth: usize, f: &mut dyn FnMut(&mut Value)) {
    if depth > MAX_DEPTH {
        return;
    }
    let Some((first, rest)) = path.split_first() else {
        f(value);
        return;
    };
    match (first, value) {
        (Seg::Key(k), Value::Object(m)) => {
            if let Some(v) = m.get_mut(k) {
                visit(v, rest, depth + 1, f);
            }
        }
        (Seg::Index(i), Value::Array(list)) => {
            if let Some(v) = list.get_mut(*i) {
                visit(v, rest, depth + 1, f);
            }
        }
        (Seg::Any, Value::Array(list)) => {
            for v in list {
                visit(v, rest, depth + 1, f);
            }
        }
        (Seg::Any, Value::Object(m)) => {
            for (_, v) in m.iter_mut() {
                visit(v, rest, depth + 1, f);
            }
        }
        _ => {}
    }
}

impl fmt::Display for ReverseMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "strip injected nulls at [{}]", self.paths().join(", "))
    }
}
