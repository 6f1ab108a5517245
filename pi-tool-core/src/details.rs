//! The details of a JSON-level result: JSON text made once, a JSON value made when read.

use std::cell::Cell;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

mod flat;

/// Host-visible details of a [`JsonToolResult`](crate::JsonToolResult): any JSON value,
/// kept as JSON text when it came from typed details.
///
/// A typed tool's details cross to the JSON level on every call. Building a
/// `serde_json::Value` there would cost more than the rest of a small call together: an
/// order-preserving map per object, a string per key and a hashed insert per field. Most
/// results never need that tree: the loop moves details from the result into the
/// transcript, events hand them to listeners, and whoever forwards them (a UI socket, a
/// session file, an MCP client) writes JSON text. So [`JsonDetails`] serialises typed details
/// once, to compact JSON text, and parses that text into a [`Value`] only when someone reads
/// it as one; writing it out again copies the text.
///
/// Details given as a [`Value`] (by a JSON-level tool, a hook, a handler) stay that value.
/// Either way the details are shared: cloning is a reference-count increment.
///
/// ```
/// use pi_tool_core::{JsonDetails, json};
///
/// #[derive(serde::Serialize)]
/// struct Weather { city: String, temperature: i64 }
///
/// let details = JsonDetails::from_typed(&Weather { city: "Tokyo".into(), temperature: 24 })?;
/// assert_eq!(details.to_json_string(), r#"{"city":"Tokyo","temperature":24}"#);
/// assert_eq!(details["temperature"], 24);              // parsed once, on first read
/// assert_eq!(details, json!({"city": "Tokyo", "temperature": 24}));
/// # Ok::<(), serde_json::Error>(())
/// ```
///
/// Read it as a [`Value`] through [`as_value`](Self::as_value) or `Deref`
/// (`details["temperature"]`); serialise it, and the text is written as it is.
#[derive(Clone)]
pub struct JsonDetails(Repr);

#[derive(Clone)]
enum Repr {
    Value(Arc<Value>),
    Text {
        /// Compact JSON, as `serde_json` wrote it.
        text: Arc<str>,
        /// The value the text reads as, once someone has read it.
        value: OnceLock<Arc<Value>>,
    },
}

/// Scratch space details are serialised into before they get an allocation of their exact
/// size: `serde_json::to_string` starts at 128 bytes and a `Box<str>` then shrinks it, and
/// that grow-then-shrink cost more than the serialisation of a small struct. The buffer is
/// taken out of the thread-local while in use (a local `Vec` stays in registers; a
/// `Serialize` impl that itself builds details finds the slot empty and uses its own).
const SCRATCH_KEPT: usize = 64 * 1024;

thread_local! {
    static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

fn serialize_to_text<T: Serialize + ?Sized>(details: &T) -> Result<Arc<str>, serde_json::Error> {
    let mut buffer = SCRATCH.with(Cell::take);
    buffer.clear();
    let written = match flat::write_struct(details, &mut buffer) {
        Ok(true) => Ok(()),
        Ok(false) => serde_json::to_writer(&mut buffer, details),
        Err(error) => Err(error),
    };
    let text = written.map(|()| {
        // SAFETY: serde_json writes only UTF-8: every string it writes comes from a `&str`,
        // everything else is ASCII (its own `to_string` relies on this the same way), and
        // `flat` adds ASCII punctuation and field names, which are `&str`. The check this
        // skips is measurable on a small tool call (`bench/README.md`, dispatch).
        Arc::from(unsafe { std::str::from_utf8_unchecked(&buffer) })
    });
    if buffer.capacity() <= SCRATCH_KEPT {
        SCRATCH.with(|scratch| scratch.set(buffer));
    }
    text
}

impl JsonDetails {
    /// Serialises typed details to JSON text, once. Fails only when `details`' `Serialize`
    /// does (a map with non-string keys, a custom impl that refuses).
    pub fn from_typed<T: Serialize + ?Sized>(details: &T) -> Result<Self, serde_json::Error> {
        Ok(JsonDetails(Repr::Text {
            text: serialize_to_text(details)?,
            value: OnceLock::new(),
        }))
    }

    /// `null` details (Pi keeps `details: null` apart from no details).
    pub fn null() -> Self {
        Value::Null.into()
    }

    /// `{}`: the details of the error results the loop builds (Pi's `createErrorToolResult`).
    pub fn empty_object() -> Self {
        Value::Object(serde_json::Map::new()).into()
    }

    /// The details as a JSON value, parsed from the text on first read.
    ///
    /// Text nested deeper than `serde_json`'s limit of 128 levels cannot be parsed back; it
    /// reads as a JSON string holding the text, so nothing is lost.
    pub fn as_value(&self) -> &Value {
        match &self.0 {
            Repr::Value(value) => value,
            Repr::Text { text, value } => value.get_or_init(|| Arc::new(parse(text))),
        }
    }

    /// The details as an owned JSON value (moved out when nothing else shares them).
    pub fn into_value(self) -> Value {
        match self.0 {
            Repr::Value(value) => Arc::unwrap_or_clone(value),
            Repr::Text { text, value } => match value.into_inner() {
                Some(value) => Arc::unwrap_or_clone(value),
                None => parse(&text),
            },
        }
    }

    /// The details as compact JSON text.
    pub fn to_json_string(&self) -> String {
        match &self.0 {
            Repr::Value(value) => value.to_string(),
            Repr::Text { text, .. } => text.to_string(),
        }
    }
}

/// Text this module wrote reads back, unless it nests deeper than serde_json parses.
fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

impl From<Value> for JsonDetails {
    fn from(value: Value) -> Self {
        JsonDetails(Repr::Value(Arc::new(value)))
    }
}

impl From<JsonDetails> for Value {
    fn from(details: JsonDetails) -> Self {
        details.into_value()
    }
}

impl Deref for JsonDetails {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.as_value()
    }
}

