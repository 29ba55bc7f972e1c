//! Resizing and upsampling: TensorFlow-style `ResizeNearestNeighbor`,
//! `ResizeNearestNeighborV2` (what `nn.Upsample(mode="nearest")` exports),
//! `ResizeBilinearV2` (`nn.Upsample(mode="bilinear")`), `ResizeBicubic`,
//! `ResizeLinear1D` (`nn.Upsample(mode="linear")`); PyTorch-style
//! `UpsampleNearest1D/2D/3D` (`nn.Upsample` on 5-D inputs),
//! `UpsampleLinear1D`, `UpsampleBilinear2D`, `UpsampleTrilinear3D`.
//! (`PixelShuffle` is a block layout: `shape::layout`.)
//!
//! All interpolations are separable: each spatial dimension gets a table of
//! `(source index, weight)` pairs per output index, and the result is the sum
//! over the product of the tables. The gradient is MindSpore's backward
//! primitive of each (`backward::resize`), which applies the transposed
//! tables; its own gradient is the forward resize again.

use crate::schema::{why, Override, Schema};
use crate::Traits;
use ir::{AbsVal, AttrValue, Dim};

use crate::defs::nn::common::{floats, ktensor};
use crate::defs::shape::{dims_of, fmt_dims, fmt_ints, tensor_abs, unranked};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Attrs, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    ResizeNearestNeighbor,
    ResizeNearestNeighborV2,
    ResizeBilinearV2,
    ResizeBicubic,
    ResizeLinear1D,
    UpsampleNearest1D,
    UpsampleNearest2D,
    UpsampleNearest3D,
    UpsampleLinear1D,
    UpsampleBilinear2D,
    UpsampleTrilinear3D,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::ResizeNearestNeighbor => "ResizeNearestNeighbor",
            Kind::ResizeNearestNeighborV2 => "ResizeNearestNeighborV2",
            Kind::ResizeBilinearV2 => "ResizeBilinearV2",
            Kind::ResizeBicubic => "ResizeBicubic",
            Kind::ResizeLinear1D => "ResizeLinear1D",
            Kind::UpsampleNearest1D => "UpsampleNearest1D",
            Kind::UpsampleNearest2D => "UpsampleNearest2D",
            Kind::UpsampleNearest3D => "UpsampleNearest3D",
            Kind::UpsampleLinear1D => "UpsampleLinear1D",
            Kind::UpsampleBilinear2D => "UpsampleBilinear2D",
            Kind::UpsampleTrilinear3D => "UpsampleTrilinear3D",
        }
    }

    /// How many trailing dimensions are resized.
    pub(crate) fn spatial(self) -> usize {
        match self {
            Kind::ResizeLinear1D | Kind::UpsampleNearest1D | Kind::UpsampleLinear1D => 1,
            Kind::UpsampleNearest3D | Kind::UpsampleTrilinear3D => 3,
            _ => 2,
        }
    }

    fn upsample(self) -> bool {
        self.name().starts_with("Upsample")
    }

    fn nearest(self) -> bool {
        matches!(
            self,
            Kind::ResizeNearestNeighbor
                | Kind::ResizeNearestNeighborV2
                | Kind::UpsampleNearest1D
                | Kind::UpsampleNearest2D
                | Kind::UpsampleNearest3D
        )
    }
}

// ---------------------------------------------------------------------------
// Attributes and output sizes.

fn bool_attr(attrs: &Attrs, name: &str) -> bool {
    matches!(attrs.get(name), Some(AttrValue::Bool(true)))
}

