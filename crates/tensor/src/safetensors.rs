//! `.safetensors` files: an 8-byte header length, a JSON header, then raw data.

use std::io::{Cursor, Read, Seek, SeekFrom};

use crate::wire::{read_elements, Wire};
use crate::{checked_numel, DType, Tensor, TensorError};

fn err(message: impl Into<String>) -> TensorError {
    TensorError(message.into())
}

/// The longest header read (the format's own limit is 100 MB).
pub const MAX_HEADER: u64 = 100 << 20;

/// The names of the tensors in a `.safetensors` file, sorted.
pub fn names(bytes: &[u8]) -> Result<Vec<String>, TensorError> {
    names_from(&mut Cursor::new(bytes), bytes.len() as u64)
}

/// [`names`] of a file of `len` bytes read from `r` (only its header is read).
pub fn names_from(r: &mut dyn Read, len: u64) -> Result<Vec<String>, TensorError> {
    let (header, _) = header(r, len)?;
    Ok(header_names(&header))
}

fn header_names(header: &serde_json::Map<String, serde_json::Value>) -> Vec<String> {
    let mut names: Vec<String> = header
        .keys()
        .filter(|k| *k != "__metadata__")
        .cloned()
        .collect();
    names.sort();
    names
}

/// The JSON header and where the data starts.
fn header(
    r: &mut dyn Read,
    len: u64,
) -> Result<(serde_json::Map<String, serde_json::Value>, u64), TensorError> {
    let mut pre = [0u8; 8];
    if len < 8 || r.read_exact(&mut pre).is_err() {
        return Err(err("not a .safetensors file (too short)"));
    }
    let n = u64::from_le_bytes(pre);
    if n > MAX_HEADER {
        return Err(err(format!(
            "bad .safetensors header: it claims {n} bytes, more than the format allows ({MAX_HEADER})"
        )));
    }
    if 8 + n > len {
        return Err(err("truncated .safetensors header"));
    }
    let mut json = vec![0u8; n as usize];
    r.read_exact(&mut json)
        .map_err(|_| err("truncated .safetensors header"))?;
    let header: serde_json::Value =
        serde_json::from_slice(&json).map_err(|e| err(format!("bad .safetensors header: {e}")))?;
    match header {
        serde_json::Value::Object(map) => Ok((map, 8 + n)),
        _ => Err(err("bad .safetensors header: not a JSON object")),
    }
}

/// Every tensor's [`Entry`] in a file of `len` bytes read from `r` (only
/// the header is read), sorted by name.
pub fn entries_from(r: &mut dyn Read, len: u64) -> Result<Vec<(String, Entry)>, TensorError> {
    let (header, _) = header(r, len)?;
    header_names(&header)
        .into_iter()
        .map(|name| {
            let e = &header[&name];
            let dtype = e["dtype"]
                .as_str()
                .and_then(wire_of)
                .ok_or_else(|| err(format!("tensor '{name}': unsupported or missing dtype")))?
                .dtype();
            let shape = e["shape"]
                .as_array()
                .and_then(|a| {
                    a.iter()
                        .map(|d| d.as_u64().and_then(|d| usize::try_from(d).ok()))
                        .collect::<Option<Vec<usize>>>()
                })
                .ok_or_else(|| err(format!("tensor '{name}': bad shape")))?;
            Ok((name, Entry { dtype, shape }))
        })
        .collect()
}

fn wire_of(code: &str) -> Option<Wire> {
    Some(match code {
        "F32" => Wire::F32,
        "F64" => Wire::F64,
        "F16" => Wire::F16,
        "BF16" => Wire::BF16,
        "I64" => Wire::I64,
        "I32" => Wire::I32,
        "I16" => Wire::I16,
        "I8" => Wire::I8,
        "U8" => Wire::U8,
        "BOOL" => Wire::Bool,
        _ => return None,
    })
}

/// What a `.safetensors` header says of one tensor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub dtype: DType,
    pub shape: Vec<usize>,
}

