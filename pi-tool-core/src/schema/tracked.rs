//! A deserialiser over borrowed JSON that knows where it failed.
//!
//! Params are deserialised from the validated `&Value` once per call. To explain a failure
//! (`  - limit: invalid value: …`) the path of the rejected field is needed; wrapping every
//! visitor to track it (as `serde_path_to_error` does) costs on every call and is a second
//! copy of every params type's `Deserialize` code in the user's binary. Here the path is
//! built only as an error travels back up: each map entry, sequence element and enum
//! variant adds its segment to the error it returns. Success costs nothing extra, and each
//! params type is instantiated with this one deserialiser only.
//!
//! It reads `&Value` as `serde_json`'s own `&Value` deserialiser does (the same visitor
//! calls, so the same error texts), including map keys read as numbers or booleans, with
//! one exception: a struct (or struct variant) is read from an object only, not from an
//! array of its fields (see `deserialize_struct`).

use std::fmt;

use serde::de::{self, DeserializeSeed, IntoDeserializer, Unexpected, Visitor};
use serde::forward_to_deserialize_any;
use serde_json::{Map, Number, Value};

/// A deserialisation failure: serde's message and the path to the value it concerns.
/// Boxed, so that every `Result` of a successful read stays as small as the value it
/// holds (one pointer, as `serde_json::Error` is).
#[derive(Debug)]
pub(crate) struct PathError(Box<Failure>);

#[derive(Debug)]
struct Failure {
    /// Innermost segment first: pushed as the error travels outwards.
    reversed: Vec<String>,
    message: String,
}

impl PathError {
    fn within(mut self, segment: impl Into<String>) -> Self {
        self.0.reversed.push(segment.into());
        self
    }

    /// The path in Pi's notation: `a.0.b`, `root` when empty.
    pub(crate) fn path(&self) -> String {
        if self.0.reversed.is_empty() {
            return "root".to_owned();
        }
        let parts: Vec<&str> = self.0.reversed.iter().rev().map(String::as_str).collect();
        parts.join(".")
    }

    /// serde's message.
    pub(crate) fn message(&self) -> &str {
        &self.0.message
    }
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path(), self.0.message)
    }
}

impl std::error::Error for PathError {}

impl de::Error for PathError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        PathError(Box::new(Failure {
            reversed: Vec::new(),
            message: msg.to_string(),
        }))
    }
}

/// The deserialiser: a borrowed JSON value.
#[derive(Clone, Copy)]
pub(crate) struct Tracked<'a>(pub(crate) &'a Value);

fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => number_unexpected(n),
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

