//! NumPy `.npy` files (format versions 1, 2 and 3), little-endian, C order.

use std::io::Read;

use crate::wire::{read_elements, Wire};
use crate::{checked_numel, Buffer, DType, Tensor, TensorError};

const MAGIC: &[u8] = b"\x93NUMPY";

fn err(message: impl Into<String>) -> TensorError {
    TensorError(message.into())
}

/// What an `.npy` header says of its array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub dtype: DType,
    pub shape: Vec<usize>,
}

/// The longest header read. NumPy itself refuses headers over 10,000 bytes
/// unless told otherwise; a longer one is damage, not data.
pub const MAX_HEADER: usize = 1 << 20;

/// Reads a tensor from the bytes of an `.npy` file.
pub fn read(bytes: &[u8]) -> Result<Tensor, TensorError> {
    read_from(&mut &bytes[..], bytes.len() as u64, &mut |_| Ok(()))
}

/// Reads an `.npy` file of `len` bytes from `r`. `check` sees the header
/// before any data is read and may refuse it (a shape other than the one
/// declared, more bytes than a budget allows): a file is never read further
/// than its header says, and never beyond `len`.
pub fn read_from(
    r: &mut dyn Read,
    len: u64,
    check: &mut dyn FnMut(&Header) -> Result<(), String>,
) -> Result<Tensor, TensorError> {
    let mut pre = [0u8; 10];
    if len < 10 || r.read_exact(&mut pre).is_err() || &pre[..6] != MAGIC {
        return Err(err("not an .npy file (bad magic bytes)"));
    }
    let major = pre[6];
    let (header_len, offset) = match major {
        1 => (u16::from_le_bytes([pre[8], pre[9]]) as usize, 10usize),
        2 | 3 => {
            let mut ext = [0u8; 2];
            if len < 12 || r.read_exact(&mut ext).is_err() {
                return Err(err("truncated .npy header"));
            }
            (
                u32::from_le_bytes([pre[8], pre[9], ext[0], ext[1]]) as usize,
                12,
            )
        }
        v => return Err(err(format!("unsupported .npy format version {v}"))),
    };
    if header_len > MAX_HEADER {
        return Err(err(format!(
            "the .npy header claims {header_len} bytes; a real one is far shorter (at most {MAX_HEADER})"
        )));
    }
    let data_start = (offset + header_len) as u64;
    if data_start > len {
        return Err(err("truncated .npy header"));
    }
    let mut header = vec![0u8; header_len];
    r.read_exact(&mut header)
        .map_err(|_| err("truncated .npy header"))?;
    let header = std::str::from_utf8(&header).map_err(|_| err("the .npy header is not text"))?;
    let descr = dict_value(header, "descr").ok_or_else(|| err("the .npy header has no 'descr'"))?;
    let descr = descr.trim_matches(|c| c == '\'' || c == '"');
    let fortran = dict_value(header, "fortran_order").unwrap_or("False");
    if fortran.starts_with("True") {
        return Err(err(
            "Fortran-ordered .npy arrays are not supported; save with C order",
        ));
    }
    let shape_text =
        dict_value(header, "shape").ok_or_else(|| err("the .npy header has no 'shape'"))?;
    let shape = parse_shape(shape_text)?;
    let wire = match descr {
        "<f4" | "=f4" => Wire::F32,
        "<f8" | "=f8" => Wire::F64,
        "<f2" | "=f2" => Wire::F16,
        "<i8" | "=i8" => Wire::I64,
        "<i4" | "=i4" => Wire::I32,
        "<i2" | "=i2" => Wire::I16,
        "|i1" => Wire::I8,
        "|u1" => Wire::U8,
        "|b1" => Wire::Bool,
        other => return Err(err(format!("unsupported .npy dtype '{other}' (use float32, float64, float16, int8/16/32/64, uint8 or bool, little-endian)"))),
    };
    let dtype = wire.dtype();
    let too_big = || {
        err(format!(
            "the .npy header's shape {shape:?} has more elements than can be counted"
        ))
    };
    let n = checked_numel(&shape).ok_or_else(too_big)?;
    let need = n.checked_mul(wire.width()).ok_or_else(too_big)?;
    check(&Header {
        dtype,
        shape: shape.clone(),
    })
    .map_err(TensorError)?;
    let available = len - data_start;
    if available < need as u64 {
        return Err(err(format!(
            "the .npy data is truncated: shape {shape:?} needs {need} bytes, found {available}"
        )));
    }
    let buffer = read_elements(r, wire, n)?;
    Tensor::new(dtype, shape, buffer)
}

