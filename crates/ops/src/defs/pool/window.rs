//! The window engine of `pool`: each spatial dimension (three; 2-D
//! inputs use a depth of 1) gets a list of windows `(start, length,
//! dilation)` in input coordinates, possibly reaching into the padding; the
//! attributes of every pooling primitive are turned into such windows here.

use ir::{AttrValue, DType};

use crate::defs::shape::fmt_ints;
use crate::{Attrs, OpError};

// ---------------------------------------------------------------------------
// Windows.

/// One window along one dimension: input cells `start + k·step`, `k <
/// len`; `span` is the count `count_include_pad` divides by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Win {
    start: isize,
    len: usize,
    step: usize,
    span: usize,
}

impl Win {
    fn cells(&self, size: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.len)
            .map(move |k| self.start + (k * self.step) as isize)
            .filter(move |&i| i >= 0 && (i as usize) < size)
            .map(|i| i as usize)
    }
}

/// The pooling of one call: `planes` planes of `sp` cells, windows per dimension.
#[derive(Debug, Clone)]
pub(super) struct Pooling {
    pub(super) planes: usize,
    pub(super) sp: [usize; 3],
    pub(super) wins: [Vec<Win>; 3],
    count_include_pad: bool,
    divisor_override: usize,
}

impl Pooling {
    pub(super) fn out(&self) -> [usize; 3] {
        [self.wins[0].len(), self.wins[1].len(), self.wins[2].len()]
    }

    pub(super) fn ovol(&self) -> usize {
        self.out().iter().product()
    }

    pub(super) fn svol(&self) -> usize {
        self.sp.iter().product()
    }

    /// Calls `f(out_offset_in_plane, cells, divisor)` for each output cell.
    fn each(&self, mut f: impl FnMut(usize, &[usize], f64)) {
        let [od, oh, ow] = self.out();
        let [_, h, w] = self.sp;
        let mut cells = Vec::new();
        for z in 0..od {
            let wz = self.wins[0][z];
            for y in 0..oh {
                let wy = self.wins[1][y];
                for x in 0..ow {
                    let wx = self.wins[2][x];
                    cells.clear();
                    for iz in wz.cells(self.sp[0]) {
                        for iy in wy.cells(self.sp[1]) {
                            for ix in wx.cells(self.sp[2]) {
                                cells.push((iz * h + iy) * w + ix);
                            }
                        }
                    }
                    let divisor = if self.divisor_override > 0 {
                        self.divisor_override as f64
                    } else if self.count_include_pad {
                        (wz.span * wy.span * wx.span) as f64
                    } else {
                        cells.len() as f64
                    };
                    f((z * oh + y) * ow + x, &cells, divisor);
                }
            }
        }
    }

    pub(super) fn avg(&self, x: &[f64]) -> Vec<f64> {
        let (sv, ov) = (self.svol(), self.ovol());
        let mut out = vec![0.0; self.planes * ov];
        self.each(|o, cells, div| {
            for p in 0..self.planes {
                let s: f64 = cells.iter().map(|&c| x[p * sv + c]).sum();
                out[p * ov + o] = s / div;
            }
        });
        out
    }

    pub(super) fn avg_grad(&self, dout: &[f64]) -> Vec<f64> {
        let (sv, ov) = (self.svol(), self.ovol());
        let mut dx = vec![0.0; self.planes * sv];
        self.each(|o, cells, div| {
            for p in 0..self.planes {
                let g = dout[p * ov + o] / div;
                for &c in cells {
                    dx[p * sv + c] += g;
                }
            }
        });
        dx
    }

    /// The maxima and their flat indices within the plane (NaN wins, as
    /// MindSpore's kernels propagate it; the first maximum on ties).
    pub(super) fn max(&self, x: &[f64]) -> (Vec<f64>, Vec<i64>) {
        let (sv, ov) = (self.svol(), self.ovol());
        let mut out = vec![f64::NEG_INFINITY; self.planes * ov];
        let mut arg = vec![0i64; self.planes * ov];
        self.each(|o, cells, _| {
            for p in 0..self.planes {
                let mut best: Option<(usize, f64)> = None;
                for &c in cells {
                    let v = x[p * sv + c];
                    match best {
                        Some((_, b)) if b.is_nan() || !(v > b || v.is_nan()) => {}
                        _ => best = Some((c, v)),
                    }
                }
                if let Some((c, v)) = best {
                    out[p * ov + o] = v;
                    arg[p * ov + o] = c as i64;
                }
            }
        });
        (out, arg)
    }
}

