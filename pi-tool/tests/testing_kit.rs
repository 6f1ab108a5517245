//! `pi_tool::testing`: one tool in two lines, the schema-driven model, and the check
//! that every tool accepts what its own schema allows (over the 26 catalogue types).

mod common;

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::Duration;

use common::catalogue::{self, *};
use pi_tool::agent::{Agent, AgentOptions};
use pi_tool::pack::ToolPack;
use pi_tool::testing::{self, SchemaModel, Verdict};
use pi_tool::{
    AbortController, AbortSignal, AgentToolResult, IntoAgentTool, OnUpdate, ToolError,
    ToolErrorKind, Value, json, pi_tool, tool_pack,
};
use serde::{Deserialize, Deserializer, Serialize};

// ---------------------------------------------------------------------------------------
// One tool in two lines.

#[pi_tool::params]
#[derive(Serialize)]
struct CountParams {
    /// How far to count, 1 to 5.
    #[schemars(range(min = 1, max = 5))]
    to: u32,
    /// Panic instead of counting.
    #[serde(default)]
    explode: bool,
    /// Sleep this long first, in milliseconds.
    #[serde(default)]
    sleep_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Counted {
    at: u32,
}

/// Count to a number, reporting each step.
#[pi_tool(name = "count")]
async fn count(
    params: CountParams,
    signal: AbortSignal,
    on_update: OnUpdate<Counted>,
) -> Result<AgentToolResult<Counted>, ToolError> {
    assert!(!params.explode, "asked to explode at {}", params.to);
    signal.sleep(Duration::from_millis(params.sleep_ms)).await?;
    for at in 1..params.to {
        on_update.send(AgentToolResult::text(format!("{at}..."), Counted { at }));
    }
    Ok(AgentToolResult::text(
        format!("counted to {}", params.to),
        Counted { at: params.to },
    ))
}

fn to(n: u32) -> CountParams {
    CountParams {
        to: n,
        explode: false,
        sleep_ms: 0,
    }
}

#[tokio::test]
async fn a_call_captures_typed_updates_and_the_typed_result() {
    let run = testing::call(Count, to(3)).await;
    assert_eq!(run.update_texts(), ["1...", "2..."]);
    assert_eq!(run.updates()[1].details, Counted { at: 2 });
    assert_eq!(run.result().details, Counted { at: 3 });
    assert_eq!(run.text(), "counted to 3");
    assert_eq!(
        run.arguments(),
        &json!({"to": 3, "explode": false, "sleep_ms": 0})
    );
    assert!(!run.is_error());
}

#[tokio::test]
async fn typed_params_go_through_validation_like_a_models() {
    // The schema says 1 to 5: typed params cannot skip it.
    let run = testing::call(Count, to(9)).await;
    assert_eq!(run.error().kind(), ToolErrorKind::InvalidArguments);
    assert!(
        run.error_text()
            .starts_with("Validation failed for tool \"count\":\n  - to: must be <= 5"),
        "{}",
        run.error_text()
    );
    // Raw JSON, as a model sends it: Pi's coercion applies, then the same checks.
    assert_eq!(
        testing::call_json(Count, json!({"to": "2"})).await.text(),
        "counted to 2"
    );
    let run = testing::call_json(Count, json!({})).await;
    assert!(
        run.error_text()
            .contains("  - to: must have required properties to"),
        "{}",
        run.error_text()
    );
}

#[tokio::test]
async fn panics_aborts_and_timeouts_are_contained_as_in_a_host() {
    let run = testing::call(
        Count,
        CountParams {
            explode: true,
            ..to(4)
        },
    )
    .await;
    assert_eq!(run.error().kind(), ToolErrorKind::Panicked);
    assert_eq!(
        run.error_text(),
        "Tool count panicked: asked to explode at 4"
    );

    let controller = AbortController::new();
    controller.abort();
    let run = testing::call(Count, to(2))
        .signal(controller.signal())
        .await;
    assert!(run.error().is_abort(), "{:?}", run.error());

    let slow = CountParams {
        sleep_ms: 60_000,
        ..to(2)
    };
    let run = testing::call(Count, slow)
        .timeout(Duration::from_millis(50))
        .await;
    assert_eq!(run.error_text(), "Tool count timed out after 50ms");
}

#[tokio::test]
#[should_panic(expected = "`count` returned a result instead of failing: ")]
async fn expecting_the_other_outcome_panics_with_what_happened() {
    let _ = testing::call(Count, to(1)).await.error();
}

#[tokio::test]
async fn a_json_level_tool_is_called_the_same_way() {
    let tool = Count.into_agent_tool();
    let run = testing::call_tool(tool, json!({"to": 2})).await;
    assert_eq!(run.result().details, json!({"at": 2}));
    assert_eq!(run.tool_name(), "count");
}

// ---------------------------------------------------------------------------------------
// The schema-driven model.

#[pi_tool::params]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
enum Size {
    Small,
    Medium,
    Large,
    Huge,
}

#[pi_tool::params]
struct Dimensions {
    /// Width in cm.
    #[schemars(range(min = 1, max = 500))]
    width: u16,
    depth: Option<f64>,
}

#[pi_tool::params]
#[serde(tag = "kind", rename_all = "lowercase")]
#[allow(dead_code)] // serde reads it; the tool looks at the variant only
enum Delivery {
    Pickup { store: String },
    Courier { address: String, express: bool },
}

#[pi_tool::params]
#[allow(dead_code)] // serde reads it; the tool does not
struct Category {
    name: String,
    children: Vec<Category>,
}

#[pi_tool::params]
#[serde(deny_unknown_fields)]
struct OrderParams {
    /// The product code, like `AB-12`.
    #[schemars(regex(pattern = r"^[A-Z]{2}-\d{2,4}$"))]
    sku: String,
    size: Size,
    #[schemars(range(min = 1, max = 12))]
    quantity: u8,
    /// Gift note, at most 40 characters.
    #[schemars(length(max = 40))]
    note: Option<String>,
    dimensions: Option<Dimensions>,
    delivery: Delivery,
    /// One to three tags.
    #[schemars(length(min = 1, max = 3))]
    tags: Vec<String>,
    /// When to deliver.
    at: Option<chrono::DateTime<chrono::Utc>>,
    category: Option<Category>,
}

static ORDERS: Mutex<Vec<Value>> = Mutex::new(Vec::new());

/// Place an order.
#[pi_tool(name = "place_order")]
async fn place_order(params: OrderParams) -> Result<String, ToolError> {
    let mut seen = json!({
        "sku": params.sku,
        "size": format!("{:?}", params.size),
        "quantity": params.quantity,
        "note": params.note.is_some(),
        "depth": params.dimensions.as_ref().map(|d| d.depth.is_some()),
        "width": params.dimensions.as_ref().map(|d| d.width),
        "delivery": match params.delivery {
            Delivery::Pickup { .. } => "pickup",
            Delivery::Courier { .. } => "courier",
        },
        "tags": params.tags.len(),
        "at": params.at.map(|t| t.to_rfc3339()),
    });
    if let Some(category) = &params.category {
        seen["category_children"] = json!(category.children.len());
    }
    ORDERS.lock().unwrap().push(seen);
    Ok("ordered".to_owned())
}

#[tokio::test]
async fn the_schema_model_covers_properties_bounds_enums_branches_and_optionals() {
    let tools = vec![PlaceOrder.into_agent_tool()];
    let model = SchemaModel::new(tools.clone());
    assert!(model.skipped().is_empty(), "{:?}", model.skipped());
    let agent = Agent::new(AgentOptions::new(std::sync::Arc::new(model.clone())).tools(tools));
    agent.prompt("Order something.").await.unwrap();

    // Through the real loop: one batch of calls, their results, then a text answer.
    let messages = agent.messages();
    let roles: Vec<&str> = messages.iter().map(|m| m.role()).collect();
    let calls = model.calls().len();
    assert!(calls >= 8, "{calls} calls");
    assert_eq!(roles.len(), 3 + calls, "{roles:?}");
    assert_eq!(roles[..2], ["user", "assistant"]);
    let answer = messages.last().and_then(|m| m.as_assistant()).unwrap();
    assert_eq!(
        answer.text(),
        format!("Called 1 tools with {calls} generated argument sets.")
    );
    let results: Vec<_> = messages.iter().filter_map(|m| m.as_tool_result()).collect();
    assert!(results.iter().all(|r| !r.is_error), "{results:?}");

    let seen = std::mem::take(&mut *ORDERS.lock().unwrap());
    assert_eq!(seen.len(), calls);
    let values =
        |key: &str| -> BTreeSet<String> { seen.iter().map(|s| s[key].to_string()).collect() };
    // Every enum value, both bounds, both union branches.
    assert_eq!(
        values("size"),
        ["\"Huge\"", "\"Large\"", "\"Medium\"", "\"Small\""]
            .map(str::to_owned)
            .into()
    );
    assert!(values("quantity").contains("1") && values("quantity").contains("12"));
    assert!(values("width").contains("1") && values("width").contains("500"));
    assert_eq!(
        values("delivery"),
        ["\"courier\"", "\"pickup\""].map(str::to_owned).into()
    );
    // Optional properties present and absent, at the top and nested.
    assert_eq!(values("note"), ["false", "true"].map(str::to_owned).into());
    assert!(values("depth").contains("true") && values("depth").contains("null"));
    assert!(
        values("at").iter().any(|at| at.starts_with("\"2024-")),
        "{:?}",
        values("at")
    );
    // Array lengths within minItems/maxItems, the pattern, the recursive type.
    assert!(
        values("tags")
            .iter()
            .all(|n| ["1", "2", "3"].contains(&n.as_str()))
    );
    assert!(values("tags").len() > 1);
    let pattern = regex::Regex::new(r"^[A-Z]{2}-\d{2,4}$").unwrap();
    assert!(
        seen.iter()
            .all(|s| pattern.is_match(s["sku"].as_str().unwrap()))
    );
    assert!(
        seen.iter()
            .any(|s| s["category_children"].as_u64().is_some_and(|n| n > 0))
    );
}

// ---------------------------------------------------------------------------------------
// The assertion, over the catalogue.

macro_rules! catalogue_tools {
    ($($tool:ident / $fn_name:ident: $params:ty),* $(,)?) => {
        $(
            /// Accepts a catalogue type.
            #[pi_tool]
            async fn $fn_name(_params: $params) -> Result<String, ToolError> {
                // Reaching here means serde read the arguments.
                Ok("accepted".to_owned())
            }
        )*
        fn catalogue_pack() -> ToolPack {
            tool_pack![$($tool),*]
        }
    };
}

catalogue_tools! {
    CheckValidations / check_validations: Validations,
    CheckOpts / check_opts: Opts,
    CheckNested / check_nested: Nested,
    CheckMaps / check_maps: Maps,
    CheckEnums / check_enums: Enums,
    CheckTaggedFields / check_tagged_fields: TaggedFields,
    CheckFlat / check_flat: Flat,
    CheckFlatEnum / check_flat_enum: FlatEnum,
    CheckFlatEnumDeny / check_flat_enum_deny: FlatEnumDeny,
    CheckRecursive / check_recursive: Recursive,
    CheckTree / check_tree: Tree,
    CheckMutual / check_mutual: Mutual,
    CheckTuples / check_tuples: Tuples,
    CheckJsonValues / check_json_values: JsonValues,
    CheckInts / check_ints: Ints,
    CheckTimes / check_times: Times,
    CheckCollections / check_collections: Collections,
    CheckDefaults / check_defaults: Defaults,
    CheckRenamed / check_renamed: Renamed,
    CheckClosed / check_closed: Closed,
    CheckGenerics / check_generics: UsesGeneric,
    CheckRootInternal / check_root_internal: RootInternal,
    CheckRootExternal / check_root_external: RootExternal,
    CheckEmpty / check_empty: Empty,
    CheckWeather / check_weather: Weather,
    CheckMapOnly / check_map_only: serde_json::Map<String, Value>,
}

#[tokio::test]
async fn every_catalogue_type_accepts_its_schema_but_the_merged_root_unions() {
    let pack = catalogue_pack();
    assert_eq!(pack.len(), catalogue::object_cases().len());
    let report = testing::check_schema(&pack).await;
    eprintln!("{report}");
    assert!(report.untested.is_empty(), "{report}");
    assert!(report.run_error.is_none(), "{report}");
    // The root unions the schema had to merge into one object (normalisation's N5, with a
    // warning): the schema cannot say which fields go with which variant, serde can.
    assert_eq!(
        report.failing_tools(),
        [
            "check_flat_enum",
            "check_flat_enum_deny",
            "check_root_internal",
            "check_root_external"
        ],
        "{report}"
    );
    for tool in report.failing_tools() {
        assert!(
            report
                .warnings
                .iter()
                .any(|(name, w)| name == tool && !w.is_empty()),
            "{tool} has a normalisation warning"
        );
    }
    assert!(
        report
            .failures()
            .iter()
            .all(|f| f.verdict == Verdict::Rejected),
        "{report}"
    );
    // Every other type accepted every case, optional properties present and absent.
    for (name, _) in catalogue::object_cases() {
        let tool = format!("check_{name}");
        let cases: Vec<_> = report
            .calls
            .iter()
            .filter(|o| o.call.tool == tool)
            .collect();
        assert!(!cases.is_empty(), "{tool}: no case");
    }
}

// ---------------------------------------------------------------------------------------
// The assertion can fail, and says where.

/// An even number of nights: a serde rule the schema (an integer 0..u32::MAX) does not
/// express.
fn even<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    let n = u32::deserialize(deserializer)?;
    if n % 2 == 1 {
        return Err(serde::de::Error::custom(format!(
            "{n} is odd: book nights in pairs"
        )));
    }
    Ok(n)
}

