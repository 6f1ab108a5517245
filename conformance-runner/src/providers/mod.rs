//! The provider conformance harness (`conformance/providers/`, issue 9 §2): each fixture's
//! recorded SSE response is served from a local HTTP server, pi-tool's
//! [`Providers`](pi_tool::providers::Providers) is called with the fixture's model,
//! context and options, and the request it sent plus every event it emitted is written
//! in `FORMAT.md`'s canonical form, to be compared byte for byte with pi-ai 0.85.0's
//! recording.
//!
//! Fixtures are data: a new `fixtures/<api>/<name>.json` runs without code changes.
//! Deliberate differences are listed in `differences.json` and compared with pi-tool's
//! own recording in `expected-pi-tool/`.

pub mod fixture;
pub mod normalise;
pub mod run;
pub mod server;

pub use fixture::{DEFAULT_API_KEY, Fixture, fixture_files};
pub use run::{
    FixtureOutput, FixtureVerdict, check_fixture, differences, judge, repo_providers_dir,
    run_fixture,
};

/// Whether the recorder deletes this environment variable before loading pi-ai
/// (FORMAT.md §1.3): provider and proxy settings that could change a request.
pub fn is_scrubbed_variable(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    [
        "PI_",
        "OPENAI_",
        "ANTHROPIC_",
        "AZURE_",
        "GEMINI_",
        "GOOGLE_",
    ]
    .iter()
    .any(|p| upper.starts_with(p))
        || upper.ends_with("_PROXY")
}

/// Deletes the variables [`is_scrubbed_variable`] names, as the recorder does.
///
/// # Safety
///
/// Changes the process environment: call it before any other thread exists (at the top
/// of `main`, or in a test binary's only test before it starts a runtime).
pub unsafe fn scrub_environment() {
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(is_scrubbed_variable) {
            // SAFETY: the caller guarantees no other thread reads the environment now.
            unsafe { std::env::remove_var(&name) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canon::ecma_canonical_json;

    /// The canonical writer is the recorder's: every recording (and every fixture, which
    /// is written the same way) parses and re-writes to its own bytes (FORMAT.md §3).
    #[test]
    fn canonical_writer_reproduces_every_recording() {
        let dir = repo_providers_dir();
        let mut count = 0;
        for sub in ["expected", "fixtures", "expected-pi-tool"] {
            for file in fixture_files(&dir.join(sub)) {
                let text = std::fs::read_to_string(&file).unwrap();
                let value: serde_json::Value = serde_json::from_str(&text).unwrap();
                assert!(
                    ecma_canonical_json(&value) == text,
                    "{} does not round-trip through the canonical writer",
                    file.display()
                );
                count += 1;
            }
        }
        assert!(count >= 90, "only {count} files checked");
    }

    #[test]
    fn scrubbed_variables_are_the_recorders() {
        for name in [
            "PI_CACHE_RETENTION",
            "openai_api_key",
            "ANTHROPIC_BASE_URL",
            "https_proxy",
            "NO_PROXY",
        ] {
            assert!(is_scrubbed_variable(name), "{name}");
        }
        for name in ["PATH", "HOME", "PIPE", "OPENAI", "CARGO_HOME"] {
            assert!(!is_scrubbed_variable(name), "{name}");
        }
    }
}