/// The output sizes of the resized dimensions given the input's (`None` for
/// unknown ones), and the scale factors of Upsample's `scales`.
#[allow(clippy::type_complexity)]
fn out_sizes(
    kind: Kind,
    attrs: &Attrs,
    input: &[Option<usize>],
) -> Result<(Vec<Option<usize>>, Option<Vec<f64>>), OpError> {
    let op = kind.name();
    let n = kind.spatial();
    if !kind.upsample() {
        let v = attrs.ints("size").unwrap_or_default();
        if v.len() != n || v.iter().any(|&d| d < 1) {
            return Err(OpError::attr(
                "size",
                format!(
                    "`{op}`: `size` must be {n} positive int{} ({}), got {}",
                    if n == 1 { "" } else { "s" },
                    if n == 1 {
                        "new_width"
                    } else {
                        "new_height, new_width"
                    },
                    fmt_ints(&v)
                ),
            ));
        }
        if bool_attr(attrs, "align_corners") && bool_attr(attrs, "half_pixel_centers") {
            return Err(OpError::attr(
                "half_pixel_centers",
                format!("`{op}`: `align_corners` and `half_pixel_centers` cannot both be true"),
            ));
        }
        return Ok((v.iter().map(|&d| Some(d as usize)).collect(), None));
    }
    let size = attrs.ints("output_size");
    let scales = floats(attrs, "scales");
    match (size, scales) {
        (Some(v), None) => {
            if v.len() != n || v.iter().any(|&d| d < 1) {
                return Err(OpError::attr(
                    "output_size",
                    format!(
                        "`{op}`: `output_size` must be {n} positive ints, got {}",
                        fmt_ints(&v)
                    ),
                ));
            }
            Ok((v.iter().map(|&d| Some(d as usize)).collect(), None))
        }
        (None, Some(s)) => {
            if s.len() != n || s.iter().any(|&x| x.is_nan() || x <= 0.0) {
                return Err(OpError::attr(
                    "scales",
                    format!("`{op}`: `scales` must be {n} positive floats, got {s:?}"),
                ));
            }
            let out = input
                .iter()
                .zip(&s)
                .map(|(d, &f)| d.map(|d| (d as f64 * f).floor() as usize))
                .collect();
            Ok((out, Some(s)))
        }
        (Some(_), Some(_)) => Err(OpError::attr(
            "scales",
            format!("`{op}`: give `output_size` or `scales`, not both"),
        )),
        (None, None) => Err(OpError::attr(
            "output_size",
            format!("`{op}` needs `output_size` or `scales`"),
        )),
    }
}

// ---------------------------------------------------------------------------
// Interpolation tables.

pub(crate) type Table = Vec<Vec<(usize, f64)>>;

/// `(planes, input spatial sizes, tables, output shape)` of a call.
pub(crate) type Plan = (usize, [usize; 3], [Table; 3], Vec<usize>);

