//! One definition per fixed-layout record: a field list (name, type, doc,
//! byte offset, role) from which `define_record!` makes the struct, its
//! decoder and encoder at the named offsets, the layout checks and a const
//! descriptor table ([`Record::FIELDS`]) with a visitor
//! ([`Record::visit`]) and a builder ([`Record::build`]).
//!
//! Front ends (C mirror checks, Arrow, CSV/JSON, diff, Python) iterate the
//! descriptors instead of naming fields, so adding a field touches the
//! record's file (its list and golden bytes). Hot paths that need static
//! types (the batch trade columns) take the same list through the record's
//! exported list macro (`trade_fields!`), so they stay monomorphic loops.

use crate::le::{put_u16, put_u32, put_u64, u16_at, u32_at, u64_at};

/// The storage type of a field (little-endian on the wire).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldType {
    /// `i64`.
    I64,
    /// `u64`.
    U64,
    /// `u32`.
    U32,
    /// `u16`.
    U16,
    /// `u8`.
    U8,
}

impl FieldType {
    /// Encoded size in bytes.
    pub const fn size(self) -> usize {
        match self {
            FieldType::I64 | FieldType::U64 => 8,
            FieldType::U32 => 4,
            FieldType::U16 => 2,
            FieldType::U8 => 1,
        }
    }

    /// Whether values are signed.
    pub const fn signed(self) -> bool {
        matches!(self, FieldType::I64)
    }

    /// The Rust (and C `<stdint.h>` without `_t`) name: `i64`, `u8`, ...
    pub const fn rust_name(self) -> &'static str {
        match self {
            FieldType::I64 => "i64",
            FieldType::U64 => "u64",
            FieldType::U32 => "u32",
            FieldType::U16 => "u16",
            FieldType::U8 => "u8",
        }
    }
}

/// What a field's integer means, for the front ends that present it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldRole {
    /// Nanoseconds since the Unix epoch (`i64`, name ends in `_ts_ns`).
    Timestamp,
    /// Fixed-point, scale 1e8 (`i64`, name ends in `_raw`; its decimal twin
    /// is the name without `_raw`).
    Fixed,
    /// A plain integer (ids, codes, tags).
    Plain,
    /// A plain integer whose 0 means unknown (a writer may leave it out).
    Optional,
}

/// One field of a record: what the definition says of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FieldDesc {
    /// Field name (Rust, C, CSV, JSON, Arrow and Python all use it).
    pub name: &'static str,
    /// One-line description.
    pub doc: &'static str,
    /// Byte offset in the record payload.
    pub offset: usize,
    /// Storage type.
    pub ty: FieldType,
    /// Meaning.
    pub role: FieldRole,
}

impl FieldDesc {
    /// The name of the decimal twin of a [`FieldRole::Fixed`] field (the
    /// name without `_raw`); the name itself for the others.
    pub fn decimal_name(&self) -> &'static str {
        match self.role {
            FieldRole::Fixed => self.name.strip_suffix("_raw").unwrap_or(self.name),
            _ => self.name,
        }
    }
}

/// A field's value, widened to 64 bits with its signedness.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldValue {
    /// A signed field.
    Signed(i64),
    /// An unsigned field.
    Unsigned(u64),
}

/// The integer types a record field can have.
pub trait Scalar: Copy + Default + PartialEq {
    /// Its [`FieldType`].
    const TYPE: FieldType;
    /// Reads it at `at` (the caller checked the length).
    fn read(b: &[u8], at: usize) -> Self;
    /// Writes it at `at` (the caller checked the length).
    fn write(self, b: &mut [u8], at: usize);
    /// Widens it.
    fn value(self) -> FieldValue;
    /// Narrows `v`; `None` when it does not fit (or has the other sign).
    fn from_value(v: FieldValue) -> Option<Self>;
}

macro_rules! unsigned_scalar {
    ($t:ty, $ty:ident, $read:expr, $write:expr) => {
        impl Scalar for $t {
            const TYPE: FieldType = FieldType::$ty;
            #[inline(always)]
            fn read(b: &[u8], at: usize) -> Self {
                $read(b, at)
            }
            #[inline(always)]
            fn write(self, b: &mut [u8], at: usize) {
                $write(b, at, self)
            }
            #[inline(always)]
            fn value(self) -> FieldValue {
                FieldValue::Unsigned(self as u64)
            }
            #[inline]
            fn from_value(v: FieldValue) -> Option<Self> {
                match v {
                    FieldValue::Unsigned(u) => <$t>::try_from(u).ok(),
                    FieldValue::Signed(i) => <$t>::try_from(i).ok(),
                }
            }
        }
    };
}

