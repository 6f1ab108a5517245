//! The request headers, merged as pi-ai and the Anthropic SDK merge them.
//!
//! pi-ai builds the client's `defaultHeaders` with `Object.assign` over plain objects
//! (keys compared case-sensitively, a replaced key keeps its first position); the SDK then
//! applies its own headers, the auth header, those defaults, the body's content type and
//! the request's `anthropic-beta` in that order, case-insensitively, a later source
//! replacing an earlier one and a `null` value removing the header.

use crate::model::{ApiKey, Model};

/// A header source: names as given, `None` removes.
pub(super) type HeaderSource = Vec<(String, Option<String>)>;

/// `Object.assign({}, ...sources)`: a key replaces the same key (exact case) in place.
pub(super) fn assign(sources: &[HeaderSource]) -> HeaderSource {
    let mut merged: HeaderSource = Vec::new();
    for source in sources {
        for (name, value) in source {
            match merged.iter_mut().find(|(n, _)| n == name) {
                Some(slot) => slot.1 = value.clone(),
                None => merged.push((name.clone(), value.clone())),
            }
        }
    }
    merged
}

/// The SDK's `buildHeaders`: case-insensitive, later wins, `None` removes. Names come out
/// lower-cased (HTTP/1.1 headers are case-insensitive; the SDK's `Headers` lower-cases too).
pub(super) fn build(sources: &[HeaderSource]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for source in sources {
        for (name, value) in source {
            let lower = name.to_ascii_lowercase();
            out.retain(|(n, _)| *n != lower);
            if let Some(value) = value {
                out.push((lower, value.clone()));
            }
        }
    }
    out
}

fn pair(name: &str, value: &str) -> (String, Option<String>) {
    (name.to_owned(), Some(value.to_owned()))
}

/// How the request authenticates.
#[derive(Clone)]
pub(super) enum Auth {
    /// `x-api-key`.
    ApiKey(ApiKey),
    /// `Authorization: Bearer` (OAuth tokens, GitHub Copilot).
    Bearer(ApiKey),
    /// Neither: a caller header carries the credentials.
    None,
}

/// The inputs of `createClient` and the SDK's header assembly.
pub(super) struct HeaderInputs<'a> {
    pub(super) model: &'a Model,
    pub(super) auth: &'a Auth,
    pub(super) oauth: bool,
    pub(super) user_agent: String,
    pub(super) session_affinity: Option<&'a str>,
    pub(super) copilot: HeaderSource,
    pub(super) options_headers: HeaderSource,
    /// `betas` joined by `,`, when there are any.
    pub(super) betas: Option<String>,
}

/// The headers of the request, in the order the SDK builds them.
pub(super) fn request_headers(inputs: &HeaderInputs<'_>) -> Vec<(String, String)> {
    let sdk_defaults: HeaderSource = vec![
        pair("Accept", "application/json"),
        pair("User-Agent", "Anthropic/JS 0.123.0"),
        pair("anthropic-dangerous-direct-browser-access", "true"),
        pair("anthropic-version", "2023-06-01"),
    ];
    let auth: HeaderSource = match inputs.auth {
        Auth::ApiKey(key) => vec![pair("X-Api-Key", key.expose())],
        Auth::Bearer(key) => vec![pair("Authorization", &format!("Bearer {}", key.expose()))],
        Auth::None => Vec::new(),
    };
    let model_headers: HeaderSource = inputs
        .model
        .headers
        .iter()
        .flatten()
        .map(|(n, v)| (n.clone(), Some(v.clone())))
        .collect();
    let mut base = vec![
        pair("accept", "application/json"),
        pair("anthropic-dangerous-direct-browser-access", "true"),
    ];
    let mut sources = vec![vec![pair("User-Agent", &inputs.user_agent)]];
    if inputs.model.provider == "github-copilot" {
        sources.push(base);
        sources.push(model_headers);
        sources.push(inputs.copilot.clone());
    } else if inputs.oauth {
        base.push(pair("user-agent", "claude-cli/2.1.251"));
        base.push(pair("x-app", "cli"));
        sources.push(base);
        sources.push(model_headers);
    } else {
        sources.push(base);
        if let Some(session) = inputs.session_affinity {
            sources.push(vec![pair("x-session-affinity", session)]);
        }
        sources.push(model_headers);
    }
    sources.push(inputs.options_headers.clone());
    let client_defaults = assign(&sources);
    let body_headers = vec![pair("content-type", "application/json")];
    let request: HeaderSource = inputs
        .betas
        .iter()
        .map(|betas| pair("anthropic-beta", betas))
        .collect();
    build(&[sdk_defaults, auth, client_defaults, body_headers, request])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(pairs: &[(&str, Option<&str>)]) -> HeaderSource {
        pairs
            .iter()
            .map(|(n, v)| ((*n).to_owned(), v.map(str::to_owned)))
            .collect()
    }

    #[test]
    fn a_later_source_wins_whatever_the_case_and_none_removes() {
        let headers = build(&[
            src(&[("User-Agent", Some("a")), ("X-Drop", Some("x"))]),
            src(&[("user-agent", Some("b")), ("x-drop", None)]),
        ]);
        assert_eq!(headers, [("user-agent".to_owned(), "b".to_owned())]);
    }

    #[test]
    fn object_assign_keeps_the_first_position_of_a_replaced_key() {
        // pi-ai's quirk: the options' "User-Agent" replaces pi's key in place, so a
        // model header "user-agent" (a different key) comes later and wins.
        let merged = assign(&[
            src(&[("User-Agent", Some("pi"))]),
            src(&[("user-agent", Some("model"))]),
            src(&[("User-Agent", Some("options"))]),
        ]);
        assert_eq!(build(&[merged])[0].1, "model");
    }
}
