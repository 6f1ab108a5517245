//! pi-ai's `shortHash` (`utils/hash.js`): a fast deterministic hash that shortens long
//! ids (tool-call ids, OpenAI item ids) into a few base-36 characters.

/// pi-ai's `shortHash(str)`: two 32-bit multiply-xor lanes over the UTF-16 code units of
/// `text`, printed as two unsigned base-36 numbers (`h2` then `h1`, no padding).
pub(crate) fn short_hash(text: &str) -> String {
    let mut h1: u32 = 0xdead_beef;
    let mut h2: u32 = 0x41c6_ce57;
    // JavaScript strings are UTF-16: `charCodeAt` reads code units, so astral characters
    // feed their two surrogates.
    for unit in text.encode_utf16() {
        let ch = u32::from(unit);
        h1 = (h1 ^ ch).wrapping_mul(2_654_435_761);
        h2 = (h2 ^ ch).wrapping_mul(1_597_334_677);
    }
    h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h2 ^ (h2 >> 13)).wrapping_mul(3_266_489_909);
    h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h1 ^ (h1 >> 13)).wrapping_mul(3_266_489_909);
    let mut out = base36(h2);
    out.push_str(&base36(h1));
    out
}

/// `(n >>> 0).toString(36)`.
fn base36(mut n: u32) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut buf = Vec::with_capacity(7);
    loop {
        buf.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    buf.reverse();
    String::from_utf8(buf).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::short_hash;

    #[test]
    fn matches_pi_ai() {
        // Vectors from pi-ai 0.85.0's shortHash under Node 22.
        for (input, expected) in VECTORS {
            assert_eq!(short_hash(input), *expected, "shortHash({input:?})");
        }
        assert_eq!(short_hash(&"x".repeat(500)), "130aesn1aldl4j");
    }

    const VECTORS: &[(&str, &str)] = &[
        ("", "k4n83c7h0j2b"),
        ("a", "m8735310ae7sx"),
        ("abc", "y0biex7f9bbh"),
        ("call_0123456789", "1sgqnhnrl0ct6"),
        ("fc_68c1b2e3a4d5f6|rs_0a1b2c3d", "1ufr2mvxtdrjd"),
        ("toolu_01A09q90qw90lq917835lq9", "16u9r0o1roxgrb"),
        ("\u{e9}", "1ohi2dgmq6lzp"),
        ("\u{1F600} emoji", "10l7wx41397zoo"),
        ("\u{0}", "tlnwb21t8w38a"),
        ("msg_abc:read,write", "ccz7kw3knwme"),
    ];
}
