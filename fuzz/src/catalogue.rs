//! The schemas the `arguments` target checks arguments against: every type of pi-tool's
//! schema catalogue (`pi-tool/tests/common/catalogue.rs`, compiled here as it is, so the
//! two never drift) and a few `#[pi_tool]` tools, whose arguments go the whole call path
//! (`check_contained`: prepare, then validation).

use std::sync::{Arc, OnceLock};

use pi_tool::schema::ArgumentLimits;
use pi_tool::{AbortSignal, AgentTool, AgentToolResult, NoDetails, OnUpdate, ToolError, ToolErrorKind, Value, pi_tool};
use pi_tool::pack::{ToolOwner, ToolPack};
use pi_tool::schema::ToolSchema;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

#[path = "../../pi-tool/tests/common/catalogue.rs"]
#[allow(missing_docs, unreachable_pub)]
pub mod types;

use types::*;

/// Checks `args` against `P`'s schema as a typed tool does: validation, then serde on
/// what validation returned. Validation may refuse; what it accepts must deserialise or
/// fail with a validation-style error (serde may be stricter than the schema, e.g. a
/// `u32` past its maximum), never panic, and must validate again to itself.
pub fn check_type<P: DeserializeOwned + JsonSchema + 'static>(name: &str, args: &Value) {
    let schema = ToolSchema::for_type::<P>();
    check_schema(name, &schema, args, |value| {
        pi_tool::schema::deserialize_params::<P>(name, value).map(drop)
    });
}

/// Validates `args` with `schema` and, when it passes, hands the result to `then`.
pub fn check_schema(
    name: &str,
    schema: &ToolSchema,
    args: &Value,
    then: impl FnOnce(&Value) -> Result<(), ToolError>,
) {
    let validated = match schema.validate(name, args) {
        Ok(validated) => validated,
        Err(error) => {
            check_refusal(name, &error);
            return;
        }
    };
    // The value execute receives is a fixed point of the pipeline: checking it again
    // changes nothing (a host may check twice, e.g. a session and then the loop).
    match schema.validate(name, &validated) {
        Ok(again) => assert_eq!(
            again, validated,
            "{name}: validating twice changed the value"
        ),
        Err(error) => panic!(
            "{name}: the validated value fails validation: {}\nvalue: {validated}",
            error.message()
        ),
    }
    if let Err(error) = then(&validated) {
        check_refusal(name, &error);
    }
}

/// A refusal is an invalid-arguments error in Pi's words, naming the tool.
fn check_refusal(name: &str, error: &ToolError) {
    assert_eq!(
        error.kind(),
        ToolErrorKind::InvalidArguments,
        "{name}: {error:?}"
    );
    let text = error.message();
    assert!(
        text.starts_with(&format!("Validation failed for tool \"{name}\":\n"))
            || text.starts_with(&format!(
                "Tool \"{name}\" has an unusable parameters schema"
            )),
        "{name}: unexpected refusal text: {text}"
    );
}

/// Every catalogue type, object-rooted or not, on `args`.
pub fn check_catalogue(args: &Value) {
    check_type::<Validations>("validations", args);
    check_type::<Opts>("opts", args);
    check_type::<Nested>("nested", args);
    check_type::<Maps>("maps", args);
    check_type::<Enums>("enums", args);
    check_type::<TaggedFields>("tagged_fields", args);
    check_type::<Flat>("flat", args);
    check_type::<FlatEnum>("flat_enum", args);
    check_type::<FlatEnumDeny>("flat_enum_deny", args);
    check_type::<Recursive>("recursive", args);
    check_type::<Tree>("tree", args);
    check_type::<Mutual>("mutual", args);
    check_type::<Tuples>("tuples", args);
    check_type::<JsonValues>("json_values", args);
    check_type::<Ints>("ints", args);
    check_type::<Times>("times", args);
    check_type::<Collections>("collections", args);
    check_type::<Defaults>("defaults", args);
    check_type::<Renamed>("renamed", args);
    check_type::<Closed>("closed", args);
    check_type::<UsesGeneric>("generics", args);
    check_type::<RootInternal>("root_internal", args);
    check_type::<RootExternal>("root_external", args);
    check_type::<Empty>("empty", args);
    check_type::<Weather>("weather", args);
    check_type::<serde_json::Map<String, Value>>("map_only", args);
    // Not object-rooted: every call is refused with the schema's reason.
    check_type::<Newtype>("newtype", args);
    check_type::<TupleStruct>("tuple_struct", args);
    check_type::<UnitStruct>("unit_struct", args);
    check_type::<UnitNoDocs>("unit_enum", args);
    check_type::<External>("external_enum", args);
    check_type::<Value>("json_value", args);
    check_type::<Transparent>("transparent", args);
    check_type::<Option<Inner>>("option_struct", args);
    check_type::<Vec<String>>("vec", args);
}

