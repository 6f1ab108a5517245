//! The fast path: does a value satisfy a compiled schema? (TypeBox's `Check`.)
//!
//! Short-circuits at the first failure and allocates nothing, except the evaluated-key lists
//! that `unevaluatedProperties`/`unevaluatedItems` need (only tracked when the schema uses
//! them) and the property-name strings `propertyNames` checks.

use serde_json::{Map, Value};

use super::compile::{Compiled, Dependency, Items, Keywords, Node, NodeId, PlainObject, ty};
use crate::js;

/// How many nested schema evaluations one check may make before it gives up (a schema such as
/// `{"allOf": [{"$ref": "#"}]}` would otherwise recurse forever; arguments themselves are
/// limited to [`super::MAX_ARGUMENT_DEPTH`] levels before validation starts).
pub(crate) const MAX_FRAMES: usize = 512;

/// The properties and items some schema has evaluated (TypeBox's `CheckContext` scope), for
/// `unevaluatedProperties`/`unevaluatedItems`.
#[derive(Debug, Default)]
pub(crate) struct Eval<'v> {
    pub(crate) keys: Vec<&'v str>,
    pub(crate) indices: Vec<usize>,
}

impl<'v> Eval<'v> {
    pub(crate) fn add_key(&mut self, track: bool, key: &'v str) {
        if track && !self.keys.contains(&key) {
            self.keys.push(key);
        }
    }

    pub(crate) fn add_index(&mut self, track: bool, index: usize) {
        if track && !self.indices.contains(&index) {
            self.indices.push(index);
        }
    }

    /// Inline for its first test: without `unevaluated*` keywords nothing is tracked and
    /// every merge is of two empty scopes.
    #[inline]
    pub(crate) fn merge(&mut self, other: Eval<'v>) {
        if !(other.keys.is_empty() && other.indices.is_empty()) {
            self.merge_tracked(other);
        }
    }

    fn merge_tracked(&mut self, other: Eval<'v>) {
        for k in other.keys {
            if !self.keys.contains(&k) {
                self.keys.push(k);
            }
        }
        for i in other.indices {
            if !self.indices.contains(&i) {
                self.indices.push(i);
            }
        }
    }
}

/// A key's entry in an object. Tool arguments are small objects, where comparing keys in
/// order beats hashing them (SipHash dominated the valid-call profile).
#[inline]
fn entry<'v>(map: &'v Map<String, Value>, key: &str) -> Option<(&'v String, &'v Value)> {
    if map.len() <= 8 {
        map.iter().find(|(k, _)| k.as_str() == key)
    } else {
        map.get_key_value(key)
    }
}

#[inline]
fn has(map: &Map<String, Value>, key: &str) -> bool {
    entry(map, key).is_some()
}

/// Whether `value` satisfies node `id` of `compiled`.
pub(crate) fn accepts(compiled: &Compiled, id: NodeId, value: &Value) -> bool {
    let checker = Checker {
        c: compiled,
        track: compiled.tracks_evaluated,
    };
    checker.schema(id, value, &mut Eval::default(), 0)
}

/// The JSON type of a value as [`ty`] bits (an integer-valued number is also a number).
pub(crate) fn type_bits(v: &Value) -> u8 {
    match v {
        Value::Null => ty::NULL,
        Value::Bool(_) => ty::BOOLEAN,
        Value::Number(n) if js::is_integer(n) => ty::NUMBER | ty::INTEGER,
        Value::Number(_) => ty::NUMBER,
        Value::String(_) => ty::STRING,
        Value::Array(_) => ty::ARRAY,
        Value::Object(_) => ty::OBJECT,
    }
}

pub(crate) fn type_matches(mask: u8, v: &Value) -> bool {
    mask & ty::ANY != 0 || mask & type_bits(v) != 0
}

