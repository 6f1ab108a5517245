//! Compact JSON for a struct's top level, with its field names written as they are.
//!
//! Details are nearly always a flat struct, and `serde_json` writes each field name
//! through its string escaper: a byte-by-byte table lookup and three writes per name,
//! about a tenth of a small tool call. A field name that needs no escaping (no `"`, no
//! `\`, no control character: what `serde_json` escapes) is written here in one piece;
//! every field value, and every name that does need escaping, is written by `serde_json`
//! itself. A field value that is a string (or a unit variant, or an `Option` of one)
//! needing no escaping is written in one piece too, for the same reason: `serde_json`'s
//! escaper was a third of the details' cost. Anything that is not a plain struct at the top (a map, an enum, a sequence,
//! `serde_json`'s own `RawValue`) is refused before a byte is written, and the caller
//! serialises it with `serde_json` alone, so the text is the same either way.

use serde::Serialize;
use serde::ser::{self, Impossible, Serializer};
use serde_json::Error;

/// Writes `value` into `buffer` when it is a plain struct: `Ok(true)`. `Ok(false)`: it is
/// not, and nothing was written.
pub(super) fn write_struct<T: Serialize + ?Sized>(
    value: &T,
    buffer: &mut Vec<u8>,
) -> Result<bool, Error> {
    let mut refused = false;
    match value.serialize(TopLevel {
        buffer,
        refused: &mut refused,
    }) {
        Ok(()) => Ok(true),
        Err(_) if refused => Ok(false),
        Err(error) => Err(error),
    }
}

struct TopLevel<'a> {
    buffer: &'a mut Vec<u8>,
    refused: &'a mut bool,
}

impl TopLevel<'_> {
    fn refuse<T>(self) -> Result<T, Error> {
        *self.refused = true;
        Err(ser::Error::custom("not a plain struct"))
    }
}

/// One `fn` per `Serializer` method that refuses: all but `serialize_struct`.
macro_rules! refuse {
    ($($method:ident($($arg:ty),*) -> $ok:ty;)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<$ok, Error> {
            self.refuse()
        })*
    };
}

impl<'a> Serializer for TopLevel<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Fields<'a>;
    type SerializeStructVariant = Impossible<(), Error>;

    refuse! {
        serialize_bool(bool) -> ();
        serialize_i8(i8) -> ();
        serialize_i16(i16) -> ();
        serialize_i32(i32) -> ();
        serialize_i64(i64) -> ();
        serialize_i128(i128) -> ();
        serialize_u8(u8) -> ();
        serialize_u16(u16) -> ();
        serialize_u32(u32) -> ();
        serialize_u64(u64) -> ();
        serialize_u128(u128) -> ();
        serialize_f32(f32) -> ();
        serialize_f64(f64) -> ();
        serialize_char(char) -> ();
        serialize_str(&str) -> ();
        serialize_bytes(&[u8]) -> ();
        serialize_none() -> ();
        serialize_unit() -> ();
        serialize_unit_struct(&'static str) -> ();
        serialize_unit_variant(&'static str, u32, &'static str) -> ();
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), Error> {
        self.refuse()
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        self.refuse()
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        self.refuse()
    }

    fn serialize_struct(self, name: &'static str, _: usize) -> Result<Fields<'a>, Error> {
        // serde_json's private structs (`RawValue`, arbitrary-precision numbers) are
        // structs only in name: it writes them as what they stand for.
        if name.starts_with("$serde_json::") {
            return self.refuse();
        }
        self.buffer.push(b'{');
        Ok(Fields {
            buffer: self.buffer,
            first: true,
        })
    }
}

struct Fields<'a> {
    buffer: &'a mut Vec<u8>,
    first: bool,
}

/// What `serde_json` escapes in a string: `"`, `\` and the control characters below
/// U+0020. Everything else, UTF-8 included, it writes as it is.
///
/// Eight bytes at a time: a byte-by-byte scan cost as much as `serde_json`'s own, which
/// is what this module saves. Short names are read as overlapping words, so every byte is
/// tested once or twice and none is read past the end.
fn needs_escaping(name: &[u8]) -> bool {
    let word = |bytes: &[u8; 8]| special(u64::from_le_bytes(*bytes));
    let half = |bytes: &[u8; 4]| u64::from(u32::from_le_bytes(*bytes));
    if let Some(last) = name.last_chunk::<8>() {
        let mut rest = name;
        while let Some((chunk, tail)) = rest.split_first_chunk::<8>() {
            if word(chunk) {
                return true;
            }
            rest = tail;
        }
        word(last)
    } else if let (Some(first), Some(last)) = (name.first_chunk::<4>(), name.last_chunk::<4>()) {
        special(half(first) | (half(last) << 32))
    } else {
        // Up to three bytes: the first, the middle and the last are all of them.
        match (name.first(), name.get(name.len() / 2), name.last()) {
            (Some(&a), Some(&b), Some(&c)) => {
                special(u64::from_le_bytes([a, b, c, b'a', b'a', b'a', b'a', b'a']))
            }
            _ => false,
        }
    }
}