/// The table of one resized dimension from `inn` to `out` cells; `scale` is
/// Upsample's scale factor for it, if given.
fn table(kind: Kind, attrs: &Attrs, inn: usize, out: usize, scale: Option<f64>) -> Table {
    let align = bool_attr(attrs, "align_corners");
    let half = bool_attr(attrs, "half_pixel_centers");
    let last = inn.saturating_sub(1);
    // TensorFlow's scale: (in-1)/(out-1) aligned, else in/out (in f32).
    let tf_scale = || -> f32 {
        if align && out > 1 {
            last as f32 / (out - 1) as f32
        } else {
            inn as f32 / out as f32
        }
    };
    // PyTorch's source scale for the unaligned modes: 1/scale when given.
    let pt_scale = || -> f64 {
        match scale {
            Some(s) => 1.0 / s,
            None => inn as f64 / out as f64,
        }
    };
    let linear = |src: f64| -> Vec<(usize, f64)> {
        let f = src.floor();
        let lo = (f.max(0.0) as usize).min(last);
        let hi = ((src.ceil().max(0.0)) as usize).min(last);
        let t = src - f;
        if lo == hi {
            vec![(lo, 1.0)]
        } else {
            vec![(lo, 1.0 - t), (hi, t)]
        }
    };
    (0..out)
        .map(|o| match kind {
            Kind::ResizeNearestNeighbor | Kind::ResizeNearestNeighborV2 => {
                let s = tf_scale();
                // MindSpore's CPU ResizeNearestNeighbor ignores half_pixel_centers.
                let half = half && kind == Kind::ResizeNearestNeighborV2;
                let x = if half {
                    (o as f32 + 0.5) * s
                } else {
                    o as f32 * s
                };
                let i = if align { x.round() } else { x.floor() };
                vec![((i.max(0.0) as usize).min(last), 1.0)]
            }
            Kind::UpsampleNearest1D | Kind::UpsampleNearest2D | Kind::UpsampleNearest3D => {
                let s = pt_scale() as f32;
                let i = (o as f32 * s).floor();
                vec![((i.max(0.0) as usize).min(last), 1.0)]
            }
            Kind::ResizeBilinearV2 => {
                let s = tf_scale() as f64;
                let x = if half {
                    (o as f64 + 0.5) * s - 0.5
                } else {
                    o as f64 * s
                };
                linear(x)
            }
            Kind::ResizeLinear1D => {
                let mode = attrs.str("coordinate_transformation_mode");
                // A single output samples the first input (MindSpore's kernel).
                let x = if out == 1 {
                    0.0
                } else if mode.eq_ignore_ascii_case("align_corners") {
                    if out > 1 {
                        o as f64 * last as f64 / (out - 1) as f64
                    } else {
                        0.0
                    }
                } else {
                    ((o as f64 + 0.5) * inn as f64 / out as f64 - 0.5).max(0.0)
                };
                linear(x)
            }
            Kind::UpsampleLinear1D | Kind::UpsampleBilinear2D | Kind::UpsampleTrilinear3D => {
                let x = if align {
                    if out > 1 {
                        o as f64 * last as f64 / (out - 1) as f64
                    } else {
                        0.0
                    }
                } else {
                    ((o as f64 + 0.5) * pt_scale() - 0.5).max(0.0)
                };
                linear(x)
            }
            Kind::ResizeBicubic => {
                let s = tf_scale();
                let x = if half {
                    (o as f32 + 0.5) * s - 0.5
                } else {
                    o as f32 * s
                };
                cubic(x, inn, half)
            }
        })
        .collect()
}

/// TensorFlow's bicubic weights: Keys' cubic with `a = -0.5` and out-of-range
/// taps dropped (renormalised) for half-pixel centers; `a = -0.75` and taps
/// clamped to the edge otherwise. As TensorFlow (and MindSpore's CPU kernel),
/// the fractional position is rounded to a multiple of 1/1024 (its weight
/// table), and positions are computed in f32.
fn cubic(x: f32, inn: usize, half: bool) -> Vec<(usize, f64)> {
    const TABLE: f32 = 1024.0;
    let a = if half { -0.5 } else { -0.75 };
    let f = x.floor();
    let t = ((x - f) * TABLE).round() as f64 / TABLE as f64;
    let f = f as f64;
    let w = |d: f64| {
        let d = d.abs();
        if d <= 1.0 {
            ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0
        } else if d < 2.0 {
            ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a
        } else {
            0.0
        }
    };
    let taps = [
        (-1.0, w(t + 1.0)),
        (0.0, w(t)),
        (1.0, w(1.0 - t)),
        (2.0, w(2.0 - t)),
    ];
    let last = inn as isize - 1;
    if half {
        let kept: Vec<(usize, f64)> = taps
            .iter()
            .filter_map(|&(k, wt)| {
                let i = f as isize + k as isize;
                (0..=last).contains(&i).then_some((i as usize, wt))
            })
            .collect();
        let total: f64 = kept.iter().map(|(_, wt)| wt).sum();
        kept.into_iter().map(|(i, wt)| (i, wt / total)).collect()
    } else {
        taps.iter()
            .map(|&(k, wt)| (((f as isize + k as isize).clamp(0, last)) as usize, wt))
            .collect()
    }
}

