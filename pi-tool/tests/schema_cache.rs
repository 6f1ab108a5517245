//! The schema and its validator are built once per params type, however often they are used.
//!
//! Alone in its test binary: the build counter is process-wide, and other tests compile
//! schemas of their own.

use pi_tool::schema::ToolSchema;
use pi_tool::{JsonSchema, json};
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct WeatherParams {
    /// City name.
    city: String,
    unit: Option<String>,
}

#[test]
fn schema_is_built_once_per_type() {
    let before = pi_tool::__private::schema_builds();
    let first = ToolSchema::for_type::<WeatherParams>();
    for i in 0..1000 {
        let schema = ToolSchema::for_type::<WeatherParams>();
        assert!(std::sync::Arc::ptr_eq(&first, &schema));
        // `Option<String>` is `type: ["string", "null"]`: the null is kept.
        let args = json!({"city": i, "unit": null});
        assert_eq!(
            schema.validate("get_weather", &args).ok(),
            Some(json!({"city": i.to_string(), "unit": null}))
        );
        assert!(schema.validate("get_weather", &json!({"unit": 1})).is_err());
    }
    let threads: Vec<_> = (0..4)
        .map(|_| std::thread::spawn(ToolSchema::for_type::<WeatherParams>))
        .collect();
    for t in threads {
        let schema = t.join().expect("thread");
        assert!(std::sync::Arc::ptr_eq(&first, &schema));
    }
    assert_eq!(pi_tool::__private::schema_builds() - before, 1);
}