/// Whether any byte of `word` is below 0x20, `"` or `\`: the "has a byte less than"
/// test of Bit Twiddling Hacks, `(x - 0x01..01 * n) & !x & 0x80..80`, exact for n ≤ 128,
/// with `"` and `\` turned into zero bytes by an XOR first.
fn special(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    (below(word, 0x20) | below(quote, 1) | below(backslash, 1)) & HIGH != 0
}

impl ser::SerializeStruct for Fields<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        if !std::mem::take(&mut self.first) {
            self.buffer.push(b',');
        }
        if needs_escaping(name.as_bytes()) {
            serde_json::to_writer(&mut *self.buffer, name)?;
            self.buffer.push(b':');
        } else {
            self.buffer.push(b'"');
            self.buffer.extend_from_slice(name.as_bytes());
            self.buffer.extend_from_slice(b"\":");
        }
        write_value(value, self.buffer)
    }

    fn end(self) -> Result<(), Error> {
        self.buffer.push(b'}');
        Ok(())
    }
}

/// Writes one field's value: a scalar here (strings in one piece when they need no
/// escaping, everything else through `serde_json`'s own serializer), anything else by
/// `serde_json` alone. [`Scalar`] refuses a compound value before writing a byte, so the
/// fallback starts from a clean slate.
fn write_value<T: Serialize + ?Sized>(value: &T, buffer: &mut Vec<u8>) -> Result<(), Error> {
    match value.serialize(Scalar { buffer }) {
        Ok(()) => Ok(()),
        Err(ScalarError::Refused) => {
            value.serialize(&mut serde_json::Serializer::new(&mut *buffer))
        }
        Err(ScalarError::Json(error)) => Err(error),
    }
}

/// Why [`Scalar`] did not write a value. Its own type, not `serde_json::Error`, so that a
/// refusal allocates nothing.
#[derive(Debug)]
enum ScalarError {
    /// The value is a compound: nothing was written.
    Refused,
    /// The value's `Serialize` failed, as it would have with `serde_json`.
    Json(Error),
}

impl std::fmt::Display for ScalarError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScalarError::Refused => f.write_str("not a scalar"),
            ScalarError::Json(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for ScalarError {}

impl ser::Error for ScalarError {
    fn custom<M: std::fmt::Display>(message: M) -> Self {
        ScalarError::Json(<Error as ser::Error>::custom(message))
    }
}

/// A field value's serializer for scalars. Each method writes what `serde_json` writes:
/// by calling `serde_json`'s serializer, except for strings that need no escaping, which
/// `serde_json` would write byte for byte between quotes.
struct Scalar<'a> {
    buffer: &'a mut Vec<u8>,
}

/// One `fn` per scalar `Serializer` method, each handed to `serde_json`'s serializer.
macro_rules! through_serde_json {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {
        $(fn $method(self, $($arg: $ty),*) -> Result<(), ScalarError> {
            Serializer::$method(&mut serde_json::Serializer::new(self.buffer), $($arg),*)
                .map_err(ScalarError::Json)
        })*
    };
}

/// One `fn` per compound `Serializer` method: refused.
macro_rules! refuse_compound {
    ($($method:ident($($arg:ty),*) -> $ok:ty;)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<$ok, ScalarError> {
            Err(ScalarError::Refused)
        })*
    };
}

