//! Parameter types that exercise every schemars shape the normalisation and the
//! provider profiles must handle, with their real schemars output.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::num::NonZeroU32;

use pi_tool::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Search the web.
///
/// Second paragraph of the doc.
#[derive(Deserialize, JsonSchema)]
pub struct Validations {
    /// The query
    #[schemars(length(min = 1, max = 80))]
    pub query: String,
    #[schemars(range(min = 1, max = 100))]
    pub limit: u32,
    #[schemars(range(min = 0.0, max = 1.0))]
    pub temperature: f64,
    #[schemars(regex(pattern = r"^[a-z]+$"))]
    pub slug: String,
    #[schemars(email)]
    pub email: String,
    #[schemars(url)]
    pub url: String,
    #[schemars(length(min = 1, max = 5))]
    pub tags: Vec<String>,
    #[schemars(extend("examples" = ["foo", "bar"], "x-custom" = true))]
    pub extended: String,
    #[schemars(title = "My Title", description = "desc")]
    pub titled: String,
}

/// Options test struct.
#[derive(Deserialize, JsonSchema)]
pub struct Opts {
    /// plain optional, no serde default
    pub a: Option<String>,
    /// optional with serde(default)
    #[serde(default)]
    pub b: Option<String>,
    /// non-option with serde(default)
    #[serde(default)]
    pub c: u32,
    /// option of struct
    pub e: Option<Inner>,
    /// nested option
    pub f: Option<Option<bool>>,
    /// default fn
    #[serde(default = "default_g")]
    pub g: String,
}

fn default_g() -> String {
    "hello".into()
}

/// An inner struct
#[derive(Deserialize, Serialize, JsonSchema, Default, PartialEq)]
pub struct Inner {
    /// x coordinate
    pub x: f64,
    pub y: f32,
}

#[derive(Deserialize, JsonSchema)]
pub struct Address {
    pub street: String,
    pub city: String,
}

/// Nested structs, references with documented fields.
#[derive(Deserialize, JsonSchema)]
pub struct Nested {
    pub inner: Inner,
    pub inners: Vec<Inner>,
    pub maybe: Option<Inner>,
    /// Shipping address
    pub ship_to: Address,
    /// Optional billing address
    pub bill_to: Option<Address>,
    pub deep: Option<Vec<Option<Inner>>>,
}

#[derive(Deserialize, JsonSchema)]
pub struct Maps {
    pub map: HashMap<String, i32>,
    pub bmap: BTreeMap<String, Inner>,
    pub free: serde_json::Map<String, Value>,
    pub opt_map: Option<HashMap<String, String>>,
    pub by_unit: HashMap<UnitNoDocs, String>,
}

/// Unit enum doc
#[derive(Deserialize, Serialize, JsonSchema, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// first variant
    #[default]
    FirstOne,
    SecondOne,
    /// the third
    #[serde(rename = "THIRD")]
    Third,
}

#[derive(Deserialize, Serialize, JsonSchema, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum UnitNoDocs {
    A,
    B,
    C,
}

/// Temperature unit.
#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TempUnit {
    /// Degrees Celsius
    Celsius,
    /// Degrees Fahrenheit
    Fahrenheit,
}

#[derive(Deserialize, JsonSchema)]
pub struct Enums {
    /// The unit to use
    pub unit: TempUnit,
    pub plain: UnitNoDocs,
    pub documented: Unit,
    pub maybe_unit: Option<TempUnit>,
    pub units: Vec<Unit>,
}

#[derive(Deserialize, JsonSchema)]
pub enum External {
    Unit,
    Newtype(String),
    Tuple(i32, bool),
    Struct { a: i32, b: Option<String> },
}

#[derive(Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Internal {
    /// Circle variant
    Circle {
        radius: f64,
    },
    Rect {
        w: f64,
        h: f64,
    },
    Empty,
    Wrapped(Inner),
}

#[derive(Deserialize, JsonSchema)]
#[serde(tag = "t", content = "c")]
pub enum Adjacent {
    A(String),
    B { x: i32 },
    C,
}

#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Untagged {
    Num(i64),
    Text(String),
    Obj { k: String },
}

