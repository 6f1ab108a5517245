//! `Json<T>` results: an object root and a wrapped one.
use pi_tool::{Json, JsonSchema, Tool, ToolError, pi_tool};
use serde::Serialize;

#[derive(Serialize, JsonSchema)]
#[schemars(crate = "pi_tool::schemars")]
pub struct Forecast {
    pub celsius: i32,
}

/// Return the forecast.
#[pi_tool(read_only)]
pub async fn get_forecast() -> Result<Json<Forecast>, ToolError> {
    Ok(Json(Forecast { celsius: 18 }))
}

/// Return the cities.
#[pi_tool(read_only)]
pub async fn cities() -> Result<Json<Vec<String>>, ToolError> {
    Ok(Json(vec!["Paris".to_owned()]))
}

fn main() {
    assert!(!GetForecast::output_schema().unwrap().is_wrapped());
    assert!(Cities::output_schema().unwrap().is_wrapped());
}
