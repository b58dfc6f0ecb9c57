//! One escape for the markup we write: the report page (HTML) and the
//! conformance kit's JUnit report (XML 1.0).

/// `s` escaped for text and quoted attribute values, valid in both HTML
/// and XML 1.0: the five special characters become references (`'` the
/// numeric `&#39;`, which both read), and characters XML 1.0 cannot hold
/// (C0 controls but tab, newline and carriage return; U+FFFE, U+FFFF)
/// become U+FFFD.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            '\t' | '\n' | '\r' => o.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => o.push('\u{fffd}'),
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escapes_markup_and_replaces_what_xml_cannot_hold() {
        assert_eq!(
            escape("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
        assert_eq!(escape("a\tb\nc\rd"), "a\tb\nc\rd");
        assert_eq!(
            escape("\u{0}\u{1b}\u{fffe}\u{ffff}é"),
            "\u{fffd}\u{fffd}\u{fffd}\u{fffd}é"
        );
    }
}
