//! `read`'s images: Pi's MIME sniffing (`utils/mime.ts`), BMP conversion, and the resize
//! to at most 2000×2000 pixels and 4.5 MB of base64 (`utils/image-resize-core.ts`), with the
//! `image` crate in place of Photon (which is the `image` crate compiled to WebAssembly).

use std::io::Cursor;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader};

/// The bytes Pi reads from a file to recognise an image.
pub(crate) const SNIFF_BYTES: usize = 4100;
const MAX_WIDTH: u32 = 2000;
const MAX_HEIGHT: u32 = 2000;
const MAX_BASE64_BYTES: usize = 4_718_592; // 4.5 MB
const JPEG_QUALITIES: [u8; 5] = [80, 85, 70, 55, 40];
const PNG_SIGNATURE: [u8; 8] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

fn u32_be(b: &[u8], at: usize) -> u32 {
    let byte = |i: usize| u32::from(b.get(at + i).copied().unwrap_or(0));
    (byte(0) << 24) | (byte(1) << 16) | (byte(2) << 8) | byte(3)
}

fn u32_le(b: &[u8], at: usize) -> u32 {
    let byte = |i: usize| u32::from(b.get(at + i).copied().unwrap_or(0));
    byte(0) | (byte(1) << 8) | (byte(2) << 16) | (byte(3) << 24)
}

fn u16_le(b: &[u8], at: usize) -> u32 {
    let byte = |i: usize| u32::from(b.get(at + i).copied().unwrap_or(0));
    byte(0) | (byte(1) << 8)
}

fn ascii_at(b: &[u8], at: usize, text: &str) -> bool {
    b.get(at..at + text.len()) == Some(text.as_bytes())
}

/// Pi's `detectSupportedImageMimeType`: JPEG, PNG (not animated), GIF, WebP, BMP.
pub(crate) fn detect_mime(b: &[u8]) -> Option<&'static str> {
    if b.starts_with(&[0xff, 0xd8, 0xff]) {
        return (b.get(3) != Some(&0xf7)).then_some("image/jpeg");
    }
    if b.starts_with(&PNG_SIGNATURE) {
        let is_png = b.len() >= 16 && u32_be(b, 8) == 13 && ascii_at(b, 12, "IHDR");
        return (is_png && !is_animated_png(b)).then_some("image/png");
    }
    if ascii_at(b, 0, "GIF") {
        return Some("image/gif");
    }
    if ascii_at(b, 0, "RIFF") && ascii_at(b, 8, "WEBP") {
        return Some("image/webp");
    }
    if ascii_at(b, 0, "BM") && is_bmp(b) {
        return Some("image/bmp");
    }
    None
}

fn is_animated_png(b: &[u8]) -> bool {
    let mut offset = PNG_SIGNATURE.len();
    while offset + 8 <= b.len() {
        let length = u32_be(b, offset) as usize;
        if ascii_at(b, offset + 4, "acTL") {
            return true;
        }
        if ascii_at(b, offset + 4, "IDAT") {
            return false;
        }
        let next = offset.saturating_add(12).saturating_add(length);
        if next <= offset || next > b.len() {
            return false;
        }
        offset = next;
    }
    false
}

fn is_bmp(b: &[u8]) -> bool {
    if b.len() < 26 {
        return false;
    }
    let declared = u32_le(b, 2);
    let pixels_at = u32_le(b, 10);
    let dib = u32_le(b, 14);
    if declared != 0 && declared < 26 {
        return false;
    }
    if u64::from(pixels_at) < 14 + u64::from(dib) {
        return false;
    }
    if declared != 0 && pixels_at >= declared {
        return false;
    }
    let (planes, bits) = if dib == 12 {
        (u16_le(b, 22), u16_le(b, 24))
    } else if (40..=124).contains(&dib) {
        if b.len() < 30 {
            return false;
        }
        (u16_le(b, 26), u16_le(b, 28))
    } else {
        return false;
    };
    planes == 1 && [1, 4, 8, 16, 24, 32].contains(&bits)
}

/// What `read` sends for an image: the text note's extra lines and the image, or the note
/// that replaces it.
pub(crate) enum Processed {
    /// An inline image.
    Ok {
        data: String,
        mime_type: String,
        hints: Vec<String>,
    },
    /// Why there is no image.
    Omitted(&'static str),
}

fn decode(bytes: &[u8]) -> Option<DynamicImage> {
    let reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .ok()?;
    let mut decoder = reader.into_decoder().ok()?;
    let orientation = decoder.orientation().ok();
    let mut image = DynamicImage::from_decoder(decoder).ok()?;
    if let Some(orientation) = orientation {
        image.apply_orientation(orientation);
    }
    Some(image)
}

fn encode(image: &DynamicImage, format: ImageFormat) -> Option<Vec<u8>> {
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, format).ok()?;
    Some(out.into_inner())
}

fn encode_jpeg(image: &DynamicImage, quality: u8) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let rgb = image.to_rgb8();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality)
        .encode_image(&rgb)
        .ok()?;
    Some(out)
}

