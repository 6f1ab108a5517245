use pi_tool::{pi_tools, ToolError};
use serde::Deserialize;

#[derive(Deserialize, pi_tool::JsonSchema)]
#[schemars(crate = "pi_tool::schemars")]
pub struct Params {
    pub city: String,
}

pub struct Weather {
    pub cache: std::sync::Mutex<Vec<String>>,
}

#[pi_tools]
impl Weather {
    /// Return the weather for a city, caching the answer.
    #[pi_tool]
    pub async fn get_weather(&self, params: Params) -> Result<String, ToolError> {
        let mut cache = self.cache.lock().map_err(|_| ToolError::new("cache poisoned"))?;
        tokio::task::yield_now().await;
        cache.push(params.city.clone());
        Ok(params.city)
    }
}

fn main() {}