/// Pi's custom-tool page's weather params (pi-tool's crate docs).
#[pi_tool::params]
#[serde(deny_unknown_fields)]
pub struct WeatherParams {
    /// City name.
    #[schemars(length(min = 1, max = 80))]
    pub city: String,
    /// The unit.
    pub unit: Option<TempScale>,
}

/// A temperature scale.
#[pi_tool::params]
#[derive(Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub enum TempScale {
    /// Degrees Celsius.
    Celsius,
    /// Degrees Fahrenheit.
    Fahrenheit,
}

/// Return the demo temperature.
#[pi_tool(name = "get_weather", label = "Get weather")]
async fn get_weather(
    _call_id: &str,
    params: WeatherParams,
    _signal: AbortSignal,
    _on_update: OnUpdate<NoDetails>,
) -> Result<AgentToolResult<NoDetails>, ToolError> {
    Ok(AgentToolResult::text(params.city, NoDetails))
}

/// A search with the keywords models get wrong most: ranges, a pattern, nested
/// optional objects, maps, arrays of bounded length, integer widths.
#[pi_tool::params]
pub struct SearchParams {
    /// The query.
    #[schemars(length(min = 1, max = 200))]
    pub query: String,
    /// How many results.
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u8>,
    /// Only these sites.
    #[schemars(length(max = 10))]
    pub sites: Vec<String>,
    /// A language code.
    #[schemars(regex(pattern = r"^[a-z]{2}(-[A-Z]{2})?$"))]
    pub lang: Option<String>,
    /// Date range.
    pub range: Option<DateRange>,
    /// Extra filters.
    #[serde(default)]
    pub filters: std::collections::BTreeMap<String, Filter>,
    /// Relevance cut-off.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub min_score: Option<f64>,
    /// Offset into the results.
    #[serde(default)]
    pub offset: u64,
    /// Verbose output.
    #[serde(default)]
    pub verbose: bool,
}

/// A date range.
#[pi_tool::params]
pub struct DateRange {
    /// From (inclusive).
    pub from: String,
    /// To (exclusive).
    pub to: Option<String>,
}

/// One filter.
#[pi_tool::params]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Filter {
    /// Equal to.
    Eq {
        /// The value.
        value: Value,
    },
    /// One of.
    In {
        /// The values.
        values: Vec<String>,
    },
    /// Within bounds.
    Between {
        /// Low.
        low: i64,
        /// High.
        high: i64,
    },
}

/// Search the catalogue.
#[pi_tool(name = "search")]
async fn search(
    _call_id: &str,
    params: SearchParams,
    _signal: AbortSignal,
    _on_update: OnUpdate<NoDetails>,
) -> Result<AgentToolResult<NoDetails>, ToolError> {
    Ok(AgentToolResult::text(params.query, NoDetails))
}

