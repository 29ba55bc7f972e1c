//! NumPy `.npy` files (format versions 1, 2 and 3), little-endian, C order.

use crate::{Buffer, DType, Tensor, TensorError};

const MAGIC: &[u8] = b"\x93NUMPY";

fn err(message: impl Into<String>) -> TensorError {
    TensorError(message.into())
}

/// Reads a tensor from the bytes of an `.npy` file.
pub fn read(bytes: &[u8]) -> Result<Tensor, TensorError> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err(err("not an .npy file (bad magic bytes)"));
    }
    let major = bytes[6];
    let (header_len, offset) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err(err("truncated .npy header"));
            }
            (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            )
        }
        v => return Err(err(format!("unsupported .npy format version {v}"))),
    };
    let header = bytes
        .get(offset..offset + header_len)
        .ok_or_else(|| err("truncated .npy header"))?;
    let header = std::str::from_utf8(header).map_err(|_| err("the .npy header is not text"))?;
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
    let data = &bytes[offset + header_len..];
    let n: usize = shape.iter().product();
    let (dtype, width) = match descr {
        "<f4" | "=f4" => (DType::F32, 4),
        "<f8" | "=f8" => (DType::F64, 8),
        "<f2" | "=f2" => (DType::F16, 2),
        "<i8" | "=i8" => (DType::I64, 8),
        "<i4" | "=i4" => (DType::I32, 4),
        "<i2" | "=i2" => (DType::I16, 2),
        "|i1" => (DType::I8, 1),
        "|u1" => (DType::U8, 1),
        "|b1" => (DType::Bool, 1),
        other => return Err(err(format!("unsupported .npy dtype '{other}' (use float32, float64, float16, int8/16/32/64, uint8 or bool, little-endian)"))),
    };
    if data.len() < n * width {
        return Err(err(format!(
            "the .npy data is truncated: shape {shape:?} needs {} bytes, found {}",
            n * width,
            data.len()
        )));
    }
    let chunks = data[..n * width].chunks_exact(width);
    let buffer = match dtype {
        DType::F32 => Buffer::F32(
            chunks
                .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
                .collect(),
        ),
        DType::F64 => Buffer::F64(
            chunks
                .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
                .collect(),
        ),
        DType::F16 => Buffer::F32(
            chunks
                .map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]])))
                .collect(),
        ),
        DType::I64 => Buffer::I64(
            chunks
                .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
                .collect(),
        ),
        DType::I32 => Buffer::I64(
            chunks
                .map(|c| i32::from_le_bytes(c.try_into().unwrap()) as i64)
                .collect(),
        ),
        DType::I16 => Buffer::I64(
            chunks
                .map(|c| i16::from_le_bytes([c[0], c[1]]) as i64)
                .collect(),
        ),
        DType::I8 => Buffer::I64(chunks.map(|c| c[0] as i8 as i64).collect()),
        DType::U8 => Buffer::I64(chunks.map(|c| c[0] as i64).collect()),
        DType::Bool => Buffer::Bool(chunks.map(|c| c[0] != 0).collect()),
        DType::BF16 => unreachable!("numpy has no bfloat16"),
    };
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
    let mut out = Vec::with_capacity(total + tensor.numel() * 8);
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
