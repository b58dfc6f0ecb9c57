//! Comparing a reader's events with `expected.jsonl`, field by field, and
//! saying where the first difference is.

use serde_json::Value;

/// Longest rendering of a value in a message (a deep book can be long).
const SHOW: usize = 200;

fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.len() <= SHOW {
        return s;
    }
    let mut cut = SHOW;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}...", &s[..cut])
}

/// The first difference inside one value: `(path, expected, got)`, the
/// path in `field[3][0]` form; `None` if equal. Missing and extra object
/// fields and array lengths are differences of their own.
fn first_diff(path: &str, exp: &Value, got: &Value) -> Option<String> {
    match (exp, got) {
        (Value::Object(e), Value::Object(g)) => {
            for (k, ev) in e {
                let p = if path.is_empty() {
                    format!("`{k}`")
                } else {
                    format!("{path}.{k}")
                };
                match g.get(k) {
                    None => return Some(format!("field {p} missing (expected {})", show(ev))),
                    Some(gv) => {
                        if let Some(d) = first_diff(&p, ev, gv) {
                            return Some(d);
                        }
                    }
                }
            }
            g.iter().find(|(k, _)| !e.contains_key(*k)).map(|(k, v)| {
                let k = super::process::shown(k);
                format!("unexpected field `{k}` (got {})", show(v))
            })
        }
        (Value::Array(e), Value::Array(g)) => {
            for (i, (ev, gv)) in e.iter().zip(g).enumerate() {
                if let Some(d) = first_diff(&format!("{path}[{i}]"), ev, gv) {
                    return Some(d);
                }
            }
            (e.len() != g.len()).then(|| {
                format!(
                    "field {path}: expected {} elements, got {}",
                    e.len(),
                    g.len()
                )
            })
        }
        // serde_json compares numbers exactly (u64, i64 and f64 apart), so
        // 1 and 1.0 differ: the schema's integers must be printed as such.
        _ if exp == got => None,
        _ => Some(format!(
            "field {}: expected {}, got {}",
            if path.is_empty() { "(event)" } else { path },
            show(exp),
            show(got)
        )),
    }
}

/// An event as a reader printed it, with the segment it came from.
#[derive(Clone, Debug)]
pub struct GotEvent {
    /// The parsed stdout line.
    pub value: Value,
    /// File name of the segment whose output held it.
    pub segment: String,
    /// Its line number in that segment's output (1-based, blank lines
    /// counted).
    pub line: usize,
}

/// Compares events in order: `Err` names the first difference (event
/// number counted from 0 over the whole case, where the reader printed it,
/// the field, expected and got), or the first missing or extra event.
pub fn compare_events(got: &[GotEvent], expected: &[Value]) -> Result<(), String> {
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        if let Some(d) = first_diff("", e, &g.value) {
            return Err(format!(
                "event {i} ({} output line {}; expected.jsonl event {}): {d}",
                g.segment,
                g.line,
                i + 1
            ));
        }
    }
    match got.len().cmp(&expected.len()) {
        std::cmp::Ordering::Equal => Ok(()),
        std::cmp::Ordering::Less => Err(format!(
            "missing events: got {}, expected {}; first missing is event {}: {}",
            got.len(),
            expected.len(),
            got.len(),
            show(&expected[got.len()])
        )),
        std::cmp::Ordering::Greater => {
            let x = &got[expected.len()];
            Err(format!(
                "extra events: got {}, expected {}; first extra is event {} ({} output line {}): {}",
                got.len(),
                expected.len(),
                expected.len(),
                x.segment,
                x.line,
                show(&x.value)
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn got(v: Vec<Value>) -> Vec<GotEvent> {
        v.into_iter()
            .enumerate()
            .map(|(i, value)| GotEvent {
                value,
                segment: "s.floxlog".into(),
                line: i + 1,
            })
            .collect()
    }

    #[test]
    fn names_the_event_and_field_of_the_first_difference() {
        let exp = vec![json!({"a": 1, "b": 2}), json!({"a": 3, "b": [[1, 2]]})];
        assert!(compare_events(&got(exp.clone()), &exp).is_ok());
        let e = compare_events(
            &got(vec![exp[0].clone(), json!({"a": 3, "b": [[1, 5]]})]),
            &exp,
        )
        .unwrap_err();
        assert!(e.starts_with("event 1 (s.floxlog output line 2"), "{e}");
        assert!(e.contains("field `b`[0][1]: expected 2, got 5"), "{e}");
        let e = compare_events(&got(vec![json!({"a": 1})]), &exp[..1]).unwrap_err();
        assert!(e.contains("field `b` missing (expected 2)"), "{e}");
        let e = compare_events(&got(vec![json!({"a": 1, "b": 2, "c": 0})]), &exp[..1]).unwrap_err();
        assert!(e.contains("unexpected field `c`"), "{e}");
        let e = compare_events(&got(vec![json!({"a": 1.0, "b": 2})]), &exp[..1]).unwrap_err();
        assert!(e.contains("field `a`: expected 1, got 1.0"), "{e}");
    }

    #[test]
    fn missing_and_extra_events() {
        let exp = vec![json!({"a": 1}), json!({"a": 2})];
        let e = compare_events(&got(exp[..1].to_vec()), &exp).unwrap_err();
        assert!(
            e.starts_with("missing events: got 1, expected 2; first missing is event 1"),
            "{e}"
        );
        let mut more = exp.clone();
        more.push(json!({"a": 9}));
        let e = compare_events(&got(more), &exp).unwrap_err();
        assert!(
            e.starts_with("extra events: got 3, expected 2; first extra is event 2"),
            "{e}"
        );
    }
}
