//! Content blocks: what a tool shows the model.
//!
//! The JSON shape is Pi's: `{"type":"text","text":…}` and
//! `{"type":"image","data":<base64>,"mimeType":…}`; the kinds Pi does not have are MCP's
//! (`audio`, `resource_link`, `resource`), with MCP's JSON shape. Models read text and
//! images only: [`Content::for_model`] is what a provider sends for the other kinds
//! (docs/differences-from-pi.md).

use serde::{Deserialize, Serialize};

/// One block of a tool result or progress update: Pi's `TextContent | ImageContent`, and
/// MCP's audio, resource links and embedded resources.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
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
    /// Audio (MCP's `AudioContent`; not in Pi).
    Audio {
        /// The audio bytes, base64-encoded.
        data: String,
        /// The MIME type, for example `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A link to a resource the client may read (MCP's `ResourceLink`; not in Pi).
    #[serde(rename = "resource_link")]
    ResourceLink(ResourceLink),
    /// A resource's contents, embedded (MCP's `EmbeddedResource`; not in Pi).
    Resource {
        /// The contents: text or base64 bytes.
        resource: EmbeddedResource,
    },
}

/// Where a [`Content::ResourceLink`] points.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceLink {
    /// The resource's URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// Its MIME type, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// What it is, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl ResourceLink {
    /// A link to `uri`, called `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceLink {
            uri: uri.into(),
            name: name.into(),
            mime_type: None,
            description: None,
        }
    }

    /// With a MIME type.
    #[must_use]
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// With a description.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// The contents of a [`Content::Resource`]: text, or bytes (MCP's
/// `TextResourceContents | BlobResourceContents`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum EmbeddedResource {
    /// Text contents.
    Text {
        /// The resource's URI.
        uri: String,
        /// Its MIME type, when known.
        #[serde(default, rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The text.
        text: String,
    },
    /// Binary contents.
    Blob {
        /// The resource's URI.
        uri: String,
        /// Its MIME type, when known.
        #[serde(default, rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The bytes, base64-encoded.
        blob: String,
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

    /// An audio block from base64 data and its MIME type.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// A resource link block.
    pub fn resource_link(link: ResourceLink) -> Self {
        Content::ResourceLink(link)
    }

    /// An embedded text resource.
    pub fn resource_text(
        uri: impl Into<String>,
        mime_type: Option<String>,
        text: impl Into<String>,
    ) -> Self {
        Content::Resource {
            resource: EmbeddedResource::Text {
                uri: uri.into(),
                mime_type,
                text: text.into(),
            },
        }
    }

    /// An embedded binary resource from base64 data.
    pub fn resource_blob(
        uri: impl Into<String>,
        mime_type: Option<String>,
        blob: impl Into<String>,
    ) -> Self {
        Content::Resource {
            resource: EmbeddedResource::Blob {
                uri: uri.into(),
                mime_type,
                blob: blob.into(),
            },
        }
    }

    /// The text of a text block, `None` for the other kinds.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text } => Some(text),
            _ => None,
        }
    }

    /// What a model is sent for this block. The chat APIs pi-tool speaks
    /// (`anthropic-messages`, `openai-completions`, `openai-responses`) take text and
    /// images in a tool result, so text and images stay as they are, an embedded
    /// resource whose MIME type is `image/*` becomes that image, and the other kinds
    /// become text saying what they are: an embedded text resource its text under its
    /// URI, a link its name and URI, audio and other bytes their type and size (the
    /// bytes themselves are not sent).
    pub fn for_model(&self) -> Content {
        match self {
            Content::Text { .. } | Content::Image { .. } => self.clone(),
            Content::Audio { data, mime_type } => Content::text(format!(
                "[audio: {mime_type}, {} bytes, not shown to the model]",
                base64_len(data)
            )),
            Content::ResourceLink(link) => {
                let mut text = format!("[resource link: {} <{}>", link.name, link.uri);
                if let Some(mime_type) = &link.mime_type {
                    text.push_str(&format!(" ({mime_type})"));
                }
                if let Some(description) = &link.description {
                    text.push_str(&format!(": {description}"));
                }
                text.push(']');
                Content::text(text)
            }
            Content::Resource { resource } => match resource {
                EmbeddedResource::Text { uri, text, .. } => {
                    Content::text(format!("[resource {uri}]\n{text}"))
                }
                EmbeddedResource::Blob {
                    mime_type: Some(mime_type),
                    blob,
                    ..
                } if mime_type.starts_with("image/") => {
                    Content::image(blob.clone(), mime_type.clone())
                }
                EmbeddedResource::Blob {
                    uri,
                    mime_type,
                    blob,
                } => Content::text(format!(
                    "[resource {uri}: {}, {} bytes, not shown to the model]",
                    mime_type.as_deref().unwrap_or("application/octet-stream"),
                    base64_len(blob)
                )),
            },
        }
    }
}

/// The number of bytes base64 text decodes to (padding aside), without decoding it.
fn base64_len(data: &str) -> usize {
    let digits = data
        .bytes()
        .filter(|b| !b.is_ascii_whitespace() && *b != b'=')
        .count();
    digits * 3 / 4
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

    #[test]
    fn mcp_kinds_have_mcps_shape() {
        let cases = [
            (
                Content::audio("UklG", "audio/wav"),
                json!({"type": "audio", "data": "UklG", "mimeType": "audio/wav"}),
            ),
            (
                Content::resource_link(
                    ResourceLink::new("file:///a.txt", "a").mime_type("text/plain"),
                ),
                json!({"type": "resource_link", "uri": "file:///a.txt", "name": "a", "mimeType": "text/plain"}),
            ),
            (
                Content::resource_text("test://r", Some("text/plain".into()), "hi"),
                json!({"type": "resource", "resource": {"uri": "test://r", "mimeType": "text/plain", "text": "hi"}}),
            ),
            (
                Content::resource_blob("test://b", None, "AAEC"),
                json!({"type": "resource", "resource": {"uri": "test://b", "blob": "AAEC"}}),
            ),
        ];
        for (content, shape) in cases {
            assert_eq!(serde_json::to_value(&content).unwrap(), shape);
            assert_eq!(serde_json::from_value::<Content>(shape).unwrap(), content);
        }
    }

    #[test]
    fn models_get_text_or_images() {
        assert_eq!(
            Content::audio("UklGRg==", "audio/wav").for_model(),
            Content::text("[audio: audio/wav, 4 bytes, not shown to the model]")
        );
        assert_eq!(
            Content::resource_link(ResourceLink::new("file:///a", "a").description("the a file"))
                .for_model(),
            Content::text("[resource link: a <file:///a>: the a file]")
        );
        assert_eq!(
            Content::resource_text("test://r", None, "hi").for_model(),
            Content::text("[resource test://r]\nhi")
        );
        assert_eq!(
            Content::resource_blob("test://p", Some("image/png".into()), "iVBO").for_model(),
            Content::image("iVBO", "image/png")
        );
        assert_eq!(
            Content::resource_blob("test://z", None, "AAAA").for_model(),
            Content::text(
                "[resource test://z: application/octet-stream, 3 bytes, not shown to the model]"
            )
        );
        assert_eq!(Content::text("t").for_model(), Content::text("t"));
    }
}