/// The bytes of an `.npy` file (version 1.0) holding `tensor`.
/// `bf16` has no NumPy dtype and is written as `float32`.
pub fn write(tensor: &Tensor) -> Vec<u8> {
    let descr = match tensor.dtype() {
        DType::F32 | DType::BF16 => "<f4",
        DType::F64 => "<f8",
        DType::F16 => "<f2",
        DType::I64 => "<i8",
        DType::I32 => "<i4",
        DType::I16 => "<i2",
        DType::I8 => "|i1",
        DType::U8 => "|u1",
        DType::Bool => "|b1",
    };
    let shape = match tensor.shape() {
        [] => "()".to_string(),
        [n] => format!("({n},)"),
        dims => format!(
            "({})",
            dims.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Pad so the data starts on a 64-byte boundary, ending with a newline.
    let total = MAGIC.len() + 4 + header.len() + 1;
    header.push_str(&" ".repeat((64 - total % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(total + tensor.numel() * tensor.dtype().size_of());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    match (tensor.buffer(), tensor.dtype()) {
        (Buffer::F32(v), DType::F16) => v
            .iter()
            .for_each(|&x| out.extend_from_slice(&f32_to_f16(x).to_le_bytes())),
        (Buffer::F32(v), _) => v
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        (Buffer::F64(v), _) => v
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        (Buffer::I64(v), DType::I32) => v
            .iter()
            .for_each(|&x| out.extend_from_slice(&(x as i32).to_le_bytes())),
        (Buffer::I64(v), DType::I16) => v
            .iter()
            .for_each(|&x| out.extend_from_slice(&(x as i16).to_le_bytes())),
        (Buffer::I64(v), DType::I8 | DType::U8) => v.iter().for_each(|&x| out.push(x as u8)),
        (Buffer::I64(v), _) => v
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        (Buffer::Bool(v), _) => v.iter().for_each(|&x| out.push(x as u8)),
    }
    out
}

/// The text after `'key':` in a Python dict literal, up to the next top-level comma.
fn dict_value<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let start = header
        .find(&format!("'{key}'"))
        .or_else(|| header.find(&format!("\"{key}\"")))?;
    let rest = &header[start + key.len() + 2..];
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let mut depth = 0;
    for (i, c) in rest.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' | '}' if depth == 0 => return Some(rest[..i].trim()),
            _ => {}
        }
    }
    Some(rest.trim())
}

fn parse_shape(text: &str) -> Result<Vec<usize>, TensorError> {
    let inner = text
        .trim()
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .ok_or_else(|| err(format!("bad .npy shape '{text}'")))?;
    inner
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.trim_end_matches('L')
                .parse::<usize>()
                .map_err(|_| err(format!("bad .npy shape '{text}'")))
        })
        .collect()
}

pub(crate) fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let frac = (h & 0x3ff) as f32;
    match exp {
        0 => sign * frac * 2f32.powi(-24),
        31 if frac == 0.0 => sign * f32::INFINITY,
        31 => f32::NAN,
        _ => sign * (1.0 + frac / 1024.0) * 2f32.powi(exp - 15),
    }
}

pub(crate) fn f32_to_f16(x: f32) -> u16 {
    let x = crate::dtype::round_f16(x);
    let sign = if x.is_sign_negative() { 0x8000u16 } else { 0 };
    let a = x.abs();
    if a.is_nan() {
        return 0x7e00;
    }
    if a.is_infinite() {
        return sign | 0x7c00;
    }
    if a < 6.103_515_6e-5 {
        return sign | (a / 2f32.powi(-24)).round() as u16;
    }
    let e = a.log2().floor() as i32;
    let frac = ((a / 2f32.powi(e) - 1.0) * 1024.0).round() as u16;
    sign | (((e + 15) as u16) << 10) | frac
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_dtype() {
        for dtype in DType::ALL {
            if dtype == DType::BF16 {
                continue;
            }
            let t = Tensor::full(dtype, vec![2, 3], 1.0).cast(dtype);
            let t = if dtype.is_float() {
                Tensor::from_f64(vec![2, 3], vec![0.5, -1.25, 3.0, 0.0, 2.5, -7.0])
                    .unwrap()
                    .cast(dtype)
            } else {
                t
            };
            let back = read(&write(&t)).unwrap();
            assert_eq!(back, t, "{dtype}");
        }
    }

    #[test]
    fn reads_numpy_written_file() {
        // np.save of np.arange(3, dtype=np.float32)
        let mut bytes =
            b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"
                .to_vec();
        bytes.resize(10 + 0x76 - 1, b' ');
        bytes.push(b'\n');
        for x in [0.0f32, 1.0, 2.0] {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        let t = read(&bytes).unwrap();
        assert_eq!(t.shape(), &[3]);
        assert_eq!(t.to_f64_vec(), vec![0.0, 1.0, 2.0]);
    }

    #[test]
    fn rejects_garbage() {
        assert!(read(b"hello").is_err());
        let mut truncated = write(&Tensor::zeros(DType::F32, vec![4]));
        truncated.truncate(truncated.len() - 1);
        assert!(read(&truncated).unwrap_err().0.contains("truncated"));
    }
}
