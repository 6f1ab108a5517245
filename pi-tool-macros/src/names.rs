//! Name helpers: the generated struct's name, the default label, and "did you mean".

/// `get_weather` -> `GetWeather` (raw identifiers lose their `r#`).
pub fn upper_camel(ident: &str) -> String {
    let ident = ident.strip_prefix("r#").unwrap_or(ident);
    let mut out = String::with_capacity(ident.len());
    let mut upper = true;
    for c in ident.chars() {
        if c == '_' || c == '-' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    if out.is_empty() {
        // `_` alone: keep a valid identifier.
        out.push_str("Tool");
    }
    out
}

/// `WordCount` -> `word_count`: a type's name as a field's.
pub fn snake(ident: &str) -> String {
    let mut out = String::new();
    for (i, c) in ident.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The default label: `get_weather` -> `Get weather`, `getWeather` -> `Get weather`.
pub fn humanise(name: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c == '_' || c == '-' {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        current.push(c);
    }
    if !current.is_empty() {
        words.push(current);
    }
    let mut label = String::new();
    for (i, word) in words.iter().enumerate() {
        // A camelCase word (`Weather`) reads lower-case mid-sentence; an acronym (`HTTP`)
        // keeps its case.
        let is_acronym = word.chars().filter(|c| c.is_uppercase()).count() > 1;
        let word = if is_acronym {
            word.clone()
        } else {
            word.to_lowercase()
        };
        if i == 0 {
            let mut chars = word.chars();
            if let Some(first) = chars.next() {
                label.extend(first.to_uppercase());
                label.push_str(chars.as_str());
            }
        } else {
            label.push(' ');
            label.push_str(&word);
        }
    }
    label
}

/// The closest candidate within a small edit distance, for "did you mean".
pub fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let word = word.to_lowercase();
    candidates
        .iter()
        .map(|c| (levenshtein(&word, c), *c))
        .filter(|(d, c)| *d <= (c.len() / 3).max(2) || is_abbreviation(&word, c))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// `exec_mode` for `execution_mode`: same start, letters in order.
fn is_abbreviation(word: &str, candidate: &str) -> bool {
    if word.len() < 3 || word.chars().next() != candidate.chars().next() {
        return false;
    }
    let mut rest = candidate.chars();
    word.chars().all(|w| rest.any(|c| c == w))
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// A suggestion for an invalid tool name: the core's repair, cut to 64 characters.
pub fn sanitise(name: &str) -> String {
    let mut out = crate::tool_name_repair::repair(name);
    out.truncate(64); // ASCII only after the repair
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_names_and_labels() {
        assert_eq!(upper_camel("get_weather"), "GetWeather");
        assert_eq!(upper_camel("r#type"), "Type");
        assert_eq!(humanise("get_weather"), "Get weather");
        assert_eq!(humanise("getWeather"), "Get weather");
        assert_eq!(humanise("fetch_HTTP_status"), "Fetch HTTP status");
        assert_eq!(humanise("read-file"), "Read file");
    }

    #[test]
    fn suggestions() {
        assert_eq!(
            closest("paralel", &["sequential", "parallel"]),
            Some("parallel")
        );
        assert_eq!(
            closest("descripton", &["name", "description"]),
            Some("description")
        );
        assert_eq!(closest("zzzzzz", &["name", "label"]), None);
        assert_eq!(
            closest("exec_mode", &["name", "execution_mode"]),
            Some("execution_mode")
        );
        assert_eq!(closest("colour", &["name", "label", "timeout"]), None);
        assert_eq!(sanitise("get weather!"), "get_weather_");
    }
}
