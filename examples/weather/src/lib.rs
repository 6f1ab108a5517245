//! The seed guide's get_weather tool.