/// Whether a key is declared by `properties` or matched by `patternProperties` (TypeBox's
/// `GetPropertiesPattern`).
pub(crate) fn is_declared(k: &Keywords, key: &str) -> bool {
    let declared = match (&k.property_set, &k.properties) {
        (Some(names), _) => names.contains(key),
        (None, Some(p)) => p.iter().any(|(name, _)| name == key),
        (None, None) => false,
    };
    declared
        || k.pattern_properties
            .as_ref()
            .is_some_and(|p| p.iter().any(|(pat, _)| pat.regex.is_match(key)))
}

/// TypeBox's `IsMultipleOf` (tolerance 1e-10; integers and divisors like 0.5 are exact).
pub(crate) fn is_multiple_of(dividend: f64, divisor: f64) -> bool {
    if !dividend.is_finite() {
        return true;
    }
    let inverse = 1.0 / divisor;
    if dividend.trunc() == dividend && inverse.is_finite() && inverse % 1.0 == 0.0 {
        return true;
    }
    let m = dividend % divisor;
    let (a, b, c) = (m.abs(), (m - divisor).abs(), (m + divisor).abs());
    if a.is_nan() || b.is_nan() || c.is_nan() {
        return false;
    }
    a.min(b).min(c) < 1e-10
}

/// Whether every item of `items` differs from the others (TypeBox's `uniqueItems`).
pub(crate) fn first_duplicates(items: &[Value]) -> Vec<usize> {
    let mut dups = Vec::new();
    if items.len() <= 32 {
        for (i, a) in items.iter().enumerate() {
            if items[..i].iter().any(|b| js::same_item(a, b)) {
                dups.push(i);
            }
        }
        return dups;
    }
    // Large arrays: bucket by a structural hash so the check stays near linear.
    let mut hashed: Vec<(u64, usize)> = items
        .iter()
        .enumerate()
        .map(|(i, v)| (hash(v), i))
        .collect();
    hashed.sort_unstable();
    let mut i = 0;
    while i < hashed.len() {
        let mut j = i + 1;
        while j < hashed.len() && hashed[j].0 == hashed[i].0 {
            j += 1;
        }
        for a in i + 1..j {
            let ia = hashed[a].1;
            if hashed[i..a]
                .iter()
                .any(|&(_, ib)| js::same_item(&items[ia], &items[ib]))
            {
                dups.push(ia);
            }
        }
        i = j;
    }
    dups.sort_unstable();
    dups
}

fn hash(v: &Value) -> u64 {
    use std::hash::{Hash, Hasher};
    fn feed(v: &Value, h: &mut std::collections::hash_map::DefaultHasher, depth: usize) {
        if depth > super::MAX_ARGUMENT_DEPTH {
            return;
        }
        match v {
            Value::Null => 0u8.hash(h),
            Value::Bool(b) => (1u8, *b).hash(h),
            Value::Number(n) => (2u8, js::as_f64(n).to_bits()).hash(h),
            Value::String(s) => (3u8, s).hash(h),
            Value::Array(a) => {
                4u8.hash(h);
                for x in a {
                    feed(x, h, depth + 1);
                }
            }
            Value::Object(m) => {
                5u8.hash(h);
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                for k in keys {
                    k.hash(h);
                    if let Some(x) = m.get(k) {
                        feed(x, h, depth + 1);
                    }
                }
            }
        }
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    feed(v, &mut h, 0);
    h.finish()
}

/// The `contains` count of an array (how many items match the `contains` schema).
fn contains_count(this: &Checker<'_>, id: NodeId, items: &[Value], depth: usize) -> usize {
    items
        .iter()
        .filter(|item| this.schema(id, item, &mut Eval::default(), depth + 1))
        .count()
}

pub(crate) struct Checker<'c> {
    pub(crate) c: &'c Compiled,
    pub(crate) track: bool,
}

