//! Fixed-point prices and quantities: signed i64 with a scale of 1e8.
//!
//! The raw integer is what the file stores and what this crate hands out;
//! these helpers convert at the edges. Decimal-string conversions are exact;
//! `f64` conversions follow the spec (round to nearest, clamp to i64).

use core::fmt;

/// Raw units per whole unit.
pub const SCALE: i64 = 100_000_000;
/// Decimal places of the scale.
pub const SCALE_DIGITS: usize = 8;

/// Raw fixed-point to `f64` (divide by 1e8; inexact past 2^53 raw units).
#[inline]
pub fn raw_to_f64(raw: i64) -> f64 {
    raw as f64 / SCALE as f64
}

/// `f64` to raw fixed-point: multiply by 1e8, round to nearest (halves away
/// from zero), clamp to the i64 range. NaN gives 0.
pub fn f64_to_raw(x: f64) -> i64 {
    if x.is_nan() {
        return 0;
    }
    let s = x * SCALE as f64;
    // 2^63 is exactly representable; anything at or past it clamps.
    if s >= 9_223_372_036_854_775_808.0 {
        return i64::MAX;
    }
    if s <= -9_223_372_036_854_775_808.0 {
        return i64::MIN;
    }
    let t = s as i64; // truncates toward zero, in range here
    let frac = s - t as f64; // exact: below 2^52 both are exact, above s is whole
    if frac >= 0.5 {
        t + 1
    } else if frac <= -0.5 {
        t - 1
    } else {
        t
    }
}

/// Why a decimal string did not parse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecimalError {
    /// Empty, or no digits.
    Empty,
    /// A character that is not a sign, digit or single '.'.
    InvalidChar(usize),
}

impl fmt::Display for DecimalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecimalError::Empty => f.write_str("no digits in decimal"),
            DecimalError::InvalidChar(i) => write!(f, "invalid character at position {i}"),
        }
    }
}

/// Parses a decimal string (`-12.345`, `+7`, `.5`) into raw fixed-point,
/// exactly: digits past the eighth decimal round to nearest (halves away from
/// zero) and values past the i64 range clamp.
pub fn parse_decimal(s: &str) -> Result<i64, DecimalError> {
    let b = s.as_bytes();
    let (neg, start) = match b.first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    // Accumulate |value| * 1e8 in u128 (saturating) so the clamp is exact.
    const LIMIT: u128 = 1u128 << 64;
    let mut acc: u128 = 0;
    let mut seen_digit = false;
    let mut frac_digits: Option<usize> = None;
    let mut round_up = false;
    for (i, &c) in b.iter().enumerate().skip(start) {
        match c {
            b'0'..=b'9' => {
                seen_digit = true;
                let d = (c - b'0') as u128;
                match frac_digits {
                    Some(n) if n >= SCALE_DIGITS => {
                        // Only the first dropped digit decides the rounding.
                        if n == SCALE_DIGITS && d >= 5 {
                            round_up = true;
                        }
                        frac_digits = Some(n + 1);
                    }
                    Some(n) => {
                        acc = (acc * 10 + d).min(LIMIT);
                        frac_digits = Some(n + 1);
                    }
                    None => acc = (acc * 10 + d).min(LIMIT),
                }
            }
            b'.' if frac_digits.is_none() => frac_digits = Some(0),
            _ => return Err(DecimalError::InvalidChar(i)),
        }
    }
    if !seen_digit {
        return Err(DecimalError::Empty);
    }
    let have = frac_digits.unwrap_or(0).min(SCALE_DIGITS);
    for _ in have..SCALE_DIGITS {
        acc = (acc * 10).min(LIMIT);
    }
    if round_up {
        acc = (acc + 1).min(LIMIT);
    }
    Ok(if neg {
        if acc >= 1u128 << 63 {
            i64::MIN
        } else {
            -(acc as i64)
        }
    } else if acc > i64::MAX as u128 {
        i64::MAX
    } else {
        acc as i64
    })
}

/// Displays a raw fixed-point value as an exact decimal with no trailing
/// zeros (`100.5`, `-0.00000001`, `7`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decimal(pub i64);

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let neg = self.0 < 0;
        let mag = self.0.unsigned_abs();
        let int = mag / SCALE as u64;
        let mut frac = mag % SCALE as u64;
        if neg {
            f.write_str("-")?;
        }
        write!(f, "{int}")?;
        if frac != 0 {
            let mut width = SCALE_DIGITS;
            while frac.is_multiple_of(10) {
                frac /= 10;
                width -= 1;
            }
            write!(f, ".{frac:0width$}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f64_rounds_to_nearest_and_clamps() {
        assert_eq!(f64_to_raw(0.1), 10_000_000);
        assert_eq!(f64_to_raw(1.000000005), 100_000_001);
        assert_eq!(f64_to_raw(-1.000000005), -100_000_001);
        assert_eq!(f64_to_raw(1e30), i64::MAX);
        assert_eq!(f64_to_raw(-1e30), i64::MIN);
        assert_eq!(f64_to_raw(f64::NAN), 0);
        assert_eq!(f64_to_raw(f64::INFINITY), i64::MAX);
        assert_eq!(raw_to_f64(150_000_000), 1.5);
    }

    #[test]
    fn decimal_parse_is_exact() {
        assert_eq!(parse_decimal("100.5"), Ok(10_050_000_000));
        assert_eq!(parse_decimal("-0.00000001"), Ok(-1));
        assert_eq!(parse_decimal("0.000000005"), Ok(1));
        assert_eq!(parse_decimal("0.000000004999"), Ok(0));
        assert_eq!(parse_decimal("-0.000000005"), Ok(-1));
        assert_eq!(parse_decimal(".5"), Ok(50_000_000));
        assert_eq!(parse_decimal("92233720368.54775807"), Ok(i64::MAX));
        assert_eq!(parse_decimal("92233720368.54775808"), Ok(i64::MAX));
        assert_eq!(parse_decimal("-92233720368.54775808"), Ok(i64::MIN));
        assert_eq!(parse_decimal("-1e5"), Err(DecimalError::InvalidChar(2)));
        assert_eq!(parse_decimal("-"), Err(DecimalError::Empty));
        assert_eq!(parse_decimal("1.2.3"), Err(DecimalError::InvalidChar(3)));
    }

    #[test]
    fn decimal_display_round_trips() {
        extern crate std;
        use std::string::ToString;
        for raw in [0, 1, -1, 10_050_000_000, i64::MAX, i64::MIN, 123_456_789] {
            let s = Decimal(raw).to_string();
            assert_eq!(parse_decimal(&s), Ok(raw), "{s}");
        }
        assert_eq!(Decimal(10_050_000_000).to_string(), "100.5");
        assert_eq!(Decimal(-1).to_string(), "-0.00000001");
        assert_eq!(Decimal(700_000_000).to_string(), "7");
    }
}
