//! Content blocks: what a tool shows the model.
//!
//! The JSON shape is Pi's: `{"type":"text","text":…}` and
//! `{"type":"image","data":<base64>,"mimeType":…}`.

use serde::{Deserialize, Serialize};

/// One block of a tool result or progress update (Pi's `TextContent | ImageContent`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Content {
    /// Plain text (Pi's `TextContent`).
    Text {
        /// The text the model reads.
        text: String,
    },
    /// An image (Pi's `ImageContent`).
    Image {
        /// The image bytes, base64-encoded.
        data: String,
        /// The MIME type, for example `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// An image block from base64 data and its MIME type.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// The text of a text block, `None` for an image.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text } => Some(text),
            Content::Image { .. } => None,
        }
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Content::text(text)
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Content::text(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serde_shape_is_pis() {
        assert_eq!(
            serde_json::to_value(Content::text("hi")).unwrap(),
            json!({"type": "text", "text": "hi"})
        );
        assert_eq!(
            serde_json::to_value(Content::image("AAA=", "image/png")).unwrap(),
            json!({"type": "image", "data": "AAA=", "mimeType": "image/png"})
        );
        let back: Content =
            serde_json::from_value(json!({"type": "image", "data": "x", "mimeType": "image/gif"}))
                .unwrap();
        assert_eq!(back, Content::image("x", "image/gif"));
    }
}
