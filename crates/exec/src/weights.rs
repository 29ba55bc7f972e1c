//! Weight initialisers (spec §2) and the deterministic random numbers they use.
//!
//! `normal(mean, std, seed)` and `uniform(low, high, seed)` draw from a
//! SplitMix64 stream seeded with `seed` (Steele, Lea and Flood, 2014: the state
//! advances by `0x9E3779B97F4A7C15` and each output is the state mixed by
//! `z ^= z >> 30; z *= 0xBF58476D1CE4E5B9; z ^= z >> 27; z *= 0x94D049BB133111EB;
//! z ^= z >> 31`). A uniform draw is `(next >> 11) · 2⁻⁵³` in `[0, 1)`, scaled to
//! `[low, high)`. Normal draws use Marsaglia's polar method (pairs from
//! `u, v` uniform in `[-1, 1)`, rejected unless `0 < s = u² + v² < 1`, giving
//! `u·√(-2 ln s / s)` then `v·√(-2 ln s / s)`), with a logarithm computed from
//! IEEE-754 basic operations only. Values are computed in `f64`, in row-major
//! order, and rounded to the weight's dtype, so one seed gives the same values on
//! every run and platform.

use std::path::Path;

use ir::{Shape, Ty, WeightDef, WeightInit};
use tensor::{Buffer, DType, Tensor};

/// SplitMix64.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// `n` values uniform in `[low, high)`.
pub fn uniform(n: usize, low: f64, high: f64, seed: u64) -> Vec<f64> {
    let mut next = uniform_stream(low, high, seed);
    (0..n).map(|_| next()).collect()
}

/// The stream of [`uniform`]'s values.
fn uniform_stream(low: f64, high: f64, seed: u64) -> impl FnMut() -> f64 {
    let mut rng = SplitMix64::new(seed);
    move || low + (high - low) * rng.next_f64()
}

/// `n` values from a normal distribution.
pub fn normal(n: usize, mean: f64, std: f64, seed: u64) -> Vec<f64> {
    let mut next = normal_stream(mean, std, seed);
    (0..n).map(|_| next()).collect()
}

/// The stream of [`normal`]'s values.
fn normal_stream(mean: f64, std: f64, seed: u64) -> impl FnMut() -> f64 {
    let mut rng = SplitMix64::new(seed);
    let mut pending: Option<f64> = None;
    move || {
        if let Some(v) = pending.take() {
            return v;
        }
        loop {
            let u = 2.0 * rng.next_f64() - 1.0;
            let v = 2.0 * rng.next_f64() - 1.0;
            let s = u * u + v * v;
            if s <= 0.0 || s >= 1.0 {
                continue;
            }
            let m = (-2.0 * portable_ln(s) / s).sqrt();
            pending = Some(mean + std * v * m);
            return mean + std * u * m;
        }
    }
}

/// A tensor of `dtype` and `shape` whose elements, in row-major order, are
/// `next()` converted as `Cast` converts f64. Its buffer is reserved first:
/// an error, not an abort, when the memory cannot be had.
fn generated(
    dtype: DType,
    shape: Vec<usize>,
    mut next: impl FnMut() -> f64,
) -> Result<Tensor, String> {
    fn fill<T>(n: usize, f: impl FnMut() -> T) -> Result<Vec<T>, String> {
        let mut v = Vec::new();
        v.try_reserve_exact(n)
            .map_err(|_| format!("cannot allocate memory for {n} elements"))?;
        v.extend(std::iter::repeat_with(f).take(n));
        Ok(v)
    }
    let n = tensor::checked_numel(&shape).ok_or("the element count overflows")?;
    let buffer = match dtype.storage() {
        DType::F32 => Buffer::F32(fill(n, || next() as f32)?),
        DType::F64 => Buffer::F64(fill(n, next)?),
        DType::I64 => Buffer::I64(fill(n, || next() as i64)?),
        _ => Buffer::Bool(fill(n, || next() != 0.0)?),
    };
    Tensor::new(dtype, shape, buffer).map_err(|e| e.0)
}

/// Natural logarithm of a positive finite `x` from basic IEEE operations only
/// (identical on every platform, unlike the C library's `log`): `x = m·2^e`
/// with `m` in `[√½, √2)`, and `ln m = 2·atanh((m-1)/(m+1))` by its series.
pub fn portable_ln(x: f64) -> f64 {
    if x.is_nan() || x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    if x.is_infinite() {
        return x;
    }
    let (mut m, mut e) = (x, 0i32);
    // Subnormals: scale into the normal range first.
    if m < f64::MIN_POSITIVE {
        m *= (1u64 << 54) as f64;
        e -= 54;
    }
    let bits = m.to_bits();
    e += ((bits >> 52) & 0x7ff) as i32 - 1023;
    m = f64::from_bits((bits & !(0x7ffu64 << 52)) | (1023u64 << 52)); // in [1, 2)
    if m >= std::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    let t = (m - 1.0) / (m + 1.0);
    let t2 = t * t;
    let mut term = t;
    let mut sum = 0.0;
    let mut k = 1.0;
    for _ in 0..30 {
        sum += term / k;
        term *= t2;
        k += 2.0;
    }
    2.0 * sum + e as f64 * std::f64::consts::LN_2
}

