//! Element encodings of tensor files (little-endian), decoded in bounded
//! chunks straight into a tensor's buffer: reading a file never holds its raw
//! bytes and the decoded tensor at once.

use std::io::Read;

use crate::npy::f16_to_f32;
use crate::{limits, Buffer, DType, TensorError};

/// How one element is stored in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    F32,
    F64,
    F16,
    BF16,
    I64,
    I32,
    I16,
    I8,
    U8,
    Bool,
}

impl Wire {
    pub(crate) fn dtype(self) -> DType {
        match self {
            Wire::F32 => DType::F32,
            Wire::F64 => DType::F64,
            Wire::F16 => DType::F16,
            Wire::BF16 => DType::BF16,
            Wire::I64 => DType::I64,
            Wire::I32 => DType::I32,
            Wire::I16 => DType::I16,
            Wire::I8 => DType::I8,
            Wire::U8 => DType::U8,
            Wire::Bool => DType::Bool,
        }
    }

    pub(crate) fn width(self) -> usize {
        self.dtype().size_of()
    }

    fn decode(self, c: &[u8], out: &mut Buffer) {
        match (self, out) {
            (Wire::F32, Buffer::F32(v)) => v.extend(
                c.chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            ),
            (Wire::F16, Buffer::F32(v)) => v.extend(
                c.chunks_exact(2)
                    .map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]]))),
            ),
            (Wire::BF16, Buffer::F32(v)) => v.extend(
                c.chunks_exact(2)
                    .map(|c| f32::from_bits((u16::from_le_bytes([c[0], c[1]]) as u32) << 16)),
            ),
            (Wire::F64, Buffer::F64(v)) => v.extend(
                c.chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))),
            ),
            (Wire::I64, Buffer::I64(v)) => v.extend(
                c.chunks_exact(8)
                    .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes"))),
            ),
            (Wire::I32, Buffer::I64(v)) => v.extend(
                c.chunks_exact(4)
                    .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64),
            ),
            (Wire::I16, Buffer::I64(v)) => v.extend(
                c.chunks_exact(2)
                    .map(|c| i16::from_le_bytes([c[0], c[1]]) as i64),
            ),
            (Wire::I8, Buffer::I64(v)) => v.extend(c.iter().map(|&b| b as i8 as i64)),
            (Wire::U8, Buffer::I64(v)) => v.extend(c.iter().map(|&b| b as i64)),
            (Wire::Bool, Buffer::Bool(v)) => v.extend(c.iter().map(|&b| b != 0)),
            _ => unreachable!("the buffer is made for the wire type"),
        }
    }
}

/// Reads `n` elements of `wire` from `r` into a new buffer. The buffer is
/// reserved first (an error, not an abort, when that fails); the caller has
/// checked that the source holds `n` elements.
pub(crate) fn read_elements(r: &mut dyn Read, wire: Wire, n: usize) -> Result<Buffer, TensorError> {
    let bytes = n
        .checked_mul(wire.width())
        .ok_or_else(|| TensorError(format!("{n} elements overflow a byte count")))?;
    fn reserved<T>(n: usize) -> Result<Vec<T>, TensorError> {
        let mut v = Vec::new();
        v.try_reserve_exact(n).map_err(|_| {
            TensorError(format!(
                "cannot allocate {} for {n} elements",
                limits::format_bytes(n.saturating_mul(std::mem::size_of::<T>()))
            ))
        })?;
        Ok(v)
    }
    let mut out = match wire.dtype().storage() {
        DType::F32 => Buffer::F32(reserved(n)?),
        DType::F64 => Buffer::F64(reserved(n)?),
        DType::I64 => Buffer::I64(reserved(n)?),
        _ => Buffer::Bool(reserved(n)?),
    };
    const CHUNK: usize = 1 << 16;
    let mut chunk = vec![0u8; CHUNK.min(bytes)];
    let mut left = bytes;
    while left > 0 {
        let take = left.min(CHUNK);
        r.read_exact(&mut chunk[..take]).map_err(|e| {
            TensorError(match e.kind() {
                std::io::ErrorKind::UnexpectedEof => {
                    format!("the data is truncated: {bytes} bytes needed")
                }
                _ => format!("cannot read the data: {e}"),
            })
        })?;
        wire.decode(&chunk[..take], &mut out);
        left -= take;
    }
    Ok(out)
}