/// The tables of a call on an input of `shape`: three dimensions (leading
/// ones of size 1 for 1-D and 2-D resizes) and the output shape.
pub(crate) fn plan(kind: Kind, attrs: &Attrs, shape: &[usize]) -> Result<Plan, OpError> {
    let n = kind.spatial();
    if shape.len() != n + 2 {
        return Err(OpError::input(
            0,
            format!("`{}` needs a {}-D input, got {shape:?}", kind.name(), n + 2),
        ));
    }
    let lead = &shape[..2];
    let inputs: Vec<Option<usize>> = shape[2..].iter().map(|&d| Some(d)).collect();
    let (outs, scales) = out_sizes(kind, attrs, &inputs)?;
    let mut sp = [1usize; 3];
    let mut tables: [Table; 3] = [
        vec![vec![(0, 1.0)]],
        vec![vec![(0, 1.0)]],
        vec![vec![(0, 1.0)]],
    ];
    let mut out_shape = lead.to_vec();
    for j in 0..n {
        let inn = shape[2 + j];
        let out = outs[j].unwrap_or(0);
        if inn == 0 && out > 0 {
            return Err(OpError::input(
                0,
                format!(
                    "`{}` cannot resize an empty dimension of {shape:?}",
                    kind.name()
                ),
            ));
        }
        let k = 3 - n + j;
        sp[k] = inn;
        tables[k] = table(kind, attrs, inn, out, scales.as_ref().map(|s| s[j]));
        out_shape.push(out);
    }
    Ok((lead.iter().product(), sp, tables, out_shape))
}

pub(crate) fn apply(x: &[f64], planes: usize, sp: [usize; 3], t: &[Table; 3]) -> Vec<f64> {
    let (od, oh, ow) = (t[0].len(), t[1].len(), t[2].len());
    let sv: usize = sp.iter().product();
    let ov = od * oh * ow;
    let mut out = vec![0.0; planes * ov];
    for p in 0..planes {
        let plane = &x[p * sv..][..sv];
        for (z, tz) in t[0].iter().enumerate() {
            for (y, ty) in t[1].iter().enumerate() {
                for (xx, tx) in t[2].iter().enumerate() {
                    let mut s = 0.0;
                    for &(iz, wz) in tz {
                        for &(iy, wy) in ty {
                            let row = (iz * sp[1] + iy) * sp[2];
                            for &(ix, wx) in tx {
                                s += wz * wy * wx * plane[row + ix];
                            }
                        }
                    }
                    out[p * ov + (z * oh + y) * ow + xx] = s;
                }
            }
        }
    }
    out
}

pub(crate) fn apply_transposed(
    dout: &[f64],
    planes: usize,
    sp: [usize; 3],
    t: &[Table; 3],
) -> Vec<f64> {
    let (od, oh, ow) = (t[0].len(), t[1].len(), t[2].len());
    let sv: usize = sp.iter().product();
    let ov = od * oh * ow;
    let mut dx = vec![0.0; planes * sv];
    for p in 0..planes {
        for (z, tz) in t[0].iter().enumerate() {
            for (y, ty) in t[1].iter().enumerate() {
                for (xx, tx) in t[2].iter().enumerate() {
                    let g = dout[p * ov + (z * oh + y) * ow + xx];
                    for &(iz, wz) in tz {
                        for &(iy, wy) in ty {
                            let row = (iz * sp[1] + iy) * sp[2];
                            for &(ix, wx) in tx {
                                dx[p * sv + row + ix] += wz * wy * wx * g;
                            }
                        }
                    }
                }
            }
        }
    }
    dx
}

// ---------------------------------------------------------------------------
// Shape rules, kernels, gradients.

