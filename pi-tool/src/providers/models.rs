//! pi-ai's built-in model registry (`builtinModels()`), and custom models on any base URL.
//!
//! The data is pi-ai 0.85.0's own, generated from the npm package by
//! `scripts/gen-models.mjs` into `models/builtin.json` and compiled in; nothing in it is
//! typed by hand. It holds the pi-ai providers whose every model speaks one of pi-tool's
//! three wire APIs: `anthropic`, `openai`, `groq`, `cerebras`, `deepseek`, `xai` and
//! `openrouter`. Each [`Model`] is exactly pi-ai's object: id, name, api, provider, base
//! URL, context window, output limit, reasoning flag, input kinds, prices per million
//! tokens (with tiers), `compat` switches and `thinkingLevelMap` where pi-ai has them.

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};

use crate::model::Model;

/// The generated data: a header (provenance, checksum) and `providers`, in pi-ai's order.
const BUILTIN_JSON: &str = include_str!("models/builtin.json");

/// pi-ai's built-in models, parsed once on first use (pi-ai's `builtinModels()`).
///
/// ```
/// use pi_tool::providers::builtin_models;
///
/// let model = builtin_models().get_model("anthropic", "claude-sonnet-4-5").unwrap();
/// assert_eq!(model.api, "anthropic-messages");
/// assert_eq!(model.base_url, "https://api.anthropic.com");
/// assert_eq!((model.cost.input, model.cost.output), (3.0, 15.0));
///
/// // A registry model runs through the provider router like any other:
/// // AgentOptions::new(pi_tool::providers::router()).model(model)
/// assert!(builtin_models().providers().any(|p| p == "openai"));
/// ```
#[doc(alias = "builtinModels")]
pub fn builtin_models() -> &'static ModelRegistry {
    static REGISTRY: OnceLock<ModelRegistry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        // The data is compiled in and a unit test parses it, so this cannot fail at
        // run time; it is not input from a user or a server.
        ModelRegistry::from_json(BUILTIN_JSON).expect("the generated model data parses")
    })
}

/// Models grouped by provider, in insertion order (pi-ai's `Models` collection, minus
/// authentication and refresh).
///
/// [`builtin_models`] is the built-in one; clone it (or start from
/// [`ModelRegistry::new`]) and [`insert`](ModelRegistry::insert) custom models to keep
/// them next to pi-ai's.
#[derive(Clone, Default)]
pub struct ModelRegistry {
    providers: Vec<ProviderModels>,
}

#[derive(Clone)]
struct ProviderModels {
    id: String,
    models: Vec<Model>,
    by_id: HashMap<String, usize>,
}

impl ProviderModels {
    fn new(id: String) -> Self {
        ProviderModels {
            id,
            models: Vec::new(),
            by_id: HashMap::new(),
        }
    }

    /// pi-ai's `createProvider` merge: a model with a known id replaces it in place.
    fn insert(&mut self, model: Model) -> Option<Model> {
        match self.by_id.get(&model.id) {
            Some(&index) => Some(std::mem::replace(&mut self.models[index], model)),
            None => {
                self.by_id.insert(model.id.clone(), self.models.len());
                self.models.push(model);
                None
            }
        }
    }
}

