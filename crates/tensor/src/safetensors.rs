//! `.safetensors` files: an 8-byte header length, a JSON header, then raw data.

use crate::npy::f16_to_f32;
use crate::{Buffer, DType, Tensor, TensorError};

fn err(message: impl Into<String>) -> TensorError {
    TensorError(message.into())
}

/// The names of the tensors in a `.safetensors` file, sorted.
pub fn names(bytes: &[u8]) -> Result<Vec<String>, TensorError> {
    let (header, _) = header(bytes)?;
    let mut names: Vec<String> = header
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| *k != "__metadata__")
        .cloned()
        .collect();
    names.sort();
    Ok(names)
}

fn header(bytes: &[u8]) -> Result<(serde_json::Value, &[u8]), TensorError> {
    if bytes.len() < 8 {
        return Err(err("not a .safetensors file (too short)"));
    }
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let json = bytes
        .get(8..8 + n)
        .ok_or_else(|| err("truncated .safetensors header"))?;
    let header: serde_json::Value =
        serde_json::from_slice(json).map_err(|e| err(format!("bad .safetensors header: {e}")))?;
    if !header.is_object() {
        return Err(err("bad .safetensors header: not a JSON object"));
    }
    Ok((header, &bytes[8 + n..]))
}

/// Reads the tensor called `name`.
pub fn read(bytes: &[u8], name: &str) -> Result<Tensor, TensorError> {
    let (header, data) = header(bytes)?;
    let entry = header.get(name).ok_or_else(|| {
        let available = names(bytes).unwrap_or_default().join(", ");
        err(format!(
            "no tensor '{name}' in the file (it has: {available})"
        ))
    })?;
    let dtype = entry["dtype"]
        .as_str()
        .ok_or_else(|| err("tensor entry without dtype"))?;
    let shape: Vec<usize> = entry["shape"]
        .as_array()
        .ok_or_else(|| err("tensor entry without shape"))?
        .iter()
        .map(|d| {
            d.as_u64()
                .map(|d| d as usize)
                .ok_or_else(|| err("bad dimension"))
        })
        .collect::<Result<_, _>>()?;
    let offsets = entry["data_offsets"]
        .as_array()
        .ok_or_else(|| err("tensor entry without data_offsets"))?;
    let (start, end) = match offsets.as_slice() {
        [a, b] => (
            a.as_u64().unwrap_or(0) as usize,
            b.as_u64().unwrap_or(0) as usize,
        ),
        _ => return Err(err("bad data_offsets")),
    };
    let raw = data
        .get(start..end)
        .ok_or_else(|| err("tensor data lies outside the file"))?;
    let (dt, width) = match dtype {
        "F32" => (DType::F32, 4),
        "F64" => (DType::F64, 8),
        "F16" => (DType::F16, 2),
        "BF16" => (DType::BF16, 2),
        "I64" => (DType::I64, 8),
        "I32" => (DType::I32, 4),
        "I16" => (DType::I16, 2),
        "I8" => (DType::I8, 1),
        "U8" => (DType::U8, 1),
        "BOOL" => (DType::Bool, 1),
        other => return Err(err(format!("unsupported safetensors dtype {other}"))),
    };
    let n: usize = shape.iter().product();
    if raw.len() != n * width {
        return Err(err(format!(
            "tensor '{name}': shape {shape:?} needs {} bytes, has {}",
            n * width,
            raw.len()
        )));
    }
    let c = raw.chunks_exact(width);
    let buffer = match dt {
        DType::F32 => Buffer::F32(
            c.map(|c| f32::from_le_bytes(c.try_into().unwrap()))
                .collect(),
        ),
        DType::F64 => Buffer::F64(
            c.map(|c| f64::from_le_bytes(c.try_into().unwrap()))
                .collect(),
        ),
        DType::F16 => Buffer::F32(
            c.map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]])))
                .collect(),
        ),
        DType::BF16 => Buffer::F32(
            c.map(|c| f32::from_bits((u16::from_le_bytes([c[0], c[1]]) as u32) << 16))
                .collect(),
        ),
        DType::I64 => Buffer::I64(
            c.map(|c| i64::from_le_bytes(c.try_into().unwrap()))
                .collect(),
        ),
        DType::I32 => Buffer::I64(
            c.map(|c| i32::from_le_bytes(c.try_into().unwrap()) as i64)
                .collect(),
        ),
        DType::I16 => Buffer::I64(c.map(|c| i16::from_le_bytes([c[0], c[1]]) as i64).collect()),
        DType::I8 => Buffer::I64(c.map(|c| c[0] as i8 as i64).collect()),
        DType::U8 => Buffer::I64(c.map(|c| c[0] as i64).collect()),
        DType::Bool => Buffer::Bool(c.map(|c| c[0] != 0).collect()),
    };
    Tensor::new(dt, shape, buffer)
}

/// A `.safetensors` file holding `tensors` (f32/f64/i64/i32/bool only).
pub fn write(tensors: &[(&str, &Tensor)]) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, t) in tensors {
        let start = data.len();
        let code = match (t.buffer(), t.dtype()) {
            (Buffer::F32(v), _) => {
                v.iter()
                    .for_each(|x| data.extend_from_slice(&x.to_le_bytes()));
                "F32"
            }
            (Buffer::F64(v), _) => {
                v.iter()
                    .for_each(|x| data.extend_from_slice(&x.to_le_bytes()));
                "F64"
            }
            (Buffer::I64(v), DType::I32) => {
                v.iter()
                    .for_each(|&x| data.extend_from_slice(&(x as i32).to_le_bytes()));
                "I32"
            }
            (Buffer::I64(v), _) => {
                v.iter()
                    .for_each(|x| data.extend_from_slice(&x.to_le_bytes()));
                "I64"
            }
            (Buffer::Bool(v), _) => {
                v.iter().for_each(|&x| data.push(x as u8));
                "BOOL"
            }
        };
        header.insert(
            name.to_string(),
            serde_json::json!({"dtype": code, "shape": t.shape(), "data_offsets": [start, data.len()]}),
        );
    }
    let json = serde_json::to_vec(&serde_json::Value::Object(header)).unwrap();
    let mut out = (json.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&json);
    out.extend_from_slice(&data);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let a = Tensor::from_f32(vec![2, 2], vec![1.0, 2.0, 3.0, 4.0]).unwrap();
        let b = Tensor::from_i64(DType::I32, vec![3], vec![1, -2, 3]).unwrap();
        let bytes = write(&[("fc.weight", &a), ("idx", &b)]);
        assert_eq!(names(&bytes).unwrap(), vec!["fc.weight", "idx"]);
        assert_eq!(read(&bytes, "fc.weight").unwrap(), a);
        assert_eq!(read(&bytes, "idx").unwrap(), b);
        assert!(read(&bytes, "nope").unwrap_err().0.contains("fc.weight"));
    }
}