fn infer_resize(call: &InferCall, kind: Kind) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, xd) = dims_of(call, 0)?;
    if kind.nearest() {
        if dtype.is_bool() {
            return Err(OpError::input(
                0,
                format!("`{op}` needs a numeric input, got {dtype}"),
            ));
        }
    } else if !dtype.is_float() {
        return Err(OpError::input(
            0,
            format!("`{op}` needs a float input, got {dtype}"),
        ));
    }
    let n = kind.spatial();
    let Some(xd) = xd else {
        out_sizes(kind, call.attrs, &vec![None; n])?;
        return Ok(unranked(dtype));
    };
    if xd.len() != n + 2 {
        return Err(OpError::input(
            0,
            format!(
                "`{op}` needs a {}-D input (N, C, {}), got {}",
                n + 2,
                ["W", "H, W", "D, H, W"][n - 1],
                fmt_dims(&xd)
            ),
        ));
    }
    let inputs: Vec<Option<usize>> = xd[2..]
        .iter()
        .map(|d| match d {
            Dim::Known(k) => Some(*k as usize),
            _ => None,
        })
        .collect();
    let (outs, _) = out_sizes(kind, call.attrs, &inputs)?;
    let mut dims = xd[..2].to_vec();
    dims.extend(outs.iter().map(|o| match o {
        Some(o) => Dim::Known(*o as i64),
        None => Dim::Unknown,
    }));
    Ok(tensor_abs(dtype, dims))
}

fn kernel_resize(c: &KernelCall, kind: Kind) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let (planes, sp, tables, shape) = plan(kind, c.attrs, x.shape())?;
    let y = apply(&x.to_f64_vec(), planes, sp, &tables);
    Ok(ktensor(x.dtype(), shape, y))
}

/// MindSpore's backward primitive of the resize (see `backward::resize`).
fn grad_resize(b: &mut dyn GradBuilder, c: &GradCall, kind: Kind) -> Vec<Option<GNode>> {
    vec![Some(crate::defs::backward::resize::resize_backward(
        b, c, kind,
    ))]
}

// ---------------------------------------------------------------------------
// The table.

macro_rules! resize_op {
    ($name:literal, $kind:expr, $doc:literal, $params:expr) => {
        OpDef {
            name: $name,
            category: Category::NeuralNetwork,
            doc: $doc,
            schema: $params,
            variadic: false,
            output: OutputDef::Single,
            infer: |c| infer_resize(c, $kind),
            grad: Some(|b, c| grad_resize(b, c, $kind)),
            kernel: Some(|c| kernel_resize(c, $kind)),
            traits: Traits::NONE,
        }
    };
}