impl PartialEq for JsonDetails {
    fn eq(&self, other: &Self) -> bool {
        if let (Repr::Text { text: a, .. }, Repr::Text { text: b, .. }) = (&self.0, &other.0)
            && a == b
        {
            return true;
        }
        self.as_value() == other.as_value()
    }
}

impl PartialEq<Value> for JsonDetails {
    fn eq(&self, other: &Value) -> bool {
        self.as_value() == other
    }
}

impl PartialEq<JsonDetails> for Value {
    fn eq(&self, other: &JsonDetails) -> bool {
        self == other.as_value()
    }
}

impl fmt::Debug for JsonDetails {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JsonDetails({self})")
    }
}

/// Compact JSON.
impl fmt::Display for JsonDetails {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Value(value) => fmt::Display::fmt(value, f),
            Repr::Text { text, .. } => f.write_str(text),
        }
    }
}

impl Serialize for JsonDetails {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Repr::Value(value) => value.serialize(serializer),
            // serde_json's serializers write raw text as it is (and `to_value` parses it).
            // Borrowing the text as a `RawValue` skims it once (serde_json has no unchecked
            // constructor); text too deep for that is written as the value it reads as.
            Repr::Text { text, .. } => match serde_json::from_str::<&RawValue>(text) {
                Ok(raw) => raw.serialize(serializer),
                Err(_) => self.as_value().serialize(serializer),
            },
        }
    }
}

impl<'de> Deserialize<'de> for JsonDetails {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(Into::into)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Serialize)]
    struct Weather {
        city: &'static str,
        temperature: Option<i64>,
        ratio: f64,
    }

    fn tokyo() -> JsonDetails {
        JsonDetails::from_typed(&Weather {
            city: "Tokyo",
            temperature: Some(24),
            ratio: 0.5,
        })
        .unwrap()
    }

    #[test]
    fn typed_details_read_as_the_value_serde_json_would_build() {
        let details = tokyo();
        let expected = json!({"city": "Tokyo", "temperature": 24, "ratio": 0.5});
        assert_eq!(details.as_value(), &expected);
        assert_eq!(details.clone().into_value(), expected);
        assert_eq!(details.into_value(), expected);
    }

    #[test]
    fn text_and_value_details_serialise_alike() {
        let from_value =
            JsonDetails::from(json!({"city": "Tokyo", "temperature": 24, "ratio": 0.5}));
        let from_text = tokyo();
        assert_eq!(
            serde_json::to_string(&from_text).unwrap(),
            serde_json::to_string(&from_value).unwrap()
        );
        assert_eq!(
            serde_json::to_value(&from_text).unwrap(),
            serde_json::to_value(&from_value).unwrap()
        );
        assert_eq!(from_text, from_value);
        assert_eq!(from_text.to_string(), from_value.to_json_string());
    }

    #[test]
    fn unserialisable_details_are_an_error_at_the_boundary() {
        let mut map = std::collections::BTreeMap::new();
        map.insert(vec![1u8], 1);
        let error = JsonDetails::from_typed(&map).unwrap_err();
        assert!(
            error.to_string().contains("key must be a string"),
            "{error}"
        );
    }

    #[test]
    fn text_too_deep_to_parse_reads_as_a_string_holding_it() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let value: Value = {
            let mut v = Value::Array(Vec::new());
            for _ in 1..200 {
                v = Value::Array(vec![v]);
            }
            v
        };
        let details = JsonDetails::from_typed(&value).unwrap();
        assert_eq!(details.to_json_string(), deep);
        assert_eq!(details.as_value(), &Value::String(deep));
    }

    #[test]
    fn details_built_while_serialising_details_get_their_own_buffer() {
        struct Nested;
        impl Serialize for Nested {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let inner = JsonDetails::from_typed(&[1, 2]).map_err(serde::ser::Error::custom)?;
                (inner.to_json_string(), inner).serialize(serializer)
            }
        }
        let details = JsonDetails::from_typed(&Nested).unwrap();
        assert_eq!(details.to_json_string(), r#"["[1,2]",[1,2]]"#);
    }

    #[test]
    fn details_round_trip_through_json() {
        let details: JsonDetails = serde_json::from_str(r#"{"a":[1,null]}"#).unwrap();
        assert_eq!(details, json!({"a": [1, null]}));
        assert_eq!(JsonDetails::null(), Value::Null);
        assert_eq!(JsonDetails::empty_object().to_json_string(), "{}");
        assert_eq!(
            format!("{:?}", tokyo()),
            r#"JsonDetails({"city":"Tokyo","temperature":24,"ratio":0.5})"#
        );
    }
}