/// The windows of a strided, padded, dilated pooling along one dimension of
/// `size` cells: `out` windows, the first starting at `-before`; the padded
/// extent ends at `size + after`.
pub(super) fn strided(
    out: usize,
    k: usize,
    s: usize,
    d: usize,
    before: usize,
    after: usize,
    size: usize,
) -> Vec<Win> {
    (0..out)
        .map(|o| {
            let start = (o * s) as isize - before as isize;
            let end = (start + ((k - 1) * d + 1) as isize).min((size + after) as isize);
            Win {
                start,
                len: k,
                step: d,
                span: (end - start).max(0) as usize,
            }
        })
        .collect()
}

/// Adaptive windows: output `o` of `out` covers `[⌊o·n/out⌋, ⌈(o+1)·n/out⌉)`.
pub(super) fn adaptive(out: usize, size: usize) -> Vec<Win> {
    (0..out)
        .map(|o| {
            let start = o * size / out;
            let end = ((o + 1) * size).div_ceil(out);
            Win {
                start: start as isize,
                len: end - start,
                step: 1,
                span: end - start,
            }
        })
        .collect()
}

/// The output size of a strided pooling, `None` when nothing fits. With
/// `ceil`, the last window may start in the input or the front padding only.
pub(super) fn strided_out(
    size: usize,
    k: usize,
    s: usize,
    d: usize,
    before: usize,
    after: usize,
    ceil: bool,
) -> Option<usize> {
    let eff = (k - 1) * d + 1;
    let padded = size + before + after;
    if padded < eff {
        return None;
    }
    let span = padded - eff;
    let mut out = if ceil { span.div_ceil(s) } else { span / s } + 1;
    if ceil && out > 1 && (out - 1) * s >= size + before {
        out -= 1;
    }
    Some(out)
}

// ---------------------------------------------------------------------------
// Attributes.

/// A 3-D `int or tuple` attribute: `k`, `(d, h, w)` or `(1, 1, d, h, w)`.
pub(super) fn triple(
    op: &str,
    attrs: &Attrs,
    name: &'static str,
    min: i64,
) -> Result<[usize; 3], OpError> {
    let v = attrs.ints(name).unwrap_or_default();
    let t = match v.as_slice() {
        [a] => [*a; 3],
        [a, b, c] => [*a, *b, *c],
        [1, 1, a, b, c] => [*a, *b, *c],
        _ => {
            return Err(OpError::attr(
                name,
                format!(
                    "`{op}`: `{name}` must be an int or a tuple of 3 ints (depth, height, width), got {}",
                    fmt_ints(&v)
                ),
            ))
        }
    };
    check_min(op, name, &v, &t, min)?;
    Ok(t.map(|x| x as usize))
}

/// A 2-D `int or tuple` attribute: `k`, `(h, w)` or `(1, 1, h, w)`.
pub(super) fn pair(
    op: &str,
    attrs: &Attrs,
    name: &'static str,
    min: i64,
) -> Result<[usize; 2], OpError> {
    let v = attrs.ints(name).unwrap_or_default();
    let t = match v.as_slice() {
        [a] => [*a; 2],
        [a, b] => [*a, *b],
        [1, 1, a, b] => [*a, *b],
        _ => {
            return Err(OpError::attr(
                name,
                format!(
                    "`{op}`: `{name}` must be an int or a tuple of 2 ints (height, width), got {}",
                    fmt_ints(&v)
                ),
            ))
        }
    };
    check_min(op, name, &v, &t, min)?;
    Ok(t.map(|x| x as usize))
}

pub(super) fn check_min(
    op: &str,
    name: &'static str,
    v: &[i64],
    t: &[i64],
    min: i64,
) -> Result<(), OpError> {
    if t.iter().any(|&x| x < min) {
        return Err(OpError::attr(
            name,
            format!(
                "`{op}`: `{name}` must be {}, got {}",
                if min > 0 { "positive" } else { "non-negative" },
                fmt_ints(v)
            ),
        ));
    }
    Ok(())
}