pub const OPS: &[OpDef] = &[
    resize_op!(
        "ResizeNearestNeighbor",
        Kind::ResizeNearestNeighbor,
        "Nearest-neighbour resize of the height and width of an NCHW input to `size` (TensorFlow's rules: source `floor(o·scale)`, `round` with `align_corners`). As MindSpore's CPU kernel, `half_pixel_centers` has no effect (ResizeNearestNeighborV2 honours it).",
        Schema::ms(
            &[],
            &[
                ("input_x", "The input, `[N, C, H, W]`, numeric."),
                ("size", "The new `(height, width)`, positive."),
                ("align_corners", "Align the centers of the corner pixels of input and output (scale `(in-1)/(out-1)`). Default false: scale `in/out`."),
                ("half_pixel_centers", "Sample at pixel centers (`(o + 0.5)·scale`), as TensorFlow 2; not with `align_corners`. Default false."),
            ],
        )
    ),
    resize_op!(
        "ResizeNearestNeighborV2",
        Kind::ResizeNearestNeighborV2,
        "Nearest-neighbour resize of an NCHW image to `size` (what `nn.Upsample(mode=\"nearest\")` exports), TensorFlow's rules: source `floor(o·scale)`, `round` with `align_corners`, `floor((o + 0.5)·scale)` with `half_pixel_centers`.",
        Schema::ms(
            &[Override::attr("size", AttrType::IntTuple, None, why::TYPE)],
            &[
                ("image", "The input, `[N, C, H, W]`, numeric."),
                ("size", "The new `(height, width)`, positive."),
                ("align_corners", "Align the centers of the corner pixels of input and output (scale `(in-1)/(out-1)`). Default false: scale `in/out`."),
                ("half_pixel_centers", "Sample at pixel centers (`(o + 0.5)·scale`), as TensorFlow 2; not with `align_corners`. Default false."),
            ],
        )
    ),
    resize_op!(
        "ResizeBilinearV2",
        Kind::ResizeBilinearV2,
        "Bilinear resize of an NCHW image to `size` (what `nn.Upsample(mode=\"bilinear\")` exports), TensorFlow's rules: source `o·scale` (or `(o + 0.5)·scale - 0.5`), the neighbours clamped to the edge.",
        Schema::ms(
            &[Override::attr("size", AttrType::IntTuple, None, why::TYPE)],
            &[
                ("image", "The input, `[N, C, H, W]`, float."),
                ("size", "The new `(height, width)`, positive."),
                ("align_corners", "Align the centers of the corner pixels of input and output (scale `(in-1)/(out-1)`). Default false: scale `in/out`."),
                ("half_pixel_centers", "Sample at pixel centers (`(o + 0.5)·scale`), as TensorFlow 2; not with `align_corners`. Default false."),
            ],
        )
    ),
    resize_op!(
        "ResizeBicubic",
        Kind::ResizeBicubic,
        "Bicubic resize of an NCHW image to `size`, TensorFlow's rules: Keys' cubic with a = -0.75 and edge-clamped taps, or a = -0.5 with out-of-range taps dropped for `half_pixel_centers`.",
        Schema::ms(
            &[Override::attr("size", AttrType::IntTuple, None, why::TYPE)],
            &[
                ("image", "The input, `[N, C, H, W]`, float."),
                ("size", "The new `(height, width)`, positive."),
                ("align_corners", "Align the centers of the corner pixels of input and output (scale `(in-1)/(out-1)`). Default false: scale `in/out`."),
                ("half_pixel_centers", "Sample at pixel centers (`(o + 0.5)·scale`), as TensorFlow 2; not with `align_corners`. Default false."),
            ],
        )
    ),
    resize_op!(
        "ResizeLinear1D",
        Kind::ResizeLinear1D,
        "Linear resize of the last dimension of an `[N, C, W]` input to `size` (what `nn.Upsample(mode=\"linear\")` exports).",
        Schema::ms(
            &[
                Override::attr("size", AttrType::IntTuple, None, why::TYPE),
                Override::attr("coordinate_transformation_mode", AttrType::Str(&["align_corners", "half_pixel"]), Some(AttrDefault::Str("align_corners")), why::STRINGS),
            ],
            &[
                ("x", "The input, `[N, C, W]`, float."),
                ("size", "The new width, as a 1-tuple."),
                ("coordinate_transformation_mode", "How an output coordinate maps to the input: \"align_corners\" (default) `o·(in-1)/(out-1)`, \"half_pixel\" `max((o + 0.5)·in/out - 0.5, 0)`; a single output samples the first input. (MindSpore's \"asymmetric\" is rejected by its kernels.)"),
            ],
        )
    ),
    resize_op!(
        "UpsampleNearest1D",
        Kind::UpsampleNearest1D,
        "Nearest upsampling of an `[N, C, W]` input to `output_size` or by `scales` (PyTorch's rule: source `floor(o·in/out)`, or `floor(o/scale)`).",
        Schema::ms(
            &[
                Override::attr("output_size", AttrType::IntTuple, Some(AttrDefault::None), why::TYPE),
            ],
            &[
                ("x", "The input, `[N, C, W]`."),
                ("output_size", "The output's spatial size; give this or `scales`. Default none."),
                ("scales", "Scale factors per spatial dimension (output `floor(in·scale)`, sampling at `o/scale`); give this or `output_size`. Default none."),
            ],
        )
    ),
    resize_op!(
        "UpsampleNearest2D",
        Kind::UpsampleNearest2D,
        "Nearest upsampling of an `[N, C, H, W]` input to `output_size` or by `scales` (PyTorch's rule: source `floor(o·in/out)`, or `floor(o/scale)`).",
        Schema::ms(
            &[
                Override::attr("output_size", AttrType::IntTuple, Some(AttrDefault::None), why::TYPE),
            ],
            &[
                ("x", "The input, `[N, C, H, W]`."),
                ("output_size", "The output's spatial size; give this or `scales`. Default none."),
                ("scales", "Scale factors per spatial dimension (output `floor(in·scale)`, sampling at `o/scale`); give this or `output_size`. Default none."),
            ],
        )
    ),
    resize_op!(
        "UpsampleNearest3D",
        Kind::UpsampleNearest3D,
        "Nearest upsampling of an `[N, C, D, H, W]` input to `output_size` or by `scales` (what `nn.Upsample(mode=\"nearest\")` exports for 5-D inputs).",
        Schema::ms(
            &[
                Override::attr("output_size", AttrType::IntTuple, Some(AttrDefault::None), why::TYPE),
            ],
            &[
                ("x", "The input, `[N, C, D, H, W]`."),
                ("output_size", "The output's spatial size; give this or `scales`. Default none."),
                ("scales", "Scale factors per spatial dimension (output `floor(in·scale)`, sampling at `o/scale`); give this or `output_size`. Default none."),
            ],
        )
    ),
    resize_op!(
        "UpsampleLinear1D",
        Kind::UpsampleLinear1D,
        "Linear upsampling of an `[N, C, W]` input to `output_size` or by `scales` (PyTorch's rules).",
        Schema::ms(
            &[
                Override::attr("output_size", AttrType::IntTuple, Some(AttrDefault::None), why::TYPE),
                Override::attr("scales", AttrType::Floats, Some(AttrDefault::None), why::TYPE),
            ],
            &[
                ("x", "The input, `[N, C, W]`, float."),
                ("output_size", "The output's spatial size; give this or `scales`. Default none."),
                ("scales", "Scale factors per spatial dimension (output `floor(in·scale)`, sampling at `o/scale`); give this or `output_size`. Default none."),
                ("align_corners", "Align the centers of the corner pixels (`src = o·(in-1)/(out-1)`). Default false: half-pixel sampling, `src = max((o + 0.5)/scale - 0.5, 0)`."),
            ],
        )
    ),
    resize_op!(
        "UpsampleBilinear2D",
        Kind::UpsampleBilinear2D,
        "Bilinear upsampling of an `[N, C, H, W]` input to `output_size` or by `scales` (PyTorch's rules).",
        Schema::ms(
            &[
                Override::attr("output_size", AttrType::IntTuple, Some(AttrDefault::None), why::TYPE),
            ],
            &[
                ("x", "The input, `[N, C, H, W]`, float."),
                ("output_size", "The output's spatial size; give this or `scales`. Default none."),
                ("scales", "Scale factors per spatial dimension (output `floor(in·scale)`, sampling at `o/scale`); give this or `output_size`. Default none."),
                ("align_corners", "Align the centers of the corner pixels (`src = o·(in-1)/(out-1)`). Default false: half-pixel sampling, `src = max((o + 0.5)/scale - 0.5, 0)`."),
            ],
        )
    ),
    resize_op!(
        "UpsampleTrilinear3D",
        Kind::UpsampleTrilinear3D,
        "Trilinear upsampling of an `[N, C, D, H, W]` input to `output_size` or by `scales` (PyTorch's rules; what `nn.Upsample(mode=\"trilinear\")` exports).",
        Schema::ms(
            &[
                Override::attr("output_size", AttrType::IntTuple, Some(AttrDefault::None), why::TYPE),
            ],
            &[
                ("x", "The input, `[N, C, D, H, W]`, float."),
                ("output_size", "The output's spatial size; give this or `scales`. Default none."),
                ("scales", "Scale factors per spatial dimension (output `floor(in·scale)`, sampling at `o/scale`); give this or `output_size`. Default none."),
                ("align_corners", "Align the centers of the corner pixels (`src = o·(in-1)/(out-1)`). Default false: half-pixel sampling, `src = max((o + 0.5)/scale - 0.5, 0)`."),
            ],
        )
    ),
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let b = AttrValue::Bool;
    let s = |v: &str| AttrValue::Str(v.to_string());
    let t = |v: &[i64]| AttrValue::Tuple(v.iter().map(|&x| AttrValue::Int(x)).collect());
    let f = |v: &[f64]| AttrValue::Tuple(v.iter().map(|&x| AttrValue::float(x)).collect());
    let x = |shape: &[usize], seed: u64| random_f64(shape, seed, -1.0, 1.0);
    vec![
        Sample::new("ResizeNearestNeighbor", vec![x(&[1, 2, 3, 4], 500)]).attr("size", t(&[5, 7])),
        Sample::new("ResizeNearestNeighbor", vec![x(&[1, 2, 4, 3], 501)])
            .attr("size", t(&[3, 5]))
            .attr("align_corners", b(true)),
        Sample::new("ResizeNearestNeighborV2", vec![x(&[1, 2, 3, 4], 502)])
            .attr("size", t(&[5, 7]))
            .attr("half_pixel_centers", b(true)),
        Sample::new("ResizeBilinearV2", vec![x(&[1, 2, 3, 4], 503)]).attr("size", t(&[5, 7])),
        Sample::new("ResizeBilinearV2", vec![x(&[1, 2, 3, 4], 504)])
            .attr("size", t(&[5, 3]))
            .attr("align_corners", b(true)),
        Sample::new("ResizeBilinearV2", vec![x(&[1, 1, 3, 4], 505)])
            .attr("size", t(&[5, 6]))
            .attr("half_pixel_centers", b(true)),
        Sample::new("ResizeBicubic", vec![x(&[1, 1, 4, 5], 506)]).attr("size", t(&[6, 7])),
        Sample::new("ResizeBicubic", vec![x(&[1, 1, 4, 5], 507)])
            .attr("size", t(&[6, 3]))
            .attr("half_pixel_centers", b(true)),
        Sample::new("ResizeLinear1D", vec![x(&[2, 2, 5], 508)]).attr("size", t(&[8])),
        Sample::new("ResizeLinear1D", vec![x(&[2, 2, 5], 509)])
            .attr("size", t(&[3]))
            .attr("coordinate_transformation_mode", s("half_pixel")),
        Sample::new("UpsampleNearest1D", vec![x(&[2, 2, 5], 510)]).attr("output_size", t(&[8])),
        Sample::new("UpsampleNearest2D", vec![x(&[1, 2, 3, 4], 511)])
            .attr("scales", f(&[2.0, 1.5])),
        Sample::new("UpsampleNearest3D", vec![x(&[1, 1, 2, 3, 2], 512)])
            .attr("output_size", t(&[3, 5, 4])),
        Sample::new("UpsampleLinear1D", vec![x(&[2, 2, 5], 513)]).attr("output_size", t(&[8])),
        Sample::new("UpsampleBilinear2D", vec![x(&[1, 2, 3, 4], 514)])
            .attr("output_size", t(&[5, 7]))
            .attr("align_corners", b(true)),
        Sample::new("UpsampleTrilinear3D", vec![x(&[1, 1, 2, 3, 2], 515)])
            .attr("scales", f(&[2.0, 1.5, 2.0])),
    ]
}
