//! Timestamps on the command line: integer nanoseconds since the epoch, or
//! ISO-8601 / RFC 3339 (`2024-04-26`, `2024-04-26T09:30:00Z`,
//! `2024-04-26 09:30:00.123456789+02:00`). A time without an offset is UTC.

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// (year, month, day) of a day number counted from 1970-01-01 (proleptic
/// Gregorian).
pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

struct P<'a> {
    s: &'a [u8],
    i: usize,
}

impl P<'_> {
    fn digits(&mut self, n: usize, what: &str) -> Result<i64, String> {
        let d = self
            .s
            .get(self.i..self.i + n)
            .ok_or_else(|| format!("expected {n} digits for the {what}"))?;
        if !d.iter().all(u8::is_ascii_digit) {
            return Err(format!("expected {n} digits for the {what}"));
        }
        self.i += n;
        Ok(d.iter().fold(0i64, |a, &c| a * 10 + (c - b'0') as i64))
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
}

/// Parses a timestamp argument into nanoseconds since the epoch.
pub fn parse_time(s: &str) -> Result<i64, String> {
    let t = s.trim();
    if !t.is_empty()
        && t.bytes()
            .enumerate()
            .all(|(i, c)| c.is_ascii_digit() || (i == 0 && c == b'-'))
    {
        return t.parse::<i64>().map_err(|e| format!("`{s}`: {e}"));
    }
    parse_iso(t).map_err(|e| format!("`{s}` is neither integer nanoseconds nor ISO-8601: {e}"))
}

fn parse_iso(t: &str) -> Result<i64, String> {
    let mut p = P {
        s: t.as_bytes(),
        i: 0,
    };
    let y = p.digits(4, "year")?;
    if !p.eat(b'-') {
        return Err("expected `-` after the year".into());
    }
    let mo = p.digits(2, "month")?;
    if !p.eat(b'-') {
        return Err("expected `-` after the month".into());
    }
    let d = p.digits(2, "day")?;
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) {
        return Err("no such date".into());
    }
    let (mut hh, mut mm, mut ss, mut frac) = (0i64, 0i64, 0i64, 0i64);
    if p.eat(b'T') || p.eat(b't') || p.eat(b' ') {
        hh = p.digits(2, "hour")?;
        if !p.eat(b':') {
            return Err("expected `:` after the hour".into());
        }
        mm = p.digits(2, "minute")?;
        if p.eat(b':') {
            ss = p.digits(2, "second")?;
            if p.eat(b'.') || p.eat(b',') {
                let start = p.i;
                while p.peek().is_some_and(|c| c.is_ascii_digit()) {
                    p.i += 1;
                }
                let ds = &t[start..p.i];
                if ds.is_empty() || ds.len() > 9 {
                    return Err("fraction of a second needs 1 to 9 digits".into());
                }
                frac =
                    ds.parse::<i64>().map_err(|e| e.to_string())? * 10i64.pow(9 - ds.len() as u32);
            }
        }
        if hh > 23 || mm > 59 || ss > 60 {
            return Err("no such time of day".into());
        }
    }
    let mut offset = 0i64;
    match p.peek() {
        None => {}
        Some(b'Z' | b'z') => p.i += 1,
        Some(c @ (b'+' | b'-')) => {
            p.i += 1;
            let oh = p.digits(2, "offset hours")?;
            p.eat(b':');
            let om = p.digits(2, "offset minutes")?;
            let sign = if c == b'+' { 1 } else { -1 };
            offset = sign * (oh * 3600 + om * 60);
        }
        Some(_) => return Err(format!("unexpected `{}`", &t[p.i..])),
    }
    if p.i != t.len() {
        return Err(format!("unexpected `{}`", &t[p.i..]));
    }
    let secs = days_from_civil(y, mo, d) * 86_400 + hh * 3600 + mm * 60 + ss - offset;
    secs.checked_mul(1_000_000_000)
        .and_then(|n| n.checked_add(frac))
        .ok_or_else(|| "outside the range of i64 nanoseconds".to_string())
}

/// Formats nanoseconds since the epoch as RFC 3339 UTC with 9 fraction digits.
pub fn format_ns(ns: i64) -> String {
    let secs = ns.div_euclid(1_000_000_000);
    let frac = ns.rem_euclid(1_000_000_000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{frac:09}Z",
        sod / 3600,
        (sod / 60) % 60,
        sod % 60
    )
}

/// A span of nanoseconds for people: `850 ns`, `1.20 ms`, `3.40 s`,
/// `5 min 3 s`, `2 h 5 min`, `3 d 4 h`.
pub fn format_duration(ns: i64) -> String {
    let a = ns.unsigned_abs();
    let sign = if ns < 0 { "-" } else { "" };
    let s = a / 1_000_000_000;
    let body = match a {
        0..1_000 => format!("{a} ns"),
        1_000..1_000_000 => format!("{:.2} us", a as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.2} ms", a as f64 / 1e6),
        _ if s < 60 => format!("{:.2} s", a as f64 / 1e9),
        _ if s < 3_600 => format!("{} min {} s", s / 60, s % 60),
        _ if s < 86_400 => format!("{} h {} min", s / 3_600, (s / 60) % 60),
        _ => format!("{} d {} h", s / 86_400, (s / 3_600) % 24),
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_for_people() {
        assert_eq!(format_duration(850), "850 ns");
        assert_eq!(format_duration(1_200_000), "1.20 ms");
        assert_eq!(format_duration(3_400_000_000), "3.40 s");
        assert_eq!(format_duration(303_000_000_000), "5 min 3 s");
        assert_eq!(format_duration(7_500_000_000_000), "2 h 5 min");
        assert_eq!(format_duration(-2_000), "-2.00 us");
    }

    #[test]
    fn parses_forms() {
        assert_eq!(
            parse_time("1714123456000000000").unwrap(),
            1_714_123_456_000_000_000
        );
        assert_eq!(parse_time("1970-01-01").unwrap(), 0);
        assert_eq!(
            parse_time("2024-04-26T09:24:16Z").unwrap(),
            1_714_123_456_000_000_000
        );
        assert_eq!(
            parse_time("2024-04-26 11:24:16+02:00").unwrap(),
            1_714_123_456_000_000_000
        );
        assert_eq!(
            parse_time("2024-04-26T09:24:16.5Z").unwrap(),
            1_714_123_456_500_000_000
        );
        assert_eq!(
            parse_time("2024-04-26T09:24:16.000000001Z").unwrap(),
            1_714_123_456_000_000_001
        );
        assert_eq!(parse_time("1969-12-31T23:59:59Z").unwrap(), -1_000_000_000);
        assert_eq!(parse_time("2024-02-29").unwrap(), 1_709_164_800_000_000_000);
        for bad in [
            "2023-02-29",
            "2024-13-01",
            "2024-04-26T25:00",
            "yesterday",
            "2024-04-26T09:24:16.1234567891Z",
            "",
        ] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn formats_round_trip() {
        for ns in [0i64, 1_714_123_456_123_456_789, -1, 951_782_400_000_000_000] {
            assert_eq!(parse_time(&format_ns(ns)).unwrap(), ns);
        }
        assert_eq!(
            format_ns(1_714_123_456_000_000_000),
            "2024-04-26T09:24:16.000000000Z"
        );
    }
}
