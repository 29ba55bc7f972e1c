use std::fmt;
use std::str::FromStr;

/// MindSpore's dtypes that the DSL names (spec §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    F16,
    BF16,
    F32,
    F64,
}

impl DType {
    pub const ALL: [DType; 10] = [
        DType::Bool,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }

    /// MindSpore's own name (`mindspore.float32`, ...), as in `.ir` dumps.
    pub fn mindspore_name(self) -> &'static str {
        match self {
            DType::Bool => "Bool",
            DType::I8 => "Int8",
            DType::I16 => "Int16",
            DType::I32 => "Int32",
            DType::I64 => "Int64",
            DType::U8 => "UInt8",
            DType::F16 => "Float16",
            DType::BF16 => "BFloat16",
            DType::F32 => "Float32",
            DType::F64 => "Float64",
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }

    pub fn is_int(self) -> bool {
        matches!(
            self,
            DType::I8 | DType::I16 | DType::I32 | DType::I64 | DType::U8
        )
    }

    pub fn is_bool(self) -> bool {
        self == DType::Bool
    }

    /// The dtype whose buffer holds values of this dtype (see the crate docs).
    pub fn storage(self) -> DType {
        match self {
            DType::F16 | DType::BF16 | DType::F32 => DType::F32,
            DType::F64 => DType::F64,
            DType::Bool => DType::Bool,
            _ => DType::I64,
        }
    }

    /// Size of one element in bytes, as MindSpore stores it.
    pub fn size_of(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::F32 => 4,
            DType::I64 | DType::F64 => 8,
        }
    }

    /// Wraps an integer to this dtype's width (two's complement, as a cast in C).
    pub fn wrap_int(self, x: i64) -> i64 {
        match self {
            DType::I8 => x as i8 as i64,
            DType::I16 => x as i16 as i64,
            DType::I32 => x as i32 as i64,
            DType::U8 => x as u8 as i64,
            _ => x,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DType {
    type Err = ();
    fn from_str(s: &str) -> Result<DType, ()> {
        DType::ALL.into_iter().find(|d| d.name() == s).ok_or(())
    }
}

/// Rounds to the nearest `f16` value (round half to even), kept as `f32`.
pub(crate) fn round_f16(x: f32) -> f32 {
    if !x.is_finite() {
        return x;
    }
    let a = x.abs();
    if a >= 65520.0 {
        return f32::INFINITY.copysign(x);
    }
    // Spacing of f16 values near `a`: 2^(e-10) for normals, 2^-24 for subnormals.
    let e = if a < 6.103_515_6e-5 {
        -14
    } else {
        a.log2().floor() as i32
    };
    let ulp = (2.0f64).powi(e - 10);
    let r = ((a as f64) / ulp).round_ties_even() * ulp;
    (r as f32).copysign(x)
}

/// Rounds to the nearest `bf16` value (round half to even), kept as `f32`.
pub(crate) fn round_bf16(x: f32) -> f32 {
    if !x.is_finite() {
        return x;
    }
    let bits = x.to_bits();
    let lsb = (bits >> 16) & 1;
    let rounded = bits.wrapping_add(0x7fff + lsb) & 0xffff_0000;
    f32::from_bits(rounded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_rounding() {
        assert_eq!(round_f16(1.0), 1.0);
        assert_eq!(round_f16(1.0 + 1.0 / 4096.0), 1.0); // below half an ulp (2^-10)
        assert_eq!(round_f16(65504.0), 65504.0);
        assert_eq!(round_f16(1e6), f32::INFINITY);
        assert_eq!(round_f16(0.1), 0.099_975_586);
    }

    #[test]
    fn bf16_rounding() {
        assert_eq!(round_bf16(1.0), 1.0);
        assert_eq!(round_bf16(1.001), 1.0);
        assert_eq!(round_bf16(1.23456), 1.234375);
    }

    #[test]
    fn wrapping() {
        assert_eq!(DType::I8.wrap_int(130), -126);
        assert_eq!(DType::U8.wrap_int(-1), 255);
    }
}