impl Wire {
    /// How `dtype`'s elements are stored in a file (MindSpore's own widths).
    pub(crate) fn of(dtype: DType) -> Wire {
        match dtype {
            DType::F32 => Wire::F32,
            DType::F64 => Wire::F64,
            DType::F16 => Wire::F16,
            DType::BF16 => Wire::BF16,
            DType::I64 => Wire::I64,
            DType::I32 => Wire::I32,
            DType::I16 => Wire::I16,
            DType::I8 => Wire::I8,
            DType::U8 => Wire::U8,
            DType::Bool => Wire::Bool,
        }
    }
}

/// A reader over several byte slices one after another (a tensor whose
/// bytes a file stores in pieces).
pub(crate) struct Pieces<'a> {
    parts: &'a [&'a [u8]],
    at: usize,
    off: usize,
}

impl<'a> Pieces<'a> {
    pub(crate) fn new(parts: &'a [&'a [u8]]) -> Pieces<'a> {
        Pieces {
            parts,
            at: 0,
            off: 0,
        }
    }
}

impl Read for Pieces<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while let Some(part) = self.parts.get(self.at) {
            let rest = &part[self.off..];
            if rest.is_empty() {
                self.at += 1;
                self.off = 0;
                continue;
            }
            let n = rest.len().min(buf.len());
            buf[..n].copy_from_slice(&rest[..n]);
            self.off += n;
            return Ok(n);
        }
        Ok(0)
    }
}

/// Writes `t`'s elements in its dtype's own little-endian encoding (`f16` as
/// 2 bytes, `i8` as 1...), as MindSpore stores them, in bounded chunks.
pub fn write_raw(t: &crate::Tensor, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    use crate::npy::f32_to_f16;
    const CHUNK: usize = 1 << 14;
    let mut out: Vec<u8> = Vec::with_capacity(CHUNK * 8);
    if let Some(f) = t.file_bytes() {
        // Already in the dtype's own encoding: copied from the file as is.
        for c in f.bytes().chunks(64 << 20) {
            w.write_all(c)?;
        }
        return Ok(());
    }
    let dtype = t.dtype();
    macro_rules! each {
        ($v:expr, $f:expr) => {
            for c in $v.chunks(CHUNK) {
                out.clear();
                c.iter().for_each(|x| $f(&mut out, x));
                w.write_all(&out)?;
            }
        };
    }
    match (t.buffer(), dtype) {
        (Buffer::F32(v), DType::F16) => each!(v, |o: &mut Vec<u8>, x: &f32| o
            .extend_from_slice(&f32_to_f16(*x).to_le_bytes())),
        (Buffer::F32(v), DType::BF16) => each!(v, |o: &mut Vec<u8>, x: &f32| o
            .extend_from_slice(&((x.to_bits() >> 16) as u16).to_le_bytes())),
        (Buffer::F32(v), _) => each!(v, |o: &mut Vec<u8>, x: &f32| o
            .extend_from_slice(&x.to_le_bytes())),
        (Buffer::F64(v), _) => each!(v, |o: &mut Vec<u8>, x: &f64| o
            .extend_from_slice(&x.to_le_bytes())),
        (Buffer::I64(v), DType::I32) => each!(v, |o: &mut Vec<u8>, x: &i64| o
            .extend_from_slice(&(*x as i32).to_le_bytes())),
        (Buffer::I64(v), DType::I16) => each!(v, |o: &mut Vec<u8>, x: &i64| o
            .extend_from_slice(&(*x as i16).to_le_bytes())),
        (Buffer::I64(v), DType::I8 | DType::U8) => {
            each!(v, |o: &mut Vec<u8>, x: &i64| o.push(*x as u8))
        }
        (Buffer::I64(v), _) => each!(v, |o: &mut Vec<u8>, x: &i64| o
            .extend_from_slice(&x.to_le_bytes())),
        (Buffer::Bool(v), _) => each!(v, |o: &mut Vec<u8>, x: &bool| o.push(*x as u8)),
    }
    Ok(())
}
