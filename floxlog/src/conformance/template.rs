//! Adapter command templates: split into words as a POSIX shell would
//! (quotes and backslashes honoured; no expansion, no shell run), then
//! `{placeholder}`s replaced inside each word, so a path with spaces stays
//! one argument.

/// A command template, split into words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    /// The template as given (for messages).
    pub text: String,
    words: Vec<String>,
}

/// Cuts `s` into words: blanks separate words; `'...'` is literal;
/// `"..."` is literal except that a backslash escapes `"`, `\`, `$` and
/// `` ` ``; a backslash outside quotes escapes the next character.
pub fn split_words(s: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => return Err("unterminated single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => cur.push(c),
                            Some('\n') => {}
                            Some(c) => {
                                cur.push('\\');
                                cur.push(c);
                            }
                            None => return Err("unterminated double quote".into()),
                        },
                        Some(c) => cur.push(c),
                        None => return Err("unterminated double quote".into()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(c) => {
                    in_word = true;
                    cur.push(c);
                }
                None => return Err("trailing backslash".into()),
            },
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

impl Template {
    /// Parses `text`, which must name a program and use every placeholder
    /// of `required` (e.g. `{segment}`).
    pub fn parse(text: &str, required: &[&str]) -> Result<Template, String> {
        let words = split_words(text).map_err(|e| format!("`{text}`: {e}"))?;
        if words.is_empty() {
            return Err("the template is empty: it must start with the adapter's program".into());
        }
        for p in required {
            if !words.iter().any(|w| w.contains(p)) {
                return Err(format!("`{text}` does not contain {p}"));
            }
        }
        Ok(Template {
            text: text.to_string(),
            words,
        })
    }

    /// The words with each `(placeholder, value)` replaced.
    pub fn expand(&self, subs: &[(&str, &str)]) -> Vec<String> {
        self.words
            .iter()
            .map(|w| subs.iter().fold(w.clone(), |acc, (k, v)| acc.replace(k, v)))
            .collect()
    }

    /// The template with the word `flag` inserted right before the first
    /// word containing `placeholder` (the protocol's index-check call).
    pub fn with_flag_before(&self, flag: &str, placeholder: &str) -> Template {
        let mut words = self.words.clone();
        let at = words
            .iter()
            .position(|w| w.contains(placeholder))
            .unwrap_or(words.len());
        words.insert(at, flag.to_string());
        Template {
            text: self.text.clone(),
            words,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_a_shell() {
        assert_eq!(
            split_words(r#"a  'b c' "d \"e\" \x" f\ g {segment}"#).unwrap(),
            ["a", "b c", r#"d "e" \x"#, "f g", "{segment}"]
        );
        assert_eq!(split_words("''").unwrap(), [""]);
        assert!(split_words("a 'b").is_err());
        assert!(split_words("a \"b").is_err());
        assert!(split_words("a \\").is_err());
    }

    #[test]
    fn expands_inside_words_and_inserts_the_index_flag() {
        let t = Template::parse("r.sh --in={segment} -v", &["{segment}"]).unwrap();
        assert_eq!(
            t.expand(&[("{segment}", "/a b/s.floxlog")]),
            ["r.sh", "--in=/a b/s.floxlog", "-v"]
        );
        let i = t.with_flag_before("--index", "{segment}");
        assert_eq!(
            i.expand(&[("{segment}", "S")]),
            ["r.sh", "--index", "--in=S", "-v"]
        );
        assert!(Template::parse("r.sh", &["{segment}"]).is_err());
        assert!(Template::parse("  ", &[]).is_err());
    }
}