fn number_unexpected(n: &Number) -> Unexpected<'static> {
    if let Some(u) = n.as_u64() {
        Unexpected::Unsigned(u)
    } else if let Some(i) = n.as_i64() {
        Unexpected::Signed(i)
    } else {
        Unexpected::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

fn visit_number<'de, V: Visitor<'de>>(n: &Number, visitor: V) -> Result<V::Value, PathError> {
    if let Some(u) = n.as_u64() {
        visitor.visit_u64(u)
    } else if let Some(i) = n.as_i64() {
        visitor.visit_i64(i)
    } else {
        visitor.visit_f64(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// `deserialize_*` methods for one kind of scalar: the value is visited only when it is
/// of that kind.
macro_rules! of_kind {
    ($kind:ident($v:ident), $visitor:ident => $visit:expr; $($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, $visitor: V) -> Result<V::Value, PathError> {
            match self.0 {
                Value::$kind($v) => $visit,
                other => Err(de::Error::invalid_type(unexpected(other), &$visitor)),
            }
        }
    )*};
}

impl<'de> de::Deserializer<'de> for Tracked<'de> {
    type Error = PathError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => visit_number(n, visitor),
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => visit_seq(items, visitor),
            Value::Object(map) => visit_map(map, visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, PathError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, PathError> {
        match self.0 {
            Value::String(variant) => visitor.visit_enum(Variant {
                variant,
                value: None,
            }),
            Value::Object(map) => {
                let mut entries = map.iter();
                match (entries.next(), entries.next()) {
                    (Some((variant, value)), None) => visitor.visit_enum(Variant {
                        variant,
                        value: Some(value),
                    }),
                    _ => Err(de::Error::invalid_value(
                        Unexpected::Map,
                        &"map with a single key",
                    )),
                }
            }
            other => Err(de::Error::invalid_type(unexpected(other), &"string or map")),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        visitor.visit_unit()
    }

    // A field of a known type reads only its own kind of value and refuses the rest with
    // the visitor's own message (as its default methods would): a match of one arm per
    // field instead of every kind, inlined into each params type's code.
    of_kind! {
        Number(n), visitor => visit_number(n, visitor);
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64
    }
    of_kind! {
        String(s), visitor => visitor.visit_borrowed_str(s);
        deserialize_str deserialize_string deserialize_identifier
    }
    of_kind! { Bool(b), visitor => visitor.visit_bool(*b); deserialize_bool }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        match self.0 {
            Value::Array(items) => visit_seq(items, visitor),
            other => Err(de::Error::invalid_type(unexpected(other), &visitor)),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, PathError> {
        // Objects only: serde_json also reads a struct from an array of its fields in
        // order, but a derived struct's schema is an object, so validation never lets an
        // array through, and that path was the largest per-type code of a params type
        // (its `visit_seq`, about a fifth of a 200-tool crate's IR).
        match self.0 {
            Value::Object(map) => visit_map(map, visitor),
            other => Err(de::Error::invalid_type(unexpected(other), &visitor)),
        }
    }

    forward_to_deserialize_any! {
        char bytes byte_buf unit unit_struct tuple tuple_struct map
    }
}

fn visit_seq<'de, V: Visitor<'de>>(items: &'de [Value], visitor: V) -> Result<V::Value, PathError> {
    let mut seq = Seq {
        items: items.iter(),
        index: 0,
    };
    let value = visitor.visit_seq(&mut seq)?;
    if seq.items.len() == 0 {
        Ok(value)
    } else {
        Err(de::Error::invalid_length(
            items.len(),
            &"fewer elements in array",
        ))
    }
}

fn visit_map<'de, V: Visitor<'de>>(
    map: &'de Map<String, Value>,
    visitor: V,
) -> Result<V::Value, PathError> {
    let mut access = Entries {
        entries: map.iter(),
        pending: None,
    };
    let value = visitor.visit_map(&mut access)?;
    if access.entries.len() == 0 {
        Ok(value)
    } else {
        Err(de::Error::invalid_length(
            map.len(),
            &"fewer elements in map",
        ))
    }
}

struct Seq<'de> {
    items: std::slice::Iter<'de, Value>,
    index: usize,
}

impl<'de> de::SeqAccess<'de> for Seq<'de> {
    type Error = PathError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, PathError> {
        let Some(item) = self.items.next() else {
            return Ok(None);
        };
        let index = self.index;
        self.index += 1;
        seed.deserialize(Tracked(item))
            .map(Some)
            .map_err(|e| e.within(index.to_string()))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct Entries<'de> {
    entries: serde_json::map::Iter<'de>,
    pending: Option<(&'de str, &'de Value)>,
}

impl<'de> de::MapAccess<'de> for Entries<'de> {
    type Error = PathError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, PathError> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.pending = Some((key, value));
        seed.deserialize(Key(key)).map(Some)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, PathError> {
        match self.pending.take() {
            Some((key, value)) => seed.deserialize(Tracked(value)).map_err(|e| e.within(key)),
            None => Err(de::Error::custom("value is missing")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// A map key: a string, also readable as a number or a boolean (as `serde_json` reads
/// keys, for maps such as `HashMap<u32, _>`).
struct Key<'de>(&'de str);

/// A key read as a number is parsed as a JSON number, as `serde_json` does.
fn numeric_key<'de, V: Visitor<'de>>(key: &str, visitor: V) -> Result<V::Value, PathError> {
    let number = match key.as_bytes().first() {
        Some(b'0'..=b'9' | b'-') => serde_json::from_str::<Number>(key).ok(),
        _ => None,
    };
    match number {
        Some(n) => visit_number(&n, visitor),
        None => Err(de::Error::custom(
            "invalid value: expected key to be a number in quotes",
        )),
    }
}

macro_rules! numeric_key {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
            numeric_key(self.0, visitor)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for Key<'de> {
    type Error = PathError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        visitor.visit_borrowed_str(self.0)
    }

    numeric_key! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        match self.0 {
            "true" => visitor.visit_bool(true),
            "false" => visitor.visit_bool(false),
            other => Err(de::Error::invalid_type(Unexpected::Str(other), &visitor)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, PathError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, PathError> {
        visitor.visit_enum(Variant {
            variant: self.0,
            value: None,
        })
    }

    forward_to_deserialize_any! {
        char str string bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

/// An enum: its variant name and, unless it is a unit variant given as a string, its value.
struct Variant<'de> {
    variant: &'de str,
    value: Option<&'de Value>,
}

impl<'de> de::EnumAccess<'de> for Variant<'de> {
    type Error = PathError;
    type Variant = Contents<'de>;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Contents<'de>), PathError> {
        let variant = self.variant.into_deserializer();
        let name: Result<V::Value, de::value::Error> = seed.deserialize(variant);
        let name = name.map_err(<PathError as de::Error>::custom)?;
        Ok((
            name,
            Contents {
                variant: self.variant,
                value: self.value,
            },
        ))
    }
}

struct Contents<'de> {
    variant: &'de str,
    value: Option<&'de Value>,
}

impl<'de> Contents<'de> {
    fn missing(&self, expected: &dyn de::Expected) -> PathError {
        de::Error::invalid_type(Unexpected::UnitVariant, expected)
    }
}

impl<'de> de::VariantAccess<'de> for Contents<'de> {
    type Error = PathError;

    fn unit_variant(self) -> Result<(), PathError> {
        match self.value {
            None | Some(Value::Null) => Ok(()),
            Some(other) => Err(de::Error::invalid_type(unexpected(other), &"unit variant")),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, PathError> {
        match self.value {
            Some(value) => seed
                .deserialize(Tracked(value))
                .map_err(|e| e.within(self.variant)),
            None => Err(self.missing(&"newtype variant")),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, PathError> {
        match self.value {
            Some(Value::Array(items)) => {
                visit_seq(items, visitor).map_err(|e| e.within(self.variant))
            }
            Some(other) => Err(de::Error::invalid_type(unexpected(other), &"tuple variant")),
            None => Err(self.missing(&"tuple variant")),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, PathError> {
        match self.value {
            // Objects only, as for structs.
            Some(Value::Object(map)) => visit_map(map, visitor).map_err(|e| e.within(self.variant)),
            Some(other) => Err(de::Error::invalid_type(
                unexpected(other),
                &"struct variant",
            )),
            None => Err(self.missing(&"struct variant")),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Shape {
        Dot,
        Circle(f64),
        Rect { w: u32, h: u32 },
        Pair(u8, u8),
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Params {
        name: String,
        tags: Vec<String>,
        shapes: Vec<Shape>,
        by_id: HashMap<u32, bool>,
        maybe: Option<i64>,
        #[serde(default)]
        unit: (),
    }

    fn tracked<T: serde::de::DeserializeOwned>(value: &Value) -> Result<T, PathError> {
        T::deserialize(Tracked(value))
    }

    #[test]
    fn reads_what_serde_json_reads() {
        let value = json!({
            "name": "x", "tags": ["a", "b"], "maybe": null,
            "shapes": ["dot", {"circle": 1.5}, {"rect": {"w": 1, "h": 2}}, {"pair": [3, 4]}],
            "by_id": {"7": true, "8": false},
        });
        let ours: Params = tracked(&value).unwrap();
        let theirs: Params = serde_json::from_value(value).unwrap();
        assert_eq!(ours, theirs);
    }

    #[test]
    fn failures_carry_serde_json_s_message_and_the_path() {
        let cases = [
            (json!({"rect": {"w": -1, "h": 2}}), "rect.w"),
            (json!({"circle": "big"}), "circle"),
            (json!({"pair": [3, 300]}), "pair.1"),
            (json!({"hexagon": 1}), "root"),
            (json!({"dot": null, "circle": 1.0}), "root"),
            (json!(5), "root"),
        ];
        for (value, path) in cases {
            let ours = tracked::<Shape>(&value).unwrap_err();
            let theirs = serde_json::from_value::<Shape>(value.clone()).unwrap_err();
            assert_eq!(ours.path(), path, "{value}");
            assert_eq!(ours.message(), theirs.to_string(), "{value}");
        }
        // A struct from an array of its fields: serde_json reads it, this refuses it with
        // serde's own words (a derived struct's schema never lets an array through).
        let array = json!(["x", [], [], {}, null]);
        assert!(serde_json::from_value::<Params>(array.clone()).is_ok());
        let error = tracked::<Params>(&array).unwrap_err();
        assert_eq!(error.path(), "root");
        assert_eq!(
            error.message(),
            "invalid type: sequence, expected struct Params"
        );
        let value = json!({"name": "x", "tags": ["a", 2], "shapes": [], "by_id": {}});
        assert_eq!(tracked::<Params>(&value).unwrap_err().path(), "tags.1");
        let value = json!({"name": "x", "tags": [], "shapes": [], "by_id": {"x": true}});
        let error = tracked::<Params>(&value).unwrap_err();
        assert_eq!(error.path(), "by_id");
        assert_eq!(
            error.message(),
            serde_json::from_value::<Params>(value)
                .unwrap_err()
                .to_string()
        );
    }
}