/// Reads the tensor called `name`.
pub fn read(bytes: &[u8], name: &str) -> Result<Tensor, TensorError> {
    read_from(
        &mut Cursor::new(bytes),
        bytes.len() as u64,
        name,
        &mut |_| Ok(()),
    )
}

/// Where tensor `name`'s data lies in a file of `len` bytes whose header
/// (read) is `header` and whose data starts at `data_start`: its entry, wire
/// encoding, element count and byte range from the file's start.
struct Located {
    entry: Entry,
    wire: Wire,
    n: usize,
    start: u64,
    end: u64,
}

fn locate(
    header: &serde_json::Map<String, serde_json::Value>,
    data_start: u64,
    len: u64,
    name: &str,
) -> Result<Located, TensorError> {
    let entry = header.get(name).ok_or_else(|| {
        let available = header_names(header).join(", ");
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
                .and_then(|d| usize::try_from(d).ok())
                .ok_or_else(|| err("bad dimension"))
        })
        .collect::<Result<_, _>>()?;
    let offsets = entry["data_offsets"]
        .as_array()
        .ok_or_else(|| err("tensor entry without data_offsets"))?;
    let (start, end) = match offsets.as_slice() {
        [a, b] => match (a.as_u64(), b.as_u64()) {
            (Some(a), Some(b)) if a <= b => (a, b),
            _ => return Err(err("bad data_offsets")),
        },
        _ => return Err(err("bad data_offsets")),
    };
    let wire =
        wire_of(dtype).ok_or_else(|| err(format!("unsupported safetensors dtype {dtype}")))?;
    let dt = wire.dtype();
    let n = checked_numel(&shape).ok_or_else(|| {
        err(format!(
            "tensor '{name}': shape {shape:?} has more elements than can be counted"
        ))
    })?;
    let need = (n as u64).checked_mul(wire.width() as u64);
    if need != Some(end - start) {
        return Err(err(format!(
            "tensor '{name}': shape {shape:?} needs {} bytes, has {}",
            need.map_or("too many".to_string(), |b| b.to_string()),
            end - start
        )));
    }
    if data_start.checked_add(end).is_none_or(|e| e > len) {
        return Err(err("tensor data lies outside the file"));
    }
    Ok(Located {
        entry: Entry { dtype: dt, shape },
        wire,
        n,
        start: data_start + start,
        end: data_start + end,
    })
}

/// Reads the tensor called `name` from a file of `len` bytes. `check` sees
/// the tensor's dtype and shape before its data is read and may refuse them;
/// only the header and that tensor's bytes are read.
pub fn read_from<R: Read + Seek>(
    r: &mut R,
    len: u64,
    name: &str,
    check: &mut dyn FnMut(&Entry) -> Result<(), String>,
) -> Result<Tensor, TensorError> {
    let (header, data_start) = header(r, len)?;
    let at = locate(&header, data_start, len, name)?;
    check(&at.entry).map_err(TensorError)?;
    r.seek(SeekFrom::Start(at.start))
        .map_err(|e| err(format!("cannot read tensor '{name}': {e}")))?;
    let buffer = read_elements(r, at.wire, at.n)?;
    Tensor::new(at.entry.dtype, at.entry.shape, buffer)
}

/// [`read_from`] on a memory-mapped file: the tensor keeps its bytes in the
/// mapping ([`Tensor::from_file`]), decoded only if a kernel needs them so.
pub fn read_mapped(
    map: &std::sync::Arc<crate::mapped::Mapped>,
    name: &str,
    check: &mut dyn FnMut(&Entry) -> Result<(), String>,
) -> Result<Tensor, TensorError> {
    let bytes = map.bytes();
    let len = bytes.len() as u64;
    let (header, data_start) = header(&mut Cursor::new(bytes), len)?;
    let at = locate(&header, data_start, len, name)?;
    check(&at.entry).map_err(TensorError)?;
    let file = crate::mapped::FileBytes::new(
        map.clone(),
        at.start as usize,
        (at.end - at.start) as usize,
    )?;
    Tensor::from_file(at.entry.dtype, at.entry.shape, file)
}