impl ModelRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        ModelRegistry::default()
    }

    /// The model `id` of `provider`, as a copy to adjust (pi-ai's `getModel`).
    ///
    /// ```
    /// let models = pi_tool::providers::builtin_models();
    /// let mini = models.get_model("openai", "gpt-5-mini").unwrap();
    /// assert_eq!(mini.api, "openai-responses");
    /// assert!(mini.reasoning);
    /// assert!(models.get_model("openai", "no-such-model").is_none());
    /// ```
    #[doc(alias = "getModel")]
    pub fn get_model(&self, provider: &str, id: &str) -> Option<Model> {
        self.model(provider, id).cloned()
    }

    /// The model `id` of `provider`, borrowed.
    pub fn model(&self, provider: &str, id: &str) -> Option<&Model> {
        let entry = self.provider(provider)?;
        entry.by_id.get(id).map(|&index| &entry.models[index])
    }

    /// The provider ids, in registration order (pi-ai's `getProviders`).
    #[doc(alias = "getProviders")]
    pub fn providers(&self) -> impl Iterator<Item = &str> {
        self.providers.iter().map(|p| p.id.as_str())
    }

    /// The models of `provider` in pi-ai's order; none for an unknown provider (pi-ai's
    /// `getModels(provider)`).
    ///
    /// ```
    /// let ids: Vec<&str> = pi_tool::providers::builtin_models()
    ///     .models("anthropic")
    ///     .map(|m| m.id.as_str())
    ///     .collect();
    /// assert!(ids.contains(&"claude-sonnet-4-5"));
    /// ```
    #[doc(alias = "getModels")]
    pub fn models(&self, provider: &str) -> impl Iterator<Item = &Model> {
        self.provider(provider)
            .into_iter()
            .flat_map(|p| p.models.iter())
    }

    /// Every model of every provider.
    pub fn all_models(&self) -> impl Iterator<Item = &Model> {
        self.providers.iter().flat_map(|p| p.models.iter())
    }

    /// Adds `model` under `model.provider`, replacing (and returning) the model of that
    /// provider with the same id.
    ///
    /// ```
    /// use pi_tool::model::Model;
    /// use pi_tool::providers::builtin_models;
    ///
    /// let mut models = builtin_models().clone();
    /// models.insert(Model::openai_compatible("http://127.0.0.1:8080/v1", "smol"));
    /// assert!(models.get_model("openai-compatible", "smol").is_some());
    /// ```
    pub fn insert(&mut self, model: Model) -> Option<Model> {
        let index = match self.providers.iter().position(|p| p.id == model.provider) {
            Some(index) => index,
            None => {
                self.providers
                    .push(ProviderModels::new(model.provider.clone()));
                self.providers.len() - 1
            }
        };
        self.providers[index].insert(model)
    }

    fn provider(&self, id: &str) -> Option<&ProviderModels> {
        self.providers.iter().find(|p| p.id == id)
    }

    fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        let file: BuiltinFile = serde_json::from_str(text)?;
        let mut registry = ModelRegistry::new();
        for (id, models) in file.providers.0 {
            let mut entry = ProviderModels::new(id);
            for model in models {
                entry.insert(model);
            }
            registry.providers.push(entry);
        }
        Ok(registry)
    }
}

impl fmt::Debug for ModelRegistry {
    // Hundreds of models: show how many each provider has, not all of them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.providers.iter().map(|p| (&p.id, p.models.len())))
            .finish()
    }
}

#[derive(Deserialize)]
struct BuiltinFile {
    providers: OrderedProviders,
}

/// `{"provider": [models...], ...}` in the file's order (a map type would lose it).
struct OrderedProviders(Vec<(String, Vec<Model>)>);