impl Checker<'_> {
    /// Checks a child value in a fresh evaluation scope (TypeBox's `CheckSchemaPushStack`).
    fn child(&self, id: NodeId, v: &Value, depth: usize) -> bool {
        self.schema(id, v, &mut Eval::default(), depth + 1)
    }

    pub(crate) fn schema<'v>(
        &self,
        id: NodeId,
        v: &'v Value,
        ev: &mut Eval<'v>,
        depth: usize,
    ) -> bool {
        if depth > MAX_FRAMES {
            return false;
        }
        let k = match &self.c.nodes[id as usize] {
            Node::Bool(b) => return *b,
            Node::Schema(k) => k,
        };
        if let Some(t) = &k.types
            && !type_matches(t.mask, v)
        {
            return false;
        }
        let ok = match v {
            Value::Object(map) => self.object(k, v, map, ev, depth),
            Value::Array(items) => self.array(k, items, ev, depth),
            Value::String(s) => string(k, s),
            Value::Number(n) => number(k, js::as_f64(n)),
            _ => true,
        };
        ok && (!k.has_in_place || self.in_place(k, v, ev, depth))
    }

    fn object<'v>(
        &self,
        k: &Keywords,
        v: &'v Value,
        map: &'v Map<String, Value>,
        ev: &mut Eval<'v>,
        depth: usize,
    ) -> bool {
        let track = self.track;
        if let (Some(plain), Some(props)) = (&k.plain_object, &k.properties) {
            return self.plain_object(k, plain, props, map, ev, depth);
        }
        if let Some(req) = &k.required
            && !req.iter().all(|r| has(map, r))
        {
            return false;
        }
        if k.additional_by_count {
            // `required` passed above, so this is TypeBox's whole check here.
            if map.len() != k.required.as_ref().map_or(0, Vec::len) {
                return false;
            }
        } else if let Some(ap) = k.additional_properties {
            for (key, val) in map {
                if !is_declared(k, key) {
                    if !self.child(ap, val, depth) {
                        return false;
                    }
                    ev.add_key(track, key);
                }
            }
        }
        if !map.is_empty() {
            if let Some(deps) = &k.dependencies {
                for (name, dep) in deps {
                    if has(map, name) {
                        let ok = match dep {
                            Dependency::Names(names) => names.iter().all(|n| has(map, n)),
                            Dependency::Schema(id) => self.schema(*id, v, ev, depth + 1),
                        };
                        if !ok {
                            return false;
                        }
                    }
                }
            }
            if let Some(deps) = &k.dependent_required
                && !deps
                    .iter()
                    .all(|(name, names)| !has(map, name) || names.iter().all(|n| has(map, n)))
            {
                return false;
            }
        }
        if let Some(ds) = &k.dependent_schemas
            && !map.is_empty()
        {
            for (name, id) in ds {
                if has(map, name) && !self.schema(*id, v, ev, depth + 1) {
                    return false;
                }
            }
        }
        if let Some(pp) = &k.pattern_properties {
            for (pat, id) in pp {
                for (key, val) in map {
                    if pat.regex.is_match(key) {
                        if !self.child(*id, val, depth) {
                            return false;
                        }
                        ev.add_key(track, key);
                    }
                }
            }
        }
        if let Some(props) = &k.properties {
            for (name, id) in props {
                if let Some((key, val)) = entry(map, name) {
                    if !self.child(*id, val, depth) {
                        return false;
                    }
                    ev.add_key(track, key);
                }
            }
        }
        if let Some(pn) = k.property_names
            && !map
                .keys()
                .all(|key| self.child(pn, &Value::String(key.clone()), depth))
        {
            return false;
        }
        let n = map.len() as f64;
        !(k.min_properties.is_some_and(|m| n < m) || k.max_properties.is_some_and(|m| n > m))
    }

    /// [`object`](Self::object) for [`PlainObject`] schemas: each key is looked up in
    /// `properties` once, and `required` is counted on the way.
    fn plain_object<'v>(
        &self,
        k: &Keywords,
        plain: &PlainObject,
        props: &[(String, NodeId)],
        map: &'v Map<String, Value>,
        ev: &mut Eval<'v>,
        depth: usize,
    ) -> bool {
        let mut required_seen = 0;
        for (key, val) in map {
            let schema = match props.iter().position(|(name, _)| name == key) {
                Some(i) => {
                    required_seen += usize::from(plain.required[i]);
                    Some(props[i].1)
                }
                None => k.additional_properties,
            };
            if let Some(id) = schema {
                if !self.child(id, val, depth) {
                    return false;
                }
                ev.add_key(self.track, key);
            }
        }
        let n = map.len() as f64;
        required_seen == plain.required_count
            && plain.required_elsewhere.iter().all(|r| has(map, r))
            && !(k.min_properties.is_some_and(|m| n < m) || k.max_properties.is_some_and(|m| n > m))
    }

    fn array<'v>(&self, k: &Keywords, items: &'v [Value], ev: &mut Eval<'v>, depth: usize) -> bool {
        let track = self.track;
        let len = items.len();
        if let (Some(ai), Some(Items::Sized(sized))) = (k.additional_items, &k.items) {
            for (i, item) in items.iter().enumerate().skip(sized.len()) {
                if !self.child(ai, item, depth) {
                    return false;
                }
                ev.add_index(track, i);
            }
        }
        if let Some(c) = k.contains
            && k.min_contains != Some(0.0)
            && (len == 0
                || !items
                    .iter()
                    .any(|item| self.schema(c, item, &mut Eval::default(), depth + 1)))
        {
            return false;
        }
        match &k.items {
            Some(Items::Unsized(id)) => {
                let offset = k.prefix_items.as_ref().map_or(0, Vec::len);
                for (i, item) in items.iter().enumerate().skip(offset) {
                    if !self.child(*id, item, depth) {
                        return false;
                    }
                    ev.add_index(track, i);
                }
            }
            Some(Items::Sized(ids)) => {
                for (i, id) in ids.iter().enumerate().take(len) {
                    if !self.child(*id, &items[i], depth) {
                        return false;
                    }
                    ev.add_index(track, i);
                }
            }
            None => {}
        }
        if let Some(c) = k.contains {
            if let Some(max) = k.max_contains
                && contains_count(self, c, items, depth) as f64 > max
            {
                return false;
            }
            if let Some(min) = k.min_contains
                && (contains_count(self, c, items, depth) as f64) < min
            {
                return false;
            }
        }
        let n = len as f64;
        if k.max_items.is_some_and(|m| n > m) || k.min_items.is_some_and(|m| n < m) {
            return false;
        }
        if let Some(prefix) = &k.prefix_items
            && len > 0
        {
            for (i, id) in prefix.iter().enumerate().take(len) {
                if !self.child(*id, &items[i], depth) {
                    return false;
                }
                ev.add_index(track, i);
            }
        }
        !k.unique_items || first_duplicates(items).is_empty()
    }

    /// `$ref`, `const`, `enum`, `if`, `not`, `allOf`, `anyOf`, `oneOf`, `unevaluated*`.
    fn in_place<'v>(&self, k: &Keywords, v: &'v Value, ev: &mut Eval<'v>, depth: usize) -> bool {
        if let Some(r) = k.reference {
            let mut next = Eval::default();
            if !self.schema(r, v, &mut next, depth + 1) {
                return false;
            }
            ev.merge(next);
        }
        if let Some(c) = &k.constant
            && !js::deep_equal(v, c)
        {
            return false;
        }
        if let Some(e) = &k.enumeration
            && !e.iter().any(|option| js::deep_equal(v, option))
        {
            return false;
        }
        if let Some((i, t, e)) = k.if_then_else {
            let branch = if self.schema(i, v, ev, depth + 1) {
                t
            } else {
                e
            };
            if let Some(b) = branch
                && !self.schema(b, v, ev, depth + 1)
            {
                return false;
            }
        }
        if let Some(n) = k.not {
            let mut next = Eval::default();
            if self.schema(n, v, &mut next, depth + 1) {
                return false;
            }
            ev.merge(next);
        }
        if let Some(all) = &k.all_of {
            let mut merged = Eval::default();
            for id in all {
                let mut next = Eval::default();
                if !self.schema(*id, v, &mut next, depth + 1) {
                    return false;
                }
                merged.merge(next);
            }
            ev.merge(merged);
        }
        if let Some(any) = &k.any_of {
            let mut passed = false;
            for id in any {
                let mut next = Eval::default();
                if self.schema(*id, v, &mut next, depth + 1) {
                    passed = true;
                    ev.merge(next);
                    if !self.track {
                        break;
                    }
                }
            }
            if !passed {
                return false;
            }
        }
        if let Some(one) = &k.one_of {
            let mut passed = 0;
            let mut kept = Eval::default();
            for id in one {
                let mut next = Eval::default();
                if self.schema(*id, v, &mut next, depth + 1) {
                    passed += 1;
                    kept.merge(next);
                    if passed > 1 {
                        return false;
                    }
                }
            }
            if passed != 1 {
                return false;
            }
            ev.merge(kept);
        }
        if let (Some(u), Value::Array(items)) = (k.unevaluated_items, v) {
            for (i, item) in items.iter().enumerate() {
                if !ev.indices.contains(&i)
                    && !self.schema(u, item, &mut Eval::default(), depth + 1)
                {
                    return false;
                }
                ev.add_index(self.track, i);
            }
        }
        if let Some(u) = k.unevaluated_properties {
            match v {
                Value::Object(map) => {
                    for (key, val) in map {
                        if !ev.keys.contains(&key.as_str()) {
                            if !self.schema(u, val, &mut Eval::default(), depth + 1) {
                                return false;
                            }
                            ev.add_key(self.track, key);
                        }
                    }
                }
                // TypeBox walks arrays too (`IsObject` holds for them); no key of an array is
                // ever evaluated.
                Value::Array(items)
                    if !items
                        .iter()
                        .all(|item| self.schema(u, item, &mut Eval::default(), depth + 1)) =>
                {
                    return false;
                }
                _ => {}
            }
        }
        true
    }
}