/// A `.safetensors` file holding `tensors`, each in its own dtype (`f16`
/// and `bf16` as `F16`/`BF16`, narrow integers at their width).
pub fn write(tensors: &[(&str, &Tensor)]) -> Vec<u8> {
    let mut out = Vec::new();
    write_to(&mut out, tensors).expect("writing to memory");
    out
}

/// The safetensors dtype code of `dtype`.
fn code(dtype: DType) -> &'static str {
    match dtype {
        DType::F32 => "F32",
        DType::F64 => "F64",
        DType::F16 => "F16",
        DType::BF16 => "BF16",
        DType::I64 => "I64",
        DType::I32 => "I32",
        DType::I16 => "I16",
        DType::I8 => "I8",
        DType::U8 => "U8",
        DType::Bool => "BOOL",
    }
}

/// [`write`] to `w`: the header, then each tensor's bytes streamed.
pub fn write_to(w: &mut dyn std::io::Write, tensors: &[(&str, &Tensor)]) -> std::io::Result<()> {
    let mut header = serde_json::Map::new();
    let mut at = 0usize;
    for (name, t) in tensors {
        let len = t.numel() * t.dtype().size_of();
        header.insert(
            name.to_string(),
            serde_json::json!({"dtype": code(t.dtype()), "shape": t.shape(), "data_offsets": [at, at + len]}),
        );
        at += len;
    }
    let mut json = serde_json::to_vec(&serde_json::Value::Object(header)).expect("JSON");
    // Padded with spaces to a multiple of 8, as the format's own writer
    // does: the data then starts aligned, and a memory-mapped f32 tensor at
    // an aligned offset is used in place.
    json.resize(json.len().div_ceil(8) * 8, b' ');
    w.write_all(&(json.len() as u64).to_le_bytes())?;
    w.write_all(&json)?;
    for (_, t) in tensors {
        crate::wire::write_raw(t, w)?;
    }
    Ok(())
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
        let h = a.cast(DType::F16);
        let bf = a.cast(DType::BF16);
        let i8 = Tensor::from_i64(DType::I8, vec![2], vec![-1, 5]).unwrap();
        let bytes = write(&[("h", &h), ("bf", &bf), ("i8", &i8)]);
        assert_eq!(read(&bytes, "h").unwrap(), h);
        assert_eq!(read(&bytes, "bf").unwrap(), bf);
        assert_eq!(read(&bytes, "i8").unwrap(), i8);
    }

    #[test]
    fn a_mapped_file_is_used_in_place() {
        let w = Tensor::from_f32(vec![2, 3], vec![1.0, -2.0, 3.5, 0.0, 5.0, 6.0]).unwrap();
        let h = w.cast(DType::F16);
        let bytes = write(&[("a.w", &w), ("b.h", &h)]);
        let n = u64::from_le_bytes(bytes[..8].try_into().unwrap());
        assert_eq!(n % 8, 0, "the header is padded to 8 bytes");
        let path =
            std::env::temp_dir().join(format!("tensor-mapped-{}.safetensors", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        let map = crate::mapped::shared(&path).unwrap();
        assert!(
            std::sync::Arc::ptr_eq(&map, &crate::mapped::shared(&path).unwrap()),
            "one mapping per file"
        );
        let t = read_mapped(&map, "a.w", &mut |_| Ok(())).unwrap();
        let in_place = t
            .mapped_f32()
            .expect("an aligned f32 weight is read in place");
        assert_eq!(in_place, &[1.0, -2.0, 3.5, 0.0, 5.0, 6.0]);
        let range = map.bytes().as_ptr_range();
        assert!(
            range.contains(&(in_place.as_ptr() as *const u8)),
            "the elements are the mapping's bytes, not a copy"
        );
        assert_eq!(t, w);
        let th = read_mapped(&map, "b.h", &mut |_| Ok(())).unwrap();
        assert!(th.mapped_f32().is_none(), "f16 is widened when used");
        assert_eq!(th, h);
        let e =
            read_mapped(&map, "a.w", &mut |e| Err(format!("refused {:?}", e.shape))).unwrap_err();
        assert_eq!(e.0, "refused [2, 3]");
        let _ = std::fs::remove_file(&path);
    }
}
