//! Provider profiles on the catalogue: snapshots, rule re-checks, expected rejections,
//! reverse mapping, tool-list exports and `assert_portable`.

mod common;

use common::catalogue::{self, *};
use common::snapshot;
use pi_tool::ToolInvocation;
use pi_tool::profiles::{
    self, ApiShape, Profile, assert_portable, export, portability_report, verify,
};
use pi_tool::schema::ToolSchema;
use pi_tool::schema::normalize;
use pi_tool::{JsonSchema, ToolSpec};
use serde_json::{Map, Value, json};

fn normalized(raw: Value) -> Value {
    normalize(raw)
        .map(|n| n.schema)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn canonical<T: JsonSchema>() -> Value {
    normalized(pi_tool::schema::generate::<T>())
}

fn spec<T: JsonSchema + 'static>(name: &str) -> ToolSpec {
    ToolSpec::new(
        name,
        format!("The {name} tool."),
        ToolSchema::for_type::<T>(),
    )
}

#[test]
fn catalogue_snapshots_per_profile() {
    let mut mismatches = Vec::new();
    for (name, raw) in catalogue::object_cases() {
        let schema = normalized(raw);
        for profile in Profile::ALL {
            let o = profile.apply(&schema);
            let shown = json!({
                "schema": o.schema,
                "errors": o.errors,
                "warnings": o.warnings,
                "strip_nulls": o.reverse.paths(),
            });
            mismatches.extend(snapshot::check(profile.name(), name, &shown));
        }
    }
    snapshot::assert_all(mismatches);
}