pub(super) fn check_format(op: &str, attrs: &Attrs) -> Result<(), OpError> {
    let f = attrs.str("data_format");
    if !f.eq_ignore_ascii_case("NCDHW") {
        return Err(OpError::attr(
            "data_format",
            format!("`{op}` supports data_format=\"NCDHW\" only, got \"{f}\""),
        ));
    }
    Ok(())
}

/// `pad` / `pad_list` of the 3-D pools: an int or 6 ints (or 3, each for
/// both sides, as MaxPool3D allows).
pub(super) fn pads6(
    op: &str,
    attrs: &Attrs,
    name: &'static str,
    mode: &str,
) -> Result<[(usize, usize); 3], OpError> {
    let v = attrs.ints(name).unwrap_or_default();
    let p = match v.as_slice() {
        [p] => [*p; 6],
        [a, b, c] => [*a, *a, *b, *b, *c, *c],
        [a, b, c, d, e, f] => [*a, *b, *c, *d, *e, *f],
        _ => {
            return Err(OpError::attr(
                name,
                format!(
                    "`{op}`: `{name}` must be an int or a tuple of 6 ints (head, tail, top, bottom, left, right), got {}",
                    fmt_ints(&v)
                ),
            ))
        }
    };
    if p.iter().any(|&x| x < 0) {
        return Err(OpError::attr(
            name,
            format!(
                "`{op}`: `{name}` must be non-negative, got {}",
                fmt_ints(&v)
            ),
        ));
    }
    if !mode.eq_ignore_ascii_case("pad") && p.iter().any(|&x| x != 0) {
        return Err(OpError::attr(
            name,
            format!(
                "`{op}`: `{name}` {} is only allowed with pad_mode=\"pad\" (pad_mode is \"{mode}\")",
                fmt_ints(&v)
            ),
        ));
    }
    let p = p.map(|x| x as usize);
    Ok([(p[0], p[1]), (p[2], p[3]), (p[4], p[5])])
}

/// The spatial dimensions of a pooling input: `[N, C, D, H, W]` (`rank5`) or
/// `[N, C, H, W]` / `[C, H, W]` (2-D pools; depth 1).
pub(super) fn split_input(
    op: &str,
    shape: &[usize],
    rank5: bool,
) -> Result<(usize, [usize; 3]), OpError> {
    match (rank5, shape) {
        (true, [n, c, d, h, w]) => Ok((n * c, [*d, *h, *w])),
        (false, [n, c, h, w]) => Ok((n * c, [1, *h, *w])),
        (false, [c, h, w]) => Ok((*c, [1, *h, *w])),
        _ => Err(OpError::input(
            0,
            format!(
                "`{op}` needs a {} input, got {shape:?}",
                if rank5 {
                    "5-D (N, C, D, H, W)"
                } else {
                    "3-D or 4-D"
                }
            ),
        )),
    }
}

