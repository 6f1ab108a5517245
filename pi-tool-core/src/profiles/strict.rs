//! Strict-mode object rules (P-strict-objects) and the untyped-schema check
//! (P-untyped-check), recording the reverse map on the way.

use serde_json::{Map, Value, json};

use super::Ctx;
use super::reverse::{Scope, Seg};
use crate::schema::MAX_DEPTH;
use crate::schema::keywords::{Step, for_each_child_mut, index_of, types_of};

/// Applicator keywords that give a schema a shape without `type`.
const SHAPED_BY: &[&str] = &["type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const"];

/// P-untyped-check: `{}` (`serde_json::Value`) and free-form objects
/// (`additionalProperties: true`) cannot be expressed in strict or OpenAPI schemas.
pub(crate) fn untyped_check(m: &mut Map<String, Value>, path: &str, ctx: &mut Ctx) {
    if !SHAPED_BY.iter().any(|k| m.contains_key(*k)) {
        ctx.error(
            path,
            "accepts any JSON value (e.g. `serde_json::Value`), which this provider cannot \
             express; use a concrete type, or a `String` holding JSON",
        );
    } else if m.get("additionalProperties") == Some(&Value::Bool(true)) {
        ctx.error(
            path,
            "is a free-form object (`serde_json::Map` or a flattened map), which this \
             provider cannot express; use a struct",
        );
    }
}

/// Is `schema` an object schema (by `type` or by having `properties`)?
fn is_object(m: &Map<String, Value>) -> bool {
    types_of(m).contains(&"object") || m.contains_key("properties")
}

/// P-strict-objects: every object closed (`additionalProperties: false`) with
/// `properties`; maps are errors. With `all_required` (OpenAI) every property is
/// required and each optional one becomes nullable, its path recorded for
/// [`super::ReverseMap::strip_injected_nulls`].
pub(crate) fn strict_objects(schema: &mut Value, all_required: bool, ctx: &mut Ctx) {
    let mut walk = Walk {
        all_required,
        path: Vec::new(),
        pointer: String::new(),
    };
    walk.node(schema, &Scope::Root, 0, ctx);
}

struct Walk {
    all_required: bool,
    path: Vec<Seg>,
    pointer: String,
}

impl Walk {
    fn node(&mut self, value: &mut Value, scope: &Scope, depth: usize, ctx: &mut Ctx) {
        if depth > MAX_DEPTH {
            ctx.error(&self.pointer, "the schema nests too deep to be processed");
            return;
        }
        let Value::Object(m) = value else {
            return;
        };
        if let Some(Value::String(r)) = m.get("$ref") {
            let target = if r == "#" {
                Some(Scope::Root)
            } else {
                r.strip_prefix("#/$defs/")
                    .map(|name| Scope::Def(name.replace("~1", "/").replace("~0", "~")))
            };
            if let Some(target) = target {
                ctx.reverse.record_ref(scope, &self.path, target);
            }
        }
        if is_object(m) {
            self.close(m, ctx);
            if self.all_required {
                self.require_all(m, scope, ctx);
            }
        }
        for_each_child_mut(m, |step, child| {
            let (len, plen) = (self.pointer.len(), self.path.len());
            step.push_pointer(&mut self.pointer);
            let mut child_scope = scope.clone();
            match step {
                Step::Entry("properties", name) => self.path.push(Seg::Key(name.to_owned())),
                Step::Key("items" | "additionalProperties")
                | Step::Entry("patternProperties", _) => self.path.push(Seg::Any),
                Step::Index("prefixItems" | "items", i) => self.path.push(Seg::Index(i)),
                Step::Entry("$defs", name) if self.pointer.matches('/').count() == 2 => {
                    child_scope = Scope::Def(name.to_owned());
                }
                _ => {}
            }
            // Root `$defs` entries start a new scope; the root's path is empty there.
            self.node(child, &child_scope, depth + 1, ctx);
            self.pointer.truncate(len);
            self.path.truncate(plen);
        });
    }

