//! MindSpore checkpoints (`.ckpt`): the `Checkpoint` protobuf message of
//! MindSpore's `checkpoint.proto`,
//!
//! ```text
//! message Checkpoint { repeated Value value = 1;
//!   message Value { required string tag = 1;
//!     oneof value { TensorProto tensor = 2; MapTensorProto maptensor = 3; } } }
//! message TensorProto { repeated int64 dims = 1; required string tensor_type = 2;
//!                       required bytes tensor_content = 3; }
//! ```
//!
//! as `mindspore.save_checkpoint` writes it: one `Value` per parameter, keyed
//! by the parameter's name (`tag`), its bytes in the parameter's own dtype
//! (`tensor_type` is MindSpore's name: `Float32`, `Float16`, `BFloat16`...).
//! A parameter over 512 MiB is written as several `Value`s with the same tag
//! whose contents follow one another; a scalar has `dims` `[]` (or `[0]`); the
//! file may end with `crc_num` and a 10-byte CRC, which is not part of the
//! message.
//!
//! Reading works on the file's bytes in place (a memory map, see
//! [`crate::mapped`]): [`index`] walks the messages without touching tensor
//! bytes, and [`Entry::read`] decodes one parameter.

use std::io::Write;

use crate::wire::{read_elements, write_raw, Pieces, Wire};
use crate::{checked_numel, DType, Tensor, TensorError};

fn err(message: impl Into<String>) -> TensorError {
    TensorError(message.into())
}

/// MindSpore's writer splits a parameter's bytes into pieces of this size.
pub const SLICE_BYTES: usize = 512 << 20;

/// One parameter of a checkpoint: where its bytes are, not the bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    /// MindSpore's name of its dtype (`Float32`, `UInt32`, `str`...).
    pub type_name: String,
    /// The dtype, when mirdsl has it.
    pub dtype: Option<DType>,
    pub shape: Vec<usize>,
    /// Byte ranges (offset, length) in the file, in order.
    pieces: Vec<(usize, usize)>,
}

/// The dtype MindSpore calls `name` in a checkpoint.
pub fn dtype_of(name: &str) -> Option<DType> {
    DType::ALL.into_iter().find(|d| d.mindspore_name() == name)
}

impl Entry {
    /// The parameter's size in the file.
    pub fn byte_len(&self) -> usize {
        self.pieces.iter().map(|p| p.1).sum()
    }

    /// Decodes the parameter from `bytes`, the file [`index`] read.
    pub fn read(&self, bytes: &[u8]) -> Result<Tensor, TensorError> {
        let name = &self.name;
        let dtype = self.dtype.ok_or_else(|| {
            err(format!(
                "parameter `{name}` is {} in the checkpoint, a dtype mirdsl does not have",
                self.type_name
            ))
        })?;
        let parts: Vec<&[u8]> = self.pieces.iter().map(|&(o, l)| &bytes[o..o + l]).collect();
        let n = checked_numel(&self.shape).unwrap_or(usize::MAX);
        let buffer = read_elements(&mut Pieces::new(&parts), Wire::of(dtype), n)
            .map_err(|e| err(format!("parameter `{name}`: {e}")))?;
        Tensor::new(dtype, self.shape.clone(), buffer)
    }
}

/// A cursor over protobuf bytes.
struct Cur<'a> {
    b: &'a [u8],
    at: usize,
    end: usize,
}

impl<'a> Cur<'a> {
    fn done(&self) -> bool {
        self.at >= self.end
    }

    fn varint(&mut self) -> Result<u64, TensorError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&byte) = self.b.get(self.at).filter(|_| self.at < self.end) else {
                return Err(err("truncated checkpoint (a number runs past the end)"));
            };
            self.at += 1;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(err("bad checkpoint: a number longer than 10 bytes"))
    }

    /// A length-delimited field's (offset, length).
    fn delimited(&mut self) -> Result<(usize, usize), TensorError> {
        let n = self.varint()?;
        let n = usize::try_from(n).map_err(|_| err("bad checkpoint: a field too long"))?;
        if n > self.end - self.at {
            return Err(err("truncated checkpoint (a field runs past the end)"));
        }
        let start = self.at;
        self.at += n;
        Ok((start, n))
    }

    fn skip(&mut self, wire_type: u64) -> Result<(), TensorError> {
        match wire_type {
            0 => {
                self.varint()?;
            }
            1 => self.at += 8,
            2 => {
                self.delimited()?;
            }
            5 => self.at += 4,
            t => return Err(err(format!("bad checkpoint: wire type {t}"))),
        }
        if self.at > self.end {
            return Err(err("truncated checkpoint"));
        }
        Ok(())
    }

    fn sub(&self, (start, n): (usize, usize)) -> Cur<'a> {
        Cur {
            b: self.b,
            at: start,
            end: start + n,
        }
    }

    fn text(&self, (start, n): (usize, usize)) -> Result<String, TensorError> {
        String::from_utf8(self.b[start..start + n].to_vec())
            .map_err(|_| err("bad checkpoint: a name that is not UTF-8"))
    }
}