/// Every accepted wire schema satisfies its profile's rules (library check) and the
/// independent checks below.
#[test]
fn accepted_wire_schemas_satisfy_the_profile_rules() {
    let mut problems = Vec::new();
    for (name, raw) in catalogue::object_cases() {
        let schema = normalized(raw);
        for profile in Profile::ALL {
            let o = profile.apply(&schema);
            assert!(o.schema.is_object(), "{name}/{profile}");
            if !o.is_ok() {
                continue;
            }
            for v in verify(profile, &o.schema) {
                problems.push(format!("{name}/{profile}: {v}"));
            }
            let mut own = Vec::new();
            independent_check(profile, &o.schema, "", &mut own);
            for v in own {
                problems.push(format!("{name}/{profile} (independent): {v}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A second, deliberately simple reading of the provider rules, walking every object
/// in the wire schema (not only schema positions).
fn independent_check(profile: Profile, v: &Value, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            let in_data =
                path.ends_with("/enum") || path.ends_with("/default") || path.ends_with("/example");
            let is_schema_map = path.ends_with("/properties") || path.ends_with("/$defs");
            if !in_data && !is_schema_map {
                check_schema_node(profile, m, path, out);
            }
            for (k, child) in m {
                if in_data || matches!(k.as_str(), "enum" | "default" | "example" | "examples") {
                    continue;
                }
                independent_check(profile, child, &format!("{path}/{k}"), out);
            }
        }
        Value::Array(list) => {
            if path.ends_with("/required")
                || path.ends_with("/propertyOrdering")
                || path.ends_with("/type")
            {
                return;
            }
            for (i, child) in list.iter().enumerate() {
                independent_check(profile, child, &format!("{path}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn check_schema_node(profile: Profile, m: &Map<String, Value>, path: &str, out: &mut Vec<String>) {
    let forbidden: &[&str] = match profile {
        Profile::OpenAiStrict => &[
            "oneOf",
            "allOf",
            "not",
            "if",
            "then",
            "else",
            "prefixItems",
            "default",
            "uniqueItems",
            "minLength",
            "maxLength",
            "patternProperties",
            "examples",
            "$schema",
        ],
        Profile::AnthropicStrict => &[
            "oneOf",
            "prefixItems",
            "minimum",
            "maximum",
            "minLength",
            "maxLength",
            "uniqueItems",
            "maxItems",
            "examples",
            "default",
        ],
        Profile::GeminiOpenApi => &[
            "$ref",
            "$defs",
            "oneOf",
            "allOf",
            "const",
            "additionalProperties",
            "prefixItems",
            "uniqueItems",
            "title",
            "examples",
            "exclusiveMinimum",
            "$schema",
        ],
        Profile::Gemini => &[
            "oneOf",
            "const",
            "title",
            "examples",
            "uniqueItems",
            "$schema",
        ],
        Profile::Ollama => &[
            "$ref",
            "oneOf",
            "const",
            "format",
            "minimum",
            "additionalProperties",
        ],
        Profile::Mcp => &["oneOf", "const", "$schema"],
        Profile::Anthropic => &["oneOf", "$schema"],
        Profile::OpenAi => &["prefixItems", "$schema"],
        other => panic!("this test does not know the profile {other:?}: add its rules"),
    };
    for k in forbidden {
        if m.contains_key(*k) {
            out.push(format!("{path}: forbidden `{k}`"));
        }
    }
    let is_object = m.get("type") == Some(&json!("object"))
        || m.get("type")
            .and_then(Value::as_array)
            .is_some_and(|t| t.contains(&json!("object")))
        || m.contains_key("properties");
    if matches!(profile, Profile::OpenAiStrict | Profile::AnthropicStrict) && is_object {
        if m.get("additionalProperties") != Some(&json!(false)) {
            out.push(format!("{path}: object not closed"));
        }
        if !m.contains_key("properties") {
            out.push(format!("{path}: object without properties"));
        }
    }
    if profile == Profile::OpenAiStrict && is_object {
        let names: Vec<Value> = m["properties"]
            .as_object()
            .map(|p| p.keys().map(|k| json!(k)).collect())
            .unwrap_or_default();
        let required = m.get("required").cloned().unwrap_or(json!([]));
        if json!(names) != required {
            out.push(format!(
                "{path}: required {required} != properties {names:?}"
            ));
        }
    }
    if profile == Profile::GeminiOpenApi {
        if let Some(Value::Array(e)) = m.get("enum")
            && !e.iter().all(Value::is_string)
        {
            out.push(format!("{path}: non-string enum"));
        }
        if m.get("type").is_some_and(Value::is_array) {
            out.push(format!("{path}: type array"));
        }
    }
    if matches!(
        profile,
        Profile::OpenAiStrict | Profile::AnthropicStrict | Profile::GeminiOpenApi
    ) {
        let typed = ["type", "$ref", "anyOf", "enum", "const", "allOf"]
            .iter()
            .any(|k| m.contains_key(*k));
        if !typed {
            out.push(format!("{path}: untyped schema"));
        }
    }
}

fn errors_of(profile: Profile, schema: &Value) -> Vec<String> {
    profile
        .apply(schema)
        .errors
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn maps_and_free_form_values_are_rejected_by_strict_and_openapi_profiles() {
    let maps = canonical::<Maps>();
    for p in [
        Profile::OpenAiStrict,
        Profile::AnthropicStrict,
        Profile::GeminiOpenApi,
    ] {
        let errors = errors_of(p, &maps);
        assert!(
            errors.iter().any(|e| e.contains("`map`")),
            "{p}: {errors:?}"
        );
        assert!(
            errors.iter().any(|e| e.contains("`free`")),
            "{p}: {errors:?}"
        );
    }
    for p in [
        Profile::Mcp,
        Profile::Anthropic,
        Profile::OpenAi,
        Profile::Gemini,
        Profile::Ollama,
    ] {
        assert!(errors_of(p, &maps).is_empty(), "{p}");
    }
    let values = canonical::<JsonValues>();
    for p in [
        Profile::OpenAiStrict,
        Profile::AnthropicStrict,
        Profile::GeminiOpenApi,
    ] {
        let errors = errors_of(p, &values);
        assert!(
            errors
                .iter()
                .any(|e| e.contains("`value`") && e.contains("any JSON value")),
            "{p}: {errors:?}"
        );
    }
}

#[test]
fn recursion_is_rejected_where_it_cannot_be_expressed() {
    let tree = canonical::<Tree>();
    for p in [Profile::AnthropicStrict, Profile::GeminiOpenApi] {
        assert!(
            errors_of(p, &tree).iter().any(|e| e.contains("recursive")),
            "{p}"
        );
    }
    for p in [
        Profile::Mcp,
        Profile::Anthropic,
        Profile::OpenAi,
        Profile::OpenAiStrict,
        Profile::Ollama,
    ] {
        assert!(
            errors_of(p, &tree).is_empty(),
            "{p}: {:?}",
            errors_of(p, &tree)
        );
    }
    // Gemini: recursion through an optional property is a warning, through a required
    // one an error.
    let g = profiles::gemini(&tree);
    assert!(g.is_ok(), "{:?}", g.errors);
    assert!(g.warnings.iter().any(|w| w.as_str().contains("recursive")));
    let rec = profiles::gemini(&canonical::<Recursive>());
    assert!(
        rec.errors
            .iter()
            .any(|e| e.as_str().contains("required property")),
        "{:?}",
        rec.errors
    );
    // Ollama: the recursive part is described, not referenced.
    let o = profiles::ollama(&tree);
    assert!(o.schema.get("$defs").is_none());
    assert!(!o.schema.to_string().contains("$ref"));
}

#[test]
fn openai_strict_requires_everything_and_reverse_map_strips_injected_nulls() {
    let o = profiles::openai_strict(&canonical::<Defaults>());
    assert!(o.is_ok(), "{:?}", o.errors);
    let p = &o.schema["properties"];
    assert_eq!(
        o.schema["required"],
        json!(["page_size", "verbose", "unit", "inner", "query"])
    );
    assert_eq!(p["page_size"]["type"], json!(["integer", "null"]));
    assert!(p["unit"]["enum"].as_array().unwrap().contains(&Value::Null));
    assert_eq!(p["inner"]["type"], json!(["object", "null"]));
    assert_eq!(
        o.reverse.paths(),
        ["/page_size", "/verbose", "/unit", "/inner"]
    );

    let mut args =
        json!({"page_size": null, "verbose": "true", "unit": null, "inner": null, "query": null});
    o.reverse.strip_injected_nulls(&mut args);
    // `query` is required: its null stays for validation to reject.
    assert_eq!(args, json!({"verbose": "true", "query": null}));
}

#[test]
fn reverse_map_follows_recursive_definitions() {
    let o = profiles::openai_strict(&canonical::<Mutual>());
    assert!(o.is_ok(), "{:?}", o.errors);
    let mut args = json!({"a": {"name": "x", "b": {"items": [
        {"name": "y", "b": null},
        {"name": "z", "b": {"items": [], "weight": null}}
    ], "weight": null}}});
    o.reverse.strip_injected_nulls(&mut args);
    assert_eq!(
        args,
        json!({"a": {"name": "x", "b": {"items": [
            {"name": "y"},
            {"name": "z", "b": {"items": []}}
        ]}}})
    );
    // Root recursion (`$ref: "#"`).
    let o = profiles::openai_strict(&canonical::<Opts>());
    let mut args = json!({"a": null, "b": null, "c": null, "e": null, "f": null, "g": null});
    o.reverse.strip_injected_nulls(&mut args);
    assert_eq!(args, json!({}));
}

#[test]
fn strip_injected_nulls_survives_hostile_arguments() {
    let o = profiles::openai_strict(&canonical::<Mutual>());
    // Built by hand: `json!` would serialise (recursively) the interpolated value.
    let wrap = |key: &str, v: Value| Value::Object(Map::from_iter([(key.to_owned(), v)]));
    let mut deep = Value::Null;
    for _ in 0..10_000 {
        deep = wrap("a", wrap("b", wrap("items", Value::Array(vec![deep]))));
    }
    o.reverse.strip_injected_nulls(&mut deep);
    let mut wrong = json!([1, "x", {"a": 5}]);
    o.reverse.strip_injected_nulls(&mut wrong);
    assert_eq!(wrong, json!([1, "x", {"a": 5}]));
    // Dropping a 10 000-deep Value recurses in serde_json; leak it instead of testing
    // serde_json's drop.
    std::mem::forget(deep);
}

#[test]
fn tuples_become_items_with_lengths_and_words() {
    let o = profiles::openai(&canonical::<Tuples>());
    let pair = &o.schema["properties"]["pair"];
    assert_eq!(pair["items"]["anyOf"][0], json!({"type": "string"}));
    assert_eq!(pair["minItems"], json!(2));
    assert_eq!(pair["maxItems"], json!(2));
    assert_eq!(
        pair["description"],
        json!("tuple of 2 positional items: string, integer")
    );
    let same = &o.schema["properties"]["same"];
    assert_eq!(same["items"]["type"], json!("integer"));
}

#[test]
fn unsupported_keywords_move_into_the_description() {
    let o = profiles::openai_strict(&canonical::<Validations>());
    let p = &o.schema["properties"];
    assert_eq!(
        p["query"]["description"],
        json!("The query (minLength: 1, maxLength: 80)")
    );
    assert_eq!(p["url"]["description"], json!("format: uri"));
    assert!(p["url"].get("format").is_none());
    assert_eq!(p["email"]["format"], json!("email"));
    assert!(p["extended"].get("x-custom").is_none());
    let a = profiles::anthropic_strict(&canonical::<Validations>());
    let p = &a.schema["properties"];
    assert_eq!(p["url"]["format"], json!("uri"));
    assert_eq!(p["limit"]["description"], json!("minimum: 1, maximum: 100"));
    assert_eq!(p["tags"]["description"], json!("maxItems: 5"));
    assert_eq!(p["tags"]["minItems"], json!(1));
    // The u32 limit added by N3b is enforced by the validator, not spelled out.
    let o = profiles::anthropic_strict(&canonical::<Ints>());
    assert_eq!(
        o.schema["properties"]["c"]["description"],
        json!("minimum: 0")
    );
    assert!(o.schema["properties"]["g"].get("description").is_none());
    let m = profiles::mcp(&canonical::<Validations>());
    assert_eq!(m.schema["properties"]["extended"]["x-custom"], json!(true));
}

#[test]
fn gemini_openapi_uses_nullable_and_string_enums() {
    let o = profiles::gemini_openapi(&canonical::<Weather>());
    assert!(o.is_ok(), "{:?}", o.errors);
    assert_eq!(
        o.schema,
        json!({
            "type": "object",
            "properties": {
                "city": {"description": "City name, e.g. \"Hanoi\"", "type": "string"},
                "unit": {
                    "description": "Temperature unit\ncelsius: Degrees Celsius; fahrenheit: Degrees Fahrenheit",
                    "type": "string",
                    "enum": ["celsius", "fahrenheit"],
                    "default": "celsius"
                },
                "days": {
                    "description": "How many days to forecast",
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 14,
                    "nullable": true
                }
            },
            "required": ["city"],
            "propertyOrdering": ["city", "unit", "days"]
        })
    );
}

#[test]
fn mcp_no_parameter_tool_is_closed_object() {
    let o = profiles::mcp(&canonical::<Empty>());
    assert_eq!(
        o.schema,
        json!({"type": "object", "additionalProperties": false})
    );
}

#[test]
fn non_object_schema_is_an_error_in_every_profile() {
    for p in Profile::ALL {
        assert!(!p.apply(&json!({"type": "string"})).is_ok(), "{p}");
        assert!(
            !p.apply(&json!({"type": "object", "properties": {}, "anyOf": [{}]}))
                .is_ok(),
            "{p}"
        );
    }
}

fn tools() -> Vec<ToolSpec> {
    let mut weather = spec::<Weather>("get_weather");
    weather.label = "Get weather".into();
    vec![weather, spec::<Empty>("ping"), spec::<Maps>("maps")]
}

#[test]
fn export_shapes() {
    let tools = tools();
    let a = export(
        &tools,
        Profile::AnthropicStrict,
        ApiShape::AnthropicMessages,
    );
    let list = a.to_json();
    assert_eq!(list[0]["name"], json!("get_weather"));
    assert_eq!(list[0]["strict"], json!(true));
    assert_eq!(
        list[0]["input_schema"]["additionalProperties"],
        json!(false)
    );
    // The map tool falls back to non-strict.
    assert_eq!(list[2]["name"], json!("maps"));
    assert!(list[2].get("strict").is_none());
    assert_eq!(a.fell_back.len(), 1);
    assert!(a.clone().into_result().unwrap_err().contains("tool `maps`"));

    let c = export(&tools, Profile::OpenAiStrict, ApiShape::OpenAiChat).to_json();
    assert_eq!(c[0]["type"], json!("function"));
    assert_eq!(c[0]["function"]["strict"], json!(true));
    assert_eq!(c[2]["function"]["strict"], json!(false));
    let r = export(&tools, Profile::OpenAi, ApiShape::OpenAiResponses).to_json();
    assert_eq!(r[0]["name"], json!("get_weather"));
    assert_eq!(r[0]["strict"], json!(false));
    assert!(r[0]["parameters"].is_object());

    let g = export(&tools, Profile::Gemini, ApiShape::Gemini).to_json();
    assert!(g[0]["parametersJsonSchema"].is_object());
    assert!(g[1].get("parametersJsonSchema").is_none() && g[1].get("parameters").is_none());
    let go = export(&tools, Profile::GeminiOpenApi, ApiShape::Gemini);
    let gj = go.to_json();
    assert!(gj[0]["parameters"].is_object());
    assert!(gj[1].get("parameters").is_none());
    // The map tool cannot be expressed in OpenAPI; it falls back to parametersJsonSchema.
    assert!(gj[2]["parametersJsonSchema"].is_object());

    let m = export(&tools, Profile::Mcp, ApiShape::Mcp).to_json();
    assert_eq!(m[0]["title"], json!("Get weather"));
    assert!(m[1].get("title").is_none());
    assert_eq!(
        m[1]["inputSchema"],
        json!({"type": "object", "additionalProperties": false})
    );

    let o = export(&tools, Profile::Ollama, ApiShape::Ollama).to_json();
    assert_eq!(o[0]["function"]["name"], json!("get_weather"));
}

#[test]
fn export_uses_the_params_doc_when_the_tool_has_no_description() {
    let s = ToolSpec::new("search", "", ToolSchema::for_type::<Validations>());
    let out = export(&[s], Profile::Anthropic, ApiShape::AnthropicMessages).to_json();
    assert_eq!(
        out[0]["description"],
        json!("Search the web.\n\nSecond paragraph of the doc.")
    );
}

#[test]
fn export_rejects_unusable_schemas_and_bad_names() {
    let bad = vec![spec::<Newtype>("newtype"), spec::<Weather>("1bad name")];
    let e = export(&bad, Profile::Gemini, ApiShape::Gemini);
    assert!(e.tools.is_empty());
    assert_eq!(e.rejected.len(), 2);
    let report = e.report();
    assert!(
        report.contains("use a struct with named fields"),
        "{report}"
    );
    assert!(report.contains("starting with a letter"), "{report}");
}

#[test]
fn anthropic_strict_request_budget_sends_the_rest_non_strict() {
    let many: Vec<ToolSpec> = (0..22).map(|i| spec::<Weather>(&format!("t{i}"))).collect();
    let e = export(&many, Profile::AnthropicStrict, ApiShape::AnthropicMessages);
    let strict = e
        .tools
        .iter()
        .filter(|t| t.profile == Profile::AnthropicStrict)
        .count();
    // Weather has 2 optional properties: 12 tools reach the 24-optional budget first.
    assert_eq!(strict, 12);
    assert_eq!(e.fell_back.len(), 10);
    let report = portability_report(&many, &[Profile::AnthropicStrict]);
    assert!(report.iter().any(|r| r.contains("22 tools")), "{report:?}");
}

#[test]
fn assert_portable_passes_for_portable_tools() {
    assert_portable(
        &[spec::<Weather>("get_weather"), spec::<Nested>("nested")],
        &Profile::ALL,
    );
}

#[test]
fn assert_portable_panics_with_a_readable_report() {
    let tools = [spec::<Maps>("maps")];
    let result = std::panic::catch_unwind(|| assert_portable(&tools, &[Profile::OpenAiStrict]));
    let message = match result {
        Err(payload) => payload
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default(),
        Ok(()) => panic!("assert_portable accepted a map under openai-strict"),
    };
    assert!(message.contains("[openai-strict] tool `maps`"), "{message}");
    assert!(message.contains("`map`"), "{message}");
}

#[test]
fn export_accepts_agent_tools() {
    struct Named(ToolSpec);
    #[pi_tool::async_trait]
    impl pi_tool::AgentTool for Named {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        async fn execute(
            &self,
            _call: ToolInvocation<'_>,
        ) -> Result<pi_tool::JsonToolResult, pi_tool::ToolError> {
            Err(pi_tool::ToolError::new("not called"))
        }
    }
    let tools: Vec<std::sync::Arc<dyn pi_tool::AgentTool>> =
        vec![std::sync::Arc::new(Named(spec::<Weather>("get_weather")))];
    let out = export(&tools, Profile::OpenAiStrict, ApiShape::OpenAiResponses);
    assert!(out.is_clean(), "{}", out.report());
    assert_eq!(out.to_json()[0]["strict"], json!(true));
    assert!(
        out.reverse("get_weather")
            .is_some_and(|r| r.paths() == ["/unit", "/days"])
    );
    assert_portable(&tools, &Profile::ALL);
}

#[test]
fn hand_written_schemas_are_normalised_first() {
    let raw = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"where": {"$ref": "#/$defs/Place", "description": "Where"}},
        "required": ["where"],
        "$defs": {"Place": {"type": "object", "properties": {"city": {"type": "string", "format": "uint32"}}}}
    });
    let o = profiles::gemini_openapi(&raw);
    assert!(o.is_ok(), "{:?}", o.errors);
    assert_eq!(
        o.schema["properties"]["where"],
        json!({"description": "Where", "type": "object", "properties": {"city": {"type": "string"}}})
    );
}

#[test]
fn openai_strict_moves_lookaround_patterns_and_checks_limits() {
    let s = json!({"type": "object", "properties": {
        "a": {"type": "string", "pattern": "^(?!x)[a-z]+$"},
        "b": {"type": "string", "pattern": "^[a-z]+$"},
        "c": {"type": "string", "enum": (0..1001).map(|i| format!("v{i}")).collect::<Vec<_>>()}
    }, "required": ["a", "b", "c"]});
    let o = profiles::openai_strict(&s);
    assert_eq!(
        o.schema["properties"]["a"]["description"],
        json!("pattern: ^(?!x)[a-z]+$")
    );
    assert_eq!(o.schema["properties"]["b"]["pattern"], json!("^[a-z]+$"));
    assert!(
        o.errors
            .iter()
            .any(|e| e.as_str().contains("1001 enum values")),
        "{:?}",
        o.errors
    );
    assert_eq!(o.budget.enum_values, 1001);
}

#[test]
fn recursive_ref_siblings_per_provider() {
    let s = json!({
        "type": "object",
        "properties": {"node": {"$ref": "#/$defs/N", "description": "The node", "minProperties": 1}},
        "$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}}
    });
    let openai = profiles::openai(&s);
    assert_eq!(
        openai.schema["properties"]["node"],
        json!({"anyOf": [{"$ref": "#/$defs/N"}], "description": "The node", "minProperties": 1})
    );
    let gemini = profiles::gemini(&s);
    assert_eq!(
        gemini.schema["properties"]["node"],
        json!({"$ref": "#/$defs/N", "description": "The node"})
    );
    assert!(
        gemini
            .warnings
            .iter()
            .any(|w| w.as_str().contains("minProperties")),
        "{:?}",
        gemini.warnings
    );
}

#[test]
fn one_of_beside_any_of_is_merged_with_a_warning() {
    let s = json!({"type": "object", "properties": {"x": {
        "anyOf": [{"type": "string"}], "oneOf": [{"type": "integer"}]
    }}});
    let o = profiles::anthropic(&s);
    assert_eq!(
        o.schema["properties"]["x"],
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}]})
    );
    assert!(!o.warnings.is_empty());
}
