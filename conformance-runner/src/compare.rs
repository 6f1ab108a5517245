//! Byte comparison with a readable report (FORMAT.md §8).

use serde_json::Value;

/// `None` if identical, else a short report: the first differing JSON path with both
/// values, and the first differing line.
pub fn diff(expected: &str, actual: &str) -> Option<String> {
    if expected == actual {
        return None;
    }
    let mut report = String::new();
    if let (Ok(e), Ok(a)) = (
        serde_json::from_str::<Value>(expected),
        serde_json::from_str::<Value>(actual),
    ) && let Some((path, ev, av)) = first_difference(&e, &a, String::new())
    {
        report.push_str(&format!(
            "  first difference at {}:\n    expected: {}\n    actual:   {}\n",
            if path.is_empty() { "/" } else { &path },
            short(ev),
            short(av)
        ));
    }
    for (n, (e, a)) in expected.lines().zip(actual.lines()).enumerate() {
        if e != a {
            report.push_str(&format!(
                "  first differing line {}:\n    expected: {}\n    actual:   {}\n",
                n + 1,
                e.trim(),
                a.trim()
            ));
            break;
        }
    }
    let (el, al) = (expected.lines().count(), actual.lines().count());
    if el != al {
        report.push_str(&format!("  line counts: expected {el}, actual {al}\n"));
    }
    Some(report)
}

fn short(v: Option<&Value>) -> String {
    match v {
        None => "(absent)".to_owned(),
        Some(v) => {
            let s = serde_json::to_string(v).unwrap_or_default();
            if s.chars().count() > 300 {
                format!("{}…", s.chars().take(300).collect::<String>())
            } else {
                s
            }
        }
    }
}

fn first_difference<'a>(
    e: &'a Value,
    a: &'a Value,
    path: String,
) -> Option<(String, Option<&'a Value>, Option<&'a Value>)> {
    match (e, a) {
        (Value::Object(eo), Value::Object(ao)) => {
            let mut keys: Vec<&String> = eo.keys().chain(ao.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = format!("{path}/{k}");
                match (eo.get(k), ao.get(k)) {
                    (Some(x), Some(y)) => {
                        if let Some(d) = first_difference(x, y, p) {
                            return Some(d);
                        }
                    }
                    (x, y) => return Some((p, x, y)),
                }
            }
            None
        }
        (Value::Array(ea), Value::Array(aa)) => {
            for i in 0..ea.len().max(aa.len()) {
                let p = format!("{path}/{i}");
                match (ea.get(i), aa.get(i)) {
                    (Some(x), Some(y)) => {
                        if let Some(d) = first_difference(x, y, p) {
                            return Some(d);
                        }
                    }
                    (x, y) => return Some((p, x, y)),
                }
            }
            None
        }
        _ if e == a => None,
        _ => Some((path, Some(e), Some(a))),
    }
}