#[pi_tool::params]
struct BookingParams {
    /// The guest's name.
    guest: String,
    #[serde(deserialize_with = "even")]
    nights: u32,
}

/// Book a room.
#[pi_tool(name = "book_room")]
async fn book_room(params: BookingParams) -> Result<String, ToolError> {
    Ok(format!(
        "{} booked for {} nights",
        params.guest, params.nights
    ))
}

#[tokio::test]
async fn the_assertion_fails_naming_the_tool_and_the_argument() {
    let pack = tool_pack![BookRoom, CheckWeather];
    let report = testing::check_schema(&pack).await;
    assert_eq!(report.failing_tools(), ["book_room"], "{report}");
    let failure = report.failures()[0];
    assert_eq!(failure.verdict, Verdict::Rejected);
    assert_eq!(failure.call.arguments["nights"], 4294967295u32);

    let panic = tokio::spawn(testing::assert_pack_accepts_its_schema(pack))
        .await
        .unwrap_err()
        .into_panic();
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        message.starts_with("assert_pack_accepts_its_schema: 2 of "),
        "{message}"
    );
    assert!(
        message.contains("tool `book_room`: 2 of 3 calls failed"),
        "{message}"
    );
    assert!(
        message.contains("the schema allows it, the tool refused it"),
        "{message}"
    );
    assert!(
        message.contains("  - nights: 4294967295 is odd: book nights in pairs"),
        "{message}"
    );
    assert!(!message.contains("tool `check_weather`"), "{message}");
}

#[tokio::test]
async fn a_tool_whose_schema_admits_no_value_is_reported_untested() {
    #[pi_tool::params]
    struct ImpossibleParams {
        /// No string is at least 5 and at most 2 characters long.
        #[schemars(length(min = 5, max = 2))]
        word: String,
    }
    /// Never callable.
    #[pi_tool(name = "impossible")]
    async fn impossible(params: ImpossibleParams) -> Result<String, ToolError> {
        Ok(params.word)
    }
    let report = testing::check_schema(tool_pack![Impossible]).await;
    assert_eq!(report.untested, ["impossible"]);
    assert!(!report.is_ok());
    assert!(
        report
            .to_string()
            .contains("tool `impossible`: no valid arguments could be generated"),
        "{report}"
    );
}
