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
use tensor::{DType, Tensor};

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
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| low + (high - low) * rng.next_f64())
        .collect()
}

/// `n` values from a normal distribution.
pub fn normal(n: usize, mean: f64, std: f64, seed: u64) -> Vec<f64> {
    let mut rng = SplitMix64::new(seed);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let u = 2.0 * rng.next_f64() - 1.0;
        let v = 2.0 * rng.next_f64() - 1.0;
        let s = u * u + v * v;
        if s <= 0.0 || s >= 1.0 {
            continue;
        }
        let m = (-2.0 * portable_ln(s) / s).sqrt();
        out.push(mean + std * u * m);
        if out.len() < n {
            out.push(mean + std * v * m);
        }
    }
    out
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
pub fn init_weight(def: &WeightDef, base_dir: &Path) -> Result<(Tensor, bool), String> {
    let (dtype, shape, scalar) = declared_shape(&def.ty)?;
    let n: usize = shape.iter().product();
    let t = match &def.init {
        WeightInit::Zeros => Tensor::zeros(dtype, shape),
        WeightInit::Ones => Tensor::full(dtype, shape, 1.0),
        WeightInit::Constant(c) => Tensor::full(dtype, shape, *c),
        WeightInit::Normal { mean, std, seed } => {
            from_f64(normal(n, *mean, *std, *seed), dtype, shape)
        }
        WeightInit::Uniform { low, high, seed } => {
            from_f64(uniform(n, *low, *high, *seed), dtype, shape)
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
            let t = load(base_dir, path, key.as_deref())?;
            let what = match key {
                Some(k) => format!("`{k}` in {path}"),
                None => path.clone(),
            };
            if t.dtype() != dtype {
                return Err(format!(
                    "{what} holds {} data but `{}` is declared {}",
                    t.dtype(),
                    def.name,
                    def.ty
                ));
            }
            if t.shape() != shape.as_slice() {
                return Err(format!(
                    "{what} has shape {:?} but `{}` is declared {}",
                    t.shape(),
                    def.name,
                    def.ty
                ));
            }
            t
        }
    };
    Ok((t, scalar))
}

fn from_f64(data: Vec<f64>, dtype: DType, shape: Vec<usize>) -> Tensor {
    Tensor::from_f64(shape, data)
        .expect("one value per element")
        .cast(dtype)
}

/// Reads a `.npy` file, or tensor `key` of a `.safetensors` file.
pub fn load(base_dir: &Path, path: &str, key: Option<&str>) -> Result<Tensor, String> {
    let full = base_dir.join(path);
    let bytes = std::fs::read(&full).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("cannot load {}: no such file", full.display()),
        _ => format!("cannot load {}: {e}", full.display()),
    })?;
    let is_safetensors = path.ends_with(".safetensors") || key.is_some();
    if is_safetensors {
        let Some(key) = key else {
            let names = tensor::safetensors::names(&bytes).unwrap_or_default();
            return Err(format!(
                "{path} is a safetensors file: name the tensor with load(\"{path}\", \"KEY\") (it has {})",
                list(&names)
            ));
        };
        tensor::safetensors::read(&bytes, key).map_err(|e| {
            let names = tensor::safetensors::names(&bytes).unwrap_or_default();
            if !names.is_empty() && !names.iter().any(|n| n == key) {
                format!("{path} has no tensor `{key}` (it has {})", list(&names))
            } else {
                format!("cannot read `{key}` from {path}: {e}")
            }
        })
    } else {
        tensor::npy::read(&bytes).map_err(|e| format!("{path} is not a valid .npy file: {e}"))
    }
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

/// Zeros, ones or deterministic random values for a declared type, its symbolic
/// dimensions taken from `dims`. Random floats are uniform in `[-1, 1)`,
/// integers uniform in `[0, 10)`, booleans fair coins (SplitMix64 from `seed`).
pub fn make_filled(
    kind: &str,
    dtype: DType,
    shape: &Shape,
    dims: &dyn Fn(&str) -> Option<usize>,
    seed: u64,
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
    let n: usize = out.iter().product();
    Ok(match kind {
        "zeros" => Tensor::zeros(dtype, out),
        "ones" => Tensor::full(dtype, out, 1.0),
        _ => {
            if dtype.is_float() {
                from_f64(uniform(n, -1.0, 1.0, seed), dtype, out)
            } else if dtype.is_bool() {
                let mut rng = SplitMix64::new(seed);
                let data = (0..n).map(|_| rng.next_u64() >> 63 == 1).collect();
                Tensor::from_bool(out, data).expect("one value per element")
            } else {
                let mut rng = SplitMix64::new(seed);
                let data = (0..n).map(|_| (rng.next_u64() % 10) as i64).collect();
                Tensor::from_i64(dtype, out, data).expect("one value per element")
            }
        }
    })
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
