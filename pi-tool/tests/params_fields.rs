//! `#[pi_tool::params]` reads a field of a type it does not know (`location: Location`)
//! through `bounds::ParamsFieldOf` (so that a type without derives is one error, issue
//! 22). That must not change what the params are: the same schema, byte for byte, and
//! the same values and errors as the plain derives give, for every shape of such a field.

use std::collections::{BTreeMap, HashMap};

use pi_tool::schema::{ToolSchema, deserialize_params};
use pi_tool::{Value, json};

/// The params with `#[pi_tool::params]`: its user-type fields are routed.
mod routed {
    use super::*;

    /// A place.
    #[pi_tool::params]
    #[derive(Debug, PartialEq)]
    pub struct Location {
        /// The city.
        pub city: String,
        /// The postcode.
        pub zip: Option<String>,
    }

    /// A unit.
    #[pi_tool::params]
    #[derive(Debug, PartialEq)]
    #[serde(rename_all = "lowercase")]
    pub enum Unit {
        /// Degrees Celsius.
        Celsius,
        /// Degrees Fahrenheit.
        Fahrenheit,
    }

    /// A tagged filter.
    #[pi_tool::params]
    #[derive(Debug, PartialEq)]
    #[serde(tag = "op", rename_all = "snake_case")]
    pub enum Filter {
        /// Equal to.
        Eq {
            /// The value.
            value: Value,
        },
        /// Below.
        Below {
            /// The bound.
            bound: i64,
        },
        /// Near a place.
        Near {
            /// The place.
            place: Location,
            /// How far, in km.
            km: u32,
        },
    }

    /// The params.
    #[pi_tool::params]
    #[derive(Debug, PartialEq)]
    #[serde(deny_unknown_fields)]
    pub struct Params {
        /// Where.
        pub location: Location,
        /// The stops on the way.
        pub stops: Vec<Location>,
        /// The unit.
        pub unit: Unit,
        /// Places by name.
        pub by_name: HashMap<String, Location>,
        /// Filters by key.
        pub filters: BTreeMap<String, Filter>,
        /// A boxed place.
        pub boxed: Box<Location>,
        /// An optional place (not routed).
        pub maybe: Option<Location>,
        /// A place with its own attribute (not routed).
        #[serde(default)]
        pub fallback: Option<Location>,
        /// Any JSON.
        pub extra: Value,
        /// A count.
        pub count: u32,
    }
}

/// The same params with the plain derives, as written before the routing.
mod derived {
    use super::*;
    use pi_tool::JsonSchema;
    use serde::Deserialize;

    /// A place.
    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    #[schemars(crate = "pi_tool::schemars")]
    pub struct Location {
        /// The city.
        pub city: String,
        /// The postcode.
        pub zip: Option<String>,
    }

    /// A unit.
    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    #[schemars(crate = "pi_tool::schemars")]
    #[serde(rename_all = "lowercase")]
    pub enum Unit {
        /// Degrees Celsius.
        Celsius,
        /// Degrees Fahrenheit.
        Fahrenheit,
    }

    /// A tagged filter.
    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    #[schemars(crate = "pi_tool::schemars")]
    #[serde(tag = "op", rename_all = "snake_case")]
    pub enum Filter {
        /// Equal to.
        Eq {
            /// The value.
            value: Value,
        },
        /// Below.
        Below {
            /// The bound.
            bound: i64,
        },
        /// Near a place.
        Near {
            /// The place.
            place: Location,
            /// How far, in km.
            km: u32,
        },
    }

    /// The params.
    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    #[schemars(crate = "pi_tool::schemars")]
    #[serde(deny_unknown_fields)]
    pub struct Params {
        /// Where.
        pub location: Location,
        /// The stops on the way.
        pub stops: Vec<Location>,
        /// The unit.
        pub unit: Unit,
        /// Places by name.
        pub by_name: HashMap<String, Location>,
        /// Filters by key.
        pub filters: BTreeMap<String, Filter>,
        /// A boxed place.
        pub boxed: Box<Location>,
        /// An optional place (not routed).
        pub maybe: Option<Location>,
        /// A place with its own attribute (not routed).
        #[serde(default)]
        pub fallback: Option<Location>,
        /// Any JSON.
        pub extra: Value,
        /// A count.
        pub count: u32,
    }
}

