//! Scalars for the generator (`generate`): numbers within their bounds, strings
//! within their lengths, in their format or matching their pattern.

use serde_json::{Map, Number, Value, json};

/// The longest string the generator builds (`minLength` asking for more is refused).
const MAX_STRING_CHARS: usize = 100_000;

/// Option `choice` of `n`.
pub(super) fn pick(choice: usize, n: usize) -> usize {
    if n == 0 { 0 } else { choice % n }
}

/// A value for a schema that says nothing: a string, a number, a boolean, `null`, an
/// object, an array, in turn.
pub(super) fn any_value(choice: usize) -> Value {
    match choice % 6 {
        0 => json!("sample"),
        1 => json!(1),
        2 => json!(true),
        3 => Value::Null,
        4 => json!({"key": "value"}),
        _ => json!(["item"]),
    }
}

/// A bound as `f64` (`minimum`, `exclusiveMinimum` ...).
fn bound(object: &Map<String, Value>, key: &str) -> Option<f64> {
    object
        .get(key)
        .and_then(Value::as_f64)
        .filter(|b| b.is_finite())
}

pub(super) fn integer(object: &Map<String, Value>, choice: usize) -> Result<Value, String> {
    let lo = match (bound(object, "minimum"), bound(object, "exclusiveMinimum")) {
        (Some(a), Some(b)) => Some(a.ceil().max(b.floor() + 1.0)),
        (Some(a), None) => Some(a.ceil()),
        (None, Some(b)) => Some(b.floor() + 1.0),
        (None, None) => None,
    };
    let hi = match (bound(object, "maximum"), bound(object, "exclusiveMaximum")) {
        (Some(a), Some(b)) => Some(a.floor().min(b.ceil() - 1.0)),
        (Some(a), None) => Some(a.floor()),
        (None, Some(b)) => Some(b.ceil() - 1.0),
        (None, None) => None,
    };
    let candidates: [f64; 3] = match (lo, hi) {
        (Some(lo), Some(hi)) => [lo, hi, ((lo + hi) / 2.0).floor()],
        (Some(lo), None) => [lo, lo + 1.0, lo + 10.0],
        (None, Some(hi)) => [hi, hi - 1.0, hi - 10.0],
        (None, None) => [1.0, 0.0, -7.0],
    };
    let mut value = candidates[pick(choice, 3)];
    if let Some(step) = bound(object, "multipleOf").filter(|s| *s > 0.0) {
        value = (value / step).ceil() * step;
        if hi.is_some_and(|hi| value > hi) {
            value -= step;
        }
    }
    if let (Some(lo), Some(hi)) = (lo, hi)
        && (lo > hi || value < lo || value > hi)
    {
        return Err(format!("no integer between {lo} and {hi}"));
    }
    Ok(int_value(value))
}

/// An integral `f64` as a JSON integer when it fits one.
fn int_value(value: f64) -> Value {
    if value >= i64::MIN as f64 && value < i64::MAX as f64 {
        Value::Number(Number::from(value as i64))
    } else if value >= 0.0 && value < u64::MAX as f64 {
        Value::Number(Number::from(value as u64))
    } else {
        Number::from_f64(value).map_or(Value::Null, Value::Number)
    }
}

pub(super) fn number(object: &Map<String, Value>, choice: usize) -> Result<Value, String> {
    let min = bound(object, "minimum");
    let max = bound(object, "maximum");
    let xmin = bound(object, "exclusiveMinimum");
    let xmax = bound(object, "exclusiveMaximum");
    let lo = min.or(xmin);
    let hi = max.or(xmax);
    let candidates: [f64; 3] = match (lo, hi) {
        (Some(lo), Some(hi)) => {
            let span = hi - lo;
            [
                if xmin.is_some() { lo + span / 4.0 } else { lo },
                if xmax.is_some() { hi - span / 4.0 } else { hi },
                lo + span / 2.0,
            ]
        }
        (Some(lo), None) => {
            let first = if xmin.is_some() { lo + 0.5 } else { lo };
            [first, lo + 1.5, lo + 10.25]
        }
        (None, Some(hi)) => {
            let first = if xmax.is_some() { hi - 0.5 } else { hi };
            [first, hi - 1.5, hi - 10.25]
        }
        (None, None) => [1.5, 0.0, -2.25],
    };
    let mut value = candidates[pick(choice, 3)];
    if let Some(step) = bound(object, "multipleOf").filter(|s| *s > 0.0) {
        value = (value / step).ceil() * step;
    }
    if value.fract() == 0.0 && value.abs() < 1e15 {
        // Integral: write it as an integer, so integer-typed serde fields take it too.
        return Ok(int_value(value));
    }
    Number::from_f64(value)
        .map(Value::Number)
        .ok_or_else(|| format!("no finite number for bounds {lo:?}..{hi:?}"))
}