impl<'de> Deserialize<'de> for OrderedProviders {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Ordered;
        impl<'de> Visitor<'de> for Ordered {
            type Value = OrderedProviders;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map from provider id to its models")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut providers = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    providers.push(entry);
                }
                Ok(OrderedProviders(providers))
            }
        }
        deserializer.deserialize_map(Ordered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ModelCost, ModelCostTier};

    #[test]
    fn the_data_parses_with_every_provider_in_pi_ais_order() {
        let registry = ModelRegistry::from_json(BUILTIN_JSON).unwrap();
        let providers: Vec<&str> = registry.providers().collect();
        assert_eq!(
            providers,
            [
                "anthropic",
                "cerebras",
                "deepseek",
                "groq",
                "openai",
                "openrouter",
                "xai"
            ]
        );
        for provider in &providers {
            assert!(registry.models(provider).count() > 0, "{provider}");
            for model in registry.models(provider) {
                assert_eq!(model.provider, *provider);
                assert!(
                    [
                        "anthropic-messages",
                        "openai-completions",
                        "openai-responses"
                    ]
                    .contains(&model.api.as_str()),
                    "{}: {}",
                    model.id,
                    model.api
                );
                assert!(
                    model.context_window > 0 && model.max_tokens > 0,
                    "{}",
                    model.id
                );
                assert!(!model.base_url.is_empty(), "{}", model.id);
            }
        }
    }

    #[test]
    fn claude_sonnet_4_5_is_pi_ais() {
        let model = builtin_models()
            .get_model("anthropic", "claude-sonnet-4-5")
            .unwrap();
        assert_eq!(model.id, "claude-sonnet-4-5");
        assert_eq!(model.name, "Claude Sonnet 4.5 (latest)");
        assert_eq!(model.api, "anthropic-messages");
        assert_eq!(model.provider, "anthropic");
        assert_eq!(model.base_url, "https://api.anthropic.com");
        assert!(model.reasoning);
        assert_eq!(model.input, ["text", "image"]);
        assert_eq!(model.cost, ModelCost::new(3.0, 15.0, 0.3, 3.75));
        // pi-ai 0.85.0's data gives the 1M window (Anthropic's long-context beta is GA).
        assert_eq!(model.context_window, 1_000_000);
        assert_eq!(model.max_tokens, 64_000);
        assert_eq!(
            model.compat,
            Some(serde_json::json!({"supportsStrictTools": true}))
        );
        assert_eq!(model.thinking_level_map, None);
        assert_eq!(model.headers, None);
    }

    #[test]
    fn gpt_4o_mini_and_gpt_5_mini_are_pi_ais() {
        let models = builtin_models();
        let mini = models.get_model("openai", "gpt-4o-mini").unwrap();
        assert_eq!(mini.name, "GPT-4o mini");
        assert_eq!(mini.api, "openai-responses");
        assert_eq!(mini.base_url, "https://api.openai.com/v1");
        assert!(!mini.reasoning);
        assert_eq!((mini.context_window, mini.max_tokens), (128_000, 16_384));
        assert_eq!(
            (
                mini.cost.input,
                mini.cost.output,
                mini.cost.cache_read,
                mini.cost.cache_write
            ),
            (0.15, 0.6, 0.075, 0.0)
        );
        assert_eq!(
            mini.compat,
            Some(serde_json::json!({"supportsStrictMode": true}))
        );

        let five = models.get_model("openai", "gpt-5-mini").unwrap();
        assert_eq!(five.name, "GPT-5 Mini");
        assert!(five.reasoning);
        assert_eq!((five.context_window, five.max_tokens), (400_000, 128_000));
        assert_eq!((five.cost.input, five.cost.output), (0.25, 2.0));
        assert_eq!(five.cost.cache_read, 0.025);
        // Key order and the `null`s that mark unsupported levels survive.
        assert_eq!(
            serde_json::to_string(&five.thinking_level_map).unwrap(),
            r#"{"off":null,"minimal":"minimal","low":"low","medium":"medium","high":"high","xhigh":null,"max":null}"#
        );
    }

    #[test]
    fn price_tiers_come_through() {
        let model = builtin_models().get_model("openai", "gpt-5.4").unwrap();
        assert_eq!(
            model.cost.tiers,
            Some(vec![ModelCostTier::new(272_000, 5.0, 22.5, 0.5, 0.0)])
        );
    }

    #[test]
    fn openrouter_and_the_completions_providers_are_there() {
        let models = builtin_models();
        let groq: Vec<&Model> = models.models("groq").collect();
        assert!(groq.iter().all(
            |m| m.api == "openai-completions" && m.base_url == "https://api.groq.com/openai/v1"
        ));
        let apis: std::collections::BTreeSet<&str> = models
            .models("openrouter")
            .map(|m| m.api.as_str())
            .collect();
        assert_eq!(
            apis.into_iter().collect::<Vec<_>>(),
            ["anthropic-messages", "openai-completions"]
        );
        assert!(models.models("mistral").next().is_none());
        assert!(models.get_model("nope", "claude-sonnet-4-5").is_none());
    }

    #[test]
    fn a_custom_model_replaces_one_with_the_same_id() {
        let mut models = builtin_models().clone();
        let before = models.models("anthropic").count();
        let mut custom = models.get_model("anthropic", "claude-sonnet-4-5").unwrap();
        custom.base_url = "http://127.0.0.1:9/proxy".to_owned();
        let old = models.insert(custom).unwrap();
        assert_eq!(old.base_url, "https://api.anthropic.com");
        assert_eq!(models.models("anthropic").count(), before);
        assert_eq!(
            models
                .model("anthropic", "claude-sonnet-4-5")
                .unwrap()
                .base_url,
            "http://127.0.0.1:9/proxy"
        );
        // The built-in registry is untouched.
        assert_eq!(
            builtin_models()
                .model("anthropic", "claude-sonnet-4-5")
                .unwrap()
                .base_url,
            "https://api.anthropic.com"
        );

        assert!(
            models
                .insert(Model::openai_compatible("http://h/v1", "m"))
                .is_none()
        );
        assert_eq!(models.providers().last(), Some("openai-compatible"));
        assert_eq!(
            format!("{models:?}").matches("openai-compatible").count(),
            1
        );
    }

    #[test]
    fn custom_models_get_pis_models_json_defaults() {
        let model = Model::openai_compatible("http://127.0.0.1:8080/v1", "smol");
        assert_eq!(model.id, "smol");
        assert_eq!(model.name, "smol");
        assert_eq!(model.api, "openai-completions");
        assert_eq!(model.provider, "openai-compatible");
        assert!(!model.reasoning);
        assert_eq!(model.input, ["text"]);
        assert_eq!(model.cost, ModelCost::default());
        assert_eq!((model.context_window, model.max_tokens), (128_000, 16_384));
        assert!(model.compat.is_none() && model.headers.is_none());
    }

    /// FNV-1a 64, as `scripts/gen-models.mjs` computes it.
    fn fnv1a64(bytes: &[u8]) -> u64 {
        bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
            (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    }

    #[test]
    fn the_checked_in_data_is_unedited_generator_output() {
        let body_start = BUILTIN_JSON.find("\n\"providers\":{\n").unwrap() + 1;
        let header: serde_json::Value =
            serde_json::from_str(&format!("{}\"x\":0}}", &BUILTIN_JSON[..body_start])).unwrap();
        assert_eq!(header["source"], "@earendil-works/pi-ai 0.85.0");
        assert_eq!(
            header["fnv1a64"].as_str().unwrap(),
            format!("{:016x}", fnv1a64(&BUILTIN_JSON.as_bytes()[body_start..])),
            "models/builtin.json was edited by hand: regenerate it with scripts/gen-models.mjs"
        );
    }

    /// With Node and pi-ai 0.85.0 installed, the generator's output today must be the
    /// checked-in file byte for byte. `.ci/run` makes the same comparison after the tests
    /// (when the Pi bridge's tests have installed pi-ai), so CI never skips it.
    #[test]
    fn the_generator_reproduces_the_checked_in_data() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let candidates = [
            std::env::var_os("PI_AI_PACKAGE_DIR").map(std::path::PathBuf::from),
            Some(root.join("bridges/pi/node_modules/@earendil-works/pi-ai")),
            Some(root.join("bench/node_modules/@earendil-works/pi-ai")),
        ];
        // The bridge's tests reinstall its packages (`npm ci` deletes node_modules first)
        // under an exclusive flock on its package-lock.json; a shared one keeps them in
        // place while Node reads them.
        let _lock = shared_lock(&root.join("bridges/pi/package-lock.json"));
        let is_085 = |dir: &std::path::Path| {
            std::fs::read_to_string(dir.join("package.json"))
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                .is_some_and(|p| p["version"] == "0.85.0")
        };
        let Some(dir) = candidates.into_iter().flatten().find(|d| is_085(d)) else {
            eprintln!(
                "skipped: no @earendil-works/pi-ai 0.85.0 found (set PI_AI_PACKAGE_DIR); \
                 the checksum test still ran"
            );
            return;
        };
        let script = root.join("scripts/gen-models.mjs");
        let output = match std::process::Command::new("node")
            .arg(&script)
            .arg(&dir)
            .arg("--stdout")
            .output()
        {
            Ok(output) => output,
            Err(e) => {
                eprintln!("skipped: cannot run node ({e}); the checksum test still ran");
                return;
            }
        };
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            output.stdout == BUILTIN_JSON.as_bytes(),
            "models/builtin.json differs from `node scripts/gen-models.mjs {}`: regenerate it",
            dir.display()
        );
    }

    /// A shared `flock` on `path`, held while the returned file lives (Unix; elsewhere
    /// nothing). None when the file cannot be opened (no bridge packages to protect).
    fn shared_lock(path: &std::path::Path) -> Option<std::fs::File> {
        let file = std::fs::File::open(path).ok()?;
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: `flock` on a descriptor that `file` owns and keeps open.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH) } != 0 {
                return None;
            }
        }
        Some(file)
    }
}