/// The shape a weight's declared type gives, and whether it is a scalar.
pub fn declared_shape(ty: &Ty) -> Result<(DType, Vec<usize>, bool), String> {
    match ty {
        Ty::Scalar(d) => Ok((*d, Vec::new(), true)),
        Ty::Tensor(d, shape) => match shape.as_known() {
            Some(dims) if dims.iter().all(|&n| n >= 0) => {
                Ok((*d, dims.iter().map(|&n| n as usize).collect(), false))
            }
            _ => Err(format!("a weight needs a concrete shape, not {shape}")),
        },
        other => Err(format!(
            "a weight must be a tensor or a scalar, not {other}"
        )),
    }
}

/// A weight's initial value; paths of `load` are relative to `base_dir`.
/// A weight larger than the default memory budget is refused.
pub fn init_weight(def: &WeightDef, base_dir: &Path) -> Result<(Tensor, bool), String> {
    init_weight_within(def, base_dir, tensor::limits::default_max_memory())
}

/// [`init_weight`] refusing, before allocating, a weight of more than
/// `max_bytes` (a file is then not read).
pub fn init_weight_within(
    def: &WeightDef,
    base_dir: &Path,
    max_bytes: usize,
) -> Result<(Tensor, bool), String> {
    let (dtype, shape, scalar) = declared_shape(&def.ty)?;
    let bytes = tensor::storage_bytes(dtype, &shape)
        .ok_or_else(|| format!("{} cannot exist: its size overflows", def.ty))?;
    if bytes > max_bytes {
        return Err(format!(
            "{} takes {} ({bytes} bytes), more than the memory budget of {}",
            def.ty,
            tensor::limits::format_bytes(bytes),
            tensor::limits::format_bytes(max_bytes)
        ));
    }
    let t = match &def.init {
        WeightInit::Zeros => Tensor::try_zeros(dtype, shape).map_err(|e| e.0)?,
        WeightInit::Ones => Tensor::try_full(dtype, shape, 1.0).map_err(|e| e.0)?,
        WeightInit::Constant(c) => Tensor::try_full(dtype, shape, *c).map_err(|e| e.0)?,
        WeightInit::Normal { mean, std, seed } => {
            generated(dtype, shape, normal_stream(*mean, *std, *seed))?
        }
        WeightInit::Uniform { low, high, seed } => {
            generated(dtype, shape, uniform_stream(*low, *high, *seed))?
        }
        WeightInit::Tensor(t) => {
            if t.shape() != shape.as_slice() {
                return Err(format!(
                    "the literal has shape {:?} but `{}` is declared {}",
                    t.shape(),
                    def.name,
                    def.ty
                ));
            }
            t.cast(dtype)
        }
        WeightInit::Load { path, key } => {
            let what = match key {
                Some(k) => format!("`{k}` in {path}"),
                None => path.clone(),
            };
            // The file's header must declare exactly this dtype and shape:
            // checked before its data is read, so a file never costs more
            // than the weight's declared size.
            let mut check = |file_dtype: DType, file_shape: &[usize]| {
                if file_dtype != dtype {
                    return Err(format!(
                        "{what} holds {file_dtype} data but `{}` is declared {}",
                        def.name, def.ty
                    ));
                }
                if file_shape != shape.as_slice() {
                    return Err(format!(
                        "{what} has shape {file_shape:?} but `{}` is declared {}",
                        def.name, def.ty
                    ));
                }
                Ok(())
            };
            load_checked(base_dir, path, key.as_deref(), &mut check)?
        }
    };
    Ok((t, scalar))
}

/// Reads a `.npy` file, or tensor `key` of a `.safetensors` file or a
/// MindSpore `.ckpt` checkpoint (relative
/// paths from `base_dir`, the `.mir` file's folder).
pub fn load(base_dir: &Path, path: &str, key: Option<&str>) -> Result<Tensor, String> {
    load_checked(base_dir, path, key, &mut |_, _| Ok(()))
}

/// Sees a file's dtype and shape before its data is read; an error refuses it.
pub type DataCheck<'a> = dyn FnMut(DType, &[usize]) -> Result<(), String> + 'a;