/// The `#[pi_tool]` tools, as a host holds them (a pack's agent tools).
pub fn tools() -> &'static [Arc<dyn AgentTool>] {
    static TOOLS: OnceLock<Vec<Arc<dyn AgentTool>>> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let owner = ToolOwner::new("pi-tool-fuzz");
        let mut pack = ToolPack::new();
        let pushed = pack
            .push(owner.clone(), GetWeather)
            .and_then(|()| pack.push(owner, Search));
        if let Err(error) = pushed {
            panic!("the fuzz pack: {error}");
        }
        pack.tools()
    })
}

/// `args` through each tool's call path (`check_contained`), which must agree with its
/// params type's schema, then serde.
pub fn check_tools(args: &Value) {
    let limits = ArgumentLimits::default();
    for tool in tools() {
        let checked = pi_tool::check_contained(&**tool, args, &limits);
        // The host's limits come first: what they refuse never reaches the schema.
        if let Err(refusal) = limits.check(tool.name(), args) {
            match checked {
                Err(error) => assert_eq!(error.message(), refusal.message()),
                Ok(value) => panic!("{}: over the limits but checked: {value}", tool.name()),
            }
            continue;
        }
        match tool.name() {
            "get_weather" => agree::<WeatherParams>("get_weather", args, checked),
            "search" => agree::<SearchParams>("search", args, checked),
            other => panic!("unknown tool {other}"),
        }
    }
}

fn agree<P: DeserializeOwned + JsonSchema + 'static>(
    name: &str,
    args: &Value,
    checked: Result<std::borrow::Cow<'_, Value>, ToolError>,
) {
    let direct = ToolSchema::for_type::<P>().validate(name, args);
    match (&checked, &direct) {
        (Ok(a), Ok(b)) => assert_eq!(**a, *b, "{name}: call path and schema disagree"),
        (Err(a), Err(b)) => assert_eq!(a.message(), b.message(), "{name}: different refusals"),
        _ => panic!("{name}: call path {checked:?} but schema {direct:?}"),
    }
    check_type::<P>(name, args);
}

/// [`ArgumentLimits::check`] against a recursive model of what it measures: compact
/// JSON bytes, container nesting (`{"a": [[1]]}` is 3 deep), characters per string or
/// key. A value passes exactly when it is within all three, and a refusal names a limit
/// it is over. (Values here come from serde_json, at most 128 deep, so recursion is fine.)
pub fn check_limits(args: &Value) {
    let cases = [
        ArgumentLimits::default(),
        ArgumentLimits::new()
            .max_bytes(64)
            .max_depth(3)
            .max_string_chars(8),
        ArgumentLimits::new()
            .max_bytes(0)
            .max_depth(0)
            .max_string_chars(0),
        ArgumentLimits::new()
            .max_bytes(1 << 10)
            .max_depth(1)
            .max_string_chars(1 << 10),
    ];
    let bytes = serde_json::to_string(args).map_or(usize::MAX, |text| text.len());
    let (depth, chars) = (depth(args), longest_string(args));
    for limits in cases {
        let over_bytes = bytes > limits.max_bytes;
        let over_depth = depth > limits.max_depth;
        let over_chars = chars > limits.max_string_chars;
        match limits.check("limits", args) {
            Ok(()) => assert!(
                !(over_bytes || over_depth || over_chars),
                "{limits:?} took {bytes} bytes, {depth} deep, {chars} chars"
            ),
            Err(error) => {
                assert_eq!(error.kind(), ToolErrorKind::InvalidArguments);
                let text = error.message();
                let named = (over_bytes && text.ends_with("(max_bytes)"))
                    || (over_depth && text.ends_with("(max_depth)"))
                    || (over_chars && text.ends_with("(max_string_chars)"));
                assert!(
                    named,
                    "{limits:?} refused {bytes} bytes, {depth} deep, {chars} chars: {text}"
                );
            }
        }
    }
}

fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

fn longest_string(value: &Value) -> usize {
    match value {
        Value::String(s) => s.chars().count(),
        Value::Array(items) => items.iter().map(longest_string).max().unwrap_or(0),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| k.chars().count().max(longest_string(v)))
            .max()
            .unwrap_or(0),
        _ => 0,
    }
}