#[derive(Deserialize, JsonSchema)]
pub struct TaggedFields {
    pub external: External,
    /// A shape
    pub shape: Internal,
    pub adjacent: Adjacent,
    pub untagged: Untagged,
    pub shapes: Vec<Internal>,
}

/// Outer struct with flattened parts.
#[derive(Deserialize, JsonSchema)]
pub struct Flat {
    pub own: String,
    #[serde(flatten)]
    pub inner: Inner,
    #[serde(flatten)]
    pub extra: HashMap<String, Value>,
}

/// A request with a flattened shape.
#[derive(Deserialize, JsonSchema)]
pub struct FlatEnum {
    /// Own field
    pub own: String,
    #[serde(flatten)]
    pub shape: Internal,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlatEnumDeny {
    pub own: String,
    #[serde(flatten)]
    pub shape: Internal,
}

/// A tree of names.
#[derive(Deserialize, JsonSchema)]
pub struct Recursive {
    pub name: String,
    pub children: Vec<Recursive>,
}

#[derive(Deserialize, JsonSchema)]
pub struct Tree {
    pub root: Node,
    pub label: Option<String>,
}

/// A linked node.
#[derive(Deserialize, JsonSchema)]
pub struct Node {
    pub value: i32,
    /// The next node
    pub next: Option<Box<Node>>,
    pub meta: Inner,
}

#[derive(Deserialize, JsonSchema)]
pub struct Mutual {
    pub a: A,
}

#[derive(Deserialize, JsonSchema)]
pub struct A {
    pub name: String,
    pub b: Option<Box<B>>,
}

#[derive(Deserialize, JsonSchema)]
pub struct B {
    pub items: Vec<A>,
    #[serde(default)]
    pub weight: u16,
}

#[derive(Deserialize, JsonSchema)]
pub struct Tuples {
    pub pair: (String, i32),
    pub rgb: [u8; 3],
    pub scored: Vec<(String, f64)>,
    pub same: (i32, i32),
}

#[derive(Deserialize, JsonSchema)]
pub struct JsonValues {
    /// Anything
    pub value: Value,
    pub maybe: Option<Value>,
    pub list: Vec<Value>,
}

#[derive(Deserialize, JsonSchema)]
pub struct Ints {
    pub a: u8,
    pub b: u16,
    pub c: u32,
    pub d: u64,
    pub e: usize,
    pub f: i8,
    pub g: i32,
    pub h: i64,
    pub j: f32,
    pub k: f64,
    pub l: NonZeroU32,
    pub m: u128,
    pub n: char,
    #[schemars(range(min = 10, max = 5_000_000_000u64))]
    pub loose: u32,
    #[schemars(range(min = -5))]
    pub narrow: i32,
}

#[derive(Deserialize, JsonSchema)]
pub struct Times {
    pub at: chrono::DateTime<chrono::Utc>,
    pub day: chrono::NaiveDate,
    pub local: chrono::NaiveDateTime,
    pub id: uuid::Uuid,
    pub maybe_day: Option<chrono::NaiveDate>,
    pub ip: std::net::IpAddr,
}

#[derive(Deserialize, JsonSchema)]
pub struct Collections {
    pub vec_opt: Vec<Option<String>>,
    pub set: HashSet<String>,
    pub bset: BTreeSet<i32>,
    pub opt_vec: Option<Vec<String>>,
    pub bytes: Vec<u8>,
}

fn ten() -> u32 {
    10
}

#[derive(Deserialize, JsonSchema)]
pub struct Defaults {
    #[serde(default = "ten")]
    pub page_size: u32,
    #[serde(default)]
    pub verbose: bool,
    #[serde(default)]
    pub unit: Unit,
    #[serde(default)]
    pub inner: Inner,
    pub query: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Renamed {
    pub user_name: String,
    #[serde(rename = "ID")]
    pub user_id: u32,
    #[serde(skip)]
    pub skipped: String,
    #[serde(alias = "other")]
    pub with_alias: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Closed {
    pub name: String,
    pub open: Address,
    pub closed: ClosedInner,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClosedInner {
    pub id: u32,
}

#[derive(Deserialize, JsonSchema)]
pub struct Generic<T> {
    pub value: T,
    pub values: Vec<T>,
}

#[derive(Deserialize, JsonSchema)]
pub struct UsesGeneric {
    pub a: Generic<String>,
    pub b: Generic<i32>,
    /// Documented generic
    pub c: Option<Generic<String>>,
}

/// Pick a shape.
#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RootInternal {
    /// Search by text
    Text { query: String, limit: Option<u32> },
    /// Search by date
    Date { from: String, to: String },
    /// Search by id
    Id { id: u64, limit: Option<u32> },
}

#[derive(Deserialize, JsonSchema)]
pub enum RootExternal {
    Add { a: i32, b: i32 },
    Neg { a: i32 },
}

/// Newtype params.
#[derive(Deserialize, JsonSchema)]
pub struct Newtype(pub String);

#[derive(Deserialize, JsonSchema)]
pub struct TupleStruct(pub String, pub i32);

#[derive(Deserialize, JsonSchema)]
pub struct UnitStruct;

#[derive(Deserialize, JsonSchema)]
pub struct Empty {}

#[derive(Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct Transparent {
    pub inner: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct Weather {
    /// City name, e.g. "Hanoi"
    pub city: String,
    /// Temperature unit
    #[serde(default = "celsius")]
    pub unit: TempUnit,
    /// How many days to forecast
    #[schemars(range(min = 1, max = 14))]
    pub days: Option<u8>,
}

fn celsius() -> TempUnit {
    TempUnit::Celsius
}

/// Generates the raw schemars output with the same settings as `ToolSchema::for_type`.
fn raw<T: JsonSchema>() -> Value {
    pi_tool::schema::generate::<T>()
}

/// Every object-rooted catalogue type: (snapshot name, raw schemars output).
pub fn object_cases() -> Vec<(&'static str, Value)> {
    vec![
        ("validations", raw::<Validations>()),
        ("opts", raw::<Opts>()),
        ("nested", raw::<Nested>()),
        ("maps", raw::<Maps>()),
        ("enums", raw::<Enums>()),
        ("tagged_fields", raw::<TaggedFields>()),
        ("flat", raw::<Flat>()),
        ("flat_enum", raw::<FlatEnum>()),
        ("flat_enum_deny", raw::<FlatEnumDeny>()),
        ("recursive", raw::<Recursive>()),
        ("tree", raw::<Tree>()),
        ("mutual", raw::<Mutual>()),
        ("tuples", raw::<Tuples>()),
        ("json_values", raw::<JsonValues>()),
        ("ints", raw::<Ints>()),
        ("times", raw::<Times>()),
        ("collections", raw::<Collections>()),
        ("defaults", raw::<Defaults>()),
        ("renamed", raw::<Renamed>()),
        ("closed", raw::<Closed>()),
        ("generics", raw::<UsesGeneric>()),
        ("root_internal", raw::<RootInternal>()),
        ("root_external", raw::<RootExternal>()),
        ("empty", raw::<Empty>()),
        ("weather", raw::<Weather>()),
        ("map_only", raw::<serde_json::Map<String, Value>>()),
    ]
}

/// Catalogue types whose root is not an object: (name, raw output, expected words).
pub fn non_object_cases() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        ("newtype", raw::<Newtype>(), "a string"),
        (
            "tuple_struct",
            raw::<TupleStruct>(),
            "a fixed-length array (a tuple)",
        ),
        ("unit_struct", raw::<UnitStruct>(), "null (a unit struct)"),
        ("unit_enum", raw::<UnitNoDocs>(), "a string"),
        (
            "external_enum",
            raw::<External>(),
            "a union (`oneOf`) whose variants are not all objects",
        ),
        ("json_value", raw::<Value>(), "any JSON value"),
        ("transparent", raw::<Transparent>(), "a string"),
        (
            "option_struct",
            raw::<Option<Inner>>(),
            "a union (`anyOf`) whose variants are not all objects",
        ),
        ("vec", raw::<Vec<String>>(), "an array"),
    ]
}