/// The length of the message in `bytes`: without the `crc_num` trailer.
fn message_len(bytes: &[u8]) -> usize {
    let n = bytes.len();
    if n >= 17 && &bytes[n - 17..n - 10] == b"crc_num" {
        n - 17
    } else {
        n
    }
}

/// The parameters of a checkpoint, in file order (pieces of one parameter
/// joined). Reads only the messages' headers: tensor bytes are not touched.
pub fn index(bytes: &[u8]) -> Result<Vec<Entry>, TensorError> {
    let mut top = Cur {
        b: bytes,
        at: 0,
        end: message_len(bytes),
    };
    let mut entries: Vec<Entry> = Vec::new();
    while !top.done() {
        let key = top.varint()?;
        if key != (1 << 3 | 2) {
            return Err(err(format!(
                "not a MindSpore checkpoint (byte {} is not the start of a parameter)",
                top.at
            )));
        }
        let value = top.delimited()?;
        let mut v = top.sub(value);
        let mut tag = None;
        let mut tensor = None;
        while !v.done() {
            let key = v.varint()?;
            match key {
                0x0a => {
                    let r = v.delimited()?;
                    tag = Some(v.text(r)?)
                }
                0x12 => tensor = Some(v.delimited()?),
                _ => v.skip(key & 7)?,
            }
        }
        let tag = tag.ok_or_else(|| err("bad checkpoint: a value without its name (tag)"))?;
        // A map parameter (`maptensor`) has no tensor: not a weight.
        let Some(tensor) = tensor else { continue };
        let mut t = v.sub(tensor);
        let (mut dims, mut type_name, mut content) = (Vec::new(), None, None);
        while !t.done() {
            let key = t.varint()?;
            match key {
                0x08 => dims.push(t.varint()? as i64),
                0x0a => {
                    let r = t.delimited()?;
                    let mut packed = t.sub(r);
                    while !packed.done() {
                        dims.push(packed.varint()? as i64);
                    }
                }
                0x12 => {
                    let r = t.delimited()?;
                    type_name = Some(t.text(r)?)
                }
                0x1a => content = Some(t.delimited()?),
                _ => t.skip(key & 7)?,
            }
        }
        let type_name = type_name.ok_or_else(|| {
            err(format!(
                "bad checkpoint: parameter `{tag}` has no tensor_type"
            ))
        })?;
        let content = content.unwrap_or((t.at, 0));
        let shape: Vec<usize> = dims
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<Result<_, _>>()
            .map_err(|_| {
                err(format!(
                    "bad checkpoint: parameter `{tag}` has dims {dims:?}"
                ))
            })?;
        match entries.last_mut() {
            // The next piece of a parameter split by size.
            Some(last) if last.name == tag && last.type_name == type_name => {
                last.pieces.push(content)
            }
            _ => entries.push(Entry {
                dtype: dtype_of(&type_name),
                name: tag,
                type_name,
                shape,
                pieces: vec![content],
            }),
        }
    }
    for e in &mut entries {
        let Some(dtype) = e.dtype else { continue };
        let width = dtype.size_of();
        let have = e.byte_len();
        // MindSpore writes a scalar's dims as [] and reads [0] as a scalar too.
        if e.shape == [0] && have == width {
            e.shape.clear();
        }
        let need = checked_numel(&e.shape).and_then(|n| n.checked_mul(width));
        if need != Some(have) {
            return Err(err(format!(
                "bad checkpoint: parameter `{}` is {} of shape {:?}, which needs {} bytes, but it has {have}",
                e.name,
                e.type_name,
                e.shape,
                need.map_or("too many".to_string(), |n| n.to_string())
            )));
        }
    }
    Ok(entries)
}

/// The parameter names of a checkpoint, in file order.
pub fn names(bytes: &[u8]) -> Result<Vec<String>, TensorError> {
    Ok(index(bytes)?.into_iter().map(|e| e.name).collect())
}

/// Reads parameter `name`.
pub fn read(bytes: &[u8], name: &str) -> Result<Tensor, TensorError> {
    let entries = index(bytes)?;
    find(&entries, name)?.read(bytes)
}