/// Builds the pooling of operator `kind` for an input of `shape`.
pub(super) fn pooling(kind: Kind, attrs: &Attrs, shape: &[usize]) -> Result<Pooling, OpError> {
    let op = kind.name();
    let (planes, sp) = split_input(op, shape, kind.rank5())?;
    let too_small = || {
        OpError::call(format!(
            "`{op}`: the input {shape:?} is smaller than the (padded, dilated) kernel"
        ))
    };
    let mut count_include_pad = false;
    let mut divisor_override = 0;
    let wins: [Vec<Win>; 3] = match kind {
        Kind::AvgPool3D | Kind::MaxPool3D => {
            let pn = if kind == Kind::AvgPool3D {
                "pad"
            } else {
                "pad_list"
            };
            let k = triple(op, attrs, "kernel_size", 1)?;
            let s = triple(op, attrs, "strides", 1)?;
            // "CALCULATED" is how MindSpore stores MaxPool3D's "PAD".
            let mode = match attrs.str("pad_mode") {
                m if m.eq_ignore_ascii_case("calculated") => "PAD".to_string(),
                m => m.to_string(),
            };
            let pads = pads6(op, attrs, pn, &mode)?;
            let ceil = match attrs.get("ceil_mode") {
                Some(AttrValue::Bool(b)) => *b,
                _ => false,
            };
            if kind == Kind::AvgPool3D {
                count_include_pad = attrs.bool("count_include_pad");
                let d = attrs.int("divisor_override");
                if d < 0 {
                    return Err(OpError::attr(
                        "divisor_override",
                        format!("`{op}`: `divisor_override` must be non-negative, got {d}"),
                    ));
                }
                divisor_override = d as usize;
            }
            let mut wins: [Vec<Win>; 3] = Default::default();
            for j in 0..3 {
                wins[j] = if mode.eq_ignore_ascii_case("same") {
                    let out = sp[j].div_ceil(s[j]);
                    let total = ((out.max(1) - 1) * s[j] + k[j]).saturating_sub(sp[j]);
                    let (b, a) = (total / 2, total - total / 2);
                    strided(out, k[j], s[j], 1, b, a, sp[j])
                } else {
                    let (b, a) = if mode.eq_ignore_ascii_case("pad") {
                        pads[j]
                    } else {
                        (0, 0)
                    };
                    let out =
                        strided_out(sp[j], k[j], s[j], 1, b, a, ceil).ok_or_else(too_small)?;
                    strided(out, k[j], s[j], 1, b, a, sp[j])
                };
            }
            wins
        }
        Kind::MaxPool3DWithArgmax | Kind::MaxPoolWithArgmaxV2 => {
            let three = kind == Kind::MaxPool3DWithArgmax;
            let get = |name: &'static str, min: i64| -> Result<[usize; 3], OpError> {
                if three {
                    triple(op, attrs, name, min)
                } else {
                    let [h, w] = pair(op, attrs, name, min)?;
                    Ok([1, h, w])
                }
            };
            let k = get(if three { "ksize" } else { "kernel_size" }, 1)?;
            let s = match attrs.get("strides") {
                Some(AttrValue::None) | None => k,
                _ => get("strides", 1)?,
            };
            let mut p = get("pads", 0)?;
            let d = get("dilation", 1)?;
            if !three {
                p[0] = 0;
            }
            let ceil = attrs.bool("ceil_mode");
            for j in 0..3 {
                if 2 * p[j] > k[j] {
                    return Err(OpError::attr(
                        "pads",
                        format!(
                            "`{op}`: `pads` must be at most half the kernel size, got {:?} for kernel {:?}",
                            p, k
                        ),
                    ));
                }
            }
            let mut wins: [Vec<Win>; 3] = Default::default();
            for j in 0..3 {
                let out =
                    strided_out(sp[j], k[j], s[j], d[j], p[j], p[j], ceil).ok_or_else(too_small)?;
                wins[j] = strided(out, k[j], s[j], d[j], p[j], p[j], sp[j]);
            }
            wins
        }
        Kind::MaxPoolWithArgmax => {
            // Windows and steps: `k`, `(h, w)`, or MindSpore's stored
            // `(1, h, w, 1)`.
            let hw = |name: &'static str| -> Result<[usize; 3], OpError> {
                let v = attrs.ints(name).unwrap_or_default();
                let t = match v.as_slice() {
                    [a] => [*a; 2],
                    [a, b] | [1, a, b, 1] => [*a, *b],
                    _ => {
                        return Err(OpError::attr(
                            name,
                            format!(
                            "`{op}`: `{name}` must be an int, `(h, w)` or `(1, h, w, 1)`, got {}",
                            fmt_ints(&v)
                        ),
                        ))
                    }
                };
                check_min(op, name, &v, &t, 1)?;
                Ok([1, t[0] as usize, t[1] as usize])
            };
            let (k, s) = (hw("kernel_size")?, hw("strides")?);
            let same = attrs.str("pad_mode").eq_ignore_ascii_case("same");
            let mut wins: [Vec<Win>; 3] = Default::default();
            for j in 0..3 {
                wins[j] = if same {
                    // MindSpore's CPU kernel pads `(k - s) / 2` cells before
                    // (whatever the size), the rest after.
                    let out = sp[j].div_ceil(s[j]);
                    let before = k[j].saturating_sub(s[j]) / 2;
                    let total = ((out.max(1) - 1) * s[j] + k[j]).saturating_sub(sp[j]);
                    strided(
                        out,
                        k[j],
                        s[j],
                        1,
                        before,
                        total.saturating_sub(before),
                        sp[j],
                    )
                } else {
                    let out =
                        strided_out(sp[j], k[j], s[j], 1, 0, 0, false).ok_or_else(too_small)?;
                    strided(out, k[j], s[j], 1, 0, 0, sp[j])
                };
            }
            wins
        }
        Kind::AdaptiveAvgPool2D | Kind::AdaptiveMaxPool2D => {
            let size = adaptive_size(op, attrs, [sp[1], sp[2]])?;
            [
                adaptive(1, 1),
                adaptive(size[0], sp[1]),
                adaptive(size[1], sp[2]),
            ]
        }
    };
    if kind.is_max() && wins.iter().zip(sp).any(|(w, n)| n == 0 && !w.is_empty()) {
        return Err(too_small());
    }
    Ok(Pooling {
        planes,
        sp,
        wins,
        count_include_pad,
        divisor_override,
    })
}