/// Pi's `processImage`: BMP becomes PNG; with `auto_resize`, the image is made to fit.
pub(crate) fn process(bytes: &[u8], mime: &str, auto_resize: bool) -> Processed {
    let (bytes, mime, converted_from): (std::borrow::Cow<'_, [u8]>, &str, Option<&str>) = if mime
        == "image/bmp"
    {
        match decode(bytes)
            .and_then(|img| encode(&DynamicImage::ImageRgba8(img.to_rgba8()), ImageFormat::Png))
        {
            Some(png) => (png.into(), "image/png", Some("image/bmp")),
            None => {
                return Processed::Omitted(
                    "[Image omitted: could not be converted to a supported inline image format.]",
                );
            }
        }
    } else {
        (bytes.into(), mime, None)
    };
    let mut hints = Vec::new();
    if !auto_resize {
        if let Some(from) = converted_from {
            hints.push(format!("[Image converted from {from} to {mime}.]"));
        }
        return Processed::Ok {
            data: STANDARD.encode(&bytes),
            mime_type: mime.to_owned(),
            hints,
        };
    }
    let Some(resized) = resize(&bytes, mime) else {
        return Processed::Omitted(
            "[Image omitted: could not be resized below the inline image size limit.]",
        );
    };
    if let Some(from) = converted_from.filter(|from| *from != resized.mime_type) {
        hints.push(format!(
            "[Image converted from {from} to {}.]",
            resized.mime_type
        ));
    }
    if resized.was_resized {
        let scale = f64::from(resized.original.0) / f64::from(resized.size.0);
        hints.push(format!(
            "[Image: original {}x{}, displayed at {}x{}. Multiply coordinates by {} to map to original image.]",
            resized.original.0,
            resized.original.1,
            resized.size.0,
            resized.size.1,
            to_fixed2(scale)
        ));
    }
    Processed::Ok {
        data: resized.data,
        mime_type: resized.mime_type,
        hints,
    }
}

/// `n.toFixed(2)`: a tie rounds up, as JavaScript's does.
fn to_fixed2(n: f64) -> String {
    let scaled = n * 100.0;
    let rounded = if (scaled - scaled.floor() - 0.5).abs() < 1e-9 {
        scaled.floor() + 1.0
    } else {
        scaled.round()
    };
    format!("{:.2}", rounded / 100.0)
}

struct Resized {
    data: String,
    mime_type: String,
    original: (u32, u32),
    size: (u32, u32),
    was_resized: bool,
}

fn base64_len(n: usize) -> usize {
    n.div_ceil(3) * 4
}

fn round_half_up(x: f64) -> u32 {
    (x + 0.5).floor().max(0.0) as u32
}

fn resize(bytes: &[u8], mime: &str) -> Option<Resized> {
    let image = decode(bytes)?;
    let (width, height) = (image.width(), image.height());
    if width <= MAX_WIDTH && height <= MAX_HEIGHT && base64_len(bytes.len()) < MAX_BASE64_BYTES {
        return Some(Resized {
            data: STANDARD.encode(bytes),
            mime_type: mime.to_owned(),
            original: (width, height),
            size: (width, height),
            was_resized: false,
        });
    }
    let (mut w, mut h) = (width, height);
    if w > MAX_WIDTH {
        h = round_half_up(f64::from(h) * f64::from(MAX_WIDTH) / f64::from(w));
        w = MAX_WIDTH;
    }
    if h > MAX_HEIGHT {
        w = round_half_up(f64::from(w) * f64::from(MAX_HEIGHT) / f64::from(h));
        h = MAX_HEIGHT;
    }
    loop {
        let small = image.resize_exact(w, h, image::imageops::FilterType::Lanczos3);
        let rgba = DynamicImage::ImageRgba8(small.to_rgba8());
        let mut candidates: Vec<(Vec<u8>, &str)> = Vec::new();
        if let Some(png) = encode(&rgba, ImageFormat::Png) {
            candidates.push((png, "image/png"));
        }
        for q in JPEG_QUALITIES {
            if let Some(jpeg) = encode_jpeg(&rgba, q) {
                candidates.push((jpeg, "image/jpeg"));
            }
        }
        for (data, mime_type) in candidates {
            if base64_len(data.len()) < MAX_BASE64_BYTES {
                return Some(Resized {
                    data: STANDARD.encode(&data),
                    mime_type: mime_type.to_owned(),
                    original: (width, height),
                    size: (w, h),
                    was_resized: true,
                });
            }
        }
        if w == 1 && h == 1 {
            return None;
        }
        let next_w = if w == 1 {
            1
        } else {
            ((f64::from(w) * 0.75).floor() as u32).max(1)
        };
        let next_h = if h == 1 {
            1
        } else {
            ((f64::from(h) * 0.75).floor() as u32).max(1)
        };
        if next_w == w && next_h == h {
            return None;
        }
        (w, h) = (next_w, next_h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_like_pi() {
        assert_eq!(detect_mime(b"GIF89a"), Some("image/gif"));
        assert_eq!(detect_mime(&[0xff, 0xd8, 0xff, 0xe0]), Some("image/jpeg"));
        assert_eq!(detect_mime(&[0xff, 0xd8, 0xff, 0xf7]), None);
        assert_eq!(detect_mime(b"hello"), None);
    }

    #[test]
    fn ties_round_up() {
        assert_eq!(to_fixed2(1.05), "1.05");
        assert_eq!(to_fixed2(1.125), "1.13");
    }
}