/// [`load`], where `check` sees the file's dtype and shape before any data
/// is read and may refuse them. Only regular files are read: a directory, a
/// device (`/dev/zero`), a FIFO or a socket is an error, found without
/// blocking.
pub fn load_checked(
    base_dir: &Path,
    path: &str,
    key: Option<&str>,
    check: &mut DataCheck,
) -> Result<Tensor, String> {
    let full = base_dir.join(path);
    // Open (and refuse what is not a regular file) before anything else.
    tensor::file::open_regular(&full).map_err(|e| format!("cannot load {}", e.0))?;
    if path.ends_with(".ckpt") {
        return load_ckpt(&full, path, key, check);
    }
    let is_safetensors = path.ends_with(".safetensors") || key.is_some();
    if is_safetensors {
        let names = || tensor::file::safetensors_names(&full).unwrap_or_default();
        let Some(key) = key else {
            return Err(format!(
                "{path} is a safetensors file: name the tensor with load(\"{path}\", \"KEY\") (it has {})",
                list(&names())
            ));
        };
        let mut refused = false;
        tensor::file::load_safetensors(&full, key, &mut |e| {
            check(e.dtype, &e.shape).inspect_err(|_| refused = true)
        })
        .map_err(|e| {
            if refused {
                return e.0;
            }
            let names = names();
            if !names.is_empty() && !names.iter().any(|n| n == key) {
                format!("{path} has no tensor `{key}` (it has {})", list(&names))
            } else {
                format!("cannot read `{key}` from {path}: {e}")
            }
        })
    } else {
        let mut refused = false;
        tensor::file::load_npy(&full, &mut |h| {
            check(h.dtype, &h.shape).inspect_err(|_| refused = true)
        })
        .map_err(|e| {
            if refused {
                e.0
            } else {
                format!("{path} is not a valid .npy file: {e}")
            }
        })
    }
}

/// Parameter `key` of a MindSpore checkpoint (memory-mapped; only that
/// parameter's bytes are decoded, after `check` accepted its dtype and shape).
fn load_ckpt(
    full: &Path,
    path: &str,
    key: Option<&str>,
    check: &mut DataCheck,
) -> Result<Tensor, String> {
    let file = tensor::named::NamedTensors::open(full).map_err(|e| format!("cannot load {e}"))?;
    let Some(key) = key else {
        return Err(format!(
            "{path} is a MindSpore checkpoint: name the parameter with load(\"{path}\", \"NAME\") (it has {})",
            list(&file.names())
        ));
    };
    let Some(info) = file.info(key) else {
        return Err(format!(
            "{path} has no parameter `{key}` (it has {})",
            list(&file.names())
        ));
    };
    let dtype = info
        .dtype
        .clone()
        .map_err(|ms| format!("`{key}` in {path} is {ms}, a dtype mirdsl does not have"))?;
    check(dtype, &info.shape)?;
    file.read(key)
        .map_err(|e| format!("cannot read `{key}` from {path}: {e}"))
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        return "no tensors".into();
    }
    let shown: Vec<String> = names.iter().take(8).map(|n| format!("`{n}`")).collect();
    let more = if names.len() > 8 {
        format!(" and {} more", names.len() - 8)
    } else {
        String::new()
    };
    format!("{}{more}", shown.join(", "))
}

/// What an argument made from its declared type holds (`--arg x=random`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Filler {
    Zeros,
    Ones,
    /// Floats uniform in `[-1, 1)`, integers in `[0, 10)`, booleans fair coins.
    Random,
    /// `random(low, high)`: numbers uniform in `[low, high)` (integers: the
    /// integers in it; checked with [`check_uniform`]).
    Uniform(f64, f64),
}

/// The most an integer bound of `random(low, high)` may be in magnitude
/// (every integer up to it is exact in an `f64`).
const MAX_EXACT_INT: f64 = 9_007_199_254_740_992.0;

/// Whether `random(low, high)` can make values of `dtype`: numbers, `low <
/// high`, integers for an integer dtype (within its range), no booleans.
pub fn check_uniform(low: f64, high: f64, dtype: DType) -> Result<(), String> {
    if !(low.is_finite() && high.is_finite()) {
        return Err("the bounds must be finite numbers".into());
    }
    if low >= high {
        return Err(format!(
            "the low bound must be below the high bound (values are in [low, high)), but {low} >= {high}"
        ));
    }
    if dtype.is_bool() {
        return Err("`random(low, high)` makes numbers, not booleans: use `random`".into());
    }
    if dtype.is_float() {
        return Ok(());
    }
    if low.fract() != 0.0 || high.fract() != 0.0 {
        return Err(format!(
            "the bounds must be integers for {dtype} values (which are in [low, high))"
        ));
    }
    let (min, max) = match dtype {
        DType::I8 => (i8::MIN as f64, i8::MAX as f64 + 1.0),
        DType::I16 => (i16::MIN as f64, i16::MAX as f64 + 1.0),
        DType::I32 => (i32::MIN as f64, i32::MAX as f64 + 1.0),
        DType::U8 => (0.0, u8::MAX as f64 + 1.0),
        _ => (-MAX_EXACT_INT, MAX_EXACT_INT),
    };
    if low < min || high > max {
        return Err(format!(
            "[{low}, {high}) does not fit {dtype} (its values are in [{min}, {max}))"
        ));
    }
    Ok(())
}