/// AdaptiveAvgPool2D's `output_size`: `(H, W)` with -1 (MindSpore's None)
/// keeping the input's size.
pub(super) fn adaptive_size(
    op: &str,
    attrs: &Attrs,
    input: [usize; 2],
) -> Result<[usize; 2], OpError> {
    let v = attrs.ints("output_size").unwrap_or_default();
    let pair = match v.as_slice() {
        [a] => [*a, *a],
        [a, b] => [*a, *b],
        _ => {
            return Err(OpError::attr(
                "output_size",
                format!(
                    "`{op}`: `output_size` must be an int or a tuple of 2 ints (H, W), got {}",
                    fmt_ints(&v)
                ),
            ))
        }
    };
    let mut out = [0; 2];
    for j in 0..2 {
        out[j] = match pair[j] {
            -1 => input[j],
            x if x > 0 => x as usize,
            x => {
                return Err(OpError::attr(
                    "output_size",
                    format!("`{op}`: `output_size` entries must be positive (or -1 to keep the input's), got {x}"),
                ))
            }
        };
    }
    Ok(out)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    AvgPool3D,
    MaxPool3D,
    MaxPool3DWithArgmax,
    MaxPoolWithArgmax,
    MaxPoolWithArgmaxV2,
    AdaptiveAvgPool2D,
    AdaptiveMaxPool2D,
}

impl Kind {
    pub(super) fn name(self) -> &'static str {
        match self {
            Kind::AvgPool3D => "AvgPool3D",
            Kind::MaxPool3D => "MaxPool3D",
            Kind::MaxPool3DWithArgmax => "MaxPool3DWithArgmax",
            Kind::MaxPoolWithArgmax => "MaxPoolWithArgmax",
            Kind::MaxPoolWithArgmaxV2 => "MaxPoolWithArgmaxV2",
            Kind::AdaptiveAvgPool2D => "AdaptiveAvgPool2D",
            Kind::AdaptiveMaxPool2D => "AdaptiveMaxPool2D",
        }
    }

    pub(super) fn rank5(self) -> bool {
        matches!(
            self,
            Kind::AvgPool3D | Kind::MaxPool3D | Kind::MaxPool3DWithArgmax
        )
    }

    pub(super) fn is_max(self) -> bool {
        !matches!(self, Kind::AvgPool3D | Kind::AdaptiveAvgPool2D)
    }

    /// Whether the result is `(y, argmax)`.
    pub(super) fn with_argmax(self) -> bool {
        matches!(
            self,
            Kind::MaxPool3DWithArgmax
                | Kind::MaxPoolWithArgmax
                | Kind::MaxPoolWithArgmaxV2
                | Kind::AdaptiveMaxPool2D
        )
    }

    pub(super) fn argmax_dtype(self, attrs: &Attrs) -> DType {
        if self == Kind::MaxPoolWithArgmax {
            return DType::I32;
        }
        match attrs.get("argmax_type") {
            Some(AttrValue::DType(d)) => *d,
            _ => DType::I64,
        }
    }
}
