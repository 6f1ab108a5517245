use pi_tool::{pi_tool, Json, ToolError};

pub struct Forecast {
    pub celsius: i32,
}

/// Return the forecast.
#[pi_tool]
pub async fn get_forecast() -> Result<Json<Forecast>, ToolError> {
    Ok(Json(Forecast { celsius: 18 }))
}

fn main() {}