/// Examples of the formats serde types and validators check, parseable by the usual
/// Rust types (`chrono`, `uuid`, `std::net`, `url`).
fn format_examples(format: &str) -> Option<&'static [&'static str]> {
    Some(match format {
        "date-time" => &["2024-05-06T07:08:09Z", "2024-12-31T23:59:58.5+01:00"],
        "date" => &["2024-05-06", "2023-12-31"],
        "time" => &["07:08:09Z", "23:59:58.5+01:00"],
        "partial-date-time" => &["2024-05-06T07:08:09", "2023-12-31T23:59:58.5"],
        "partial-time" => &["07:08:09", "23:59:58.5"],
        "duration" => &["P1D", "PT1H30M"],
        "email" | "idn-email" => &["user@example.com", "first.last@example.org"],
        "hostname" | "idn-hostname" => &["example.com", "host-1.example.org"],
        "ipv4" => &["192.0.2.1", "127.0.0.1"],
        "ipv6" => &["2001:db8::1", "::1"],
        "ip" => &["192.0.2.1", "2001:db8::1"],
        "uri" | "url" | "iri" => &["https://example.com/path", "https://example.org/a?b=c"],
        "uri-reference" | "iri-reference" => &["/path", "https://example.com/path"],
        "uri-template" => &["https://example.com/{id}", "/items/{item}"],
        "uuid" => &[
            "67e55044-10b1-426f-9247-bb680e5fe0c8",
            "123e4567-e89b-12d3-a456-426614174000",
        ],
        "json-pointer" => &["/a/b", ""],
        "relative-json-pointer" => &["0/a", "1"],
        "regex" => &["^[a-z]+$", "a.c"],
        "byte" => &["aGVsbG8=", ""],
        "char" => &["a", "z"],
        _ => return None,
    })
}

pub(super) fn string(object: &Map<String, Value>, choice: usize) -> Result<Value, String> {
    let min = object.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    if min > MAX_STRING_CHARS {
        return Err(format!(
            "a string of at least {min} characters is more than the generator builds"
        ));
    }
    let max = object
        .get("maxLength")
        .and_then(Value::as_u64)
        .map(|m| m as usize);
    if let Some(examples) = object
        .get("format")
        .and_then(Value::as_str)
        .and_then(format_examples)
    {
        let fits =
            |s: &&str| s.chars().count() >= min && max.is_none_or(|m| s.chars().count() <= m);
        let fitting: Vec<&str> = examples.iter().copied().filter(|s| fits(s)).collect();
        if !fitting.is_empty() {
            return Ok(json!(fitting[pick(choice, fitting.len())]));
        }
    }
    if let Some(pattern) = object.get("pattern").and_then(Value::as_str) {
        return super::pattern::example(pattern, choice, min, max).map(Value::String);
    }
    let len = match choice % 3 {
        0 => 6,
        1 => min,
        _ => min.max(24),
    };
    let len = len.max(min).min(max.unwrap_or(usize::MAX));
    if max.is_some_and(|m| m < min) {
        return Err(format!("no string of {min} to {max:?} characters"));
    }
    Ok(Value::String(filler(len)))
}

/// `len` characters of readable ASCII.
fn filler(len: usize) -> String {
    "sample".chars().cycle().take(len).collect()
}