/// The entry called `name`, or an error listing what the checkpoint has.
pub fn find<'e>(entries: &'e [Entry], name: &str) -> Result<&'e Entry, TensorError> {
    entries.iter().find(|e| e.name == name).ok_or_else(|| {
        let shown: Vec<&str> = entries.iter().take(8).map(|e| e.name.as_str()).collect();
        let more = entries.len().saturating_sub(8);
        err(format!(
            "no parameter `{name}` in the checkpoint (it has {}{})",
            if shown.is_empty() {
                "none".to_string()
            } else {
                shown.join(", ")
            },
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ))
    })
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn varint_len(v: u64) -> usize {
    let mut v = v;
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

/// Writes `tensors` as `mindspore.save_checkpoint` does: one `Value` per
/// parameter (pieces of [`SLICE_BYTES`] for larger ones), each dtype kept.
/// Tensor bytes are streamed to `w`, never gathered.
pub fn write_to(w: &mut dyn Write, tensors: &[(&str, &Tensor)]) -> std::io::Result<()> {
    for (name, t) in tensors {
        let total = t.numel() * t.dtype().size_of();
        let mut raw = None;
        let mut start = 0;
        loop {
            let len = (total - start).min(SLICE_BYTES);
            // TensorProto: dims, tensor_type, tensor_content.
            let mut head = Vec::new();
            for &d in t.shape() {
                head.push(0x08);
                put_varint(&mut head, d as u64);
            }
            let type_name = t.dtype().mindspore_name().as_bytes();
            head.push(0x12);
            put_varint(&mut head, type_name.len() as u64);
            head.extend_from_slice(type_name);
            head.push(0x1a);
            put_varint(&mut head, len as u64);
            let tensor_len = head.len() + len;
            // Value: tag, tensor.
            let mut value = vec![0x0a];
            put_varint(&mut value, name.len() as u64);
            value.extend_from_slice(name.as_bytes());
            value.push(0x12);
            put_varint(&mut value, tensor_len as u64);
            let value_len = value.len() + tensor_len;
            let mut out = vec![0x0a];
            put_varint(&mut out, value_len as u64);
            debug_assert_eq!(out.len(), 1 + varint_len(value_len as u64));
            out.extend_from_slice(&value);
            out.extend_from_slice(&head);
            w.write_all(&out)?;
            if total <= SLICE_BYTES {
                write_raw(t, w)?;
            } else {
                // Encode once, then hand out the slices.
                let bytes = raw.get_or_insert_with(|| {
                    let mut b = Vec::with_capacity(total);
                    write_raw(t, &mut b).expect("writing to memory");
                    b
                });
                w.write_all(&bytes[start..start + len])?;
            }
            start += len;
            if start >= total {
                break;
            }
        }
    }
    Ok(())
}

/// The bytes of a checkpoint holding `tensors` (see [`write_to`]).
pub fn write(tensors: &[(&str, &Tensor)]) -> Vec<u8> {
    let mut out = Vec::new();
    write_to(&mut out, tensors).expect("writing to memory");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_dtypes() {
        let a = Tensor::from_f32(vec![2, 2], vec![1.0, 2.5, -3.0, 4.0]).unwrap();
        let h = a.cast(DType::F16);
        let b = a.cast(DType::BF16);
        let i = Tensor::from_i64(DType::I32, vec![3], vec![1, -2, 3]).unwrap();
        let s = Tensor::scalar(DType::I64, 7.0);
        let bytes = write(&[
            ("fc.weight", &a),
            ("h", &h),
            ("b", &b),
            ("idx", &i),
            ("step", &s),
        ]);
        assert_eq!(
            names(&bytes).unwrap(),
            ["fc.weight", "h", "b", "idx", "step"]
        );
        for (n, t) in [
            ("fc.weight", &a),
            ("h", &h),
            ("b", &b),
            ("idx", &i),
            ("step", &s),
        ] {
            assert_eq!(&read(&bytes, n).unwrap(), t, "{n}");
        }
        let e = read(&bytes, "nope").unwrap_err().0;
        assert!(e.contains("`nope`") && e.contains("fc.weight"), "{e}");
    }

    #[test]
    fn pieces_and_crc_trailer() {
        // Two values with one tag are one parameter; the CRC trailer is not read.
        let t = Tensor::from_f32(vec![4], vec![1.0, 2.0, 3.0, 4.0]).unwrap();
        let mut one = write(&[("w", &t)]);
        let full = one.clone();
        // Rewrite as two pieces of 8 bytes each.
        let piece = |data: &[f32]| {
            let p = Tensor::from_f32(vec![data.len()], data.to_vec()).unwrap();
            let mut b = write(&[("w", &p)]);
            // dims [2] -> [4]: the dims byte follows "0x08".
            let at = b.iter().position(|&x| x == 0x08).unwrap();
            b[at + 1] = 4;
            b
        };
        let mut two = piece(&[1.0, 2.0]);
        two.extend(piece(&[3.0, 4.0]));
        two.extend_from_slice(b"crc_num");
        two.extend_from_slice(&[0; 10]);
        assert_eq!(read(&two, "w").unwrap(), t);
        one.truncate(one.len() - 2);
        assert!(read(&one, "w").is_err());
        assert_eq!(read(&full, "w").unwrap(), t);
    }

    #[test]
    fn refuses_garbage() {
        assert!(index(b"\x0a\xff\xff\xff\xff\x0f").is_err());
        assert!(index(b"\x08\x01").is_err());
        assert!(index(&[]).unwrap().is_empty());
    }
}