impl Serializer for Scalar<'_> {
    type Ok = ();
    type Error = ScalarError;
    type SerializeSeq = Impossible<(), ScalarError>;
    type SerializeTuple = Impossible<(), ScalarError>;
    type SerializeTupleStruct = Impossible<(), ScalarError>;
    type SerializeTupleVariant = Impossible<(), ScalarError>;
    type SerializeMap = Impossible<(), ScalarError>;
    type SerializeStruct = Impossible<(), ScalarError>;
    type SerializeStructVariant = Impossible<(), ScalarError>;

    through_serde_json! {
        serialize_bool(v: bool);
        serialize_i8(v: i8);
        serialize_i16(v: i16);
        serialize_i32(v: i32);
        serialize_i64(v: i64);
        serialize_i128(v: i128);
        serialize_u8(v: u8);
        serialize_u16(v: u16);
        serialize_u32(v: u32);
        serialize_u64(v: u64);
        serialize_u128(v: u128);
        serialize_f32(v: f32);
        serialize_f64(v: f64);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(name: &'static str);
    }

    refuse_compound! {
        serialize_bytes(&[u8]) -> ();
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct(&'static str, usize) -> Self::SerializeStruct;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }

    fn serialize_char(self, v: char) -> Result<(), ScalarError> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }

    fn serialize_str(self, v: &str) -> Result<(), ScalarError> {
        if needs_escaping(v.as_bytes()) {
            return Serializer::serialize_str(&mut serde_json::Serializer::new(self.buffer), v)
                .map_err(ScalarError::Json);
        }
        self.buffer.reserve(v.len() + 2);
        self.buffer.push(b'"');
        self.buffer.extend_from_slice(v.as_bytes());
        self.buffer.push(b'"');
        Ok(())
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), ScalarError> {
        self.serialize_str(variant)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), ScalarError> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), ScalarError> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), ScalarError> {
        Err(ScalarError::Refused)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Serialize;
    use serde_json::value::RawValue;

    use super::write_struct;

    /// What `write_struct` wrote, or `None` when it refused.
    fn flat<T: Serialize + ?Sized>(value: &T) -> Option<String> {
        let mut buffer = Vec::new();
        let written = write_struct(value, &mut buffer).unwrap();
        assert!(written || buffer.is_empty(), "a refusal wrote {buffer:?}");
        written.then(|| String::from_utf8(buffer).unwrap())
    }

    fn same_as_serde_json<T: Serialize + ?Sized>(value: &T) {
        assert_eq!(flat(value).unwrap(), serde_json::to_string(value).unwrap());
    }

    #[derive(Serialize)]
    struct Weather {
        phase: &'static str,
        city: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        temperature: Option<i64>,
        nested: Inner,
    }

    #[derive(Serialize)]
    struct Inner {
        list: Vec<f64>,
        map: BTreeMap<u32, bool>,
        raw: Box<RawValue>,
    }

    fn weather(temperature: Option<i64>) -> Weather {
        Weather {
            phase: "done",
            city: "Tōkyō \"東京\"\n".into(),
            temperature,
            nested: Inner {
                list: vec![1.5, -0.0, 1e300],
                map: BTreeMap::from([(1, true), (20, false)]),
                raw: RawValue::from_string(r#"{"a": [1, 2]}"#.into()).unwrap(),
            },
        }
    }

    #[test]
    fn a_struct_is_written_as_serde_json_writes_it() {
        same_as_serde_json(&weather(Some(24)));
        same_as_serde_json(&weather(None));
    }

    #[test]
    fn field_names_that_need_escaping_are_escaped_by_serde_json() {
        #[derive(Serialize)]
        struct Odd {
            #[serde(rename = "a\"b")]
            quote: u8,
            #[serde(rename = "back\\slash")]
            backslash: u8,
            #[serde(rename = "tab\there")]
            tab: u8,
            #[serde(rename = "\u{1}")]
            control: u8,
            #[serde(rename = "ünïcödé ✓")]
            unicode: u8,
            #[serde(rename = "")]
            empty: u8,
        }
        let odd = Odd {
            quote: 1,
            backslash: 2,
            tab: 3,
            control: 4,
            unicode: 5,
            empty: 6,
        };
        same_as_serde_json(&odd);
        assert!(flat(&odd).unwrap().contains(r#""a\"b":1"#));
    }

    #[test]
    fn the_word_test_agrees_with_the_byte_test() {
        let plain = |b: u8| !(b < 0x20 || b == b'"' || b == b'\\');
        for len in 0..=20 {
            for at in 0..len.max(1) {
                for byte in 0..=u8::MAX {
                    let mut name = vec![b'x'; len];
                    if len > 0 {
                        name[at] = byte;
                    }
                    let expected = !name.iter().all(|&b| plain(b));
                    assert_eq!(super::needs_escaping(&name), expected, "{len} {at} {byte}");
                }
            }
        }
    }

    #[test]
    fn every_kind_of_field_value_is_written_as_serde_json_writes_it() {
        #[derive(Serialize)]
        enum Phase {
            #[serde(rename = "in \"progress\"")]
            Quoted,
            Done,
            Wrapped(u8),
        }
        #[derive(Serialize)]
        struct Meters(f64);
        #[derive(Serialize)]
        struct Marker;
        #[derive(Serialize)]
        struct Scalars {
            plain: &'static str,
            escaped: &'static str,
            empty: &'static str,
            unicode: &'static str,
            control: &'static str,
            letter: char,
            quote: char,
            some: Option<&'static str>,
            none: Option<&'static str>,
            nested_some: Option<Option<u8>>,
            done: Phase,
            quoted: Phase,
            wrapped: Phase,
            meters: Meters,
            nan: f64,
            small: f32,
            big: u128,
            negative: i128,
            yes: bool,
            unit: (),
            marker: Marker,
            #[serde(with = "serde_bytes_like")]
            bytes: Vec<u8>,
            list: Vec<&'static str>,
        }
        mod serde_bytes_like {
            pub fn serialize<S: serde::Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(v)
            }
        }
        same_as_serde_json(&Scalars {
            plain: "Tokyo",
            escaped: "a \"b\" \\ c",
            empty: "",
            unicode: "Tōkyō 東京 ✓",
            control: "line\nbreak\u{1f}",
            letter: 'é',
            quote: '"',
            some: Some("celsius"),
            none: None,
            nested_some: Some(None),
            done: Phase::Done,
            quoted: Phase::Quoted,
            wrapped: Phase::Wrapped(3),
            meters: Meters(1.5),
            nan: f64::NAN,
            small: 0.1,
            big: u128::MAX,
            negative: i128::MIN,
            yes: true,
            unit: (),
            marker: Marker,
            bytes: vec![1, 2, 255],
            list: vec!["a", "b\"c"],
        });
    }

    #[test]
    fn a_scalar_that_fails_fails_with_its_own_message() {
        struct Refuses;
        impl Serialize for Refuses {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(&"fine")?;
                Err(serde::ser::Error::custom("scalar no"))
            }
        }
        #[derive(Serialize)]
        struct Holds {
            field: Refuses,
        }
        let mut buffer = Vec::new();
        let error = write_struct(&Holds { field: Refuses }, &mut buffer).unwrap_err();
        assert_eq!(
            error.to_string(),
            serde_json::to_string(&Holds { field: Refuses })
                .unwrap_err()
                .to_string()
        );
    }

    #[test]
    fn empty_and_skipped_structs_are_braces() {
        #[derive(Serialize)]
        struct Empty {}
        #[derive(Serialize)]
        struct AllSkipped {
            #[serde(skip_serializing_if = "Option::is_none")]
            a: Option<u8>,
        }
        same_as_serde_json(&Empty {});
        same_as_serde_json(&AllSkipped { a: None });
    }

    #[test]
    fn what_is_not_a_plain_struct_is_refused_before_writing() {
        #[derive(Serialize)]
        enum Phase {
            Done { at: u8 },
        }
        #[derive(Serialize)]
        struct Flattened {
            #[serde(flatten)]
            inner: BTreeMap<String, u8>,
        }
        #[derive(Serialize)]
        struct Unit;
        assert_eq!(flat(&serde_json::json!({"a": 1})), None);
        assert_eq!(flat(&Phase::Done { at: 1 }), None);
        assert_eq!(
            flat(&Flattened {
                inner: BTreeMap::new()
            }),
            None
        );
        assert_eq!(flat(&Unit), None);
        assert_eq!(flat("text"), None);
        assert_eq!(flat(&[1, 2]), None);
        assert_eq!(flat(&Some(1)), None);
        assert_eq!(flat(&*RawValue::from_string("{}".into()).unwrap()), None);
    }

    #[test]
    fn a_field_that_fails_fails_the_whole() {
        struct Refuses;
        impl Serialize for Refuses {
            fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(serde::ser::Error::custom("no"))
            }
        }
        #[derive(Serialize)]
        struct Holds {
            field: Refuses,
        }
        let mut buffer = Vec::new();
        let error = write_struct(&Holds { field: Refuses }, &mut buffer).unwrap_err();
        assert_eq!(error.to_string(), "no");
    }
}