    fn close(&mut self, m: &mut Map<String, Value>, ctx: &mut Ctx) {
        match m.get("additionalProperties") {
            None => {
                m.insert("additionalProperties".to_owned(), Value::Bool(false));
            }
            Some(Value::Bool(false)) => {}
            Some(Value::Bool(true)) => {} // reported by the untyped check
            Some(_) => ctx.error(
                &self.pointer,
                "is a map (`HashMap`/`BTreeMap`), which strict mode cannot express \
                 (every object must be closed); use a struct, or a `Vec` of key/value structs",
            ),
        }
        if m.get("unevaluatedProperties") == Some(&Value::Bool(false)) {
            m.shift_remove("unevaluatedProperties");
        }
        if !m.contains_key("properties") {
            let at = index_of(m, "type").map_or(0, |i| i + 1);
            m.shift_insert(at.min(m.len()), "properties".to_owned(), json!({}));
        }
    }

    fn require_all(&mut self, m: &mut Map<String, Value>, scope: &Scope, ctx: &mut Ctx) {
        let required: Vec<String> = m
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let Some(Value::Object(props)) = m.get_mut("properties") else {
            return;
        };
        let mut names = Vec::new();
        for (name, schema) in props.iter_mut() {
            names.push(Value::from(name.as_str()));
            if required.contains(name) {
                continue;
            }
            if let Value::Object(s) = schema {
                if s.get("default") == Some(&Value::Null) {
                    s.shift_remove("default");
                }
                if !accepts_null(schema) {
                    make_nullable(schema);
                }
            }
            self.path.push(Seg::Key(name.clone()));
            ctx.reverse.record_null(scope, &self.path);
            self.path.pop();
        }
        if names.is_empty() && !m.contains_key("required") {
            return;
        }
        let at = index_of(m, "required")
            .or_else(|| index_of(m, "properties").map(|i| i + 1))
            .unwrap_or(m.len());
        m.shift_remove("required");
        m.shift_insert(at.min(m.len()), "required".to_owned(), Value::Array(names));
    }
}

/// Does `schema` accept `null` as is?
pub(crate) fn accepts_null(schema: &Value) -> bool {
    let Some(m) = schema.as_object() else {
        return schema == &Value::Bool(true);
    };
    if types_of(m).contains(&"null") {
        return true;
    }
    if m.get("const") == Some(&Value::Null) {
        return true;
    }
    if let Some(Value::Array(values)) = m.get("enum")
        && values.contains(&Value::Null)
        && !m.contains_key("type")
    {
        return true;
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = m.get(key)
            && branches.iter().any(accepts_null)
        {
            return true;
        }
    }
    false
}

/// Makes `schema` also accept `null`, in the form OpenAI documents.
fn make_nullable(schema: &mut Value) {
    let Value::Object(m) = schema else {
        return;
    };
    let has_const = m.contains_key("const");
    match m.get_mut("type") {
        Some(Value::String(t)) if !has_const => {
            let t = std::mem::take(t);
            m.insert("type".to_owned(), json!([t, "null"]));
            push_null_to_enum(m);
            return;
        }
        Some(Value::Array(types)) if !has_const => {
            types.push(Value::from("null"));
            push_null_to_enum(m);
            return;
        }
        _ => {}
    }
    if !has_const && !m.contains_key("$ref") {
        if let Some(Value::Array(branches)) = m.get_mut("anyOf") {
            branches.push(json!({"type": "null"}));
            return;
        }
        if !m.contains_key("type") && m.contains_key("enum") {
            push_null_to_enum(m);
            return;
        }
    }
    let mut outer = Map::new();
    let mut inner = Map::new();
    for (k, v) in std::mem::take(m) {
        if matches!(k.as_str(), "description" | "title") {
            outer.insert(k, v);
        } else {
            inner.insert(k, v);
        }
    }
    outer.insert(
        "anyOf".to_owned(),
        json!([Value::Object(inner), {"type": "null"}]),
    );
    *m = outer;
}

fn push_null_to_enum(m: &mut Map<String, Value>) {
    if let Some(Value::Array(values)) = m.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
}