unsigned_scalar!(u64, U64, u64_at, put_u64);
unsigned_scalar!(u32, U32, u32_at, put_u32);
unsigned_scalar!(u16, U16, u16_at, put_u16);
unsigned_scalar!(
    u8,
    U8,
    |b: &[u8], at: usize| b[at],
    |b: &mut [u8], at: usize, v: u8| b[at] = v
);

impl Scalar for i64 {
    const TYPE: FieldType = FieldType::I64;
    #[inline(always)]
    fn read(b: &[u8], at: usize) -> Self {
        u64_at(b, at) as i64
    }
    #[inline(always)]
    fn write(self, b: &mut [u8], at: usize) {
        put_u64(b, at, self as u64)
    }
    #[inline(always)]
    fn value(self) -> FieldValue {
        FieldValue::Signed(self)
    }
    #[inline]
    fn from_value(v: FieldValue) -> Option<Self> {
        match v {
            FieldValue::Signed(i) => Some(i),
            FieldValue::Unsigned(u) => i64::try_from(u).ok(),
        }
    }
}

/// A fixed-layout record made by `define_record!`.
pub trait Record: Copy + Default + PartialEq + 'static {
    /// Encoded length of the payload.
    const LEN: usize;
    /// The fields in record order.
    const FIELDS: &'static [FieldDesc];
    /// Calls `f` with each field's descriptor and value, in record order.
    fn visit(&self, f: impl FnMut(&'static FieldDesc, FieldValue));
    /// A record from `f`'s value for each field (index and descriptor, in
    /// record order); a value the field cannot hold gives `range(desc)`.
    fn build<E>(
        f: impl FnMut(usize, &'static FieldDesc) -> Result<FieldValue, E>,
        range: impl FnMut(&'static FieldDesc) -> E,
    ) -> Result<Self, E>;
}

/// The fixed fields of any record type: all of a fixed-layout record's
/// ([`Record`] types get it from `define_record!`), the header fields of a
/// book or pool state (from `define_head!`; their levels and payload are
/// not fields). The front ends that present every record type (JSON, diff,
/// Arrow) go through it.
pub trait Fields: Copy {
    /// The fixed fields in record order.
    const FIXED: &'static [FieldDesc];
    /// Calls `f` with each fixed field's descriptor and value, in record
    /// order.
    fn visit_fixed(&self, f: impl FnMut(&'static FieldDesc, FieldValue));
    /// `self` with each fixed field set to `f`'s value (index and
    /// descriptor, in record order), the rest (levels, payload) kept; a
    /// value the field cannot hold gives `range(desc)`.
    fn with_fixed<E>(
        self,
        f: impl FnMut(usize, &'static FieldDesc) -> Result<FieldValue, E>,
        range: impl FnMut(&'static FieldDesc) -> E,
    ) -> Result<Self, E>;
}

/// The `field` (byte offsets, the `pad` ones too) and `desc` (descriptors)
/// modules of a field list, for [`define_record!`] and [`define_head!`].
#[doc(hidden)]
#[macro_export]
macro_rules! field_mods {
    (
        { $( $(#[doc = $pdoc:literal])* pad $P:ident @ $poff:literal; )* }
        $( $(#[doc = $doc:literal])* $f:ident $F:ident: $t:ident @ $off:literal, $role:ident; )*
    ) => {
        /// Byte offsets of the fields.
        pub mod field {
            $( $(#[doc = $doc])* pub const $F: usize = $off; )*
            $( $(#[doc = $pdoc])* pub const $P: usize = $poff; )*
        }

        /// The field descriptors, one per field.
        pub mod desc {
            use $crate::record::{FieldDesc, FieldRole, Scalar};
            $(
                $(#[doc = $doc])*
                pub const $F: FieldDesc = FieldDesc {
                    name: stringify!($f),
                    doc: concat!($($doc),*),
                    offset: $off,
                    ty: <$t as Scalar>::TYPE,
                    role: FieldRole::$role,
                };
            )*
        }
    };
}
#[doc(hidden)]
pub use field_mods;

/// The body of a builder: each field from `$get`'s value (index and
/// descriptor, in record order), `$range` for one the field cannot hold,
/// the rest from `$base` (`{}` or `{ ..self }`).
#[doc(hidden)]
#[macro_export]
macro_rules! build_fields {
    ($name:ident, $get:ident, $range:ident, { $($base:tt)* }, $($f:ident $F:ident: $t:ident),*) => {{
        use $crate::record::Scalar;
        let mut k = 0usize;
        Ok($name {
            $(
                $f: {
                    let v = $get(k, &desc::$F)?;
                    k += 1;
                    <$t as Scalar>::from_value(v).ok_or_else(|| $range(&desc::$F))?
                },
            )*
            $($base)*
        })
    }};
}
#[doc(hidden)]
pub use build_fields;

/// Defines a fixed-layout record from its field list: the `#[repr(C)]`
/// struct (its offsets asserted against the wire offsets, so C mirrors can
/// be checked and batch copies are plain), `field::NAME` offsets,
/// `parse`/`from_payload`/`emit`, `FIELDS` and the [`Record`] impl.
/// Bytes no field covers are written as zeros.
macro_rules! define_record {
    (
        {
            $(#[$meta:meta])* struct $name:ident; what $what:literal; len $len:literal;
            $( $(#[doc = $pdoc:literal])* pad $P:ident @ $poff:literal; )*
        }
        $( $(#[doc = $doc:literal])* $f:ident $F:ident: $t:ident @ $off:literal, $role:ident; )*
    ) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
        pub struct $name {
            $( $(#[doc = $doc])* pub $f: $t, )*
        }

        $crate::record::field_mods! {
            { $( $(#[doc = $pdoc])* pad $P @ $poff; )* }
            $( $(#[doc = $doc])* $f $F: $t @ $off, $role; )*
        }

        const _: () = {
            use core::mem::{offset_of, size_of};
            assert!(size_of::<$name>() == $len);
            assert!([$(stringify!($f)),*].len() <= $crate::record::MAX_FIELDS);
            $( assert!(offset_of!($name, $f) == $off); )*
        };

        impl $name {
            /// Encoded length.
            pub const LEN: usize = $len;
            /// Whether the fields cover every byte (else `emit` zeroes first).
            const DENSE: bool = 0 $( + core::mem::size_of::<$t>() )* == $len;

            /// Decodes a payload; `MalformedRecord` at `at` (the frame's
            /// offset) unless it is exactly `LEN` bytes.
            #[inline]
            pub fn parse(b: &[u8], at: u64) -> $crate::error::Result<$name> {
                match <&[u8; $len]>::try_from(b) {
                    Ok(p) => Ok(Self::from_payload(p)),
                    Err(_) => Err($crate::error::malformed(
                        at,
                        concat!($what, " payload is not ", stringify!($len), " bytes"),
                    )),
                }
            }

            /// Decodes a payload whose length is already known to be right.
            #[inline(always)]
            pub(crate) fn from_payload(b: &[u8; $len]) -> $name {
                use $crate::record::Scalar;
                $name { $( $f: <$t as Scalar>::read(b, $off), )* }
            }

            /// Encodes into `out`.
            #[inline]
            pub fn emit(&self, out: &mut [u8; $len]) {
                use $crate::record::Scalar;
                if !Self::DENSE {
                    out.fill(0);
                }
                $( Scalar::write(self.$f, out, $off); )*
            }
        }

        impl $crate::record::Record for $name {
            const LEN: usize = $len;
            const FIELDS: &'static [$crate::record::FieldDesc] = &[$(desc::$F),*];

            #[inline]
            fn visit(
                &self,
                mut f: impl FnMut(&'static $crate::record::FieldDesc, $crate::record::FieldValue),
            ) {
                use $crate::record::Scalar;
                $( f(&desc::$F, self.$f.value()); )*
            }

            #[allow(unused_assignments)]
            fn build<E>(
                mut f: impl FnMut(usize, &'static $crate::record::FieldDesc)
                    -> core::result::Result<$crate::record::FieldValue, E>,
                mut range: impl FnMut(&'static $crate::record::FieldDesc) -> E,
            ) -> core::result::Result<Self, E> {
                $crate::record::build_fields!($name, f, range, {}, $($f $F: $t),*)
            }
        }

        impl $crate::record::Fields for $name {
            const FIXED: &'static [$crate::record::FieldDesc] =
                <$name as $crate::record::Record>::FIELDS;

            #[inline]
            fn visit_fixed(
                &self,
                f: impl FnMut(&'static $crate::record::FieldDesc, $crate::record::FieldValue),
            ) {
                $crate::record::Record::visit(self, f)
            }

            fn with_fixed<E>(
                self,
                f: impl FnMut(usize, &'static $crate::record::FieldDesc)
                    -> core::result::Result<$crate::record::FieldValue, E>,
                range: impl FnMut(&'static $crate::record::FieldDesc) -> E,
            ) -> core::result::Result<Self, E> {
                <$name as $crate::record::Record>::build(f, range)
            }
        }
    };
}
pub(crate) use define_record;

/// Defines a record with a fixed header and a variable part (a book's
/// levels, a pool state's payload) from the header's field list: the struct
/// (`lead` fields, the listed fields, `tail` fields), `field::NAME` offsets
/// (the listed fields and the `pad` ones: counts, lengths and padding the
/// record's own code writes), the descriptors, `from_header` /
/// `emit_header` at the named offsets, and the [`Fields`] impl.
macro_rules! define_head {
    (
        {
            $(#[$meta:meta])* struct $name:ident $(<$lt:lifetime>)?; header $hlen:literal;
            $( $(#[doc = $pdoc:literal])* pad $P:ident @ $poff:literal; )*
            lead { $( $(#[doc = $ldoc:literal])* $l:ident: $lt_:ty, )* }
            tail { $( $(#[doc = $tdoc:literal])* $x:ident: $xt:ty, )* }
        }
        $( $(#[doc = $doc:literal])* $f:ident $F:ident: $t:ident @ $off:literal, $role:ident; )*
    ) => {
        $(#[$meta])*
        pub struct $name $(<$lt>)? {
            $( $(#[doc = $ldoc])* pub $l: $lt_, )*
            $( $(#[doc = $doc])* pub $f: $t, )*
            $( $(#[doc = $tdoc])* pub $x: $xt, )*
        }

        $crate::record::field_mods! {
            { $( $(#[doc = $pdoc])* pad $P @ $poff; )* }
            $( $(#[doc = $doc])* $f $F: $t @ $off, $role; )*
        }

        const _: () = {
            assert!([$(stringify!($f)),*].len() <= $crate::record::MAX_FIELDS);
            $( assert!($off + core::mem::size_of::<$t>() <= $hlen); )*
        };

        impl $(<$lt>)? $name $(<$lt>)? {
            /// Header length.
            pub const HEADER_LEN: usize = $hlen;

            /// The record of header `h` with the given lead and tail
            /// fields.
            #[inline]
            #[allow(dead_code)]
            fn from_header(
                h: &[u8; $hlen],
                $($l: $lt_,)* $($x: $xt,)*
            ) -> Self {
                use $crate::record::Scalar;
                $name { $($l,)* $( $f: <$t as Scalar>::read(h, $off), )* $($x,)* }
            }

            /// Writes the listed fields into `out`, zeros elsewhere (the
            /// caller writes the `pad` offsets it gives meaning to).
            #[inline]
            #[allow(dead_code)]
            fn emit_header(&self, out: &mut [u8; $hlen]) {
                use $crate::record::Scalar;
                out.fill(0);
                $( Scalar::write(self.$f, out, $off); )*
            }
        }

        impl $(<$lt>)? $crate::record::Fields for $name $(<$lt>)? {
            const FIXED: &'static [$crate::record::FieldDesc] = &[$(desc::$F),*];

            #[inline]
            fn visit_fixed(
                &self,
                mut f: impl FnMut(&'static $crate::record::FieldDesc, $crate::record::FieldValue),
            ) {
                use $crate::record::Scalar;
                $( f(&desc::$F, self.$f.value()); )*
            }

            #[allow(unused_assignments, clippy::needless_update)]
            fn with_fixed<E>(
                self,
                mut f: impl FnMut(usize, &'static $crate::record::FieldDesc)
                    -> core::result::Result<$crate::record::FieldValue, E>,
                mut range: impl FnMut(&'static $crate::record::FieldDesc) -> E,
            ) -> core::result::Result<Self, E> {
                $crate::record::build_fields!($name, f, range, { ..self }, $($f $F: $t),*)
            }
        }
    };
}
pub(crate) use define_head;

impl core::fmt::Display for FieldValue {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            FieldValue::Signed(v) => write!(f, "{v}"),
            FieldValue::Unsigned(v) => write!(f, "{v}"),
        }
    }
}

/// A record's field values in record order, on the stack (records have at
/// most [`MAX_FIELDS`] fields: checked where each is defined).
pub fn values_of<R: Fields>(r: &R) -> [FieldValue; MAX_FIELDS] {
    let mut out = [FieldValue::Unsigned(0); MAX_FIELDS];
    let mut k = 0;
    r.visit_fixed(|_, v| {
        if let Some(slot) = out.get_mut(k) {
            *slot = v;
        }
        k += 1;
    });
    out
}

/// The most fields a record may have (room for [`values_of`]).
pub const MAX_FIELDS: usize = 24;