fn full() -> Value {
    json!({
        "location": {"city": "Paris", "zip": "75001"},
        "stops": [{"city": "Lyon"}, {"city": "Dijon", "zip": null}],
        "unit": "celsius",
        "by_name": {"home": {"city": "Nice"}},
        "filters": {"a": {"op": "eq", "value": [1, 2]}, "b": {"op": "below", "bound": -3}, "c": {"op": "near", "place": {"city": "Albi"}, "km": 5}},
        "boxed": {"city": "Metz"},
        "maybe": null,
        "extra": {"any": true},
        "count": 7
    })
}

#[test]
fn routed_fields_give_the_schema_the_derives_give() {
    let routed = pi_tool::schemars::schema_for!(routed::Params);
    let derived = pi_tool::schemars::schema_for!(derived::Params);
    assert_eq!(
        serde_json::to_string_pretty(&routed).expect("schema"),
        serde_json::to_string_pretty(&derived).expect("schema")
    );
    assert_eq!(
        ToolSchema::for_type::<routed::Params>().json().to_string(),
        ToolSchema::for_type::<derived::Params>().json().to_string()
    );
    // The routed fields are required, the `Option` ones are not, as without the routing.
    let required = ToolSchema::for_type::<routed::Params>().json()["required"].clone();
    assert_eq!(
        required,
        json!([
            "location", "stops", "unit", "by_name", "filters", "boxed", "extra", "count"
        ])
    );
}

/// The values, or the errors' texts, of both forms for the same arguments.
fn both(args: &Value) -> (Result<String, String>, Result<String, String>) {
    let routed = deserialize_params::<routed::Params>("t", args)
        .map(|p| format!("{p:?}"))
        .map_err(|e| e.message().to_owned());
    let derived = deserialize_params::<derived::Params>("t", args)
        .map(|p| format!("{p:?}"))
        .map_err(|e| e.message().to_owned());
    (routed, derived)
}

#[test]
fn routed_fields_read_the_values_the_derives_read() {
    let (routed, derived) = both(&full());
    assert!(routed.is_ok(), "{routed:?}");
    assert_eq!(routed, derived);
}

#[test]
fn routed_fields_fail_with_the_errors_the_derives_give() {
    let mut cases = Vec::new();
    for field in ["location", "stops", "unit", "by_name", "boxed", "extra"] {
        let mut args = full();
        args.as_object_mut().expect("object").remove(field);
        cases.push(args);
    }
    let mut args = full();
    args["location"]["city"] = json!(3);
    cases.push(args);
    let mut args = full();
    args["stops"][1]["city"] = json!(null);
    cases.push(args);
    let mut args = full();
    args["unit"] = json!("kelvin");
    cases.push(args);
    let mut args = full();
    args["by_name"]["home"] = json!("Nice");
    cases.push(args);
    let mut args = full();
    args["filters"]["a"] = json!({"op": "near", "km": 1});
    cases.push(args);
    let mut args = full();
    args["filters"]["c"]["place"] = json!({"town": "Albi"});
    cases.push(args);
    let mut args = full();
    args["surplus"] = json!("FR");
    cases.push(args);
    let mut args = full();
    args["boxed"] = json!([]);
    cases.push(args);
    for args in cases {
        let (routed, derived) = both(&args);
        assert!(routed.is_err(), "{args}");
        assert_eq!(routed, derived, "{args}");
    }
    // A nested error keeps its path through a routed field.
    let mut args = full();
    args["location"]["city"] = json!(3);
    let (routed, _) = both(&args);
    let message = routed.expect_err("invalid");
    assert!(
        message.contains("location.city") || message.contains("location/city"),
        "{message}"
    );
}