/// String keywords in TypeBox's order: maxLength, minLength, format, pattern.
pub(crate) fn string(k: &Keywords, s: &str) -> bool {
    if k.max_length.is_some() || k.min_length.is_some() {
        let len = js::string_length(s) as f64;
        if k.max_length.is_some_and(|m| len > m) || k.min_length.is_some_and(|m| len < m) {
            return false;
        }
    }
    if let Some((_, Some(f))) = &k.format
        && !f.test(s)
    {
        return false;
    }
    k.pattern.as_ref().is_none_or(|p| p.regex.is_match(s))
}

/// Number keywords in TypeBox's order: exclusiveMaximum, exclusiveMinimum, maximum, minimum,
/// multipleOf.
pub(crate) fn number(k: &Keywords, n: f64) -> bool {
    !(k.exclusive_maximum.is_some_and(|m| n >= m)
        || k.exclusive_minimum.is_some_and(|m| n <= m)
        || k.maximum.is_some_and(|m| n > m)
        || k.minimum.is_some_and(|m| n < m)
        || k.multiple_of.is_some_and(|m| !is_multiple_of(n, m)))
}

/// Precomputes, after compiling, for every property schema, whether it rejects `null` (Pi asks
/// `Compile(propertySchema).Check(null)` on every call; the answer never changes).
pub(super) fn fill_null_rejection(compiled: &mut Compiled) {
    let mut answers = Vec::with_capacity(compiled.nodes.len());
    for node in &compiled.nodes {
        let row: Vec<bool> = match node {
            Node::Schema(k) => {
                k.pi.properties
                    .iter()
                    .map(|(_, id)| id.is_some_and(|id| !accepts(compiled, id, &Value::Null)))
                    .collect()
            }
            Node::Bool(_) => Vec::new(),
        };
        answers.push(row);
    }
    for (node, row) in compiled.nodes.iter_mut().zip(answers) {
        if let Node::Schema(k) = node {
            k.pi.property_rejects_null = row;
        }
    }
}