/// Zeros, ones or deterministic random values for a declared type, its symbolic
/// dimensions taken from `dims`. Random floats are uniform in `[-1, 1)`,
/// integers uniform in `[0, 10)`, booleans fair coins (SplitMix64 from `seed`);
/// `Uniform(low, high)` values in `[low, high)`.
pub fn make_filled(
    kind: Filler,
    dtype: DType,
    shape: &Shape,
    dims: &dyn Fn(&str) -> Option<usize>,
    seed: u64,
    max_bytes: usize,
) -> Result<Tensor, String> {
    let Shape::Ranked(ds) = shape else {
        return Err("a shape of unknown rank (`[*]`) cannot be filled".into());
    };
    let mut out = Vec::new();
    for d in ds {
        out.push(match d {
            ir::Dim::Known(n) if *n >= 0 => *n as usize,
            ir::Dim::Known(n) => return Err(format!("dimension {n} is negative")),
            ir::Dim::Sym(s) => dims(s).ok_or_else(|| {
                format!("the size of `{s}` is not known: give it with `--dim {s}=N`")
            })?,
            ir::Dim::Unknown => {
                return Err("a dimension `?` has no size: give the value explicitly".into())
            }
        });
    }
    let bytes = tensor::storage_bytes(dtype, &out)
        .ok_or_else(|| format!("a {dtype}{out:?} tensor cannot exist: its size overflows"))?;
    if bytes > max_bytes {
        return Err(format!(
            "a {dtype}{out:?} tensor takes {} ({bytes} bytes), more than the memory budget of {} (`--max-memory`)",
            tensor::limits::format_bytes(bytes),
            tensor::limits::format_bytes(max_bytes)
        ));
    }
    match kind {
        Filler::Zeros => Tensor::try_zeros(dtype, out).map_err(|e| e.0),
        Filler::Ones => Tensor::try_full(dtype, out, 1.0).map_err(|e| e.0),
        Filler::Uniform(low, high) => {
            check_uniform(low, high, dtype)?;
            if dtype.is_float() {
                let mut next = uniform_stream(low, high, seed);
                // Rounded to f32, a value just below `high` may reach it.
                let single = dtype.storage() == DType::F32;
                generated(dtype, out, move || {
                    let x = next();
                    if single && f64::from(x as f32) >= high {
                        f64::from((x as f32).next_down())
                    } else {
                        x.min(high.next_down())
                    }
                })
            } else {
                let mut rng = SplitMix64::new(seed);
                let span = (high - low) as u64;
                generated(dtype, out, move || low + (rng.next_u64() % span) as f64)
            }
        }
        Filler::Random => {
            if dtype.is_float() {
                generated(dtype, out, uniform_stream(-1.0, 1.0, seed))
            } else if dtype.is_bool() {
                let mut rng = SplitMix64::new(seed);
                generated(dtype, out, || (rng.next_u64() >> 63) as f64)
            } else {
                let mut rng = SplitMix64::new(seed);
                generated(dtype, out, || (rng.next_u64() % 10) as f64)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_values() {
        // The first outputs of SplitMix64 seeded with 0 (as in the reference C code).
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn ln_is_accurate() {
        for &x in &[
            1e-300, 1e-10, 0.1, 0.5, 0.72, 1.0, 1.5, 2.0, 10.0, 1e10, 1e300,
        ] {
            let a = portable_ln(x);
            let b = f64::ln(x);
            assert!(
                (a - b).abs() <= 4.0 * f64::EPSILON * b.abs().max(1.0),
                "{x}: {a} vs {b}"
            );
        }
        assert!((portable_ln(5e-324) - f64::ln(5e-324)).abs() < 1e-12);
    }

    #[test]
    fn normal_statistics() {
        let v = normal(20_000, 1.0, 2.0, 7);
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / v.len() as f64;
        assert!((mean - 1.0).abs() < 0.05, "{mean}");
        assert!((var.sqrt() - 2.0).abs() < 0.05, "{var}");
        assert_eq!(normal(5, 0.0, 1.0, 3), normal(5, 0.0, 1.0, 3));
        assert_ne!(normal(5, 0.0, 1.0, 3), normal(5, 0.0, 1.0, 4));
    }

    #[test]
    fn uniform_range() {
        let v = uniform(1000, -0.5, 0.25, 1);
        assert!(v.iter().all(|&x| (-0.5..0.25).contains(&x)));
    }
}
