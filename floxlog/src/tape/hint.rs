//! Hints that point at a remedy (an operation or a setting) without naming
//! one interface's spelling of it: the library's errors and findings reach
//! users through the CLI, the C ABI and Python, and each names the remedy
//! in its own words (`--reorder-bytes`, `reorder_bytes`, ...). A front end
//! renders a hint with its [`Vocabulary`]; `Display` and `Serialize` use
//! [`Neutral`], which names no interface, unless the program set another
//! with [`set_program_vocabulary`].

use serde::{Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

static PROGRAM: OnceLock<&'static (dyn Vocabulary + Sync)> = OnceLock::new();

/// Makes `Display` and `Serialize` of hints (so of every error and finding)
/// use `v`. For a program that owns its process and has one vocabulary, as
/// the `floxlog` CLI does (every report it prints then names its flags);
/// a library (the C ABI, the Python module) never calls it, and renders
/// explicitly instead. Only the first call takes effect.
pub fn set_program_vocabulary(v: &'static (dyn Vocabulary + Sync)) {
    let _ = PROGRAM.set(v);
}

fn program() -> &'static dyn Vocabulary {
    match PROGRAM.get() {
        Some(v) => *v,
        None => &Neutral,
    }
}

/// An operation or setting a hint recommends. Operations fill a slot as a
/// noun phrase ("{} keeps every complete event"), settings as an
/// imperative phrase ("or {}").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Remedy {
    /// Operation: rewrite a segment's header and index from its frames,
    /// keeping the events before any damage.
    Recover,
    /// Operation: rebuild a finished segment's index.
    Reindex,
    /// Operation: rebuild `manifest.json` from the segment files.
    RebuildManifest,
    /// Operation: rebuild flox's `.manifest` from the segment files.
    RebuildFloxManifest,
    /// Operation: check the whole tape.
    Verify,
    /// Setting: read the segment files and not the manifest.
    IgnoreManifest,
    /// Setting: skip frames of record types 1.0 does not define.
    SkipUnknown,
    /// Setting: recover without keeping `.damaged` backups.
    NoBackup,
    /// Setting: raise the time-order merge's memory bound.
    RaiseReorderBytes,
    /// Setting: read each segment in file order (no merge).
    FileOrder,
    /// Setting: stamp segments with smaller `created_ns` values.
    SmallerCreatedNs,
    /// Operation (noun): the hook that stamps each new segment's
    /// `created_ns`.
    SegmentClock,
    /// Setting: replace an existing output.
    Overwrite,
}

impl Remedy {
    /// The interface-free wording ([`Neutral`]).
    pub fn neutral(self) -> &'static str {
        match self {
            Remedy::Recover => "recovering the segment",
            Remedy::Reindex => "reindexing the segment",
            Remedy::RebuildManifest => "rebuilding the manifest from the segment files",
            Remedy::RebuildFloxManifest => "rebuilding `.manifest` from the segment files",
            Remedy::Verify => "verifying the tape",
            Remedy::IgnoreManifest => "read the segment files without the manifest",
            Remedy::SkipUnknown => "skip frames of unknown record types",
            Remedy::NoBackup => "turn the backup off",
            Remedy::RaiseReorderBytes => "raise the reorder bound",
            Remedy::FileOrder => "read in file order",
            Remedy::SmallerCreatedNs => "start from a smaller created_ns",
            Remedy::SegmentClock => "the segment clock",
            Remedy::Overwrite => "allow replacing the output",
        }
    }
}

/// How one interface names remedies. `None` falls back to the neutral
/// wording (the interface has no such operation or setting).
pub trait Vocabulary {
    /// The interface's phrase for `r`, of the grammatical form its
    /// [`Remedy`] documents.
    fn remedy(&self, r: Remedy) -> Option<&'static str>;
}

/// Names no interface: what `Display` and `Serialize` show.
#[derive(Clone, Copy, Debug, Default)]
pub struct Neutral;

impl Vocabulary for Neutral {
    fn remedy(&self, _: Remedy) -> Option<&'static str> {
        None
    }
}

/// What to do about an error or finding: a text whose `{}` slots are
/// filled, in order, with remedies. Boxed: errors carry it in their `Err`
/// variants, which stay small; hints are built only on failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hint(Box<HintText>);

#[derive(Clone, Debug, PartialEq, Eq)]
struct HintText {
    text: Cow<'static, str>,
    remedies: Vec<Remedy>,
}

impl Hint {
    /// A hint whose `{}` slots name `remedies` in order.
    pub fn new(text: impl Into<Cow<'static, str>>, remedies: &[Remedy]) -> Hint {
        Hint(Box::new(HintText {
            text: text.into(),
            remedies: remedies.to_vec(),
        }))
    }

    /// The remedies named, in order.
    pub fn remedies(&self) -> &[Remedy] {
        &self.0.remedies
    }

    /// The text in `v`'s words.
    pub fn render(&self, v: &dyn Vocabulary) -> String {
        let HintText { text, remedies } = &*self.0;
        if remedies.is_empty() {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len() + 32);
        let mut rest: &str = text;
        for r in remedies {
            let Some((before, after)) = rest.split_once("{}") else {
                break;
            };
            out.push_str(before);
            out.push_str(v.remedy(*r).unwrap_or_else(|| r.neutral()));
            rest = after;
        }
        out.push_str(rest);
        out
    }

    /// The same hint as plain text in `v`'s words (no remedies left to
    /// name), for output that is printed or serialized later.
    pub fn localized(&self, v: &dyn Vocabulary) -> Hint {
        Hint::from(self.render(v))
    }
}

impl From<&'static str> for Hint {
    fn from(s: &'static str) -> Hint {
        Hint::new(s, &[])
    }
}

impl From<String> for Hint {
    fn from(s: String) -> Hint {
        Hint::new(s, &[])
    }
}

impl fmt::Display for Hint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(program()))
    }
}

impl Serialize for Hint {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.render(program()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Cli;
    impl Vocabulary for Cli {
        fn remedy(&self, r: Remedy) -> Option<&'static str> {
            (r == Remedy::FileOrder).then_some("read with --file-order")
        }
    }

    #[test]
    fn slots_are_filled_in_order_and_fall_back_to_neutral() {
        let h = Hint::new("{}, or {}", &[Remedy::RaiseReorderBytes, Remedy::FileOrder]);
        assert_eq!(
            h.render(&Cli),
            "raise the reorder bound, or read with --file-order"
        );
        assert_eq!(
            h.to_string(),
            "raise the reorder bound, or read in file order"
        );
        assert_eq!(h.localized(&Cli).remedies(), &[]);
        // Plain text keeps its braces.
        assert_eq!(Hint::from("a {} b").to_string(), "a {} b");
    }
}
